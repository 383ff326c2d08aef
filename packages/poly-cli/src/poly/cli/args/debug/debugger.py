"""The debugger group of the `poly debug` subcommands (Polygraphy's Pass/Fail Reporting,
Artifact Sorting, Iterative Debugging and Debug Replay groups): the --check command and how its
result is judged, --artifacts sorting, --until, intermediate artifacts and debug replays; the
click command class whose `--check` takes the rest of the command line; and the
poly.debug.IterativeDebugger built from them. The flags themselves are declared once in
``poly.cli.args.debug.options`` (shared with the argparse groups of ``poly.tools``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import click

from poly.cli.args.debug.options import ARTIFACT_OPTIONS, CHECK_OPTIONS, click_options, iteration_options
from poly.cli.help_sections import SectionedCommand
from poly.cli.multi_option import stack_options

if TYPE_CHECKING:
    from poly.debug import Until

CHECK_FLAGS = ("--check", "--check-inference")
_CHECK_META_KEY = "poly.debug.check"


class DebugCommand(SectionedCommand):
    """A command whose `--check` (or `--check-inference`) takes every argument after it."""

    def parse_args(self, ctx: Any, args: Any) -> Any:
        for index, arg in enumerate(args):
            flag, sep, value = arg.partition("=")
            if flag in CHECK_FLAGS:
                check = ([value] if sep else []) + list(args[index + 1 :])
                if not check:
                    raise click.UsageError(f"{flag} needs a command after it.", ctx=ctx)
                from poly.debug import quoted_command_problem

                problem = quoted_command_problem(check)
                if problem:
                    raise click.UsageError(problem, ctx=ctx)
                ctx.meta[_CHECK_META_KEY] = check
                args = list(args[:index])
                break
        return super().parse_args(ctx, args)


def set_check_command(ctx: Any, check: Any) -> None:
    """Gives the command run in ``ctx`` a --check command line (what ``DebugCommand`` does when it
    parses one): for callers that parse the command line themselves (``poly.tools``)."""
    ctx.meta[_CHECK_META_KEY] = list(check)


@dataclass(frozen=True)
class DebuggerArgs:
    """How a debug subtool judges and records its iterations."""

    check: tuple[str, ...] | None = None
    """The --check command line; None: ask whether each iteration passed."""
    fail_codes: tuple[int, ...] | None = None
    """--fail-code: exit statuses of the check that fail; None: any but 0."""
    ignore_fail_codes: tuple[int, ...] | None = None
    fail_regexes: tuple[str, ...] | None = None
    show_output: bool = False
    hide_fail_output: bool = False
    artifacts: tuple[str, ...] = ()
    art_dir: str | None = None
    iter_artifact: str | None = None
    """Where each iteration's artifact is written (subtools that write one); None otherwise."""
    remove_intermediate: bool = True
    iter_info: str | None = None
    until: Until | None = None
    """--until as a poly.debug.Until (subtools without a stopping point of their own); None otherwise."""
    load_debug_replay: str | None = None
    save_debug_replay: str | None = None

    @classmethod
    def options(cls, iter_artifact_default: str | None = None, until_required: bool = False) -> Any:
        """Every option of the group: the Pass/Fail Reporting and Artifact Sorting flags, then
        --iter-artifact / --no-remove-intermediate (with ``iter_artifact_default``, for subtools
        that write an artifact), --iter-info, --until (required, with ``until_required``) and the
        debug replay flags. The command's class must be ``DebugCommand``."""
        iteration = iteration_options(iter_artifact=iter_artifact_default is not None, until=until_required)
        return stack_options([
            stack_options(click_options(CHECK_OPTIONS), section="Pass/Fail Reporting"),
            stack_options(click_options(ARTIFACT_OPTIONS), section="Artifact Sorting"),
            stack_options(click_options(iteration, {"iter_artifact": iter_artifact_default}), section="Iterative Debugging"),
        ])

    @classmethod
    def from_kwargs(cls, kwargs: Mapping, ctx: click.Context | None = None) -> DebuggerArgs:
        """The group's options (the --check command from ``ctx``, the current click context by
        default); contradictory flags are a usage error."""
        if kwargs.get("fail_codes") and kwargs.get("ignore_fail_codes"):
            raise click.UsageError("--fail-code and --ignore-fail-code cannot be used together.")
        if kwargs.get("show_output") and kwargs.get("hide_fail_output"):
            raise click.UsageError("--show-output and --hide-fail-output cannot be used together.")
        ctx = ctx or click.get_current_context()
        check = ctx.meta.get(_CHECK_META_KEY)
        return cls(
            check=tuple(check) if check is not None else None,
            fail_codes=_tuple_or_none(kwargs.get("fail_codes")),
            ignore_fail_codes=_tuple_or_none(kwargs.get("ignore_fail_codes")),
            fail_regexes=tuple(kwargs.get("fail_regexes") or ()) or None,
            show_output=bool(kwargs.get("show_output", False)),
            hide_fail_output=bool(kwargs.get("hide_fail_output", False)),
            artifacts=tuple(kwargs.get("artifacts") or ()),
            art_dir=kwargs.get("art_dir"),
            iter_artifact=kwargs.get("iter_artifact"),
            remove_intermediate=kwargs.get("remove_intermediate", True),
            iter_info=kwargs.get("iter_info"),
            until=kwargs.get("until"),
            load_debug_replay=kwargs.get("load_debug_replay"),
            save_debug_replay=kwargs.get("save_debug_replay"),
        )

    def create_debugger(self) -> Any:
        """The poly.debug.IterativeDebugger: a check (make_check), an ArtifactSorter when
        --artifacts are given, and the iteration and replay settings."""
        from poly.debug import ArtifactSorter, IterativeDebugger, make_check

        check = make_check(
            _list_or_none(self.check),
            fail_codes=_list_or_none(self.fail_codes),
            ignore_fail_codes=_list_or_none(self.ignore_fail_codes),
            fail_regexes=list(self.fail_regexes) if self.fail_regexes else None,
            show_output=self.show_output,
            hide_fail_output=self.hide_fail_output,
        )
        sorter = ArtifactSorter(list(self.artifacts), self.art_dir) if self.artifacts else None
        return IterativeDebugger(
            check=check,
            sorter=sorter,
            iter_artifact_path=self.iter_artifact,
            remove_intermediate=self.remove_intermediate,
            iteration_info_path=self.iter_info,
            until=self.until,
            load_debug_replay=self.load_debug_replay,
            save_debug_replay=self.save_debug_replay,
        )


def _tuple_or_none(values: Any) -> Any:
    return tuple(values) if values is not None else None


def _list_or_none(values: Any) -> Any:
    return list(values) if values is not None else None
