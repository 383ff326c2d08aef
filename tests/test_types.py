"""
The type checker of the suite: mypy over the src tree of every distribution, with the settings of
the root pyproject.toml ([tool.mypy]: strict for poly-core and poly-compare, mypy's defaults for
the other four). Any error fails the test. A fresh cache each run (under the test's tmp_path), so
the result never depends on an earlier run.

Also checks that each distribution marks its packages as typed (``py.typed``) and that the stub of
the compiled extension sits next to it.
"""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys
import time
from collections.abc import Callable

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGES = ROOT / "packages"
SRC_TREES = sorted(str(p.relative_to(ROOT)) for p in PACKAGES.glob("*/src") if p.is_dir())

# distribution -> its top packages that carry py.typed (poly itself is a namespace package;
# poly-core's py.typed in it covers the Polygraphy modules directly under poly/)
TYPED_PACKAGES = {
    "poly-core": ["poly", "poly/core"],
    "poly-compare": ["poly/compare", "poly/comparator"],
    "poly-onnx": ["poly/onnx", "poly/backend/onnx", "poly/backend/onnxrt", "poly/backend/pluginref"],
    "poly-trt": ["poly/trt", "poly/backend/trt", "poly/backend/tensorrt_rtx"],
    "poly-debug": ["poly/debug"],
    "poly-cli": ["poly/cli", "poly/tools"],
}


def _mypy(tmp_path: pathlib.Path, *paths: str) -> subprocess.CompletedProcess[str]:
    pytest.importorskip("mypy", reason="mypy is in the dev dependency group")
    cmd = [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
           "--cache-dir", str(tmp_path / "mypy_cache"), *paths]
    env = dict(os.environ, MYPY_FORCE_COLOR="0", PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)


def test_mypy_finds_no_errors(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str],
                              record_property: Callable[[str, object], None]) -> None:
    start = time.perf_counter()
    proc = _mypy(tmp_path, *SRC_TREES)
    seconds = time.perf_counter() - start
    output = proc.stdout + proc.stderr
    checked = re.search(r"(?:in|checked) (\d+) source files?", output)
    files = checked.group(1) if checked else "?"
    record_property("mypy_source_files", files)
    with capsys.disabled():
        print(f"\nmypy: {files} source files checked in {seconds:.1f} s ({', '.join(SRC_TREES)})")
    assert proc.returncode == 0, f"mypy found errors ({files} source files checked):\n{output}"
    assert checked and int(files) > 300, output


def test_mypy_fails_on_a_wrongly_typed_call(tmp_path: pathlib.Path) -> None:
    """The check has teeth: a call with a wrong type against poly-core's annotations is an error."""
    probe = tmp_path / "probe"
    probe.mkdir()
    bad = probe / "bad_call.py"
    bad.write_text(
        "from poly import _native\n"
        "from poly.core.logging.logger import G_LOGGER\n\n"
        "cpus: str = _native.usable_cpus()\n"  # returns int
        "G_LOGGER.critical('stop', 'not an exception type', 3)\n"  # one argument too many
    )
    proc = _mypy(tmp_path, str(bad))
    output = proc.stdout + proc.stderr
    assert proc.returncode == 1, output
    assert 'Incompatible types in assignment (expression has type "int", variable has type "str")' in output, output
    assert 'Too many arguments for "critical" of "Logger"' in output, output


@pytest.mark.parametrize("dist", sorted(TYPED_PACKAGES))
def test_every_distribution_ships_py_typed(dist: str) -> None:
    src = PACKAGES / dist / "src"
    missing = [pkg for pkg in TYPED_PACKAGES[dist] if not (src / pkg / "py.typed").is_file()]
    assert not missing, f"{dist}: no py.typed in {missing}"


def test_the_native_extension_has_a_stub() -> None:
    stub = PACKAGES / "poly-core" / "src" / "poly" / "_native.pyi"
    text = stub.read_text()
    for name in ("error_stats", "order_stats", "histogram", "DTYPE_CODES", "DeviceBuffer", "Stream"):
        assert re.search(rf"^(def |class )?{name}\b", text, re.M), name


# A user's code against the public API of poly-compare and poly-core: correct usage type-checks
# clean, and each misuse below is an error. With ``Any`` in these signatures every line would pass.
_GOOD_USAGE = '''
import numpy as np
from poly.compare import (AccuracyResult, Comparator, CompareFunc, ErrorStats, IterationResult, RunResults,
                          error_stats)
from poly.core import G_LOGGER, DataType, DataTypeEntry, LogMode, TensorMetadata, save_json

stats: ErrorStats = error_stats(np.zeros(3), [0.0, 1.0, 2.0], atol=1e-3, quantiles=(0.5, 0.99))
worst: float = stats.absdiff.max + stats.reldiff.mean
func = CompareFunc.simple(atol={"": 1e-5, "logits": 1e-3}, check_error_stat="median", fail_fast=True)
results = RunResults.load("results.json")
first: list[IterationResult] = results["onnxrt-runner"]
name, iterations = results[0]
array: np.ndarray = first[0]["output"]
accuracy: AccuracyResult = Comparator.compare_accuracy(results, compare_func=func)
meta = TensorMetadata().add("x", DataType.FLOAT32, (-1, 3)).add("y", "int64", ("batch",))
entry: DataTypeEntry = DataType.from_dtype(np.float32)
G_LOGGER.info(lambda: f"{len(meta)} inputs", mode=LogMode.ONCE)
with G_LOGGER.verbosity(G_LOGGER.VERBOSE):
    G_LOGGER.warning("careful")
save_json({"a": 1}, "out.json", description="a dict")
'''

_BAD_USAGE = {
    "CompareFunc.simple(atol='x')": 'Argument "atol" to "simple" of "CompareFunc" has incompatible type "str"',
    "error_stats([1.0], [1.0]).absdiff.max + 's'": 'Unsupported operand types for + ("float" and "str")',
    "CompareFunc.simple(check_error_stat=3)": 'Argument "check_error_stat" to "simple" of "CompareFunc"',
    "RunResults.load(42)": 'Argument 1 to "load" of "RunResults" has incompatible type "int"',
    "x: str = RunResults()['runner'][0].runner_name + 1": 'Unsupported operand types for + ("str" and "int")',
    "G_LOGGER.verbose(3.5)": 'Argument 1 to "verbose" of "Logger" has incompatible type "float"',
    "y: int = G_LOGGER.severity_from_name(5)": 'Argument 1 to "severity_from_name" of "Logger" has incompatible type "int"',
    "TensorMetadata().add(7, 'float32', (1,))": 'Argument 1 to "add" of "TensorMetadata" has incompatible type "int"',
    "z: str = DataType.FLOAT32": 'Incompatible types in assignment (expression has type "DataTypeEntry"',
    "save_json({}, 3.0)": 'Argument 2 to "save_json" has incompatible type "float"',
    "Comparator.compare_accuracy(results, comparisons=[('a', 'b')])": 'List item 0 has incompatible type "tuple[str, str]"; expected "tuple[int, int]"',
    "w: int = error_stats([1.0], [1.0]).a": 'Incompatible types in assignment (expression has type "ValueSummary"',
}


def test_the_public_api_is_typed_not_any(tmp_path: pathlib.Path) -> None:
    """Correct use of the public API type-checks clean; misuse is reported, line by line."""
    probe = tmp_path / "probe"
    probe.mkdir()
    good = probe / "good_usage.py"
    good.write_text(_GOOD_USAGE)
    header = ("from poly.compare import Comparator, CompareFunc, RunResults, error_stats\n"
              "from poly.core import G_LOGGER, DataType, TensorMetadata, save_json\n"
              "results = RunResults()\n")
    bad = probe / "bad_usage.py"
    bad.write_text(header + "".join(f"{line}\n" for line in _BAD_USAGE))
    proc = _mypy(tmp_path, str(good), str(bad))
    output = proc.stdout + proc.stderr
    good_errors = [line for line in output.splitlines() if "good_usage.py" in line]
    assert not good_errors, output
    for number, (line, expected) in enumerate(_BAD_USAGE.items(), start=header.count("\n") + 1):
        reported = [text for text in output.splitlines() if f"bad_usage.py:{number}:" in text]
        assert any(expected in text for text in reported), f"line {number} ({line}): {reported}\n{output}"


def test_compare_func_simple_declares_the_options_signature() -> None:
    """``CompareFunc.simple``'s signature for type checkers matches the one set at run time."""
    import ast
    import inspect

    from poly.compare import CompareFunc

    source = (PACKAGES / "poly-compare" / "src" / "poly" / "compare" / "funcs" / "compare_func.py").read_text()
    declared = next(
        [arg.arg for arg in node.args.args]
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef) and node.name == "simple" and node.args.args
    )
    assert declared == list(inspect.signature(CompareFunc.simple).parameters), declared
