"""The multi-value click option (argparse's ``nargs="+"``, as Polygraphy's flags take values:
`--input-shapes a:[1,3] b:[2]`), and ``stack_options``, which adds a list of options to a command."""

from __future__ import annotations

import re
from typing import Any

import click

from poly.cli.help_sections import tag_section

_NEGATIVE_NUMBER = re.compile(r"^-\d|^-\.\d|^-inf$")


def _looks_like_option(arg: str) -> bool:
    return arg.startswith("-") and arg != "-" and not _NEGATIVE_NUMBER.match(arg)


def _is_subcommand(ctx: click.Context, arg: str) -> bool:
    """Whether ``arg`` names a subcommand of ``ctx``'s group: an option of a group (`poly
    --log-format timestamp debug ...`) takes its values up to the subcommand's name."""
    command = ctx.command
    return isinstance(command, click.Group) and arg in command.list_commands(ctx)


class MultiOption(click.Option):
    """
    An option that takes one or more values the argparse ``nargs="+"`` way: `--input-shapes
    a:[1,3] b:[2]` consumes values up to the next option (or, on a group, the subcommand). Repeating the option appends, so
    `--onnx-outputs a --onnx-outputs b` works too. The value is a tuple of strings (empty when
    the option is absent).
    """

    OCCURRENCE_SEPARATOR = "\x1f"
    """With ``per_occurrence=True`` each use of the option is one value: its arguments joined by this."""

    def __init__(self, *args: Any, per_occurrence: bool = False, **kwargs: Any) -> None:
        kwargs["multiple"] = True
        self.per_occurrence = per_occurrence
        super().__init__(*args, **kwargs)

    def add_to_parser(self, parser: Any, ctx: Any) -> None:
        super().add_to_parser(parser, ctx)
        # click has no public hook for a variable number of values: wrap the parser's entry
        # for each of this option's names so that it also takes the values that follow.
        for opt in self.opts:
            entry = parser._long_opt.get(opt) or parser._short_opt.get(opt)
            if entry is None or getattr(entry, "_poly_greedy", False):
                continue
            original = entry.process

            def process(value: Any, state: Any, _original: Any = original, _joined: Any = self.per_occurrence, _ctx: Any = ctx) -> None:
                values = [value]
                while state.rargs and not _looks_like_option(state.rargs[0]) and not _is_subcommand(
                        _ctx, state.rargs[0]):
                    values.append(state.rargs.pop(0))
                if _joined:
                    _original(MultiOption.OCCURRENCE_SEPARATOR.join(values), state)
                else:
                    for item in values:
                        _original(item, state)

            entry.process = process
            entry._poly_greedy = True


def multi_option(*decls: Any, **kwargs: Any) -> Any:
    """``click.option`` with ``MultiOption`` as its class."""
    kwargs.setdefault("metavar", "VALUE [VALUE ...]")
    return click.option(*decls, cls=MultiOption, **kwargs)


def occurrences(values: Any) -> list[list[str]]:
    """The values of a ``per_occurrence`` MultiOption, one list of arguments per use of the option."""
    return [value.split(MultiOption.OCCURRENCE_SEPARATOR) for value in values or ()]


def stack_options(options: Any, section: str | None = None) -> Any:
    """A decorator that adds ``options`` (click option or argument decorators) to a command; they
    are listed in ``--help`` in the order given, under the heading ``section`` (a flag group's
    title, ordered by ``poly.cli.help_sections.SECTION_ORDER``; None: the command's own options).
    Options that ``options`` already put in a section (a nested ``stack_options``) keep it."""

    def decorate(func: Any) -> Any:
        before = {id(param) for param in _declared_params(func)}
        for option in reversed(options):
            func = option(func)
        if section is not None:
            tag_section((param for param in _declared_params(func) if id(param) not in before), section)
        return func

    return decorate


def _declared_params(func: Any) -> list:
    """The parameters click decorators have added to ``func`` so far (a command's, once it is one)."""
    return list(func.params if isinstance(func, click.Command) else getattr(func, "__click_params__", ()))
