"""Fixtures of the fuzz tests: valid seed files written by poly itself (and tactic replays by
Polygraphy), an in-process `poly` runner, and ``damaged``, which runs one command on one damaged
file in a fresh directory and checks everything a damaged file must not cause."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from fixtures import onnx_models
from fixtures.cli_outcome import problem


@pytest.fixture(autouse=True)
def _reset_logger():
    from poly.core import G_LOGGER

    yield
    G_LOGGER.module_severity = G_LOGGER.INFO
    G_LOGGER.log_format = []
    G_LOGGER.log_file = None


def _invoke(args):
    from poly.cli.main import cli
    from poly.core import G_LOGGER

    result = CliRunner().invoke(cli, [str(a) for a in args], prog_name="poly")
    G_LOGGER.module_severity = G_LOGGER.INFO  # -v/-q of one run must not leak into the next
    return result


@pytest.fixture(scope="session")
def poly_cli():
    """Invokes `poly ARGS...` in-process; returns click's Result (stdout and stderr apart)."""
    return _invoke


def _trt_available():
    try:
        from poly.trt.tensorrt_module import trt

        trt.load()
        return True
    except Exception:
        return False


@pytest.fixture(scope="session")
def seeds(tmp_path_factory):
    """Valid files of every kind poly reads, written by poly (paths by name)."""
    root = tmp_path_factory.mktemp("seeds")
    files = {
        "identity.onnx": onnx_models.save(onnx_models.identity(), root / "identity.onnx"),
        "mlp.onnx": onnx_models.save(onnx_models.mlp(), root / "mlp.onnx"),
    }
    for suffix in ("json", "npz"):
        result = _invoke(["run", files["identity.onnx"], "--onnxrt", "--save-inputs", root / f"inputs.{suffix}",
                          "--save-outputs", root / f"outputs.{suffix}"])
        assert result.exit_code == 0, result.output
        files[f"inputs.{suffix}"] = root / f"inputs.{suffix}"
        files[f"outputs.{suffix}"] = root / f"outputs.{suffix}"
    ext_dir = root / "ext"
    ext_dir.mkdir()
    import onnx

    onnx.save_model(onnx_models.mlp(), str(ext_dir / "model.onnx"), save_as_external_data=True,
                    all_tensors_to_one_file=True, location="weights.bin", size_threshold=0)
    files["ext/model.onnx"] = ext_dir / "model.onnx"
    files["ext/weights.bin"] = ext_dir / "weights.bin"
    if _trt_available():
        result = _invoke(["convert", files["identity.onnx"], "-o", root / "identity.engine",
                          "--save-timing-cache", root / "timing.cache"])
        assert result.exit_code == 0, result.output
        files["identity.engine"] = root / "identity.engine"
        files["timing.cache"] = root / "timing.cache"
    return {name: Path(path) for name, path in files.items()}


@pytest.fixture(scope="session")
def replays(tmp_path_factory):
    """Tactic replay files written by Polygraphy: good/g1.json, good/g2.json, bad/b1.json, bad/b2.json."""
    from fixtures.tactic_replays import make_replays

    root = tmp_path_factory.mktemp("replays")
    why = make_replays(root)
    if why is not None:
        pytest.skip(f"Polygraphy could not write tactic replay files here: {why}")
    return root


def _loads_json(path):
    json.loads(Path(path).read_text())


def _loads_npz(path):
    with np.load(path, allow_pickle=False) as archive:
        for key in archive.files:
            archive[key]


def _loads_onnx(path):
    import onnx

    onnx.load(str(path))


def _nonempty(path):
    assert Path(path).stat().st_size > 0


COMPLETE = {".json": _loads_json, ".npz": _loads_npz, ".onnx": _loads_onnx, ".engine": _nonempty, ".cache": _nonempty}
"""How to tell that an output file is complete, by extension."""


class Damaged:
    """Runs one command on one damaged file and checks the outcome (see ``__call__``)."""

    def __init__(self, invoke):
        self.invoke = invoke

    def __call__(self, data, name, make_args, outputs=(), also_named=(), allow_success=True, check=problem,
                 extra_files=None, links=None):
        # check(result, path, *also_named, allow_success=...) -> why the outcome is wrong, or None
        """
        Writes ``data`` to ``<fresh dir>/<name>`` (plus ``extra_files``: name -> bytes, and
        ``links``: name -> the name of the file the symbolic link points to), runs
        ``poly`` with ``make_args(path, dir)``, and asserts that the outcome is clean (``check``:
        success, or exit 1/2 with one stderr line naming the file or one of ``also_named``), that
        each of ``outputs`` (names in the directory) is absent or complete, and that nothing else
        (temporary files) was left in the directory. Returns click's Result.
        """
        with tempfile.TemporaryDirectory(prefix="poly-fuzz-") as work:
            path = os.path.join(work, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            Path(path).write_bytes(data)
            for extra, content in (extra_files or {}).items():
                extra_path = os.path.join(work, extra)
                os.makedirs(os.path.dirname(extra_path), exist_ok=True)
                Path(extra_path).write_bytes(content)
            for link, target in (links or {}).items():
                os.symlink(os.path.join(work, target), os.path.join(work, link))
            before = set(_tree(work))
            result = self.invoke(make_args(path, work))
            why = check(result, path, *also_named, allow_success=allow_success)
            assert why is None, f"{why}\n--- command: poly {' '.join(map(str, make_args(path, work)))}"
            for output in outputs:
                out_path = os.path.join(work, output)
                if os.path.exists(out_path):
                    COMPLETE[os.path.splitext(output)[1]](out_path)
            left = set(_tree(work)) - before - set(outputs)
            assert not left, f"files left behind: {sorted(left)}"
            return result


def _tree(root):
    for dirpath, dirnames, filenames in os.walk(root):
        for entry in dirnames + filenames:
            yield os.path.relpath(os.path.join(dirpath, entry), root)


@pytest.fixture(scope="session")
def damaged(poly_cli):
    """``damaged(data, name, make_args, outputs=(), ...)``: see ``Damaged.__call__``."""
    return Damaged(poly_cli)
