"""Fixtures of the poly.trt tests: the installed TensorRT flavour (tests skip, with the reason,
when none is installed), the TensorRT double (``tensorrt_double``, from tests/fixtures/trt_double.py)
and small ONNX models on disk."""

from __future__ import annotations

import pytest
from fixtures.trt_double import tensorrt_double  # noqa: F401 (a fixture offered to the poly.trt tests)


def _flavour():
    try:
        from poly.trt.tensorrt_module import trt

        return trt.load()
    except Exception as err:  # no TensorRT flavour installed
        return err


@pytest.fixture(scope="session")
def trt_mod():
    """The TensorRT module poly.trt uses (TensorRT-RTX in CI)."""
    mod = _flavour()
    if isinstance(mod, Exception):
        pytest.skip(f"no TensorRT flavour is installed ({mod}); the dev group installs TensorRT-RTX on Linux x86_64")
    return mod


@pytest.fixture(scope="session")
def trt_models(tmp_path_factory):
    from fixtures import onnx_models  # imports onnx: only where TensorRT tests run

    root = tmp_path_factory.mktemp("trt_models")
    return {
        name: str(onnx_models.save(getattr(onnx_models, name)(), root / f"{name}.onnx"))
        for name in ("identity", "dynamic_identity", "multi_output", "mlp", "branches")
    }


@pytest.fixture(autouse=True)
def _quiet_logger():
    from poly.core import G_LOGGER

    yield
    G_LOGGER.module_severity = G_LOGGER.INFO
