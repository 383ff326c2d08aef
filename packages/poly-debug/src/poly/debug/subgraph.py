"""
``SubgraphBuilder``: turns any set of nodes of an ONNX model into a valid model of its own.

Tensors the chosen nodes read but do not produce become graph inputs (typed and shaped from
``TensorInfo``), or initializers when they do not depend on the model's inputs (weights,
folded shape computations); tensors they produce that the rest of the model (or the model's
outputs) reads become graph outputs. Any node set therefore gives a runnable model, and the
failures of a model made of node set S grow with S: what lets ``reduce`` search by bisection.
"""

from typing import Any

from poly.core import G_LOGGER, lazy_import

onnx = lazy_import("onnx")

__all__ = ["SubgraphBuilder", "toposort_model", "describe_nodes", "node_reads"]


def _outer_names(graph: Any) -> Any:
    """Names a (sub)graph reads from enclosing scopes."""
    defined = {i.name for i in graph.input} | {t.name for t in graph.initializer}
    used = []
    for node in graph.node:
        for name in node_reads(node):
            if name and name not in defined:
                used.append(name)
        defined.update(node.output)
    return used


def node_reads(node: Any) -> list[Any]:
    """The tensors a node reads: its inputs and what its subgraphs (If/Loop/Scan) read from outside."""
    names = list(node.input)
    for attr in node.attribute:
        if attr.type == onnx.AttributeProto.GRAPH:
            names += _outer_names(attr.g)
        elif attr.type == onnx.AttributeProto.GRAPHS:
            for graph in attr.graphs:
                names += _outer_names(graph)
    seen = set()
    return [n for n in names if not (n in seen or seen.add(n))]  # type: ignore[func-returns-value]


def toposort_model(model: Any) -> Any:
    """
    Sorts the top-level nodes of ``model`` topologically (in place, stable: an already sorted
    model keeps its order). Returns the model.
    """
    graph = model.graph
    nodes = list(graph.node)
    producer = {}
    for index, node in enumerate(nodes):
        for name in node.output:
            if name:
                producer[name] = index
    deps = [
        {producer[n] for n in node_reads(node) if n in producer and producer[n] != index}
        for index, node in enumerate(nodes)
    ]
    if all(all(d < index for d in dep) for index, dep in enumerate(deps)):
        return model
    G_LOGGER.verbose("Sorting the model's nodes topologically")
    import heapq

    users: Any = [[] for _ in nodes]
    pending = [len(dep) for dep in deps]
    for index, dep in enumerate(deps):
        for d in dep:
            users[d].append(index)
    ready = [i for i, count in enumerate(pending) if count == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        index = heapq.heappop(ready)
        order.append(index)
        for user in users[index]:
            pending[user] -= 1
            if pending[user] == 0:
                heapq.heappush(ready, user)
    if len(order) != len(nodes):
        G_LOGGER.critical("The model's graph has a cycle; it cannot be reduced")
    del graph.node[:]
    graph.node.extend(nodes[i] for i in order)
    return model


def describe_nodes(indices: Any) -> str:
    """A compact, stable description of a node set: ``'3 node(s): 4-5,9'``."""
    indices = sorted(indices)
    runs: list[Any] = []
    for index in indices:
        if runs and runs[-1][1] == index - 1:
            runs[-1][1] = index
        else:
            runs.append([index, index])
    text = ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)
    return f"{len(indices)} node(s): {text}"


class SubgraphBuilder:
    """
    Builds the model made of a subset of the nodes of a (topologically sorted) model.
    """

    def __init__(self, model: Any, tensor_info: Any) -> None:
        """
        Args:
            model (onnx.ModelProto): The model, topologically sorted (``toposort_model``).
            tensor_info (TensorInfo): Types, shapes and frozen values of its tensors.
        """
        self.model = model
        self.info = tensor_info
        graph = model.graph
        self.nodes = list(graph.node)
        self.reads = [node_reads(node) for node in self.nodes]
        self.producer = {}
        self.consumers: dict[Any, Any] = {}
        for index, node in enumerate(self.nodes):
            for name in node.output:
                if name:
                    self.producer[name] = index
        for index, names in enumerate(self.reads):
            for name in names:
                self.consumers.setdefault(name, []).append(index)
        self.graph_inputs = {vi.name: vi for vi in graph.input}
        self.graph_outputs = [o.name for o in graph.output]
        self._graph_output_set = set(self.graph_outputs)

    def __len__(self) -> int:
        return len(self.nodes)

    def node_label(self, index: Any) -> str:
        """'Conv (name)' for logs."""
        node = self.nodes[index]
        return f"{node.op_type} ({node.name or '<unnamed>'})"

    # -- structure ----------------------------------------------------------------------------

    def _walk(self, start: Any, step: Any, allowed: Any) -> Any:
        seen = {start}
        stack = [start]
        while stack:
            for nxt in step(stack.pop()):
                if nxt in allowed and nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        return seen

    def _users(self, index: Any) -> Any:
        return (u for name in self.nodes[index].output if name for u in self.consumers.get(name, ()))

    def _producers(self, index: Any) -> Any:
        return (self.producer[n] for n in self.reads[index] if n in self.producer)

    def path_between(self, first: Any, last: Any, within: Any) -> Any:
        """
        The nodes of ``within`` on the paths from node ``first`` to node ``last``, plus both:
        the branch that links them, without the side branches a window of nodes also holds.
        """
        within = set(within)
        down = self._walk(first, self._users, within)
        up = self._walk(last, self._producers, within)
        return sorted((down & up) | {first, last})

    # -- building -----------------------------------------------------------------------------

    def io_names(self, indices: Any) -> tuple[Any, ...]:
        """(input names, initializer names, output names) of the model made of ``indices``."""
        chosen = set(indices)
        produced = {name for i in chosen for name in self.nodes[i].output if name}
        inputs, frozen, seen = [], [], set()  # type: ignore[var-annotated]
        for i in sorted(chosen):
            for name in self.reads[i]:
                if not name or name in produced or name in seen:
                    continue
                seen.add(name)
                (frozen if name in self.info.constants else inputs).append(name)
        outputs = []
        for i in sorted(chosen):
            for name in self.nodes[i].output:
                if name and (
                    name in self._graph_output_set
                    or any(c not in chosen for c in self.consumers.get(name, ()))
                ):
                    outputs.append(name)
        if not outputs and chosen:
            outputs = [name for name in self.nodes[max(chosen)].output if name]
        return inputs, frozen, outputs

    def build(self, indices: Any) -> Any:
        """
        The model made of the nodes ``indices``.

        Returns:
            onnx.ModelProto
        """
        indices = sorted(set(indices))
        if not indices:
            G_LOGGER.critical("Internal error: cannot build a model without nodes")
        inputs, frozen, outputs = self.io_names(indices)
        src = self.model
        model = onnx.ModelProto()
        for field in (
            "ir_version",
            "producer_name",
            "producer_version",
            "domain",
            "model_version",
            "doc_string",
        ):
            if src.HasField(field):
                setattr(model, field, getattr(src, field))
        model.opset_import.extend(src.opset_import)
        model.functions.extend(src.functions)
        model.metadata_props.extend(src.metadata_props)
        # Initializers that are not graph inputs need IR version 4 or later.
        model.ir_version = (
            max(model.ir_version or onnx.IR_VERSION, 4) if frozen else (model.ir_version or onnx.IR_VERSION)
        )

        graph = model.graph
        graph.name = f"{src.graph.name or 'graph'}_reduced"
        graph.node.extend(self.nodes[i] for i in indices)
        for name in inputs:
            if name in self.graph_inputs:
                graph.input.append(self.graph_inputs[name])
            else:
                graph.input.append(self.info.value_info(name, need_shape=True))
        graph.initializer.extend(self.info.constants[name] for name in frozen)
        for name in outputs:
            graph.output.append(self.info.value_info(name, need_shape=False))
        boundary = set(inputs) | set(outputs) | set(frozen)
        for i in indices:
            for name in self.nodes[i].output:
                if name and name not in boundary and name in self.info.value_infos:
                    graph.value_info.append(self.info.value_infos[name])
        return model
