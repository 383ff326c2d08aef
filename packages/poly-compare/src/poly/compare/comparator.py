"""
``Comparator``: runs several runners on the same inputs (``run``), post-processes and validates
their outputs, and compares them pair by pair (``compare_accuracy``).
"""

from __future__ import annotations

import bisect
import contextlib
import copy
import itertools
import os
import queue
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, cast, overload

import numpy as np

from poly.compare.io.data_loader import DataLoader, DataLoaderCache, check_feed_dict, coerce_feed_dict
from poly.compare.io.iteration_files import IterationWriter, is_single_file
from poly.compare.results import IterationResult, RunResults
from poly.core import G_LOGGER, BaseRunner, LogMode, TensorMetadata

if TYPE_CHECKING:
    from poly.compare.verdicts.accuracy import AccuracyResult, AccuracyResults

# The comparison's modules (comparison functions, verdicts, report lines, the NaN/Inf check) are
# imported by the methods that compare: a run that only runs (one runner) does not load them.

__all__ = ["Comparator"]


def _close_stream(stream: Any) -> None:
    close = getattr(stream, "close", None)
    if callable(close):
        close()


def _iterate_runner(name: Any, iteration_results: Any) -> Iterator[Any]:
    # One stream per runner entry (so runners that share a name stay apart).
    for result in iteration_results:
        yield RunResults([(name, [result])])


def _save_inputs_file(feed_dicts: Any, path: Any, description: Any) -> None:
    # imported here: its .npz codec brings zipfile (and pathlib, urllib...), which a run that saves
    # no inputs never needs (~20 ms of start-up, ~90 ms without compiled bytecode)
    from poly.compare.io.saved_inputs import save_inputs

    save_inputs(feed_dicts, path, description=description)


def _save_run_results_file(run_results: Any, path: Any, description: Any) -> None:
    run_results.save(path)


def _arrays(obj: Any) -> list[Any]:
    return [arr for arr in obj.values() if isinstance(arr, np.ndarray)]


def _byte_range(arr: np.ndarray) -> tuple[int, int]:
    """The first and past-the-last byte addresses ``arr`` may touch (numpy's ``byte_bounds``, which
    moved between NumPy versions); an empty array's range is empty."""
    lo = hi = arr.__array_interface__["data"][0]
    for count, stride in zip(arr.shape, arr.strides, strict=True):
        if count == 0:
            return lo, lo
        if stride < 0:
            lo += (count - 1) * stride
        else:
            hi += (count - 1) * stride
    return lo, hi + arr.itemsize


class _KeptExtents:
    """The byte ranges of the outputs kept so far, sorted. They are pairwise disjoint (an output
    overlapping one is copied before it is kept), so whether a new array may share memory with any
    of them (``np.may_share_memory``'s bounds test) is one bisection, not a test against each: with
    every tensor of a model marked as an output, the tests against each took 1.3 s of a
    1,746-output run."""

    def __init__(self) -> None:
        self._starts: list[int] = []
        self._ends: list[int] = []

    def overlaps(self, arr: np.ndarray) -> bool:
        lo, hi = _byte_range(arr)
        at = bisect.bisect_left(self._starts, hi)  # the ranges starting below hi: the last one may reach lo
        return lo < hi and at > 0 and self._ends[at - 1] > lo

    def add(self, arr: np.ndarray) -> None:
        lo, hi = _byte_range(arr)
        if lo < hi:  # (an empty array shares no memory)
            at = bisect.bisect_left(self._starts, lo)
            self._starts.insert(at, lo)
            self._ends.insert(at, hi)


def _own_outputs(outputs: Any, copy_all: Any, feed_dict: Any, kept: _KeptExtents) -> Any:
    """
    The outputs to keep: copied when the runner may overwrite them later (``copy_all``, more than
    one iteration) or when they alias an input or an output kept earlier (``kept``), so that no
    stored result changes behind the caller's back.
    """
    inputs = _arrays(feed_dict)
    owned = OrderedDict()
    for name, arr in outputs.items():
        if isinstance(arr, np.ndarray):
            aliased = copy_all or kept.overlaps(arr) or any(np.may_share_memory(arr, x) for x in inputs)
            if aliased:
                arr = arr.copy()
            kept.add(arr)
        elif copy_all:
            arr = copy.deepcopy(arr)
        owned[name] = arr
    return owned


def _input_metadata(runner: Any) -> Any:
    return runner.get_input_metadata(use_numpy_dtypes=False)


def _execute_runner(runner: Any, loader_cache: Any, warm_up: Any) -> Any:
    with runner as active:
        loader_cache.set_input_metadata(_input_metadata(active))
        if warm_up:
            G_LOGGER.start(f"{active.name:35} | Running {warm_up} warm-up run(s)")
            try:
                feed_dict = loader_cache[0]
            except IndexError:
                G_LOGGER.warning(
                    f"{warm_up} warm-up run(s) were requested, but data loader did not supply any data. "
                    "Skipping warm-up run(s)"
                )
            else:
                for _ in range(warm_up):
                    active.infer(feed_dict=feed_dict)
            G_LOGGER.finish(f"{active.name:35} | Finished {warm_up} warm-up run(s)")

        iteration_results = []
        num_iterations = len(loader_cache)
        total_runtime = 0.0
        kept = _KeptExtents()
        for feed_dict in loader_cache:
            G_LOGGER.info(
                lambda fd=feed_dict: f"{active.name:35}\n---- Inference Input(s) ----\n{TensorMetadata.from_feed_dict(fd)}",
                mode=LogMode.ONCE,
            )
            outputs = active.infer(feed_dict=feed_dict)
            runtime = active.last_inference_time() or 0.0
            total_runtime += runtime
            owned = _own_outputs(outputs, num_iterations > 1, feed_dict, kept)
            iteration_results.append(IterationResult(outputs=owned, runtime=runtime, runner_name=active.name))
            G_LOGGER.info(
                lambda o=owned: f"{active.name:35}\n---- Inference Output(s) ----\n{TensorMetadata.from_feed_dict(o)}",
                mode=LogMode.ONCE,
            )
            G_LOGGER.extra_verbose(
                lambda o=owned, r=runtime: f"{active.name:35} | Inference Time: {r * 1000.0:.3f} ms | Received outputs:\n"
                + "\n".join(f"    {name}: {arr}" for name, arr in o.items())
            )
        count = len(iteration_results)
        total_ms = total_runtime * 1000.0
        G_LOGGER.finish(
            f"{active.name:35} | Completed {count} iteration(s) in {total_ms:.4g} ms | "
            f"Average inference time: {total_ms / float(max(count, 1)):.4g} ms."
        )
        return iteration_results


def _subprocess_target(result_queue: Any, runner: Any, loader_cache: Any, warm_up: Any) -> None:
    iteration_results = None
    try:
        iteration_results = _execute_runner(runner, loader_cache, warm_up)
    except BaseException as err:  # reported in the parent; the child must still answer
        G_LOGGER.error(f"{runner.name:35} | {type(err).__name__}: {err}")
    result_queue.put(iteration_results)
    result_queue.put(loader_cache.cache)


def _run_in_subprocess(runner: Any, loader_cache: Any, warm_up: Any, timeout: Any, polling_interval: Any) -> Any:
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if "fork" in methods else None)
    result_queue = ctx.Queue()
    process = ctx.Process(target=_subprocess_target, args=(result_queue, runner, loader_cache, warm_up))
    process.start()
    iteration_results, cache, received = None, None, False
    poll = polling_interval / 2 if polling_interval else None
    try:
        while not received:
            try:
                iteration_results = result_queue.get(timeout=poll)
                cache = result_queue.get(timeout=poll)
                received = True
            except queue.Empty:
                if not process.is_alive():
                    break
                G_LOGGER.extra_verbose("Polled subprocess - still running")
        process.join(timeout)
    finally:
        if process.is_alive():
            process.terminate()
    if iteration_results is None:
        G_LOGGER.critical(
            f"{runner.name:35} | Terminated prematurely. Check the exception logged above. If there is no exception "
            "logged above, make sure not to use the --use-subprocess flag or set use_subprocess=False in Comparator.run()."
        )
    if cache is not None and not loader_cache.cache:
        loader_cache.cache = cache
    return iteration_results


CompareFuncLike = Callable[[IterationResult, IterationResult], Mapping[str, Any]]
"""A comparison function: two iteration results -> a result per output name."""


class Comparator:
    """Runs runners on the same inputs and compares their outputs."""

    @staticmethod
    @overload
    def run(runners: Sequence[BaseRunner], data_loader: Iterable[Mapping[str, Any]] | None = None,
            warm_up: int | None = None, use_subprocess: bool | None = None, subprocess_timeout: float | None = None,
            subprocess_polling_interval: float | None = None, save_inputs_path: str | None = None,
            save_outputs_path: str | None = None, streaming: Literal[False] | None = None) -> RunResults: ...

    @staticmethod
    @overload
    def run(runners: Sequence[BaseRunner], data_loader: Iterable[Mapping[str, Any]] | None = None,
            warm_up: int | None = None, use_subprocess: bool | None = None, subprocess_timeout: float | None = None,
            subprocess_polling_interval: float | None = None, save_inputs_path: str | None = None,
            save_outputs_path: str | None = None, *, streaming: Literal[True]) -> Iterator[RunResults]: ...

    @staticmethod
    def run(
        runners: Sequence[BaseRunner],
        data_loader: Iterable[Mapping[str, Any]] | None = None,
        warm_up: int | None = None,
        use_subprocess: bool | None = None,
        subprocess_timeout: float | None = None,
        subprocess_polling_interval: float | None = None,
        save_inputs_path: str | None = None,
        save_outputs_path: str | None = None,
        streaming: bool | None = None,
    ) -> RunResults | Iterator[RunResults]:
        """
        Runs every runner on every input the data loader supplies (the same inputs for all, made to
        fit each runner's input metadata).

        Args:
            runners (List[BaseRunner]): The runners.
            data_loader (Iterable[Dict[str, numpy.ndarray]]): Feed dicts. A loader with an
                    ``input_metadata`` attribute (like ``DataLoader``) is told the first runner's
                    inputs. Defaults to ``DataLoader()`` (synthetic data, seed 1, one iteration).
            warm_up (int): Untimed runs per runner before the iterations. Defaults to 0.
            use_subprocess (bool): Run each runner in a child process (exclusive GPU access).
            subprocess_timeout (int): Seconds to wait for a child process when joining it.
            subprocess_polling_interval (int): Seconds between checks that a child is alive;
                    0 waits indefinitely. Defaults to 30.
            save_inputs_path (str): Where to save the inputs: a path with an extension is one file
                    (``.npz`` or JSON), one without is a directory of per-iteration JSON files.
            save_outputs_path (str): Where to save the results, with the same file/directory rule.
            streaming (bool): Return a generator of single-iteration ``RunResults`` with every
                    runner active at once (constant memory); no warm-up or subprocesses then.

        Returns:
            RunResults (or a generator of them when streaming).
        """
        for path_a, path_b in [(save_inputs_path, save_outputs_path)]:
            if path_a is not None and path_b is not None and os.path.realpath(path_a) == os.path.realpath(path_b):
                G_LOGGER.critical(
                    f"save_inputs_path and save_outputs_path resolve to the same path ('{path_a}'). Use distinct paths."
                )
        if streaming:
            if warm_up or use_subprocess:
                G_LOGGER.critical(
                    "streaming=True does not support warm_up or use_subprocess. Set streaming=False to use them."
                )
            return Comparator._run_streaming(runners, data_loader, save_inputs_path, save_outputs_path)

        warm_up = warm_up or 0
        data_loader = DataLoader() if data_loader is None else data_loader
        polling_interval = 30 if subprocess_polling_interval is None else subprocess_polling_interval
        loader_cache = DataLoaderCache(data_loader)
        run_results = RunResults()
        if not runners:
            G_LOGGER.warning(
                "No runners were provided to Comparator.run(). Inference will not be run, and run results will be empty."
            )
        for runner in runners:
            G_LOGGER.start(f"{runner.name:35} | Activating and starting inference")
            if use_subprocess:
                iteration_results = _run_in_subprocess(
                    runner, loader_cache, warm_up, subprocess_timeout, polling_interval
                )
            else:
                iteration_results = _execute_runner(runner, loader_cache, warm_up)
            run_results.append((runner.name, iteration_results))
        G_LOGGER.verbose(f"Successfully ran: {[r.name for r in runners]}")

        if save_inputs_path is not None and runners:
            with IterationWriter(save_inputs_path, description="inference input data", save=_save_inputs_file) as writer:
                for feed_dict in loader_cache.cache:
                    writer.append(feed_dict)
        if save_outputs_path is not None:
            if is_single_file(save_outputs_path):
                run_results.save(save_outputs_path)
            else:
                with IterationWriter(save_outputs_path, description="inference results") as writer:
                    for single in run_results.split():
                        writer.append(single)
        return run_results

    @staticmethod
    def _run_streaming(runners: Any, data_loader: Any, save_inputs_path: Any, save_outputs_path: Any) -> Iterator[Any]:
        loader = DataLoader() if data_loader is None else data_loader
        if not runners:
            G_LOGGER.warning("No runners were provided to Comparator.run(streaming=True). Inference will not be run.")
            return
        with contextlib.ExitStack() as stack:
            active = []
            for runner in runners:
                G_LOGGER.start(f"{runner.name:35} | Activating and starting inference")
                active.append(stack.enter_context(runner))
            metadatas = [_input_metadata(runner) for runner in active]
            with contextlib.suppress(AttributeError):
                loader.input_metadata = metadatas[0]
            input_writer = IterationWriter(
                save_inputs_path, copy_on_accumulate=True, description="inference input data", save=_save_inputs_file
            )
            output_writer = IterationWriter(
                save_outputs_path, combine=RunResults.concat, copy_on_accumulate=True,
                description="inference results", save=_save_run_results_file,
            )
            try:
                for index, feed_dict in enumerate(loader):
                    check_feed_dict(feed_dict)
                    G_LOGGER.info(
                        lambda fd=feed_dict, i=index: f"Streaming iteration {i}\n---- Inference Input(s) ----\n"
                        f"{TensorMetadata.from_feed_dict(fd)}",
                        mode=LogMode.ONCE,
                    )
                    input_writer.append(feed_dict)
                    single = RunResults()
                    for runner, metadata in zip(active, metadatas, strict=True):
                        fitted = coerce_feed_dict(feed_dict, metadata)
                        outputs = _own_outputs(runner.infer(feed_dict=fitted), False, fitted, _KeptExtents())
                        runtime = runner.last_inference_time()
                        single.append((runner.name, [IterationResult(outputs=outputs, runtime=runtime, runner_name=runner.name)]))
                    output_writer.append(single)
                    yield single
            finally:
                input_writer.flush()
                output_writer.flush()

    @staticmethod
    def postprocess(run_results: Any, postprocess_func: Any) -> Iterator[Any]:
        """
        Applies ``postprocess_func`` (``IterationResult -> IterationResult``) to every iteration:
        in place for a ``RunResults``, lazily for a stream, element-wise for a list.
        """
        if isinstance(run_results, (list, tuple)):
            return [Comparator.postprocess(run, postprocess_func) for run in run_results]  # type: ignore[return-value]
        name = getattr(postprocess_func, "__name__", type(postprocess_func).__name__)

        def apply(single: Any) -> Any:
            for _, iteration_results in single:
                for index, iter_result in enumerate(iteration_results):
                    iteration_results[index] = postprocess_func(iter_result)
            return single

        if isinstance(run_results, RunResults):
            G_LOGGER.start(f"Applying post-processing to outputs: {name}")
            apply(run_results)
            G_LOGGER.finish("Finished applying post-processing")
            return run_results  # type: ignore[return-value]

        def stream() -> Iterator[Any]:
            G_LOGGER.verbose(f"Will apply post-processing to streamed outputs: {name}")
            try:
                for single in run_results:
                    yield apply(single)
            finally:
                _close_stream(run_results)

        return stream()

    @staticmethod
    def default_comparisons(run_results: Any) -> list[Any]:
        """Every runner against the first: ``[(0, 1), (0, 2), ...]``."""
        return [(0, i) for i in range(1, len(run_results))]

    @staticmethod
    def _check_average_supported(funcs: Any, fail_fast: Any) -> None:
        from poly.compare.funcs.base import metric_fields_for_func
        from poly.compare.verdicts.thresholds import SimpleThreshold

        if fail_fast:
            G_LOGGER.critical("check_average and fail_fast cannot be used together.")
        for func in funcs:
            fields = metric_fields_for_func(func)
            if fields:
                threshold = func.thresholds_for("")
                if isinstance(threshold, SimpleThreshold) and threshold.check_error_stat == "elemwise":
                    G_LOGGER.critical(
                        "check_average is not supported with check_error_stat='elemwise': it is a per-element "
                        "check with no scalar statistic to average. Specify max, mean, median, or quantile."
                    )
                continue
            if fields == []:
                G_LOGGER.critical(
                    "The selected compare_func does not produce averageable metrics and cannot be used with "
                    "check_average=True."
                )
            G_LOGGER.critical(
                "The provided compare_func does not support average comparison. Use a compare_func that produces "
                "averageable metrics (sets _RESULT_CLASS and implements thresholds_for) with check_average=True."
            )

    @staticmethod
    @overload
    def compare_accuracy(run_results: RunResults | Iterable[RunResults], fail_fast: bool = False,
                         comparisons: Sequence[tuple[int, int]] | None = None,
                         compare_func: CompareFuncLike | None = None, check_average: bool = False) -> AccuracyResult: ...

    @staticmethod
    @overload
    def compare_accuracy(run_results: RunResults | Iterable[RunResults], fail_fast: bool = False,
                         comparisons: Sequence[tuple[int, int]] | None = None, *,
                         compare_func: Sequence[CompareFuncLike], check_average: bool = False) -> AccuracyResults: ...

    @staticmethod
    def compare_accuracy(run_results: RunResults | Iterable[RunResults], fail_fast: bool = False,
                         comparisons: Sequence[tuple[int, int]] | None = None,
                         compare_func: CompareFuncLike | Sequence[CompareFuncLike] | None = None,
                         check_average: bool = False) -> AccuracyResult | AccuracyResults:
        """
        Compares the outputs of runner pairs, iteration by iteration.

        Args:
            run_results (Union[RunResults, Iterable[RunResults], List]): The results; a stream of
                    single-iteration ``RunResults`` (``Comparator.run(streaming=True)``) or a list of
                    runs is compared one iteration at a time.
            fail_fast (bool): Stop after the first iteration with a mismatch. Defaults to False.
            comparisons (List[Tuple[int, int]]): Runner index pairs to compare. Defaults to every
                    runner against the first.
            compare_func (Union[Callable, Sequence[Callable]]): Comparison function(s)
                    (``IterationResult, IterationResult -> Dict[str, result]``). Defaults to
                    ``CompareFunc.simple()``.
            check_average (bool): Check each metric averaged over the iterations instead of each
                    iteration (not with ``fail_fast`` or ``elemwise``). Defaults to False.

        Returns:
            AccuracyResult for a single ``compare_func`` (truthy when everything passed;
            ``percentage(pair)`` is a pair's pass rate), or ``AccuracyResults`` (one per function)
            for a list of functions.
        """
        from poly.compare.funcs.simple import SimpleCompareFunc
        from poly.compare.verdicts.accuracy import AccuracyResult, AccuracyResults

        single_func = not isinstance(compare_func, (list, tuple))
        given: list[CompareFuncLike | None] = (
            [cast("CompareFuncLike | None", compare_func)] if single_func
            else list(cast("Sequence[CompareFuncLike]", compare_func)))
        funcs: list[CompareFuncLike] = [SimpleCompareFunc() if func is None else func for func in given]
        if check_average:
            Comparator._check_average_supported(funcs, fail_fast)

        runs = run_results if isinstance(run_results, (list, tuple)) else [run_results]
        streams: list[Any] = []
        for run in runs:
            if isinstance(run, RunResults):
                streams.extend(_iterate_runner(name, its) for name, its in run)
            else:
                streams.append(run)

        aggregation = "average" if check_average else "per_sample"
        results = [AccuracyResult(aggregation=aggregation) for _ in funcs]
        pairs: list[tuple[str, str]] = []
        comps: list[tuple[int, int]] = []
        runner_names: list[str] | None = None

        def finish(do_summaries: bool) -> AccuracyResult | AccuracyResults:
            if do_summaries:
                for pair in pairs:
                    Comparator._summarize_pair(results, pair, check_average)
            return results[0] if single_func else AccuracyResults(results)

        end = object()
        compared = 0
        try:
            for index, group in enumerate(itertools.zip_longest(*streams, fillvalue=end)):
                exhausted = [i for i, item in enumerate(group) if item is end]
                if exhausted:
                    G_LOGGER.warning(
                        f"The provided streams have different numbers of iterations. Only the first {compared} "
                        f"iteration(s) -- present in all {len(streams)} streams -- were compared; stream(s) at "
                        f"index {exhausted} ran out first."
                    )
                    break
                merged = RunResults()
                for single in group:
                    merged.extend(single)
                names = list(merged.keys())
                if runner_names is None:
                    runner_names = names
                    comps = list(comparisons) if comparisons is not None else Comparator.default_comparisons(merged)
                    pairs = [(names[i], names[j]) for i, j in comps]
                    for result in results:
                        for pair in pairs:
                            result[pair] = []
                    for name0, name1 in pairs:
                        G_LOGGER.start(f"Accuracy Comparison | {name0} vs. {name1}")
                elif names != runner_names:
                    G_LOGGER.critical(
                        f"Streamed iteration {index} contains a different set of runners than the first "
                        f"({names} vs. {runner_names}). Every iteration must contain the same runners in the same order."
                    )

                G_LOGGER.info(f"Iteration: {index}")
                for (i0, i1), pair in zip(comps, pairs, strict=True):
                    result0, result1 = merged[i0][1][0], merged[i1][1][0]
                    with G_LOGGER.indent():
                        mismatched = Comparator._compare_pair_iteration(funcs, results, pair, result0, result1, fail_fast)
                    if mismatched:
                        return finish(do_summaries=False)
                compared += 1
            return finish(do_summaries=True)
        finally:
            for stream in streams:
                try:
                    _close_stream(stream)
                except Exception as err:
                    G_LOGGER.warning(f"Error while closing a stream: {err}")

    @staticmethod
    def _compare_pair_iteration(funcs: Any, results: Any, pair: Any, result0: Any, result1: Any, fail_fast: Any) -> Any:
        from poly.compare.stats.report_lines import log_compared_output_stats

        match_dicts = []
        mismatched = False
        for func, result in zip(funcs, results, strict=True):
            match_dict = func(result0, result1)
            result[pair].append(match_dict)
            match_dicts.append(match_dict)
            if fail_fast and any(not bool(m) for m in match_dict.values()):
                mismatched = True
        log_compared_output_stats(result0, result1, match_dicts, *pair)
        return mismatched

    @staticmethod
    def _summarize_pair(results: Any, pair: Any, check_average: Any) -> Any:
        def severity(passed: Any) -> Any:
            return G_LOGGER.FINISH if passed else G_LOGGER.ERROR

        prefix = f"Accuracy Summary | {pair[0]} vs. {pair[1]} | "
        if not check_average:
            num_iters = len(results[0][pair])
            passed = sum(
                all(bool(match) for result in results for match in result[pair][i].values()) for i in range(num_iters)
            )
            rate = (float(passed) / float(num_iters) if num_iters else 1.0) * 100
            G_LOGGER.log(
                prefix + f"Passed: {passed}/{num_iters} iterations | Pass Rate: {rate:.2f}%", severity(passed == num_iters)
            )
            return

        per_func = [result.average_results(pair) for result in results]
        output_names = list(dict.fromkeys(name for r in per_func for name in r))

        def output_passed(name: Any) -> bool:
            return all(bool(r.get(name, True)) for r in per_func)

        passed = sum(output_passed(name) for name in output_names)
        G_LOGGER.log(prefix + f"Passed: {passed}/{len(output_names)} outputs", severity(passed == len(output_names)))
        descriptions: dict[Any, Any] = {}
        for result in results:
            for name, description in result.describe_average(pair).items():
                descriptions.setdefault(name, []).append(description)
        with G_LOGGER.indent():
            for name in output_names:
                ok = output_passed(name)
                G_LOGGER.log(f"{name} | {'PASSED' if ok else 'FAILED'}:", severity(ok))
                with G_LOGGER.indent():
                    for line, line_passed in descriptions.get(name, []):
                        G_LOGGER.log(line, severity(line_passed))

    @staticmethod
    def validate(run_results: RunResults | Iterable[RunResults] | Sequence[RunResults], check_inf: bool | None = None,
                 check_nan: bool | None = None, fail_fast: bool | None = None) -> Any:
        """
        Checks outputs for NaNs (``check_nan``, default True) and Infs (``check_inf``, default
        False).

        Returns:
            bool for a ``RunResults``; a validating pass-through generator for a stream (an invalid
            iteration raises); a list of those for a list.
        """
        from poly.compare.stats.nan_inf_check import validate_run_results, validate_stream

        if isinstance(run_results, (list, tuple)):
            return [Comparator.validate(run, check_inf, check_nan, fail_fast) for run in run_results]
        check_inf = False if check_inf is None else check_inf
        check_nan = True if check_nan is None else check_nan
        if not isinstance(run_results, RunResults):
            return validate_stream(run_results, check_inf, check_nan)
        return validate_run_results(run_results, check_inf, check_nan, bool(fail_fast))
