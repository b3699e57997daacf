"""Render the golden SQL files ``tests/store/sql/<vendor>.sql``: every statement of a vendor as it
runs, under a ``-- name: <module>.<SQL_NAME> --`` header with its comment, so a reviewer diffs
the SQL itself. ``tests/store/test_golden_sql.py`` fails when a file differs from the code.

Regenerate (and print what changed) with::

    .venv/bin/python -m tests.store.render_sql

Where the statements come from (nothing is listed by hand):

1. the vendor store class's ``sql``, the ``SQL_*`` constants of its ``statements`` modules (the
   contract's statements, the ones ``self.sql`` holds), in the order of ``statements``;
2. then the ``SQL_*`` constants of the vendor's other store modules: the rest of its package
   (``store/<vendor>/``: the statement budget, the archive horizon) and ``store/*_<vendor>.py``
   (the privilege catalogue), by module name.

Within a module, statements are sorted by name. The header names the module that defines the
constant (``fragments`` for a shared statement a vendor imports). The comment is the ``#`` block
right above the assignment; a constant without one made by ``.format()``/``.replace()`` of a
fragment (``SQL_CANCEL = CANCEL.format(...)``) shows the fragment's comment.

Statements completed at call time are rendered with these fixed examples (:data:`EXAMPLES`):
an IN list of three values (``{ids}``: ``%s, %s, %s``; ``{pairs}``: three ``(%s, %s)``), two of
the three acknowledged jobs with a result (``{result}``), one queue (``{queue_filter}``), the
caller's own heartbeat excluded (``{exclude_own}``), an operator verb on two states of one queue
(``{states}``, ``{filters}``) with discard's rule (``{eligible}``), the month 2025-01 and the archive table as
the closed-set identifiers (``{table}``, ``{partition}``, ``{parent}``, ``{start}``, ``{end}``),
January 2032 and the edge after it for a horizon extension (``{edge}``, ``{partitions}``), the
role ``app_worker`` granted SELECT (``{role}``, ``{privilege}``), a 5 s busy timeout (``{ms}``).
"""

import ast
import difflib
import importlib
import importlib.util
import inspect
import os
import pkgutil
import string
import sys
from functools import cache
from pathlib import Path

STORE_PACKAGE = "django_headgate.store"
SQL_DIR = Path(__file__).resolve().parent / "sql"
VENDORS = ("postgresql", "mysql", "sqlite")
REGENERATE = ".venv/bin/python -m tests.store.render_sql"


def store_classes():
    from django_headgate.store.mysql import MySQLStore
    from django_headgate.store.postgresql import PostgreSQLStore
    from django_headgate.store.sqlite import SQLiteStore

    return {"postgresql": PostgreSQLStore, "mysql": MySQLStore, "sqlite": SQLiteStore}


def examples(vendor):
    """``{format field: example}`` for the statements of ``vendor`` (see the module docstring)."""
    from django_headgate.store.archive_layout import (
        AFTER_EDGE,
        ARCHIVE_TABLE,
        MONTHS,
        after_edge,
        month_partition,
    )
    from django_headgate.store.fragments import EXCLUDE_OWN_HEARTBEAT, placeholders, queue_filter

    quote = quote_name(vendor)
    month, new_month, new_edge = MONTHS[0], month_partition(2032, 1), after_edge(2032)
    common = {
        "ids": placeholders(3),
        "keys": placeholders(2),
        "pairs": ", ".join(["(%s, %s)"] * 3),
        "result": "CASE id " + " ".join(["WHEN %s THEN %s"] * 2) + " END",
        "queue_filter": queue_filter("default", ())[0],
        "owner_filter": "AND lease_owner = %s",
        "states": placeholders(2),
        "filters": "AND queue = %s",
        "eligible": "AND attempts = 0 AND snoozes IS NULL",
        "exclude_own": EXCLUDE_OWN_HEARTBEAT,
        "start": "%d" % month.start_ms,
        "end": "%d" % month.end_ms,
        "ms": "5000",
        "privilege": "SELECT",
        "role": quote("app_worker"),
    }
    by_vendor = {
        # The table of one month (a child table), and the partitioned parent.
        "postgresql": {"table": quote(month.table_name), "parent": quote(ARCHIVE_TABLE)},
        # The one archive table, one month's partition, and a horizon extension into 2032.
        "mysql": {
            "table": quote(ARCHIVE_TABLE), "partition": quote(month.partition_name), "archive_id": "UUID()",
            "edge": quote(AFTER_EDGE.partition_name),
            "partitions": f"PARTITION {quote(new_month.partition_name)} VALUES LESS THAN ({new_month.end_ms}), "
                          f"PARTITION {quote(new_edge.partition_name)} VALUES LESS THAN MAXVALUE",
        },
        "sqlite": {},
    }
    return {**common, **by_vendor[vendor]}


def quote_name(vendor):
    """An identifier quoted as the vendor's Django backend quotes it (``connection.ops.quote_name``;
    written out, so that rendering needs neither a connection nor the vendor's driver)."""
    quote = "`" if vendor == "mysql" else '"'
    return lambda name: f"{quote}{name}{quote}"


# -- where the statements come from ---------------------------------------------------------------

def vendor_modules(store_class):
    """The vendor's statement modules: its ``statements``, then its other store modules by name."""
    modules = list(dict.fromkeys(store_class.statements))
    package = sys.modules[store_class.__module__]
    names = [info.name for info in pkgutil.iter_modules(package.__path__, package.__name__ + ".")]
    names.append(package.__name__)
    store = importlib.import_module(STORE_PACKAGE)
    names += [info.name for info in pkgutil.iter_modules(store.__path__, STORE_PACKAGE + ".")
              if info.name.endswith("_" + store_class.vendor)]
    others = [importlib.import_module(name) for name in sorted(names)]
    return modules + [module for module in others if module not in modules]


def collected(store_class):
    """``[(module, name, statement)]`` of every statement of the vendor, in rendering order."""
    rendered, seen = [], set()
    statement_modules = list(store_class.statements)
    for module in vendor_modules(store_class):
        for name in sorted(n for n, v in vars(module).items() if n.startswith("SQL_") and is_statement(v)):
            if module in statement_modules:
                if getattr(store_class.sql, name) is not vars(module)[name]:
                    continue  # a later module of ``statements`` wins in self.sql
            home = defining_module(module.__name__, name)
            if (home, name) in seen:
                continue
            seen.add((home, name))
            rendered.append((home, name, vars(module)[name]))
    return rendered


def is_statement(value):
    """A statement, or a tuple of statements run one after another."""
    return isinstance(value, str) or isinstance(value, tuple) and all(isinstance(v, str) for v in value)


# -- comments, read from the source -----------------------------------------------------------------

@cache
def module_tree(module_name):
    path = inspect.getsourcefile(importlib.import_module(module_name))
    source = Path(path).read_text()
    return ast.parse(source), source.splitlines()


def _assignment(module_name, name):
    tree, _ = module_tree(module_name)
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return node
    return None


def _imported_from(module_name, name):
    tree, _ = module_tree(module_name)
    package = module_name if _is_package(module_name) else module_name.rpartition(".")[0]
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and any(alias.name == name for alias in node.names):
            return importlib.util.resolve_name("." * node.level + (node.module or ""), package)
    return None


def _is_package(module_name):
    return hasattr(importlib.import_module(module_name), "__path__")


def defining_module(module_name, name):
    """The module whose source assigns ``name`` (following ``from ... import name``)."""
    while _assignment(module_name, name) is None:
        source = _imported_from(module_name, name)
        if source is None:
            raise LookupError(f"{module_name}.{name}: no assignment or import found")
        module_name = source
    return module_name


def comment_of(module_name, name):
    """The ``#`` lines right above ``name``'s assignment (a section marker ``-- x --`` left out);
    for a constant without one made from a fragment (``SQL_X = FRAGMENT``, ``FRAGMENT.format()``
    or ``.replace()``), the fragment's. Empty when there is none."""
    module_name = defining_module(module_name, name)
    node = _assignment(module_name, name)
    _, lines = module_tree(module_name)
    comment, index = [], node.lineno - 2
    while index >= 0 and lines[index].lstrip().startswith("#"):
        text = lines[index].strip().lstrip("#").strip()
        if not (text.startswith("--") and text.endswith("--")):
            comment.insert(0, text)
        index -= 1
    if comment:
        return comment
    value = node.value
    if isinstance(value, ast.Name):  # an alias of a fragment
        return comment_of(module_name, value.id)
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and \
            value.func.attr in ("format", "replace") and isinstance(value.func.value, ast.Name):
        return comment_of(module_name, value.func.value.id)
    return []


# -- rendering ------------------------------------------------------------------------------------

def fill(statement, values):
    """``statement`` with its format fields replaced by the examples (no other change); the
    statements of a tuple one a line."""
    if isinstance(statement, tuple):
        return "\n".join(fill(part, values).strip() for part in statement)
    fields = {field for _, field, _, _ in string.Formatter().parse(statement) if field is not None}
    if not fields:
        return statement
    missing = sorted(fields - values.keys())
    if missing:
        raise KeyError(f"no example for {', '.join(missing)}: add one to EXAMPLES in {__name__}")
    return statement.format(**values)


def relative(module_name):
    return module_name.removeprefix(STORE_PACKAGE + ".")


def render(vendor):
    """The golden file of ``vendor`` as text."""
    store_class, values = store_classes()[vendor], examples(vendor)
    parts = [
        f"-- The SQL of django-headgate's {vendor} store, as it runs: generated from the code by\n"
        f"-- `{REGENERATE}` (tests/store/render_sql.py tells how);\n"
        f"-- never edit by hand. Call-time pieces are filled with the examples documented there.\n"
    ]
    for module_name, name, statement in collected(store_class):
        comment = "".join(f"-- {line}\n" for line in comment_of(module_name, name))
        parts.append(f"-- name: {relative(module_name)}.{name} --\n{comment}{fill(statement, values).strip()}\n")
    return "\n".join(parts)


def golden_path(vendor):
    return SQL_DIR / f"{vendor}.sql"


def main():
    """Rewrite every golden file; print a unified diff of what changed (nothing when none did)."""
    changed = 0
    for vendor in VENDORS:
        path, text = golden_path(vendor), render(vendor)
        old = path.read_text() if path.exists() else ""
        if old == text:
            continue
        changed += 1
        sys.stdout.writelines(difflib.unified_diff(
            old.splitlines(keepends=True), text.splitlines(keepends=True),
            f"a/{path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path}",
            f"b/{path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path}"))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    sys.stdout.flush()
    print(f"{changed} of {len(VENDORS)} golden SQL files changed.", file=sys.stderr)


if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
    import django

    django.setup()
    main()
