"""The layers of docs/architecture.md, counted with the imports made inside functions.

``lint-imports`` (run by ./dev test) checks the contracts of pyproject.toml's
``[tool.importlinter]``. This test reads the same layers and checks them again from the source,
with every import statement counted wherever it stands (module level, inside a function or a
method): an import inside a function may break a start-up cycle, but it never runs up a layer
(STYLE.md, house rule 11). Each top-level module or folder of the package belongs to one layer;
a module imports only from layers below its own, never from a sibling of its own layer, so no
loop can form across folders either.
"""

import ast
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "django_headgate"


def layers_contract():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    return next(contract for contract in config["contracts"] if contract["type"] == "layers")


def parse_layers(contract):
    """``({child: layer index}, {optional children})``, the top layer first."""
    layer_of, optional = {}, set()
    for index, layer in enumerate(contract["layers"]):
        for name in (part.strip() for part in layer.split("|")):
            if name.startswith("("):
                name = name.strip("()")
                optional.add(name)
            layer_of[name] = index
    return layer_of, optional


def module_name(path, root):
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(source, module, is_package):
    """``[(imported module, line, inside a function)]`` of every import statement of ``source``
    that names the package, wherever it stands."""
    tree = ast.parse(source)
    in_function = {id(node) for function in ast.walk(tree)
                   if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                   for node in ast.walk(function)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")[:len(module.split(".")) - node.level + (1 if is_package else 0)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            # ``from package import name``: the name may itself be a module
            targets = [f"{target}.{alias.name}" for alias in node.names] if not node.module or node.level else [target]
        else:
            continue
        found.extend((target, node.lineno, id(node) in in_function)
                     for target in targets if target == PACKAGE or target.startswith(PACKAGE + "."))
    return found


def child_of(module):
    """The top-level module or folder of the package ``module`` is in (None: the package itself)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def package_children(root):
    return {path.stem if path.suffix == ".py" else path.name
            for path in root.iterdir()
            if (path.suffix == ".py" and path.name != "__init__.py") or (path / "__init__.py").exists()}


def upward_imports(root, layer_of, ignored=()):
    """Every import from one child of the package to a child in its own layer or above:
    ``["importer:line -> imported (inside a function)", ...]``."""
    found = []
    for path in sorted(root.rglob("*.py")):
        module = module_name(path, root.parent)
        importer = child_of(module)
        if importer is None or importer not in layer_of:
            continue
        for target, line, in_function in imports_of(path.read_text(), module, path.name == "__init__.py"):
            imported = child_of(target)
            if imported is None or imported == importer or imported not in layer_of:
                continue
            if layer_of[imported] <= layer_of[importer] and not any(
                    module.startswith(source) and target.startswith(destination) for source, destination in ignored):
                where = " (inside a function)" if in_function else ""
                found.append(f"{module}:{line} -> {target}{where}")
    return found


@pytest.fixture(scope="module")
def contract():
    return layers_contract()


def test_every_folder_and_module_has_a_layer(contract):
    layer_of, optional = parse_layers(contract)
    children = package_children(ROOT / PACKAGE) - set(contract.get("exhaustive_ignores", ()))
    assert sorted(children - set(layer_of)) == [], "add these to a layer of pyproject.toml"
    assert sorted(set(layer_of) - optional - children) == [], "these layers name nothing"


def test_no_import_runs_up_a_layer_even_inside_a_function(contract):
    layer_of, _ = parse_layers(contract)
    ignored = [tuple(part.strip() for part in rule.split("->")) for rule in contract.get("ignore_imports", ())]
    assert upward_imports(ROOT / PACKAGE, layer_of, ignored) == []


def test_a_function_level_import_up_a_layer_is_found(tmp_path):
    """The check itself: an import inside a function, up a layer, fails it (and lint-imports
    would see it too, but this test does not depend on how it reads imports)."""
    package = tmp_path / PACKAGE
    (package / "store").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "api.py").write_text("from .store import get_store\n")
    (package / "store" / "__init__.py").write_text("def get_store():\n    from ..api import enqueue\n")
    assert upward_imports(package, {"api": 0, "store": 1}) == [
        "django_headgate.store:2 -> django_headgate.api.enqueue (inside a function)"]
