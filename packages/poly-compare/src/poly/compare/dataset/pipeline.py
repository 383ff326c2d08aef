"""
The streaming validation pipeline. A loader thread reads samples and their reference outputs
ahead into a bounded queue; the calling thread runs inference; worker threads compare (the
native engine releases the GIL) and fold results into the accumulator. At most ``prefetch``
samples wait for inference and ``2 * workers`` for comparison, so memory stays bounded.
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from poly.compare.dataset.accumulator import Accumulator, SampleResult
from poly.compare.dataset.sample_reader import Sample, SampleError
from poly.core import G_LOGGER

__all__ = ["ValidationPipeline", "ValidationOutcome"]

_END = object()


class _Raised:
    def __init__(self, exc: Any) -> None:
        self.exc = exc


def _message(err: BaseException) -> str:
    lines = str(err).strip().splitlines()
    return f"{type(err).__name__}: {lines[0]}" if lines else type(err).__name__


@dataclass
class ValidationOutcome:
    """What a validation run did: the accumulator, wall time, and why it stopped."""

    accumulator: Accumulator
    elapsed: float
    interrupted: bool = False
    stopped_early: bool = False
    max_failures: int | None = None

    @property
    def passed(self) -> bool:
        """Every sample read was compared and passed, and the run was not cut short."""
        acc = self.accumulator
        return acc.failed == 0 and acc.errors == 0 and acc.compared > 0 and not self.interrupted

    @property
    def samples_per_second(self) -> float:
        return self.accumulator.samples / self.elapsed if self.elapsed > 0 else 0.0


class ValidationPipeline:
    """
    Validates ``runner`` over ``dataset`` against ``reference`` with ``checker``.

    Args:
        runner (BaseRunner): The runner under test; activated for the run if it is not active.
        dataset (Iterable[Sample | SampleError]): See ``poly.compare.dataset.sources``.
        reference (Reference): See ``poly.compare.dataset.references``.
        checker (SampleChecker): The per-sample verdict.
        workers (int): Comparison threads. Defaults to 1.
        max_failures (int): Stop reading once this many samples failed. Defaults to None (never).
        prefetch (int): Samples read ahead of inference. Defaults to 8.
        batch (int): Samples stacked along axis 0 per inference where shapes allow. Defaults to 1.
        worst_k (int): Worst samples kept. Defaults to 10.
        progress (Callable[[Accumulator, float], None]): Called after each sample (under a lock)
                with the accumulator and the seconds since the start.
        infer_threads (int): Threads running inference side by side. Used only with runners (and a
                reference runner) whose ``thread_safe_infer`` is True, such as ``OnnxrtRunner``;
                others run on one thread. Defaults to 1.
        threaded (bool): Whether samples are read, run and compared by threads side by side (the
                loader, inference and comparison threads above). False runs each sample through
                in turn on the calling thread: for a process that has one CPU to itself (a worker
                of ``--processes``), where threads would only take turns. Defaults to True.
    """

    def __init__(self, runner: Any, dataset: Any, reference: Any, checker: Any, workers: int = 1, max_failures: Any = None, prefetch: int = 8, batch: int = 1,
                 worst_k: int = 10, progress: Any = None, infer_threads: int = 1, threaded: bool = True) -> None:
        self.runner = runner
        self.dataset = dataset
        self.reference = reference
        self.checker = checker
        self.workers = max(1, int(workers))
        self.max_failures = max_failures
        self.prefetch = max(1, int(prefetch))
        self.batch = max(1, int(batch))
        self.worst_k = worst_k
        self.progress = progress
        self._checked_signature: Any = None
        self._casts: dict[Any, dict[str, Any]] = {}  # per feed's names and dtypes: the inputs cast to the model's dtype
        runners = [runner, getattr(reference, "runner", None)]
        safe = all(r is None or getattr(r, "thread_safe_infer", False) for r in runners)
        self.infer_threads = max(1, int(infer_threads)) if safe else 1
        self.threaded = bool(threaded)

    # loading ---------------------------------------------------------------------------------

    def _loader(self, out: queue.Queue, stop: threading.Event) -> Any:  # type: ignore[type-arg]
        def put(item: Any) -> bool:
            while not stop.is_set():
                try:
                    out.put(item, timeout=0.05)
                    return True
                except queue.Full:
                    continue
            return False

        try:
            for item in self._with_golden():
                if stop.is_set() or not put(item):
                    return
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread (KeyboardInterrupt included)
            put(_Raised(exc))
        finally:
            put(_END)

    def _with_golden(self) -> Any:
        """The dataset's samples with their golden outputs, as ``(sample, golden)`` (golden None
        where the reference runs a model), and a ``SampleError`` for each sample that cannot be read
        or whose golden outputs cannot."""
        for item in self.dataset:
            if isinstance(item, SampleError):
                self.reference.skip(item)
                yield item
                continue
            golden = None
            if not self.reference.runs_model:
                try:
                    golden = self.reference.outputs_for(item)
                except Exception as err:  # noqa: BLE001 - an unreadable reference skips the sample
                    yield SampleError(item.index, item.name, f"reference: {_message(err)}")
                    continue
            yield item, golden

    # inference -------------------------------------------------------------------------------

    def _infer(self, feed: Any) -> Any:
        # The runner checks inputs against its metadata only when their names, dtypes or shapes
        # differ from the last feed it checked: per sample, that check costs more than a comparison.
        signature = tuple((name, getattr(arr, "dtype", None), getattr(arr, "shape", None)) for name, arr in feed.items())
        check = signature != self._checked_signature
        dtypes = tuple(entry[:2] for entry in signature)  # the casts depend on names and dtypes, not shapes
        casts = self._casts.get(dtypes)
        if casts is None:
            casts = self._casts[dtypes] = self._dtype_casts(feed)
        if casts:
            feed = {name: np.asarray(arr).astype(casts[name]) if name in casts else arr for name, arr in feed.items()}
        outputs = self.runner.infer(feed, check_inputs=check)
        self._checked_signature = signature
        return outputs

    def _dtype_casts(self, feed: Any) -> dict[str, Any]:
        """The inputs of ``feed`` whose numeric dtype is not the model's, to the NumPy dtype they
        are cast to (as `poly run --load-inputs` casts saved inputs), each logged once."""
        from poly.core import DataType, LogMode, array_dtype

        casts: dict[str, Any] = {}
        metadata = self.runner.get_input_metadata()
        for name, arr in feed.items():
            meta = metadata.get(name) if hasattr(metadata, "get") else None
            want, have = getattr(meta, "dtype", None), array_dtype(arr)
            if want is None or have is None:
                continue
            want, have = DataType.from_dtype(want), DataType.from_dtype(have)
            if want == have:
                continue
            if not all(t.is_floating or t.is_integral for t in (want, have)):
                continue  # bool, strings...: the runner's own check reports them
            casts[name] = DataType.to_dtype(want, "numpy")
            G_LOGGER.warning(f"Input '{name}': the samples hold {have}, the model takes {want}: casting them "
                             "(as `poly run --load-inputs` does)", mode=LogMode.ONCE)
        return casts

    def _infer_one(self, sample: Any) -> dict[Any, Any]:
        # Copied: a runner may reuse its output buffers, and comparisons run after the next inference.
        return {name: np.array(arr, copy=True) for name, arr in self._infer(sample.feed_dict).items()}

    def _infer_batch(self, samples: Any) -> list[Any]:
        """Outputs per sample: one stacked inference where the feeds concatenate along axis 0 and
        every output splits back at the same offsets, else one inference per sample."""
        if len(samples) == 1:
            return [self._infer_one(samples[0])]
        try:
            names = list(samples[0].feed_dict)
            if any(list(s.feed_dict) != names for s in samples):
                raise ValueError
            sizes = [int(np.asarray(samples[0].feed_dict[names[0]]).shape[0]) if names else 0]
            for s in samples[1:]:
                sizes.append(int(np.asarray(s.feed_dict[names[0]]).shape[0]))
            feed = {n: np.concatenate([np.asarray(s.feed_dict[n]) for s in samples], axis=0) for n in names}
        except (ValueError, IndexError, TypeError):
            return [self._infer_one(s) for s in samples]
        try:
            outputs = self._infer(feed)
        except Exception:  # noqa: BLE001 - e.g. a static batch dimension: run the samples one by one
            self.batch = 1
            return [self._infer_one(s) for s in samples]
        offsets = np.cumsum(sizes)[:-1]
        total = sum(sizes)
        if any(np.ndim(arr) == 0 or np.shape(arr)[0] != total for arr in outputs.values()):
            return [self._infer_one(s) for s in samples]
        split = {name: [part.copy() for part in np.split(np.asarray(arr), offsets, axis=0)]
                 for name, arr in outputs.items()}
        return [{name: parts[i] for name, parts in split.items()} for i in range(len(samples))]

    # comparing -------------------------------------------------------------------------------

    def _compare(self, sample: Any, outputs: Any, golden: Any) -> SampleResult:
        try:
            return SampleResult(sample.index, sample.name, self.checker.check(outputs, golden))
        except Exception as err:  # noqa: BLE001 - a comparison that fails is the sample's error
            return SampleResult(sample.index, sample.name, error=f"comparison: {_message(err)}")

    def _run_samples(self, samples: list[Any], record: Any, hand_over: Any) -> None:
        """Runs ``samples`` (``(sample, golden)`` pairs) through the model and hands each sample's
        outputs and golden outputs to ``hand_over``; a sample that cannot run (or whose reference
        model cannot) is recorded as an error."""
        try:
            outputs = self._infer_batch([s for s, _ in samples])
        except Exception as err:  # noqa: BLE001 - a sample the model cannot run is reported
            if len(samples) > 1:  # the one that cannot run, not the whole batch
                for pair in samples:
                    self._run_samples([pair], record, hand_over)
                return
            sample = samples[0][0]
            record(SampleResult(sample.index, sample.name, error=f"inference: {_message(err)}"))
            return
        for (sample, golden), out in zip(samples, outputs, strict=True):
            if self.reference.runs_model:
                try:
                    golden = self.reference.outputs_for(sample)
                except Exception as err:  # noqa: BLE001
                    record(SampleResult(sample.index, sample.name, error=f"reference: {_message(err)}"))
                    continue
            hand_over(Sample(sample.index, sample.name, {}), out, golden)

    # the run ---------------------------------------------------------------------------------

    def run(self) -> ValidationOutcome:
        """Runs to the end of the dataset, ``max_failures``, or a KeyboardInterrupt, and returns
        what was done (never raises KeyboardInterrupt)."""
        if not self.threaded:
            return self._run_in_turn()
        acc = Accumulator(worst_k=self.worst_k)
        lock = threading.Lock()
        start = time.perf_counter()
        stop = threading.Event()
        pending: queue.Queue = queue.Queue(maxsize=self.prefetch)  # type: ignore[type-arg]
        in_flight = threading.BoundedSemaphore(2 * self.workers)
        interrupted = stopped_early = False

        def record(result: Any) -> None:
            with lock:
                acc.add(result)
                if self.progress is not None:
                    self.progress(acc, time.perf_counter() - start)

        def compare(sample: Any, outputs: Any, golden: Any) -> None:
            try:
                result = self._compare(sample, outputs, golden)
            finally:
                in_flight.release()
            record(result)

        def over_failure_limit() -> Any:
            if self.max_failures is None:
                return False
            with lock:
                return acc.failed >= self.max_failures

        def next_samples() -> Any:
            """Up to ``batch`` samples from the loader; None at the end (or when stopped)."""
            samples: list[Any] = []
            while len(samples) < self.batch:
                try:
                    item = pending.get(timeout=0.05)
                except queue.Empty:
                    if stop.is_set():
                        return None
                    continue
                if item is _END or isinstance(item, _Raised):
                    pending.put(item)  # for the other inference threads
                    if isinstance(item, _Raised):
                        raise item.exc
                    return samples or None
                if isinstance(item, SampleError):
                    record(SampleResult(item.index, item.name, error=item.message))
                    continue
                samples.append(item)
            return samples

        def hand_over(sample: Any, outputs: Any, golden: Any) -> None:
            in_flight.acquire()
            pool.submit(compare, sample, outputs, golden)

        def infer_loop() -> None:
            nonlocal stopped_early
            while not stop.is_set():
                if over_failure_limit():
                    stopped_early = True
                    return
                samples = next_samples()
                if samples is None:
                    return
                if samples:
                    self._run_samples(samples, record, hand_over)

        helper_errors = []

        def helper_loop() -> None:
            try:
                infer_loop()
            except BaseException as exc:  # noqa: BLE001 - re-raised on the main thread
                helper_errors.append(exc)
                stop.set()

        loader = threading.Thread(target=self._loader, args=(pending, stop), name="poly-validate-loader", daemon=True)
        pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="poly-validate-compare")
        helpers = [threading.Thread(target=helper_loop, name=f"poly-validate-infer-{i}", daemon=True)
                   for i in range(1, self.infer_threads)]
        try:
            with contextlib.ExitStack() as stack:
                self._active_runners(stack)
                loader.start()
                for helper in helpers:
                    helper.start()
                try:
                    infer_loop()
                except BaseException:
                    stop.set()  # Ctrl-C or an error: the other inference threads stop too
                    raise
                finally:
                    if helper_errors or stopped_early:
                        stop.set()
                    for helper in helpers:
                        while helper.is_alive():
                            helper.join(timeout=0.1)
                if helper_errors:
                    raise helper_errors[0]
        except KeyboardInterrupt:
            interrupted = True
        finally:
            stop.set()
            for helper in helpers:
                helper.join(timeout=5.0)
            try:
                pool.shutdown(wait=True)  # at most 2 * workers left: finish them
            except KeyboardInterrupt:  # a second Ctrl-C while the last comparisons finish
                interrupted = True
        loader.join(timeout=1.0)
        return ValidationOutcome(acc, time.perf_counter() - start, interrupted=interrupted,
                                 stopped_early=stopped_early, max_failures=self.max_failures)

    def _active_runners(self, stack: contextlib.ExitStack) -> None:
        for runner in (self.runner, getattr(self.reference, "runner", None)):
            if runner is not None and not getattr(runner, "is_active", False):
                stack.enter_context(runner)

    def _run_in_turn(self) -> ValidationOutcome:
        """``run`` without threads: each sample read, run and compared in turn."""
        acc = Accumulator(worst_k=self.worst_k)
        start = time.perf_counter()
        interrupted = stopped_early = False

        def record(result: Any) -> None:
            acc.add(result)
            if self.progress is not None:
                self.progress(acc, time.perf_counter() - start)

        def compare_now(sample: Any, outputs: Any, golden: Any) -> None:
            record(self._compare(sample, outputs, golden))

        try:
            with contextlib.ExitStack() as stack:
                self._active_runners(stack)
                samples: list[Any] = []
                for item in self._with_golden():
                    if self.max_failures is not None and acc.failed >= self.max_failures:
                        stopped_early = True
                        break
                    if isinstance(item, SampleError):
                        record(SampleResult(item.index, item.name, error=item.message))
                        continue
                    samples.append(item)
                    if len(samples) == self.batch:
                        self._run_samples(samples, record, compare_now)
                        samples = []
                if samples and not stopped_early:
                    self._run_samples(samples, record, compare_now)
        except KeyboardInterrupt:
            interrupted = True
        return ValidationOutcome(acc, time.perf_counter() - start, interrupted=interrupted,
                                 stopped_early=stopped_early, max_failures=self.max_failures)
