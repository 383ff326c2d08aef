"""poly.trt.inspection.onnx_capability against the TensorRT double: the parser's older ``supports_model``
(TensorRT before 10; TensorRT-RTX has only ``supports_model_v2``), and which of the two is used.

TensorRT API (Python, TensorRT 10), docs.nvidia.com/deeplearning/tensorrt/latest/_static/python-api/
parsers/Onnx/pyOnnx.html, OnnxParser:
  supports_model(model: bytes, path: str = None) -> Tuple[bool, List[Tuple[List[int], bool]]]
      "Check whether TensorRT supports a particular ONNX model ... the list of subgraphs, each a
      list of node indices and whether it is supported" (deprecated in TensorRT 10);
  supports_model_v2(model: bytes, path: str = None) -> bool, with num_subgraphs,
      is_subgraph_supported(index) and get_subgraph_nodes(index);
  num_errors, get_error(index), clear_errors().
core/Builder.html: Builder(logger).create_network(flags); core/Logger.html: ILogger, ILogger.Severity.
"""

from __future__ import annotations

import types

import pytest


class _Severity:
    INTERNAL_ERROR, ERROR, WARNING, INFO, VERBOSE = range(5)


class _ILogger:
    Severity = _Severity

    def __init__(self):
        pass


class _Builder:
    def __init__(self, logger):
        self.logger = logger

    def create_network(self, flags=0):
        return types.SimpleNamespace(flags=flags)


CALLS = []


class _OldParser:
    """A TensorRT 8/9 parser: supports_model only."""

    def __init__(self, network, logger):
        self.num_errors = 0

    def supports_model(self, model, path=None):
        CALLS.append(("supports_model", bytes(model), path))
        return False, [([0, 1], True), ([3], True)]

    def get_error(self, index):
        raise IndexError(index)


class _NewParser(_OldParser):
    """A TensorRT 10 parser: both methods."""

    num_subgraphs = 2

    def supports_model_v2(self, model, path=None):
        CALLS.append(("supports_model_v2", bytes(model), path))
        return False

    def is_subgraph_supported(self, index):
        return index == 1

    def get_subgraph_nodes(self, index):
        return [[0], [2, 3]][index]


@pytest.fixture
def parser_double(tensorrt_double, monkeypatch):
    from poly.trt.inspection import onnx_capability
    from poly.trt.networks import creation as network

    # a logger of the double's own, never the process-wide one that the real TensorRT gets
    for module in (network, onnx_capability):
        monkeypatch.setattr(module, "get_trt_logger", _ILogger, raising=True)
    for name, value in (("ILogger", _ILogger), ("Builder", _Builder)):
        monkeypatch.setattr(tensorrt_double, name, value, raising=False)
    CALLS.clear()
    return tensorrt_double


def test_older_tensorrt_uses_supports_model(parser_double, monkeypatch, tmp_path):
    from poly.trt.inspection import onnx_capability

    monkeypatch.setattr(parser_double, "OnnxParser", _OldParser, raising=False)
    model = tmp_path / "m.onnx"
    model.write_bytes(b"model bytes")
    supported, nodelists, _ = onnx_capability.supports_model(str(model))
    assert (supported, nodelists) == (False, [([0, 1], True), ([3], True)])
    assert CALLS == [("supports_model", b"model bytes", str(model.resolve()))]


def test_supports_model_v2_is_preferred(parser_double, monkeypatch, tmp_path):
    from poly.trt.inspection import onnx_capability

    monkeypatch.setattr(parser_double, "OnnxParser", _NewParser, raising=False)
    model = tmp_path / "m.onnx"
    model.write_bytes(b"other bytes")
    supported, nodelists, _ = onnx_capability.supports_model(str(model))
    assert (supported, nodelists) == (False, [([0], False), ([2, 3], True)])
    assert CALLS == [("supports_model_v2", b"other bytes", str(model.resolve()))]


def test_a_parser_without_either_is_one_error(parser_double, monkeypatch, tmp_path):
    from poly.core import PolyException
    from poly.trt.inspection import onnx_capability

    monkeypatch.setattr(parser_double, "OnnxParser", lambda network, logger: types.SimpleNamespace(), raising=False)
    model = tmp_path / "m.onnx"
    model.write_bytes(b"x")
    with pytest.raises(PolyException, match="supports_model_v2 / supports_model of the ONNX parser is not available"):
        onnx_capability.supports_model(str(model))
