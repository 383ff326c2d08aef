"""Tactic replay files in Polygraphy's format (fixtures written by Polygraphy itself) and the
good/bad diff."""

from __future__ import annotations

import json

import pytest
from fixtures.tactic_replays import make_replays


@pytest.fixture(scope="module")
def replays(tmp_path_factory, trt_mod):
    root = tmp_path_factory.mktemp("tactics")
    problem = make_replays(root)
    if problem:
        pytest.skip(f"Polygraphy could not write replay fixtures here: {problem}")
    return root


def test_reads_polygraphy_replays(replays):
    from poly.trt.builder.tactics import Algorithm, load_tactic_records

    records = load_tactic_records(replays / "bad" / "b1.json")
    assert list(records) == ["conv", "relu"]
    assert records["conv"].implementation == 3 and records["conv"].tactic == 11
    assert records["conv"].inputs == (("DataType.FLOAT", (1, 4), -1, 1),)
    assert isinstance(records["relu"], Algorithm) and "Tactic: 5" in str(records["relu"])


def test_written_replays_keep_polygraphy_format(replays, tmp_path):
    from poly.trt.builder.tactics import TacticReplayData, load_tactic_records

    original = json.loads((replays / "good" / "g1.json").read_text())
    records = load_tactic_records(replays / "good" / "g1.json")
    records.save(tmp_path / "copy.json")
    assert json.loads((tmp_path / "copy.json").read_text()) == original
    assert TacticReplayData.load(tmp_path / "copy.json") == records


def test_diff_finds_only_bad_tactics(replays):
    from poly.trt.builder.tactics import diff_tactics

    suspects = diff_tactics(replays / "good", replays / "bad")
    assert {name: [a.tactic for a in algos] for name, algos in suspects.items()} == {"conv": [11], "relu": [6]}
    assert diff_tactics(replays / "good", replays / "good") == {}


def test_not_a_tactic_file(tmp_path, trt_mod):
    from poly.trt.builder.tactics import TacticFileError, load_tactic_records

    bad = tmp_path / "bad.json"
    bad.write_text('{"something": 1}')
    with pytest.raises(TacticFileError, match="bad.json.*not a tactic replay"):
        load_tactic_records(bad)
    with pytest.raises(TacticFileError, match="does not exist"):
        load_tactic_records(tmp_path / "none.json")


def test_tensor_info_is_polygraphys_name_and_round_trips():
    from poly.backend.trt.algorithm_selector import Algorithm, TensorInfo

    info = TensorInfo("DataType.FLOAT", [4, 1], -1, 1)
    dtype, strides, vectorized_dim, components = info
    assert (dtype, strides, vectorized_dim, components) == ("DataType.FLOAT", (4, 1), -1, 1)
    assert repr(info) == "TensorInfo(DataType.FLOAT, (4, 1), -1, 1)"
    algo = Algorithm(1, 2, [info], [("DataType.HALF", [2], None, None)])
    back = Algorithm.from_json_dict(algo.to_json_dict(), layer="l")
    assert back == algo and isinstance(back.inputs[0], TensorInfo) and isinstance(back.outputs[0], TensorInfo)

    class IOInfo:  # what TensorRT's IAlgorithmIOInfo exposes
        dtype = "DataType.INT8"
        strides = [8, 1]

    assert TensorInfo.from_trt(IOInfo()) == ("DataType.INT8", (8, 1), None, None)
