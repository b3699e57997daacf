"""The golden SQL files ``tests/store/sql/<vendor>.sql`` are the statements the code runs: a
statement changed without its file fails here (``tests/store/render_sql.py`` renders them; no
database needed, so every vendor's file is checked in every run)."""

import ast
import difflib
import importlib
import pkgutil

import pytest

from tests.store import render_sql

DIFF_LINES = 60


@pytest.mark.parametrize("vendor", render_sql.VENDORS)
def test_the_golden_file_is_the_sql_the_code_runs(vendor):
    path = render_sql.golden_path(vendor)
    stored = path.read_text() if path.exists() else ""
    rendered = render_sql.render(vendor)
    if stored != rendered:
        diff = list(difflib.unified_diff(stored.splitlines(), rendered.splitlines(),
                                         f"{path.name} (stored)", f"{path.name} (from the code)", lineterm=""))
        shown = "\n".join(diff[:DIFF_LINES]) + ("\n..." if len(diff) > DIFF_LINES else "")
        pytest.fail(f"{path} differs from the statements in the code. If the change is meant, "
                    f"regenerate the files with `{render_sql.REGENERATE}` and commit them with the "
                    f"change (review their diff: it is the SQL that changed).\n{shown}", pytrace=False)


@pytest.mark.parametrize("vendor", render_sql.VENDORS)
def test_every_statement_has_its_comment(vendor):
    missing = [f"{module}.{name}" for module, name, _ in render_sql.collected(render_sql.store_classes()[vendor])
               if not render_sql.comment_of(module, name)]
    assert not missing, f"Statements without a one-line comment above them: {', '.join(missing)}"


def test_every_statement_of_the_store_is_in_a_golden_file():
    """A module of ``store/`` outside every vendor's reach (a new package, a misnamed module)
    would hide its statements from review: each ``SQL_*`` assigned in the store is rendered."""
    rendered = {(module, name) for store_class in render_sql.store_classes().values()
                for module, name, _ in render_sql.collected(store_class)}
    store = importlib.import_module(render_sql.STORE_PACKAGE)
    defined = set()
    for info in pkgutil.walk_packages(store.__path__, render_sql.STORE_PACKAGE + "."):
        tree, _ = render_sql.module_tree(info.name)
        defined |= {(info.name, target.id) for node in tree.body if isinstance(node, ast.Assign)
                    for target in node.targets if isinstance(target, ast.Name) and target.id.startswith("SQL_")}
    assert sorted(defined - rendered) == []
