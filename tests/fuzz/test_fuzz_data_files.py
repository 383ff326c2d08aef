"""Damaged saved inputs and run results (Polygraphy's JSON, poly's ``.npz``) read through the CLI:
`poly run --load-inputs/--load-outputs` and `poly inspect data`. Every outcome is a success (the
damage left the file valid) or exit 1 with one stderr line naming the file; outputs written by
the same command are absent or complete."""

from __future__ import annotations

import functools
import json

from fixtures import corruption
from fixtures.cli_outcome import problem
from fixtures.fuzz_profiles import fuzz_settings
from hypothesis import given
from hypothesis import strategies as st

compared = functools.partial(problem, comparison=True)

INPUT_MISMATCH = ["--load-inputs", "Input tensor: x |"]
"""What else an error line may name: damage can leave a valid file whose input has another name,
dtype or shape than the model's, reported for the tensor (and the flag)."""


def _json(seeds, name):
    return json.loads(seeds[name].read_text())


# -- saved inputs ------------------------------------------------------------------------------


def _run_with_inputs(seeds):
    def args(path, work):
        return ["run", seeds["identity.onnx"], "--onnxrt", "--load-inputs", path, "--save-outputs", f"{work}/out.json"]

    return args


@given(data=st.data())
@fuzz_settings(120)
def test_damaged_inputs_json(seeds, damaged, data):
    blob = data.draw(st.one_of(corruption.corrupted_json(_json(seeds, "inputs.json")),
                               corruption.huge_npy().map(corruption.npy_payload_json)))
    damaged(blob, "inputs.json", _run_with_inputs(seeds), outputs=["out.json"], also_named=INPUT_MISMATCH)


@given(data=st.data())
@fuzz_settings(120)
def test_damaged_inputs_npz(seeds, damaged, data):
    blob = data.draw(st.one_of(corruption.corrupted_bytes(seeds["inputs.npz"].read_bytes()), corruption.huge_npz()))
    damaged(blob, "inputs.npz", _run_with_inputs(seeds), outputs=["out.json"], also_named=INPUT_MISMATCH)


# -- run results -------------------------------------------------------------------------------


@given(data=st.data())
@fuzz_settings(150)
def test_damaged_results_json_inspected(seeds, damaged, data):
    blob = data.draw(corruption.corrupted_json(_json(seeds, "outputs.json")))
    damaged(blob, "outputs.json", lambda path, work: ["inspect", "data", path, "--all", "--show-values"])


@given(data=st.data())
@fuzz_settings(80)
def test_damaged_results_json_compared(seeds, damaged, data):
    blob = data.draw(corruption.corrupted_json(_json(seeds, "outputs.json")))
    damaged(blob, "outputs.json",
            lambda path, work: ["run", seeds["identity.onnx"], "--onnxrt", "--load-inputs", seeds["inputs.json"],
                                "--load-outputs", path, "--save-outputs", f"{work}/out.npz"],
            outputs=["out.npz"], check=compared)


@given(data=st.data())
@fuzz_settings(150)
def test_damaged_results_npz_inspected(seeds, damaged, data):
    blob = data.draw(st.one_of(corruption.corrupted_bytes(seeds["outputs.npz"].read_bytes()), corruption.huge_npz()))
    damaged(blob, "outputs.npz", lambda path, work: ["inspect", "data", path, "--all", "--show-values"])


@given(data=st.data())
@fuzz_settings(80)
def test_damaged_results_npz_compared(seeds, damaged, data):
    blob = data.draw(corruption.corrupted_bytes(seeds["outputs.npz"].read_bytes()))
    damaged(blob, "outputs.npz",
            lambda path, work: ["run", seeds["identity.onnx"], "--onnxrt", "--load-inputs", seeds["inputs.npz"],
                                "--load-outputs", path, "--save-outputs", f"{work}/out.json"],
            outputs=["out.json"], check=compared)


# -- what every damaged data file must be refused for ------------------------------------------


@given(blob=st.one_of(corruption.huge_npy().map(corruption.npy_payload_json), corruption.huge_npz(),
                      corruption.deeply_nested_json(), st.just(b""), st.just(corruption.NON_UTF8)))
@fuzz_settings(40)
def test_hopeless_data_files_always_fail(seeds, damaged, blob):
    name = "inputs.npz" if blob.startswith(b"PK") else "inputs.json"
    result = damaged(blob, name, lambda path, work: ["inspect", "data", path], allow_success=False)
    assert result.exit_code == 1
