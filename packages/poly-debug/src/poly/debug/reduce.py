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

A check that compares against saved golden outputs (``poly run ... --load-outputs golden.json``)
pairs each output of a candidate with the golden output of the same name and, when there is
none, with the golden output at the same position: a cut ending at, say, an un-folded
``Constant`` (whose output a layer-wise golden file does not hold) would then be compared with
an unrelated tensor and "fail". So ``Reduce`` reads the golden files the check command names
(``--load-outputs``/``--load-results``; or takes ``reference_outputs``) and marks as outputs of
a candidate only the tensors the golden outputs hold; a candidate left without any such output
cannot fail by comparison: it counts as passing (uninformative) without running the check.
"""

import os
from typing import Any

from poly.core import G_LOGGER, invoke_if_callable
from poly.debug.check import split_check_command
from poly.debug.context import SkipIteration
from poly.debug.markers import BisectMarker, LinearMarker
from poly.debug.subgraph import SubgraphBuilder, describe_nodes, toposort_model
from poly.debug.tensor_info import TensorInfo
from poly.onnx import override_input_shapes

__all__ = ["Reduce", "ReduceResult", "golden_output_paths", "load_golden_output_names"]

GOLDEN_OUTPUT_FLAGS = ("--load-outputs", "--load-results")
"""The flags of ``poly run`` (and ``polygraphy run``) that name saved outputs to compare against."""


def _looks_like_option(arg: str) -> bool:
    return arg.startswith("-") and arg != "-" and not arg[1:2].isdigit() and not arg[1:2] == "."


def golden_output_paths(command: Any) -> list[str]:
    """
    The files a check command compares against: the values of its ``--load-outputs`` /
    ``--load-results`` flags (``--load-outputs a.json b.json`` or ``--load-outputs=a.json``).

    Args:
        command (Union[Sequence[str], str]): The check command (see ``split_check_command``).

    Returns:
        List[str]: The paths, in order; empty when the command names none.
    """
    args = split_check_command(command)
    paths: list[str] = []
    index = 0
    while index < len(args):
        flag, eq, value = args[index].partition("=")
        index += 1
        if flag not in GOLDEN_OUTPUT_FLAGS:
            continue
        if eq:
            paths.append(value)
            continue
        while index < len(args) and not _looks_like_option(args[index]):
            paths.append(args[index])
            index += 1
    return paths


def load_golden_output_names(paths: Any) -> Any:
    """
    The names of the outputs held by saved results (``RunResults`` files: JSON or ``.npz``), over
    every runner and iteration.

    Returns:
        Optional[Set[str]]: The names; None when a file cannot be read (with a warning).
    """
    from poly.compare import RunResults

    names: set[str] = set()
    for path in paths:
        if not os.path.isfile(path):
            G_LOGGER.warning(
                f"The --check command compares against {path!r}, which is not a file here; "
                "candidate outputs are not matched to its golden outputs"
            )
            return None
        try:
            results = RunResults.load(path)
        except Exception as err:  # the check command reports the file's problem itself
            G_LOGGER.warning(
                f"Could not read the golden outputs {path!r} named by the --check command ({err}); "
                "candidate outputs are not matched to its golden outputs"
            )
            return None
        for _, iterations in results.items():
            for iteration in iterations:
                names.update(iteration.keys())
    return names


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
        reference_outputs: Any = "auto",
        refuse_check_failing_alike: bool = False,
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
            reference_outputs (Union[str, Collection[str], None]): The names of the golden outputs
                    the check compares candidates against: only those tensors become outputs of
                    a candidate, and a candidate with none of them counts as passing without
                    running the check. ``"auto"`` (the default) reads them from the files the
                    check command passes to ``--load-outputs``/``--load-results``, if any; None
                    marks every tensor the rest of the model reads as an output.
            refuse_check_failing_alike (bool): Stop with an error, instead of returning a result,
                    when every run of the check command failed the same way, even the first and
                    a control run on the nodes left out (``poly debug reduce`` sets it).
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
        self.refuse_check_failing_alike = refuse_check_failing_alike
        if reference_outputs is not None and not isinstance(reference_outputs, str):
            reference_outputs = frozenset(reference_outputs)
        elif reference_outputs is not None and reference_outputs != "auto":
            G_LOGGER.critical(f"reference_outputs must be 'auto', None or a collection of names, not {reference_outputs!r}")
        self.reference_outputs = reference_outputs
        """Names of the golden outputs candidates are compared against (None: any output); see ``__init__``."""
        self.builder: Any = None
        self._passed: list[Any] = []  # (node count, indices) of passing candidates
        self._failed: list[Any] = []
        self._passed_sets: list[Any] = []  # the same node sets, as frozensets
        self._failed_sets: list[Any] = []
        self._uninformative = 0  # candidates without golden outputs, counted as passing

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
        if self.reference_outputs == "auto":
            self.reference_outputs = self._golden_names_of_check()

    def _golden_names_of_check(self) -> Any:
        command = getattr(self.debugger.check, "command", None)
        paths = golden_output_paths(command) if command else []
        if not paths:
            return None
        names = load_golden_output_names(paths)
        if names is None:
            return None
        produced = {name for node in self.builder.nodes for name in node.output if name}
        G_LOGGER.info(
            f"The --check command compares against golden outputs ({', '.join(paths)}): candidates mark as "
            f"outputs only the {len(names & produced)} tensor(s) of the model those hold"
        )
        if not names & produced:
            G_LOGGER.warning(
                f"The golden outputs of the --check command ({', '.join(paths)}) hold no tensor of this model; "
                "every candidate would count as passing. Were they saved from another model?"
            )
        return frozenset(names)

    def build(self, nodes: Any) -> Any:
        """
        The candidate model made of ``nodes``, its outputs limited to the golden outputs the
        check compares against (``reference_outputs``).

        Returns:
            Optional[onnx.ModelProto]: None when none of its outputs is a golden output (such a
            candidate cannot fail by comparison).
        """
        model = self.builder.build(nodes)
        reference = self.reference_outputs
        if reference is None or reference == "auto":
            return model
        outputs = list(model.graph.output)
        kept = [o for o in outputs if o.name in reference]
        if not kept:
            return None
        if len(kept) < len(outputs):
            dropped = [o.name for o in outputs if o.name not in reference]
            G_LOGGER.verbose(f"Not marking {dropped} as output(s): the check's golden outputs do not hold them")
            del model.graph.output[:]
            model.graph.output.extend(kept)
        return model

    # -- one loop -----------------------------------------------------------------------------

    def _loop(self, suffix: Any, candidate: Any, marker: Any) -> Any:
        """Runs a marker-driven loop; ``candidate(index)`` gives the node set for a marker index."""

        def make_artifact(context: Any) -> None:
            nodes = candidate(marker.index)
            self._write(context, nodes)

        def advance(context: Any) -> Any:
            nodes = candidate(marker.index)
            self._check_replay(context, nodes)
            if context.state.get("uninformative"):
                self._uninformative += 1  # a pass that says nothing about the node set's subsets
            else:
                self._record(context.success, nodes)
            marker.step(context.success)
            return marker.stop()

        if not marker.stop():
            self.debugger.iterate(make_artifact, advance, marker.remaining, suffix=suffix)
        return marker

    def _write(self, context: Any, nodes: Any) -> None:
        model = self.build(nodes)
        context.state["nodes"] = describe_nodes(nodes)
        context.iteration_info["num_nodes"] = len(nodes)
        if model is None:
            context.state["uninformative"] = True
            outputs = self.builder.io_names(nodes)[2]
            raise SkipIteration(
                True,
                f"none of the outputs of the candidate ({len(nodes)} node(s): {', '.join(outputs[:4])}"
                f"{', ...' if len(outputs) > 4 else ''}) is among the golden outputs of the check, so it cannot "
                "fail by comparison: counted as passing",
            )
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
                hint = ""
                if self._uninformative:
                    hint = (
                        f" ({self._uninformative} candidate(s) had no output among the golden outputs of the check "
                        "and counted as passing: were the golden outputs saved with `--onnx-outputs mark all` "
                        "from this model?)"
                    )
                G_LOGGER.critical(f"The model passes the check: there is no failure to reduce{hint}")

        self._refuse_if_the_check_never_passed(nodes)
        model = self.build(nodes) or self.builder.build(nodes)
        good_nodes = self._min_good(len(nodes))
        good = (self.build(good_nodes) or self.builder.build(good_nodes)) if good_nodes else None
        G_LOGGER.info(
            f"Reduced {count} node(s) to {describe_nodes(nodes)} "
            f"[{', '.join(self.builder.node_label(i) for i in nodes[:8])}{', ...' if len(nodes) > 8 else ''}] "
            f"in {self.debugger.iterations_run} iteration(s)"
        )
        self._warn_if_the_check_never_passed(nodes)
        return ReduceResult(
            nodes, model, good_nodes, good, self.debugger.iterations_run, self.debugger.checks_run
        )

    def _refuse_if_the_check_never_passed(self, nodes: Any) -> None:
        """
        Stops with one line when every check failed the same way (same exit status, same output),
        even the first: after a control check on the nodes the reduction left out also fails
        alike (when those make a model), the failure is most likely unrelated to the model (a
        broken --check command, a missing GPU or file), and a reduced model would mislead.
        """
        debugger = self.debugger
        if not self.refuse_check_failing_alike or not debugger.check_always_failed_alike() or any(
                c.success for c in debugger.replay.values()):
            return
        kept = set(nodes)
        rest = [i for i in range(len(self.builder)) if i not in kept]
        controlled = bool(rest) and rest == list(range(rest[0], rest[-1] + 1))
        if controlled:
            control = _OneShot()
            self._loop("control", lambda _: rest, control)
            if not control.failed or not debugger.check_always_failed_alike():
                return  # the check tells models apart: the failure depends on the model
        elif len(debugger.check_outcomes) < 2:
            return  # one check, no control possible: nothing says the check is at fault
        code = debugger.check_outcomes[0][0]
        printed = f", last printing {debugger.first_check_output!r}" if debugger.first_check_output else ""
        scope = (f"on the node(s) kept ({describe_nodes(nodes)}) and on those left out ({describe_nodes(rest)})"
                 if controlled else "whatever the model's size")
        G_LOGGER.critical(
            f"Every check failed the same way, even the first (exit status {code}{printed}), {scope}: the failure "
            f"is probably unrelated to the model (a broken --check command, a missing GPU or file); no node could "
            f"be blamed, so no reduced model was saved. Run the check command by hand on the original model."
        )

    def _warn_if_the_check_never_passed(self, nodes: Any) -> None:
        """
        Warns when no candidate passed the check in this session: then the reduction went down
        to the first node(s) whatever they hold, and the result says nothing unless the fault
        really is there. The check failing the same way every time (same exit status, same
        output) points at the check command itself.
        """
        debugger = self.debugger
        outcomes = debugger.check_outcomes
        if not outcomes or debugger.checks_run != len(outcomes):
            return  # an interactive check, or none ran here
        contexts = list(debugger.replay.values())
        if any(c.success and not c.state.get("uninformative") for c in contexts):
            return
        code = outcomes[0][0]
        if len(set(outcomes)) == 1 and (len(outcomes) >= 2 or code in (2, 126, 127)):
            hint = {2: ", usually a usage error of the command", 126: ", a command that could not be run",
                    127: ", a command not found"}.get(code, "")
            G_LOGGER.warning(
                f"The check failed the same way in all {len(outcomes)} iteration(s) (exit status {code}{hint}, "
                f"identical output), whatever the model's size: the --check command itself is likely broken, and "
                f"the reduced model says nothing about the failure. Run the check command by hand on the original "
                f"model first."
            )
        elif len(outcomes) >= 2:
            labels = ", ".join(self.builder.node_label(i) for i in nodes[:3]) + (", ..." if len(nodes) > 3 else "")
            codes = sorted({o[0] for o in outcomes})
            G_LOGGER.warning(
                f"No candidate passed the check: all {len(outcomes)} check(s) failed (exit status "
                f"{', '.join(map(str, codes))}), so the reduction shrank the model as far as it could: {labels}. "
                f"Unless the fault is there, the check fails whatever the model (a broken command, a wrong golden "
                f"or input file): run the check command by hand on the reduced model before trusting it."
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
