"""Damaged files through real `poly` processes: the exact exit status and the one stderr line, and
memory: under an address-space limit of 1 GiB, files whose headers claim terabytes (or a few GiB,
which an eager reader would try to allocate) are refused by checking the claim against the bytes
present, never by running out of memory."""

from __future__ import annotations

import base64
import json
import resource
import subprocess

import numpy as np
import pytest
from fixtures import corruption
from fixtures.cli_helpers import POLY

LIMIT = 1 << 30
"""The address space a `poly` process gets here: enough for the interpreter, NumPy and
ONNX-Runtime, far less than any claim below."""


def _limited():
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


def _poly(*args, limited=False, cwd=None):
    return subprocess.run([POLY, *map(str, args)], capture_output=True, text=True, timeout=120, cwd=cwd,
                          preexec_fn=_limited if limited else None)


def _one_line(proc, code=1):
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == code, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("[!] "), lines[0]
    return lines[0]


GIB3 = (3 << 30) // 4
"""Elements of a 3 GiB float32 array: past the limit, yet small enough to be allocated lazily
without one."""

CLAIMS = {
    "json-terabytes": lambda: corruption.npy_payload_json(corruption.npy_bytes((10**12,), payload=b"\0" * 16)),
    "json-3GiB": lambda: corruption.npy_payload_json(corruption.npy_bytes((GIB3,), payload=b"\0" * 16)),
    "npz-stored": lambda: corruption.npz_bytes({"x.npy": corruption.npy_bytes((GIB3,), payload=b"\0" * 64)}),
    "npz-deflated": lambda: corruption.npz_bytes({"x.npy": corruption.npy_bytes((GIB3,), payload=b"\0" * 64)},
                                                 compressed=True),
    "npz-lying-sizes": lambda: corruption.lying_zip_sizes(
        corruption.npz_bytes({"x.npy": corruption.npy_bytes((GIB3,), payload=b"\0" * 64)}, compressed=True)),
    "npz-in-json": lambda: corruption.json_text([{"x": {
        "array": base64.b64encode(corruption.npz_bytes({"x.npy": corruption.npy_bytes((GIB3,))}, True)).decode(),
        "polygraphy_class": "ndarray"}}]),
}


@pytest.mark.parametrize("claim", sorted(CLAIMS))
def test_huge_claims_are_refused_without_allocating(tmp_path, claim):
    path = tmp_path / ("claim.npz" if claim.startswith("npz-") and claim != "npz-in-json" else "claim.json")
    path.write_bytes(CLAIMS[claim]())
    line = _one_line(_poly("inspect", "data", path, limited=True))
    assert str(path) in line
    assert "MemoryError" not in line and "allocate" not in line, line
    assert "claims" in line, line  # refused by comparing the header's claim with the data


def test_huge_claims_fail_the_same_way_in_a_run(tmp_path):
    inputs = tmp_path / "inputs.json"
    inputs.write_bytes(CLAIMS["json-3GiB"]())
    model = tmp_path / "identity.onnx"
    from fixtures import onnx_models

    onnx_models.save(onnx_models.identity(), model)
    line = _one_line(_poly("run", model, "--onnxrt", "--load-inputs", inputs, "--save-outputs", tmp_path / "out.json",
                           limited=True))
    assert "inputs.json" in line and "claims" in line
    assert not (tmp_path / "out.json").exists()


def test_valid_files_still_load_under_the_limit(tmp_path):
    path = tmp_path / "inputs.npz"
    np.savez_compressed(path, x=np.arange(1 << 20, dtype=np.float32))
    proc = _poly("inspect", "data", path, limited=True)
    assert proc.returncode == 0, proc.stderr
    assert "shape=(1048576,)" in proc.stdout


@pytest.mark.parametrize("content, name, needle", [
    (b"[" * 300_000 + b"]" * 300_000, "results.json", "nested too deeply"),
    (corruption.NON_UTF8, "results.json", "not UTF-8"),
    (b"", "results.json", "empty"),
    (b"PK\x03\x04" + b"\0" * 40, "results.npz", "not a valid .npz archive"),
    (json.dumps({"lst": 5, "polygraphy_class": "RunResults"}).encode(), "results.json", "'lst'"),
], ids=["deep-nesting", "non-utf8", "empty", "bad-npz", "missing-key"])  # short ids: the test id goes into the
# environment of the `poly` process (PYTEST_CURRENT_TEST), and 600 KB of brackets exceed exec's limit
def test_damaged_results_exit_1_with_one_line(tmp_path, content, name, needle):
    path = tmp_path / name
    path.write_bytes(content)
    line = _one_line(_poly("inspect", "data", path))
    assert name in line and needle in line, line


def test_traceback_of_a_damaged_file_only_with_verbose(tmp_path):
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"lst": 5, "polygraphy_class": "RunResults"}))
    quiet = _poly("run", "missing.onnx", "--onnxrt")  # a usage error: exit 2, one line
    assert _one_line(quiet, code=2).count("missing.onnx") == 1
    verbose = _poly("inspect", "data", path, "-v")
    assert verbose.returncode == 1 and "Traceback" in verbose.stderr
