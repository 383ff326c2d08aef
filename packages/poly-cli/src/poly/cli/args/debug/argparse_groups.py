"""
The argument groups of Polygraphy's debug subtools (``polygraphy.tools.debug.subtool.
iterative_debug_args``) as argparse groups over poly.debug: ``CheckCmdArgs`` (the --check command
and how its result is judged: a ``poly.debug`` check), ``ArtifactSortArgs`` (--artifacts sorted
into good/ and bad/: an ``ArtifactSorter``) and ``IterativeDebugArgs`` (intermediate artifacts,
--until, debug replays; ``iterate`` runs a ``poly.debug.IterativeDebugger`` loop). Their flags
are the table of ``poly.cli.args.debug.options``, the one the `poly debug` commands render for click.
"""

from __future__ import annotations

import os
from typing import Any

from poly.cli.argparse_tools import BaseArgs
from poly.cli.args.debug.options import (
    ARTIFACT_OPTIONS,
    CHECK_OPTIONS,
    add_argparse_arguments,
    iteration_options,
)
from poly.core import G_LOGGER
from poly.debug import (
    ArtifactSorter,
    IterationContext,
    IterativeDebugger,
    SkipIteration,
    Until,
    make_check,
)

__all__ = ["CheckCmdArgs", "ArtifactSortArgs", "IterativeDebugArgs", "IterationContext"]


class CheckCmdArgs(BaseArgs):
    """Pass/Fail Reporting: the --check command and how its exit status and output are judged."""

    GROUP_TITLE = "Pass/Fail Reporting"

    def add_parser_args_impl(self) -> None:
        add_argparse_arguments(self.group, CHECK_OPTIONS)

    def parse_impl(self, args: Any) -> None:
        """Sets ``check``, ``fail_codes``, ``ignore_fail_codes``, ``fail_regexes``, ``show_output``,
        ``hide_fail_output`` and ``checker`` (the ``poly.debug`` check they make)."""
        self.check = getattr(args, "check", None) or None
        self.fail_codes = getattr(args, "fail_codes", None)
        self.ignore_fail_codes = getattr(args, "ignore_fail_codes", None)
        self.fail_regexes = getattr(args, "fail_regex", None)
        self.show_output = bool(getattr(args, "show_output", None))
        self.hide_fail_output = bool(getattr(args, "hide_fail_output", None))
        self.checker = make_check(self.check, fail_codes=self.fail_codes, ignore_fail_codes=self.ignore_fail_codes,
                                  fail_regexes=self.fail_regexes, show_output=self.show_output,
                                  hide_fail_output=self.hide_fail_output)

    def run_check(self, iter_artifact_path: Any = None) -> bool:
        """Runs the check on the artifact (asks the user when ``check`` is None); returns whether
        the iteration passed. The check is made from the attributes as they are now, so they may
        be set by hand instead of parsed (``check``, ``fail_codes``, ``ignore_fail_codes``,
        ``fail_regexes``, ``show_output``, ``hide_fail_output``)."""
        if "check" not in self.__dict__:
            G_LOGGER.critical("CheckCmdArgs.run_check: no check command: parse the arguments first (parse(args)) or "
                              "set .check to a command list (None: ask whether each iteration passed)")
        check = self.check
        if isinstance(check, str):
            import shlex

            check = shlex.split(check)
        self.checker = make_check(check or None, fail_codes=getattr(self, "fail_codes", None),
                                  ignore_fail_codes=getattr(self, "ignore_fail_codes", None),
                                  fail_regexes=getattr(self, "fail_regexes", None),
                                  show_output=bool(getattr(self, "show_output", False)),
                                  hide_fail_output=bool(getattr(self, "hide_fail_output", False)))
        return bool(self.checker(iter_artifact_path).success)


class ArtifactSortArgs(BaseArgs):
    """Artifact Sorting: files or directories moved into good/ or bad/ after each iteration."""

    GROUP_TITLE = "Artifact Sorting"

    def __init__(self, allow_no_artifacts_warning: Any = None) -> None:
        """
        Args:
            allow_no_artifacts_warning (bool): Warn when no --artifacts are given. Defaults to True.
        """
        super().__init__()
        self._warn = True if allow_no_artifacts_warning is None else allow_no_artifacts_warning

    def add_parser_args_impl(self) -> None:
        add_argparse_arguments(self.group, ARTIFACT_OPTIONS)

    def parse_impl(self, args: Any) -> None:
        """Sets ``artifacts``, ``output_dir`` and ``sorter`` (a ``poly.debug.ArtifactSorter``)."""
        self.artifacts = list(getattr(args, "artifacts", None) or [])
        if not self.artifacts and self._warn:
            G_LOGGER.warning("`--artifacts` was not specified; no artifacts will be stored during this run")
        self.output_dir = getattr(args, "artifacts_dir", None)
        self.sorter = ArtifactSorter(self.artifacts, self.output_dir)

    def sort_artifacts(self, success: Any, suffix: Any) -> Any:
        """Moves the artifacts into good/ or bad/, named with ``suffix``; returns their new paths."""
        return self.sorter.sort(success, suffix)


class IterativeDebugArgs(BaseArgs):
    """Iterative Debugging: the intermediate artifact, --until, and debug replays."""

    GROUP_TITLE = "Iterative Debugging"
    SkipIteration = SkipIteration

    def __init__(self, allow_iter_art_opt: Any = None, iter_art_opt_default: Any = None, allow_until_opt: Any = None,
                 allow_debug_replay: Any = None) -> None:
        """
        Args:
            allow_iter_art_opt (bool): Offer --iter-artifact / --no-remove-intermediate. Defaults to True.
            iter_art_opt_default (str): The default --iter-artifact (None: no default; a
                    tool that makes artifacts then needs --iter-artifact given).
            allow_until_opt (bool): Offer --until (for loops without an ``advance_func``). Defaults to False.
            allow_debug_replay (bool): Offer --load-debug-replay / --save-debug-replay. Defaults to True.
        """
        super().__init__()
        self.allow_iter_art_opt = True if allow_iter_art_opt is None else allow_iter_art_opt
        self.iter_art_opt_default = iter_art_opt_default
        self.allow_until_opt = bool(allow_until_opt)
        self.allow_debug_replay = True if allow_debug_replay is None else allow_debug_replay

    def add_parser_args_impl(self) -> None:
        options = iteration_options(iter_artifact=self.allow_iter_art_opt, until=self.allow_until_opt,
                                    replay=self.allow_debug_replay)
        add_argparse_arguments(self.group, options, {"iter_artifact": self.iter_art_opt_default})

    def parse_impl(self, args: Any) -> None:
        """Sets ``iter_artifact_path``, ``remove_intermediate``, ``iteration_info_path``, ``until``
        (a ``poly.debug.Until`` or None), ``load_debug_replay`` and ``save_debug_replay``."""
        self.iter_artifact_path = getattr(args, "iter_artifact_path", None)
        if self.iter_artifact_path and os.path.exists(self.iter_artifact_path):
            G_LOGGER.critical(f"{self.iter_artifact_path} already exists, refusing to overwrite: remove it or choose "
                              "another --iter-artifact")
        self.remove_intermediate = getattr(args, "remove_intermediate", True)
        self.iteration_info_path = getattr(args, "iteration_info_path", None)
        until = getattr(args, "until", None)
        if until is not None:
            problem = Until.problem(str(until))
            if problem:
                G_LOGGER.critical(f"--until: {problem}")
            until = Until(str(until))
        self.until = until
        self.load_debug_replay = getattr(args, "load_debug_replay", None)
        self.save_debug_replay = getattr(args, "save_debug_replay", None)

    def skip_iteration(self, success: Any = None) -> Any:
        """From ``make_iter_art_func``: decide the iteration without running the check."""
        raise SkipIteration(success=bool(success))

    def stop_iteration(self) -> Any:
        """From any callback of ``iterate``: stop the loop."""
        raise StopIteration()

    def debugger(self) -> Any:
        """The ``poly.debug.IterativeDebugger`` of the parsed options and of the tool's
        ``CheckCmdArgs`` / ``ArtifactSortArgs`` groups (when it has them)."""
        check = self.arg_groups.get(CheckCmdArgs)
        sort = self.arg_groups.get(ArtifactSortArgs)
        return IterativeDebugger(
            check=check.checker if check is not None else None,
            sorter=sort.sorter if sort is not None and sort.artifacts else None,
            iter_artifact_path=self.iter_artifact_path,
            remove_intermediate=self.remove_intermediate,
            iteration_info_path=self.iteration_info_path,
            until=self.until,
            load_debug_replay=self.load_debug_replay,
            save_debug_replay=self.save_debug_replay,
        )

    def iterate(self, make_iter_art_func: Any = None, advance_func: Any = None, get_remaining_func: Any = None, suffix: Any = None,
                debugger: Any = None) -> Any:
        """
        Runs the debugging loop: each iteration calls ``make_iter_art_func(context)`` (an
        ``IterationContext``; it writes the artifact, or calls ``skip_iteration``), checks the
        artifact, sorts the artifacts and calls ``advance_func(context)`` (True or
        ``stop_iteration()`` ends the loop; without it, ``--until`` decides).

        Returns:
            poly.debug.IterationSummary: How many iterations ran and passed.
        """
        debugger = debugger or self.debugger()
        return debugger.iterate(make_iter_art_func, advance_func, remaining=get_remaining_func, suffix=suffix)
