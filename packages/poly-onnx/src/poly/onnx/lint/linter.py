"""
``lint_onnx``: finds what is wrong in an ONNX model (Polygraphy's ``check lint``).

The checks, in order:

1. the model loads (a file that is not an ONNX model is an ``onnx_loader`` exception);
2. nodes without a name are named ``polygraphy_unnamed_node_<index>``; node names used more
   than once are exceptions;
3. ``onnx.checker`` on the model as a whole (errors about single nodes are left to step 5);
4. when the checker passes, one ONNX-Runtime run of the whole model: if it succeeds, the model
   is valid (ONNX-Runtime's warnings become warning entries) and linting stops there;
5. otherwise every node runs on its own in ONNX-Runtime, in order, on the outputs its producers
   computed (the model's inputs come from the data loader): a node that fails is an exception
   entry, a custom operator ONNX-Runtime does not know a warning, and the nodes that depend on
   either are not checked;
6. graph inputs and nodes that do not contribute to the model's outputs are warnings.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from typing import Any

from poly.core import G_LOGGER, PolyException
from poly.core.optional_import import lazy_import
from poly.onnx.lint.native_stderr import capture_native_stderr
from poly.onnx.lint.report import LintLevel, LintReport, LintSource
from poly.onnx.runners.session import SessionFromOnnx, register_custom_op_libs
from poly.onnx.surgery.input_shapes import override_input_shapes

onnx = lazy_import("onnx")
onnxrt = lazy_import("onnxruntime")

__all__ = ["lint_onnx", "UNNAMED_NODE_PREFIX"]

UNNAMED_NODE_PREFIX = "polygraphy_unnamed_node_"
"""Prefix of the names given to unnamed nodes (followed by the node's index), as Polygraphy names them."""
_CUSTOM_OP_ERRORS = ("No opset import for domain", "is not a registered function/op")
"""ONNX-Runtime errors that mean an operator it does not know (reported as warnings)."""
_NODE_CHECKER_ERROR = "Bad node spec for node"
"""onnx.checker errors about one node: node-by-node linting reports those with more detail."""
_PROTOBUF_LIMIT = 2_000_000_000
"""Models larger than this are checked by path (protobuf cannot serialize them)."""
_ORT_WARNING = 2
"""ONNX-Runtime's log severity of warnings."""


def lint_onnx(path: Any, data_loader: Any, providers: Any = None, input_shapes: Any = None, external_data_dir: Any = None) -> LintReport:
    """
    Lints the ONNX model at ``path``.

    Args:
        path (str): The model file.
        data_loader (Iterable[Mapping[str, numpy.ndarray]]): Where the model's inputs come from
                (its first feed dict is used), e.g. ``poly.compare.DataLoader()``: a data loader
                whose ``input_metadata`` is None is given the model's.
        providers (Sequence[str]): ONNX-Runtime execution providers. Defaults to CPU.
        input_shapes (Dict[str, List]): Shapes to use for the model's inputs.
        external_data_dir (str): Directory of the model's external data.

    Returns:
        LintReport: The findings; ``report.is_valid`` is False when any is an exception.

    Raises:
        PolyException: When the input data does not fit the model (a missing input, an unknown
                provider): problems of the invocation, not of the model.
    """
    report = LintReport()
    model = _load(path, external_data_dir, report)
    if model is None:
        return report
    if not len(model.graph.node):
        report.add(LintLevel.WARNING, LintSource.ONNX_LOADER, "ONNX model has no nodes")
        return report

    override_input_shapes(model, input_shapes or {}, flag="--input-shapes", drop_value_info=False)
    _name_unnamed_nodes(model.graph)
    _check_duplicate_names(model.graph, report)
    checker_passed = _check_spec(model, path, report)
    G_LOGGER.verbose(f"ONNX checker passed: {checker_passed}")

    from poly.onnx.runners.session import resolve_providers

    linter = _NodeLinter(model, resolve_providers(list(providers or ["cpu"])))
    feed_dict = linter.first_feed_dict(data_loader)
    if checker_passed:
        error, warnings = linter.run_whole_model(feed_dict)
        if error is None:
            for line in warnings:
                report.add(LintLevel.WARNING, LintSource.ONNXRUNTIME, line)
            used = _report_unused(model.graph, report)
            report.passing = {
                node.name: None
                for index, node in enumerate(model.graph.node)
                if index in used and node.name not in report.failing
            }
            G_LOGGER.verbose("The model runs in ONNX-Runtime: it is valid")
            return report
        G_LOGGER.verbose(f"The model fails in ONNX-Runtime ({error}); linting it node by node")
    linter.lint_nodes(feed_dict, report)
    _report_unused(model.graph, report)
    return report


# -- loading -------------------------------------------------------------------------------------


def _load(path: Any, external_data_dir: Any, report: Any) -> Any:
    from poly.onnx.model.errors import ModelLoadError
    from poly.onnx.model.io import OnnxFromPath

    if not os.path.isfile(path):
        raise FileNotFoundError(2, "No such file", path)
    if os.path.getsize(path) == 0:
        report.add(LintLevel.EXCEPTION, LintSource.ONNX_LOADER, "Empty ONNX model given")
        return None
    G_LOGGER.info(f"Loading model: {path}")
    try:
        # The loader's own error line would repeat the lint entry.
        with G_LOGGER.verbosity(G_LOGGER.CRITICAL + 10):
            model = OnnxFromPath(path, external_data_dir=external_data_dir)()
    except ModelLoadError as err:
        report.add(LintLevel.EXCEPTION, LintSource.ONNX_LOADER, f"Invalid ONNX model given: {err}")
        return None
    if model.ByteSize() == 0:
        report.add(LintLevel.EXCEPTION, LintSource.ONNX_LOADER, "Empty ONNX model given")
        return None
    return model


# -- graph-level checks ------------------------------------------------------------------------


def _name_unnamed_nodes(graph: Any) -> None:
    taken = {node.name for node in graph.node}
    suffix = 0
    for index, node in enumerate(graph.node):
        if node.name:
            continue
        name = f"{UNNAMED_NODE_PREFIX}{index}"
        while name in taken:
            name = f"{UNNAMED_NODE_PREFIX}{index}_{suffix}"
            suffix += 1
        G_LOGGER.verbose(f"Node {index} has no name; calling it {name}")
        node.name = name
        taken.add(name)


def _check_duplicate_names(graph: Any, report: Any) -> None:
    indices: Any = OrderedDict()
    for index, node in enumerate(graph.node):
        indices.setdefault(node.name, []).append(index)
    for name, ids in indices.items():
        if len(ids) > 1:
            report.add(
                LintLevel.EXCEPTION,
                LintSource.ONNX_GS,
                f"Duplicate node name: '{name}' for nodes with topological IDs: {ids} found.",
                node_name=name,
            )


def _check_spec(model: Any, path: Any, report: Any) -> bool:
    """onnx.checker on the model (its node-level errors are left to node-by-node linting)."""
    for output in model.graph.output:
        if output.type.HasField("tensor_type") and not output.type.tensor_type.HasField("shape"):
            output.type.tensor_type.shape.dim.add()
    subject = model
    if model.ByteSize() > _PROTOBUF_LIMIT:
        G_LOGGER.warning("The model is larger than 2 GiB: the ONNX checker reads it from its file (and its "
                         "external data from the model's directory)")
        subject = os.fspath(path)
    try:
        onnx.checker.check_model(subject)
    except onnx.checker.ValidationError as err:
        if _NODE_CHECKER_ERROR not in str(err):
            report.add(LintLevel.EXCEPTION, LintSource.ONNX_CHECKER, str(err))
        return False
    return True


def _report_unused(graph: Any, report: Any) -> set:
    """Warns about graph inputs and nodes that no output depends on; returns the used nodes' indices."""
    producer = {name: index for index, node in enumerate(graph.node) for name in node.output if name}
    needed = [o.name for o in graph.output]
    used, seen = set(), set()
    while needed:
        name = needed.pop()
        if name in seen:
            continue
        seen.add(name)
        index = producer.get(name)
        if index is not None and index not in used:
            used.add(index)
            needed.extend(n for n in _reads(graph.node[index]) if n)
    initializers = {t.name for t in graph.initializer}
    unused_inputs = sorted(vi.name for vi in graph.input if vi.name not in seen and vi.name not in initializers)
    for name in unused_inputs:
        report.add(LintLevel.WARNING, LintSource.ONNX_GS, f"Input: '{name}' does not affect outputs, can be removed.")
    unused_nodes = sorted((node.name, node.op_type) for index, node in enumerate(graph.node) if index not in used)
    for name, op in unused_nodes:
        report.add(LintLevel.WARNING, LintSource.ONNX_GS, "Does not affect outputs, can be removed.",
                   node_name=name, op=op)
    return used


def _reads(node: Any) -> list[Any]:
    """The tensors a node reads: its inputs, then what its subgraphs (If/Loop/Scan) read from
    enclosing scopes, without repeats."""
    names = [name for name in node.input if name]
    for attr in node.attribute:
        subgraphs = [attr.g] if attr.type == onnx.AttributeProto.GRAPH else list(attr.graphs)
        for subgraph in subgraphs:
            names += _outer_names(subgraph)
    seen = set()
    return [name for name in names if not (name in seen or seen.add(name))]  # type: ignore[func-returns-value]


def _outer_names(graph: Any) -> Any:
    """The names a subgraph (and the subgraphs of its nodes) reads from enclosing scopes."""
    defined = {vi.name for vi in graph.input} | {t.name for t in graph.initializer}
    outer = []
    for node in graph.node:
        outer += [name for name in _reads(node) if name not in defined]
        defined.update(node.output)
    outer += [vi.name for vi in graph.output if vi.name not in defined]
    return outer


# -- ONNX-Runtime checks -----------------------------------------------------------------------


class _NodeLinter:
    """Runs the model, or its nodes one at a time, in ONNX-Runtime."""

    def __init__(self, model: Any, providers: Any) -> None:
        from poly.onnx.model.ir_version import onnxruntime_max_ir_version

        self.model = model
        self.providers = providers
        self.max_ir = onnxruntime_max_ir_version()
        self.initializers = {t.name: t for t in model.graph.initializer}

    def input_metadata(self) -> Any:
        from poly.core import DataType, TensorMetadata

        meta = TensorMetadata()
        for vi in self.model.graph.input:
            if vi.name in self.initializers:
                continue
            tensor_type = vi.type.tensor_type
            dtype = DataType.from_dtype(tensor_type.elem_type, "onnx") if tensor_type.elem_type else None
            shape = None
            if tensor_type.HasField("shape"):
                shape = [d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in tensor_type.shape.dim]
            meta.add(vi.name, dtype=dtype, shape=shape)
        return meta

    def first_feed_dict(self, data_loader: Any) -> Any:
        """The first feed dict of ``data_loader``, checked against the model's inputs."""
        import numpy as np

        meta = self.input_metadata()
        loader = data_loader
        if getattr(loader, "input_metadata", "absent") is None:
            loader.input_metadata = meta
        try:
            feed_dict = next(iter(loader))
        except StopIteration:
            G_LOGGER.critical("The data loader supplied no input data")
        missing = [name for name in meta.keys() if name not in feed_dict]
        if missing:
            G_LOGGER.critical(
                f"The input data lacks the model's input(s) {missing} (it holds: {list(feed_dict.keys())})"
            )
        return OrderedDict((name, np.asarray(value)) for name, value in feed_dict.items())

    def _session(self, model: Any, log_warnings: bool = False) -> Any:
        model.ir_version = min(model.ir_version, self.max_ir)
        options = onnxrt.SessionOptions()
        options.log_severity_level = _ORT_WARNING if log_warnings else 3
        register_custom_op_libs(options, SessionFromOnnx.DEFAULT_CUSTOM_OP_LIBS, what="--ort-custom-op-libs")
        return onnxrt.InferenceSession(model.SerializeToString(), sess_options=options, providers=self.providers)

    def run_whole_model(self, feed_dict: Any) -> tuple[Any, ...]:
        """Runs the whole model: (None, [ONNX-Runtime's warning lines]) or (the error, [])."""
        model = onnx.ModelProto()
        model.CopyFrom(self.model)
        names = [vi.name for vi in model.graph.input if vi.name not in self.initializers]
        try:
            with capture_native_stderr() as captured:
                session = self._session(model, log_warnings=True)
                session.run(None, {name: feed_dict[name] for name in names})
        except PolyException:
            raise
        except Exception as err:
            return err, []
        return None, [line for line in captured.text.splitlines() if line.strip()]

    def _singleton(self, node: Any, cache: Any) -> Any:
        """A model of ``node`` alone: its computed inputs as graph inputs, its weights as initializers."""
        helper = onnx.helper
        inputs, initializers = [], []
        for name in _reads(node):
            if name in self.initializers:
                initializers.append(self.initializers[name])
            else:
                from poly.core import DataType

                value = cache[name]
                elem = DataType.from_dtype(value.dtype).onnx()
                inputs.append(helper.make_tensor_value_info(name, elem, list(value.shape)))
        outputs = [helper.make_empty_tensor_value_info(name) for name in node.output if name]
        single = helper.make_graph([node], node.name, inputs, outputs, initializer=initializers)
        opsets = list(self.model.opset_import)
        if node.domain not in {opset.domain for opset in opsets}:
            # so that ONNX-Runtime reports an unknown custom operator as such
            opsets.append(helper.make_opsetid(node.domain, 1))
        model = helper.make_model(single, opset_imports=opsets, ir_version=self.model.ir_version)
        model.functions.extend(self.model.functions)
        return model

    def lint_nodes(self, feed_dict: Any, report: Any) -> None:
        """Runs every node on its own, in order; records a passing, failing or custom-op entry per node."""
        cache = dict(feed_dict)
        pending: dict[Any, Any] = {}
        for node in self.model.graph.node:
            for name in _reads(node):
                if name not in self.initializers:
                    pending[name] = pending.get(name, 0) + 1
        for node in self.model.graph.node:
            G_LOGGER.extra_verbose(f"Linting node {node.name}: {node.op_type}({list(node.input)}) -> {list(node.output)}")
            computed = [name for name in _reads(node) if name not in self.initializers]
            outputs = None
            if all(name in cache for name in computed):
                outputs = self._run_node(node, cache, report)
            for name in computed:
                if name in pending:
                    pending[name] -= 1
                    if pending[name] == 0 and name in cache:
                        del cache[name]
            if outputs:
                cache.update(outputs)

    def _run_node(self, node: Any, cache: Any, report: Any) -> Any:
        import numpy as np

        model = self._singleton(node, cache)
        feeds = {vi.name: cache[vi.name] for vi in model.graph.input}
        try:
            with capture_native_stderr():
                session = self._session(model)
                names = [o.name for o in session.get_outputs()]
                values = session.run(names, feeds)
        except Exception as err:
            message = str(err)
            custom = any(text in message for text in _CUSTOM_OP_ERRORS)
            level = LintLevel.WARNING if custom else LintLevel.EXCEPTION
            report.add(level, LintSource.ONNXRUNTIME, message, node_name=node.name, op=node.op_type)
            return None
        report.mark_passing(node.name)
        return {name: np.asarray(value) for name, value in zip(names, values, strict=True)}
