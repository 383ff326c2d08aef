#!/usr/bin/env python3
"""Measures poly's drop-in promise with Polygraphy's own unit tests.

    tools/run_polygraphy_unit_tests.py PATH/TO/Polygraphy/tests [--dirs comparator func ...]

Polygraphy's test tree is copied to a temporary directory (never into this repository), every
``polygraphy`` import is rewritten to ``poly``, and pytest runs on the chosen subdirectories in a
separate process. Patches made to the copy, each only for a reason unrelated to poly:

- marks applied to fixtures are removed (newer pytest refuses them: "Marks cannot be applied to
  fixtures");
- in their model table (``models/meta.py``) the TensorFlow loader is replaced by a placeholder
  (poly has no TensorFlow backend; TensorFlow-only tests skip themselves).

A conftest put above the copy:

- lets ``import tensorrt`` (and ``import tensorrt_rtx``) find TensorRT-RTX when full TensorRT is
  not installed (its builder, network and parser work without a GPU), and sets
  ``POLYGRAPHY_USE_TENSORRT_RTX=1`` so that the tests take their TensorRT-RTX paths;
- when torch (or every TensorRT flavour) is not installed, puts a placeholder ``torch`` (or
  ``tensorrt``) in ``sys.modules`` whose every use skips the test (or the module, when used at
  import) with the reason "torch is not installed" ("tensorrt is not installed");
- reports as skipped, naming the reason, a test that failed only because no GPU is present
  (poly's ``NoCudaDeviceError`` / ``CudaUnavailableError``: TensorRT engines and CUDA memory
  need one);
- records every module's import result and every test's outcome in a JSON file.

Printed per directory: test files that import / total, tests passed / failed / skipped (and
errors), and the failures grouped by cause (exception type and message, numbers elided).
"""

from __future__ import annotations

import argparse
import ast
import collections
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

DEFAULT_DIRS = ["comparator", "backend/onnx", "backend/onnxrt", "backend/base", "func", "logger", "common"]

_IMPORT_FROM = re.compile(r"^(\s*from\s+)polygraphy(?=[\s.])", re.MULTILINE)
_IMPORT = re.compile(r"^(\s*import\s+)polygraphy(?=[\s.,]|$)", re.MULTILINE)
_DOTTED = re.compile(r"(?<![\w/\"'-])polygraphy\.(?=[A-Za-z_])")


def rewrite_imports(source: str) -> str:
    """``polygraphy`` -> ``poly`` in import statements and dotted module references."""
    source = _IMPORT_FROM.sub(r"\1poly", source)
    source = _IMPORT.sub(r"\1poly", source)
    return _DOTTED.sub("poly.", source)


def _is_fixture(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return ast.unparse(target) in ("pytest.fixture", "fixture")


def remove_fixture_marks(source: str) -> str:
    """Drops ``@pytest.mark...`` decorators from functions that are also ``@pytest.fixture``s."""
    tree = ast.parse(source)
    drop = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(map(_is_fixture, node.decorator_list)):
            for decorator in node.decorator_list:
                target = decorator.func if isinstance(decorator, ast.Call) else decorator
                if ast.unparse(target).startswith("pytest.mark."):
                    drop.update(range(decorator.lineno, decorator.end_lineno + 1))
    lines = source.splitlines(keepends=True)
    return "".join(line for number, line in enumerate(lines, start=1) if number not in drop)


def patch_models_meta(source: str) -> str:
    """poly has no TensorFlow backend: the TensorFlow model's loader becomes a placeholder."""
    return re.sub(
        r"^from poly\.backend\.tf import GraphFromFrozen\s*$",
        "def GraphFromFrozen(path):  # patched by poly's harness: no TensorFlow backend\n"
        "    return lambda: (_ for _ in ()).throw(RuntimeError('TensorFlow is not supported by poly'))\n",
        source,
        flags=re.MULTILINE,
    )


CONFTEST = '''
"""Written by poly's tools/run_polygraphy_unit_tests.py (see its docstring)."""
import importlib
import importlib.machinery
import json
import os
import sys
import types

import pytest

try:
    import tensorrt  # noqa: F401
    TENSORRT = "tensorrt"
except ImportError:
    TENSORRT = None
    for _name in ("tensorrt_rtx", "tensorrt_rtx_bindings"):
        try:
            _module = importlib.import_module(_name)
        except ImportError:
            continue
        sys.modules.setdefault("tensorrt", _module)
        sys.modules.setdefault("tensorrt_rtx", _module)
        TENSORRT = _name
        break


class _Missing(types.ModuleType):
    """Stands in for a module that is not installed: every use (its version included) skips the
    test using it; the other dunders stay missing for the import machinery."""

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__") and name != "__version__":
            raise AttributeError(name)
        raise pytest.skip.Exception(f"{self.__name__} is not installed", allow_module_level=True)


def _stand_in(module_name):
    stub = _Missing(module_name)
    stub.__spec__ = importlib.machinery.ModuleSpec(module_name, None)
    sys.modules[module_name] = stub


if TENSORRT is None:
    _stand_in("tensorrt")

try:
    import torch  # noqa: F401
    TORCH = True
except ImportError:
    TORCH = False
    _stand_in("torch")

NO_GPU_ERRORS = {"NoCudaDeviceError", "CudaUnavailableError"}
RECORD = {"modules": {}, "tests": {}, "tensorrt": TENSORRT, "torch": TORCH}


def _cause(report):
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None:
        return crash.message
    text = str(report.longrepr).strip().splitlines()
    errors = [line for line in text if line.startswith("E ")]
    return (errors[0][1:].strip() if errors else (text[-1] if text else "?"))


def pytest_collectreport(report):
    if report.nodeid.endswith(".py"):
        if report.failed:
            RECORD["modules"][report.nodeid] = ["error", _cause(report)]
        elif report.skipped:
            RECORD["modules"][report.nodeid] = ["skipped", str(report.longrepr[-1]) if isinstance(report.longrepr, tuple) else ""]
        else:
            RECORD["modules"].setdefault(report.nodeid, ["ok", ""])


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if call.excinfo is not None and report.failed:
        names = {cls.__name__ for cls in call.excinfo.type.__mro__}
        if names & NO_GPU_ERRORS:
            message = str(call.excinfo.value).splitlines()[0] if str(call.excinfo.value) else ""
            report.outcome = "skipped"
            report.longrepr = (str(item.path), item.location[1] or 0, f"Skipped: needs a GPU: {message}")


def pytest_runtest_logreport(report):
    entry = RECORD["tests"].setdefault(report.nodeid, ["passed", ""])
    if report.failed:
        kind = "failed" if report.when == "call" else "error"
        if entry[0] not in ("failed", "error"):
            RECORD["tests"][report.nodeid] = [kind, _cause(report)]
    elif report.skipped and entry[0] == "passed":
        reason = report.longrepr[-1] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        RECORD["tests"][report.nodeid] = ["skipped", reason]


def pytest_sessionfinish(session):
    with open(os.environ["POLY_HARNESS_RECORD"], "w") as f:
        json.dump(RECORD, f)
'''


def prepare(tests_dir: Path, work: Path) -> Path:
    """Copies and patches Polygraphy's tests under ``work``; returns the copy's root."""
    root = work / "tests"
    shutil.copytree(tests_dir, root, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for path in root.rglob("*.py"):
        source = rewrite_imports(path.read_text())
        if "pytest.mark." in source and "fixture" in source:
            source = remove_fixture_marks(source)
        if path == root / "models" / "meta.py":
            source = patch_models_meta(source)
        path.write_text(source)
    (work / "conftest.py").write_text(CONFTEST)
    markers = "markers =\n    serial: serial\n    slow: slow\n"
    (work / "pytest.ini").write_text(f"[pytest]\n{markers}")
    return root


def _run_once(work: Path, dirs: list[str], extra: list[str], marker: str, name: str) -> tuple[dict, str]:
    record_path = work / f"record-{name}.json"
    # as Polygraphy's own test target runs them (its Makefile sets this)
    env = dict(os.environ, POLY_HARNESS_RECORD=str(record_path), POLYGRAPHY_INTERNAL_CORRECTNESS_CHECKS="1")
    if importlib.util.find_spec("tensorrt") is None and any(
        importlib.util.find_spec(name) for name in ("tensorrt_rtx", "tensorrt_rtx_bindings")
    ):
        # Polygraphy's tests take their TensorRT-RTX paths (CreateConfigRTX, no INT8...) this way.
        env.setdefault("POLYGRAPHY_USE_TENSORRT_RTX", "1")
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(work),
               "-c", str(work / "pytest.ini"), "--continue-on-collection-errors", "-o", "addopts=",
               "-m", marker, *[f"tests/{d}" for d in dirs], *extra]
    proc = subprocess.run(command, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if not record_path.exists():
        raise SystemExit(f"pytest wrote no results (exit status {proc.returncode}):\n{proc.stdout[-4000:]}")
    return json.loads(record_path.read_text()), proc.stdout


def run_pytest(work: Path, dirs: list[str], extra: list[str]) -> tuple[dict, str]:
    """
    Runs the tests as Polygraphy's Makefile does: those marked ``serial`` in a process of their
    own first (some check global state, such as the logger's severity, that other tests
    change), then the rest. Returns the merged record and pytest's output.
    """
    serial, serial_out = _run_once(work, dirs, extra, "serial", "serial")
    rest, rest_out = _run_once(work, dirs, extra, "not serial", "rest")
    for key in ("modules", "tests"):
        for nodeid, outcome in serial[key].items():
            if key == "tests" or outcome[0] != "ok":
                rest[key][nodeid] = outcome
    return rest, serial_out + rest_out


def _normalize(cause: str) -> str:
    cause = cause.strip().splitlines()[0] if cause.strip() else "?"
    cause = re.sub(r"0x[0-9a-fA-F]+", "0x…", cause)
    cause = re.sub(r"(?<![\w.])-?\d+(\.\d+)?(e[-+]?\d+)?", "N", cause)
    return cause[:160]


def summarize(record: dict, root: Path, dirs: list[str]) -> tuple[str, dict]:
    lines, totals = [], collections.Counter()
    for d in dirs:
        files = sorted(str(p.relative_to(root.parent)) for p in (root / d).rglob("test_*.py"))
        modules = {f: record["modules"].get(f, ["not collected", ""]) for f in files}
        importing = [f for f, (state, _) in modules.items() if state == "ok"]
        tests = {k: v for k, v in record["tests"].items() if k.split("::")[0] in files}
        counts = collections.Counter(state for state, _ in tests.values())
        totals.update(counts)
        totals["files"] += len(files)
        totals["files_ok"] += len(importing)
        lines.append(
            f"{d:16s} files import {len(importing)}/{len(files)}   passed {counts['passed']}  "
            f"failed {counts['failed']}  errors {counts['error']}  skipped {counts['skipped']}"
        )
        for f, (state, cause) in modules.items():
            if state != "ok":
                lines.append(f"    module {f}: {state}: {_normalize(cause)}")
        causes = collections.defaultdict(list)
        for nodeid, (state, cause) in tests.items():
            if state in ("failed", "error"):
                causes[_normalize(cause)].append(nodeid.split("::", 1)[1])
        for cause, ids in sorted(causes.items(), key=lambda kv: -len(kv[1])):
            lines.append(f"    {len(ids):3d} x {cause}")
            for nodeid in ids[:3]:
                lines.append(f"          {nodeid}")
            if len(ids) > 3:
                lines.append(f"          ... and {len(ids) - 3} more")
    run = totals["passed"] + totals["failed"] + totals["error"]
    rate = 100.0 * totals["passed"] / run if run else 0.0
    lines.append(
        f"TOTAL            files import {totals['files_ok']}/{totals['files']}   passed {totals['passed']}  "
        f"failed {totals['failed']}  errors {totals['error']}  skipped {totals['skipped']}   "
        f"pass rate {rate:.1f}% of tests run"
    )
    skips = collections.Counter(_normalize(reason) for state, reason in record["tests"].values() if state == "skipped")
    if skips:
        lines.append("skip reasons:")
        lines.extend(f"    {n:3d} x {reason}" for reason, n in skips.most_common(12))
    return "\n".join(lines), dict(totals, pass_rate=rate)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tests_dir", type=Path, help="Polygraphy's tests directory (tools/Polygraphy/tests)")
    parser.add_argument("--dirs", nargs="+", default=DEFAULT_DIRS, help="subdirectories to run")
    parser.add_argument("--keep", action="store_true", help="keep the temporary copy and print its path")
    parser.add_argument("--json", type=Path, help="also write the totals and every outcome here")
    parser.add_argument("--show-output", action="store_true", help="print pytest's own output")
    parser.add_argument("pytest_args", nargs="*", help="extra pytest arguments (after --)")
    args = parser.parse_args(argv)

    tests_dir = args.tests_dir.resolve()
    if not (tests_dir / "conftest.py").is_file():
        parser.error(f"{tests_dir}: not Polygraphy's tests directory (no conftest.py)")
    work = Path(tempfile.mkdtemp(prefix="poly-polygraphy-tests-"))
    try:
        root = prepare(tests_dir, work)
        record, output = run_pytest(work, args.dirs, args.pytest_args)
        if args.show_output:
            print(output)
        text, totals = summarize(record, root, args.dirs)
        print(f"TensorRT module: {record['tensorrt']}; torch installed: {record['torch']}")
        print(text)
        if args.json:
            args.json.write_text(json.dumps({"totals": totals, **record}, indent=1))
    finally:
        if args.keep:
            print(f"copy kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
