"""
What TensorRT's ONNX parser supports of an ONNX model, as `poly inspect capability` reports it.

Two ways, as in Polygraphy:

- ``static_capability``: parses the model once and lists every error the parser reports, with
  the operator, the node and the stack of local functions (``FunctionProto``) it sits in;
- ``partition_capability``: asks the parser which node ranges it supports (``supports_model_v2``,
  or ``supports_model`` where only that exists), splits each unsupported range again until
  the parser answers no more, and saves each supported and unsupported range as its own ONNX
  model (``supported_subgraph-nodes-A-B.onnx``, ``unsupported_subgraph-nodes-A-B.onnx``, node
  indices inclusive) with the parser's errors for each unsupported range.

``capability_summary`` and ``static_capability_summary`` give the summary tables (the text of
``results.txt``).
"""

from __future__ import annotations

import os
import tempfile
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from poly.core import G_LOGGER, load_file
from poly.core.optional_import import lazy_import
from poly.onnx import ExtractSubgraph, InferShapes, OnnxFromPath, SaveOnnx
from poly.onnx.model.graph import export_graph
from poly.trt.networks.creation import CreateNetwork
from poly.trt.tensorrt_module import flavour, trt
from poly.trt.trt_logger import errors_as_verbose, get_trt_logger

gs = lazy_import("onnx_graphsurgeon")

__all__ = [
    "UnsupportedNodeDict",
    "ParserErrorRecord",
    "CapabilityPartitions",
    "supports_model",
    "parse",
    "parser_error_records",
    "static_capability",
    "static_capability_summary",
    "partition_capability",
    "capability_summary",
    "subgraph_file_name",
]

UNKNOWN_ERROR = "UNKNOWN ERROR"


class UnsupportedNodeDict(OrderedDict):
    """
    op -> {error text -> [[start, end], ...]}: the unsupported node ranges of a model (start
    inclusive, end exclusive), grouped by the operator of their first node and the parser's errors.
    """

    def add(self, op: Any, err_string: Any, node_range: Any) -> None:
        """Records one unsupported range ``node_range`` ([start, end)) of operator ``op``."""
        self.setdefault(op, OrderedDict()).setdefault(err_string, []).append(list(node_range))


@dataclass(frozen=True)
class ParserErrorRecord:
    """One error of TensorRT's ONNX parser."""

    stack_trace: str
    """The local functions the node sits in, outermost first: "node (Function) -> ..."; "" at top level."""
    operator: str
    node: str
    reason: str
    """The parser's text of the error."""


@dataclass
class CapabilityPartitions:
    """The result of ``partition_capability``."""

    supported: list[tuple[int, int]] = field(default_factory=list)
    """Supported node ranges [start, end)."""
    unsupported: UnsupportedNodeDict = field(default_factory=UnsupportedNodeDict)
    files: list[str] = field(default_factory=list)
    """The subgraph models written, in node order."""
    fully_supported: bool = False


class _ParserWithNetwork:
    """TensorRT's ONNX parser (its attributes read through), holding the builder and network it
    fills, which must outlive it."""

    def __init__(self) -> None:
        self.builder, self.network = CreateNetwork()()
        self.parser = trt.OnnxParser(self.network, get_trt_logger())

    def __getattr__(self, name: Any) -> Any:
        return getattr(self.parser, name)


def _new_parser() -> Any:
    return _ParserWithNetwork()


def _parser_method(parser: Any, *names: Any) -> Any:
    for name in names:
        if hasattr(parser, name):
            return name
    G_LOGGER.critical(f"{' / '.join(names)} of the ONNX parser is not available in {flavour()}")
    return None


def supports_model(path: Any) -> tuple[Any, ...]:
    """
    Asks TensorRT's ONNX parser which parts of the model at ``path`` it supports.

    Returns:
        Tuple[bool, List[Tuple[List[int], bool]], trt.OnnxParser]: whether the whole model is
        supported; the parser's subgraphs as (node indices, supported); the parser (for its errors).
    """
    parser = _new_parser()
    data = load_file(path, description="ONNX model")
    # supports_model_v2 (TensorRT 10 and later, TensorRT-RTX) answers per subgraph; supports_model
    # (deprecated in TensorRT 10, removed since) returns the (node indices, supported) pairs at once
    method = _parser_method(parser, "supports_model_v2", "supports_model")
    with errors_as_verbose():
        if method == "supports_model_v2":
            supported = parser.supports_model_v2(data, os.path.abspath(path))
            nodelists = [(list(parser.get_subgraph_nodes(i)), bool(parser.is_subgraph_supported(i)))
                         for i in range(parser.num_subgraphs)]
        else:
            supported, nodelists = parser.supports_model(data, os.path.abspath(path))
            nodelists = [(list(nodes), bool(ok)) for nodes, ok in nodelists]
    return bool(supported), nodelists, parser


def parse(path: Any) -> tuple[Any, ...]:
    """
    Parses the model at ``path`` with TensorRT's ONNX parser.

    Returns:
        Tuple[bool, trt.OnnxParser]: whether it parsed, and the parser (for its errors).
    """
    parser = _new_parser()
    data = load_file(path, description="ONNX model")
    _parser_method(parser, "parse")
    with errors_as_verbose():
        ok = parser.parse(data, os.path.abspath(path))
    return bool(ok), parser


def _call(obj: Any, name: Any, default: str = "") -> Any:
    method = getattr(obj, name, None)
    if not callable(method):
        return default
    value = method()
    return default if value is None else value


def parser_error_records(parser: Any) -> list[ParserErrorRecord]:
    """Every error ``parser`` holds, with the stack of local functions of each."""
    records = []
    for index in range(parser.num_errors):
        error = parser.get_error(index)
        depth = _call(error, "local_function_stack_size", 0)  # type: ignore[arg-type]
        stack = list(_call(error, "local_function_stack", []))[:depth]  # type: ignore[arg-type]
        records.append(ParserErrorRecord(" -> ".join(stack), str(_call(error, "node_operator")),
                                         str(_call(error, "node_name")), str(error)))
    return records


def static_capability(path: Any) -> Any:
    """
    Parses the model at ``path`` once and groups the parser's errors by their stack of local
    functions.

    Returns:
        OrderedDict[str, List[Tuple[str, str, str]]]: stack trace -> [(operator, node, reason)];
        empty when the parser takes the whole model.
    """
    ok, parser = parse(path)
    grouped: Any = OrderedDict()
    if ok:
        return grouped
    for record in parser_error_records(parser):
        grouped.setdefault(record.stack_trace, []).append((record.operator, record.node, record.reason))
    if not grouped:
        grouped[""] = [("", "", UNKNOWN_ERROR)]
    return grouped


def _table(header: Any, rows: Any, widths: Any, separator: Any) -> Any:
    lines = ["===== Summary =====", separator.join(f"{h:{w}}" for h, w in zip(header, widths, strict=True))]
    lines.append("-" * (len(lines[1]) + 1))
    lines += [separator.join(f"{c:{w}}" for c, w in zip(row, widths, strict=True)) for row in rows]
    return "\n".join(lines) + "\n"


def static_capability_summary(stack_trace_to_errors: Any) -> str:
    """The summary table of ``static_capability``'s result: stack trace, operator, node, reason."""
    rows = [(stack, op, node, reason) for stack, errors in stack_trace_to_errors.items() for op, node, reason in errors]
    header = ("Stack trace", "Operator", "Node", "Reason")
    widths = [max([len(h) + (1 if i < 3 else 0)] + [len(r[i]) for r in rows]) for i, h in enumerate(header)]
    widths[3] = max(len(r[3]) for r in rows) if rows else len("Reason")
    return _table(header, rows, widths, " | ")


def capability_summary(unsupported: UnsupportedNodeDict) -> str:
    """The summary table of the unsupported ranges: operator, count, reason, node ranges."""
    op_width = max([len("Operator ")] + [len(op) for op in unsupported])
    reason_width = max([len(reason) for errors in unsupported.values() for reason in errors] or [len("Reason")])
    lines = ["===== Summary =====", f"{'Operator':{op_width}}| {'Count':7} | {'Reason':{reason_width}} | Nodes"]
    lines.append("-" * (len(lines[1]) + 1))
    for op, errors in unsupported.items():
        for reason, ranges in errors.items():
            lines.append(f"{op:{op_width}}| {len(ranges):7} | {reason:{reason_width}} | {ranges}")
    return "\n".join(lines) + "\n"


def subgraph_file_name(prefix: Any, start: Any, end: Any) -> str:
    """``{prefix}_subgraph-nodes-{start}-{end - 1}.onnx``: the file of nodes [start, end)."""
    return f"{prefix}_subgraph-nodes-{start}-{end - 1}.onnx"


def _boundary(graph: Any, start: Any, end: Any) -> tuple[Any, ...]:
    """The tensor names a node range [start, end) of ``graph`` reads from outside it, and the ones
    it produces that are read after it or are graph outputs."""
    nodes = graph.nodes[start:end]
    produced = {t.name for node in nodes for t in node.outputs}
    inputs = []
    for node in nodes:
        for t in node.inputs:
            if t.name and t.name not in produced and isinstance(t, gs.Variable) and t.name not in inputs:
                inputs.append(t.name)
    later = {t.name for node in graph.nodes[end:] + graph.nodes[:start] for t in node.inputs}
    graph_outputs = {t.name for t in graph.outputs}
    outputs = [t.name for node in nodes for t in node.outputs
               if t.name and (t.name in later or t.name in graph_outputs)]
    if not outputs:  # a range whose results nothing reads: keep all it produces
        outputs = [t.name for node in nodes for t in node.outputs if t.name]
    return inputs, outputs


def _save_range(model: Any, graph: Any, start: Any, end: Any, path: Any) -> Any:
    inputs, outputs = _boundary(graph, start, end)
    subgraph = ExtractSubgraph(graph, input_metadata=inputs, output_metadata=outputs, check_meta=False)()
    SaveOnnx(export_graph(subgraph, source_model=model), path)()
    return path


def partition_capability(path: Any, output_dir: Any) -> CapabilityPartitions:
    """
    Splits the model at ``path`` into the node ranges TensorRT's ONNX parser supports and the
    ones it does not, saving each range under ``output_dir`` (see the module's description).
    Nothing is written when the whole model is supported (``fully_supported``).
    """
    result = CapabilityPartitions()
    supported, nodelists, _ = supports_model(path)
    if supported:
        result.fully_supported = True
        return result

    # the types and shapes ONNX can infer, once: the parser needs them at each range's inputs
    model = InferShapes(OnnxFromPath(path), allow_onnxruntime=False)()
    graph = gs.import_onnx(model)
    count = len(graph.nodes)

    with tempfile.TemporaryDirectory(prefix="poly_capability_") as scratch:

        def supported_ranges(lists: Any, offset: Any, span: Any) -> Any:
            ranges = []
            for nodes, ok in lists:
                if not nodes:
                    continue
                start, end = nodes[0] + offset, nodes[-1] + offset + 1
                if ok:
                    ranges.append((start, end))
                elif (start, end) != span and end - start > 0:
                    # the parser may take parts of an unsupported range once it stands alone
                    sub = _save_range(model, graph, start, end, os.path.join(scratch, f"intermediate_{start}_{end}.onnx"))
                    _, sub_lists, _ = supports_model(sub)
                    ranges += supported_ranges(sub_lists, start, (start, end))
            return ranges

        result.supported = sorted(supported_ranges(nodelists, 0, (0, count)))

    def save(prefix: Any, start: Any, end: Any) -> Any:
        file = _save_range(model, graph, start, end, os.path.join(output_dir, subgraph_file_name(prefix, start, end)))
        result.files.append(file)
        return file

    position = 0
    for start, end in result.supported + [(count, count)]:
        if start > position:  # the gap before this supported range is unsupported
            file = save("unsupported", position, start)
            ok, _, parser = supports_model(file)
            errors = " | ".join(str(parser.get_error(i)) for i in range(parser.num_errors)) or UNKNOWN_ERROR
            result.unsupported.add(graph.nodes[position].op, errors, [position, start])
        if end > start:
            save("supported", start, end)
        position = max(position, end)
    return result
