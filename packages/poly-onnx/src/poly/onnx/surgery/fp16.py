"""
``ConvertToFp16``: float32 weights and activations of an ONNX model to float16.

Each node of the main graph is converted when its op accepts float16 where it now takes
float32 (as its ONNX schema says) and it is not blocked; blocked nodes keep float32 and get
Casts around them. Weights are converted once, ahead of time, when every reader wants float16.
Graph inputs and outputs stay float32 unless asked otherwise, through Casts at the edges.
Subgraphs (If/Loop/Scan bodies) and ops outside the ONNX standard are left in float32.
"""

from collections.abc import Iterator
from typing import Any

import numpy as np

from poly.core import G_LOGGER
from poly.core.func import funcify
from poly.core.optional_import import lazy_import
from poly.onnx.model.base import BaseLoadOnnxCopy

numpy_helper = lazy_import("onnx.numpy_helper")
onnx = lazy_import("onnx")
ort_pybind = lazy_import("onnxruntime.capi.onnxruntime_pybind11_state", install="onnxruntime")

__all__ = [
    "ConvertToFp16",
    "convert_to_fp16",
    "DEFAULT_FP16_OP_BLOCK_LIST",
    "onnxruntime_fp16_op_block_list",
]

DEFAULT_FP16_OP_BLOCK_LIST = (
    # Index and coordinate computations, where float16's 11-bit mantissa loses whole values.
    "Range",
    "CumSum",
    "NonMaxSuppression",
    "RoiAlign",
    "TopK",
    # Resizing reads float32 scales; its float16 kernels are missing in common runtimes.
    "Resize",
    "Upsample",
    # Random generators and EyeLike choose their output type through attributes.
    "RandomNormal",
    "RandomUniform",
    "RandomNormalLike",
    "RandomUniformLike",
    "Multinomial",
    "Bernoulli",
    "EyeLike",
)
"""Ops kept in float32 by default."""

_FLOAT = 1  # onnx.TensorProto.FLOAT
_HALF = 10  # onnx.TensorProto.FLOAT16
_FP16_MAX = 65504.0
_STANDARD_DOMAINS = ("", "ai.onnx")


def onnxruntime_fp16_op_block_list(provider: str = "CPUExecutionProvider", opset: Any = None) -> Any:
    """
    Returns ``DEFAULT_FP16_OP_BLOCK_LIST`` plus the ops that the installed ONNX-Runtime runs in
    float32 but not in float16 on ``provider``.

    ONNX-Runtime's CPU provider, for one, has no float16 kernels for Conv, MatMul, Relu or Add;
    it runs such nodes of a float16 model in float32 between Casts it inserts itself. With this
    block list the Casts are in the model instead, and only the weights and the tensors between
    float16-capable ops (Concat, Reshape, Transpose...) are stored in float16.

    Args:
        provider (str): The execution provider.
        opset (int): Consider only kernels registered for this ``ai.onnx`` opset. Defaults to any.

    Returns:
        List[str]
    """
    has_float, has_half = set(), set()
    for kernel in ort_pybind.get_all_opkernel_def():
        if kernel.provider != provider or kernel.domain not in _STANDARD_DOMAINS:
            continue
        first, last = kernel.version_range
        if opset is not None and not first <= opset <= last:
            continue
        types = {t for allowed in kernel.type_constraints.values() for t in allowed}
        if "tensor(float)" in types:
            has_float.add(kernel.op_name)
        if "tensor(float16)" in types:
            has_half.add(kernel.op_name)
    return sorted(set(DEFAULT_FP16_OP_BLOCK_LIST) | (has_float - has_half))


def _subgraphs(node: Any) -> Iterator[Any]:
    for attr in node.attribute:
        if attr.type == onnx.AttributeProto.GRAPH:
            yield attr.g
        elif attr.type == onnx.AttributeProto.GRAPHS:
            yield from attr.graphs


def _outer_names(graph: Any, defined: Any = None) -> Any:
    """Names a subgraph reads from enclosing scopes."""
    defined = set(defined or ())
    defined.update(i.name for i in graph.input)
    defined.update(t.name for t in graph.initializer)
    used = set()
    for node in graph.node:
        for sub in _subgraphs(node):
            used |= _outer_names(sub, defined | set(o for n in graph.node for o in n.output))
        used.update(name for name in node.input if name)
        defined.update(node.output)
    used.update(o.name for o in graph.output)
    return used - defined


def _rename_in_subgraphs(node: Any, old: Any, new: Any) -> None:
    for sub in _subgraphs(node):
        for inner in sub.node:
            for i, name in enumerate(inner.input):
                if name == old:
                    inner.input[i] = new
            _rename_in_subgraphs(inner, old, new)
        for out in sub.output:
            if out.name == old:
                out.name = new


def _shape_computations(nodes: Any, graph: Any, types: Any) -> Any:
    """
    Returns the indices of nodes that compute shapes or indices rather than activations: nodes
    fed by Shape/Size results or integer graph inputs (directly or through other such nodes)
    and by no float activation. They stay float32, where integers up to 2**24 are exact
    (float16 is exact only up to 2048).
    """
    constants_ = {t.name for t in graph.initializer}
    derived = {i.name for i in graph.input if types.get(i.name) not in (None, _FLOAT, _HALF)} - constants_
    result = set()
    for index, node in enumerate(nodes):
        if node.op_type == "Constant":
            constants_.update(node.output)
            continue
        if node.op_type in ("Shape", "Size"):
            derived.update(name for name in node.output if name)
            continue
        inputs = [name for name in node.input if name]
        float_activation = any(
            types.get(name) in (_FLOAT, _HALF) and name not in derived and name not in constants_
            for name in inputs
        )
        if not float_activation and any(name in derived for name in inputs):
            result.add(index)
            derived.update(name for name in node.output if name)
    return result


def _to_half_array(array: Any, name: Any) -> Any:
    overflow = np.count_nonzero(np.abs(array[np.isfinite(array)]) > _FP16_MAX)
    if overflow:
        G_LOGGER.warning(
            f"{overflow} value(s) of '{name}' exceed the float16 range; clamping them to +-{_FP16_MAX}"
        )
        array = np.where(np.isfinite(array), np.clip(array, -_FP16_MAX, _FP16_MAX), array)
    return array.astype(np.float16)


def _half_tensor(tensor: Any, name: Any = None) -> Any:
    array = numpy_helper.to_array(tensor)
    return numpy_helper.from_array(
        _to_half_array(array, tensor.name), name if name is not None else tensor.name
    )


class _Decision:
    __slots__ = ("convert", "inputs", "outputs")

    def __init__(self, convert: Any, inputs: Any, outputs: Any) -> None:
        self.convert = convert
        self.inputs = inputs  # wanted data type of each input (None: whatever it is)
        self.outputs = outputs  # data type of each output after conversion (None: unknown)


class ConvertToFp16(BaseLoadOnnxCopy):
    """
    Functor that converts the float32 tensors of a model (weights and activations) to float16.
    This is not needed to use TensorRT's fp16 precision, but may be useful for other backends.
    """

    def __init__(self, model: Any, keep_io_types: Any = None, op_block_list: Any = None, node_block_list: Any = None, copy: Any = None) -> None:
        """
        Converts float32 tensors to float16.

        Args:
            model (Union[onnx.ModelProto, Callable() -> onnx.ModelProto]):
                    An ONNX model or a callable that returns one.
            keep_io_types (bool):
                    Whether graph inputs and outputs stay float32, with Casts at the edges.
                    Defaults to True.
            op_block_list (Sequence[str]):
                    Op types that stay float32. Defaults to ``DEFAULT_FP16_OP_BLOCK_LIST``.
                    ``onnxruntime_fp16_op_block_list()`` adds the ops an ONNX-Runtime provider has
                    no float16 kernels for.
            node_block_list (Sequence[str]): Names of nodes that stay float32.
            copy (bool): Whether to work on a copy of the model. Defaults to True.
        """
        super().__init__(model, copy)
        self.keep_io_types = True if keep_io_types is None else bool(keep_io_types)
        self.op_block_list = set(DEFAULT_FP16_OP_BLOCK_LIST if op_block_list is None else op_block_list)
        self.node_block_list = set(node_block_list or ())

    # -- per-node decisions ---------------------------------------------------------------------

    def _decide(self, node: Any, types: Any, opset: Any, keep_only: bool = False) -> Any:
        keep = _Decision(
            False,
            [types.get(n) if n else None for n in node.input],
            [types.get(n) if n else None for n in node.output],
        )
        if (
            keep_only
            or node.op_type in self.op_block_list
            or node.name in self.node_block_list
            or node.domain not in _STANDARD_DOMAINS
            or any(True for _ in _subgraphs(node))
        ):
            return keep
        if node.op_type == "Cast":
            # A Cast takes any type; only a Cast to float32 changes, to produce float16.
            if keep.outputs[0] != _FLOAT:
                return keep
            return _Decision(True, [None], [_HALF])
        try:
            schema = onnx.defs.get_schema(node.op_type, opset, "")
        except Exception:
            return keep

        allowed = {c.type_param_str: set(c.allowed_type_strs) for c in schema.type_constraints}

        def formal(params: Any, index: Any) -> Any:
            if not params:
                return None
            return params[min(index, len(params) - 1)].type_str

        bound: dict[Any, Any] = {}
        for names, params in ((node.input, schema.inputs), (node.output, schema.outputs)):
            for index, name in enumerate(names):
                param = formal(params, index)
                if name and param is not None and types.get(name) is not None:
                    bound.setdefault(param, set()).add(types[name])
        half_params = {
            param
            for param, seen in bound.items()
            if seen == {_FLOAT} and "tensor(float16)" in allowed.get(param, ())
        }
        if not half_params:
            return keep

        def want(names: Any, params: Any, current: Any) -> list[Any]:
            return [
                _HALF if name and formal(params, i) in half_params else current[i]
                for i, name in enumerate(names)
            ]

        return _Decision(
            True,
            want(node.input, schema.inputs, keep.inputs),
            want(node.output, schema.outputs, keep.outputs),
        )

    @staticmethod
    def _convert_attributes(node: Any, decision: Any) -> None:
        # Ops whose output type is an attribute follow their (now float16) output.
        if decision.outputs and decision.outputs[0] != _HALF:
            return
        if node.op_type == "Cast":
            for attr in node.attribute:
                if attr.name == "to" and attr.i == _FLOAT:
                    attr.i = _HALF
        elif node.op_type == "ConstantOfShape":
            for attr in node.attribute:
                if attr.name == "value" and attr.t.data_type == _FLOAT:
                    attr.t.CopyFrom(_half_tensor(attr.t, attr.t.name))
                    break
            else:
                node.attribute.append(
                    onnx.helper.make_attribute("value", numpy_helper.from_array(np.zeros(1, np.float16)))
                )

    # -- the conversion ---------------------------------------------------------------------------

    def call_impl(self) -> Any:
        """
        Returns:
            onnx.ModelProto: The converted model.
        """
        from poly.onnx.surgery.shapes import infer_shapes, tensor_types

        model = self.load()
        G_LOGGER.info("Converting float tensors to float16")
        opset = next((o.version for o in model.opset_import if o.domain in _STANDARD_DOMAINS), None)
        if opset is None:
            G_LOGGER.critical("Cannot convert to float16: the model imports no ai.onnx opset")

        graph = model.graph
        inferred = infer_shapes(model, error_ok=True)
        value_infos = tensor_types(inferred.graph)
        types = {
            name: vi.type.tensor_type.elem_type or None
            for name, vi in value_infos.items()
            if vi.type.HasField("tensor_type")
        }
        types.update({t.name: t.data_type for t in graph.initializer})

        nodes = list(graph.node)
        shape_nodes = _shape_computations(nodes, graph, types)
        decisions: list[Any] = []
        for index, node in enumerate(nodes):
            if node.op_type == "Constant":
                decisions.append(None)  # decided by its readers, like an initializer
            elif index in shape_nodes:
                decisions.append(self._decide(node, types, opset, keep_only=True))
            else:
                decisions.append(self._decide(node, types, opset))

        # Who reads each top-level tensor, and in which type.
        readers: dict[Any, Any] = {}
        for node, decision in zip(nodes, decisions, strict=True):
            if decision is None:
                continue
            for slot, name in enumerate(node.input):
                if name:
                    readers.setdefault(name, []).append(decision.inputs[slot])
            for sub in _subgraphs(node):
                for name in _outer_names(sub):
                    readers.setdefault(name, []).append(types.get(name))
        graph_outputs = {o.name for o in graph.output}
        io_type = _FLOAT if self.keep_io_types else _HALF
        for name in graph_outputs:
            if types.get(name) == _FLOAT:
                readers.setdefault(name, []).append(io_type)

        def all_half(name: Any) -> bool:
            wanted = readers.get(name, [])
            return bool(wanted) and all(w == _HALF for w in wanted)

        current = {}
        # Graph inputs. Those with an initializer (all of them before IR 4) are weights, below.
        weight_names = {t.name for t in graph.initializer}
        inputs_by_name = {i.name: i for i in graph.input}
        for value_info in graph.input:
            if value_info.name in weight_names:
                continue
            current[value_info.name] = types.get(value_info.name)
            if not self.keep_io_types and types.get(value_info.name) == _FLOAT:
                value_info.type.tensor_type.elem_type = _HALF
                current[value_info.name] = _HALF

        # Weights: converted in place when every reader wants float16, else given a float16 twin.
        half_twins = {}
        new_initializers = []
        for tensor in graph.initializer:
            if tensor.data_type != _FLOAT:
                current[tensor.name] = tensor.data_type
                continue
            wanted = readers.get(tensor.name, [])
            if all_half(tensor.name):
                tensor.CopyFrom(_half_tensor(tensor))
                current[tensor.name] = _HALF
                if tensor.name in inputs_by_name:
                    inputs_by_name[tensor.name].type.tensor_type.elem_type = _HALF
            else:
                current[tensor.name] = _FLOAT
                if _HALF in wanted:
                    twin = _half_tensor(tensor, f"{tensor.name}_fp16")
                    half_twins[tensor.name] = twin.name
                    new_initializers.append(twin)
        graph.initializer.extend(new_initializers)

        # Walk the nodes in order, inserting Casts where a reader wants another type.
        casts = {}
        new_nodes = []
        used_names = {n for node in nodes for n in (*node.input, *node.output)} | set(current)
        cast_value_infos = []

        def unique(name: Any) -> Any:
            candidate, index = name, 1
            while candidate in used_names:
                candidate = f"{name}_{index}"
                index += 1
            used_names.add(candidate)
            return candidate

        def cast_of(name: Any, to: Any) -> Any:
            if to == _HALF and name in half_twins:
                return half_twins[name]
            key = (name, to)
            if key not in casts:
                out = unique(f"{name}_poly_cast_{'fp16' if to == _HALF else 'fp32'}")
                new_nodes.append(onnx.helper.make_node("Cast", [name], [out], to=to, name=out))
                casts[key] = out
                current[out] = to
                if name in value_infos and value_infos[name].type.HasField("tensor_type"):
                    vi = onnx.ValueInfoProto()
                    vi.CopyFrom(value_infos[name])
                    vi.name = out
                    vi.type.tensor_type.elem_type = to
                    cast_value_infos.append(vi)
            return casts[key]

        def fix_input(name: Any, wanted: Any) -> Any:
            have = current.get(name)
            if have in (_FLOAT, _HALF) and wanted in (_FLOAT, _HALF) and have != wanted:
                return cast_of(name, wanted)
            return name

        converted = 0
        for node, decision in zip(nodes, decisions, strict=True):
            if decision is None:  # Constant
                is_float = types.get(node.output[0]) == _FLOAT
                if is_float and all_half(node.output[0]):
                    for attr in node.attribute:
                        if attr.name == "value":
                            attr.t.CopyFrom(_half_tensor(attr.t, attr.t.name))
                    current[node.output[0]] = (
                        _HALF if any(a.name == "value" for a in node.attribute) else _FLOAT
                    )
                else:
                    current[node.output[0]] = types.get(node.output[0])
                new_nodes.append(node)
                continue

            for slot, name in enumerate(node.input):
                if name:
                    node.input[slot] = fix_input(name, decision.inputs[slot])
            for sub in _subgraphs(node):
                for name in _outer_names(sub):
                    fixed = fix_input(name, types.get(name))
                    if fixed != name:
                        _rename_in_subgraphs(node, name, fixed)
            if decision.convert:
                converted += 1
                self._convert_attributes(node, decision)
            for slot, name in enumerate(node.output):
                if name:
                    current[name] = decision.outputs[slot]
            new_nodes.append(node)

        # Graph outputs keep (or take) the requested type through a final Cast.
        renames = {}
        for value_info in graph.output:
            name = value_info.name
            if types.get(name) != _FLOAT:
                continue
            have = current.get(name)
            if have == io_type or have not in (_FLOAT, _HALF):
                continue
            inner = unique(f"{name}_poly_{'fp16' if have == _HALF else 'fp32'}")
            renames[name] = inner
            current[inner] = have
        if renames:
            for node in new_nodes:
                for slot, name in enumerate(node.input):
                    if name in renames:
                        node.input[slot] = renames[name]
                for slot, name in enumerate(node.output):
                    if name in renames:
                        node.output[slot] = renames[name]
                for old, new in renames.items():
                    _rename_in_subgraphs(node, old, new)
            for name, inner in renames.items():
                new_nodes.append(
                    onnx.helper.make_node(
                        "Cast", [inner], [name], to=io_type, name=unique(f"{name}_poly_cast_out")
                    )
                )
                if name in value_infos:
                    vi = onnx.ValueInfoProto()
                    vi.CopyFrom(value_infos[name])
                    vi.name = inner
                    vi.type.tensor_type.elem_type = current[inner]
                    cast_value_infos.append(vi)
        for value_info in graph.output:
            if types.get(value_info.name) == _FLOAT and value_info.type.HasField("tensor_type"):
                value_info.type.tensor_type.elem_type = io_type

        del graph.node[:]
        graph.node.extend(new_nodes)

        # Types of intermediate tensors as they are now.
        io_names = {o.name for o in graph.output} | set(inputs_by_name)
        kept = []
        for name, vi in value_infos.items():
            if name in io_names or not vi.type.HasField("tensor_type") or current.get(name) is None:
                continue
            updated = onnx.ValueInfoProto()
            updated.CopyFrom(vi)
            updated.type.tensor_type.elem_type = current[name]
            kept.append(updated)
        del graph.value_info[:]
        graph.value_info.extend(kept)
        graph.value_info.extend(cast_value_infos)

        G_LOGGER.verbose(
            f"Converted {converted} of {len(nodes)} node(s) to float16; inserted {len(casts) + len(renames)} Cast(s)"
        )
        return model


convert_to_fp16 = funcify(ConvertToFp16)
