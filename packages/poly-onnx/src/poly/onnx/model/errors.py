"""
Clear, one-line errors for the ways an ONNX model fails to load or run: a truncated or
non-ONNX file, a missing or short external-data file, an op no registry knows, and the
failures ONNX-Runtime reports in its own terms.
"""

import os
import re
from collections.abc import Iterator
from typing import Any

from poly.core import G_LOGGER, PolyException
from poly.core.optional_import import lazy_import
from poly.onnx.model.base import iter_graphs

onnx = lazy_import("onnx")
protobuf_message = lazy_import("google.protobuf.message", install="protobuf")
ort_pybind = lazy_import("onnxruntime.capi.onnxruntime_pybind11_state", install="onnxruntime")

__all__ = [
    "ModelLoadError",
    "UnsupportedModelError",
    "parse_model_bytes",
    "check_is_model",
    "external_data_tensors",
    "check_external_data",
    "find_unknown_ops",
    "check_known_ops",
    "explain_onnxruntime_error",
]

ONNX_DOMAINS = ("", "ai.onnx", "ai.onnx.ml", "ai.onnx.preview.training")
"""Domains whose operators are defined by the ONNX standard (onnx.defs)."""


class ModelLoadError(PolyException):
    """A file or byte string that cannot be read as an ONNX model (with all its weights)."""


class UnsupportedModelError(PolyException):
    """A well-formed model that uses something the installed libraries cannot handle."""


def _where(source: Any) -> Any:
    return f" {source}" if source else ""


def _guess_content(data: Any) -> str:
    # Says what the bytes look like when they are not a parsable ModelProto.
    head = bytes(data[:16])
    if not head:
        return "it is empty"
    if head[:1] in (b"{", b"["):
        return "it looks like JSON, not an ONNX model"
    if head[:2] == b"PK":
        return "it looks like a zip archive (e.g. .npz or a PyTorch checkpoint), not an ONNX model"
    if head[:6] == b"\x93NUMPY":
        return "it looks like a NumPy .npy file, not an ONNX model"
    # A serialized ModelProto starts with field 1 (ir_version, a small varint): tag byte 0x08.
    if head[0] == 0x08 and len(head) > 1 and 0 < head[1] < 64:
        return "it starts like an ONNX model but is truncated or corrupt"
    return "it is not an ONNX model (or is corrupt)"


def parse_model_bytes(data: Any, source: Any = None) -> Any:
    """
    Parses a serialized ``ModelProto``.

    Args:
        data (bytes): The serialized model.
        source (str): What the bytes came from (a quoted path), for error messages.

    Returns:
        onnx.ModelProto

    Raises:
        ModelLoadError: If the bytes are not a complete ONNX model.
    """
    model = onnx.ModelProto()
    decode_error = protobuf_message.DecodeError
    try:
        model.ParseFromString(data)
    except (decode_error, RuntimeError, ValueError) as err:
        G_LOGGER.critical(
            f"Failed to load ONNX model{_where(source)}: {_guess_content(data)} (protobuf: {err})",
            ModelLoadError,
        )
    check_is_model(model, source, data)
    return model


def check_is_model(model: Any, source: Any = None, data: Any = None) -> None:
    """
    Rejects a ``ModelProto`` that parsed but is not a model: no graph, no IR version, or no
    opset for a graph that has nodes (what a file cut at a field boundary looks like).

    Raises:
        ModelLoadError
    """
    problem = None
    if not model.HasField("graph") or model.ir_version <= 0:
        problem = _guess_content(data) if data is not None else "it has no graph or IR version"
        if data is not None and "truncated" not in problem and "empty" not in problem:
            problem = "it is not an ONNX model (no graph or IR version found)"
    elif model.graph.node and not model.opset_import:
        problem = "it has no opset imports; the file is probably truncated"
    if problem:
        G_LOGGER.critical(f"Failed to load ONNX model{_where(source)}: {problem}", ModelLoadError)


def _external_int(info: Any, key: Any, tensor: Any, source: Any) -> Any:
    text = info.get(key)
    if text is None or text == "":
        return None
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        G_LOGGER.critical(
            f"Failed to load ONNX model{_where(source)}: the external data {key} of tensor '{tensor.name}' is "
            f"{text!r}, not a byte count",
            ModelLoadError,
        )
    return value


def _external_info(tensor: Any, source: Any = None) -> tuple[Any, ...]:
    info = {entry.key: entry.value for entry in tensor.external_data}
    offset = _external_int(info, "offset", tensor, source) or 0
    return info.get("location", ""), offset, _external_int(info, "length", tensor, source)


def _inside(base_dir: Any, location: Any) -> bool:
    # Relative, and still inside base_dir once "..", symbolic links and the like are resolved.
    if not location or "\0" in location or os.path.isabs(location):
        return False
    base = os.path.realpath(base_dir)
    return os.path.commonpath([base, os.path.realpath(os.path.join(base, location))]) == base


def external_data_tensors(model: Any) -> Iterator[Any]:
    """Yields the tensors (initializers and Constant values, subgraphs included) stored externally."""
    for graph in iter_graphs(model.graph):
        for tensor in graph.initializer:
            if tensor.data_location == onnx.TensorProto.EXTERNAL:
                yield tensor
        for node in graph.node:
            for attr in node.attribute:
                if (
                    attr.type == onnx.AttributeProto.TENSOR
                    and attr.t.data_location == onnx.TensorProto.EXTERNAL
                ):
                    yield attr.t


def check_external_data(model: Any, base_dir: Any, source: Any = None) -> None:
    """
    Checks that every external-data location of ``model`` is a relative path inside
    ``base_dir``, names a file that exists, and that the file is long enough for the bytes each
    tensor claims (offset and length being byte counts).

    Raises:
        ModelLoadError: Naming the first bad location, missing or short file and a tensor that needs it.
    """
    sizes = {}
    for tensor in external_data_tensors(model):
        location, offset, length = _external_info(tensor, source)
        if not _inside(base_dir, location):
            G_LOGGER.critical(
                f"Failed to load ONNX model{_where(source)}: the external data location {location!r} of tensor "
                f"'{tensor.name}' is not a relative path inside '{base_dir}'; refusing to read it",
                ModelLoadError,
            )
        path = os.path.join(base_dir, location)
        if path not in sizes:
            sizes[path] = os.path.getsize(path) if os.path.isfile(path) else None
        size = sizes[path]
        if size is None:
            problem = "is not a regular file" if os.path.exists(path) else "does not exist"
            G_LOGGER.critical(
                f"Failed to load ONNX model{_where(source)}: its external data file '{location}' "
                f"(weights of tensor '{tensor.name}') {problem} in '{base_dir}'. "
                "Hint: pass external_data_dir=<directory with the data>, or ignore_external_data=True "
                "to load the structure only",
                ModelLoadError,
            )
        needed = offset + (length if length is not None else 0)
        if needed > size:
            G_LOGGER.critical(
                f"Failed to load ONNX model{_where(source)}: its external data file '{path}' holds "
                f"{size} bytes but tensor '{tensor.name}' needs bytes up to {needed}; the file is truncated",
                ModelLoadError,
            )


def _opset_map(model: Any) -> dict[Any, Any]:
    return {("ai.onnx" if imp.domain == "" else imp.domain): imp.version for imp in model.opset_import}


def _onnxruntime_schemas() -> Any:
    # (domain, op) pairs ONNX-Runtime itself registers (com.microsoft contrib ops and others).
    try:
        return {(schema.domain, schema.name) for schema in ort_pybind.get_all_operator_schema()}
    except Exception:  # onnxruntime missing or too old: only the ONNX standard can be checked
        return None


def find_unknown_ops(model: Any) -> Any:
    """
    Returns the nodes (subgraphs included) whose op no registry knows: not an ONNX standard op
    at the model's opset, not a function defined in the model, not an ONNX-Runtime op.
    Ops in other (custom) domains are not reported: they may be plugins of some backend.

    Returns:
        List[Tuple[str, str, str, int]]: (node name, op type, domain, opset) of each such node.
    """
    opsets = _opset_map(model)
    functions = {(func.domain, func.name) for func in model.functions}
    ort_schemas = False  # not yet queried
    unknown = []
    for graph in iter_graphs(model.graph):
        for node in graph.node:
            domain = node.domain or "ai.onnx"
            if (node.domain, node.op_type) in functions:
                continue
            version = opsets.get(domain)
            if domain in ONNX_DOMAINS:
                schema_domain = "" if domain == "ai.onnx" else domain
                if version is not None and onnx.defs.has(node.op_type, version, schema_domain):
                    continue
            else:
                # Only ONNX-Runtime's own domain can be checked; others may hold backend plugins.
                if domain != "com.microsoft":
                    continue
                if ort_schemas is False:
                    ort_schemas = _onnxruntime_schemas()
                if ort_schemas is None or (node.domain, node.op_type) in ort_schemas:  # type: ignore[operator]
                    continue
            unknown.append((node.name, node.op_type, domain, version))
    return unknown


def check_known_ops(model: Any, source: Any = None) -> None:
    """
    Raises one clear error naming the first unknown op (see ``find_unknown_ops``).

    Raises:
        UnsupportedModelError
    """
    unknown = find_unknown_ops(model)
    if not unknown:
        return
    name, op, domain, version = unknown[0]
    schema_domain = "" if domain == "ai.onnx" else domain
    later = domain in ONNX_DOMAINS and onnx.defs.has(op, schema_domain)
    reason = (
        f"it is not part of opset {version} of domain '{domain}' (only of later opsets)"
        if later and version is not None
        else f"no operator of that name exists in domain '{domain}'"
    )
    others = f" ({len(unknown) - 1} more node(s) with unknown ops)" if len(unknown) > 1 else ""
    G_LOGGER.critical(
        f"Unknown op '{op}' at node '{name}' in ONNX model{_where(source)}: {reason}{others}",
        UnsupportedModelError,
    )


_ORT_PATTERNS = [
    (
        re.compile(r"No Op registered for (\S+) with domain_version of (\d+)"),
        lambda m: f"Unknown op '{m[1]}': ONNX-Runtime knows no such operator at opset {m[2]}",
    ),
    (
        re.compile(r"Could not find an implementation for (\S+?)\((\d+)\) node with name '([^']*)'"),
        lambda m: (
            f"ONNX-Runtime has no kernel for op '{m[1]}' (opset {m[2]}) at node '{m[3]}' "
            "for its input data types on the selected execution providers"
        ),
    ),
    (
        re.compile(r"Unsupported model IR version: (\d+), max supported IR version: (\d+)"),
        lambda m: f"The model's IR version {m[1]} is newer than ONNX-Runtime supports (at most {m[2]})",
    ),
    (
        re.compile(r"Current official support for domain (\S+) is till opset (\d+)"),
        lambda m: f"The model's opset of domain {m[1]} is newer than ONNX-Runtime supports (at most {m[2]})",
    ),
    (
        re.compile(r"External data path does not exist: \"?([^\"\n]+)\"?"),
        lambda m: f"An external data file of the model does not exist: {m[1].strip()}",
    ),
    (
        re.compile(r"Protobuf parsing failed"),
        lambda m: "The model is truncated or is not an ONNX model (protobuf parsing failed)",
    ),
]


def explain_onnxruntime_error(err: Any, source: Any = None) -> Any:
    """
    Turns an ONNX-Runtime exception into a ``PolyException`` with one readable line.

    Args:
        err (Exception): What ONNX-Runtime raised.
        source (str): The model's path (quoted) or a description, for the message.

    Returns:
        PolyException: An ``UnsupportedModelError`` for IR/opset/op problems, a
        ``ModelLoadError`` for unreadable files, else a ``PolyException``; raise it ``from err``.
    """
    text = str(err)
    suffix = f" (model: {source})" if source else ""
    for index, (pattern, describe) in enumerate(_ORT_PATTERNS):
        match = pattern.search(text)
        if match:
            kind = ModelLoadError if index >= 4 else UnsupportedModelError
            return kind(describe(match) + suffix)
    # Keep the message, minus ONNX-Runtime's source location and C++ signature noise.
    first = text.strip().splitlines()[0] if text.strip() else type(err).__name__
    first = re.sub(r"\S+\.(cc|h|cpp):\d+ (\S+::)*\S+\(.*?\)\s*", "", first)
    return PolyException(f"ONNX-Runtime failed: {first}{suffix}")
