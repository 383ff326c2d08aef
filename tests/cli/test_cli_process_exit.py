"""The `poly` console script ends its process without the interpreter's teardown, and still does
what an ordinary exit does: the status, the atexit callbacks (temporary files, logging), output
flushed to a pipe, threads still running waited for."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from fixtures.cli_helpers import POLY, run_cli

from poly.cli.process_exit import exit_status

# Runs the console script's entry point with ARGV in a fresh interpreter, after SETUP.
_SCRIPT = """
import sys
{setup}
sys.argv = ["poly", *{argv!r}]
from poly.cli.main import console_script
console_script()
print("NOT REACHED")
"""


def _console(argv, setup="", tmp_path=None):
    code = _SCRIPT.format(argv=list(argv), setup=textwrap.dedent(setup))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path)


def test_teardown_is_skipped_and_output_kept():
    # A module-level object's finalizer runs at the interpreter's teardown only: with the teardown
    # skipped it never prints. stdout is a pipe (block-buffered): the version line must be flushed.
    setup = """
    class Marker:
        def __del__(self):
            print("TORN DOWN", file=sys.stderr)
    marker = Marker()
    """
    proc = _console(["--version"], setup)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("poly "), proc.stdout
    assert "NOT REACHED" not in proc.stdout
    assert "TORN DOWN" not in proc.stderr


def test_atexit_callbacks_run(tmp_path):
    flag = tmp_path / "atexit.txt"
    setup = f"""
    import atexit, pathlib
    atexit.register(pathlib.Path({str(flag)!r}).write_text, "ran")
    """
    proc = _console(["--version"], setup)
    assert proc.returncode == 0, proc.stderr
    assert flag.read_text() == "ran"


def test_running_threads_are_waited_for(tmp_path):
    # A thread that is not a daemon still runs when the command returns: the ordinary exit, which
    # waits for it (its file is written after the command is over).
    flag = tmp_path / "thread.txt"
    setup = f"""
    import pathlib, threading, time
    def late():
        time.sleep(0.5)
        pathlib.Path({str(flag)!r}).write_text("done")
    threading.Thread(target=late).start()
    """
    proc = _console(["--version"], setup)
    assert proc.returncode == 0, proc.stderr
    assert flag.read_text() == "done"


def test_profilers_get_their_results(tmp_path):
    # `python -m cProfile -o FILE poly ...` writes FILE once the script returns: the ordinary exit
    out = tmp_path / "poly.prof"
    proc = subprocess.run([sys.executable, "-m", "cProfile", "-o", str(out), POLY, "--version"], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("poly ")
    assert out.stat().st_size > 0


@pytest.mark.parametrize("argv, status", [
    (["--version"], 0),
    (["run", "missing.onnx", "--onnxrt"], 2),  # a usage error
    (["no-such-command"], 2),
])
def test_statuses(argv, status, tmp_path):
    proc = _console(argv, tmp_path=tmp_path)
    assert proc.returncode == status, proc.stderr


def test_failed_command_status_and_log_file(models, tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    log = tmp_path / "poly.log"
    proc = run_cli(POLY, "run", bad, "--onnxrt", "--log-file", log)
    assert proc.returncode == 1, proc.stderr
    assert "bad.onnx" in proc.stderr
    proc = run_cli(POLY, "run", models["identity"], "--onnxrt", "--log-file", log)
    assert proc.returncode == 0, proc.stderr
    assert "PASSED" in log.read_text()


def test_closed_pipe_is_quiet():
    # `poly --help | head -1`: the reader is gone before the help is written out
    proc = subprocess.run(f"'{POLY}' run --help | head -c 5", shell=True, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0
    assert "Exception ignored" not in proc.stderr and "BrokenPipe" not in proc.stderr, proc.stderr


@pytest.mark.parametrize("code, status", [(None, 0), (0, 0), (3, 3), (256 + 4, 4), (-1, 255), (True, 1)])
def test_exit_status_matches_sys_exit(code, status):
    proc = subprocess.run([sys.executable, "-c", f"import sys; sys.exit({code!r})"], timeout=60)
    assert proc.returncode == status  # what the interpreter itself gives
    assert exit_status(code) == status


def test_exit_status_of_a_message(capsys):
    assert exit_status("bad input") == 1
    assert capsys.readouterr().err == "bad input\n"
