import io
import os
import stat

import pytest

from poly.core import atomic_write, atomic_write_bytes, atomic_write_text, load_file, save_file


def test_atomic_write_replaces_file(tmp_path):
    path = tmp_path / "out.bin"
    path.write_bytes(b"old")
    with atomic_write(path) as f:
        f.write(b"new contents")
        # until the block ends, readers still see the old file
        assert path.read_bytes() == b"old"
    assert path.read_bytes() == b"new contents"
    assert os.listdir(tmp_path) == ["out.bin"]


def test_exception_mid_write_keeps_old_file_and_leaves_no_temp(tmp_path):
    path = tmp_path / "keep.txt"
    path.write_text("precious")
    with pytest.raises(RuntimeError, match="crash"):
        with atomic_write(path, "w") as f:
            f.write("half of the new data")
            f.flush()
            raise RuntimeError("crash")
    assert path.read_text() == "precious"
    assert os.listdir(tmp_path) == ["keep.txt"]


def test_exception_on_new_file_leaves_nothing(tmp_path):
    with pytest.raises(KeyboardInterrupt):
        with atomic_write(tmp_path / "new.bin") as f:
            f.write(b"x")
            raise KeyboardInterrupt()
    assert os.listdir(tmp_path) == []


def test_creates_parent_directories(tmp_path):
    path = tmp_path / "a" / "b" / "c.txt"
    atomic_write_text(path, "héllo")
    assert path.read_text(encoding="utf-8") == "héllo"


def test_atomic_write_bytes_and_relative_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    atomic_write_bytes("rel.bin", b"\x00\x01")
    assert (tmp_path / "rel.bin").read_bytes() == b"\x00\x01"


def test_keeps_permissions_of_replaced_file(tmp_path):
    path = tmp_path / "script.sh"
    path.write_text("old")
    os.chmod(path, 0o750)
    atomic_write_text(path, "new")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o750


def test_new_file_permissions_follow_umask(tmp_path):
    path = tmp_path / "new.txt"
    atomic_write_text(path, "x")
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o666 & ~umask


def test_rejects_non_write_modes(tmp_path):
    for mode in ("a", "r", "rb", "w+"):
        with pytest.raises(ValueError):
            with atomic_write(tmp_path / "x", mode):
                pass


def test_save_and_load_file(tmp_path):
    path = tmp_path / "f.txt"
    save_file("text", path, mode="w")
    assert load_file(path, mode="r") == "text"
    assert load_file(path) == b"text"
    buffer = io.BytesIO()
    buffer.write(b"prefix")
    save_file(b"-data", buffer)
    buffer.seek(2)
    assert load_file(buffer) == b"prefix-data"
    assert buffer.tell() == 2


def _count_fsyncs(monkeypatch):
    calls = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (calls.append(fd), real(fd))[1])
    return calls


def test_durable_write_flushes_file_and_directory(tmp_path, monkeypatch):
    calls = _count_fsyncs(monkeypatch)
    atomic_write_bytes(tmp_path / "a.bin", b"data")
    assert len(calls) == 2  # the file, then the directory holding the rename
    assert (tmp_path / "a.bin").read_bytes() == b"data"


def test_non_durable_write_is_atomic_without_fsync(tmp_path, monkeypatch):
    calls = _count_fsyncs(monkeypatch)
    path = tmp_path / "replay.json"
    path.write_text("old")
    save_file('{"new": 1}', path, mode="w", durable=False)
    atomic_write_bytes(tmp_path / "b.bin", b"bytes", durable=False)
    with pytest.raises(RuntimeError, match="crash"):
        with atomic_write(path, "w", durable=False) as f:
            f.write("half")
            raise RuntimeError("crash")
    assert calls == []
    assert path.read_text() == '{"new": 1}'
    assert sorted(os.listdir(tmp_path)) == ["b.bin", "replay.json"]


def test_a_destination_that_cannot_be_written_is_named_not_its_temporary_file(tmp_path, monkeypatch):
    import tempfile

    from poly.core import atomic_write

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(tmp_path / ".model.onnx.k3j2.tmp"))

    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    target = tmp_path / "model.onnx"
    with pytest.raises(PermissionError) as info:
        with atomic_write(target) as f:
            f.write(b"x")
    assert info.value.filename == str(target) and ".tmp" not in str(info.value)
    assert not target.exists()
