"""How poly-core, poly-onnx, poly-trt and poly-debug import, read from their source:

- no module imports another module's private names (``from x import _y``), a private module of
  another distribution (``poly.x._y``), or reads a ``_private`` attribute of an imported module;
- no import cycle inside a distribution, counting imports inside functions
  (``from poly.pkg import x`` is an edge to ``poly/pkg/__init__.py``);
- optional third-party modules come through ``lazy_import`` (no ``try: import ... except ImportError``);
- poly-debug reaches other distributions through their top-level names only;
- values that may be loaders are resolved with ``poly.core.invoke_if_callable``, not
  ``x() if callable(x) else x``;
- Polygraphy's import paths build ``__all__`` from their sources' ``__all__``, never from copied names.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DISTRIBUTIONS = ("poly-core", "poly-onnx", "poly-trt", "poly-debug")
# Modules of a distribution that are not Python sources in its tree.
EXTRA_MODULES = {"poly-core": {"poly._native"}}
COMPAT_PATHS = [
    "poly.constants",
    "poly.datatype",
    "poly.exception",
    "poly.func",
    "poly.json",
    "poly.logger",
    "poly.backend.base",
    "poly.backend.onnx",
    "poly.backend.onnxrt",
    "poly.backend.trt",
]


def _modules():
    """{module name: (distribution, path)} of every source module of the four distributions."""
    modules = {}
    for dist in DISTRIBUTIONS:
        src = ROOT / "packages" / dist / "src"
        for path in src.rglob("*.py"):
            parts = list(path.relative_to(src).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = (dist, path)
    return modules


MODULES = _modules()
OWNER = {name: dist for name, (dist, _) in MODULES.items()}
for _dist, _names in EXTRA_MODULES.items():
    OWNER.update(dict.fromkeys(_names, _dist))


def _is_private(name):
    return name.startswith("_") and not name.startswith("__")


def _imports(tree):
    """(node, imported module, names) of every import statement, at any depth."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node, alias.name, []
        elif isinstance(node, ast.ImportFrom):
            yield node, "." * node.level + (node.module or ""), [alias.name for alias in node.names]


def _owner(module):
    """The distribution of ``module`` (or of its closest known parent)."""
    while module and module not in OWNER:
        module = module.rpartition(".")[0]
    return OWNER.get(module)


def _edges(name, tree):
    edges = set()
    for _, module, names in _imports(tree):
        if module in MODULES:
            edges.add(module)
        edges.update(f"{module}.{n}" for n in names if f"{module}.{n}" in MODULES)
    edges.discard(name)
    return edges


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_private_imports(name):
    dist, path = MODULES[name]
    tree = ast.parse(path.read_text())
    problems = []
    module_aliases = set()
    for node, module, names in _imports(tree):
        if module.startswith("."):
            problems.append(f"line {node.lineno}: relative import {module}")
        problems += [f"line {node.lineno}: from {module} import {n}" for n in names if _is_private(n)]
        if any(_is_private(part) for part in module.split(".")) and _owner(module) != dist:
            problems.append(f"line {node.lineno}: imports the private module {module} of another distribution")
        if isinstance(node, ast.Import):
            module_aliases.update(alias.asname or alias.name.split(".")[0] for alias in node.names)
        else:
            module_aliases.update(alias.asname or alias.name for alias in node.names)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and _is_private(node.attr)
            and isinstance(node.value, ast.Name)
            and node.value.id in module_aliases
        ):
            problems.append(f"line {node.lineno}: {node.value.id}.{node.attr}")
        if (  # lazy_import("x._y")
            isinstance(node, ast.Call)
            and getattr(node.func, "id", None) == "lazy_import"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and any(_is_private(part) for part in str(node.args[0].value).split("."))
        ):
            problems.append(f"line {node.lineno}: lazy_import of the private module {node.args[0].value}")
    assert not problems, f"{path.relative_to(ROOT)}: {problems}"


@pytest.mark.parametrize("name", sorted(MODULES))
def test_optional_modules_come_through_lazy_import(name):
    path = MODULES[name][1]
    tree = ast.parse(path.read_text())
    caught = [
        handler.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Try)
        for handler in node.handlers
        if any(isinstance(n, ast.Name) and n.id in ("ImportError", "ModuleNotFoundError") for n in ast.walk(handler))
        and any(isinstance(n, (ast.Import, ast.ImportFrom)) for stmt in node.body for n in ast.walk(stmt))
    ]
    assert not caught, f"{path.relative_to(ROOT)}: imports guarded by except ImportError at lines {caught}"


@pytest.mark.parametrize("dist", DISTRIBUTIONS)
def test_no_import_cycles(dist):
    graph = {
        name: {e for e in _edges(name, ast.parse(path.read_text())) if OWNER.get(e) == dist}
        for name, (owner, path) in MODULES.items()
        if owner == dist
    }
    state, stack, cycles = {}, [], []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                cycles.append(stack[stack.index(nxt) :] + [nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node)
    assert not cycles, [" -> ".join(cycle) for cycle in cycles]


@pytest.mark.parametrize("name", sorted(MODULES))
def test_loaders_are_resolved_with_invoke_if_callable(name):
    path = MODULES[name][1]
    if name == "poly.core.func":
        return  # where invoke_if_callable is written out
    found = [
        node.lineno
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.IfExp)
        and isinstance(node.test, ast.Call)
        and getattr(node.test.func, "id", None) == "callable"
        and isinstance(node.body, ast.Call)
        and ast.dump(node.body.func) == ast.dump(node.test.args[0]) == ast.dump(node.orelse)
    ]
    assert not found, f"{path.relative_to(ROOT)}: x() if callable(x) else x at lines {found}"


def test_poly_debug_uses_top_level_names_of_other_distributions():
    problems = []
    for name, (dist, path) in MODULES.items():
        if dist != "poly-debug":
            continue
        for node, module, _ in _imports(ast.parse(path.read_text())):
            if module.startswith("poly.") and not module.startswith("poly.debug") and module.count(".") > 1:
                problems.append(f"{name} line {node.lineno}: {module}")
    assert not problems, problems


@pytest.mark.parametrize("name", COMPAT_PATHS)
def test_polygraphy_paths_reexport_their_sources_all(name):
    path = MODULES[name][1]
    tree = ast.parse(path.read_text())
    defined = {t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets if isinstance(t, ast.Name)}
    imported_all = any(
        isinstance(node, ast.ImportFrom) and any(alias.name == "__all__" for alias in node.names) for node in tree.body
    )
    assigned = [
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets)
    ]
    assert imported_all != bool(assigned), f"{name}: __all__ must come from exactly one place"
    for value in assigned:
        assert isinstance(value, ast.List), f"{name}: __all__ must be a list of starred __all__s"
        for element in value.elts:
            if isinstance(element, ast.Starred):
                assert isinstance(element.value, ast.Attribute) and element.value.attr == "__all__", name
            else:  # only names the module defines itself (Polygraphy's aliases)
                assert isinstance(element, ast.Constant) and element.value in defined, (name, ast.dump(element))
    # Nothing else but imports, the docstring, __all__ and aliases of re-exported names.
    for node in tree.body:
        assert isinstance(node, (ast.Import, ast.ImportFrom, ast.Assign, ast.Expr)), (name, ast.dump(node))
        if isinstance(node, ast.Assign) and node.value not in assigned:
            assert isinstance(node.value, ast.Name), f"{name}: only aliases may be defined here"
