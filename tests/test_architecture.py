"""
The shape of the code base, checked by reading every module's source of the six distributions:

- no import cycles (counting imports inside functions, which only defer a cycle; ``from poly.pkg
  import x`` is an edge to ``poly/pkg/__init__.py``);
- no module imports another module's private names, another package's private modules, or reads a
  ``_private`` attribute of an imported module; no relative imports;
- package dependencies only along the documented arrows; poly-debug through top-level names;
- optional third-party modules through ``poly.core.optional_import.lazy_import`` (no
  ``try: import ... except ImportError``); loaders resolved with ``invoke_if_callable``;
- ``__init__.py`` files only re-export; Polygraphy's import paths build ``__all__`` from their
  sources' ``__all__``, never from copied names;
- folders by concept: no folder of product code holds more than 15 modules, no product file is
  over 800 lines.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGES = ROOT / "packages"

# distribution -> the top-level poly subpackages it owns (compatibility paths included)
ALLOWED_DEPENDENCIES = {
    "poly-core": set(),
    "poly-compare": {"poly-core"},
    "poly-onnx": {"poly-core"},
    "poly-trt": {"poly-core", "poly-onnx"},
    "poly-debug": {"poly-core", "poly-compare", "poly-onnx", "poly-trt"},
    "poly-cli": {"poly-core", "poly-compare", "poly-onnx", "poly-trt", "poly-debug"},
}


NATIVE_USERS = {"poly-core", "poly-compare"}


def _module_name(path: pathlib.Path, src: pathlib.Path) -> str:
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _collect_modules():
    modules = {}  # name -> (distribution, path, is_package)
    for dist in sorted(p for p in PACKAGES.iterdir() if (p / "src").is_dir()):
        src = dist / "src"
        for path in sorted(src.rglob("*.py")):
            modules[_module_name(path, src)] = (dist.name, path, path.name == "__init__.py")
    return modules


MODULES = _collect_modules()


def _resolve_from(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(name: str):
    """(target module, imported name or None, line) for every poly import in module ``name``."""
    _, path, is_package = MODULES[name]
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("poly."):
                    yield alias.name, None, node.lineno
        elif isinstance(node, ast.ImportFrom):
            target = _resolve_from(node, name, is_package)
            if not target.startswith("poly"):
                continue
            for alias in node.names:
                submodule = f"{target}.{alias.name}"
                if submodule in MODULES:
                    yield submodule, None, node.lineno
                else:
                    yield target, alias.name, node.lineno


def _import_graph():
    graph = {name: set() for name in MODULES}
    for name in MODULES:
        for target, _, _ in _imports(name):
            if target in MODULES and target != name:
                graph[name].add(target)
    return graph


def _cycles(graph):
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, on_stack, stack, result = {}, {}, set(), [], []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        result.append(sorted(component))
    return result


def test_the_graph_walker_finds_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_every_package_is_found():
    owners = {dist for dist, _, _ in MODULES.values()}
    assert owners == set(ALLOWED_DEPENDENCIES)
    assert {"poly.compare", "poly.compare.comparator", "poly.core.optional_import", "poly.cli"} <= set(MODULES)


def test_no_import_cycles():
    cycles = _cycles(_import_graph())
    assert not cycles, "import cycles (module-level or inside functions):\n" + "\n".join(
        " -> ".join(cycle) for cycle in cycles
    )


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _private_module(target: str) -> str | None:
    """The package whose private module ``target`` is (``poly.onnx`` for ``poly.onnx._lazy``)."""
    parts = target.split(".")
    for i, part in enumerate(parts):
        if _is_private(part):
            return ".".join(parts[:i])
    return None


def test_no_module_imports_another_modules_private_names():
    problems = []
    for name in MODULES:
        path = MODULES[name][1].relative_to(ROOT)
        for target, imported, line in _imports(name):
            if (target, imported) in (("poly", "_native"), ("poly._native", None)):
                # the compiled extension ships in poly-core; poly-compare's statistics are its documented user
                if MODULES[name][0] not in NATIVE_USERS:
                    problems.append(f"{path}:{line}: imports poly._native outside {sorted(NATIVE_USERS)}")
                continue
            owner = _private_module(target)
            if owner is not None and not name.startswith(owner + ".") and name != owner:
                problems.append(f"{path}:{line}: imports the private module {target}")
            if imported is not None and _is_private(imported):
                problems.append(f"{path}:{line}: imports the private name {imported} from {target}")
    assert not problems, "\n".join(problems)


def _attribute_reaches(tree: ast.AST, module_aliases: dict[str, str]):
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and _is_private(node.attr) and isinstance(node.value, ast.Name)
                and node.value.id in module_aliases):
            yield node


def test_no_module_reads_private_attributes_of_an_imported_module():
    problems = []
    for _name, (_, path, _) in MODULES.items():
        tree = ast.parse(path.read_text())
        aliases = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith("poly.") and alias.asname:
                        aliases[alias.asname] = alias.name
            elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("poly"):
                for alias in node.names:
                    if f"{node.module}.{alias.name}" in MODULES:
                        aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        for node in _attribute_reaches(tree, aliases):
            problems.append(f"{path.relative_to(ROOT)}:{node.lineno}: reads {aliases[node.value.id]}.{node.attr}")
    assert not problems, "\n".join(problems)


def _distribution_of(target: str) -> str | None:
    while target:
        if target in MODULES:
            return MODULES[target][0]
        target = target.rpartition(".")[0]
    return None


@pytest.mark.parametrize("dist", sorted(ALLOWED_DEPENDENCIES))
def test_package_dependencies_follow_the_arrows(dist):
    problems = []
    for name, (owner, path, _) in MODULES.items():
        if owner != dist:
            continue
        for target, _, line in _imports(name):
            other = _distribution_of(target)
            if other and other != dist and other not in ALLOWED_DEPENDENCIES[dist]:
                problems.append(f"{path.relative_to(ROOT)}:{line}: {dist} imports {target} ({other})")
    assert not problems, "\n".join(problems)


def _is_type_checking_block(node: ast.AST) -> bool:
    """``if TYPE_CHECKING:`` holding imports only (a lazy ``__init__``'s names, for type checkers)."""
    return (isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
            and not node.orelse and all(isinstance(n, (ast.Import, ast.ImportFrom)) for n in node.body))


def _lazy_exports_table(node: ast.AST) -> dict[str, str] | None:
    """The table of ``__getattr__, __dir__ = lazy_exports(__name__, {name: module, ...})`` (string
    literals only), else None."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Tuple)
            and [getattr(t, "id", None) for t in node.targets[0].elts] == ["__getattr__", "__dir__"]
            and isinstance(node.value, ast.Call) and getattr(node.value.func, "id", None) == "lazy_exports"
            and len(node.value.args) == 2 and not node.value.keywords
            and getattr(node.value.args[0], "id", None) == "__name__" and isinstance(node.value.args[1], ast.Dict)):
        return None
    table = node.value.args[1]
    if not all(isinstance(k, ast.Constant) and isinstance(v, ast.Constant) for k, v in zip(table.keys, table.values, strict=True)):
        return None
    return {k.value: v.value for k, v in zip(table.keys, table.values, strict=True)}


def test_package_inits_only_re_export():
    problems = []
    for _name, (_, path, is_package) in MODULES.items():
        if not is_package:
            continue
        tree = ast.parse(path.read_text())
        for node in tree.body:
            allowed = (ast.Import, ast.ImportFrom, ast.Expr)
            is_all = isinstance(node, (ast.Assign, ast.AnnAssign)) and any(
                isinstance(t, ast.Name) and t.id == "__all__"
                for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
            )
            # a lazy re-export: the table of poly.core.optional_import.lazy_exports, and its names
            # imported for type checkers
            lazy = _is_type_checking_block(node) or _lazy_exports_table(node) is not None
            if not (isinstance(node, allowed) or is_all or lazy):
                problems.append(f"{path.relative_to(ROOT)}:{node.lineno}: {type(node).__name__} in an __init__.py")
    assert not problems, "\n".join(problems)


def _defines(module: str, name: str) -> bool:
    """Whether module ``module`` binds ``name`` at its top level (a def, class, assignment or import)."""
    for node in _tree(module).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            return True
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(n, ast.Name) and n.id == name for t in targets for n in ast.walk(t)):
                return True
        if isinstance(node, (ast.Import, ast.ImportFrom)) and any((a.asname or a.name) == name for a in node.names):
            return True
    return False


def _lazy_inits():
    """{package: (its lazy_exports table, {name: module} of its TYPE_CHECKING imports)}; ``from P
    import N`` names the submodule ``P.N`` where that module does not define ``N`` itself (as
    ``lazy_exports`` reads its table), else ``P``'s attribute."""
    found = {}
    for name, (_, path, is_package) in MODULES.items():
        if not is_package:
            continue
        tree = ast.parse(path.read_text())
        tables = [t for t in map(_lazy_exports_table, tree.body) if t is not None]
        if not tables:
            continue
        typed = {}
        for block in filter(_is_type_checking_block, tree.body):
            for node in block.body:
                assert isinstance(node, ast.ImportFrom), f"{path}: `import x` under TYPE_CHECKING"
                for alias in node.names:
                    submodule = f"{node.module}.{alias.name}"
                    is_submodule = submodule in MODULES and not _defines(submodule, alias.name)
                    typed[alias.asname or alias.name] = submodule if is_submodule else node.module
        found[name] = (tables[0], typed)
    return found


def test_lazy_inits_import_for_type_checkers_what_they_export():
    # the lazy table is what runs; the TYPE_CHECKING imports are what mypy and the import-cycle check
    # read: both must name the same objects
    inits = _lazy_inits()
    assert {"poly.core", "poly.compare", "poly.onnx"} <= set(inits)
    for name, (table, typed) in inits.items():
        assert table == typed, f"{name}: lazy_exports table and TYPE_CHECKING imports differ"


# Lazy packages that re-export the whole ``__all__`` of each submodule they take names from (what
# their star imports did before): a name added to such a submodule's ``__all__`` goes in the table too.
WHOLE_REEXPORTS = ["poly.compare.verdicts", "poly.compare.io", "poly.cli.validate", "poly.cli.validate.ray"]


def _literal_all(module: str) -> list[str]:
    for node in _tree(module).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
            assert isinstance(node.value, ast.List), f"{module}: __all__ is not a list literal"
            return [element.value for element in node.value.elts if isinstance(element, ast.Constant)]
    return []


def test_lazy_packages_re_export_their_submodules_whole_all():
    inits = _lazy_inits()
    for package in WHOLE_REEXPORTS:
        table, _ = inits[package]
        expected = {name for module in set(table.values()) for name in _literal_all(module)}
        assert set(table) == expected, f"{package}: not every name of its submodules' __all__ (or more)"


def test_lazy_inits_export_no_object_under_a_submodules_name():
    # importing submodule P.N binds P.N to the module, so a lazily exported function N of P.N would
    # read as the module wherever P.N was imported first (an eager __init__ rebinds it; a lazy one cannot)
    problems = [f"{package}.{name}: a submodule and the {name} it defines"
                for package, (table, _) in _lazy_inits().items() for name in table
                if f"{package}.{name}" in MODULES and _defines(f"{package}.{name}", name)]
    assert not problems, "\n".join(problems)
    assert _defines("poly.onnx.surgery.strip_weights", "strip_weights")
    assert not _defines("poly.core.constants", "constants")


def _tree(name):
    return ast.parse(MODULES[name][1].read_text())


def test_no_relative_imports_and_no_lazy_import_of_private_modules():
    problems = []
    for name, (_, path, _) in MODULES.items():
        for node in ast.walk(_tree(name)):
            if isinstance(node, ast.ImportFrom) and node.level:
                problems.append(f"{path.relative_to(ROOT)}:{node.lineno}: relative import")
            if (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "lazy_import" and node.args
                    and isinstance(node.args[0], ast.Constant)
                    and any(_is_private(part) for part in str(node.args[0].value).split("."))):
                problems.append(f"{path.relative_to(ROOT)}:{node.lineno}: lazy_import of {node.args[0].value}")
    assert not problems, "\n".join(problems)


def test_optional_modules_come_through_lazy_import():
    problems = []
    for name, (_, path, _) in MODULES.items():
        for node in ast.walk(_tree(name)):
            if not isinstance(node, ast.Try):
                continue
            guards_import = any(isinstance(n, (ast.Import, ast.ImportFrom)) for stmt in node.body for n in ast.walk(stmt))
            for handler in node.handlers:
                catches = any(isinstance(n, ast.Name) and n.id in ("ImportError", "ModuleNotFoundError")
                              for n in ast.walk(handler))
                if guards_import and catches:
                    problems.append(f"{path.relative_to(ROOT)}:{handler.lineno}: import guarded by except ImportError")
    # poly.core.json imports the poly package that decodes a JSON type (found by entry point): poly's own
    # optional distributions, not third-party modules
    problems = [p for p in problems if not p.startswith("packages/poly-core/src/poly/core/json.py")]
    assert not problems, "\n".join(problems)


def test_loaders_are_resolved_with_invoke_if_callable():
    problems = []
    for name, (_, path, _) in MODULES.items():
        if name == "poly.core.func":
            continue  # where invoke_if_callable is written out
        for node in ast.walk(_tree(name)):
            if (isinstance(node, ast.IfExp) and isinstance(node.test, ast.Call)
                    and getattr(node.test.func, "id", None) == "callable" and isinstance(node.body, ast.Call)
                    and ast.dump(node.body.func) == ast.dump(node.test.args[0]) == ast.dump(node.orelse)):
                problems.append(f"{path.relative_to(ROOT)}:{node.lineno}: x() if callable(x) else x")
    assert not problems, "\n".join(problems)


def test_poly_debug_uses_top_level_names_of_other_distributions():
    problems = []
    for name, (dist, path, _) in MODULES.items():
        if dist != "poly-debug":
            continue
        for target, _, line in _imports(name):
            if not target.startswith("poly.debug") and target.count(".") > 1:
                problems.append(f"{path.relative_to(ROOT)}:{line}: {target}")
    assert not problems, "\n".join(problems)


COMPAT_PATHS = [
    "poly.constants", "poly.datatype", "poly.exception", "poly.func", "poly.json", "poly.logger",
    "poly.backend.base", "poly.backend.onnx", "poly.backend.onnxrt", "poly.backend.trt",
    "poly.comparator", "poly.comparator.compare", "poly.comparator.data_loader", "poly.comparator.postprocess",
    "poly.comparator.struct",
    "poly.common", "poly.common.interface", "poly.exception.exception", "poly.func.func", "poly.logger.logger",
    "poly.util", "poly.util.array", "poly.mod", "poly.mod.exporter", "poly.mod.util", "poly.cuda", "poly.cuda.cuda",
    "poly.backend.common", "poly.backend.onnx.loader", "poly.backend.pluginref", "poly.backend.pyt", "poly.backend.trt.loader",
    "poly.backend.trt.config", "poly.backend.trt.runner", "poly.backend.trt.profile", "poly.backend.trt.calibrator",
    "poly.backend.trt.file_reader", "poly.backend.trt.algorithm_selector", "poly.backend.tensorrt_rtx",
    "poly.backend.tensorrt_rtx.config", "poly.tools", "poly.tools.base", "poly.tools.args",
    "poly.tools.args.iterative_debug_args", "poly.tools.debug", "poly.tools.debug.subtool",
    "poly.tools.debug.subtool.iterative_debug_args", "poly.tools.sparse",
]


@pytest.mark.parametrize("name", COMPAT_PATHS)
def test_polygraphy_paths_reexport_their_sources_all(name):
    tree = _tree(name)
    defined = {t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets
               if isinstance(t, ast.Name)}
    imported_all = any(isinstance(node, ast.ImportFrom) and any(a.name == "__all__" for a in node.names)
                       for node in tree.body)
    assigned = [node.value for node in tree.body
                if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets)]
    assert imported_all != bool(assigned), f"{name}: __all__ must come from exactly one place"
    for value in assigned:
        assert isinstance(value, ast.List), f"{name}: __all__ must be a list of starred __all__s"
        for element in value.elts:
            if isinstance(element, ast.Starred):
                assert isinstance(element.value, ast.Attribute) and element.value.attr == "__all__", name
            else:  # only names the module defines itself (Polygraphy's aliases)
                assert isinstance(element, ast.Constant) and element.value in defined, (name, ast.dump(element))
    for node in tree.body:  # imports, the docstring, __all__ and aliases of re-exported names only
        assert isinstance(node, (ast.Import, ast.ImportFrom, ast.Assign, ast.Expr)), (name, ast.dump(node))
        if isinstance(node, ast.Assign) and node.value not in assigned:
            assert isinstance(node.value, ast.Name), f"{name}: only aliases may be defined here"



# -- size of folders and files -------------------------------------------------------------------

MAX_MODULES_PER_FOLDER = 15
MAX_LINES_PER_FILE = 800


def _product_folders():
    """{folder: [module file names]}: every directory under packages/*/src holding .py files,
    counting the modules it holds itself (``__init__.py`` excluded, subfolders not)."""
    folders = {}
    for _, path, _ in MODULES.values():
        folders.setdefault(path.parent, [])
        if path.name != "__init__.py":
            folders[path.parent].append(path.name)
    return folders


def _oversized_folders(folders, limit=MAX_MODULES_PER_FOLDER):
    return sorted(f"{folder.relative_to(ROOT)}: {len(names)} modules" for folder, names in folders.items()
                  if len(names) > limit)


def _long_files(paths, limit=MAX_LINES_PER_FILE):
    problems = []
    for path in sorted(paths):
        lines = len(path.read_text().splitlines())
        if lines > limit:
            problems.append(f"{path.relative_to(ROOT)}: {lines} lines")
    return problems


def test_the_size_checks_find_a_crowded_folder_and_a_long_file():
    names = [f"m{i}.py" for i in range(MAX_MODULES_PER_FOLDER + 1)]
    crowded_in_repo = ROOT / "packages" / "crowded"  # only its name is used
    assert _oversized_folders({crowded_in_repo: names}) == [f"packages/crowded: {len(names)} modules"]
    assert _oversized_folders({crowded_in_repo: names[:-1]}) == []
    long_file = ROOT / "tests" / "test_architecture.py"
    total = len(long_file.read_text().splitlines())
    assert _long_files([long_file], limit=total) == []
    assert _long_files([long_file], limit=total - 1) == [f"tests/test_architecture.py: {total} lines"]


def test_the_folder_walk_counts_modules_not_inits_or_subfolders():
    folders = _product_folders()
    core = PACKAGES / "poly-core" / "src" / "poly" / "core"
    assert "__init__.py" not in folders[core]
    assert "optional_import.py" in folders[core]
    assert all(core / sub in folders for sub in ("logging", "arrays", "files"))
    assert not any("/" in name for names in folders.values() for name in names)


def test_no_product_folder_holds_more_than_15_modules():
    problems = _oversized_folders(_product_folders())
    assert not problems, "folders over the limit (group their modules by concept):\n" + "\n".join(problems)


def test_no_product_file_is_over_800_lines():
    problems = _long_files(path for _, path, _ in MODULES.values())
    assert not problems, "files over the limit (split them by concept):\n" + "\n".join(problems)
