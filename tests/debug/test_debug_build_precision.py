"""`debug build` and `debug precision`: the build loop with the real TensorRT-RTX builder, and
the precision search with a planted culprit layer.

TensorRT-RTX builds engines without a GPU, so `debug build` runs for real here. It has no
per-layer precisions (its networks are strongly typed), so `debug precision`'s search runs
against a stand-in build step that writes the marked layers where the check reads them; the
TensorRT side of it (SetLayerPrecisions with precision constraints) needs full TensorRT.
"""

from __future__ import annotations

import json
import math
import sys

import pytest
from fixtures.cli_helpers import POLY, run_cli

from poly.core import PolyException


@pytest.fixture(scope="module")
def models_dir(tmp_path_factory):
    from fixtures import onnx_models

    root = tmp_path_factory.mktemp("precision_models")
    onnx_models.save(onnx_models.mlp(), root / "mlp.onnx")
    return root


CHECK_MARKED = """
import json, sys
marked = json.load(open(sys.argv[1]))["marked_layers"]
sys.exit(0 if sys.argv[2] in marked else 1)
"""


def _precision(tmp_path, layers, culprit, mode, direction):
    from poly.debug import IterativeDebugger, Precision, make_check

    script = tmp_path / "check_marked.py"
    script.write_text(CHECK_MARKED)
    info = tmp_path / "iter_info.json"
    built = []

    def build_engine(path, marked):
        built.append(list(marked))
        with open(path, "w") as f:
            json.dump(marked, f)

    debugger = IterativeDebugger(
        check=make_check([sys.executable, str(script), str(info), culprit]),
        iter_artifact_path=str(tmp_path / "polygraphy_debug.engine"),
        iteration_info_path=str(info),
        save_debug_replay=str(tmp_path / "replay.json"),
    )
    result = Precision(debugger, layers, build_engine, mode=mode, direction=direction).run()
    return result, built


@pytest.mark.parametrize("direction", ["forward", "reverse"])
@pytest.mark.parametrize("culprit_index", [0, 5, 17, 29])
def test_bisect_finds_the_fewest_layers(tmp_path, direction, culprit_index):
    layers = [f"layer_{i}" for i in range(30)]
    culprit = layers[culprit_index]
    result, built = _precision(tmp_path, layers, culprit, "bisect", direction)
    order = layers if direction == "forward" else layers[::-1]
    assert result.count == order.index(culprit) + 1
    assert result.layers == order[: result.count] and result.layers[-1] == culprit
    assert len(built) == result.iterations <= math.ceil(math.log2(len(layers)))
    assert all(marked == order[: len(marked)] for marked in built)  # always a prefix in that order


def test_linear_adds_one_layer_at_a_time(tmp_path):
    layers = [f"l{i}" for i in range(10)]
    result, built = _precision(tmp_path, layers, "l3", "linear", "forward")
    assert [len(m) for m in built] == [1, 2, 3, 4]
    assert result.count == 4 and result.iterations == 4


def test_replay_resumes_without_rebuilding(tmp_path):
    from poly.debug import IterativeDebugger, Precision, make_check

    layers = [f"l{i}" for i in range(16)]
    first, built = _precision(tmp_path, layers, "l9", "bisect", "forward")
    script, info = tmp_path / "check_marked.py", tmp_path / "iter_info.json"
    rebuilt = []
    debugger = IterativeDebugger(check=make_check([sys.executable, str(script), str(info), "l9"]),
                                 iter_artifact_path=str(tmp_path / "again.engine"), iteration_info_path=str(info),
                                 load_debug_replay=str(tmp_path / "replay.json"), save_debug_replay=None)
    again = Precision(debugger, layers, lambda path, marked: rebuilt.append(marked), mode="bisect").run()
    assert again.count == first.count == 10 and rebuilt == [] and debugger.checks_run == 0


def test_bad_mode_and_direction():
    from poly.debug import IterativeDebugger, Precision

    with pytest.raises(PolyException, match="--mode"):
        Precision(IterativeDebugger(check=lambda p: None, save_debug_replay=None), ["a"], None, mode="random")
    with pytest.raises(PolyException, match="--direction"):
        Precision(IterativeDebugger(check=lambda p: None, save_debug_replay=None), ["a"], None, direction="up")


def _needs_tensorrt():
    try:
        from poly.trt.tensorrt_module import trt

        return trt.load()
    except Exception as err:
        pytest.skip(f"no TensorRT flavour is installed ({err})")


def test_debug_build_builds_each_iteration_and_sorts(tmp_path, models_dir):
    _needs_tensorrt()
    (tmp_path / "check.py").write_text(
        "import os, sys\n"
        "n = int(open('count').read()) if os.path.exists('count') else 0\n"
        "open('count', 'w').write(str(n + 1))\n"
        "assert os.path.getsize('polygraphy_debug.engine') > 1000\n"
        "sys.exit(1 if n == 2 else 0)\n"
    )
    proc = run_cli(POLY, "debug", "build", models_dir / "mlp.onnx", "--until", "bad",
                   "--trt-min-shapes", "x:[1,8]", "--trt-opt-shapes", "x:[2,8]", "--trt-max-shapes", "x:[4,8]",
                   "--artifacts", "polygraphy_debug.engine", "--check", sys.executable, "check.py", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("Building engine with") == 3
    good = sorted(p.name for p in (tmp_path / "polygraphy_artifacts" / "good").iterdir())
    bad = sorted(p.name for p in (tmp_path / "polygraphy_artifacts" / "bad").iterdir())
    assert len(good) == 2 and len(bad) == 1 and bad[0].endswith("_N2_rc1.engine")
    assert all(p.startswith("polygraphy_debug_") for p in good + bad)
    replay = json.loads((tmp_path / "polygraphy_debug_replay.json").read_text())
    assert len(replay) == 3


def test_debug_precision_needs_layer_precisions(tmp_path, models_dir):
    from poly.trt.networks.layer_precisions import supports_layer_precisions

    trt_mod = _needs_tensorrt()
    from poly.trt import NetworkFromOnnxPath

    _, network, _ = NetworkFromOnnxPath(models_dir / "mlp.onnx")()
    if supports_layer_precisions(network):
        pytest.skip(f"{trt_mod.__name__} has per-layer precisions: the full path needs a GPU check command")
    proc = run_cli(POLY, "debug", "precision", models_dir / "mlp.onnx", "--check", "true", cwd=tmp_path)
    assert proc.returncode == 1
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "per-layer precisions" in lines[0] and "TensorRT-RTX" in lines[0]
