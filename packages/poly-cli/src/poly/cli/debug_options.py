"""Options shared by the `poly debug` subcommands (Polygraphy's Pass/Fail Reporting, Artifact
Sorting, Iterative Debugging and Debug Replay groups), the click command class whose `--check`
takes the rest of the command line, and the construction of the debugging engine from them."""

from __future__ import annotations

import click

from poly.cli.options import multi_option

CHECK_FLAGS = ("--check", "--check-inference")
_CHECK_META = "poly.debug.check"


class DebugCommand(click.Command):
    """A command whose `--check` (or `--check-inference`) takes every argument after it."""

    def parse_args(self, ctx, args):
        for index, arg in enumerate(args):
            flag, sep, value = arg.partition("=")
            if flag in CHECK_FLAGS:
                check = ([value] if sep else []) + list(args[index + 1 :])
                if not check:
                    raise click.UsageError(f"{flag} needs a command after it.", ctx=ctx)
                ctx.meta[_CHECK_META] = check
                args = list(args[:index])
                break
        return super().parse_args(ctx, args)


def _int_codes(ctx, param, values):
    codes = []
    for value in values or ():
        try:
            codes.append(int(value))
        except ValueError:
            raise click.BadParameter(f"{value!r} is not an integer exit status.") from None
    return codes or None


def _until(ctx, param, value):
    if value is None:
        return None
    from poly.debug import Until

    problem = Until.problem(value)
    if problem:
        raise click.BadParameter(problem)
    return Until(value)


def check_options(func):
    """--check (help only: DebugCommand consumes it), --fail-code, --ignore-fail-code,
    --fail-regex, --show-output, --hide-fail-output."""
    opts = [
        click.option(
            "--check",
            "--check-inference",
            "_check_help",
            metavar="...",
            expose_value=False,
            help="A command to check each iteration's artifact, with all its arguments: everything after "
            "--check belongs to it. Without it, you are asked whether each iteration passed. By default "
            "an exit status of 0 passes and anything else fails.",
        ),
        multi_option(
            "--fail-code",
            "--fail-returncode",
            "fail_codes",
            callback=_int_codes,
            help="Exit status(es) of the --check command that count as failures; any other status passes.",
        ),
        multi_option(
            "--ignore-fail-code",
            "--ignore-fail-returncode",
            "ignore_fail_codes",
            callback=_int_codes,
            help="Exit status(es) of the --check command that count as passes.",
        ),
        multi_option(
            "--fail-regex",
            "fail_regexes",
            help="Regular expression(s) that show a failure in the --check command's output (stdout or "
            "stderr): an iteration fails only when one matches.",
        ),
        click.option(
            "--show-output",
            is_flag=True,
            help="Show the --check command's output for passing iterations too.",
        ),
        click.option(
            "--hide-fail-output",
            is_flag=True,
            help="Do not show the --check command's output for failing iterations.",
        ),
    ]
    for opt in reversed(opts):
        func = opt(func)
    return func


def artifact_options(func):
    """--artifacts and --art-dir."""
    opts = [
        multi_option(
            "--artifacts",
            help="Files or directories to sort into good/ and bad/ after each iteration, "
            "renamed with a timestamp, the iteration and the check's exit status.",
        ),
        click.option(
            "--art-dir",
            "--artifacts-dir",
            "art_dir",
            metavar="DIR",
            default=None,
            help="Where to sort artifacts into good/ and bad/. Defaults to ./polygraphy_artifacts.",
        ),
    ]
    for opt in reversed(opts):
        func = opt(func)
    return func


def iteration_options(iter_artifact_default=None, until_required=False):
    """--iter-artifact and --no-remove-intermediate (when the subtool writes an artifact),
    --iter-info, --until (when the subtool has no stopping point of its own),
    --load-debug-replay and --save-debug-replay."""

    def decorate(func):
        opts = []
        if iter_artifact_default is not None:
            opts += [
                click.option(
                    "--iter-artifact",
                    "--intermediate-artifact",
                    "iter_artifact",
                    default=iter_artifact_default,
                    show_default=True,
                    help="Where each iteration's intermediate artifact is written.",
                ),
                click.option(
                    "--no-remove-intermediate",
                    "remove_intermediate",
                    flag_value=False,
                    default=True,
                    help="Keep the intermediate artifact between iterations.",
                ),
            ]
        opts.append(
            click.option(
                "--iter-info",
                "--iteration-info",
                "iter_info",
                default=None,
                help="Where to write a JSON file with the current iteration's information "
                "(an 'iteration' key, 0-based) while the check runs.",
            )
        )
        if until_required:
            opts.append(
                click.option(
                    "--until",
                    required=True,
                    callback=_until,
                    help="When to stop: 'good' (first passing iteration), 'bad' (first failing "
                    "one) or a number of iterations.",
                )
            )
        opts += [
            click.option(
                "--load-debug-replay",
                default=None,
                help="A debug replay whose iterations are skipped, reusing their results: resumes an "
                "interrupted session.",
            ),
            click.option(
                "--save-debug-replay",
                default="polygraphy_debug_replay.json",
                show_default=True,
                help="Where the debug replay is saved after every iteration (also written: a "
                "'_skip_current' replay that counts the running iteration as failed).",
            ),
        ]
        for opt in reversed(opts):
            func = opt(func)
        return func

    return decorate


def debug_options(iter_artifact_default=None, until_required=False):
    """Every option group of a debug subcommand (Pass/Fail Reporting, Artifact Sorting,
    Iterative Debugging, Debug Replay, Logging) and poly's error handling, in one decorator
    to put last (nearest the function) under `@click.command(cls=DebugCommand)`."""
    from poly.cli.errors import handle_errors
    from poly.cli.options import logging_options

    def decorate(func):
        func = handle_errors(func)
        func = logging_options(func)
        func = iteration_options(iter_artifact_default, until_required)(func)
        return check_options(artifact_options(func))

    return decorate


def build_debugger(options):
    """
    The ``IterativeDebugger`` for the options of a debug subcommand. ``options`` is the
    command's keyword arguments; the options used are removed from it.
    """
    from poly.debug import ArtifactSorter, IterativeDebugger, make_check

    if options.get("fail_codes") and options.get("ignore_fail_codes"):
        raise click.UsageError("--fail-code and --ignore-fail-code cannot be used together.")
    if options.get("show_output") and options.get("hide_fail_output"):
        raise click.UsageError("--show-output and --hide-fail-output cannot be used together.")
    ctx = click.get_current_context()
    check = make_check(
        ctx.meta.get(_CHECK_META),
        fail_codes=options.pop("fail_codes", None),
        ignore_fail_codes=options.pop("ignore_fail_codes", None),
        fail_regexes=list(options.pop("fail_regexes", ()) or ()) or None,
        show_output=options.pop("show_output", False),
        hide_fail_output=options.pop("hide_fail_output", False),
    )
    artifacts = list(options.pop("artifacts", ()) or ())
    art_dir = options.pop("art_dir", None)
    sorter = ArtifactSorter(artifacts, art_dir) if artifacts else None
    return IterativeDebugger(
        check=check,
        sorter=sorter,
        iter_artifact_path=options.pop("iter_artifact", None),
        remove_intermediate=options.pop("remove_intermediate", True),
        iteration_info_path=options.pop("iter_info", None),
        until=options.pop("until", None),
        load_debug_replay=options.pop("load_debug_replay", None),
        save_debug_replay=options.pop("save_debug_replay", None),
    )
