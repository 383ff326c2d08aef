"""Errors: one line naming the file/flag, exit 2 for usage errors and 1 for failures, no
traceback without -v; lazy loading and global flags."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
from fixtures.cli_helpers import POLY, run_cli


def _one_error_line(proc):
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert "Traceback" not in proc.stderr + proc.stdout
    assert len(lines) == 1, proc.stderr
    return lines[0]


@pytest.mark.parametrize("args, code, needle", [
    (["run", "missing.onnx", "--onnxrt"], 2, "missing.onnx"),
    (["run", "{identity}", "--onnxrt", "--bogus"], 2, "--bogus"),
    (["run", "{identity}", "--onnxrt", "--input-shapes", "x:[1,2"], 2, "--input-shapes"),
    (["run", "{identity}", "--onnxrt", "--val-range", "[1]"], 2, "--val-range"),
    (["run", "{identity}", "--onnxrt", "--atol", "loose"], 2, "--atol"),
    (["run", "{identity}", "--trt", "--trt-min-shapes", "x:[1,1,2,2]"], 2, "--trt-max-shapes"),
    (["convert", "{identity}", "--pool-limit", "workspace", "-o", "x.engine"], 2, "--pool-limit"),
    (["run", "{bad}", "--onnxrt"], 1, "bad.onnx"),
    # Polygraphy's TensorFlow model types parse, then end with one line saying poly does not load them
    (["inspect", "model", "{bad}", "--model-type", "frozen"], 1, "frozen TensorFlow graph"),
    (["run", "{bad}", "--model-type", "keras", "--onnxrt"], 1, "convert it to ONNX"),
    # a network script importing full TensorRT where it is not installed: one line naming the script and module
    (["inspect", "model", "{script}", "--trt-network-func", "load_network"], 1, "imports full TensorRT"),
])
def test_errors_are_one_line(models, tmp_path, args, code, needle):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    script = tmp_path / "net.py"
    # as on a machine without full TensorRT (this one may have it): the import fails
    script.write_text("import sys\nsys.modules['tensorrt'] = None\nimport tensorrt\n")
    args = [a.format(identity=models["identity"], bad=bad, script=script) for a in args]
    proc = run_cli(POLY, *args, cwd=tmp_path)
    assert proc.returncode == code, proc.stdout + proc.stderr
    assert needle in _one_error_line(proc)


def test_traceback_only_with_verbose(models, tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    proc = run_cli(POLY, "run", bad, "--onnxrt", "-v")
    assert proc.returncode == 1 and "Traceback" in proc.stderr


def test_help_is_lazy_and_fast():
    code = ("import sys, time; t = time.perf_counter(); from poly.cli.main import cli\n"
            "try:\n    cli(['--help'], prog_name='poly')\nexcept SystemExit:\n    pass\n"
            "print('ELAPSED', time.perf_counter() - t)\n"
            "print('HEAVY', sorted(m for m in ('onnx', 'onnxruntime', 'numpy', 'poly.onnx', 'poly.compare') "
            "if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "HEAVY []" in proc.stdout, proc.stdout
    for cmd in ("run", "convert", "inspect", "surgeon"):
        assert cmd in proc.stdout
    start = time.perf_counter()
    real = run_cli(POLY, "--help")
    print(f"`poly --help` took {time.perf_counter() - start:.3f}s (subprocess)")
    assert real.returncode == 0


# Runs `poly ARGV` for each ARGV in turn, in one fresh interpreter, through the console script's
# entry point, and prints the first command line after which NumPy (or a module of __HEAVY__) was loaded.
_IN_PROCESS = """
import sys
from poly.cli.main import main
for argv in __ARGVS__:
    sys.argv = ["poly", *argv]
    try:
        main()
    except SystemExit as exc:
        assert exc.code in (0, None), (argv, exc.code)
    loaded = sorted(m for m in ["numpy", *__HEAVY__] if m in sys.modules)
    if loaded:
        print("LOADED", loaded, "AFTER", " ".join(argv))
        break
else:
    print("NOTHING HEAVY")
"""


def _first_heavy(argvs, heavy=()):
    code = _IN_PROCESS.replace("__ARGVS__", repr(argvs)).replace("__HEAVY__", repr(list(heavy)))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip().splitlines()[-1]


def test_run_help_imports_no_numpy():
    assert _first_heavy([["run", "--help"]], heavy=("onnx", "onnxruntime", "poly.compare.comparator")) == "NOTHING HEAVY"


def test_the_help_of_every_command_imports_no_numpy():
    # each command imports only what it runs: its --help builds its options and nothing else
    import importlib

    from poly.cli.main import SUBCOMMANDS

    argvs = [["--help"]]
    for name, (target, _) in SUBCOMMANDS.items():
        argvs.append([name, "--help"])
        module_name, _, attr = target.partition(":")
        group = getattr(importlib.import_module(module_name), attr)
        argvs += [[name, sub, "--help"] for sub in getattr(group, "lazy_subcommands", {})]
    assert len(argvs) > 30 and ["debug", "reduce", "--help"] in argvs
    assert _first_heavy(argvs) == "NOTHING HEAVY"


def test_run_onnxrt_imports_only_what_it_runs(models):
    # a host run on ONNX-Runtime: no TensorRT, no onnx, no debug tools, no on-device statistics, no
    # importlib.metadata (no `poly run` extension installed), no zip support (no .npz read or written)
    heavy = ("onnx", "poly.trt", "poly.debug", "poly.tools", "poly.compare.stats.gpu", "importlib.metadata", "zipfile")
    last = _first_heavy([["run", models["identity"], "--onnxrt", "-q"]], heavy=heavy)
    assert last == "LOADED ['numpy'] AFTER run " + models["identity"] + " --onnxrt -q"


def test_version_and_global_flags(poly, models, tmp_path):
    assert poly("--version").output.startswith("poly ")
    log = tmp_path / "log.txt"
    quiet = poly("run", models["identity"], "--onnxrt", "-q", "-q", "-q")
    assert quiet.exit_code == 0 and "Accuracy" not in quiet.output
    verbose = poly("--verbosity", "VERBOSE", "--log-file", log, "run", models["identity"], "--onnxrt",
                   "--log-format", "timestamp")
    assert verbose.exit_code == 0 and "PASSED" in log.read_text()
    assert poly("run", models["identity"], "--onnxrt", "--verbosity", "LOUD").exit_code == 2
    assert poly("run", models["identity"], "--onnxrt", "--silent").output == ""


def test_subcommand_help(poly):
    for args in (["run", "-h"], ["convert", "-h"], ["inspect", "model", "-h"], ["inspect", "data", "-h"],
                 ["surgeon", "extract", "-h"], ["surgeon", "sanitize", "-h"]):
        result = poly(*args)
        assert result.exit_code == 0 and "Usage:" in result.output
    assert "--trt-min-shapes" in poly("run", "-h").output
