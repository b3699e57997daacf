"""The worker's logger names are the ones docs/worker.md documents (its "Logs" table): a host's
``LOGGING`` setting names them, so a module that is renamed or split keeps its logger's name
(passed explicitly, as ``renewal.py`` and ``claim_loop.py`` do)."""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORKER = ROOT / "django_headgate" / "worker"


def loggers_in_use():
    """``{logger name: [module, ...]}`` of the loggers worker/ modules log with."""
    found = {}
    for path in sorted(WORKER.glob("*.py")):
        tree = ast.parse(path.read_text())
        module = f"django_headgate.worker.{path.stem}"
        for node in tree.body:
            if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
                    and ast.unparse(node.value.func) == "logging.getLogger"):
                continue
            (argument,) = node.value.args
            name = module if ast.unparse(argument) == "__name__" else ast.literal_eval(argument)
            variable = node.targets[0].id
            uses = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == variable]
            if len(uses) > 1:  # more than its own assignment
                found.setdefault(name, []).append(path.name)
    return found


def documented_loggers():
    """The logger names of docs/worker.md's Logs table (``.name`` abbreviates the package's)."""
    section = (ROOT / "docs" / "worker.md").read_text().split("\n## Logs\n", 1)[1].split("\n## ", 1)[0]
    names = set()
    for row in section.splitlines():
        if row.startswith("| `"):
            first_cell = row.split("|")[1]
            for name in re.findall(r"`([^`]+)`", first_cell):
                names.add(f"django_headgate.worker{name}" if name.startswith(".") else name)
    return names


def test_the_worker_logs_under_the_documented_names_only():
    assert sorted(loggers_in_use()) == sorted(documented_loggers())
