"""The parts of Polygraphy's debug API its users build their own tools from, with ``poly`` in
place of ``polygraphy``: the flag groups ``ModelArgs`` and ``TrtConfigArgs`` of
``poly.tools.args`` (argparse renderings of the flags poly's commands declare), the markers of
``poly.tools.debug.subtool.precision`` and ``.reduce``, and the debug argument groups made and
set by hand (``IterativeDebugArgs()``, ``CheckCmdArgs`` attributes, then ``run_check``)."""

from __future__ import annotations

import argparse
import re
import sys

import pytest
from fixtures import onnx_models

from poly.core import PolyException


def _parse(groups, argv):
    parser = argparse.ArgumentParser()
    for group in groups:
        group.add_parser_args(parser)
    args = parser.parse_args(argv)
    for group in groups:
        group.parse(args)
    return groups


def test_model_and_trt_config_groups_parse_as_the_commands_do(tmp_path):
    from poly.tools.args import ModelArgs, TrtConfigArgs

    path = str(onnx_models.save(onnx_models.identity(), tmp_path / "m.onnx"))
    model, config = _parse([ModelArgs(), TrtConfigArgs()],
                           [path, "--input-shapes", "x:[1,3,224,224]", "y:[2]", "--precision-constraints", "obey",
                            "--builder-optimization-level", "3", "--save-tactics", "t.json"])
    assert model.path == path and model.model_type is None
    assert model.input_shapes == {"x": [1, 3, 224, 224], "y": [2]}
    assert config.precision_constraints == "obey" and config.builder_optimization_level == 3
    assert config.save_tactics == "t.json"
    # defaults, and Polygraphy's constructor arguments
    model, config = _parse([ModelArgs(model_opt_required=False, input_shapes_opt_name="model-input-shapes"),
                            TrtConfigArgs(precision_constraints_default="prefer")],
                           ["--model-input-shapes", "x:[4]"])
    assert model.path is None and model.input_shapes == {"x": [4]}
    assert config.precision_constraints == "prefer" and config.save_tactics is None


def test_flag_groups_report_bad_values_naming_the_flag(tmp_path):
    from poly.tools.args import ModelArgs, TrtConfigArgs

    path = str(onnx_models.save(onnx_models.identity(), tmp_path / "m.onnx"))
    import click

    with pytest.raises(click.BadParameter) as bad:
        _parse([ModelArgs()], [path, "--input-shapes", "x:[1,a"])
    assert "--input-shapes" in bad.value.format_message() and "x:[1,a" in bad.value.format_message()
    with pytest.raises(click.BadParameter) as bad:
        _parse([TrtConfigArgs()], ["--builder-optimization-level", "high"])
    assert "--builder-optimization-level" in bad.value.format_message()
    with pytest.raises(AttributeError, match="before parse"):
        ModelArgs().path  # noqa: B018 - the attribute read is the test


def test_the_groups_help_lists_the_commands_flags():
    from poly.tools.args import TrtConfigArgs

    parser = argparse.ArgumentParser()
    TrtConfigArgs().add_parser_args(parser)
    text = parser.format_help()
    for flag in ("--fp16", "--precision-constraints", "--trt-min-shapes", "--save-tactics", "--pool-limit"):
        assert flag in text, flag
    assert "TensorRT Builder Configuration" in text


@pytest.mark.parametrize("direction", ["forward", "reverse"])
@pytest.mark.parametrize("needed", [1, 6, 10])
def test_precision_markers_find_the_fewest_layers(direction, needed):
    from poly.tools.debug.subtool.precision import BisectMarker, LinearMarker

    for cls in (BisectMarker, LinearMarker):
        marker, seen = cls(10, direction), []
        while True:
            layers = marker.select_layers()
            assert isinstance(layers, range) and len(layers) <= 10
            assert (layers.start == 0) if direction == "forward" else (layers.stop == 10)
            seen.append(len(layers))
            if marker.step(len(layers) >= needed):
                break
        assert marker.good == needed and marker.remaining() == 0, (cls.__name__, seen)
        assert len(seen) <= (5 if cls is BisectMarker else 11)


def test_precision_markers_stop_when_nothing_passes(capsys):
    from poly.tools.debug.subtool.precision import BisectMarker, LinearMarker

    bisect = BisectMarker(8, "forward")
    assert bisect.select_layers() == range(0, 8)  # all of them first
    assert bisect.step(False) is True and bisect.good is None
    linear = LinearMarker(3, "reverse")
    steps = 0
    while not linear.step(False):
        steps += 1
    assert steps == 3 and linear.good is None
    with pytest.raises(PolyException):
        BisectMarker(3, "sideways")


def test_reduce_markers_bisect_and_walk_the_cut_index():
    from poly.tools.debug.subtool.reduce import BisectMarker, LinearMarker

    # cuts below 7 keep the failure (success: the check still fails there, as reduce asks)
    for cls, most in ((BisectMarker, 4), (LinearMarker, 10)):
        marker = cls(10)
        first = marker.remaining()
        steps = 0
        while not marker.stop():
            marker.step(marker.node_index < 7, 10)
            steps += 1
        assert (marker.good, marker.bad) == (6, 7) and steps <= most and first <= most
        marker.finish()


def test_iterative_debug_args_take_their_defaults():
    from poly.tools.debug.subtool.iterative_debug_args import ArtifactSortArgs, IterativeDebugArgs

    parser = argparse.ArgumentParser()
    groups = [IterativeDebugArgs(), ArtifactSortArgs()]
    for group in groups:
        group.add_parser_args(parser)
    args = parser.parse_args([])
    for group in groups:
        group.parse(args)
    assert groups[0].iter_artifact_path is None and groups[0].until is None


def test_check_args_set_by_hand_run_the_check():
    from poly.tools.debug.subtool.iterative_debug_args import CheckCmdArgs

    check = CheckCmdArgs()
    with pytest.raises(PolyException, match="no check command: parse the arguments first"):
        check.run_check("model.onnx")

    def exits(code, text=""):
        return [sys.executable, "-c", f"import sys; print({text!r}); sys.exit({code})"]

    check.check, check.fail_codes, check.ignore_fail_codes = exits(0), [1, 2], None
    check.fail_regexes, check.show_output, check.hide_fail_output = None, False, False
    assert check.run_check("model.onnx") is True
    check.check = exits(1)
    assert check.run_check("model.onnx") is False
    check.check = exits(3)  # not one of the fail codes
    assert check.run_check("model.onnx") is True
    check.fail_codes = None
    check.check = exits(1, "FAILED at precision")
    check.fail_regexes = [re.compile(r"FAILED.*precision")]
    assert check.run_check("model.onnx") is False
    check.check = exits(1, "some other error")  # fails, but not as the regexes say
    assert check.run_check("model.onnx") is True


def test_a_tool_of_its_own_with_the_data_loader_group(tmp_path):
    """A standalone tool as Polygraphy's examples/dev/01 writes one: a ``Tool`` subscribing to
    ``DataLoaderArgs``, with options of its own and ``run(args)``; ``main(argv)`` parses both."""
    import numpy as np

    from poly.core import TensorMetadata, load_json, save_json
    from poly.tools import Tool
    from poly.tools.args import DataLoaderArgs

    class GenData(Tool):
        """Generate random data."""

        def __init__(self):
            super().__init__("gen-data")

        def get_subscriptions_impl(self):
            return [DataLoaderArgs()]

        def add_parser_args_impl(self, parser):
            parser.add_argument("-o", "--output", required=True)
            parser.add_argument("--num-values", default=1, type=int)

        def run(self, args):
            meta = TensorMetadata().add(name="data", dtype=np.float32, shape=(args.num_values,))
            save_json(list(self.arg_groups[DataLoaderArgs].get_data_loader(meta)), dest=args.output)

    out = tmp_path / "data.json"
    GenData().main(["-o", str(out), "--num-values", "25", "--seed", "5", "--iterations", "2",
                    "--val-range", "[2,3]"])
    data = load_json(str(out))
    assert len(data) == 2 and data[0]["data"].shape == (25,) and data[0]["data"].dtype == np.float32
    assert np.all((data[0]["data"] >= 2) & (data[0]["data"] <= 3))
    assert not np.array_equal(data[0]["data"], data[1]["data"])
    again = tmp_path / "again.json"
    GenData().main(["-o", str(again), "--num-values", "25", "--seed", "5", "--iterations", "2", "--val-range", "[2,3]"])
    assert all(np.array_equal(a["data"], b["data"]) for a, b in zip(data, load_json(str(again)), strict=True))
