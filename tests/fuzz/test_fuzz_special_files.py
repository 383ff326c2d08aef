"""Every file poly reads, given as something that is no such file at all: an empty file, bytes that
are not UTF-8, JSON nested beyond any parser's recursion, a directory, a file it may not read, a
path that does not exist. Each ends with exit 1 (2 for a path the option parser rejects) and one
stderr line naming the path."""

from __future__ import annotations

import contextlib
import ctypes
import os
import tempfile
from pathlib import Path

import pytest
from fixtures import corruption
from fixtures.cli_outcome import error_line

READERS = {
    "inputs": lambda p, s, w: ["run", s["identity.onnx"], "--onnxrt", "--load-inputs", p, "--save-outputs", f"{w}/o.json"],
    "results": lambda p, s, w: ["run", s["identity.onnx"], "--onnxrt", "--load-inputs", s["inputs.json"],
                                "--load-outputs", p, "--save-outputs", f"{w}/o.json"],
    "inspect-data": lambda p, s, w: ["inspect", "data", p],
    "inspect-model": lambda p, s, w: ["inspect", "model", p],
    "run-model": lambda p, s, w: ["run", p, "--onnxrt", "--save-outputs", f"{w}/o.json"],
    "sanitize": lambda p, s, w: ["surgeon", "sanitize", p, "-o", f"{w}/o.onnx"],
    "timing-cache": lambda p, s, w: ["convert", s["identity.onnx"], "-o", f"{w}/o.engine", "--load-timing-cache", p],
    "inspect-tactics": lambda p, s, w: ["inspect", "tactics", p],
    "diff-tactics": lambda p, s, w: ["inspect", "diff-tactics", "--good", p, "--bad", p],
    "engine": lambda p, s, w: ["inspect", "model", p],
}
NEEDS_TRT = {"timing-cache", "inspect-tactics", "diff-tactics", "engine"}
OUTPUTS = ["o.json", "o.onnx", "o.engine"]

KINDS = {
    "empty": b"",
    "not-utf8": corruption.NON_UTF8,
    "deep-json": b"[" * 200_000 + b"]" * 200_000,
    "deep-typed-json": b'{"polygraphy_class": "RunResults", "lst": ' * 50_000 + b"[]" + b"}" * 50_000,
}

# A timing cache TensorRT-RTX cannot parse is used as an empty one (its timing-cache operations
# are no-ops), so no content makes a build fail, and bytes that are not JSON read as an empty cache.
MAY_SUCCEED = {("timing-cache", kind) for kind in KINDS} | {("inspect-tactics", "not-utf8")}
NAMES = {"inspect-model": "file.onnx", "run-model": "file.onnx", "sanitize": "file.onnx", "engine": "file.engine"}
"""The damaged file's name: models are told apart by extension."""


def _skip_without_trt(reader, seeds):
    if reader in NEEDS_TRT and "timing.cache" not in seeds:
        pytest.skip("no TensorRT flavour is installed; the dev group installs TensorRT-RTX on Linux x86_64")


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("reader", sorted(READERS))
def test_content_that_is_no_such_file(seeds, damaged, reader, kind):
    _skip_without_trt(reader, seeds)
    result = damaged(KINDS[kind], NAMES.get(reader, "file.bin"), lambda path, work: READERS[reader](path, seeds, work),
                     outputs=OUTPUTS, allow_success=(reader, kind) in MAY_SUCCEED)
    assert result.exit_code in ((0, 1) if (reader, kind) in MAY_SUCCEED else (1,))


@pytest.mark.parametrize("reader", sorted(READERS))
def test_a_directory_instead_of_a_file(seeds, damaged, reader):
    _skip_without_trt(reader, seeds)

    def args(path, work):
        os.remove(path)
        os.mkdir(path)
        return READERS[reader](path, seeds, work)

    # diff-tactics reads directories of replays: an empty one holds zero replays (as in Polygraphy)
    reads_dirs = reader == "diff-tactics"
    result = damaged(b"", NAMES.get(reader, "file.bin"), args, outputs=OUTPUTS, allow_success=reads_dirs)
    assert result.exit_code in ((0,) if reads_dirs else (1, 2))


@pytest.mark.parametrize("reader", sorted(READERS))
def test_a_path_that_does_not_exist(seeds, damaged, reader):
    _skip_without_trt(reader, seeds)

    def args(path, work):
        os.remove(path)
        return READERS[reader](path, seeds, work)

    result = damaged(b"", NAMES.get(reader, "file.bin"), args, outputs=OUTPUTS, allow_success=reader == "timing-cache")
    assert result.exit_code in ((0,) if reader == "timing-cache" else (1, 2))


DENIED = ("Permission denied", "system error number 13")
"""How a refused read is reported: strerror(EACCES), or ONNX-Runtime's own words for errno 13."""

_DAC_CAPS = (1 << 1) | (1 << 2)
"""CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH: what lets root read a file whose mode is 000."""
_CAPABILITY_VERSION_3 = 0x20080522


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def _set_effective(libc, change):
    header, data = _CapHeader(_CAPABILITY_VERSION_3, 0), (_CapData * 2)()
    if libc.capget(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "capget")
    before = data[0].effective
    data[0].effective = change(before)
    if libc.capset(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "capset")
    return before


@contextlib.contextmanager
def permission_bits_apply():
    """
    Within the block, this thread's file accesses obey permission bits, also as root (as CI runs).

    Root reads a mode-000 file through the DAC capabilities; they leave this thread's effective
    set and stay in its permitted set, so that they can be raised again on exit. On Linux
    capabilities are per thread and capset(2) changes only the calling thread, so the rest of the
    process (pytest, xdist's I/O thread) is untouched; threads the command starts inherit the
    lowered set. The uid stays 0, so the interpreter and the sources stay readable wherever the
    checkout lives (a setuid to `nobody` cannot read a venv under /root).
    """
    if os.geteuid() != 0:
        yield
        return
    libc = ctypes.CDLL(None, use_errno=True)
    before = _set_effective(libc, lambda caps: caps & ~_DAC_CAPS)
    try:
        yield
    finally:
        _set_effective(libc, lambda caps: caps | (before & _DAC_CAPS))


@pytest.fixture(scope="module")
def unreadable_files_possible():
    """Skips, saying why, where root cannot lower its DAC capabilities; fails where a mode-000
    file is still readable with them lowered (the mechanism broke: the cases would prove nothing)."""
    with tempfile.TemporaryDirectory(prefix="poly-fuzz-probe-") as work:
        probe = Path(work) / "probe"
        probe.write_bytes(b"x")
        probe.chmod(0)
        try:
            with permission_bits_apply():
                probe.read_bytes()
        except PermissionError:
            return
        except (OSError, AttributeError) as err:  # capset refused, or a libc without capget/capset
            pytest.skip(f"running as root, and the DAC capabilities cannot be lowered for this thread: {err}")
        pytest.fail(f"a file of mode 000 in {work} is still readable inside permission_bits_apply()")


@pytest.fixture
def damaged_unprivileged(damaged, unreadable_files_possible):
    """``damaged`` whose `poly` runs with permission bits enforced (see permission_bits_apply)."""

    def invoke(args):
        with permission_bits_apply():
            return damaged.invoke(args)

    return type(damaged)(invoke)


@pytest.mark.parametrize("reader", sorted(READERS))
def test_a_file_that_cannot_be_read(seeds, damaged_unprivileged, reader):
    _skip_without_trt(reader, seeds)

    def args(path, work):
        os.chmod(path, 0)
        return READERS[reader](path, seeds, work)

    result = damaged_unprivileged(b"x", NAMES.get(reader, "file.bin"), args, outputs=OUTPUTS, allow_success=False)
    assert result.exit_code in (1, 2)
    # "x" is no valid file either: the line must say that the read was refused, not what was read
    assert any(cause in error_line(result) for cause in DENIED), error_line(result)
