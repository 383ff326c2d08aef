"""poly-core + poly-compare installed alone into a fresh virtual environment bring numpy
(and nothing heavy: no onnx, onnxruntime, TensorRT), and poly.compare computes statistics there.

Builds poly-core (and its C++ extension) from source, so it needs a compiler and network access
to PyPI for the build dependencies; it takes from ten seconds to a minute."""

import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT_S = 600

SCRIPT = textwrap.dedent(
    """
    import importlib.metadata
    import importlib.util
    import sys

    for heavy in ("onnx", "onnxruntime", "tensorrt", "tensorrt_rtx", "onnx_graphsurgeon"):
        assert importlib.util.find_spec(heavy) is None, f"{heavy} is installed"

    dists = {d.metadata["Name"].lower().replace("_", "-") for d in importlib.metadata.distributions()}
    extra = dists - {"poly-core", "poly-compare", "numpy", "pip", "setuptools", "wheel"}
    assert {"poly-core", "poly-compare", "numpy"} <= dists, dists
    assert not extra, f"unexpected distributions: {sorted(extra)}"

    import numpy as np

    import poly.core
    from poly import _native
    from poly.compare import error_stats

    for mod in ("poly.core", "poly.compare"):
        assert "site-packages" in sys.modules[mod].__file__, sys.modules[mod].__file__
    assert "site-packages" in _native.__file__, _native.__file__

    a = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, -6.0]], dtype=np.float32)
    b = np.array([[1.5, 2.0, 2.0], [4.0, 4.0, -6.5]], dtype=np.float32)
    stats = error_stats(a, b, atol=0.1, rtol=0.1)
    absdiff = np.abs(a.astype(np.float64) - b.astype(np.float64))
    assert stats.shape == (2, 3) and stats.size == 6
    assert stats.absdiff.max == absdiff.max() == 1.0, stats.absdiff
    assert stats.absdiff.argmax == (0, 2), stats.absdiff.argmax
    assert abs(stats.absdiff.mean - absdiff.mean()) < 1e-12, (stats.absdiff.mean, absdiff.mean())
    assert abs(stats.absdiff.median - np.median(absdiff)) < 1e-12
    reldiff = absdiff / np.abs(b.astype(np.float64))
    assert stats.reldiff.max == reldiff.max() == 0.5, stats.reldiff
    assert stats.mismatches == int(np.sum((absdiff > 0.1) & (reldiff > 0.1))) == 3, stats.mismatches

    # Two saved result files (written by the workspace's poly, in Polygraphy's JSON format)
    # compared with the Polygraphy API, with no onnx anywhere.
    from poly.comparator import Comparator, CompareFunc, RunResults

    ref, cand = RunResults.load("ref.json"), RunResults.load("cand.json")
    merged = RunResults()
    merged.extend(ref)
    merged.extend(cand)
    assert bool(Comparator.compare_accuracy(merged, compare_func=CompareFunc.simple(atol=1e-2)))
    assert not bool(Comparator.compare_accuracy(merged, compare_func=CompareFunc.simple(atol=1e-6, rtol=1e-6)))

    heavy = [m for m in ("onnx", "onnxruntime", "tensorrt", "matplotlib") if m in sys.modules]
    assert not heavy, heavy
    print("OK", poly.core.__name__, np.__version__)
    """
)


def _write_result_files(folder):
    import numpy as np

    from poly.compare import IterationResult, RunResults

    out = np.linspace(0, 1, 12, dtype=np.float32).reshape(3, 4)
    for name, runner, values in (("ref.json", "onnxrt-runner", out), ("cand.json", "trt-runner", out + np.float32(1e-3))):
        results = RunResults()
        results.append((runner, [IterationResult({"y": values}, runner_name=runner)]))
        results.save(str(folder / name))


def _run(cmd, deadline, **kwargs):
    left = deadline - time.monotonic()
    if left <= 0:
        pytest.fail(f"out of time ({TIMEOUT_S} s) before: {' '.join(map(str, cmd))}")
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=left, **kwargs)


def _check(proc, what):
    assert proc.returncode == 0, f"{what} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"


@pytest.mark.slow
def test_install_core_and_compare_only(tmp_path):
    deadline = time.monotonic() + TIMEOUT_S
    # A clean environment: nothing from the workspace's venv or the test run's sys.path leaks in.
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    venv = tmp_path / "venv"
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    uv = shutil.which("uv")

    if uv is not None:
        _check(_run([uv, "venv", "--python", sys.executable, venv], deadline, env=env), "uv venv")
        # --no-sources: resolve like pip does. Without it uv honours [tool.uv.sources]
        # `poly-core = { workspace = true }` and installs poly-core *editable* from the checkout.
        install = [uv, "pip", "install", "--no-sources", "--python", python]
    else:
        made = _run([sys.executable, "-m", "venv", venv], deadline, env=env)
        if made.returncode != 0 or not python.exists():
            pytest.skip(f"uv is not on PATH and `python -m venv` failed: {made.stderr.strip()[-300:]}")
        install = [python, "-m", "pip", "install", "--disable-pip-version-check"]
    # A private CMake build dir: a cold build from source that cannot race with (or reuse) the
    # workspace's packages/poly-core/build of the editable install.
    # POLY_QUICK_BUILD: -O0, the portable kernels only; what this test checks is the install, not
    # the optimisation (the workspace's own build is the optimised one)
    install += ["--config-settings", f"build-dir={tmp_path / 'build'}",
                "--config-settings", "cmake.define.POLY_QUICK_BUILD=ON"]

    start = time.monotonic()
    proc = _run([*install, "packages/poly-core", "packages/poly-compare"], deadline, cwd=ROOT, env=env)
    _check(proc, "installing poly-core + poly-compare")
    assert (tmp_path / "build" / "CMakeCache.txt").is_file(), "poly-core's extension was not built from source"
    print(f"install (building poly-core from source) took {time.monotonic() - start:.1f} s")

    _write_result_files(tmp_path)
    # Run from tmp_path, so that the repository's sources are not importable by accident.
    proc = _run([python, "-c", SCRIPT], deadline, cwd=tmp_path, env=env)
    _check(proc, "the check script in the fresh venv")
    assert proc.stdout.strip().splitlines()[-1].startswith("OK poly.core"), proc.stdout
