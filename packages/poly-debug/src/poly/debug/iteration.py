"""
``IterativeDebugger``: the loop every ``poly debug`` subtool runs. Each iteration produces an
artifact (a callback), checks it, sorts the tracked artifacts into good/ and bad/, records the
result in the debug replay and hands the result to the subtool to decide what comes next.
"""

import contextlib
import hashlib
import os
import time
from typing import Any

from poly.core import G_LOGGER, save_json
from poly.debug.check import InteractiveCheck
from poly.debug.context import IterationContext, SkipIteration
from poly.debug.replay import DEFAULT_REPLAY_PATH, DebugReplay, replay_key, skip_current_path

__all__ = ["IterativeDebugger", "IterationSummary", "MAX_ITERATIONS"]

MAX_ITERATIONS = 100_000
"""A safety stop for loops whose subtool never says stop."""


class IterationSummary:
    """How one ``iterate()`` call went: iterations run, passed, checked (not replayed)."""

    def __init__(self) -> None:
        self.total = 0
        self.passed = 0
        self.checked = 0
        self.replayed = 0

    def __repr__(self) -> str:
        return (
            f"IterationSummary(total={self.total}, passed={self.passed}, checked={self.checked}, "
            f"replayed={self.replayed})"
        )


def _remove(path: Any) -> None:
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            import shutil

            shutil.rmtree(path)
        elif os.path.lexists(path):
            os.remove(path)
    except OSError as err:
        G_LOGGER.warning(f"Could not clean up {path!r}: {err}")


class IterativeDebugger:
    """
    Runs debugging iterations.

    A subtool calls ``iterate(make_artifact, advance, remaining, suffix)`` once per loop it needs
    (``reduce`` runs one loop per phase); the replay and the artifact sorting span all loops.

    ``make_artifact(context)`` writes the iteration's artifact to ``context.artifact_path`` (the
    ``--iter-artifact`` path; None when the subtool has none) and may record JSON-serializable
    facts in ``context.state`` (replayed) and ``context.iteration_info`` (written to
    ``--iter-info``). It may raise ``SkipIteration(success)`` to decide the iteration without
    the check, or ``StopIteration`` to end the loop before this iteration.

    ``advance(context)`` receives the decided, read-only context; it returns True (or raises
    ``StopIteration``) to end the loop. Without ``advance``, ``until`` decides.

    ``remaining()`` estimates the iterations left, for progress messages.
    """

    def __init__(
        self,
        check: Any = None,
        sorter: Any = None,
        iter_artifact_path: Any = None,
        remove_intermediate: bool = True,
        iteration_info_path: Any = None,
        until: Any = None,
        load_debug_replay: Any = None,
        save_debug_replay: Any = DEFAULT_REPLAY_PATH,
    ) -> None:
        """
        Args:
            check (Callable[[str], CheckResult]): Decides each iteration (``CheckCommand`` or
                    ``InteractiveCheck``). Defaults to asking interactively.
            sorter (ArtifactSorter): Sorts ``--artifacts`` after each checked iteration.
            iter_artifact_path (str): Where ``make_artifact`` writes (``--iter-artifact``).
            remove_intermediate (bool): Whether to delete that artifact after each iteration.
            iteration_info_path (str): Where to write the iteration's info as JSON (``--iter-info``);
                    it is removed after the iteration.
            until (Until): Stopping rule for loops without an ``advance`` callback.
            load_debug_replay (Union[str, DebugReplay]): Replay whose iterations are skipped.
            save_debug_replay (str): Where the replay is saved after every iteration (None: not saved).
        """
        self.check = check or InteractiveCheck()
        self.sorter = sorter
        self.iter_artifact_path = os.fspath(iter_artifact_path) if iter_artifact_path else None
        self.remove_intermediate = bool(remove_intermediate)
        self.iteration_info_path = iteration_info_path
        self.until = until
        self.save_debug_replay = save_debug_replay
        if isinstance(load_debug_replay, DebugReplay):
            self.replay = DebugReplay(load_debug_replay)
        elif load_debug_replay:
            self.replay = DebugReplay.load(load_debug_replay)
            G_LOGGER.info(f"Loaded debug replay from {load_debug_replay}: {self.replay.summary()}")
        else:
            self.replay = DebugReplay()
        self.resuming = bool(self.replay)
        if self.iter_artifact_path and os.path.lexists(self.iter_artifact_path) and not self.resuming:
            G_LOGGER.critical(
                f"--iter-artifact: {self.iter_artifact_path!r} already exists; refusing to overwrite it. "
                "Remove it or choose another path with --iter-artifact"
            )
        self._used_suffixes: set[Any] = set()
        self.iterations_run = 0
        """Iterations of all loops so far (replayed ones included)."""
        self.checks_run = 0
        """Iterations decided by the check in this session (not replayed, not skipped)."""
        self.check_outcomes: list[Any] = []
        """(exit status, digest of stdout+stderr) of each run of a check command in this session."""
        self.first_check_output = ""
        """The last line the first run of a check command printed (to name a failure)."""

    def check_always_failed_alike(self) -> bool:
        """Whether a check command ran in this session and failed every time with the same exit
        status and the same output (and no iteration passed): then, when it ran more than once
        or gave a usage error's status, the check itself is likely broken (a usage error, a
        missing file), whatever the artifact."""
        outcomes = self.check_outcomes
        return len(outcomes) >= 1 and self.checks_run == len(outcomes) and len(set(outcomes)) == 1 and not any(
            context.success for context in self.replay.values())

    def _save_replay(self, path: Any, description: Any = None) -> None:
        # Rewritten twice per iteration: atomic (a crash of the session leaves the previous
        # replay whole) but not flushed to disk each time, which would cost more than the
        # iteration's own work.
        if path:
            self.replay.save(path, description, durable=False)

    def _run_one(self, context: Any, make_artifact: Any, key: Any, stack: Any) -> None:
        """Produces, checks and sorts one iteration; fills ``context``."""
        if self.iter_artifact_path and self.remove_intermediate:
            stack.callback(_remove, self.iter_artifact_path)
        do_check = True
        if make_artifact is not None:
            try:
                make_artifact(context)
            except SkipIteration as skip:
                G_LOGGER.info(f"Iteration decided without the check: {skip}")
                context.success = skip.success
                do_check = False
        if self.iteration_info_path:
            save_json(dict(context.iteration_info), self.iteration_info_path)
            stack.callback(_remove, self.iteration_info_path)

        # Recorded as a failure first: if the check crashes the session, the `_skip_current`
        # replay resumes past this iteration.
        if self.save_debug_replay:
            pending = context.copy()
            pending.success = False
            self.replay[key] = pending
            self._save_replay(skip_current_path(self.save_debug_replay))
        if do_check:
            result = self.check(self.iter_artifact_path)
            context.success, context.returncode = result.success, result.returncode
            self.checks_run += 1
            if result.returncode is not None:  # a command, not an interactive answer
                output = (result.stdout or "") + (result.stderr or "")
                digest = hashlib.sha256(output.encode(errors="replace")).hexdigest()
                self.check_outcomes.append((result.returncode, digest))
                if len(self.check_outcomes) == 1:
                    lines = [line.strip() for line in output.splitlines() if line.strip()]
                    self.first_check_output = lines[-1][:200] if lines else ""
            if self.sorter is not None:
                self.sorter.sort(context.success, f"_{key.lstrip('_')}", result.returncode)
        self.replay[key] = context
        self._save_replay(self.save_debug_replay)

    def iterate(self, make_artifact: Any = None, advance: Any = None, remaining: Any = None, suffix: Any = None) -> Any:
        """
        Runs iterations until ``advance`` (or ``until``) says stop.

        Args:
            make_artifact (Callable[[IterationContext], None]): Produces the iteration's artifact.
            advance (Callable[[IterationContext], Optional[bool]]): Takes the result; True stops.
            remaining (Callable[[], Optional[int]]): Estimated iterations left.
            suffix (str): Names this loop in replay keys and artifact names; must differ between
                    the loops of one session.

        Returns:
            IterationSummary
        """
        if suffix in self._used_suffixes:
            G_LOGGER.critical(f"Internal error: loop suffix {suffix!r} used twice in one debugging session")
        self._used_suffixes.add(suffix)
        if advance is None and self.until is None:
            G_LOGGER.critical(
                "Internal error: an iteration loop needs an advance callback or an --until rule"
            )

        summary = IterationSummary()
        for index in range(MAX_ITERATIONS):
            context = IterationContext(iteration_info={"iteration": index})
            context.artifact_path = self.iter_artifact_path
            key = replay_key(index, suffix)
            left = (
                remaining()
                if remaining is not None
                else (self.until.remaining(index) if self.until else None)
            )
            progress = f" of ~{index + left}" if left is not None else ""
            started = time.time()
            with contextlib.ExitStack() as stack, G_LOGGER.indent():
                G_LOGGER.start(
                    f"RUNNING | Iteration {index + 1}{progress}" + (f" | {suffix}" if suffix else "")
                )
                if key in self.replay:
                    context = self.replay[key]
                    context.returncode = None
                    summary.replayed += 1
                    G_LOGGER.info(
                        f"Loaded from the debug replay: {'passed' if context.success else 'failed'}"
                    )
                else:
                    try:
                        self._run_one(context, make_artifact, key, stack)
                    except StopIteration:
                        break
                    except KeyboardInterrupt:
                        hint = (
                            f"; resume with --load-debug-replay {self.save_debug_replay}"
                            if self.save_debug_replay and os.path.exists(self.save_debug_replay)
                            else ""
                        )
                        G_LOGGER.error(f"Interrupted during iteration {index + 1}{hint}")
                        raise
                    summary.checked += 1
                duration = time.time() - started
                summary.total += 1
                self.iterations_run += 1
                if context.success:
                    summary.passed += 1
                    G_LOGGER.finish(f"PASSED | Iteration {index + 1} | Duration {duration:.3f}s")
                else:
                    G_LOGGER.error(f"FAILED | Iteration {index + 1} | Duration {duration:.3f}s")
                context.freeze()
                try:
                    stop = advance(context) if advance is not None else self.until.done(context)
                except StopIteration:
                    stop = True
                if stop:
                    break
        else:
            G_LOGGER.warning(f"Stopped after the maximum of {MAX_ITERATIONS} iterations")

        if summary.total:
            rate = 100.0 * summary.passed / summary.total
            G_LOGGER.finish(
                f"Finished {summary.total} iteration(s) | Passed: {summary.passed}/{summary.total} | Pass Rate: {rate:.1f}%"
            )
        return summary
