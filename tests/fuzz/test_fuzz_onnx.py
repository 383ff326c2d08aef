"""Damaged ONNX models (bytes, structure, external data) read through `poly inspect model`,
`poly run --onnxrt` and `poly surgeon sanitize -o`: a success, or exit 1 with one stderr line
naming the model; `-o` is absent or a complete model, and external data outside the model's
directory is never read."""

from __future__ import annotations

import os
import struct

import onnx
import pytest
from fixtures import corruption, onnx_models
from fixtures.fuzz_profiles import fuzz_settings
from fixtures.onnx_corruption import external_data_damage, mutated_models
from hypothesis import given
from hypothesis import strategies as st

COMMANDS = {
    "inspect": lambda path, work: ["inspect", "model", path, "--show", "layers", "--show", "attrs", "--show", "weights"],
    "run": lambda path, work: ["run", path, "--onnxrt", "--save-outputs", f"{work}/out.json"],
    "sanitize": lambda path, work: ["surgeon", "sanitize", path, "--fold-constants", "-o", f"{work}/out.onnx"],
}
OUTPUTS = {"inspect": [], "run": ["out.json"], "sanitize": ["out.onnx"]}
NAMED = {"inspect": [], "run": ["--input-shapes"], "sanitize": []}
"""What else an error line may name: `poly run` generates inputs from the model's input shapes, and
a shape no data can be made for is reported with the flag that overrides it."""
command = st.sampled_from(sorted(COMMANDS))


@given(data=st.data(), cmd=command)
@fuzz_settings(150)
def test_damaged_model_bytes(seeds, damaged, data, cmd):
    blob = data.draw(corruption.corrupted_bytes(seeds["mlp.onnx"].read_bytes()))
    damaged(blob, "model.onnx", COMMANDS[cmd], outputs=OUTPUTS[cmd], also_named=NAMED[cmd])


@given(data=st.data(), cmd=command)
@fuzz_settings(150)
def test_model_with_structural_lies(damaged, data, cmd):
    model = data.draw(st.sampled_from([onnx_models.mlp(), onnx_models.constant_foldable(), onnx_models.control_flow()]))
    damaged(data.draw(mutated_models(model)), "model.onnx", COMMANDS[cmd], outputs=OUTPUTS[cmd], also_named=NAMED[cmd])


@given(data=st.data(), cmd=command)
@fuzz_settings(120)
def test_damaged_external_data(seeds, damaged, data, cmd):
    model = onnx.load(str(seeds["ext/model.onnx"]), load_external_data=False)
    model_bytes, weights = data.draw(external_data_damage(model, seeds["ext/weights.bin"].read_bytes()))
    # what a model must never read: a file next to the model's directory, of float32 4321.5 values
    outside = struct.pack("<f", 4321.5) * 1024
    extra = {"outside.bin": outside}
    if weights is not None:
        extra["model/weights.bin"] = weights

    # link.bin, next to the weights, points to the file outside the model's directory
    result = damaged(model_bytes, "model/model.onnx", COMMANDS[cmd], outputs=OUTPUTS[cmd], extra_files=extra,
                     links={"model/link.bin": "outside.bin"})
    if cmd == "inspect" and result.exit_code == 0:
        assert "4321.5" not in result.stdout, "weights were read from outside the model's directory"


@pytest.mark.parametrize("location", ["../outside.bin", "link.bin", "sub/../../outside.bin", "ABSOLUTE"])
def test_external_data_outside_the_model_directory_is_refused(seeds, damaged, location):
    model = onnx.load(str(seeds["ext/model.onnx"]), load_external_data=False)
    for cmd in COMMANDS:
        def args(path, work, cmd=cmd):
            for entry in model.graph.initializer[0].external_data:
                if entry.key == "location":
                    entry.value = location.replace("ABSOLUTE", os.path.join(work, "outside.bin"))
            with open(path, "wb") as f:
                f.write(model.SerializeToString())
            return COMMANDS[cmd](path, work)

        result = damaged(b"", "model/model.onnx", args, outputs=OUTPUTS[cmd], allow_success=False,
                         extra_files={"outside.bin": b"\x00" * 4096, "model/weights.bin": seeds["ext/weights.bin"].read_bytes()},
                         links={"model/link.bin": "outside.bin"})
        assert result.exit_code == 1, result.output
        assert "external data" in result.stderr.lower(), result.stderr
