"""Every file poly reads, given as something that is no such file at all: an empty file, bytes that
are not UTF-8, JSON nested beyond any parser's recursion, a directory, a file it may not read, a
path that does not exist. Each ends with exit 1 (2 for a path the option parser rejects) and one
stderr line naming the path."""

from __future__ import annotations

import os

import pytest
from fixtures import corruption

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

    result = damaged(b"", NAMES.get(reader, "file.bin"), args, outputs=OUTPUTS, allow_success=False)
    assert result.exit_code in (1, 2)


@pytest.mark.parametrize("reader", sorted(READERS))
def test_a_path_that_does_not_exist(seeds, damaged, reader):
    _skip_without_trt(reader, seeds)

    def args(path, work):
        os.remove(path)
        return READERS[reader](path, seeds, work)

    result = damaged(b"", NAMES.get(reader, "file.bin"), args, outputs=OUTPUTS, allow_success=reader == "timing-cache")
    assert result.exit_code in ((0,) if reader == "timing-cache" else (1, 2))


@pytest.mark.parametrize("reader", sorted(READERS))
def test_a_file_that_cannot_be_read(seeds, damaged, tmp_path, reader):
    _skip_without_trt(reader, seeds)
    probe = tmp_path / "probe"
    probe.write_bytes(b"x")
    probe.chmod(0)
    try:
        probe.read_bytes()
        pytest.skip("permission bits do not stop this user from reading files (running as root)")
    except PermissionError:
        pass

    def args(path, work):
        os.chmod(path, 0)
        return READERS[reader](path, seeds, work)

    result = damaged(b"x", NAMES.get(reader, "file.bin"), args, outputs=OUTPUTS, allow_success=False)
    assert result.exit_code in (1, 2)
