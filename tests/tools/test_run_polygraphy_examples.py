"""tools/run_polygraphy_examples.py: how it reads an example's README, rewrites its scripts and
classifies each command's outcome, run on a small example directory of our own."""

from __future__ import annotations

import importlib.util
import json
import textwrap
from pathlib import Path

import pytest
from fixtures import onnx_models

TOOL = Path(__file__).resolve().parents[2] / "tools" / "run_polygraphy_examples.py"


@pytest.fixture(scope="module")
def tool():
    spec = importlib.util.spec_from_file_location("run_polygraphy_examples", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_shell_blocks_are_read_in_order_with_continuations_joined(tool):
    readme = textwrap.dedent("""\
        Intro text with `polygraphy run x.onnx` inline (not a command).

        ```bash
        # a comment
        polygraphy run model.onnx --onnxrt \\
            --atol 1e-3
        ```

        1. Indented step:

            ```bash
            polygraphy inspect model model.onnx
            ```

        ```python
        from polygraphy.backend.onnx import OnnxFromPath
        ```
        """)
    assert tool.shell_commands(readme) == ["polygraphy run model.onnx --onnxrt --atol 1e-3",
                                           "polygraphy inspect model model.onnx"]


@pytest.mark.parametrize(("returncode", "output", "script", "expected"), [
    (0, "[I] PASSED | Runtime: 1s", False, "ok"),
    (1, "[E] FAILED | Runtime: 1s | Command: poly run", False, "ok"),
    (2, "Usage: poly run\n[!] Error: No such option '--foo'.", False, "usage"),
    (1, "[!] INT8 calibration is not available in TensorRT-RTX 1.7 (use full TensorRT for --int8)", False, "needs"),
    (1, "Traceback (most recent call last):\n  File x\nValueError: bad", False, "traceback"),
    (1, "Traceback (most recent call last):\nNoCudaDeviceError: no NVIDIA driver or GPU on this machine", True,
     "needs"),
    (1, "Traceback (most recent call last):\nNoCudaDeviceError: no NVIDIA driver or GPU on this machine", False,
     "traceback"),
    (1, "[!] Model 'x.onnx' is not a valid ONNX model", False, "error"),
])
def test_outcomes(tool, returncode, output, script, expected):
    assert tool.classify("cmd", returncode, output, script=script) == expected


def test_an_example_directory_runs_with_poly_and_its_scripts_use_poly(tool, tmp_path):
    example = tmp_path / "examples" / "cli" / "run" / "01_demo"
    example.mkdir(parents=True)
    onnx_models.save(onnx_models.identity(), example / "identity.onnx")
    (example / "check_import.py").write_text("import polygraphy.backend.onnx as b\nprint(b.__name__)\n"
                                             "open('module.txt', 'w').write(b.__name__)\n")
    (example / "README.md").write_text(textwrap.dedent("""\
        ```bash
        python3 check_import.py
        polygraphy run identity.onnx --onnxrt --save-outputs out.json
        polygraphy inspect data out.json
        polygraphy run identity.onnx --no-such-flag
        polygraphy run <model.onnx> --onnxrt
        ```
        """))
    report = tmp_path / "report.json"
    assert tool.main([str(tmp_path / "examples"), "--json", str(report), "--timeout", "120"]) == 0
    records = json.loads(report.read_text())
    assert [(r["command"].split()[1], r["outcome"]) for r in records] == [
        ("run", "ok"), ("inspect", "ok"), ("run", "usage")]
    assert {r["example"] for r in records} == {"cli/run/01_demo"}
    assert not (example / "module.txt").exists(), "the example must run in a copy, not in place"
