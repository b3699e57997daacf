"""The worker is made of collaborators that own their state (docs/architecture.md#the-worker-process):
no class of ``django_headgate/worker/`` is a mixin that reads the attributes of the class it is
mixed into, and every attribute a class reads through ``self`` is one it sets or defines itself
(or inherits from a base outside the package, such as ``threading.Thread``)."""

import ast
import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORKER = ROOT / "django_headgate" / "worker"
#: Classes split over two modules by size, checked as one: the base is the second half of the class.
SPLIT_CLASSES = {"Acknowledger": "OneRowWrites"}  # acknowledger.py + one_row_writes.py


def classes_of_worker():
    """``{name: (class, ast node)}`` of every class defined in worker/."""
    found = {}
    for path in sorted(WORKER.glob("*.py")):
        module = importlib.import_module(f"django_headgate.worker.{path.stem}")
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ClassDef):
                found[node.name] = (getattr(module, node.name), node)
    return found


def self_attributes(node):
    """``(read, set)``: the attribute names a class body reads and sets through ``self``."""
    read, written = set(), set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and sub.value.id == "self":
            (written if isinstance(sub.ctx, ast.Store) else read).add(sub.attr)
    return read, written


def defined_names(cls, node):
    """What ``self.<name>`` may read in ``cls``: its members, fields and slots, what it sets."""
    names = set(dir(cls)) | set(getattr(cls, "__dataclass_fields__", {}))
    for sub in ast.walk(node):
        if isinstance(sub, ast.AnnAssign) and isinstance(sub.target, ast.Name):
            names.add(sub.target.id)
    return names | self_attributes(node)[1]


def test_no_class_of_the_worker_is_a_mixin():
    classes = classes_of_worker()
    mixed_in = {
        name: [base.__name__ for base in cls.__bases__ if base.__module__.startswith("django_headgate.")]
        for name, (cls, _) in classes.items()
    }
    mixed_in = {name: bases for name, bases in mixed_in.items() if bases and bases != [SPLIT_CLASSES.get(name)]}
    assert mixed_in == {}, "compose a collaborator (passed what it needs) instead of inheriting one"


def test_every_class_reads_only_the_state_it_owns():
    classes = classes_of_worker()
    halves = set(SPLIT_CLASSES.values())
    foreign = {}
    for name, (cls, node) in classes.items():
        if name in halves:
            continue
        nodes = [node] + [classes[SPLIT_CLASSES[name]][1]] if name in SPLIT_CLASSES else [node]
        allowed = set().union(*(defined_names(cls, part) for part in nodes))
        read = set().union(*(self_attributes(part)[0] for part in nodes))
        if read - allowed:
            foreign[name] = sorted(read - allowed)
    assert foreign == {}, "these classes read attributes that another class sets"


def test_the_check_finds_a_mixin():
    """The check itself: a mixin that reads its host's attribute fails it."""
    source = "class Hooks:\n    def lost(self):\n        return self._held\n"
    node = ast.parse(source).body[0]
    namespace = {}
    exec(compile(source, "hooks.py", "exec"), namespace)
    assert self_attributes(node)[0] - defined_names(namespace["Hooks"], node) == {"_held"}


def test_the_architecture_page_names_every_module_of_the_worker():
    """docs/architecture.md's worker table has one line for each module of worker/."""
    section = (ROOT / "docs" / "architecture.md").read_text().split("\n## The worker process\n", 1)[1]
    table = [row for row in section.split("\n## ", 1)[0].splitlines() if row.startswith("| `")]
    named = {name for row in table for name in re.findall(r"`(\w+\.py)`", row.split("|")[1])}
    assert named == {path.name for path in WORKER.glob("*.py") if path.name != "__init__.py"}
