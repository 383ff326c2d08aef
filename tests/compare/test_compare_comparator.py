"""Comparator.run / compare_accuracy / validate / postprocess: with NumPy runners, with the ONNX
runners on fixture models, and against Polygraphy's logs and verdicts."""

from __future__ import annotations

import json
from collections import OrderedDict

import numpy as np
import pytest

import poly.compare as pc
from poly.core import G_LOGGER, PolyException

X_META = {"x": (np.float32, (2, 3))}


def _double(feed):
    return {"y": feed["x"] * 2}


def test_run_feeds_every_runner_the_same_inputs(h, tmp_path):
    seen = []

    def record(feed):
        seen.append(feed["x"].copy())
        return {"y": feed["x"] + 1}

    runners = [h.NumpyRunner(record, X_META, name=f"r{i}") for i in range(3)]
    results = pc.Comparator.run(runners, data_loader=pc.DataLoader(iterations=2, seed=5),
                                save_inputs_path=str(tmp_path / "inputs.json"))
    assert list(results.keys()) == ["r0", "r1", "r2"] and all(len(its) == 2 for _, its in results)
    assert all(np.array_equal(seen[i], seen[i + 2 * k]) for k in range(3) for i in range(2))
    saved = pc.load_inputs(str(tmp_path / "inputs.json"))
    assert [np.array_equal(s["x"], seen[i]) for i, s in enumerate(saved)] == [True, True]
    assert results["r1"][1].runner_name == "r1" and results["r1"][1].runtime is not None


def test_outputs_are_not_aliased_between_iterations(h):
    runner = h.NumpyRunner(_double, X_META, name="reuser", reuse=True)
    results = pc.Comparator.run([runner], data_loader=pc.DataLoader(iterations=3))
    values = [it["y"] for it in results["reuser"]]
    assert not np.array_equal(values[0], values[1]) and not np.array_equal(values[1], values[2])
    assert not any(np.shares_memory(values[i], values[j]) for i in range(3) for j in range(i + 1, 3))


def test_outputs_that_alias_inputs_are_copied(h):
    data = [{"x": np.ones((2, 3), np.float32)}]
    identity = h.NumpyRunner(lambda feed: {"y": feed["x"]}, X_META, name="identity")
    results = pc.Comparator.run([identity], data_loader=data)
    assert not np.shares_memory(results["identity"][0]["y"], data[0]["x"])


def test_outputs_that_alias_earlier_outputs_are_copied_and_only_those(h):
    # A runner handing out views of one buffer: an output overlapping one kept before it (a slice,
    # a reversed view) is copied; one in its own part of the buffer, or empty, is kept as it is.
    buf = np.arange(16, dtype=np.float32)
    views = {"a": buf[0:4], "b": buf[2:6], "c": buf[6:8], "d": buf[::-1], "e": buf[8:8], "f": buf[9:12:2],
             "g": buf[10:11]}
    runner = h.NumpyRunner(lambda feed: dict(views), X_META, name="views")
    out = pc.Comparator.run([runner], data_loader=[{"x": np.zeros((2, 3), np.float32)}])["views"][0]
    kept_as_is = {name for name in views if np.shares_memory(out[name], buf)}
    assert kept_as_is == {"a", "c", "f"}, kept_as_is  # (g lies between two of f's elements: within its bounds)
    assert all(np.array_equal(out[name], views[name]) for name in views)


@pytest.mark.parametrize("dest", ["inputs.json", "inputs.npz", "inputs_dir"])
def test_save_inputs_path_formats(h, tmp_path, dest):
    runner = h.NumpyRunner(_double, X_META, name="r")
    loader = pc.DataLoader(iterations=3)
    pc.Comparator.run([runner], data_loader=loader, save_inputs_path=str(tmp_path / dest),
                      save_outputs_path=str(tmp_path / ("out_" + dest)))
    saved = pc.load_inputs(str(tmp_path / dest))
    from poly.core import TensorMetadata

    loader.input_metadata = TensorMetadata().add("x", np.float32, (2, 3))
    assert len(saved) == 3 and all(np.array_equal(saved[i]["x"], loader[i]["x"]) for i in range(3))
    outputs = pc.RunResults.concat(pc.RunResults.load_streaming(str(tmp_path / ("out_" + dest))))
    assert [float(it["y"][0, 0]) for it in outputs["r"]] == [float(saved[i]["x"][0, 0] * 2) for i in range(3)]


def test_save_inputs_json_loads_in_polygraphy(pg, h, tmp_path):
    from polygraphy.json import load_json

    pc.Comparator.run([h.NumpyRunner(_double, X_META, name="r")], save_inputs_path=str(tmp_path / "in.json"))
    loaded = load_json(str(tmp_path / "in.json"))
    assert isinstance(loaded, list) and loaded[0]["x"].shape == (2, 3)


def test_same_path_for_inputs_and_outputs_is_refused(h, tmp_path):
    with pytest.raises(PolyException, match="same path"):
        pc.Comparator.run([h.NumpyRunner(_double, X_META)], save_inputs_path=str(tmp_path / "a.json"),
                          save_outputs_path=str(tmp_path / "a.json"))


def test_warm_up_streaming_and_subprocess(h):
    calls = []

    def count(feed):
        calls.append(1)
        return {"y": feed["x"] * 2}

    results = pc.Comparator.run([h.NumpyRunner(count, X_META, name="w")], warm_up=2)
    assert len(calls) == 3 and len(results["w"]) == 1
    stream = pc.Comparator.run([h.NumpyRunner(_double, X_META, name="a"), h.NumpyRunner(_double, X_META, name="b")],
                               data_loader=pc.DataLoader(iterations=3), streaming=True)
    accuracy = pc.Comparator.compare_accuracy(stream)
    assert accuracy and accuracy.stats(("a", "b")) == (3, 0, 3)
    sub = pc.Comparator.run([h.NumpyRunner(_double, X_META, name="s")], use_subprocess=True)
    assert sub["s"][0]["y"].shape == (2, 3)


def _three_runners(h):
    return [
        h.NumpyRunner(_double, X_META, name="ref"),
        h.NumpyRunner(lambda f: {"y": f["x"] * 2 + 1e-7}, X_META, name="close"),
        h.NumpyRunner(lambda f: {"y": f["x"] * 3}, X_META, name="far"),
    ]


def test_compare_accuracy_pairs_and_pass_rates(h, capsys):
    results = pc.Comparator.run(_three_runners(h), data_loader=pc.DataLoader(iterations=2))
    accuracy = pc.Comparator.compare_accuracy(results)
    assert list(accuracy.keys()) == [("ref", "close"), ("ref", "far")]  # every runner against the first
    assert accuracy.pass_rates() == {("ref", "close"): 1.0, ("ref", "far"): 0.0}
    assert accuracy.stats(("ref", "far")) == (0, 2, 2) and not accuracy
    out = capsys.readouterr().out
    assert "[I] Accuracy Summary | ref vs. close | Passed: 2/2 iterations | Pass Rate: 100.00%" in out
    assert "[E] Accuracy Summary | ref vs. far | Passed: 0/2 iterations | Pass Rate: 0.00%" in out
    chosen = pc.Comparator.compare_accuracy(results, comparisons=[(1, 0)])
    assert list(chosen.keys()) == [("close", "ref")] and chosen


def test_compare_accuracy_fail_fast_stops_after_first_failing_iteration(h, capsys):
    results = pc.Comparator.run(_three_runners(h), data_loader=pc.DataLoader(iterations=3))
    accuracy = pc.Comparator.compare_accuracy(results, fail_fast=True)
    assert [len(accuracy[pair]) for pair in accuracy.keys()] == [1, 1]
    assert "Accuracy Summary" not in capsys.readouterr().out


def test_compare_accuracy_with_several_functions(h):
    results = pc.Comparator.run(_three_runners(h)[:2])
    accuracy = pc.Comparator.compare_accuracy(
        results, compare_func=[pc.CompareFunc.simple(), pc.CompareFunc.l2(l2_threshold=1e-3), pc.CompareFunc.indices()]
    )
    assert isinstance(accuracy, pc.AccuracyResults) and len(accuracy) == 3
    assert [bool(r) for r in accuracy] == [True, True, False] and not accuracy


def test_compare_accuracy_check_average(h, capsys):
    results = pc.Comparator.run(_three_runners(h)[:2], data_loader=pc.DataLoader(iterations=2))
    accuracy = pc.Comparator.compare_accuracy(results, compare_func=pc.CompareFunc.l2(l2_threshold=1e-3),
                                              check_average=True)
    assert accuracy.aggregation == "average" and accuracy
    assert "Passed: 1/1 outputs" in capsys.readouterr().out
    with pytest.raises(PolyException, match="elemwise"):
        pc.Comparator.compare_accuracy(results, check_average=True)
    with pytest.raises(PolyException, match="fail_fast"):
        pc.Comparator.compare_accuracy(results, compare_func=pc.CompareFunc.l2(), check_average=True, fail_fast=True)


def test_compare_accuracy_matches_names_then_positions(h, capsys):
    ref = h.NumpyRunner(lambda f: OrderedDict(logits=f["x"], boxes=f["x"] + 1), X_META, name="a")
    other = h.NumpyRunner(lambda f: OrderedDict([("Logits:0", f["x"]), ("out_1", f["x"] + 1)]), X_META, name="b")
    accuracy = pc.Comparator.compare_accuracy(pc.Comparator.run([ref, other]))
    assert accuracy
    it = accuracy[("a", "b")][0]
    assert [(name, r.output1_name) for name, r in it.items()] == [("logits", "Logits:0"), ("boxes", "out_1")]
    assert "Output names did not match exactly" in capsys.readouterr().out


def test_validate_nan_and_inf(h):
    results = h.run_results(pc, {"r": [{"ok": np.ones(3, np.float32), "nan": np.array([1, np.nan], np.float32),
                                        "inf": np.array([np.inf, 1], np.float32)}]})
    assert not pc.Comparator.validate(results)  # NaN checked by default
    assert pc.Comparator.validate(results, check_nan=False)
    assert not pc.Comparator.validate(results, check_nan=False, check_inf=True)
    clean = h.run_results(pc, {"r": [{"ok": np.ones(3, np.float32), "ints": np.arange(3)}]})
    assert pc.Comparator.validate(clean, check_inf=True)


def test_validate_logs_match_polygraphy(pg, h, capsys):
    outputs = {"r": [{"ok": np.linspace(0, 1, 7, dtype=np.float32), "nan": np.array([1, np.nan], np.float32),
                      "inf": np.array([np.inf, 1, 2], np.float32), "flags": np.array([True, False])}]}
    for check_inf in (False, True):
        pg.logger.once_logged.clear()
        G_LOGGER.once_logged.clear()
        theirs = pg.comparator.Comparator.validate(h.run_results(pg.comparator, outputs), check_inf=check_inf)
        expected = capsys.readouterr().out
        ours = pc.Comparator.validate(h.run_results(pc, outputs), check_inf=check_inf)
        actual = capsys.readouterr().out
        assert ours == theirs
        # NumPy's quantiles of data holding infinities are NaN; the native ones are exact
        h.assert_logs_match(expected, actual, ignore=[r"mean=inf"])


def test_postprocess_top_k_matches_polygraphy(pg, h):
    rng = np.random.default_rng(0)
    outputs = {"scores": rng.random((2, 10)).astype(np.float32), "ties": np.array([[1, 3, 3, 2, 3]], np.int64),
               "keep": rng.random(4).astype(np.float32)}
    for k in (3, (2, 0), {"scores": 4, "ties": (5, -1)}, {"": 2}, 100):
        ours = pc.Comparator.postprocess(h.run_results(pc, {"r": [outputs]}), pc.PostprocessFunc.top_k(k))
        theirs = pg.comparator.Comparator.postprocess(
            h.run_results(pg.comparator, {"r": [outputs]}), pg.postprocess.PostprocessFunc.top_k(k)
        )
        a, b = ours["r"][0], theirs["r"][0]
        assert list(a.keys()) == list(b.keys())
        assert all(np.array_equal(a[n], b[n]) for n in a.keys())


def test_top_k_handles_unsigned_and_bool():
    result = pc.IterationResult({"u": np.array([3, 0, 250, 7], np.uint8), "b": np.array([False, True, True])})
    pc.PostprocessFunc.top_k(2)(result)
    assert result["u"].tolist() == [2, 3] and result["b"].tolist() == [1, 2]


class _PgRunner:
    """Builds a Polygraphy runner equivalent to conftest's NumpyRunner."""

    @staticmethod
    def make(fn, inputs, name):
        from polygraphy.backend.base import BaseRunner
        from polygraphy.common import TensorMetadata

        class Runner(BaseRunner):
            def get_input_metadata_impl(self):
                meta = TensorMetadata()
                for input_name, (dtype, shape) in inputs.items():
                    meta.add(input_name, dtype, shape)
                return meta

            def infer_impl(self, feed_dict):
                self.inference_time = 1e-3
                return fn(feed_dict)

        return Runner(name=name)


def test_run_and_compare_logs_match_polygraphy(pg, h, capsys):
    fns = [("ref", _double), ("other", lambda f: {"y": f["x"] * 2 + np.float32(1e-3)})]
    loader_options = dict(iterations=2, seed=3)
    pg.logger.once_logged.clear()
    pg_results = pg.comparator.Comparator.run([_PgRunner.make(fn, X_META, name) for name, fn in fns],
                                              data_loader=pg.data_loader.DataLoader(**loader_options))
    pg.comparator.Comparator.compare_accuracy(pg_results)
    expected = capsys.readouterr().out
    G_LOGGER.once_logged.clear()
    results = pc.Comparator.run([h.NumpyRunner(fn, X_META, name=name) for name, fn in fns],
                                data_loader=pc.DataLoader(**loader_options))
    pc.Comparator.compare_accuracy(results)
    actual = capsys.readouterr().out
    h.assert_logs_match(expected, actual, rel=1e-3, ignore=[r" ms"])


def _onnx_runners(model, names=("onnxrt", "onnx-ref")):
    # Imported without a skip: the dev environment always installs poly-onnx and onnxruntime,
    # so a runner that cannot be imported is a broken install and must fail these tests.
    from poly.onnx.runners.onnxrt_runner import OnnxrtRunner
    from poly.onnx.runners.ref_runner import OnnxRefRunner
    from poly.onnx.runners.session import SessionFromOnnx

    return [OnnxrtRunner(SessionFromOnnx(model.SerializeToString()), name=names[0]), OnnxRefRunner(model, name=names[1])]


@pytest.mark.parametrize("builder", ["identity", "multi_output", "branches", "mlp"])
def test_onnx_runners_agree_on_fixture_models(builder, tmp_path):
    from fixtures import onnx_models

    model = getattr(onnx_models, builder)()
    results = pc.Comparator.run(_onnx_runners(model), data_loader=pc.DataLoader(iterations=2),
                                save_inputs_path=str(tmp_path / "inputs.json"))
    accuracy = pc.Comparator.compare_accuracy(results, compare_func=pc.CompareFunc.simple(atol=1e-5, rtol=1e-5))
    assert accuracy and accuracy.percentage() == 1.0
    assert len(pc.load_inputs(str(tmp_path / "inputs.json"))) == 2
    assert pc.Comparator.validate(results, check_inf=True)


def test_onnx_dynamic_shapes_and_saved_results(tmp_path):
    from fixtures import onnx_models

    from poly.core import TensorMetadata

    model = onnx_models.dynamic_identity()
    loader = pc.DataLoader(input_metadata=TensorMetadata().add("X", None, (2, 1, 3, 5)))
    results = pc.Comparator.run(_onnx_runners(model), data_loader=loader)
    assert results["onnxrt"][0]["Y"].shape == (2, 1, 3, 5)
    results.save(str(tmp_path / "out.json"))
    reloaded = pc.RunResults.load(str(tmp_path / "out.json"))
    assert pc.Comparator.compare_accuracy(reloaded)
    assert json.loads((tmp_path / "out.json").read_text())["polygraphy_class"] == "RunResults"


def test_polygraphy_import_paths():
    import poly.comparator as comparator
    from poly.comparator.compare import SimpleCompareFunc
    from poly.comparator.data_loader import DataLoader
    from poly.comparator.postprocess import TopKPostprocessFunc
    from poly.comparator.struct import AccuracyResult, RunResults

    assert comparator.Comparator is pc.Comparator and comparator.CompareFunc is pc.CompareFunc
    assert (SimpleCompareFunc, DataLoader, TopKPostprocessFunc, AccuracyResult, RunResults) == (
        pc.SimpleCompareFunc, pc.DataLoader, pc.TopKPostprocessFunc, pc.AccuracyResult, pc.RunResults)
