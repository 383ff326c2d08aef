"""Damaged TensorRT files read through the CLI with the installed flavour (TensorRT-RTX on CPU):
timing caches (`poly convert --load-timing-cache`, `poly inspect tactics`), tactic replays written
by Polygraphy (`poly inspect tactics`, `poly inspect diff-tactics`) and engines (`poly inspect
model x.engine`). A success, or exit 1 with one stderr line naming the file; `-o` and
`--save-timing-cache` are absent or complete."""

from __future__ import annotations

import json

import pytest
from fixtures import corruption
from fixtures.fuzz_profiles import fuzz_settings
from hypothesis import given
from hypothesis import strategies as st


@pytest.fixture(scope="module", autouse=True)
def _needs_tensorrt(seeds):
    if "timing.cache" not in seeds:
        pytest.skip("no TensorRT flavour is installed; the dev group installs TensorRT-RTX on Linux x86_64")


@given(data=st.data())
@fuzz_settings(60)
def test_damaged_timing_cache_in_a_build(seeds, damaged, data):
    blob = data.draw(corruption.corrupted_bytes(seeds["timing.cache"].read_bytes()))
    damaged(blob, "timing.cache",
            lambda path, work: ["convert", seeds["identity.onnx"], "-o", f"{work}/out.engine",
                                "--load-timing-cache", path, "--save-timing-cache", f"{work}/saved.cache"],
            outputs=["out.engine", "saved.cache"])


@given(data=st.data())
@fuzz_settings(80)
def test_damaged_timing_cache_inspected(seeds, damaged, data):
    blob = data.draw(corruption.corrupted_bytes(seeds["timing.cache"].read_bytes()))
    damaged(blob, "timing.cache", lambda path, work: ["inspect", "tactics", path])


@given(data=st.data())
@fuzz_settings(100)
def test_damaged_tactic_replay_inspected(replays, damaged, data):
    blob = data.draw(corruption.corrupted_json(json.loads((replays / "good" / "g1.json").read_text())))
    damaged(blob, "replay.json", lambda path, work: ["inspect", "tactics", path])


@given(data=st.data())
@fuzz_settings(100)
def test_damaged_tactic_replay_diffed(replays, damaged, data):
    blob = data.draw(corruption.corrupted_json(json.loads((replays / "bad" / "b1.json").read_text())))
    damaged(blob, "bad/replay.json",
            lambda path, work: ["inspect", "diff-tactics", "--good", replays / "good", "--bad", path])


@given(data=st.data())
@fuzz_settings(40)
def test_damaged_engine_inspected(seeds, damaged, data):
    # Deserializing needs a GPU, which this machine may lack: then every engine ends in one line
    # that names it (and says why), damaged or not.
    engine = seeds["identity.engine"].read_bytes()
    blob = data.draw(st.one_of(corruption.truncated(engine), corruption.bit_flipped(engine[:4096]),
                               corruption.junk_bytes()))
    damaged(blob, "model.engine", lambda path, work: ["inspect", "model", path])


def test_replay_with_wrong_types_names_the_layer(replays, damaged):
    replay = json.loads((replays / "good" / "g1.json").read_text())
    replay["replay"]["conv"]["inputs"][0]["strides"] = 4
    result = damaged(json.dumps(replay).encode(), "replay.json", lambda path, work: ["inspect", "tactics", path],
                     allow_success=False)
    assert result.exit_code == 1 and "layer 'conv'" in result.stderr
