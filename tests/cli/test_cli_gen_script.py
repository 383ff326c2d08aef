"""`poly run --gen-script`: the generated script, run in a subprocess, gives the results and the
verdict `poly run` gives for the same flags; `-` prints it; a flag the generator cannot
translate ends the command with one line naming it."""

from __future__ import annotations

import copy
import subprocess
import sys
import textwrap

import click
import numpy as np
import pytest
from click.testing import CliRunner
from fixtures.cli_helpers import POLY, run_cli

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
    direct = run_cli(POLY, "run", *flags, "--save-outputs", tmp_path / "direct.json", cwd=tmp_path)
    assert direct.returncode == expect_rc, direct.stdout + direct.stderr
    gen = run_cli(POLY, "run", *flags, "--save-outputs", tmp_path / "script.json", "--gen-script",
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


def test_two_backends_mark_all_and_synthetic_data(models, tmp_path):
    text, script = _compare_with_run(models, [
        models["multi"], "--onnxrt", "--onnx-ref", "--onnx-outputs", "mark", "all", "--seed", "7",
        "--val-range", "[-2,2]", "x:[-1,3]", "--iterations", "3", "--atol", "1e-5", "--rtol", "1e-5",
        "--check-error-stat", "median", "--check-average", "--validate"], tmp_path, 0)
    assert "ModifyOutputs(OnnxFromPath(" in text and "outputs=MARK_ALL" in text
    assert "DataLoader(seed=7, iterations=3, val_range={'': (-2, 2), 'x': (-1, 3)})" in text
    assert "CompareFunc.simple(rtol=1e-05, atol=1e-05, check_error_stat='median')" in text
    assert "Comparator.validate(results, check_inf=True, check_nan=True)" in text
    assert "check_average=True" in text
    assert "PASSED | simple | All outputs matched" in script.stdout + script.stderr


def test_failing_comparison_against_loaded_outputs_fails_the_same(models, tmp_path):
    golden = tmp_path / "golden.json"
    assert run_cli(POLY, "run", models["mlp"], "--onnxrt", "--seed", "3", "--save-outputs", golden).returncode == 0
    text, _ = _compare_with_run(models, [models["mlp"], "--onnxrt", "--load-outputs", golden, "--atol", "0",
                                         "--rtol", "0", "--compare-func", "l2", "--l2-threshold", "1e-9", "--fail-fast"],
                                tmp_path, 1)
    assert "RunResults.load(path)" in text and "CompareFunc.l2(fail_fast=True, l2_threshold=1e-09)" in text


def test_dynamic_shapes_inputs_files_and_shape_inference(models, tmp_path):
    inputs = tmp_path / "inputs.json"
    assert run_cli(POLY, "run", models["dynamic"], "--onnxrt", "--input-shapes", "X:[2,1,3,5]",
                   "--save-inputs", inputs).returncode == 0
    text, _ = _compare_with_run(models, [models["dynamic"], "--onnxrt", "--onnx-ref", "--shape-inference",
                                         "--input-shapes", "X:[1,1,4,4]", "--providers", "cpu"], tmp_path, 0)
    assert "input_metadata.add('X', dtype=None, shape=[1, 1, 4, 4])" in text
    assert "InferShapes(OnnxFromPath(" in text and "providers=['cpu']" in text
    text, _ = _compare_with_run(models, [models["dynamic"], "--onnxrt", "--load-inputs", inputs], tmp_path, 0)
    assert f"data_loader = load_inputs([{str(inputs)!r}])" in text
    assert RunResults.load(str(tmp_path / "script.json"))[0][1][0]["Y"].shape == (2, 1, 3, 5)


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


def test_trt_script_builds_the_engine_as_run_does(models, tmp_path):
    try:
        from poly.trt.tensorrt_module import trt

        trt.load()
    except Exception as err:
        pytest.skip(f"no TensorRT flavour is installed ({err}): building an engine needs TensorRT or TensorRT-RTX")
    flags = [models["identity"], "--trt", "--builder-optimization-level", "0"]
    direct = run_cli(POLY, "run", *flags, "--save-engine", tmp_path / "direct.engine", cwd=tmp_path)
    assert run_cli(POLY, "run", *flags, "--save-engine", tmp_path / "script.engine", "--gen-script",
                   tmp_path / "gen.py", cwd=tmp_path).returncode == 0
    script = _run_script(tmp_path / "gen.py", tmp_path)
    assert script.returncode == direct.returncode
    # built (and saved) before running it; where the engine cannot run here both stop
    assert (tmp_path / "direct.engine").stat().st_size > 0 and (tmp_path / "script.engine").stat().st_size > 0


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
