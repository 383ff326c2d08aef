"""Polygraphy's documented Python API, as its ``examples/api`` scripts and API overview use it,
with ``poly`` in place of ``polygraphy``: loaders, runners, the Comparator, saved inputs and run
results read back by hand, the debug tool and its argument groups driven through argparse.
Short snippets making the same calls as those examples, on models the tests build."""

from __future__ import annotations

import argparse
import sys

import numpy as np
import pytest
from fixtures import onnx_models


@pytest.fixture
def identity_path(tmp_path):
    return str(onnx_models.save(onnx_models.identity(), tmp_path / "identity.onnx"))


def test_bytes_from_path_loaders(tmp_path, identity_path):
    from poly.backend.common import BytesFromPath, SaveBytes, bytes_from_path

    with open(identity_path, "rb") as f:
        expected = f.read()
    assert bytes_from_path(identity_path) == expected
    saved = str(tmp_path / "copy.onnx")
    assert SaveBytes(BytesFromPath(identity_path), path=saved)() == expected
    with open(saved, "rb") as f:
        assert f.read() == expected


def test_comparing_frameworks_and_saving_results(tmp_path, identity_path):
    # examples/api/01_comparing_frameworks, with a second ONNX backend in place of TensorRT
    from poly.backend.onnx import OnnxFromPath
    from poly.backend.onnxrt import OnnxrtRunner, SessionFromOnnx
    from poly.comparator import Comparator, CompareFunc
    from poly.onnx import OnnxRefRunner

    runners = [OnnxrtRunner(SessionFromOnnx(identity_path)), OnnxRefRunner(OnnxFromPath(identity_path))]
    run_results = Comparator.run(runners)
    assert bool(Comparator.compare_accuracy(run_results, compare_func=CompareFunc.simple(atol=1e-8)))
    assert bool(Comparator.compare_accuracy(
        run_results, compare_func=CompareFunc.distance_metrics(l2_tolerance=1e-5, cosine_similarity_threshold=0.99)))
    assert bool(Comparator.compare_accuracy(
        run_results, compare_func=CompareFunc.quality_metrics(psnr_tolerance=50.0, snr_tolerance=25.0)))
    path = tmp_path / "inference_results.json"
    run_results.save(str(path))
    assert '"polygraphy_class": "RunResults"' in path.read_text()


def test_validating_on_a_dataset(identity_path):
    # examples/api/02_validating_on_a_dataset, on ONNX-Runtime
    from poly.backend.onnxrt import OnnxrtRunner, SessionFromOnnx

    dataset = [np.ones((1, 1, 2, 2), np.float32), np.zeros((1, 1, 2, 2), np.float32)]
    with OnnxrtRunner(SessionFromOnnx(identity_path)) as runner:
        for data in dataset:
            outputs = runner.infer(feed_dict={"x": data})
            assert np.array_equal(outputs["y"], data)


def test_run_results_and_saved_inputs_read_by_hand(tmp_path, identity_path):
    # examples/api/08_working_with_run_results_and_saved_inputs_manually
    from poly.backend.onnxrt import OnnxrtRunner, SessionFromOnnx
    from poly.comparator import Comparator, DataLoader, RunResults
    from poly.json import load_json, save_json

    loader = DataLoader(seed=3)
    results = Comparator.run([OnnxrtRunner(SessionFromOnnx(identity_path), name="ort")], data_loader=loader)
    save_json(list(loader), str(tmp_path / "inputs.json"))
    results.save(str(tmp_path / "outputs.json"))

    [feed_dict] = load_json(str(tmp_path / "inputs.json"))
    results = RunResults.load(str(tmp_path / "outputs.json"))
    for runner_name, [outputs] in results.items():
        assert runner_name == "ort"
        for name, array in outputs.items():
            assert name == "y"
            np.testing.assert_array_equal(array, feed_dict["x"])


def test_immediate_evaluation_functions(tmp_path, identity_path):
    # examples/api/06_immediate_eval_api, ONNX side: the snake_case twins return the objects
    from poly.backend.onnx import fold_constants, modify_outputs, onnx_from_path, save_onnx
    from poly.backend.onnxrt import OnnxrtRunner, session_from_onnx

    model = modify_outputs(fold_constants(onnx_from_path(identity_path)), outputs=["y"])
    save_onnx(model, str(tmp_path / "out.onnx"))
    with OnnxrtRunner(session_from_onnx(str(tmp_path / "out.onnx"))) as runner:
        out = runner.infer({"x": np.full((1, 1, 2, 2), 2.0, np.float32)})
    np.testing.assert_array_equal(out["y"], np.full((1, 1, 2, 2), 2.0, np.float32))


def test_input_metadata_has_numpy_dtypes_by_default(identity_path):
    from poly.backend.onnxrt import OnnxrtRunner, SessionFromOnnx
    from poly.datatype import DataType

    with OnnxrtRunner(SessionFromOnnx(identity_path)) as runner:
        dtype, shape = runner.get_input_metadata()["x"]
        assert isinstance(dtype, np.dtype) and dtype == np.float32 and list(shape) == [1, 1, 2, 2]
        assert runner.get_input_metadata(use_numpy_dtypes=False)["x"].dtype == DataType.FLOAT32


def test_debug_tool_and_its_subtools_through_argparse(tmp_path, monkeypatch, identity_path):
    from poly.tools.debug.debug import Debug
    from poly.tools.debug.subtool import Build, Precision, Reduce, Repeat
    from poly.tools.debug.subtool.iterative_debug_args import (
        ArtifactSortArgs,
        CheckCmdArgs,
        IterativeDebugArgs,
    )

    monkeypatch.chdir(tmp_path)
    parser = argparse.ArgumentParser(prog="poly")
    Debug().setup_parser(parser.add_subparsers(dest="tool"))
    command_lines = {
        Build: ["debug", "build", identity_path, "--save-tactics", "replay.json", "--artifacts-dir", "replays",
                "--artifacts", "replay.json", "--until", "2", "--check", "true"],
        Precision: ["debug", "precision", identity_path, "--mode", "bisect", "--check", "true"],
        Reduce: ["debug", "reduce", identity_path, "-o", "reduced.onnx", "--mode", "linear", "--check", "true"],
        Repeat: ["debug", "repeat", "--until", "2", "--check", "true"],
    }
    for subtool, argv in command_lines.items():
        args = parser.parse_args(argv)
        assert isinstance(args.subcommand, subtool), argv

    # debug repeat runs its check until told and counts passes
    args = parser.parse_args(["debug", "repeat", "--until", "3", "--check", sys.executable, "-c", "pass"])
    assert args.subcommand.run(args) == 0

    # the argument groups on a plain parser, as a Polygraphy subtool builds them
    groups = [CheckCmdArgs(), ArtifactSortArgs(allow_no_artifacts_warning=False),
              IterativeDebugArgs(iter_art_opt_default="iteration.txt")]
    plain = argparse.ArgumentParser()
    for group in groups:
        group.add_parser_args(plain)
    parsed = plain.parse_args(["--check", sys.executable, "-c", "import sys; sys.exit(1)", "--until", "good"])
    for group in groups:
        group.parse(parsed)
    assert groups[0].run_check() is False
