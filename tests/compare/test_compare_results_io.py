"""RunResults, AccuracyResult(s) and saved inputs: Polygraphy 0.53's JSON in both directions, .npz,
and loading that never runs code."""

from __future__ import annotations

import base64
import io
import json
import os
import pickle
import subprocess
import sys
from collections import OrderedDict

import numpy as np
import pytest

import poly.compare as pc
from poly.core import DataFormatError, PolyException


def _outputs(seed=0):
    rng = np.random.default_rng(seed)
    return OrderedDict(
        logits=rng.standard_normal((2, 3)).astype(np.float32),
        half=rng.random(4).astype(np.float16),
        idx=np.array([[3, 1, 2]], np.int64),
        mask=np.array([True, False]),
        scalar=np.array(2.5, np.float64),
        empty=np.zeros((0, 3), np.float32),
        bytes=np.arange(5, dtype=np.uint8),
    )


def _assert_same_run(a, b):
    assert list(a.keys()) == list(b.keys())
    for (name_a, its_a), (name_b, its_b) in zip(a.items(), b.items(), strict=True):
        assert name_a == name_b and len(its_a) == len(its_b)
        for it_a, it_b in zip(its_a, its_b, strict=True):
            assert it_a.runner_name == it_b.runner_name and it_a.runtime == it_b.runtime
            assert list(it_a.keys()) == list(it_b.keys())
            for key in it_a.keys():
                x, y = np.asarray(it_a[key]), np.asarray(it_b[key])
                assert x.dtype == y.dtype and x.shape == y.shape and np.array_equal(x, y, equal_nan=True)


def _make(module):
    results = module.RunResults()
    results.append(("onnxrt-runner", [module.IterationResult(_outputs(0), runtime=0.25, runner_name="onnxrt-runner"),
                                      module.IterationResult(_outputs(1), runtime=0.5, runner_name="onnxrt-runner")]))
    results.append(("trt-runner", [module.IterationResult(_outputs(2), runner_name="trt-runner"),
                                   module.IterationResult(_outputs(3), runner_name="trt-runner")]))
    return results


def test_polygraphy_run_results_load_in_poly(pg, tmp_path):
    path = tmp_path / "outputs.json"
    _make(pg.comparator).save(str(path))
    loaded = pc.RunResults.load(str(path))
    assert isinstance(loaded, pc.RunResults)
    _assert_same_run(_make(pc), loaded)
    assert loaded == _make(pc)


def test_poly_run_results_load_in_polygraphy(pg, tmp_path):
    path = tmp_path / "outputs.json"
    _make(pc).save(str(path))
    loaded = pg.comparator.RunResults.load(str(path))
    _assert_same_run(_make(pg.comparator), loaded)
    # and the text is what Polygraphy itself writes
    assert json.loads(path.read_text()) == json.loads(_make(pg.comparator).to_json())


def test_run_results_npz_round_trip(tmp_path):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    results = _make(pc)
    results["trt-runner"][0]["bf16"] = np.array([1.5, -2.0], dtype=ml_dtypes.bfloat16)
    results["trt-runner"][0]["odd/name:0"] = np.array([1, 2], np.int8)
    path = tmp_path / "outputs.npz"
    results.save(str(path))
    with np.load(path, allow_pickle=False) as archive:  # a plain NumPy archive
        assert "__poly_meta__" in archive.files
    loaded = pc.RunResults.load(str(path))
    _assert_same_run(results, loaded)
    assert loaded["trt-runner"][0]["bf16"].dtype == np.dtype(ml_dtypes.bfloat16)


def test_run_results_npz_is_recognised_by_content(tmp_path):
    path = tmp_path / "results.bin"
    with open(path, "wb") as f:
        from poly.compare.io.npz_codec import run_results_to_npz

        run_results_to_npz(_make(pc), f)
    _assert_same_run(_make(pc), pc.RunResults.load(str(path)))


def test_split_concat_and_streaming(tmp_path):
    results = _make(pc)
    singles = list(results.split())
    assert len(singles) == 2 and all(len(s["onnxrt-runner"]) == 1 for s in singles)
    _assert_same_run(results, pc.RunResults.concat(singles))
    results.save(str(tmp_path / "all.json"))
    streamed = list(pc.RunResults.load_streaming(str(tmp_path / "all.json")))
    _assert_same_run(results, pc.RunResults.concat(streamed))


def _accuracy(module, compare_funcs, outputs0, outputs1):
    results = module.RunResults()
    results.append(("a", [module.IterationResult(outputs0, runner_name="a")]))
    results.append(("b", [module.IterationResult(outputs1, runner_name="b")]))
    return module.Comparator.compare_accuracy(results, compare_func=compare_funcs)


def _funcs(module, compare):
    return [
        compare.SimpleCompareFunc(atol=1e-3, check_error_stat="elemwise"),
        compare.SimpleCompareFunc(atol={"x": 0.1, "": 1e-6}, check_error_stat="quantile", error_quantile=0.9),
        compare.L2CompareFunc(l2_threshold=0.5),
        compare.CosineSimilarityCompareFunc(),
        compare.PsnrCompareFunc(),
        compare.SnrCompareFunc(),
    ]


def _verdicts(accuracy_results):
    return [
        [(pair, [{name: bool(r) for name, r in it.items()} for it in its]) for pair, its in result.items()]
        for result in accuracy_results
    ]


def _metric_values(accuracy_results):
    return [
        [{name: r.metric_values() for name, r in it.items()} for its in result.values() for it in its]
        for result in accuracy_results
    ]


OUT0 = OrderedDict(x=np.array([1.0, 2.0, 3.0], np.float32), y=np.array([[1.0, 0.5]], np.float32))
OUT1 = OrderedDict(x=np.array([1.05, 2.0, 3.0], np.float32), y=np.array([[1.0, 0.5]], np.float32))


def test_accuracy_results_from_polygraphy_load_in_poly(pg, tmp_path):
    theirs = _accuracy(pg.comparator, _funcs(pg.comparator, pg.compare), OUT0, OUT1)
    path = tmp_path / "accuracy.json"
    theirs.save(str(path))
    ours = pc.AccuracyResults.load(str(path))
    assert bool(ours) == bool(theirs) and len(ours) == len(theirs)
    assert _verdicts(ours) == _verdicts(theirs)
    assert _metric_values(ours) == _metric_values(theirs)
    assert ours[0].aggregation == "per_sample"
    # re-checking saved results against new thresholds, as `check accuracy` does
    ours.reevaluate([pc.SimpleThreshold("max", 0.1, 0.0)])
    assert bool(ours) and len(ours) == 1


def test_poly_accuracy_results_load_in_polygraphy(pg, tmp_path):
    ours = _accuracy(pc, _funcs(pc, pc), OUT0, OUT1)
    assert isinstance(ours, pc.AccuracyResults)
    path = tmp_path / "accuracy.json"
    ours.save(str(path))
    theirs = pg.comparator.AccuracyResults.load(str(path))
    assert _verdicts(theirs) == _verdicts(ours) and bool(theirs) == bool(ours)
    assert _metric_values(theirs) == _metric_values(ours)


def test_poly_and_polygraphy_accuracy_verdicts_agree(pg):
    ours = _accuracy(pc, _funcs(pc, pc), OUT0, OUT1)
    theirs = _accuracy(pg.comparator, _funcs(pg.comparator, pg.compare), OUT0, OUT1)
    assert _verdicts(ours) == _verdicts(theirs)


def test_single_accuracy_result_round_trip(tmp_path):
    result = _accuracy(pc, None, OUT0, OUT1)
    assert isinstance(result, pc.AccuracyResult) and not result
    path = tmp_path / "acc.json"
    result.save(str(path))
    loaded = pc.AccuracyResult.load(str(path))
    assert _verdicts([loaded]) == _verdicts([result])
    assert loaded.percentage(("a", "b")) == 0.0 and loaded.stats() == (0, 1, 1)
    assert isinstance(pc.AccuracyResults.load(str(path)), pc.AccuracyResults)


def _pickled_array_json():
    payload = base64.b64encode(pickle.dumps(np.array([object()], dtype=object))).decode()
    return json.dumps({"lst": [["r", [{"outputs": {"y": {"values": {"array": payload, "polygraphy_class": "ndarray"},
                                                          "polygraphy_class": "LazyArray"}},
                                        "runtime": None, "runner_name": "r", "polygraphy_class": "IterationResult"}]]],
                       "polygraphy_class": "RunResults"})


def test_loading_never_unpickles(tmp_path):
    path = tmp_path / "evil.json"
    path.write_text(_pickled_array_json())
    with pytest.raises(DataFormatError):
        pc.RunResults.load(str(path))
    buf = io.BytesIO()
    np.save(buf, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    payload = base64.b64encode(buf.getvalue()).decode()
    path.write_text(json.dumps([{"x": {"array": payload, "polygraphy_class": "ndarray"}}]))
    with pytest.raises(DataFormatError, match="allow_pickle=False"):
        pc.load_inputs(str(path))
    npz = tmp_path / "evil.npz"
    np.savez(npz, x=np.array([{"a": 1}], dtype=object))
    with pytest.raises(DataFormatError, match="allow_pickle=False"):
        pc.load_inputs(str(npz))


def test_saving_object_arrays_to_npz_is_refused(tmp_path):
    with pytest.raises(DataFormatError, match="object array"):
        pc.save_inputs([{"x": np.array([None], dtype=object)}], str(tmp_path / "x.npz"))


def test_inputs_json_from_polygraphy_and_concatenation(pg, tmp_path):
    from polygraphy.json import save_json as pg_save_json

    feeds = [OrderedDict(x=np.full((1, 2), i, np.float32), n=np.array([i], np.int64)) for i in range(3)]
    pg_save_json(feeds, str(tmp_path / "inputs.json"))
    pg_save_json(feeds[0], str(tmp_path / "single.json"))  # one feed dict, not a list
    pc.save_inputs(feeds[:2], str(tmp_path / "more.npz"))
    np.savez(tmp_path / "plain.npz", x=np.ones((1, 2), np.float32), n=np.array([7]))
    loaded = pc.load_inputs([str(tmp_path / p) for p in ("inputs.json", "single.json", "more.npz", "plain.npz")])
    assert len(loaded) == 3 + 1 + 2 + 1
    assert [float(f["x"][0, 0]) for f in loaded] == [0, 1, 2, 0, 0, 1, 1]
    assert loaded[-1]["n"].tolist() == [7]
    # poly's JSON loads in Polygraphy
    pc.save_inputs(feeds, str(tmp_path / "ours.json"))
    from polygraphy.json import load_json as pg_load_json

    theirs = pg_load_json(str(tmp_path / "ours.json"))
    assert all(np.array_equal(a["x"], b["x"]) for a, b in zip(theirs, feeds, strict=True))


def test_inputs_directory_of_iterations(tmp_path):
    from poly.compare.io.iteration_files import IterationWriter

    feeds = [OrderedDict(x=np.full(2, i, np.float32)) for i in range(12)]
    with IterationWriter(str(tmp_path / "dir"), description="inputs") as writer:
        for feed in feeds:
            writer.append(feed)
    assert sorted(os.listdir(tmp_path / "dir"))[:2] == ["0000000000.json", "0000000001.json"]
    loaded = list(pc.StreamingDataLoader(str(tmp_path / "dir")))
    assert [float(f["x"][0]) for f in loaded] == list(range(12))
    with pytest.raises(PolyException, match="not empty"):
        IterationWriter(str(tmp_path / "dir"))


def test_wrong_kind_of_file_is_a_clear_error(tmp_path):
    path = tmp_path / "outputs.json"
    _make(pc).save(str(path))
    with pytest.raises(PolyException, match="feed dict"):
        pc.load_inputs(str(path))
    pc.save_inputs([{"x": np.ones(2)}], str(tmp_path / "inputs.json"))
    with pytest.raises(PolyException, match="RunResults"):
        pc.RunResults.load(str(tmp_path / "inputs.json"))
    with pytest.raises(PolyException, match="does not exist"):
        pc.load_inputs(str(tmp_path / "missing.json"))


def test_lazy_arrays_swap_to_disk(monkeypatch):
    from poly.core import config

    monkeypatch.setattr(config, "ARRAY_SWAP_THRESHOLD_MB", 0)  # the env var is read at import
    arr = np.arange(1000, dtype=np.float32)
    result = pc.IterationResult({"y": arr}, runner_name="r")
    lazy = result.dct["y"]
    assert lazy.arr is None and os.path.exists(lazy.tmpfile)
    assert np.array_equal(result["y"], arr)
    assert np.array_equal(pickle.loads(pickle.dumps(lazy)).load(), arr)


def test_polygraphy_class_names_load_without_importing_poly_compare(tmp_path):
    """poly.core's JSON finds RunResults through the poly.json_types entry points. The workspace
    installs poly-compare, so a type it registers without an entry point is a packaging bug."""
    from importlib.metadata import entry_points

    from poly.core.json import Decoder

    declared = {ep.name: ep.value for ep in entry_points(group="poly.json_types")}
    # name in files -> the module whose import registers its decoder (legacy markers are found
    # under the plain name, so they need no entry point of their own)
    registered = {
        name: func.__wrapped__.__module__
        for name, func in Decoder.polygraphy_registered.items()
        if func.__wrapped__.__module__.startswith("poly.compare.") and not name.startswith("__polygraphy_encoded_")
    }
    assert {"RunResults", "IterationResult", "AccuracyResult", "AccuracyResults"} <= set(registered)
    wrong = {name: declared.get(name) for name, module in registered.items() if declared.get(name) != module}
    assert not wrong, f"poly-compare's poly.json_types entry points are missing or wrong: {wrong}"

    path = tmp_path / "outputs.json"
    _make(pc).save(str(path))
    code = (
        "import sys; from poly.core.json import load_json\n"
        "assert not [m for m in sys.modules if m.startswith('poly.compare')], 'poly.compare already imported'\n"
        f"r = load_json({str(path)!r})\n"
        "print(type(r).__module__, type(r).__name__)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["poly.compare.results", "RunResults"]


def test_npz_fast_reader_matches_numpy(tmp_path):
    """Uncompressed archives are parsed directly (the validation loader's hot path); what comes
    back must be what np.load gives, for every layout, and compressed archives still load."""
    from poly.compare.io.npz_codec import _read_stored_npz, load_npz

    rng = np.random.default_rng(3)
    arrays = {
        "f32": rng.standard_normal((2, 3, 4)).astype(np.float32),
        "fortran": np.asfortranarray(rng.standard_normal((5, 7))),
        "i8": np.arange(-5, 5, dtype=np.int8),
        "scalar": np.array(3.5, np.float16),
        "empty": np.zeros((0, 4), np.int64),
        "bool": rng.random(9) > 0.5,
        "text": np.array(["a", "bcd"]),
        "big_endian": np.arange(6, dtype=">u4").reshape(2, 3),
    }
    plain, packed = tmp_path / "plain.npz", tmp_path / "packed.npz"
    np.savez(plain, **arrays)
    np.savez_compressed(packed, **arrays)
    fast = _read_stored_npz(bytearray(plain.read_bytes()))
    assert fast is not None and _read_stored_npz(bytearray(packed.read_bytes())) is None  # compressed: zipfile's job
    for path in (plain, packed):
        meta, loaded = load_npz(path)
        assert meta is None and list(loaded) == list(arrays)
        for key, value in arrays.items():
            assert loaded[key].dtype == value.dtype and loaded[key].shape == value.shape
            np.testing.assert_array_equal(loaded[key], value)
    assert fast["fortran"].flags.f_contiguous and fast["f32"].flags.writeable


def test_npz_fast_reader_reads_the_zip_directory_as_zipfile_does(tmp_path):
    """The fast reader parses the archive's central directory itself: an archive comment (the
    directory's end record then not at the file's end), UTF-8 member names, members in any order,
    and a truncated or damaged archive reported as one DataFormatError naming the file."""
    import zipfile

    from poly.compare.io.npz_codec import _read_stored_npz, load_npz, load_npz_file

    arrays = {"résumé": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.array([True, False])}
    path = tmp_path / "commented.npz"
    np.savez(path, **arrays)
    with zipfile.ZipFile(path, "a") as archive:
        archive.comment = b"written by a tool that comments its archives"
    data = bytearray(path.read_bytes())
    fast = _read_stored_npz(data)
    assert fast is not None and list(fast) == list(arrays)  # (read here, not by zipfile)
    meta, loaded = load_npz_file(path)
    assert meta is None
    for key, value in arrays.items():
        np.testing.assert_array_equal(loaded[key], value)
    # a JSON file is not an archive: None, the file read once
    (tmp_path / "golden.json").write_text("{}")
    assert load_npz_file(tmp_path / "golden.json") is None
    with pytest.raises(FileNotFoundError):
        load_npz_file(tmp_path / "missing.npz")
    # bytes before the archive (as zipfile allows: the directory's offsets are then off by them)
    (tmp_path / "prefixed.npz").write_bytes(b"\0" * 7 + bytes(data))
    np.testing.assert_array_equal(load_npz(tmp_path / "prefixed.npz")[1]["b"], arrays["b"])
    # the directory cut short, a member's local header overwritten: one error, never a traceback
    overwritten = bytearray(data)
    overwritten[:4] = b"XXXX"
    for name, damaged in (("truncated.npz", data[:len(data) // 2]), ("overwritten.npz", overwritten)):
        (tmp_path / name).write_bytes(bytes(damaged))
        with pytest.raises(DataFormatError, match=name):
            load_npz(tmp_path / name)


def test_npz_fast_reader_refuses_object_arrays(tmp_path):
    from poly.compare.io.npz_codec import load_npz

    path = tmp_path / "objects.npz"
    np.savez(path, x=np.array([{"a": 1}, None], dtype=object))
    with pytest.raises(DataFormatError, match="objects.npz.*pickle"):
        load_npz(path)
