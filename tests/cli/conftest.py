"""Fixtures of the CLI tests: small models on disk, a CliRunner wrapper, logger reset."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from fixtures import onnx_models


@pytest.fixture(autouse=True)
def _reset_logger():
    from poly.core import G_LOGGER

    yield
    G_LOGGER.module_severity = G_LOGGER.INFO
    G_LOGGER.log_format = []
    G_LOGGER.log_file = None


@pytest.fixture(scope="session")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    return {
        "identity": str(onnx_models.save(onnx_models.identity(), root / "identity.onnx")),
        "dynamic": str(onnx_models.save(onnx_models.dynamic_identity(), root / "dynamic_identity.onnx")),
        "multi": str(onnx_models.save(onnx_models.multi_output(), root / "multi.onnx")),
        "mlp": str(onnx_models.save(onnx_models.mlp(), root / "mlp.onnx")),
        "foldable": str(onnx_models.save(onnx_models.constant_foldable(), root / "foldable.onnx")),
    }


@pytest.fixture
def poly():
    """Invokes `poly ARGS...` in-process; returns click's Result."""
    from poly.cli.main import cli

    runner = CliRunner()

    def invoke(*args):
        return runner.invoke(cli, [str(a) for a in args], prog_name="poly")

    return invoke

