"""
``replace_plugins``: replaces the subgraphs a plugin config lists with one plugin node each
(by the plugin's own ``replace_with_plugin`` when its ``pattern.py`` defines one, else by
``default_replace_with_plugin``).
"""

from __future__ import annotations

from typing import Any

from poly.core import G_LOGGER, PolyException
from poly.onnx.model.base import load_model
from poly.onnx.model.graph import export_graph, gs_from_onnx
from poly.onnx.plugins.discovery import PluginPattern

__all__ = ["default_replace_with_plugin", "replace_plugins"]


def default_replace_with_plugin(graph: Any, input_tensors: list, output_tensors: list, attrs: Any = None, op: Any = None) -> Any:
    """
    Replaces the subgraph of ``graph`` (onnx-graphsurgeon) between ``input_tensors`` and
    ``output_tensors`` with one node of type ``op`` and attributes ``attrs``: the nodes that
    read only the input tensors are detached from them, the producers of the output tensors are
    detached from those, the new node is inserted, and what no longer reaches an output is
    removed. Returns the new node.
    """
    for tensor in input_tensors:
        inside = [node for node in tensor.outputs if all(any(inp is t for t in input_tensors) for inp in node.inputs)]
        for node in inside:
            tensor.outputs.remove(node)  # onnx-graphsurgeon removes the tensor from the node's inputs too
    for tensor in output_tensors:
        tensor.inputs.clear()
    outputs = graph.layer(op=op, inputs=list(input_tensors), outputs=list(output_tensors), attrs=attrs or {})
    node = outputs[0].inputs[0]
    graph.cleanup().toposort()
    return node


def replace_plugins(model: Any, plugin_dir: str, documents: list) -> tuple:
    """
    Replaces, in ``model`` (an ONNX ModelProto or a loader of one), every instance of the plugin
    config ``documents`` (see ``poly.onnx.plugins.load_plugin_config``) with its plugin's node.
    A tensor name the model lacks is a PolyException naming it.

    Returns:
        tuple[onnx.ModelProto, dict]: The new model, and plugin name -> instances replaced.
    """
    model = load_model(model)
    graph = gs_from_onnx(model)
    tensors = graph.tensors()
    counts: dict[Any, Any] = {}
    for document in documents:
        name, op = document["name"], document["op"]
        G_LOGGER.verbose(f"replacing {name}...")
        pattern = PluginPattern(plugin_dir, name)
        replace = pattern.function("replace_with_plugin", required=False) or default_replace_with_plugin
        replaced = 0
        for index, instance in enumerate(document["instances"]):
            resolved = {}
            for key in ("inputs", "outputs"):
                missing = [tensor for tensor in instance[key] if tensor not in tensors]
                if missing:
                    raise PolyException(f"Plugin {name!r}, instance {index}: the model has no tensor {missing[0]!r} "
                                        f"(listed in its {key})")
                resolved[key] = [tensors[tensor] for tensor in instance[key]]
            if replace(graph=graph, input_tensors=resolved["inputs"], output_tensors=resolved["outputs"],
                       attrs=instance.get("attributes"), op=op):
                replaced += 1
        G_LOGGER.info(f"replaced {replaced} instances of {name} plugin")
        if replaced != len(document["instances"]):
            G_LOGGER.warning(f"not all instances of {name} were replaced: {replaced} of {len(document['instances'])}")
        counts[name] = counts.get(name, 0) + replaced
    return export_graph(graph, source_model=model), counts
