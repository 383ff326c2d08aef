"""The workspace's uv settings cost nothing at each `uv run`: no bytecode compilation of the whole
environment before every command (uv does that at every run while `compile-bytecode` is set)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent


def test_the_workspace_does_not_compile_bytecode_at_every_run():
    settings = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["uv"]
    assert "compile-bytecode" not in settings, (
        "[tool.uv] compile-bytecode makes uv recompile all of site-packages at every `uv run`; "
        "images compile once with `uv sync --compile-bytecode` (README.md)")


@pytest.mark.skipif(not os.environ.get("UV"), reason="not run through `uv run` (no uv executable named in $UV)")
def test_uv_run_starts_without_compiling_the_environment():
    env = {k: v for k, v in os.environ.items() if k not in ("UV_COMPILE_BYTECODE", "VIRTUAL_ENV")}
    out = subprocess.run([os.environ["UV"], "run", "--frozen", "python", "-c", "print('ran')"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ran"
    assert "Bytecode compiled" not in out.stderr, out.stderr
