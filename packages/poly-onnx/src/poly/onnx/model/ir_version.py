"""
Keeping models readable by the installed ONNX-Runtime.

onnx stamps new models with its newest IR version (onnx 1.23 writes IR 14), which an older
ONNX-Runtime refuses even when nothing in the model needs it. ``LowerIrVersion`` lowers the
stamp to what the runtime reads whenever the model's opsets and data types allow it, with a
warning, and otherwise fails with one line that says what is too new. The limits of the
installed ONNX-Runtime are read from ONNX-Runtime itself, and what each IR version allows
from ``onnx.helper.VERSION_TABLE``.
"""

import functools
import re
from typing import Any

from poly.core import G_LOGGER
from poly.core.func import funcify
from poly.core.optional_import import lazy_import
from poly.onnx.model.base import BaseLoadOnnxCopy, iter_graphs
from poly.onnx.model.errors import UnsupportedModelError

onnx = lazy_import("onnx")
onnxrt = lazy_import("onnxruntime")

__all__ = [
    "onnxruntime_max_ir_version",
    "onnxruntime_max_opset",
    "required_ir_version",
    "LowerIrVersion",
    "lower_ir_version",
]

# TensorProto data types and the IR version that introduced them (onnx.proto's Version notes).
_TYPE_MIN_IR = {
    "BFLOAT16": 4,
    "FLOAT8E4M3FN": 9,
    "FLOAT8E4M3FNUZ": 9,
    "FLOAT8E5M2": 9,
    "FLOAT8E5M2FNUZ": 9,
    "UINT4": 10,
    "INT4": 10,
    "FLOAT4E2M1": 11,
    "FLOAT8E8M0": 12,
    "UINT2": 13,
    "INT2": 13,
    "FLOAT6E2M3": 14,
    "FLOAT6E3M2": 14,
}

# Columns of onnx.helper.VERSION_TABLE rows: (release, IR, ai.onnx, ai.onnx.ml, ai.onnx.training).
_DOMAIN_COLUMN = {"": 2, "ai.onnx": 2, "ai.onnx.ml": 3, "ai.onnx.training": 4, "ai.onnx.preview.training": 4}


def _probe_model(ir_version: Any, opset: Any) -> Any:
    helper, TensorProto = onnx.helper, onnx.TensorProto
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "probe", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = ir_version
    return model.SerializeToString()


def _probe(ir_version: Any, opset: Any, pattern: Any) -> Any:
    # ONNX-Runtime states its limit when it refuses a model; asking with an absurd version makes it say so.
    options = onnxrt.SessionOptions()
    options.log_severity_level = 3
    try:
        onnxrt.InferenceSession(_probe_model(ir_version, opset), options, providers=["CPUExecutionProvider"])
    except Exception as err:
        match = re.search(pattern, str(err))
        if match:
            return int(match.group(1))
        G_LOGGER.verbose(f"Could not read a version limit from ONNX-Runtime's error: {err}")
    return None


@functools.cache
def onnxruntime_max_ir_version() -> Any:
    """
    Returns the newest model IR version the installed ONNX-Runtime loads.

    Falls back to ``onnx.IR_VERSION`` when ONNX-Runtime does not say.
    """
    found = _probe(10_000, 7, r"max supported IR version: (\d+)")
    return found if found is not None else onnx.IR_VERSION


@functools.cache
def onnxruntime_max_opset() -> Any:
    """
    Returns the newest ``ai.onnx`` opset the installed ONNX-Runtime officially supports.

    Falls back to ``onnx.defs.onnx_opset_version()`` when ONNX-Runtime does not say.
    """
    found = _probe(7, 10_000, r"is till opset (\d+)")
    return found if found is not None else onnx.defs.onnx_opset_version()


def _min_ir_for_opset(domain: Any, version: Any) -> tuple[Any, ...]:
    column = _DOMAIN_COLUMN.get(domain)
    if column is None:
        return None, None  # custom domains put no constraint on the IR version
    candidates = [
        row[1] for row in onnx.helper.VERSION_TABLE if row[column] is not None and row[column] >= version
    ]
    if not candidates:
        return onnx.IR_VERSION, f"opset {version} of domain '{domain or 'ai.onnx'}' is newer than onnx knows"
    return min(candidates), f"opset {version} of domain '{domain or 'ai.onnx'}'"


def _used_types(model: Any) -> Any:
    used = set()

    def visit_type(type_proto: Any) -> None:
        kind = type_proto.WhichOneof("value")
        if kind in ("tensor_type", "sparse_tensor_type"):
            used.add(getattr(type_proto, kind).elem_type)
        elif kind == "sequence_type":
            visit_type(type_proto.sequence_type.elem_type)
        elif kind == "optional_type":
            visit_type(type_proto.optional_type.elem_type)
        elif kind == "map_type":
            used.add(type_proto.map_type.key_type)
            visit_type(type_proto.map_type.value_type)

    for graph in iter_graphs(model.graph):
        for value_info in (*graph.input, *graph.output, *graph.value_info):
            visit_type(value_info.type)
        used.update(t.data_type for t in graph.initializer)
        for node in graph.node:
            for attr in node.attribute:
                if attr.type == onnx.AttributeProto.TENSOR:
                    used.add(attr.t.data_type)
                elif attr.type == onnx.AttributeProto.INT and attr.name in ("to", "dtype", "output_datatype"):
                    used.add(attr.i)
    return used


def required_ir_version(model: Any) -> tuple[Any, ...]:
    """
    Returns the lowest IR version ``model`` can be stamped with, and why.

    The IR version must be at least the one released with each opset the model imports, and
    at least the one that introduced each data type it uses.

    Returns:
        Tuple[int, str]: The version and a description of what requires it.
    """
    required, reason = 3, "the IR version that introduced opset imports"
    opsets = [*model.opset_import, *(o for function in model.functions for o in function.opset_import)]
    for opset in opsets:
        version, why = _min_ir_for_opset(opset.domain, opset.version)
        if version is not None and version > required:
            required, reason = version, why
    names = {value: name for name, value in onnx.TensorProto.DataType.items()}
    for elem_type in _used_types(model):
        name = names.get(elem_type)
        version = _TYPE_MIN_IR.get(name, 0)  # type: ignore[arg-type]
        if version > required:
            required, reason = version, f"data type {name}"
    return required, reason


def _onnx_opset(model: Any) -> Any:
    for opset in model.opset_import:
        if opset.domain in ("", "ai.onnx"):
            return opset.version
    return None


class LowerIrVersion(BaseLoadOnnxCopy):
    """
    Functor that lowers a model's IR version to one that the target runtime (by default the
    installed ONNX-Runtime) reads, when the model's opsets and data types allow it.
    """

    def __init__(self, model: Any, max_ir_version: Any = None, max_opset: Any = None, copy: Any = None) -> None:
        """
        Lowers the IR version of an ONNX model.

        Args:
            model (Union[onnx.ModelProto, Callable() -> onnx.ModelProto]):
                    An ONNX model or a callable that returns one.
            max_ir_version (int):
                    The newest IR version the target reads.
                    Defaults to what the installed ONNX-Runtime reads.
            max_opset (int):
                    The newest ``ai.onnx`` opset the target supports; a model importing a newer one
                    is refused. Defaults to ONNX-Runtime's limit when ``max_ir_version`` is not given,
                    else no limit.
            copy (bool): Whether to work on a copy of the model. Defaults to True.
        """
        super().__init__(model, copy)
        self.max_ir_version = max_ir_version
        self.max_opset = max_opset

    def call_impl(self) -> Any:
        """
        Returns:
            onnx.ModelProto: The model, with an IR version the target reads.

        Raises:
            UnsupportedModelError: If the model's opsets or data types need a newer IR version,
                    or it imports an opset newer than the target supports.
        """
        model = self.load()
        for_onnxruntime = self.max_ir_version is None
        target = f"ONNX-Runtime {onnxrt.__version__}" if for_onnxruntime else "the target runtime"
        max_ir = onnxruntime_max_ir_version() if for_onnxruntime else int(self.max_ir_version)
        max_opset = self.max_opset
        if max_opset is None and for_onnxruntime:
            max_opset = onnxruntime_max_opset()

        opset = _onnx_opset(model)
        if max_opset is not None and opset is not None and opset > max_opset:
            G_LOGGER.critical(
                f"The model imports ai.onnx opset {opset}, but {target} supports at most opset {max_opset}. "
                f"Re-export it with opset {max_opset} or lower (or try onnx.version_converter.convert_version), "
                "or upgrade the runtime",
                UnsupportedModelError,
            )

        if model.ir_version <= max_ir:
            return model

        required, reason = required_ir_version(model)
        if required > max_ir:
            G_LOGGER.critical(
                f"The model has IR version {model.ir_version}, but {target} reads at most IR version {max_ir}, "
                f"and the model cannot be lowered to it: {reason} needs IR version {required}. "
                "Re-export the model with an older opset, or upgrade the runtime",
                UnsupportedModelError,
            )
        G_LOGGER.warning(
            f"Lowering the model's IR version from {model.ir_version} to {max_ir}, the newest {target} reads "
            f"(its opsets and data types need only IR version {required})"
        )
        model.ir_version = max_ir
        return model


lower_ir_version = funcify(LowerIrVersion)
