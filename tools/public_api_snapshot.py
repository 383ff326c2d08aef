"""
Records poly's public import surface, or checks it against a recording.

The surface is every name in ``__all__`` of each distribution's top-level package
(``poly.core``, ``poly.compare``, ...) and of every module under Polygraphy's import paths
(``poly.backend.*``, ``poly.comparator``, ``poly.tools.*``, ``poly.util``...). A name exported
from several places must stay one object, so the recording also groups the (module, name) pairs
that are the same object.

    python tools/public_api_snapshot.py record tests/fixtures/public_api.json
    python tools/public_api_snapshot.py check tests/fixtures/public_api.json

``check`` prints each missing module or name and each group that split apart, and exits 1 if any.
"""

from __future__ import annotations

import argparse
import importlib
import json
import pathlib
import pkgutil
import sys

TOP_PACKAGES = ["poly.core", "poly.compare", "poly.onnx", "poly.trt", "poly.debug", "poly.cli"]
# modules the docs name as public (`poly.core.func.extend`, `poly.core.json.save_json`...)
DOCUMENTED_MODULES = ["poly.core.json", "poly.core.func", "poly.core.constants", "poly.core.cuda", "poly.onnx.lint"]
# Polygraphy's import paths, each a thin re-export of the module that owns the code
COMPAT_ROOTS = [
    "poly.backend",
    "poly.comparator",
    "poly.tools",
    "poly.common",
    "poly.cuda",
    "poly.exception",
    "poly.func",
    "poly.logger",
    "poly.mod",
    "poly.util",
    "poly.config",
    "poly.constants",
    "poly.datatype",
    "poly.json",
]


def _walk(root: str) -> list[str]:
    module = importlib.import_module(root)
    names = [root]
    if hasattr(module, "__path__"):
        for info in pkgutil.walk_packages(module.__path__, prefix=root + "."):
            names.append(info.name)
    return names


def surface() -> dict[str, list[str]]:
    """Module name -> its public names (``__all__``, else names not starting with '_')."""
    modules = TOP_PACKAGES + DOCUMENTED_MODULES
    for root in COMPAT_ROOTS:
        modules.extend(_walk(root))
    result = {}
    for name in sorted(set(modules)):
        module = importlib.import_module(name)
        exported = getattr(module, "__all__", None)
        if exported is None:
            exported = [n for n in vars(module) if not n.startswith("_") and not _is_module(getattr(module, n))]
        result[name] = sorted(exported)
    return result


def _is_module(obj) -> bool:
    return type(obj).__name__ == "module"


def _identity_groups(names: dict[str, list[str]]) -> list[list[str]]:
    by_id: dict[int, list[str]] = {}
    keep = []  # hold the objects so ids stay unique while grouping
    for module_name, exported in names.items():
        module = importlib.import_module(module_name)
        for name in exported:
            obj = getattr(module, name, None)
            if obj is None or isinstance(obj, (bool, int, float, str, bytes, tuple)):
                continue  # interned or immutable values: identity says nothing
            keep.append(obj)
            by_id.setdefault(id(obj), []).append(f"{module_name}:{name}")
    return sorted(sorted(group) for group in by_id.values() if len(group) > 1)


def record(path: pathlib.Path) -> None:
    names = surface()
    data = {"modules": names, "same_object": _identity_groups(names)}
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    print(f"{sum(map(len, names.values()))} names in {len(names)} modules -> {path}")


def check(path: pathlib.Path) -> list[str]:
    """Problems found: each recorded name that no longer imports, each split identity group."""
    data = json.loads(path.read_text())
    problems = []
    for module_name, exported in data["modules"].items():
        try:
            module = importlib.import_module(module_name)
        except Exception as err:  # noqa: BLE001 - report every failure, keep going
            problems.append(f"{module_name}: does not import ({type(err).__name__}: {err})")
            continue
        problems += [f"{module_name}: no '{name}'" for name in exported if not hasattr(module, name)]
    for group in data["same_object"]:
        objects = []
        for entry in group:
            module_name, name = entry.split(":")
            try:
                objects.append(getattr(importlib.import_module(module_name), name))
            except Exception:  # noqa: BLE001 - already reported above
                objects.append(None)
        if any(obj is not objects[0] for obj in objects[1:]):
            problems.append(f"no longer one object: {', '.join(group)}")
    return problems


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[1])
    parser.add_argument("action", choices=["record", "check"])
    parser.add_argument("path", type=pathlib.Path)
    args = parser.parse_args(argv)
    if args.action == "record":
        record(args.path)
        return 0
    problems = check(args.path)
    for line in problems:
        print(line)
    print(f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
