"""
``Reduce``: shrinks a failing ONNX model to the smallest set of nodes that still fails.

The nodes are taken in topological order. Failures are assumed monotone: a model made of
more nodes fails whenever one made of fewer does. Three phases, each a loop of the debugger:

1. outputs: the shortest failing prefix of nodes (its last node is the latest one needed);
2. inputs: the shortest failing window that ends there (its first node is the earliest one
   needed), probing a single node first, so that a one-node failure costs one iteration;
3. branch: in bisect mode, one try of just the branch linking the window's first and last
   nodes; in linear mode, one try per inner node of the window, dropping every node whose
   removal keeps the failure (the result is then minimal: no single node can go).

Bisect mode needs at most ``ceil(log2(nodes))`` iterations for phase 1 and one for phases 2
and 3 when a single node fails. Linear mode walks one node at a time.

The phases never propose a candidate whose answer earlier checks already give (under the same
assumption: one holding every node of a failing candidate fails, one within a passing
candidate passes); ``Reduce.implied_result`` tells, and the final confirmation check runs only
when the result is not already known to fail.
"""

from typing import Any

from poly.core import G_LOGGER, invoke_if_callable
from poly.debug.markers import BisectMarker, LinearMarker
from poly.debug.subgraph import SubgraphBuilder, describe_nodes, toposort_model
from poly.debug.tensor_info import TensorInfo
from poly.onnx import override_input_shapes

__all__ = ["Reduce", "ReduceResult"]


class ReduceResult:
    """What ``Reduce.run`` found."""

    def __init__(self, nodes: Any, model: Any, min_good_nodes: Any, min_good_model: Any, iterations: Any, checks: Any) -> None:
        self.nodes = nodes
        """Indices (topological order) of the nodes of the reduced model."""
        self.model = model
        """The reduced model (onnx.ModelProto)."""
        self.min_good_nodes = min_good_nodes
        self.min_good_model = min_good_model
        """A passing model close in size to the reduced one; None when no iteration passed."""
        self.iterations = iterations
        """Iterations of the session, replayed ones included."""
        self.checks = checks
        """Iterations decided by the check in this session."""


class Reduce:
    """
    Reduces a failing ONNX model with an ``IterativeDebugger``.
    """

    def __init__(
        self,
        model: Any,
        debugger: Any,
        mode: str = "bisect",
        reduce_inputs: bool = True,
        reduce_outputs: bool = True,
        input_shapes: Any = None,
        shape_inference: bool = True,
        allow_onnxruntime_shape_inference: bool = True,
        force_fallback_shape_inference: bool = False,
        save_model: Any = None,
        data_loader: Any = None,
    ) -> None:
        """
        Args:
            model (Union[onnx.ModelProto, Callable() -> onnx.ModelProto]): The failing model.
            debugger (IterativeDebugger): Runs the iterations; its ``iter_artifact_path`` is where
                    each candidate model is written.
            mode (str): ``"bisect"`` or ``"linear"``.
            reduce_inputs (bool): Move the inputs forward (False: keep the model's inputs).
            reduce_outputs (bool): Move the outputs backward (False: keep the model's outputs).
            input_shapes (Dict[str, List]): Shapes for the model's inputs (``--model-input-shapes``).
            shape_inference (bool): Whether to run ONNX shape inference.
            allow_onnxruntime_shape_inference (bool): Whether shape inference may ask ONNX-Runtime.
            force_fallback_shape_inference (bool): Take shapes from a run in ONNX-Runtime.
            save_model (Callable[[onnx.ModelProto, str], None]): Writes a model; defaults to ``SaveOnnx``.
            data_loader (Iterable[Mapping[str, numpy.ndarray]]): Inputs of the ONNX-Runtime run that
                    fallback shape inference makes (the data the --check command uses, for
                    example); defaults to synthetic data.
        """
        if mode not in ("bisect", "linear"):
            G_LOGGER.critical(f"--mode must be 'bisect' or 'linear', not {mode!r}")
        if not (reduce_inputs or reduce_outputs):
            G_LOGGER.critical("--no-reduce-inputs and --no-reduce-outputs cannot be used together")
        if not debugger.iter_artifact_path:
            G_LOGGER.critical("--iter-artifact: reduce needs a path for the intermediate models")
        self._model = model
        self.debugger = debugger
        self.mode = mode
        self.reduce_inputs = reduce_inputs
        self.reduce_outputs = reduce_outputs
        self.input_shapes = input_shapes
        self.shape_inference = shape_inference
        self.allow_onnxruntime_shape_inference = allow_onnxruntime_shape_inference
        self.force_fallback_shape_inference = force_fallback_shape_inference
        self.save_model = save_model or _save
        self.data_loader = data_loader
        self.builder: Any = None
        self._passed: list[Any] = []  # (node count, indices) of passing candidates
        self._failed: list[Any] = []
        self._passed_sets: list[Any] = []  # the same node sets, as frozensets
        self._failed_sets: list[Any] = []

    # -- setup --------------------------------------------------------------------------------

    def _prepare(self) -> None:
        from poly.onnx import copy_model

        model = copy_model(invoke_if_callable(self._model))
        override_input_shapes(model, self.input_shapes, flag="--model-input-shapes")
        toposort_model(model)
        initializers = {t.name for t in model.graph.initializer}
        dynamic = [
            vi.name
            for vi in model.graph.input
            if vi.name not in initializers
            and any(not d.HasField("dim_value") for d in vi.type.tensor_type.shape.dim)
        ]
        if dynamic:
            G_LOGGER.warning(
                f"The model has dynamic input shapes ({dynamic}); give shapes with --model-input-shapes "
                "so that intermediate models get static ones"
            )
        info = TensorInfo(
            model,
            shape_inference=self.shape_inference,
            allow_onnxruntime=self.allow_onnxruntime_shape_inference,
            force_fallback=self.force_fallback_shape_inference,
            data_loader=self.data_loader,
        )
        self.builder = SubgraphBuilder(model, info)
        if not len(self.builder):
            G_LOGGER.critical("The model has no nodes: there is nothing to reduce")

    # -- one loop -----------------------------------------------------------------------------

    def _loop(self, suffix: Any, candidate: Any, marker: Any) -> Any:
        """Runs a marker-driven loop; ``candidate(index)`` gives the node set for a marker index."""

        def make_artifact(context: Any) -> None:
            nodes = candidate(marker.index)
            self._write(context, nodes)

        def advance(context: Any) -> Any:
            nodes = candidate(marker.index)
            self._check_replay(context, nodes)
            self._record(context.success, nodes)
            marker.step(context.success)
            return marker.stop()

        if not marker.stop():
            self.debugger.iterate(make_artifact, advance, marker.remaining, suffix=suffix)
        return marker

    def _write(self, context: Any, nodes: Any) -> None:
        model = self.builder.build(nodes)
        context.state["nodes"] = describe_nodes(nodes)
        context.iteration_info["num_nodes"] = len(nodes)
        G_LOGGER.info(f"Candidate model: {len(nodes)} of {len(self.builder)} node(s)")
        self.save_model(model, context.artifact_path)

    def _check_replay(self, context: Any, nodes: Any) -> None:
        recorded = context.state.get("nodes")
        expected = describe_nodes(nodes)
        if recorded is not None and recorded != expected:
            G_LOGGER.critical(
                f"--load-debug-replay: iteration {context.iteration + 1} of the replay tested {recorded}, but this "
                f"session would test {expected}; the replay comes from another model or other options"
            )

    def _record(self, success: Any, nodes: Any) -> None:
        (self._passed if success else self._failed).append((len(nodes), list(nodes)))
        (self._passed_sets if success else self._failed_sets).append(frozenset(nodes))

    def implied_result(self, nodes: Any) -> Any:
        """
        What the check would say about the candidate made of ``nodes``, as far as the candidates
        decided so far tell (failures being monotone in the node set): False when it holds all
        the nodes of a failing candidate, True when all its nodes belong to a passing one, None
        when only the check can tell.
        """
        chosen = frozenset(nodes)
        if any(failed <= chosen for failed in self._failed_sets):
            return False
        if any(chosen <= passed for passed in self._passed_sets):
            return True
        return None

    # -- phases -------------------------------------------------------------------------------

    def _marker(self, count: Any, gallop: bool = False) -> Any:
        if self.mode == "linear":
            return LinearMarker(count)
        return BisectMarker(count, gallop=gallop)

    def _reduce_outputs(self, last: Any) -> Any:
        G_LOGGER.start("Reducing model outputs")
        marker = self._loop("outputs", lambda k: list(range(k)), self._marker(last + 1))
        G_LOGGER.finish(
            f"Finished reducing model outputs: the latest node needed is {self.builder.node_label(marker.bad - 1)}"
        )
        return marker.bad - 1

    def _reduce_inputs(self, last: Any) -> Any:
        G_LOGGER.start("Reducing model inputs")
        marker = self._loop(
            "inputs", lambda w: list(range(last - w + 1, last + 1)), self._marker(last + 1, gallop=True)
        )
        first = last - marker.bad + 1
        G_LOGGER.finish(
            f"Finished reducing model inputs: the earliest node needed is {self.builder.node_label(first)}"
        )
        return first

    def _reduce_branch(self, window: Any) -> Any:
        first, last = window[0], window[-1]
        path = self.builder.path_between(first, last, window)
        if len(path) == len(window):
            return window
        G_LOGGER.start("Trying just the branch that links the first and last nodes needed")
        marker = _OneShot()
        self._loop("branch", lambda _: path, marker)
        return path if marker.failed else window

    def _prune(self, window: Any) -> Any:
        """Linear mode: drops, one at a time, every inner node whose removal keeps the failure."""
        kept = list(window)
        inner = list(reversed(window[1:-1]))
        if not inner:
            return kept
        G_LOGGER.start(f"Removing nodes one at a time ({len(inner)} to try)")
        state = {"pos": 0}

        def candidate(_: Any) -> list[Any]:
            drop = inner[state["pos"]]
            return [i for i in kept if i != drop]

        marker = _Sequence(len(inner))

        def on_step(success: Any) -> None:
            if not success:
                drop = inner[state["pos"]]
                kept.remove(drop)
            state["pos"] += 1

        marker.on_step = on_step
        self._loop("prune", candidate, marker)
        G_LOGGER.finish(f"Finished removing nodes: {len(kept)} remain")
        return kept

    # -- driver -------------------------------------------------------------------------------

    def run(self) -> Any:
        """
        Runs the reduction.

        Returns:
            ReduceResult

        Raises:
            PolyException: When the model does not fail the check at all.
        """
        self._prepare()
        count = len(self.builder)
        G_LOGGER.info(f"Reducing a model of {count} node(s) in {self.mode} mode")
        last = count - 1
        if self.reduce_outputs:
            last = self._reduce_outputs(last)
        first = 0
        if self.reduce_inputs:
            first = self._reduce_inputs(last)
        nodes = list(range(first, last + 1))
        if len(nodes) > 2:
            nodes = self._prune(nodes) if self.mode == "linear" else self._reduce_branch(nodes)

        if self.implied_result(nodes) is not False:
            # The result was only assumed to fail (no candidate within it failed): confirm it.
            marker = _OneShot()
            self._loop("verify", lambda _: nodes, marker)
            if not marker.failed:
                G_LOGGER.critical("The model passes the check: there is no failure to reduce")

        outcomes = self.debugger.check_outcomes
        if self.debugger.check_always_failed_alike() and (len(outcomes) >= 2 or outcomes[0][0] == 2):
            code = outcomes[0][0]
            hint = ", usually a usage error of the command" if code == 2 else ""
            G_LOGGER.warning(
                f"The check failed the same way in all {len(outcomes)} iteration(s) (exit status {code}{hint}, "
                f"identical output), whatever the model's size: the --check command itself is likely broken, and "
                f"the reduced model says nothing about the failure. Run the check command by hand on the original "
                f"model first."
            )
        model = self.builder.build(nodes)
        good_nodes = self._min_good(len(nodes))
        good = self.builder.build(good_nodes) if good_nodes else None
        G_LOGGER.info(
            f"Reduced {count} node(s) to {describe_nodes(nodes)} "
            f"[{', '.join(self.builder.node_label(i) for i in nodes[:8])}{', ...' if len(nodes) > 8 else ''}] "
            f"in {self.debugger.iterations_run} iteration(s)"
        )
        return ReduceResult(
            nodes, model, good_nodes, good, self.debugger.iterations_run, self.debugger.checks_run
        )

    def _min_good(self, bad_size: Any) -> Any:
        """The largest passing candidate smaller than the result, else the smallest larger one."""
        if not self._passed:
            return None
        smaller = [entry for entry in self._passed if entry[0] < bad_size]
        if smaller:
            return max(smaller, key=lambda e: e[0])[1]
        return min(self._passed, key=lambda e: e[0])[1]


class _OneShot:
    """A marker of a single iteration."""

    def __init__(self) -> None:
        self.index = 0
        self.failed = False
        self.done = False

    def step(self, success: Any) -> None:
        self.failed = not success
        self.done = True

    def stop(self) -> Any:
        return self.done

    def remaining(self) -> Any:
        return 0 if self.done else 1


class _Sequence:
    """A marker that visits ``count`` positions in order, reporting each result to ``on_step``."""

    def __init__(self, count: Any) -> None:
        self.count = count
        self.index = 0
        self.on_step: Any = None

    def step(self, success: Any) -> None:
        self.on_step(success)
        self.index += 1

    def stop(self) -> bool:
        return self.index >= self.count

    def remaining(self) -> Any:
        return self.count - self.index


def _save(model: Any, path: Any) -> None:
    from poly.onnx import SaveOnnx

    SaveOnnx(model, path, durable=False)()  # a candidate lives for one iteration
