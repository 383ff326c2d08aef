"""The logging group: -v/-q/--verbosity/--silent/--log-format/--log-file, accepted before and
after the subcommand name (as in Polygraphy).

Each option takes effect as soon as click sees it, so that a subcommand logs as asked from its
first line; what the options asked for so far is a ``LoggingArgs`` kept on the root click
context (errors read it to decide whether to print tracebacks)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import click

from poly.cli.multi_option import multi_option, stack_options

_META_KEY = "poly.logging"
_SEVERITY_STEP = 10  # one -v or -q moves the severity by this much (one logger level)


@dataclass(frozen=True)
class LoggingArgs:
    """The logging options of one command line (group level and subcommand level together)."""

    shift: int = 0
    """-q count minus -v count, times the severity step: the severity is INFO shifted by this."""
    severity: int | dict | None = None
    """What ``G_LOGGER.module_severity`` is set to (a level, or levels per path); None: untouched."""
    log_format: tuple[str, ...] | None = None
    log_file: str | None = None
    traceback: bool = False
    """Whether errors are shown with their traceback (-v, or a --verbosity of VERBOSE or lower)."""

    @classmethod
    def options(cls) -> Any:
        """-v/--verbose, -q/--quiet, --verbosity, --silent, --log-format, --log-file."""
        return stack_options([
            click.option("-v", "--verbose", count=True, expose_value=False, callback=_on_option, is_eager=True,
                         help="Increase logging verbosity. Specify multiple times for higher verbosity."),
            click.option("-q", "--quiet", count=True, expose_value=False, callback=_on_option, is_eager=True,
                         help="Decrease logging verbosity. Specify multiple times for lower verbosity."),
            multi_option("--verbosity", expose_value=False, callback=_on_option, is_eager=True,
                         help="Severity to log, optionally per path: `--verbosity INFO backend/:VERBOSE`. "
                         "Values: ULTRA_VERBOSE, SUPER_VERBOSE, EXTRA_VERBOSE, VERBOSE, INFO, WARNING, ERROR, "
                         "CRITICAL."),
            click.option("--silent", is_flag=True, expose_value=False, callback=_on_option, is_eager=True,
                         help="Disable all output except critical errors."),
            multi_option("--log-format", type=click.Choice(["timestamp", "line-info", "no-colors"]),
                         expose_value=False, callback=_on_option, is_eager=True,
                         help="Format of log messages: timestamp, line-info, no-colors."),
            click.option("--log-file", type=click.Path(dir_okay=False), expose_value=False, callback=_on_option,
                         is_eager=True, help="Path to a file where poly logs are also written."),
        ], section="Logging")

    @classmethod
    def current(cls, ctx: click.Context | None = None) -> LoggingArgs:
        """The logging options seen so far in the command line being run (defaults outside one)."""
        ctx = ctx or click.get_current_context(silent=True)
        if ctx is None:
            return cls()
        return ctx.find_root().meta.get(_META_KEY, cls())

    def with_option(self, name: str, value: Any) -> LoggingArgs:
        """These options updated by one more: ``name`` is the click parameter name (verbose,
        quiet, silent, verbosity, log_format, log_file). A bad --verbosity is a usage error."""
        from poly.core import G_LOGGER

        if name == "verbose":
            shift = self.shift - _SEVERITY_STEP * value
            return dataclasses.replace(self, shift=shift, severity=_shifted(shift), traceback=True)
        if name == "quiet":
            shift = self.shift + _SEVERITY_STEP * value
            return dataclasses.replace(self, shift=shift, severity=_shifted(shift))
        if name == "silent":
            return dataclasses.replace(self, severity=G_LOGGER.CRITICAL)
        if name == "verbosity":
            severity = _parse_verbosity(value)
            return dataclasses.replace(self, severity=severity,
                                       traceback=self.traceback or min(severity.values()) <= G_LOGGER.VERBOSE)
        if name == "log_format":
            return dataclasses.replace(self, log_format=tuple(value))
        if name == "log_file":
            return dataclasses.replace(self, log_file=value)
        raise ValueError(f"not a logging option: {name}")

    def apply(self, since: LoggingArgs | None = None) -> None:
        """Sets poly's logger as these options ask; with ``since``, only what differs from it."""
        from poly.core import G_LOGGER

        before = since or LoggingArgs()
        if self.severity is not None and (since is None or self.severity != before.severity):
            G_LOGGER.module_severity = self.severity
        if self.log_format is not None and (since is None or self.log_format != before.log_format):
            G_LOGGER.log_format = list(self.log_format)
        if self.log_file is not None and (since is None or self.log_file != before.log_file):
            G_LOGGER.log_file = self.log_file


def _on_option(ctx: Any, param: Any, value: Any) -> Any:
    """Callback of every logging option: records it and applies it at once."""
    if value is None or value == () or value is False or value == 0:
        return value
    before = LoggingArgs.current(ctx)
    after = before.with_option(param.name, value)
    ctx.find_root().meta[_META_KEY] = after
    after.apply(since=before)
    return value


def _shifted(shift: Any) -> Any:
    from poly.core import G_LOGGER

    levels = sorted(G_LOGGER.SEVERITY_NAMES.values())
    target = G_LOGGER.INFO + shift
    return min(levels, key=lambda level: (abs(level - target), level))


def _parse_verbosity(values: Any) -> dict:
    from poly.core import G_LOGGER

    result = {}
    for arg in values:
        path, sep, level = arg.rpartition(":")
        try:
            result[path if sep else ""] = G_LOGGER.severity_from_name(level)
        except ValueError as err:
            raise click.BadParameter(f"{arg!r}: {err}", param_hint="'--verbosity'") from None
    return result


def show_traceback() -> bool:
    """Whether the command line being run asked for tracebacks of errors (-v or a verbose --verbosity)."""
    return LoggingArgs.current().traceback
