"""One version everywhere: the repository's pyproject files and inter-package pins agree,
and tools/bump_version.py bumps and checks them."""

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TOOL = ROOT / "tools" / "bump_version.py"


def _load_tool():
    spec = importlib.util.spec_from_file_location("poly_tools_bump_version", TOOL)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


bump_version = _load_tool()
tomllib = bump_version.tomllib  # the stdlib's on 3.11+, tomli on 3.10


def run_tool(*args, env=None):
    return subprocess.run([sys.executable, str(TOOL), *args], capture_output=True, text=True, env=env,
                          timeout=120)


def _relpaths(root: Path) -> list[str]:
    return [p.relative_to(root).as_posix() for p in bump_version.pyproject_files(root)]


@pytest.fixture
def tree(tmp_path):
    """A copy of the repository's pyproject files (root + packages/*) under tmp_path."""
    for rel in _relpaths(ROOT):
        dst = tmp_path / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, dst)
    return tmp_path


def _texts(root: Path) -> dict[str, str]:
    return {rel: (root / rel).read_text(encoding="utf-8") for rel in _relpaths(root)}


def _pins(data: dict, names: set[str]):
    """(name, version or None) of every requirement on a workspace package in project deps/extras."""
    project = data.get("project", {})
    reqs = list(project.get("dependencies", []))
    for extra in project.get("optional-dependencies", {}).values():
        reqs += extra
    for req in reqs:
        m = re.match(r"^\s*([A-Za-z0-9._-]+)\s*(?:\[[^\]]*\])?\s*(?:==\s*([^\s;,]+))?", req)
        if m and m[1] in names:
            yield m[1], m[2]


def test_repository_versions_and_pins_agree():
    expected, files, problems = bump_version.check(ROOT)
    assert len(files) >= 7  # the root and the six packages
    assert not problems, "versions disagree (fix with tools/bump_version.py):\n" + "\n".join(map(str, problems))
    assert expected == tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def test_check_cli_on_repository():
    out = run_tool("--check")
    assert out.returncode == 0, out.stdout + out.stderr
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert out.stdout.strip() == f"all {len(_relpaths(ROOT))} pyproject files agree on {version}"


def test_bump_changes_only_versions_and_pins(tree):
    before = _texts(tree)
    old = tomllib.loads(before["pyproject.toml"])["project"]["version"]
    out = run_tool("9.8.7", "--no-lock", "--root", str(tree))
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"all {len(before)} pyproject files agree on 9.8.7" in out.stdout
    assert "not running `uv lock`" in out.stdout
    after = _texts(tree)
    assert after.keys() == before.keys()

    names = {tomllib.loads(t)["project"]["name"] for rel, t in before.items() if rel != "pyproject.toml"}
    n_pins = 0
    for rel, text in after.items():
        data = tomllib.loads(text)
        assert data["project"]["version"] == "9.8.7", rel
        for name, version in _pins(data, names):
            assert version == "9.8.7", f"{rel}: {name} pinned to {version}"
            n_pins += 1
        # Line by line: only version and pin lines changed, and only in their version string.
        old_lines, new_lines = before[rel].splitlines(keepends=True), text.splitlines(keepends=True)
        assert len(old_lines) == len(new_lines), rel
        changed = [(o, n) for o, n in zip(old_lines, new_lines, strict=True) if o != n]
        assert len(changed) == 1 + sum(1 for _ in _pins(tomllib.loads(before[rel]), names)), rel
        for o, n in changed:
            assert n == o.replace(old, "9.8.7"), (rel, o, n)
            assert re.match(r"\s*version\s*=", o) or "poly-" in o, (rel, o)
    assert n_pins >= 12  # poly-cli 5, poly-debug 4, compare/onnx/trt 1 each, the trt extra 1

    out = run_tool("--check", "--root", str(tree))
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.strip() == f"all {len(after)} pyproject files agree on 9.8.7"


def test_bump_keeps_formatting_of_unusual_lines(tmp_path):
    (tmp_path / "pyproject.toml").write_bytes(
        b'[project]\r\nname = "ws"\r\nversion = \'1.0\'  # the single source of truth\r\n\r\n'
        b'[tool.uv.workspace]\r\nmembers = ["packages/*"]\r\n'
    )
    pkg = tmp_path / "packages" / "a"
    pkg.mkdir(parents=True)
    (pkg / "pyproject.toml").write_text(
        '[project]\nname = "poly-a"\nversion="1.0"\n'
        'dependencies = ["poly_core[x] == 1.0 ; python_version >= \'3.10\'",  # keep me\n'
        '    "numpy==1.0", "poly-core-extra==1.0"]\n'
        '[project.optional-dependencies]\nall = [ "poly-core==0.9" ]  # stale pin gets fixed too\n'
        '[tool.other]\nversion = "1.0"\ndeps = ["poly-core==1.0"]\n'
    )
    core = tmp_path / "packages" / "core"
    core.mkdir()
    (core / "pyproject.toml").write_text('[project]\nname = "poly-core"\nversion = "1.0"\n')

    out = run_tool("2.0.0rc1", "--no-lock", "--root", str(tmp_path))
    assert out.returncode == 0, out.stdout + out.stderr
    assert (tmp_path / "pyproject.toml").read_bytes() == (
        b'[project]\r\nname = "ws"\r\nversion = \'2.0.0rc1\'  # the single source of truth\r\n\r\n'
        b'[tool.uv.workspace]\r\nmembers = ["packages/*"]\r\n'
    )
    assert (pkg / "pyproject.toml").read_text() == (
        '[project]\nname = "poly-a"\nversion="2.0.0rc1"\n'
        'dependencies = ["poly_core[x] == 2.0.0rc1 ; python_version >= \'3.10\'",  # keep me\n'
        '    "numpy==1.0", "poly-core-extra==1.0"]\n'
        '[project.optional-dependencies]\nall = [ "poly-core==2.0.0rc1" ]  # stale pin gets fixed too\n'
        '[tool.other]\nversion = "1.0"\ndeps = ["poly-core==1.0"]\n'
    )
    assert (core / "pyproject.toml").read_text() == '[project]\nname = "poly-core"\nversion = "2.0.0rc1"\n'


def test_check_detects_planted_mismatch(tree):
    debug = tree / "packages" / "poly-debug" / "pyproject.toml"
    old = tomllib.loads((tree / "pyproject.toml").read_text())["project"]["version"]
    text = debug.read_text()
    assert f'"poly-trt=={old}"' in text
    debug.write_text(text.replace(f'"poly-trt=={old}"', '"poly-trt==0.0.1"'))
    before = _texts(tree)

    out = run_tool("--check", "--root", str(tree))
    assert out.returncode == 1, out.stdout + out.stderr
    problems = [line.strip() for line in out.stdout.splitlines() if line.startswith("  ")]
    assert len(problems) == 1, out.stdout
    assert problems[0].startswith("packages/poly-debug/pyproject.toml: dependencies pin of poly-trt")
    assert "poly-trt==0.0.1" in problems[0] and f"poly-trt=={old}" in problems[0]
    assert _texts(tree) == before  # --check changes nothing

    _, _, found = bump_version.check(tree)
    assert [(p.file, p.found) for p in found] == [("packages/poly-debug/pyproject.toml", "poly-trt==0.0.1")]


def test_check_reports_every_disagreement(tree):
    compare = tree / "packages" / "poly-compare" / "pyproject.toml"
    old = tomllib.loads(compare.read_text())["project"]["version"]
    compare.write_text(compare.read_text().replace(f'version = "{old}"', 'version = "5.0"'))
    trt = tree / "packages" / "poly-trt" / "pyproject.toml"
    trt.write_text(trt.read_text().replace(f'"poly-onnx=={old}"', '"poly-onnx>=0.1"'))

    out = run_tool("--check", "--root", str(tree))
    assert out.returncode == 1
    assert "packages/poly-compare/pyproject.toml: [project] version: found '5.0'" in out.stdout
    assert "packages/poly-trt/pyproject.toml: optional-dependencies.onnx pin of poly-onnx" in out.stdout


@pytest.mark.parametrize("bad", ["not-a-version", "1.2.3-beta.x", "", "1..2"])
def test_invalid_version_is_rejected(tree, bad):
    before = _texts(tree)
    out = run_tool(bad, "--no-lock", "--root", str(tree))
    assert out.returncode == 2
    assert out.stdout == ""
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and "invalid version" in lines[0] and repr(bad) in lines[0], out.stderr
    assert _texts(tree) == before


def test_bump_runs_uv_lock_unless_told_not_to(tree):
    bindir = tree / "fakebin"
    bindir.mkdir()
    fake_uv = bindir / "uv"
    fake_uv.write_text(f"#!{sys.executable}\nimport os, sys\n"
                       "open('uv-calls.txt', 'a').write(os.getcwd() + ' ' + ' '.join(sys.argv[1:]) + '\\n')\n")
    fake_uv.chmod(0o755)
    env = dict(os.environ, PATH=f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")

    out = run_tool("9.8.7", "--root", str(tree), env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"running: {fake_uv} lock" in out.stdout
    assert (tree / "uv-calls.txt").read_text() == f"{tree.resolve()} lock\n"

    out = run_tool("9.8.8", "--no-lock", "--root", str(tree), env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    assert (tree / "uv-calls.txt").read_text() == f"{tree.resolve()} lock\n"  # not run again
