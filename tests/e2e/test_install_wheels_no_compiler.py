"""All six poly wheels (tests/e2e/conftest.py builds them once per session with
tools/build_wheels.py) install into a fresh virtual environment on a PATH with no compiler, CMake
or Ninja (and CC/CXX set to /bin/false): poly-core's wheel is a binary one with a manylinux tag,
so nothing is built at install. The `poly` command installed there then runs the bundled
example on ONNX-Runtime and compares the ONNX reference evaluator's outputs with those saved.

The third-party dependencies (numpy, onnx, onnxruntime, click...) come from PyPI, pinned to the
workspace's versions, which uv's cache usually holds; poly's own only from the built wheels."""

import os
import shutil
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
BUILD_TOOLS = ("gcc", "g++", "cc", "c++", "clang", "clang++", "cmake", "ninja", "make")

CHECK_INSTALL = textwrap.dedent(
    """
    import importlib.metadata, json, sys
    from pathlib import Path

    dist_dir = Path(sys.argv[1]).resolve()
    for name in ("poly-core", "poly-compare", "poly-onnx", "poly-trt", "poly-debug", "poly-cli"):
        dist = importlib.metadata.distribution(name)
        url = json.loads(dist.read_text("direct_url.json") or "{}")
        # installed from the built wheel file, not from the checkout (an editable or a directory)
        assert url.get("url", "").endswith(".whl"), (name, url)
        assert Path(url["url"].removeprefix("file://")).parent.resolve() == dist_dir, (name, url)
        assert not url.get("dir_info", {}).get("editable"), (name, url)
    tags = [line.split(":", 1)[1].strip() for line in
            importlib.metadata.distribution("poly-core").read_text("WHEEL").splitlines() if line.startswith("Tag:")]
    assert tags and all("-manylinux_" in tag for tag in tags), tags
    # auditwheel grafted no library into the wheel: the extension links only what manylinux allows
    grafted = [str(f) for f in importlib.metadata.distribution("poly-core").files if ".libs/" in str(f)]
    assert not grafted, grafted

    from poly import _native
    import poly.cli
    for mod in (_native, poly.cli):
        assert "site-packages" in mod.__file__, mod.__file__
    print("TAGS", " ".join(tags))
    """
)


def _no_compiler_env(tmp_path, venv, uv):
    """clean_env() with a PATH of the venv's scripts and a folder holding only uv: no compiler,
    CMake, Ninja or make is found, and CC/CXX name /bin/false should anything look there."""
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "uv").symlink_to(uv)
    path = os.pathsep.join([str(venv / "bin"), str(tools)])
    found = {tool: shutil.which(tool, path=path) for tool in BUILD_TOOLS}
    assert not any(found.values()), found
    return dict(clean_env(), PATH=path, CC="/bin/false", CXX="/bin/false")


@pytest.mark.slow
@pytest.mark.xdist_group(WHEELS_GROUP)
def test_install_all_wheels_without_a_compiler(tmp_path, built_wheels):
    deadline = Deadline(TIMEOUT_S)
    uv = find_uv_binary()
    python = make_venv(tmp_path / "venv", uv, deadline, clean_env())
    env = _no_compiler_env(tmp_path, tmp_path / "venv", uv)

    core = built_wheels.wheels["poly-core"]
    assert "-manylinux_" in core.name, core.name  # a binary wheel, repaired by auditwheel
    start = time.monotonic()
    proc = install_wheels(python, list(built_wheels.wheels.values()), uv, deadline, env,
                          write_constraints(tmp_path / "constraints.txt"))
    install_s = time.monotonic() - start
    # --no-build already makes any build an error; uv names what it builds ("Built ...")
    assert "Built " not in proc.stderr and "Building " not in proc.stderr, proc.stderr
    for name in built_wheels.wheels:
        assert f" + {name}==" in proc.stderr, proc.stderr

    proc = deadline.run([python, "-c", CHECK_INSTALL, built_wheels.dist], cwd=tmp_path, env=env)
    deadline.check(proc, "the install check in the fresh venv")
    assert proc.stdout.strip().splitlines()[-1].startswith("TAGS "), proc.stdout

    # Run from tmp_path, so that the repository's sources are not importable by accident.
    poly = tmp_path / "venv" / "bin" / "poly"
    start = time.monotonic()
    proc = deadline.run([poly, "run", "--example", "--onnxrt", "--save-outputs", "ort.json"], cwd=tmp_path, env=env)
    deadline.check(proc, "poly run --example --onnxrt")
    assert proc.stdout.strip().splitlines()[-1].startswith("[I] PASSED"), proc.stdout
    proc = deadline.run([poly, "run", "--example", "--onnx-ref", "--load-outputs", "ort.json"], cwd=tmp_path, env=env)
    deadline.check(proc, "poly run --example --onnx-ref --load-outputs ort.json")
    assert "Accuracy Comparison" in proc.stdout and "PASSED | simple | All outputs matched" in proc.stdout, proc.stdout
    assert proc.stdout.strip().splitlines()[-1].startswith("[I] PASSED"), proc.stdout
    print(f"installing the six wheels took {install_s:.1f} s, the two poly runs {time.monotonic() - start:.1f} s")
