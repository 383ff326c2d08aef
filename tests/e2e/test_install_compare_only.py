"""poly-core + poly-compare installed alone into a fresh virtual environment bring numpy
(and nothing heavy: no onnx, onnxruntime, TensorRT), and poly.compare computes statistics there.

Installs the wheels that tests/e2e/conftest.py builds once per session (tools/build_wheels.py,
poly-core's C++ extension compiled from source and repaired for a manylinux tag), so it needs a
compiler and network access to PyPI for the build dependencies; the build takes from thirty
seconds to a minute, the install and the check a few seconds."""

import textwrap
import time

import pytest
from fixtures.wheel_install import (
    WHEELS_GROUP,
    Deadline,
    clean_env,
    find_uv_binary,
    install_wheels,
    make_venv,
    write_constraints,
)

TIMEOUT_S = 300

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


@pytest.mark.slow
@pytest.mark.xdist_group(WHEELS_GROUP)
def test_install_core_and_compare_only(tmp_path, built_wheels):
    deadline = Deadline(TIMEOUT_S)
    env = clean_env()  # nothing from the workspace's venv or the test run's sys.path leaks in
    uv = find_uv_binary()
    python = make_venv(tmp_path / "venv", uv, deadline, env)

    start = time.monotonic()
    install_wheels(python, [built_wheels.wheels["poly-core"], built_wheels.wheels["poly-compare"]], uv, deadline,
                   env, write_constraints(tmp_path / "constraints.txt"))
    print(f"installing the poly-core and poly-compare wheels took {time.monotonic() - start:.1f} s")

    _write_result_files(tmp_path)
    # Run from tmp_path, so that the repository's sources are not importable by accident.
    proc = deadline.run([python, "-c", SCRIPT], cwd=tmp_path, env=env)
    deadline.check(proc, "the check script in the fresh venv")
    assert proc.stdout.strip().splitlines()[-1].startswith("OK poly.core"), proc.stdout
