"""
Creating TensorRT networks: ``CreateNetwork`` (empty), ``NetworkFromOnnxPath`` and
``NetworkFromOnnxBytes`` (through TensorRT's ONNX parser, with parser errors reported by node
name), and ``unpack_network``, which every loader taking a network uses.
"""

import os
from typing import Any

from poly.core import G_LOGGER, BaseLoader, PolyException
from poly.core.func import funcify, invoke_if_callable
from poly.trt.builder.config import enum_member
from poly.trt.tensorrt_module import trt
from poly.trt.trt_logger import errors_as_verbose, get_trt_logger

__all__ = [
    "CreateNetwork",
    "create_network",
    "NetworkFromOnnxPath",
    "network_from_onnx_path",
    "NetworkFromOnnxBytes",
    "network_from_onnx_bytes",
    "OnnxParseError",
    "unpack_network",
    "format_parser_errors",
]


class OnnxParseError(PolyException):
    """TensorRT's ONNX parser refused a model."""


def unpack_network(network: Any) -> tuple[Any, ...]:
    """
    Resolves a network argument: a ``(builder, network[, parser])`` tuple or a loader that
    returns one. Returns ``(builder, network, parser_or_None)``.
    """
    value = invoke_if_callable(network)
    if not isinstance(value, (tuple, list)) or len(value) not in (2, 3):
        G_LOGGER.critical(
            "Expected a TensorRT network as a (builder, network[, parser]) tuple or a loader returning one, "
            f"got: {type(value).__name__}"
        )
    builder, net = value[0], value[1]
    parser = value[2] if len(value) == 3 else None
    return builder, net, parser


def _creation_flags(strongly_typed: Any) -> Any:
    flags = 0
    if strongly_typed:
        flag = getattr(trt.NetworkDefinitionCreationFlag, "STRONGLY_TYPED", None)
        if flag is None:
            G_LOGGER.critical(f"Strongly typed networks are not supported by {trt.__name__}")
        flags |= 1 << int(flag)
    return flags


def _new_network(strongly_typed: Any, mark_unfused_tensors_as_debug_tensors: bool = False) -> tuple[Any, ...]:
    builder = trt.Builder(get_trt_logger())
    network = builder.create_network(_creation_flags(strongly_typed))
    if network is None:
        G_LOGGER.critical("TensorRT could not create a network (see its errors above)")
    if mark_unfused_tensors_as_debug_tensors:
        if not hasattr(network, "mark_unfused_tensors_as_debug_tensors"):
            G_LOGGER.critical(f"Marking unfused tensors as debug tensors is not available in {trt.__name__}")
        if not network.mark_unfused_tensors_as_debug_tensors():
            G_LOGGER.critical("TensorRT refused to mark the unfused tensors as debug tensors")
    return builder, network


class CreateNetwork(BaseLoader):
    """Functor that creates an empty TensorRT network, to be filled by the network API."""

    def __init__(self, explicit_batch: Any = None, strongly_typed: Any = None, mark_unfused_tensors_as_debug_tensors: Any = None) -> None:
        """
        Args:
            explicit_batch (bool): Accepted for compatibility; every network is explicit-batch.
            strongly_typed (bool): Create a strongly typed network (types come from the model,
                    builder precision flags do not apply). TensorRT-RTX networks always are.
            mark_unfused_tensors_as_debug_tensors (bool): Make every tensor the builder does not
                    fuse away a debug tensor (``INetworkDefinition.mark_unfused_tensors_as_debug_tensors``).
        """
        self.strongly_typed = bool(strongly_typed)
        self.mark_unfused_tensors_as_debug_tensors = bool(mark_unfused_tensors_as_debug_tensors)

    def call_impl(self) -> Any:
        """
        Returns:
            (trt.Builder, trt.INetworkDefinition): The builder and the empty network.
        """
        return _new_network(self.strongly_typed, self.mark_unfused_tensors_as_debug_tensors)


def format_parser_errors(parser: Any, source: Any) -> str:
    """One message listing every error of ``parser``, naming each failing node and operator."""
    lines = []
    for index in range(parser.num_errors):
        err = parser.get_error(index)
        where = []
        node_name = _call(err, "node_name")
        operator = _call(err, "node_operator")
        node_index = _call(err, "node")
        if node_name or operator:
            where.append(f"node '{node_name or '?'}' ({operator or '?'}")
            where[-1] += f", #{node_index})" if isinstance(node_index, int) and node_index >= 0 else ")"
        code = _call(err, "code")
        code = str(code).split(".")[-1] if code is not None else ""
        desc = str(_call(err, "desc") or "").strip()
        lines.append(f"{' '.join(where) + ': ' if where else ''}{desc}{f' [{code}]' if code else ''}")
    detail = "; ".join(lines) if lines else "no error was reported"
    return f"TensorRT's ONNX parser failed on {source}: {detail}"


def _call(obj: Any, name: Any) -> Any:
    method = getattr(obj, name, None)
    try:
        return method() if callable(method) else None
    except Exception:
        return None


class _BaseNetworkFromOnnx(BaseLoader):
    def __init__(self, flags: Any = None, plugin_instancenorm: Any = None, strongly_typed: Any = None,
                 mark_unfused_tensors_as_debug_tensors: Any = None) -> None:
        self.flags = list(flags or [])
        self.plugin_instancenorm = plugin_instancenorm
        self.strongly_typed = bool(strongly_typed)
        self.mark_unfused_tensors_as_debug_tensors = bool(mark_unfused_tensors_as_debug_tensors)

    def _parse(self, parse: Any, source: Any) -> tuple[Any, ...]:
        builder, network = _new_network(self.strongly_typed, self.mark_unfused_tensors_as_debug_tensors)
        parser = trt.OnnxParser(network, get_trt_logger())
        for flag in self.flags:
            parser.set_flag(enum_member(trt.OnnxParserFlag, flag, "ONNX parser flag"))
        native = getattr(trt.OnnxParserFlag, "NATIVE_INSTANCENORM", None)
        if native is not None and self.plugin_instancenorm is True:
            parser.clear_flag(native)
        elif native is not None and self.plugin_instancenorm is False:
            parser.set_flag(native)
        with errors_as_verbose():
            ok = parse(parser)
        if not ok:
            G_LOGGER.critical(format_parser_errors(parser, source), OnnxParseError)
        G_LOGGER.verbose(
            lambda: (
                f"Parsed {source}: {network.num_inputs} input(s), {network.num_outputs} output(s), "
                f"{network.num_layers} layer(s)"
            )
        )
        return builder, network, parser


class NetworkFromOnnxPath(_BaseNetworkFromOnnx):
    """Functor that parses an ONNX file (external data next to it) into a TensorRT network."""

    def __init__(self, path: Any, flags: Any = None, plugin_instancenorm: Any = None, strongly_typed: Any = None,
                 mark_unfused_tensors_as_debug_tensors: Any = None) -> None:
        """
        Args:
            path (Union[str, os.PathLike, Callable() -> str]): The ONNX model's path.
            flags (List[trt.OnnxParserFlag or str]): ONNX parser flags to set.
            plugin_instancenorm (bool): True uses the InstanceNormalization plugin (clears
                    ``NATIVE_INSTANCENORM``), False the native layer; None keeps the parser's default.
            strongly_typed (bool): Create a strongly typed network.
            mark_unfused_tensors_as_debug_tensors (bool): Mark every tensor the builder does not
                    fuse away as a debug tensor.
        """
        super().__init__(flags, plugin_instancenorm, strongly_typed, mark_unfused_tensors_as_debug_tensors)
        self.path = path

    def call_impl(self) -> Any:
        """
        Returns:
            (trt.Builder, trt.INetworkDefinition, trt.OnnxParser)
        """
        path = os.fspath(invoke_if_callable(self.path))
        source = f"'{path}'"
        if not os.path.isfile(path):
            G_LOGGER.critical(f"Failed to parse ONNX model {source}: the file does not exist", OnnxParseError)
        G_LOGGER.info(f"Parsing ONNX model with {trt.__name__}: {path}")
        return self._parse(lambda parser: parser.parse_from_file(os.path.abspath(path)), source)


class NetworkFromOnnxBytes(_BaseNetworkFromOnnx):
    """Functor that parses a serialized ONNX model (or a ``ModelProto``) into a TensorRT network."""

    def __init__(self, model_bytes: Any, flags: Any = None, plugin_instancenorm: Any = None, strongly_typed: Any = None,
                 mark_unfused_tensors_as_debug_tensors: Any = None) -> None:
        """
        Args:
            model_bytes (Union[bytes, onnx.ModelProto, Callable() -> either]): The model.
            flags, plugin_instancenorm, strongly_typed, mark_unfused_tensors_as_debug_tensors:
                    As for ``NetworkFromOnnxPath``.
        """
        super().__init__(flags, plugin_instancenorm, strongly_typed, mark_unfused_tensors_as_debug_tensors)
        self._model_bytes = model_bytes

    def call_impl(self) -> Any:
        """
        Returns:
            (trt.Builder, trt.INetworkDefinition, trt.OnnxParser)
        """
        data = invoke_if_callable(self._model_bytes)
        if hasattr(data, "SerializeToString"):
            data = data.SerializeToString()
        if not isinstance(data, (bytes, bytearray, memoryview)):
            G_LOGGER.critical(
                f"NetworkFromOnnxBytes expects serialized ONNX bytes or a ModelProto, got: {type(data).__name__}"
            )
        return self._parse(lambda parser: parser.parse(bytes(data)), "the ONNX model bytes")


create_network = funcify(CreateNetwork)
network_from_onnx_path = funcify(NetworkFromOnnxPath)
network_from_onnx_bytes = funcify(NetworkFromOnnxBytes)
