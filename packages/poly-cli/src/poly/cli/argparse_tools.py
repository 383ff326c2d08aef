"""
Polygraphy's programmatic tool interface (``polygraphy.tools``) over poly's click commands:
``BaseArgs`` (an argument group: ``add_parser_args(parser)``, ``parse(args)``), ``Tool`` (a
tool with argument groups or subtools: ``setup_parser(subparsers)``, ``run(args)``, ``main``)
and ``ClickTool``, a ``Tool`` whose options are those of a poly click command, converted to
argparse arguments, and whose ``run`` calls that command's implementation; ``ClickOptionsArgs``,
an argument group whose options are one of poly's click flag groups (the same declaration the
commands use), parsed into that group's value object.
"""

from __future__ import annotations

import argparse
import importlib
from typing import Any

import click

from poly.cli.args.debug.debugger import CHECK_FLAGS, set_check_command
from poly.cli.errors import EXIT_USAGE, error_line
from poly.cli.multi_option import MultiOption

__all__ = ["BaseArgs", "BaseRunnerArgs", "Tool", "ClickTool", "ClickOptionsArgs", "click_params"]


class BaseArgs:
    """
    An argument group, Polygraphy's way: ``add_parser_args(parser)`` adds its options (in an
    argparse group titled ``GROUP_TITLE``), ``parse(args)`` reads them from the parsed namespace
    into attributes. Subclasses implement ``add_parser_args_impl`` (using ``self.group``) and
    ``parse_impl``; ``arg_groups`` gives access to the other groups of the same tool.
    """

    GROUP_TITLE: Any = None
    GROUP_DESCRIPTION: Any = None

    def __init__(self) -> None:
        self.group: Any = None
        self.arg_groups: dict[Any, Any] = {}

    def register(self, arg_groups: Any) -> None:
        """Gives the group the tool's other groups (type -> instance)."""
        self.arg_groups = arg_groups

    def allows_abbreviation(self) -> Any:
        """Whether the group's long options may be abbreviated."""
        return self.allows_abbreviation_impl()

    def allows_abbreviation_impl(self) -> bool:
        return True

    def add_parser_args(self, parser: Any) -> None:
        """Adds the group's options to ``parser`` (an ``argparse.ArgumentParser``)."""
        self.group = parser.add_argument_group(self.GROUP_TITLE or type(self).__name__, self.GROUP_DESCRIPTION)
        self.add_parser_args_impl()

    def add_parser_args_impl(self) -> Any:
        pass

    def parse(self, args: Any) -> None:
        """Reads the group's values from ``args`` (an ``argparse.Namespace``)."""
        self.parse_impl(args)

    def parse_impl(self, args: Any) -> Any:
        pass

    def add_to_script(self, script: Any, *args: Any, **kwargs: Any) -> Any:
        """Adds the group's code to ``script`` (a ``poly.tools.script.Script``); returns what
        ``add_to_script_impl`` returns (for a loader group, the name of its loader)."""
        return self.add_to_script_impl(script, *args, **kwargs)

    def add_to_script_impl(self, script: Any, *args: Any, **kwargs: Any) -> Any:
        return None


class BaseRunnerArgs(BaseArgs):
    """
    An argument group of a runner, Polygraphy's way: ``get_name_opt_impl()`` returns the
    runner's readable name and the option that selects it (without dashes, e.g. ``"res-des"``
    for ``--res-des``); ``add_to_script_impl(script)`` adds the runner with ``script.add_runner``.
    Its options are titled after the runner.
    """

    def get_name_opt(self) -> tuple[str, str]:
        """(the runner's readable name, its option without dashes)."""
        return self.get_name_opt_impl()

    def get_name_opt_impl(self) -> tuple[str, str]:
        raise NotImplementedError(f"{type(self).__name__} must implement get_name_opt_impl()")

    def add_parser_args(self, parser: Any) -> None:
        name, _ = self.get_name_opt()
        self.group = parser.add_argument_group(self.GROUP_TITLE or f"{name} Runner",
                                               self.GROUP_DESCRIPTION or f"Options for the {name} runner")
        self.add_parser_args_impl()


class Tool:
    """
    A command-line tool, Polygraphy's way: a name, argument groups (``get_subscriptions_impl``)
    or subtools (``get_subtools_impl``), ``setup_parser(subparsers)`` to add itself to an
    argparse parser, and ``run(args)`` (parses the groups, then ``run_impl``) returning an exit
    status.
    """

    def __init__(self, name: Any = None) -> None:
        self.name = name
        self.arg_groups: dict[Any, Any] = {}

    def get_subscriptions_impl(self) -> list[Any]:
        return []

    def get_subtools_impl(self) -> list[Any]:
        return []

    def get_subscriptions(self) -> list[Any]:
        """The tool's argument groups, registered with one another."""
        if not self.arg_groups:
            self.arg_groups = {type(group): group for group in self.get_subscriptions_impl()}
            for group in self.arg_groups.values():
                group.register(self.arg_groups)
        return list(self.arg_groups.values())

    def get_subtools(self) -> list[Any]:
        return list(self.get_subtools_impl())

    def add_parser_args_impl(self, parser: Any) -> Any:
        pass

    def add_parser_args(self, parser: Any) -> None:
        """Adds the tool's options (its groups', then its own) to ``parser``."""
        for group in self.get_subscriptions():
            group.add_parser_args(parser)
        self.add_parser_args_impl(parser)

    def setup_parser(self, subparsers: Any = None) -> Any:
        """
        Adds the tool to ``subparsers`` (from ``parser.add_subparsers()``), or makes a parser of
        its own when None; returns the tool's parser. ``args.subcommand`` is the tool to run.
        """
        description = (type(self).__doc__ or "").strip()
        if subparsers is None:
            parser = argparse.ArgumentParser(prog=self.name, description=description)
        else:
            parser = subparsers.add_parser(self.name, help=description.splitlines()[0] if description else None,
                                           description=description)
        subtools = self.get_subtools()
        if subtools:
            children = parser.add_subparsers(title="Subtools", dest=f"{self.name}_subtool")
            children.required = True
            for tool in subtools:
                tool.setup_parser(children)
        else:
            self.add_parser_args(parser)
            parser.set_defaults(subcommand=self)
        return parser

    def parse(self, args: Any) -> None:
        for group in self.get_subscriptions():
            group.parse(args)

    def run_impl(self, args: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} has subtools; run one of them")

    def run(self, args: Any) -> Any:
        """Parses the argument groups from ``args`` and runs the tool; returns the exit status."""
        self.parse(args)
        return self.run_impl(args)

    def main(self, argv: Any = None) -> Any:
        """Parses ``argv`` (the process's arguments by default) and runs the chosen (sub)tool. A
        tool that implements ``run(args)`` itself (Polygraphy's newer tools do) gets its groups
        parsed first, as ``run`` would have."""
        args = self.setup_parser().parse_args(argv)
        tool = args.subcommand
        if type(tool).run is not Tool.run:
            tool.parse(args)
        return tool.run(args)


def _check_param(param: Any) -> Any:
    return isinstance(param, click.Option) and not param.expose_value and set(param.opts) & set(CHECK_FLAGS)


def _add_click_param(parser: Any, param: Any) -> None:
    help_text = getattr(param, "help", None)
    if isinstance(param, click.Argument):
        nargs = None if param.nargs == 1 else ("+" if param.required else "*")
        if not param.required and param.nargs == 1:
            nargs = "?"
        parser.add_argument(param.name, nargs=nargs, default=None, help=help_text)
        return
    if _check_param(param):
        parser.add_argument(*param.opts, dest="check", nargs=argparse.REMAINDER, default=None, help=help_text)
        return
    if not param.expose_value:
        return
    common = {"dest": param.name, "default": None, "help": help_text}
    if param.count:
        parser.add_argument(*param.opts, action="count", **common)
    elif param.is_flag:
        parser.add_argument(*param.opts, action="store_const", const=param.flag_value, **common)
        if param.secondary_opts:
            parser.add_argument(*param.secondary_opts, action="store_const", const=not param.flag_value,
                                dest=param.name, help=argparse.SUPPRESS)
    elif isinstance(param, MultiOption):
        action = "append" if param.per_occurrence else "extend"
        parser.add_argument(*param.opts, nargs="+", action=action, **common)
    elif param.multiple:
        parser.add_argument(*param.opts, action="append", **common)
    else:
        nargs = param.nargs if param.nargs != 1 else None
        parser.add_argument(*param.opts, nargs=nargs, **common)


def _raw_value(param: Any, args: Any, ctx: Any) -> Any:
    raw = getattr(args, param.name, None)
    if raw is None:
        return param.get_default(ctx)
    if isinstance(param, MultiOption) and param.per_occurrence:
        return tuple(MultiOption.OCCURRENCE_SEPARATOR.join(occurrence) for occurrence in raw)
    if isinstance(raw, list):
        return tuple(raw)
    return raw


_UNSET = getattr(click.core, "UNSET", None)
"""click 8.3+'s marker of an option given no value and no default (a command's callback gets None)."""


def _processed(params: Any, ctx: Any, args: Any) -> dict[str, Any]:
    """The values of click ``params`` from the parsed ``args`` as click would pass them to a
    command (a bad value is a usage error naming its flag)."""
    values = {}
    for param in params:
        if param.expose_value:
            with click.core.augment_usage_errors(ctx, param=param):  # names the flag
                value = param.process_value(ctx, _raw_value(param, args, ctx))
            values[param.name] = None if _UNSET is not None and value is _UNSET else value
    return values


class ClickTool(Tool):
    """
    A ``Tool`` over a poly click command (``COMMAND = "module:attribute"``): ``add_parser_args``
    adds the command's options and arguments to an argparse parser (a ``--check`` command takes
    the rest of the command line, as in ``poly debug``), ``run`` converts the parsed values as
    the command does (types, defaults, option callbacks) and runs the command; its usage errors
    become one line and exit status 2.
    """

    COMMAND: Any = None
    NAME: Any = None

    def __init__(self, name: Any = None) -> None:
        super().__init__(name or self.NAME)

    def command(self) -> Any:
        """The click command."""
        module, _, attribute = self.COMMAND.partition(":")
        return getattr(importlib.import_module(module), attribute)

    def add_parser_args_impl(self, parser: Any) -> None:
        for param in self.command().params:
            _add_click_param(parser, param)

    def run_impl(self, args: Any) -> Any:
        command = self.command()
        ctx = click.Context(command, info_name=self.name)
        try:
            with ctx:
                check = getattr(args, "check", None)
                if check:
                    set_check_command(ctx, check)
                return ctx.invoke(command.callback, **_processed(command.params, ctx, args))
        except click.UsageError as err:
            error_line(f"{self.name}: {err.format_message()}")
            return EXIT_USAGE


def click_params(options: Any) -> list[Any]:
    """The click parameters a click decorator (``click.option``, or a stack of them such as a
    flag group's ``options()``) adds, in the order they appear in help."""

    def target(**_: Any) -> None:
        pass

    decorated = options(target)
    return list(reversed(getattr(decorated, "__click_params__", [])))


class ClickOptionsArgs(BaseArgs):
    """
    An argument group, Polygraphy's way, rendered from one of poly's click flag groups: its
    options are the group's click options converted to argparse arguments, and ``parse`` reads
    them as the command would (types, defaults, callbacks) into the group's value object, whose
    attributes this object then answers (``args_group.path``, ``args_group.fp16``...).

    Subclasses set ``GROUP_TITLE`` and implement ``click_options()`` (the click decorator) and
    ``from_kwargs(kwargs)`` (the value object of the parsed values).

    Example::

        parser = argparse.ArgumentParser()
        model = ModelArgs()          # poly.tools.args
        model.add_parser_args(parser)
        model.parse(parser.parse_args(["model.onnx"]))
        model.path                   # "model.onnx"
    """

    def __init__(self) -> None:
        super().__init__()
        self.values: Any = None

    def click_options(self) -> Any:
        raise NotImplementedError

    def from_kwargs(self, kwargs: dict[str, Any]) -> Any:
        raise NotImplementedError

    def params(self) -> list[Any]:
        """The group's click parameters."""
        return click_params(self.click_options())

    def add_parser_args_impl(self) -> None:
        for param in self.params():
            _add_click_param(self.group, param)

    def parse_kwargs(self, kwargs: dict[str, Any]) -> None:
        """Takes the values a click command already parsed (its keyword arguments)."""
        self.values = self.from_kwargs(kwargs)

    def parse_impl(self, args: Any) -> None:
        command = click.Command(self.GROUP_TITLE or type(self).__name__)
        ctx = click.Context(command)
        with ctx:
            self.values = self.from_kwargs(_processed(self.params(), ctx, args))

    def __getattr__(self, name: str) -> Any:
        values = self.__dict__.get("values")
        if values is None or name.startswith("__"):
            raise AttributeError(f"{type(self).__name__} has no attribute {name!r} (before parse(), it has none of "
                                 "its options' values)")
        return getattr(values, name)
