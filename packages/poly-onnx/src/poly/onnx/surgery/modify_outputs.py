"""
``ModifyOutputs``: choose the outputs of an ONNX model: a list of tensors (wildcards allowed),
every tensor (``constants.MARK_ALL``), the outputs of chosen op types, minus exclusions.
Marked outputs carry the data type and shape that shape inference finds for them.
"""

import difflib
import fnmatch
from typing import Any

from poly.core import G_LOGGER, constants
from poly.core.func import funcify
from poly.core.optional_import import lazy_import
from poly.onnx.model.base import BaseLoadOnnxCopy
from poly.onnx.surgery.shapes import InferShapes, tensor_types

onnx = lazy_import("onnx")

__all__ = ["ModifyOutputs", "modify_outputs", "markable_tensor_names"]

_WILDCARD_CHARS = set("*?[]")


def _unique(names: Any) -> list[Any]:
    return list(dict.fromkeys(names))


def markable_tensor_names(model: Any, include_constants: bool = False) -> Any:
    """
    Returns, in node order, the tensors of the top-level graph that ``MARK_ALL`` marks: every
    named node output, except the outputs of ``Constant`` nodes (they are weights, not
    activations) unless ``include_constants``. Tensors inside subgraphs (If/Loop/Scan bodies)
    cannot be outputs of the model and are never included; nor are empty names, which denote
    unused optional outputs.
    """
    return _unique(
        name
        for node in model.graph.node
        if include_constants or node.op_type != "Constant"
        for name in node.output
        if name
    )


def _all_tensor_names(model: Any) -> Any:
    graph = model.graph
    return _unique(
        [
            *markable_tensor_names(model, include_constants=True),
            *(i.name for i in graph.input),
            *(t.name for t in graph.initializer),
        ]
    )


def _expand(patterns: Any, candidates: Any) -> Any:
    names = []
    for pattern in patterns:
        if _WILDCARD_CHARS & set(pattern):
            matches = fnmatch.filter(candidates, pattern)
            if not matches:
                G_LOGGER.warning(f"No tensors matched the pattern: '{pattern}'")
            names.extend(matches)
        else:
            names.append(pattern)
    return _unique(names)


def _check_exist(names: Any, available: Any, what: Any) -> None:
    available_set = set(available)
    missing = [name for name in names if name not in available_set]
    if not missing:
        return
    hints = []
    for name in missing[:3]:
        close = difflib.get_close_matches(name, available, n=3)
        if close:
            hints.append(f"'{name}': did you mean {close}?")
    hint = f" ({'; '.join(hints)})" if hints else ""
    G_LOGGER.critical(f"Cannot {what}: no tensor named {missing} in the model{hint}")


def _as_list(value: Any, name: Any) -> Any:
    if isinstance(value, str):
        if value == constants.MARK_ALL and name == "outputs":
            return value
        return [value]
    try:
        return list(value)
    except TypeError:
        G_LOGGER.critical(f"{name} must be a sequence of tensor names, not {value!r}")


def _is_complete(value_info: Any) -> Any:
    kind = value_info.type.WhichOneof("value")
    if kind == "tensor_type":
        return value_info.type.tensor_type.elem_type != 0 and value_info.type.tensor_type.HasField("shape")
    return kind is not None


class ModifyOutputs(BaseLoadOnnxCopy):
    """
    Functor that modifies the outputs of an ONNX model.
    """

    def __init__(self, model: Any, outputs: Any = None, exclude_outputs: Any = None, copy: Any = None, mark_types: Any = None) -> None:
        """
        Modifies the outputs of an ONNX model.

        Args:
            model (Union[onnx.ModelProto, Callable() -> onnx.ModelProto]):
                    An ONNX model or a callable that returns one.
            outputs (Union[Sequence[str], constants.MARK_ALL]):
                    Names of tensors to make the model's outputs, replacing the current ones.
                    fnmatch wildcards (``"conv_*"``) are expanded against the model's tensors.
                    ``constants.MARK_ALL`` marks every tensor of the top-level graph that can be
                    an output (see ``markable_tensor_names``), in node order.
            exclude_outputs (Sequence[str]):
                    Names (or wildcard patterns) of tensors that must not be outputs; useful with
                    ``outputs=constants.MARK_ALL``.
            copy (bool):
                    Whether to work on a copy of the model. With False, the given model is
                    modified in place (saving memory for large models). Defaults to True.
            mark_types (Sequence[str]):
                    Op types (case-insensitive) whose nodes' outputs are marked as well.
        """
        super().__init__(model, copy)
        self.outputs = outputs
        self.exclude_outputs = exclude_outputs
        self.mark_types = mark_types

    def _requested(self, model: Any) -> Any:
        names = None
        if self.outputs is not None:
            outputs = _as_list(self.outputs, "outputs")
            if outputs == constants.MARK_ALL:
                G_LOGGER.verbose("Marking all ONNX tensors as outputs")
                names = markable_tensor_names(model)
                # Outputs that no node produces (a graph input passed through) stay outputs.
                produced = set(markable_tensor_names(model, include_constants=True))
                names += [o.name for o in model.graph.output if o.name not in produced]
            else:
                candidates = _all_tensor_names(model)
                names = _expand(outputs, candidates)
                _check_exist(names, candidates, "mark outputs")
        if self.mark_types is not None:
            names = (names or []) + self._by_op_type(model)
        if names is not None:
            names = _unique(names)
            if not names:
                G_LOGGER.critical("No outputs were selected; check the names and patterns given")
        return names

    def _by_op_type(self, model: Any) -> Any:
        all_types = {node.op_type for node in model.graph.node}
        canonical = {op.lower(): op for op in all_types}
        names = []
        for requested in _as_list(self.mark_types, "mark_types"):
            op = canonical.get(requested.lower())
            if op is None:
                close = difflib.get_close_matches(requested, sorted(all_types), n=5, cutoff=0.6)
                hint = (
                    f" Did you mean one of: {close}?" if close else f" Op types present: {sorted(all_types)}"
                )
                G_LOGGER.error(f"No nodes of op type '{requested}' in the model.{hint}")
                continue
            names += [name for node in model.graph.node if node.op_type == op for name in node.output if name]
        return names

    def _value_infos(self, model: Any, names: Any) -> Any:
        types = tensor_types(model.graph)
        for tensor in model.graph.initializer:
            if tensor.name not in types:
                types[tensor.name] = onnx.helper.make_tensor_value_info(
                    tensor.name, tensor.data_type, tensor.dims
                )
        if not all(name in types and _is_complete(types[name]) for name in names):
            inferred_model = InferShapes(model, error_ok=True)()
            for name, value_info in tensor_types(inferred_model.graph).items():
                if name not in types or (not _is_complete(types[name]) and _is_complete(value_info)):
                    types[name] = value_info
        value_infos = []
        for name in names:
            value_info = onnx.ValueInfoProto()
            if name in types:
                value_info.CopyFrom(types[name])
            else:
                G_LOGGER.verbose(f"No data type or shape could be inferred for output: {name}")
                value_info.name = name
            value_infos.append(value_info)
        return value_infos

    def call_impl(self) -> Any:
        """
        Returns:
            onnx.ModelProto: The ONNX model with modified outputs.
        """
        model = self.load()
        graph = model.graph

        names = self._requested(model)
        if names is not None:
            new_outputs = self._value_infos(model, names)
            new_names = set(names)
            # Former outputs keep their type information as value_info; new outputs leave value_info.
            kept = [vi for vi in graph.value_info if vi.name not in new_names]
            kept_names = {vi.name for vi in kept}
            kept += [
                o
                for o in graph.output
                if o.name not in new_names and o.name not in kept_names and _is_complete(o)
            ]
            del graph.value_info[:]
            graph.value_info.extend(kept)
            del graph.output[:]
            graph.output.extend(new_outputs)
            G_LOGGER.ultra_verbose(lambda: f"Marked output tensors in ONNX model: {names}")

        if self.exclude_outputs is not None:
            candidates = _unique([*(o.name for o in graph.output), *_all_tensor_names(model)])
            excluded = _expand(_as_list(self.exclude_outputs, "exclude_outputs"), candidates)
            _check_exist(excluded, candidates, "exclude outputs")
            excluded = set(excluded)
            remaining = [o for o in graph.output if o.name not in excluded]
            if not remaining:
                G_LOGGER.critical("Excluding these outputs would leave the model without any output")
            removed = [o for o in graph.output if o.name in excluded]
            del graph.output[:]
            graph.output.extend(remaining)
            graph.value_info.extend(o for o in removed if _is_complete(o))

        return model


modify_outputs = funcify(ModifyOutputs)
