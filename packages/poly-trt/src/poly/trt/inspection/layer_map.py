"""
Which TensorRT engine layers each ONNX node ended up in, and back.

TensorRT's ONNX parser names each layer it creates after its node (``node.name``; an unnamed
node is called ``node_of_<its first output>``; the further layers of one node get the name with
a suffix ``_<n>``), keeps the ONNX names of the tensors, and (TensorRT 10) records
``[ONNX Layer: <node>]`` in each layer's metadata. The builder then fuses layers: the engine
inspector names a fused layer after its parts (``A + B``, ``PWN(A, PWN(B, C))``, a Myelin region
``{ForeignNode[A...B]}`` after its first and last node), joins their metadata with ``\\x1f``, and
lists the tensors each layer reads and writes (at ``ProfilingVerbosity.DETAILED``).

``map_layers_to_nodes(model, layers)`` puts this evidence together, for each layer:

* the nodes its metadata names;
* the nodes its name names, part by part (suffixes ``_<n>`` dropped when that names a node);
* the nodes writing the ONNX tensors the layer writes, and every node whose outputs no layer
  reads or writes (fused away, or folded into constants) walking back from those tensors to
  tensors the engine holds, graph inputs and initializers;
* for a Myelin region known by its name only, the nodes on the paths from its first node to its
  last.

Layers TensorRT inserts itself (reformatting copies, for example) map to no node; nodes with no
layer (removed as dead code, or whose work needs none) map to no layer.
"""

import json
import re
from collections.abc import Mapping
from typing import Any

from poly.core import G_LOGGER
from poly.trt.inspection.engine_summary import engine_layers

__all__ = ["LayerMap", "map_layers_to_nodes", "map_engine_layers", "parser_node_name"]

_ONNX_LAYER = re.compile(r"\[ONNX Layer: (.*)\]", re.S)
_ONNX_LAYER_LAZY = re.compile(r"\[ONNX Layer: (.*?)\]", re.S)
_FOREIGN = re.compile(r"\{ForeignNode\[(.*)\]\}", re.S)
_WRAPPER = re.compile(r"[A-Za-z][A-Za-z0-9_]*\((.*)\)", re.S)
_SUFFIX = re.compile(r"(.+)_\d+", re.S)
_INSERTED = "Reformatting CopyNode"  # the names of the reformatting layers TensorRT inserts


class LayerMap:
    """
    ONNX nodes and the engine layers they ended up in, both ways.

    Attributes:
        node_layers (Dict[str, List[str]]): Every node of the model (by the name the parser
                gives its layers, see ``parser_node_name``), in model order -> the layers it ended
                up in, in engine order ([] for none).
        layer_nodes (Dict[str, List[str]]): Every layer of the engine, in engine order -> the
                nodes it holds, in model order ([] for none).
    """

    def __init__(self, node_layers: dict[str, list[str]], layer_nodes: dict[str, list[str]]) -> None:
        self.node_layers = node_layers
        self.layer_nodes = layer_nodes

    def layers_of(self, node: str) -> list[str]:
        """The layers ONNX node ``node`` ended up in; an unknown node is an error naming it."""
        if node not in self.node_layers:
            G_LOGGER.critical(f"ONNX node: {node} | not in the model (nor the name of an unnamed node's layers)")
        return list(self.node_layers[node])

    def nodes_of(self, layer: str) -> list[str]:
        """The ONNX nodes layer ``layer`` holds; an unknown layer is an error naming it."""
        if layer not in self.layer_nodes:
            G_LOGGER.critical(f"TensorRT layer: {layer} | not in the engine")
        return list(self.layer_nodes[layer])

    @property
    def unmapped_nodes(self) -> list[str]:
        """Nodes found in no layer, in model order."""
        return [node for node, layers in self.node_layers.items() if not layers]

    @property
    def unmapped_layers(self) -> list[str]:
        """Layers holding no node (inserted by TensorRT, or not traced back), in engine order."""
        return [layer for layer, nodes in self.layer_nodes.items() if not nodes]

    def __repr__(self) -> str:
        return (
            f"LayerMap({len(self.node_layers)} node(s), {len(self.layer_nodes)} layer(s), "
            f"{len(self.unmapped_nodes)} node(s) and {len(self.unmapped_layers)} layer(s) unmapped)"
        )


def parser_node_name(node: Any) -> str:
    """The name TensorRT's ONNX parser gives the layers of ``node`` (an ``onnx.NodeProto``): its
    name, or ``node_of_<first output>`` for an unnamed node."""
    if node.name or not len(node.output):
        return str(node.name)
    return f"node_of_{node.output[0]}"


# -- the model ------------------------------------------------------------------------------------


class _Graph:
    """The model's nodes (subgraphs included) by parser name, and which node writes each tensor."""

    def __init__(self, model: Any) -> None:
        graph = getattr(model, "graph", None)
        if graph is None or not hasattr(graph, "node"):
            G_LOGGER.critical(f"map_layers_to_nodes needs an onnx.ModelProto, got {type(model).__name__}")
        self.order: dict[str, int] = {}
        self.inputs: dict[str, list[str]] = {}
        self.producer: dict[str, str] = {}
        self.consumers: dict[str, list[str]] = {}
        self.sources: set[str] = set()  # graph inputs and initializers
        self._add(graph)

    def _add(self, graph: Any) -> None:
        self.sources.update(t.name for t in graph.input)
        self.sources.update(t.name for t in graph.initializer)
        for node in graph.node:
            key = parser_node_name(node)
            if not key:
                continue
            self.order.setdefault(key, len(self.order))
            self.inputs.setdefault(key, []).extend(t for t in node.input if t)
            for tensor in node.output:
                if tensor:
                    self.producer.setdefault(tensor, key)
            for tensor in node.input:
                if tensor:
                    self.consumers.setdefault(tensor, []).append(key)
            for attr in node.attribute:  # If / Loop / Scan bodies
                if attr.HasField("g"):
                    self._add(attr.g)
                for sub in attr.graphs:
                    self._add(sub)

    def resolve(self, atom: str) -> str | None:
        """The node a piece of a layer name names: itself, or without a ``_<n>`` suffix."""
        if atom in self.order:
            return atom
        match = _SUFFIX.fullmatch(atom)
        if match and match.group(1) in self.order:
            return match.group(1)
        return None

    def span(self, first: str, last: str) -> set[str]:
        """The nodes on the paths from ``first`` to ``last`` (both included)."""
        after = self._reach(first, forward=True)
        return after & self._reach(last, forward=False) if last in after else {first, last}

    def _reach(self, start: str, forward: bool) -> set[str]:
        outputs: dict[str, list[str]] = {}
        if forward:
            for tensor, node in self.producer.items():
                outputs.setdefault(node, []).append(tensor)
        seen, stack = {start}, [start]
        while stack:
            node = stack.pop()
            if forward:
                nexts = [c for t in outputs.get(node, []) for c in self.consumers.get(t, [])]
            else:
                nexts = [self.producer[t] for t in self.inputs.get(node, []) if t in self.producer]
            for other in nexts:
                if other not in seen:
                    seen.add(other)
                    stack.append(other)
        return seen


# -- the engine's layers --------------------------------------------------------------------------


class _Layer:
    def __init__(self, name: str, kind: str, inputs: list[str] | None, outputs: list[str] | None, metadata: str) -> None:
        self.name, self.kind, self.inputs, self.outputs, self.metadata = name, kind, inputs, outputs, metadata


def _tensor_names(layer: Mapping[str, Any], key: str, index: int) -> list[str] | None:
    if key not in layer:
        return None
    tensors = layer[key]
    if not isinstance(tensors, list):
        G_LOGGER.critical(f"TensorRT layer: {layer.get('Name', index)} | '{key}' is not a list of tensors: {tensors!r}")
    names = []
    for tensor in tensors:
        name = tensor.get("Name") if isinstance(tensor, Mapping) else tensor
        if not isinstance(name, str):
            G_LOGGER.critical(f"TensorRT layer: {layer.get('Name', index)} | a tensor in '{key}' has no name: {tensor!r}")
        names.append(name)
    return names


def _layers(info: Any) -> list[_Layer]:
    if isinstance(info, (bytes, bytearray)):
        info = info.decode()
    if isinstance(info, str):
        try:
            info = json.loads(info)
        except ValueError as err:
            G_LOGGER.critical(f"The engine's layer information is not the inspector's JSON: {err}")
    if isinstance(info, Mapping):
        if "Layers" not in info:
            G_LOGGER.critical(f"The engine's layer information has no 'Layers' list; it has keys {sorted(info)}")
        info = info["Layers"]
    if not isinstance(info, (list, tuple)):
        G_LOGGER.critical(f"Expected the engine's layers as a list, got {type(info).__name__}")
    layers = []
    for index, record in enumerate(info):
        if isinstance(record, str):  # ProfilingVerbosity.LAYER_NAMES_ONLY
            layers.append(_Layer(record, "", None, None, ""))
            continue
        if not isinstance(record, Mapping) or not isinstance(record.get("Name"), str):
            G_LOGGER.critical(f"TensorRT layer {index} | has no 'Name': {record!r}")
        metadata = record.get("Metadata") or ""
        layers.append(_Layer(
            record["Name"], str(record.get("LayerType", "")), _tensor_names(record, "Inputs", index),
            _tensor_names(record, "Outputs", index), metadata if isinstance(metadata, str) else "",
        ))
    names = [layer.name for layer in layers]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        G_LOGGER.critical(f"TensorRT layer(s): {twice} | named twice in the engine's layer information")
    return layers


def _metadata_nodes(metadata: str) -> list[str]:
    names: list[str] = []
    for part in re.split(r"[\x1e\x1f]", metadata):
        part = part.strip()
        # one entry in the part: the whole of it (a node name may hold "]"); several: each
        match = _ONNX_LAYER.fullmatch(part) if part.count("[ONNX Layer: ") == 1 else None
        names.extend([match.group(1)] if match else _ONNX_LAYER_LAZY.findall(part))
    return names


def _balanced(text: str) -> bool:
    depth = 0
    for char in text:
        depth += char in "([{"
        depth -= char in ")]}"
        if depth < 0:
            return False
    return depth == 0


def _split_top(text: str, separator: str) -> list[str]:
    """``text`` split at ``separator`` outside brackets."""
    parts: list[str] = []
    depth, start, i = 0, 0, 0
    while i < len(text):
        char = text[i]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif depth == 0 and text.startswith(separator, i):
            parts.append(text[start:i])
            i += len(separator)
            start = i
            continue
        i += 1
    parts.append(text[start:])
    return parts


def _name_nodes(name: str, graph: _Graph, spans: list[tuple[str, str]]) -> set[str]:
    """The nodes a (fused) layer name names; Myelin regions ``{ForeignNode[A...B]}`` add
    ``(A, B)`` to ``spans``."""
    name = name.strip()
    node = graph.resolve(name)
    if node is not None:
        return {node}
    foreign = _FOREIGN.fullmatch(name)
    if foreign:
        inner = foreign.group(1)
        for cut in [m.start() for m in re.finditer(re.escape("..."), inner)]:
            first, last = graph.resolve(inner[:cut].strip()), graph.resolve(inner[cut + 3:].strip())
            if first is not None and last is not None:
                spans.append((first, last))
                return {first, last}
        return _name_nodes(inner, graph, spans) if inner != name else set()
    parts = _split_top(name, " + ")
    if len(parts) == 1:
        wrapper = _WRAPPER.fullmatch(name)
        if not wrapper or not _balanced(wrapper.group(1)):
            return set()
        parts = _split_top(wrapper.group(1), ", ")
    nodes: set[str] = set()
    for part in parts:
        nodes |= _name_nodes(part, graph, spans)
    return nodes


def _tensor_nodes(layer: _Layer, graph: _Graph, held: set[str]) -> set[str]:
    """The nodes writing the layer's ONNX output tensors, and the nodes whose outputs the engine
    does not hold, walking back from there to held tensors, graph inputs and initializers."""
    found: set[str] = set()
    stack = [graph.producer[t] for t in layer.outputs or [] if t in graph.producer]
    while stack:
        node = stack.pop()
        if node in found:
            continue
        found.add(node)
        for tensor in graph.inputs.get(node, []):
            if tensor not in held and tensor not in graph.sources and tensor in graph.producer:
                stack.append(graph.producer[tensor])
    return found


def map_layers_to_nodes(model: Any, layers: Any) -> LayerMap:
    """
    Maps the layers of a TensorRT engine built from ``model`` to its ONNX nodes, and back.

    Args:
        model (onnx.ModelProto): The model the engine was built from.
        layers (Union[str, Dict, Sequence]): The engine inspector's layer information: its JSON
                text (``get_engine_information(LayerInformationFormat.JSON)``), that JSON loaded,
                or its "Layers" list (what ``poly.trt.inspection.engine_summary.engine_layers``
                returns): per-layer records at ``ProfilingVerbosity.DETAILED``, names at
                ``LAYER_NAMES_ONLY`` (names and suffixes are then the only evidence).

    Returns:
        LayerMap

    Raises:
        PolyException: for a model that is not an ONNX model, or layer information that is not
                the inspector's (one line naming the layer or field at fault).
    """
    graph = _Graph(model)
    records = _layers(layers)
    held = {t for layer in records for t in (layer.inputs or []) + (layer.outputs or [])}
    layer_nodes: dict[str, list[str]] = {}
    for layer in records:
        inserted = layer.kind == "Reformat" or layer.name.startswith(_INSERTED)
        nodes = {node for node in (graph.resolve(n) for n in _metadata_nodes(layer.metadata)) if node}
        spans: list[tuple[str, str]] = []
        if not inserted:
            nodes |= _name_nodes(layer.name, graph, spans)
        if layer.outputs is not None and not inserted:
            nodes |= _tensor_nodes(layer, graph, held)
        elif spans:  # a Myelin region known by name only
            for first, last in spans:
                nodes |= graph.span(first, last)
        layer_nodes[layer.name] = sorted(nodes, key=graph.order.__getitem__)
    node_layers: dict[str, list[str]] = {node: [] for node in graph.order}
    for layer_name, held_nodes in layer_nodes.items():
        for node in held_nodes:
            node_layers[node].append(layer_name)
    return LayerMap(node_layers, layer_nodes)


def map_engine_layers(model: Any, engine: Any) -> LayerMap:
    """``map_layers_to_nodes`` on the layers ``engine`` (a ``trt.ICudaEngine`` built from
    ``model``) reports through its engine inspector; build it with
    ``ProfilingVerbosity.DETAILED`` (``--profiling-verbosity detailed``) for tensor names."""
    return map_layers_to_nodes(model, engine_layers(engine))
