"""Click building blocks shared by the subcommands: the Polygraphy-style multi-value option
and the global logging options."""

from __future__ import annotations

import re

import click

_NEGATIVE_NUMBER = re.compile(r"^-\d|^-\.\d|^-inf$")


def _looks_like_option(arg: str) -> bool:
    return arg.startswith("-") and arg != "-" and not _NEGATIVE_NUMBER.match(arg)


class MultiOption(click.Option):
    """
    An option that takes one or more values the argparse ``nargs="+"`` way: `--input-shapes
    a:[1,3] b:[2]` consumes values up to the next option. Repeating the option appends, so
    `--onnx-outputs a --onnx-outputs b` works too. The value is a tuple of strings (empty when
    the option is absent).
    """

    OCCURRENCE_SEPARATOR = "\x1f"
    """With ``per_occurrence=True`` each use of the option is one value: its arguments joined by this."""

    def __init__(self, *args, per_occurrence=False, **kwargs):
        kwargs["multiple"] = True
        self.per_occurrence = per_occurrence
        super().__init__(*args, **kwargs)

    def add_to_parser(self, parser, ctx):
        super().add_to_parser(parser, ctx)
        for opt in self.opts:
            entry = parser._long_opt.get(opt) or parser._short_opt.get(opt)
            if entry is None or getattr(entry, "_poly_greedy", False):
                continue
            original = entry.process

            def process(value, state, _original=original, _joined=self.per_occurrence):
                values = [value]
                while state.rargs and not _looks_like_option(state.rargs[0]):
                    values.append(state.rargs.pop(0))
                if _joined:
                    _original(MultiOption.OCCURRENCE_SEPARATOR.join(values), state)
                else:
                    for item in values:
                        _original(item, state)

            entry.process = process
            entry._poly_greedy = True


def multi_option(*decls, **kwargs):
    """``click.option`` with ``MultiOption`` as its class."""
    kwargs.setdefault("metavar", "VALUE [VALUE ...]")
    return click.option(*decls, cls=MultiOption, **kwargs)


def record_runner(ctx, param, value):
    """Callback of the runner flags (--onnxrt, --trt...): remembers their command-line order."""
    if value:
        ctx.meta.setdefault("poly.runners", []).append(param.name)
    return value


def _set_logging(ctx, param, value):
    """Applies a logging option as soon as click sees it (group or subcommand level)."""
    if value is None or value == () or value is False or value == 0:
        return value
    from poly.core.logger import G_LOGGER

    state = ctx.find_root().meta.setdefault("poly.logging", {"shift": 0})
    name = param.name
    if name == "verbose":
        state["shift"] -= 10 * value
        G_LOGGER.module_severity = _shifted(state["shift"])
        state["traceback"] = True
    elif name == "quiet":
        state["shift"] += 10 * value
        G_LOGGER.module_severity = _shifted(state["shift"])
    elif name == "silent":
        G_LOGGER.module_severity = G_LOGGER.CRITICAL
    elif name == "verbosity":
        G_LOGGER.module_severity = _parse_verbosity(value)
        if min(_parse_verbosity(value).values()) <= G_LOGGER.VERBOSE:
            state["traceback"] = True
    elif name == "log_format":
        G_LOGGER.log_format = list(value)
    elif name == "log_file":
        G_LOGGER.log_file = value
    return value


def _shifted(shift):
    from poly.core.logger import G_LOGGER

    levels = sorted(G_LOGGER.SEVERITY_NAMES.values())
    target = G_LOGGER.INFO + shift
    return min(levels, key=lambda level: (abs(level - target), level))


def _parse_verbosity(values) -> dict:
    from poly.core.logger import G_LOGGER

    result = {}
    for arg in values:
        path, sep, level = arg.rpartition(":")
        try:
            result[path if sep else ""] = G_LOGGER.severity_from_name(level)
        except ValueError as err:
            raise click.BadParameter(f"{arg!r}: {err}", param_hint="'--verbosity'") from None
    return result


def logging_options(func):
    """Adds -v/-q/--verbosity/--silent/--log-format/--log-file (accepted before and after the
    subcommand name, as in Polygraphy)."""
    opts = [
        click.option("-v", "--verbose", count=True, expose_value=False, callback=_set_logging, is_eager=True,
                     help="Increase logging verbosity. Specify multiple times for higher verbosity."),
        click.option("-q", "--quiet", count=True, expose_value=False, callback=_set_logging, is_eager=True,
                     help="Decrease logging verbosity. Specify multiple times for lower verbosity."),
        multi_option("--verbosity", expose_value=False, callback=_set_logging, is_eager=True,
                     help="Severity to log, optionally per path: `--verbosity INFO backend/:VERBOSE`. "
                     "Values: ULTRA_VERBOSE, SUPER_VERBOSE, EXTRA_VERBOSE, VERBOSE, INFO, WARNING, ERROR, CRITICAL."),
        click.option("--silent", is_flag=True, expose_value=False, callback=_set_logging, is_eager=True,
                     help="Disable all output except critical errors."),
        multi_option("--log-format", type=click.Choice(["timestamp", "line-info", "no-colors"]),
                     expose_value=False, callback=_set_logging, is_eager=True,
                     help="Format of log messages: timestamp, line-info, no-colors."),
        click.option("--log-file", type=click.Path(dir_okay=False), expose_value=False, callback=_set_logging,
                     is_eager=True, help="Path to a file where poly logs are also written."),
    ]
    for opt in reversed(opts):
        func = opt(func)
    return func


def show_traceback() -> bool:
    ctx = click.get_current_context(silent=True)
    return bool(ctx and ctx.find_root().meta.get("poly.logging", {}).get("traceback"))

