"""`poly run --gen-script`: the generated script, run in a subprocess, gives the results and the
verdict `poly run` gives for the same flags; `-` prints it; a flag the generator cannot
translate ends the command with one line naming it."""

from __future__ import annotations

import copy
import inspect
import re
import subprocess
import sys
import textwrap

import click
import numpy as np
import pytest
from click.testing import CliRunner
from fixtures.cli_helpers import run_poly
from fixtures.trt_double import tensorrt_double  # noqa: F401 (a fixture of the --int8 test)

from poly.compare import RunResults


def _run_script(path, cwd):
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True, cwd=cwd, timeout=120)


def _same_results(a, b):
    ours, theirs = RunResults.load(str(a)), RunResults.load(str(b))
    # runner names end with the time they ran: compare the runner part
    assert [name.rsplit("-N", 1)[0] for name, _ in ours] == [name.rsplit("-N", 1)[0] for name, _ in theirs]
    for (_, iters_a), (_, iters_b) in zip(ours, theirs, strict=True):
        assert len(iters_a) == len(iters_b)
        for it_a, it_b in zip(iters_a, iters_b, strict=True):
            assert sorted(it_a.keys()) == sorted(it_b.keys())
            for key in it_a.keys():
                np.testing.assert_array_equal(np.asarray(it_a[key]), np.asarray(it_b[key]))


def _compare_with_run(models_or_path, flags, tmp_path, expect_rc):
    """Runs `poly run` with ``flags`` (+ --save-outputs), generates the script of the same
    command line (+ another --save-outputs), runs it; same results, same exit status."""
    for name in ("direct.json", "script.json", "gen.py"):
        (tmp_path / name).unlink(missing_ok=True)
    direct = run_poly("run", *flags, "--save-outputs", tmp_path / "direct.json", cwd=tmp_path)
    assert direct.returncode == expect_rc, direct.stdout + direct.stderr
    gen = run_poly("run", *flags, "--save-outputs", tmp_path / "script.json", "--gen-script",
                  tmp_path / "gen.py", cwd=tmp_path)
    assert gen.returncode == 0, gen.stdout + gen.stderr
    assert not (tmp_path / "script.json").exists()  # generating runs nothing
    script = _run_script(tmp_path / "gen.py", tmp_path)
    assert script.returncode == expect_rc, script.stdout + script.stderr
    _same_results(tmp_path / "direct.json", tmp_path / "script.json")
    verdict = "PASSED" if expect_rc == 0 else "FAILED"
    assert f"{verdict} | Runtime" in (direct.stdout + direct.stderr)
    assert f"{verdict} | Runtime" in (script.stdout + script.stderr)
    return (tmp_path / "gen.py").read_text(), script


@pytest.mark.slow
def test_two_backends_mark_all_and_synthetic_data(models, tmp_path):
    text, script = _compare_with_run(models, [
        models["multi"], "--onnxrt", "--onnx-ref", "--onnx-outputs", "mark", "all", "--seed", "7",
        "--val-range", "[-2,2]", "x:[-1,3]", "--iterations", "3", "--atol", "1e-5", "--rtol", "1e-5",
        "--check-error-stat", "median", "--check-average", "--validate"], tmp_path, 0)
    assert "ModifyOutputs(OnnxFromPath(" in text and "outputs=MARK_ALL" in text
    assert "DataLoader(seed=7, iterations=3, val_range={'': (-2, 2), 'x': (-1, 3)}, strict=True)" in text
    assert "CompareFunc.simple(rtol=1e-05, atol=1e-05, check_error_stat='median')" in text
    assert "Comparator.validate(results, check_inf=True, check_nan=True)" in text
    assert "check_average=True" in text
    assert "PASSED | simple | All outputs matched" in script.stdout + script.stderr


@pytest.mark.slow
def test_failing_comparison_against_loaded_outputs_fails_the_same(models, tmp_path):
    golden = tmp_path / "golden.json"
    assert run_poly("run", models["mlp"], "--onnxrt", "--seed", "3", "--save-outputs", golden).returncode == 0
    text, _ = _compare_with_run(models, [models["mlp"], "--onnxrt", "--load-outputs", golden, "--atol", "0",
                                         "--rtol", "0", "--compare-func", "l2", "--l2-threshold", "1e-9", "--fail-fast"],
                                tmp_path, 1)
    assert "RunResults.load(path)" in text and "CompareFunc.l2(fail_fast=True, l2_threshold=1e-09)" in text


@pytest.mark.slow
def test_dynamic_shapes_inputs_files_and_shape_inference(models, tmp_path):
    inputs = tmp_path / "inputs.json"
    assert run_poly("run", models["dynamic"], "--onnxrt", "--input-shapes", "X:[2,1,3,5]",
                   "--save-inputs", inputs).returncode == 0
    text, _ = _compare_with_run(models, [models["dynamic"], "--onnxrt", "--onnx-ref", "--shape-inference",
                                         "--input-shapes", "X:[1,1,4,4]", "--providers", "cpu"], tmp_path, 0)
    assert "input_metadata.add('X', dtype=None, shape=[1, 1, 4, 4])" in text
    assert "InferShapes(OnnxFromPath(" in text and "providers=['cpu']" in text
    text, _ = _compare_with_run(models, [models["dynamic"], "--onnxrt", "--load-inputs", inputs], tmp_path, 0)
    assert f"data_loader = load_inputs([{str(inputs)!r}])" in text
    assert RunResults.load(str(tmp_path / "script.json"))[0][1][0]["Y"].shape == (2, 1, 3, 5)


@pytest.mark.slow
def test_data_loader_script_and_several_compare_funcs(models, tmp_path):
    (tmp_path / "data.py").write_text(textwrap.dedent("""
        import numpy as np

        def make():
            for i in range(2):
                yield {"x": np.full((1, 1, 2, 2), i + 0.5, dtype=np.float32)}
    """))
    text, _ = _compare_with_run(models, [models["identity"], "--onnxrt", "--onnx-ref",
                                         "--data-loader-script", f"{tmp_path / 'data.py'}:make",
                                         "--compare", "simple", "indices", "--check-error-stat", "mean"],
                                tmp_path, 0)
    assert f"DataLoaderFromScript({str(tmp_path / 'data.py') + ':make'!r})" in text
    assert "compare_func = [CompareFunc.simple(check_error_stat='mean'), CompareFunc.indices()]" in text
    results = RunResults.load(str(tmp_path / "script.json"))
    assert [float(it["y"].ravel()[0]) for it in results[0][1]] == [0.5, 1.5]


def test_dash_prints_the_script(poly, models):
    result = poly("run", models["identity"], "--onnxrt", "--gen-script", "-")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("#!/usr/bin/env python3\n")
    compile(result.output, "gen.py", "exec")
    assert "OnnxrtRunner(session)" in result.output and "RUNNING" not in result.output


def test_trt_flags_become_the_builder_config(poly, models, tmp_path):
    out = tmp_path / "trt.py"
    result = poly("run", models["dynamic"], "--trt", "--onnxrt", "--trt-outputs", "mark", "all",
                  "--trt-min-shapes", "X:[1,1,2,2]", "--trt-opt-shapes", "X:[1,1,4,4]", "--trt-max-shapes", "X:[2,1,8,8]",
                  "--builder-optimization-level", "1", "--pool-limit", "workspace:16M", "--tf32",
                  "--save-engine", tmp_path / "m.engine", "--save-timing-cache", tmp_path / "t.cache", "--gen", out)
    assert result.exit_code == 0, result.output
    text = out.read_text()
    assert "ModifyNetworkOutputs(NetworkFromOnnxPath(" in text and "outputs=MARK_ALL" in text
    assert "Profile().add('X', min=[1, 1, 2, 2], opt=[1, 1, 4, 4], max=[2, 1, 8, 8])," in text
    assert ("config = CreateConfig(tf32=True, profiles=profiles, memory_pool_limits={'workspace': 16777216}, "
            "builder_optimization_level=1)") in text
    assert f"save_timing_cache={str(tmp_path / 't.cache')!r}), {str(tmp_path / 'm.engine')!r})" in text
    assert "TrtRunner(EngineFromBytes(engine_bytes))" in text
    compile(text, str(out), "exec")


@pytest.mark.slow
def test_trt_script_builds_the_engine_as_run_does(models, tmp_path):
    try:
        from poly.trt.tensorrt_module import trt

        trt.load()
    except Exception as err:
        pytest.skip(f"no TensorRT flavour is installed ({err}): building an engine needs TensorRT or TensorRT-RTX")
    flags = [models["dynamic"], "--trt", "--builder-optimization-level", "0", "--input-shapes", "X:[1,1,4,4]",
             "--refittable", "--max-aux-streams", "0", "--runtime-platform", "same_as_build",
             "--tiling-optimization-level", "none", "--pool-limit", "workspace:16M", "--onnx-flags",
             "native_instancenorm", "--trt-outputs", "Y", "--fp-to-fp16", "--optimization-profile", "0",
             "--allocation-strategy", "static"]
    direct = run_poly("run", *flags, "--save-engine", tmp_path / "direct.engine", cwd=tmp_path)
    assert run_poly("run", *flags, "--save-engine", tmp_path / "script.engine", "--gen-script",
                   tmp_path / "gen.py", cwd=tmp_path).returncode == 0
    script = _run_script(tmp_path / "gen.py", tmp_path)
    assert script.returncode == direct.returncode
    # built (and saved) before running it; where the engine cannot run here both stop; same build, same bytes
    direct_engine, script_engine = (tmp_path / "direct.engine").read_bytes(), (tmp_path / "script.engine").read_bytes()
    assert direct_engine and script_engine == direct_engine
    # (and the flags matter: without --refittable and --fp-to-fp16 the engine differs)
    plain = [flag for flag in flags if flag not in ("--refittable", "--fp-to-fp16")]
    assert run_poly("run", *plain, "--save-engine", tmp_path / "plain.engine", cwd=tmp_path).returncode == \
        direct.returncode
    assert (tmp_path / "plain.engine").read_bytes() != direct_engine


def test_a_flag_the_generator_cannot_translate_is_one_line_naming_it(models, tmp_path):
    from poly.cli.commands.run import run

    # A `poly run` with one more flag, as a newly added flag would be.
    extended = copy.copy(run)
    extended.params = [*run.params, click.Option(["--future-flag"], is_flag=True, help="A flag added later.")]
    result = CliRunner().invoke(extended, [models["identity"], "--onnxrt", "--future-flag", "--gen-script",
                                           str(tmp_path / "gen.py")], standalone_mode=False)
    assert result.return_value == 1  # the exit status `poly` ends with
    (line,) = result.stderr.strip().splitlines()
    assert "--gen-script cannot translate --future-flag" in line
    assert not (tmp_path / "gen.py").exists()
    # without --gen-script the flag does not get in the way
    assert CliRunner().invoke(extended, [models["identity"], "--onnxrt", "--future-flag"],
                              standalone_mode=False).return_value == 0


# ---- every flag: the script makes the loaders, runners and Comparator.run call the command makes ----

def _normalized(value):
    """Strings without what differs from one process or run to the next: a runner's
    `-N<count>-<time>` name suffix, the temporary directory of the model TensorRT's parser reads."""
    value = re.sub(r"-N\d+-\S+$", "", value)
    return re.sub(r"poly-trt-onnx-[^/]+", "poly-trt-onnx-TMP", value)


def _assert_same_structure(ours, theirs, where="runners"):
    """``ours`` and ``theirs`` are made of the same loaders and runners (same classes), with the
    same arguments (their attributes, compared recursively)."""
    # (by name: a Calibrator's class is made per TensorRT base class)
    kinds = [(type(value).__module__, type(value).__qualname__) for value in (ours, theirs)]
    assert kinds[0] == kinds[1], f"{where}: {kinds[0]} != {kinds[1]}"
    if isinstance(ours, (list, tuple)):
        assert len(ours) == len(theirs), f"{where}: {ours!r} != {theirs!r}"
        for index, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            _assert_same_structure(a, b, f"{where}[{index}]")
    elif isinstance(ours, dict):
        assert list(ours) == list(theirs), f"{where}: {list(ours)} != {list(theirs)}"
        for key in ours:
            _assert_same_structure(ours[key], theirs[key], f"{where}[{key!r}]")
    elif inspect.ismethod(ours):  # a loader's own method: the loader itself is being compared
        assert ours.__func__ is theirs.__func__, f"{where}: {ours!r} != {theirs!r}"
    elif isinstance(ours, str):
        assert _normalized(ours) == _normalized(theirs), f"{where}: {ours!r} != {theirs!r}"
    elif type(ours).__module__.startswith("poly.") and hasattr(ours, "__dict__"):
        _assert_same_structure(vars(ours), vars(theirs), f"{where}<{type(ours).__name__}>")
    else:
        assert ours == theirs, f"{where}: {ours!r} != {theirs!r}"


def _captured_run(monkeypatch, target):
    """Runs ``target()`` with ``Comparator.run`` replaced by a recorder (nothing is inferred);
    returns the (runners, keyword arguments) it was called with."""
    from poly.compare import Comparator

    calls = []

    def record(runners, **kwargs):
        calls.append((list(runners), kwargs))
        return RunResults()

    with monkeypatch.context() as patch:
        patch.setattr(Comparator, "run", staticmethod(record))
        target()
    (call,) = calls
    return call


def _assert_script_makes_the_same_run(monkeypatch, tmp_path, args):
    """`poly run ARGS` and the script `poly run ARGS --gen-script` writes call Comparator.run
    with the same runners (loader by loader, argument by argument) and the same arguments."""
    import runpy

    from poly.cli.commands.run import run

    monkeypatch.chdir(tmp_path)
    args = [str(arg) for arg in args]
    gen = CliRunner().invoke(run, [*args, "--gen-script", str(tmp_path / "gen.py")], standalone_mode=False)
    assert gen.return_value == 0, gen.output
    def run_command():
        result = CliRunner().invoke(run, args, standalone_mode=False)
        assert result.exception is None and "RUNNING" in result.output, result.output

    command = _captured_run(monkeypatch, run_command)

    def run_script():
        with pytest.raises(SystemExit):
            runpy.run_path(str(tmp_path / "gen.py"), run_name="__main__")

    script = _captured_run(monkeypatch, run_script)
    _assert_same_structure(script[0], command[0])
    # (the script leaves out the arguments that are None: their defaults)
    given = {key: value for key, value in command[1].items() if value is not None}
    _assert_same_structure(dict(sorted(script[1].items())), dict(sorted(given.items())), "Comparator.run arguments")
    return (tmp_path / "gen.py").read_text(), command


def test_every_run_flag_is_translated():
    """A flag added to `poly run` without its translation fails here (and, given with
    --gen-script, ends the command with one line naming it)."""
    from poly.cli.commands.run import run
    from poly.cli.gen_script.run_script import TRANSLATED_FLAGS

    params = {param.name for param in run.params}
    assert sorted(params - TRANSLATED_FLAGS) == []
    assert sorted(TRANSLATED_FLAGS - params) == ["help"]  # click adds --help itself


def test_trt_builder_flags_make_the_same_create_config(monkeypatch, models, tmp_path):
    for name in ("tactics.json", "cache.bin", "runtime.so", "plugin.so"):
        (tmp_path / name).write_bytes(b"")
    (tmp_path / "post.py").write_text("def postprocess(network):\n    pass\n\ndef fix(network):\n    pass\n")
    text, (runners, _) = _assert_script_makes_the_same_run(monkeypatch, tmp_path, [
        models["dynamic"], "--trt", "--input-shapes", "X:[1,1,4,4]", "--trt-min-shapes", "X:[1,1,2,2]",
        "--trt-opt-shapes", "X:[1,1,4,4]", "--trt-max-shapes", "X:[2,1,8,8]", "--fp16", "--bf16",
        "--calibration-cache", tmp_path / "cal.cache", "--calib-base-cls", "IInt8MinMaxCalibrator",
        "--precision-constraints", "obey", "--load-timing-cache", tmp_path / "cache.bin", "--pool-limit",
        "workspace:1M", "--builder-optimization-level", "2", "--profiling-verbosity", "detailed",
        "--sparse-weights", "--version-compatible",
        "--exclude-lean-runtime", "--error-on-timing-cache-miss", "--disable-compilation-cache",
        "--tactic-sources", "--refittable", "--strip-plan", "--use-dla", "--allow-gpu-fallback",
        "--preview-features", "--max-aux-streams", "2", "--quantization-flags", "calibrate_before_fusion",
        "--weight-streaming", "--runtime-platform", "same_as_build", "--tiling-optimization-level", "fast",
        "--plugins", tmp_path / "plugin.so", "--onnx-flags", "native_instancenorm", "--plugin-instancenorm",
        "--trt-outputs", "Y", "--trt-exclude-outputs", "Z", "--layer-precisions", "identity:float16",
        "--tensor-dtypes", "X:float32", "--mark-debug", "Y", "--mark-unfused-tensors-as-debug-tensors",
        "--trt-npps", tmp_path / "post.py", f"{tmp_path / 'post.py'}:fix", "--trt-cpps", tmp_path / "post.py",
        "--load-runtime", tmp_path / "runtime.so", "--optimization-profile", "0", "--allocation-strategy",
        "runtime", "--weight-streaming-budget", "50%", "--warm-up", "3", "--use-subprocess",
        "--save-engine", tmp_path / "m.engine", "--save-timing-cache", tmp_path / "t.cache"])
    assert "LoadPlugins([" in text and "SetLayerPrecisions(" in text and "PostprocessConfig(config" in text
    assert "warm_up=3, use_subprocess=True" in text


@pytest.mark.usefixtures("tensorrt_double")
def test_int8_calibrator_is_the_same_with_full_tensorrt(monkeypatch, models, tmp_path):
    # TensorRT-RTX has no INT8 calibrator classes: the TensorRT double has them, as full TensorRT does
    text, (runners, kwargs) = _assert_script_makes_the_same_run(monkeypatch, tmp_path, [
        models["identity"], "--trt", "--int8", "--calibration-cache", tmp_path / "cal.cache",
        "--calibration-base-class", "IInt8MinMaxCalibrator", "--seed", "5", "--iterations", "2"])
    assert "calibrator=Calibrator(data_loader, cache=" in text and "algo='minmax'" in text


def test_network_script_model_and_config_script(monkeypatch, tmp_path):
    (tmp_path / "net.py").write_text("def make():\n    pass\n\ndef load_network():\n    pass\n")
    (tmp_path / "cfg.py").write_text("def load_config(builder, network):\n    pass\n\n"
                                     "def my_config(builder, network):\n    pass\n")
    text, _ = _assert_script_makes_the_same_run(monkeypatch, tmp_path, [
        f"{tmp_path / 'net.py'}:make", "--trt", "--trt-config-script", tmp_path / "cfg.py",
        "--trt-config-func-name", "my_config", "--fp16"])
    assert f"network = InvokeFromScript({str(tmp_path / 'net.py')!r}, 'make')" in text
    assert f"config = InvokeFromScript({str(tmp_path / 'cfg.py')!r}, 'my_config')" in text
    assert "CreateConfig" not in text  # the config script replaces the builder flags, as in the command
    text, _ = _assert_script_makes_the_same_run(monkeypatch, tmp_path, [
        tmp_path / "net.py", "--model-type", "trt-network-script", "--trt", "--trt-network-func-name", "make"])
    assert "InvokeFromScript(" in text and "'make')" in text


def test_onnx_loading_and_saving_flags(monkeypatch, models, tmp_path):
    text, _ = _assert_script_makes_the_same_run(monkeypatch, tmp_path, [
        models["multi"], "--onnxrt", "--onnx-ref", "--trt", "--shape-inference", "--no-onnxruntime-shape-inference",
        "--onnx-outputs", "r", "--external-data-dir", tmp_path, "--ignore-external-data", "--fp-to-fp16",
        "--save-onnx", tmp_path / "saved.onnx", "--save-external-data", "w.data",
        "--external-data-size-threshold", "0", "--no-save-all-tensors-to-one-file", "--providers", "cpu"])
    assert "InferShapes(OnnxFromPath(" in text and "allow_onnxruntime=False" in text
    assert "ConvertToFp16(" in text and "SaveOnnx(onnx_model" in text and "all_tensors_to_one_file=False" in text
    assert "NetworkFromOnnxPath(trt_onnx_path)" in text  # TensorRT parses the converted model, as in the command
    assert (tmp_path / "saved.onnx").is_file()


@pytest.mark.slow
def test_postprocess_warm_up_and_subprocess_give_the_same_results(models, tmp_path):
    text, script = _compare_with_run(models, [
        models["multi"], "--onnxrt", "--onnx-ref", "--postprocess", "sum:top-2", "top-1,axis=0", "--warm-up", "2",
        "--use-subprocess", "--seed", "11"], tmp_path, 0)
    assert "Comparator.postprocess(results, PostprocessFunc.top_k({'sum': 2, '': (1, 0)}))" in text
    assert "warm_up=2, use_subprocess=True" in text
    # the script's saved outputs are the raw outputs (post-processing happens after saving), as the command's
    assert RunResults.load(str(tmp_path / "script.json"))[0][1][0]["sum"].dtype == np.float32


@pytest.mark.slow
def test_saved_results_alone_and_a_compare_func_script(models, tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert run_poly("run", models["mlp"], "--onnxrt", "--seed", "1", "--save-outputs", a).returncode == 0
    assert run_poly("run", models["mlp"], "--onnxrt", "--seed", "2", "--save-outputs", b).returncode == 0
    (tmp_path / "cmp.py").write_text(textwrap.dedent("""
        def equal_names(run_a, run_b):
            return {name: name in run_b for name in run_a}
    """))
    for flags, verdict in ((["--atol", "0", "--rtol", "0"], 1),
                           (["--compare-func-script", f"{tmp_path / 'cmp.py'}:equal_names"], 0)):
        direct = run_poly("run", "--load-outputs", a, b, *flags, cwd=tmp_path)
        assert direct.returncode == verdict, direct.stdout + direct.stderr
        gen = run_poly("run", "--load-outputs", a, b, *flags, "--gen-script", tmp_path / "gen.py", cwd=tmp_path)
        assert gen.returncode == 0, gen.stdout + gen.stderr
        text = (tmp_path / "gen.py").read_text()
        assert "results = RunResults()" in text and "Comparator.run" not in text
        script = _run_script(tmp_path / "gen.py", tmp_path)
        assert script.returncode == verdict, script.stdout + script.stderr
    assert f"compare_func = InvokeFromScript({str(tmp_path / 'cmp.py')!r}, 'equal_names')" in text


@pytest.mark.slow
def test_show_heatmaps_without_a_display_saves_them(models, tmp_path, monkeypatch):
    pytest.importorskip("matplotlib", reason="heatmaps need matplotlib")
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    out = tmp_path / "maps"
    gen = run_poly("run", models["mlp"], "--onnxrt", "--onnx-ref", "--show-heatmaps", "--save-heatmaps", out,
                  "--gen-script", tmp_path / "gen.py", cwd=tmp_path)
    assert gen.returncode == 0, gen.stdout + gen.stderr
    text = (tmp_path / "gen.py").read_text()
    assert f"show_heatmaps, save_heatmaps = resolve_display('--show-heatmaps', True, {str(out)!r})" in text
    assert "save_heatmaps=save_heatmaps, show_heatmaps=show_heatmaps" in text
    script = _run_script(tmp_path / "gen.py", tmp_path)
    assert script.returncode == 0, script.stdout + script.stderr
    assert "no display" in script.stdout + script.stderr and any(out.iterdir())


def test_tactic_replays_become_the_algorithm_selector(poly, models, tmp_path):
    # TacticRecorder/TacticReplayer need trt.IAlgorithmSelector (full TensorRT 10 or older): the
    # script names them as the command creates them
    (tmp_path / "replay.json").write_text("{}")
    for flag, loader in (("--save-tactics", "TacticRecorder"), ("--load-tactics", "TacticReplayer")):
        result = poly("run", models["identity"], "--trt", flag, tmp_path / "replay.json", "--gen", "-")
        assert result.exit_code == 0, result.output
        assert f"algorithm_selector={loader}({str(tmp_path / 'replay.json')!r})" in result.output
    both = poly("run", models["identity"], "--trt", "--save-tactics", tmp_path / "a.json", "--load-tactics",
                tmp_path / "replay.json", "--gen", "-")
    assert both.exit_code == 2 and "--save-tactics and --load-tactics cannot be used together" in both.output


def test_simple_comparison_flags_become_the_arguments_of_compare_func_simple(poly, models):
    # the options object's declared order decides the arguments' order; flags not given are left out
    result = poly("run", models["identity"], "--onnxrt", "--onnx-ref", "--error-quantile", "0.9", "--check-error-stat",
                  "quantile", "--no-shape-check", "--atol", "1e-3", "y:0.1", "--rtol", "0.01", "--fail-fast",
                  "--gen-script", "-")
    assert result.exit_code == 0, result.output
    assert ("compare_func = CompareFunc.simple(check_shapes=False, rtol=0.01, atol={'': 0.001, 'y': 0.1}, "
            "fail_fast=True, check_error_stat='quantile', error_quantile=0.9)\n") in result.output
    plain = poly("run", models["identity"], "--onnxrt", "--onnx-ref", "--gen-script", "-")
    assert "compare_func = CompareFunc.simple()\n" in plain.output
