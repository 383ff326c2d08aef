"""
The debug flags of Polygraphy's debug subtools, declared once (``DebugOption``, in the tables
``CHECK_OPTIONS``, ``ARTIFACT_OPTIONS``, ``ITERATION_OPTIONS``) and rendered two ways: as click
options for the `poly debug ...` commands (``click_options``) and as argparse arguments for the
Polygraphy-compatible groups of ``poly.tools`` (``add_argparse_arguments``). Both renderings
take the same spellings, defaults and help from the table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import click

from poly.cli.multi_option import multi_option

VALUE, FLAG, FALSE_FLAG, MULTI, REMAINDER = "value", "flag", "false_flag", "multi", "remainder"
"""How an option takes its value: one value; a flag (True when given); a flag that turns a True
default off; one or more values; every argument after it (the --check command line)."""

DEFAULT_REPLAY_PATH = "polygraphy_debug_replay.json"
"""--save-debug-replay's default (``poly.debug.DEFAULT_REPLAY_PATH``, spelled out so that
``--help`` does not import poly.debug; a test keeps the two equal)."""


def _int_codes(ctx: Any, param: Any, values: Any) -> Any:
    """Click callback of --fail-code / --ignore-fail-code: exit statuses as ints (None if none)."""
    codes = []
    for value in values or ():
        try:
            codes.append(int(value))
        except ValueError:
            raise click.BadParameter(f"{value!r} is not an integer exit status.") from None
    return codes or None


def _until(ctx: Any, param: Any, value: Any) -> Any:
    """Click callback of --until: a ``poly.debug.Until``."""
    if value is None:
        return None
    from poly.debug import Until

    problem = Until.problem(value)
    if problem:
        raise click.BadParameter(problem)
    return Until(value)


@dataclass(frozen=True)
class DebugOption:
    """One debug flag."""

    flags: tuple[str, ...]
    """Its spellings, Polygraphy's first."""
    name: str
    """The click parameter name (the `poly debug` commands' keyword argument)."""
    help: str
    kind: str = VALUE
    dest: str | None = None
    """The argparse destination (Polygraphy's attribute name); None: ``name``."""
    type: type | None = None
    default: object = None
    metavar: str | None = None
    required: bool = False
    show_default: bool = False
    exclusive_with: str | None = None
    """The ``name`` of an option it cannot be given with (argparse: a mutually exclusive group)."""
    click_callback: object = None
    """What click does with the raw value (argparse: the group's ``parse_impl`` checks it)."""

    @property
    def argparse_dest(self) -> str:
        return self.dest or self.name


CHECK_OPTIONS = (
    DebugOption(("--check", "--check-inference"), "check", kind=REMAINDER, metavar="...",
                help="A command to check each iteration's artifact, with all its arguments: everything after "
                "--check belongs to it. Without it, you are asked whether each iteration passed. By default "
                "an exit status of 0 passes and anything else fails."),
    DebugOption(("--fail-code", "--fail-returncode"), "fail_codes", kind=MULTI, type=int, click_callback=_int_codes,
                help="Exit status(es) of the --check command that count as failures; any other status passes."),
    DebugOption(("--ignore-fail-code", "--ignore-fail-returncode"), "ignore_fail_codes", kind=MULTI, type=int,
                click_callback=_int_codes, help="Exit status(es) of the --check command that count as passes."),
    DebugOption(("--fail-regex",), "fail_regexes", dest="fail_regex", kind=MULTI,
                help="Regular expression(s) that show a failure in the --check command's output (stdout or "
                "stderr): an iteration fails only when one matches."),
    DebugOption(("--show-output",), "show_output", kind=FLAG, exclusive_with="hide_fail_output",
                help="Show the --check command's output for passing iterations too."),
    DebugOption(("--hide-fail-output",), "hide_fail_output", kind=FLAG, exclusive_with="show_output",
                help="Do not show the --check command's output for failing iterations."),
)
"""Pass/Fail Reporting: the --check command and how its result is judged."""

ARTIFACT_OPTIONS = (
    DebugOption(("--artifacts",), "artifacts", kind=MULTI,
                help="Files or directories to sort into good/ and bad/ after each iteration, "
                "renamed with a timestamp, the iteration and the check's exit status."),
    DebugOption(("--art-dir", "--artifacts-dir"), "art_dir", dest="artifacts_dir", metavar="DIR",
                help="Where to sort artifacts into good/ and bad/. Defaults to ./polygraphy_artifacts."),
)
"""Artifact Sorting: files moved into good/ or bad/ after each iteration."""

ITER_ARTIFACT_OPTIONS = (
    DebugOption(("--iter-artifact", "--intermediate-artifact"), "iter_artifact", dest="iter_artifact_path",
                show_default=True, help="Where each iteration's intermediate artifact is written."),
    DebugOption(("--no-remove-intermediate",), "remove_intermediate", kind=FALSE_FLAG,
                help="Keep the intermediate artifact between iterations."),
)
"""Offered by subtools that write an artifact each iteration (the default path is theirs)."""

ITER_INFO_OPTION = DebugOption(
    ("--iter-info", "--iteration-info"), "iter_info", dest="iteration_info_path",
    help="Where to write a JSON file with the current iteration's information (an 'iteration' key, 0-based) "
    "while the check runs.")

UNTIL_OPTION = DebugOption(
    ("--until",), "until", required=True, click_callback=_until,
    help="When to stop: 'good' (first passing iteration), 'bad' (first failing one) or a number of iterations.")
"""Offered by subtools without a stopping point of their own."""

REPLAY_OPTIONS = (
    DebugOption(("--load-debug-replay",), "load_debug_replay",
                help="A debug replay whose iterations are skipped, reusing their results: resumes an "
                "interrupted session."),
    DebugOption(("--save-debug-replay",), "save_debug_replay", default=DEFAULT_REPLAY_PATH, show_default=True,
                help="Where the debug replay is saved after every iteration (also written: a '_skip_current' "
                "replay that counts the running iteration as failed)."),
)


def iteration_options(iter_artifact: bool, until: bool, replay: bool = True) -> tuple[DebugOption, ...]:
    """Iterative Debugging, in ``--help`` order: the intermediate artifact flags (``iter_artifact``),
    --iter-info, --until (``until``) and the debug replay flags (``replay``)."""
    return ((*ITER_ARTIFACT_OPTIONS,) if iter_artifact else ()) + (ITER_INFO_OPTION,) \
        + ((UNTIL_OPTION,) if until else ()) + (REPLAY_OPTIONS if replay else ())


def click_options(options: Any, defaults: dict | None = None) -> list:
    """The click options of ``options`` (``defaults``: option name -> a default the command
    gives, e.g. its --iter-artifact path). --check is listed for ``--help`` only: the command's
    class (``DebugCommand``) takes the rest of the command line after it."""
    defaults = defaults or {}
    rendered = []
    for option in options:
        default = defaults.get(option.name, option.default)
        common = {"help": option.help, "callback": option.click_callback}
        if option.kind == REMAINDER:
            rendered.append(click.option(*option.flags, f"_{option.name}_help", metavar=option.metavar,
                                         expose_value=False, help=option.help))
        elif option.kind == MULTI:
            rendered.append(multi_option(*option.flags, option.name, **common))
        elif option.kind == FLAG:
            rendered.append(click.option(*option.flags, option.name, is_flag=True, **common))
        elif option.kind == FALSE_FLAG:
            rendered.append(click.option(*option.flags, option.name, flag_value=False, default=True, **common))
        else:
            # (no default for a required option: click takes an explicit None as a value given)
            default_kwarg = {} if option.required else {"default": default}
            rendered.append(click.option(*option.flags, option.name, metavar=option.metavar, required=option.required,
                                         show_default=option.show_default, **default_kwarg, **common))
    return rendered


def add_argparse_arguments(group: Any, options: Any, defaults: dict | None = None) -> None:
    """Adds ``options`` to the argparse ``group`` under Polygraphy's destinations (``defaults``
    as for ``click_options``); options exclusive with each other share a mutually exclusive group."""
    import argparse

    defaults = defaults or {}
    exclusive = {}
    for option in options:
        target = group
        if option.exclusive_with is not None:
            key = frozenset((option.name, option.exclusive_with))
            if key not in exclusive:
                exclusive[key] = group.add_mutually_exclusive_group()
            target = exclusive[key]
        kwargs = {"dest": option.argparse_dest, "help": option.help}
        if option.kind == REMAINDER:
            kwargs.update(nargs=argparse.REMAINDER, default=None)
        elif option.kind == MULTI:
            kwargs.update(nargs="+", type=option.type, default=None)
        elif option.kind == FLAG:
            kwargs.update(action="store_true", default=None)
        elif option.kind == FALSE_FLAG:
            kwargs.update(action="store_false", default=True)
        else:
            kwargs.update(default=defaults.get(option.name, option.default), required=option.required)
            if option.metavar:
                kwargs["metavar"] = option.metavar
        target.add_argument(*option.flags, **kwargs)
