"""Two claims of docs/architecture.md, checked on the source: the HEADGATE setting is read in
conf.py alone, and only store/ asks which database vendor it talks to (migrations keep their
frozen DDL per vendor)."""

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "django_headgate"
READS_HEADGATE = re.compile(r"settings\.HEADGATE\b|getattr\(\s*\w*settings\s*,\s*[\"']HEADGATE[\"']")


def modules(*excluded):
    for path in sorted(PACKAGE.rglob("*.py")):
        name = path.relative_to(PACKAGE).as_posix()
        if not name.startswith(excluded):
            yield name, path.read_text()


def test_only_conf_reads_the_headgate_setting():
    assert [name for name, source in modules("conf.py") if READS_HEADGATE.search(source)] == []
    assert READS_HEADGATE.search((PACKAGE / "conf.py").read_text())


def test_only_the_store_asks_the_database_vendor():
    asking = [f"{name}:{node.lineno}" for name, source in modules("store/", "migrations/")
              for node in ast.walk(ast.parse(source))
              if isinstance(node, ast.Attribute) and node.attr == "vendor"]
    assert asking == []
