"""The wheels of all six poly distributions, built once per test session by the project's own
command, tools/build_wheels.py (poly-core's repaired by auditwheel for a manylinux tag). A session
fixture lives in each pytest-xdist worker: the tests that use it share the xdist_group
fixtures.wheel_install.WHEELS_GROUP, so that one worker builds the wheels, once. POLY_QUICK_BUILD
(-O0, portable kernels only): these tests check the build and the install, not the optimisation,
and a release build takes longer than the suite can spare on 2 cores."""

from __future__ import annotations

import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from fixtures.wheel_install import ROOT, clean_env, find_uv_binary

BUILD_TIMEOUT_S = 480


@dataclass(frozen=True)
class BuiltWheels:
    dist: Path  # the folder holding the six wheels, and nothing else
    wheels: dict[str, Path]  # distribution name -> wheel file
    build_log: str  # tools/build_wheels.py's output: its steps' wall times
    seconds: float
    cmake_build_dir: Path


@pytest.fixture(scope="session")
def built_wheels(tmp_path_factory) -> BuiltWheels:
    if find_uv_binary() is None:
        pytest.skip("uv is not on PATH: tools/build_wheels.py builds with `uv build`")
    base = tmp_path_factory.mktemp("wheels")
    dist, build = base / "dist", base / "cmake-build"
    start = time.monotonic()
    # A private CMake build folder: a cold build that neither races with nor reuses the
    # workspace's editable build (packages/poly-core/build) or a release build (build/wheels).
    proc = subprocess.run([sys.executable, ROOT / "tools/build_wheels.py", "--quick", "--out-dir", dist,
                           "--build-dir", build], cwd=ROOT, env=clean_env(), capture_output=True, text=True,
                          timeout=BUILD_TIMEOUT_S)
    seconds = time.monotonic() - start
    assert proc.returncode == 0, f"tools/build_wheels.py failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    assert (build / "CMakeCache.txt").is_file(), "poly-core's extension was not built in the private build folder"
    wheels = {}
    for line in proc.stdout.splitlines():
        if line.endswith(".whl"):
            path = Path(line)
            wheels[path.name.split("-")[0].replace("_", "-")] = path
    assert sorted(wheels) == sorted(["poly-core", "poly-compare", "poly-onnx", "poly-trt", "poly-debug", "poly-cli"])
    # (uv build also leaves a .gitignore there)
    assert sorted(p.name for p in dist.glob("*.whl")) == sorted(p.name for p in wheels.values()), list(dist.iterdir())
    print(f"\n{proc.stdout.strip()}\nbuilding the wheels took {seconds:.1f} s")
    return BuiltWheels(dist, wheels, proc.stdout, seconds, build)
