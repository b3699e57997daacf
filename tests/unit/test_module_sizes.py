"""One module, one job (STYLE.md, house rule 2): a module of the package past about 300 lines
says why in its docstring (it names its "300 lines"), or is split."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: "About 300": a few lines over are not a second job.
MAX_LINES = 320


def test_a_long_module_gives_its_reason():
    long_without_reason = []
    for path in sorted((ROOT / "django_headgate").rglob("*.py")):
        name = path.relative_to(ROOT).as_posix()
        lines = path.read_text().count("\n")
        if lines <= MAX_LINES or "/migrations/" in name:
            continue
        if "300 lines" not in (ast.get_docstring(ast.parse(path.read_text())) or ""):
            long_without_reason.append(f"{name}: {lines} lines")
    assert long_without_reason == []
