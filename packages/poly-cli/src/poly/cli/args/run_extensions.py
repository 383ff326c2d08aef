"""
`poly run` extensions: argument groups installed packages add to `poly run`, found through the
entry-point groups ``polygraphy.run.plugins`` (Polygraphy's, so its extensions work unchanged
with imports rewritten) and ``poly.run.plugins``. Each entry point is a function that takes no
arguments and returns a list of argument groups (``poly.tools.args.BaseArgs``; a runner's group
is a ``BaseRunnerArgs``), as Polygraphy's examples/dev/02 describes.

Their argparse options become `poly run` options (a runner group's ``--<opt>`` selects its runner,
in command-line order with --onnxrt, --trt...); after parsing, the groups are registered with the
argparse renderings of poly's own groups they may depend on (``ModelArgs``, ``OnnxLoadArgs``,
``TrtConfigArgs``) and parsed; a selected runner's group writes its code into a
``poly.tools.script.Script``, which `poly run` runs, and `--gen-script` writes, as it is.
"""

from __future__ import annotations

import functools
import os
import sys
from typing import Any

import click

from poly.cli.args.runners import record_runner
from poly.cli.gen_script.call_tree import Code
from poly.cli.help_sections import tag_section

ENTRY_POINT_GROUPS = ("polygraphy.run.plugins", "poly.run.plugins")


def may_declare_extensions(groups: tuple[str, ...] = ENTRY_POINT_GROUPS) -> bool:
    """
    Whether an installed distribution may declare an entry point of ``groups``: False only when
    the ``entry_points.txt`` of every distribution on ``sys.path`` (``*.dist-info``,
    ``*.egg-info``, an egg's ``EGG-INFO``: where importlib.metadata looks) names none of them.

    A few milliseconds where importlib.metadata costs every `poly run` ~30 ms, and ~300 ms without
    compiled bytecode (it imports email, zipfile, csv...), for the usual answer: no extension.
    True (ask importlib.metadata) wherever this search could miss one: a ``sys.path`` entry that
    is not a directory (a zip), or a finder of distributions other than the standard one.
    """
    from importlib.machinery import PathFinder

    if any(hasattr(finder, "find_distributions") and finder is not PathFinder for finder in sys.meta_path):
        return True
    headers = [f"[{group}]" for group in groups]
    for entry in sys.path:
        root = entry or "."
        try:
            children = os.listdir(root)
        except NotADirectoryError:
            return True
        except OSError:  # a path that does not exist: nothing installed there
            continue
        is_egg = root.lower().endswith(".egg")
        for child in children:
            low = child.lower()
            if not (low.endswith((".dist-info", ".egg-info")) or (is_egg and low == "egg-info")):
                continue
            try:
                with open(os.path.join(root, child, "entry_points.txt"), encoding="utf-8") as f:
                    text = f.read()
            except OSError:  # no entry points, or an egg-info file
                continue
            if any(header in text for header in headers):
                return True
    return False


@functools.cache
def installed_groups() -> tuple[Any, ...]:
    """The argument groups of the installed extensions (loaded once a process); an extension
    that fails to load is skipped with a warning naming it."""
    if not may_declare_extensions():
        return ()
    from importlib.metadata import entry_points

    from poly.core import G_LOGGER

    groups: list[Any] = []
    for group_name in ENTRY_POINT_GROUPS:
        for entry in entry_points(group=group_name):
            try:
                groups.extend(entry.load()())
            except Exception as err:  # noqa: BLE001 - a broken extension must not break `poly run`
                G_LOGGER.warning(f"Skipping the `poly run` extension {entry.name!r} ({entry.value}): "
                                 f"{type(err).__name__}: {err}")
    return tuple(groups)


class _Recorder:
    """Stands in for an argparse parser and its groups: records ``add_argument`` calls."""

    def __init__(self) -> None:
        self.arguments: list[tuple[tuple[str, ...], dict[str, Any]]] = []
        self.title: str | None = None
        """The title of the (first) argument group: the `poly run --help` section of the options."""

    def add_argument_group(self, *args: Any, **kwargs: Any) -> _Recorder:
        self.title = self.title or (args[0] if args else kwargs.get("title"))
        return self

    def add_mutually_exclusive_group(self, *args: Any, **kwargs: Any) -> _Recorder:
        return self

    def add_argument(self, *flags: str, **kwargs: Any) -> None:
        self.arguments.append((flags, kwargs))


def _click_option(flags: tuple[str, ...], kwargs: dict[str, Any]) -> click.Option:
    """The click option of an argparse ``add_argument(*flags, **kwargs)`` call."""
    name = kwargs.get("dest") or max(flags, key=len).lstrip("-").replace("-", "_")
    action, help_text, default = kwargs.get("action"), kwargs.get("help"), kwargs.get("default")
    if action in ("store_true", "store_false"):
        return click.Option([*flags, name], is_flag=True, flag_value=action == "store_true",
                            default=default, help=help_text)
    if action == "store_const":
        return click.Option([*flags, name], is_flag=True, flag_value=kwargs.get("const"), default=default,
                            help=help_text)
    if action == "count":
        return click.Option([*flags, name], count=True, help=help_text)
    choices = kwargs.get("choices")
    kind = click.Choice([str(c) for c in choices]) if choices else kwargs.get("type")
    nargs = kwargs.get("nargs")
    if action in ("append", "extend") or nargs in ("+", "*"):
        from poly.cli.multi_option import MultiOption

        return MultiOption([*flags, name], type=kind, help=help_text)
    return click.Option([*flags, name], type=kind, default=default, help=help_text,
                        nargs=nargs if isinstance(nargs, int) else 1)


class RunExtensions:
    """The installed extensions' argument groups, for one `poly run` command line."""

    def __init__(self, groups: Any = None) -> None:
        self.groups = list(installed_groups() if groups is None else groups)
        self._params: list[click.Parameter] | None = None

    def runner_param(self, group: Any) -> str:
        """The parameter name of a runner group's selecting flag."""
        return group.get_name_opt()[1].replace("-", "_")

    def runner_groups(self) -> dict[str, Any]:
        if not self.groups:  # no extension installed: nothing of Polygraphy's argument groups imported
            return {}
        from poly.tools.args.base import BaseRunnerArgs

        return {self.runner_param(g): g for g in self.groups if isinstance(g, BaseRunnerArgs)}

    def click_params(self) -> list[click.Parameter]:
        """The groups' options (and each runner's selecting flag) as click options (the same
        objects at every call)."""
        if self._params is None:
            self._params = self._make_params()
        return self._params

    def _make_params(self) -> list[click.Parameter]:
        params: list[click.Parameter] = []
        for name, group in self.runner_groups().items():
            label, opt = group.get_name_opt()
            params.append(click.Option([f"--{opt}", name], is_flag=True, callback=record_runner,
                                       help=f"Run inference with {label} (an installed `poly run` extension)."))
        tag_section(params, "Runners")
        for group in self.groups:
            recorder = _Recorder()
            group.add_parser_args(recorder)
            options = [_click_option(flags, kwargs) for flags, kwargs in recorder.arguments]
            tag_section(options, recorder.title or type(group).__name__)
            params += options
        return params

    def parse(self, kwargs: dict[str, Any]) -> None:
        """Registers the groups with poly's own (parsed from ``kwargs``, the command's values)
        and parses them."""
        import argparse

        from poly.tools.args import ModelArgs, OnnxLoadArgs, TrtConfigArgs

        own = {ModelArgs: ModelArgs(), OnnxLoadArgs: OnnxLoadArgs(), TrtConfigArgs: TrtConfigArgs()}
        for group in own.values():
            group.parse_kwargs(kwargs)
        registry = {**own, **{type(group): group for group in self.groups}}
        namespace = argparse.Namespace(**{k: (list(v) if isinstance(v, tuple) else v) for k, v in kwargs.items()})
        for group in registry.values():
            group.register(registry)
        for group in self.groups:
            group.parse(namespace)

    def runner_statements(self, name: str) -> tuple[list, str]:
        """The statements that make the runners of the runner flag ``name``, and the name of the
        list variable they set."""
        from poly.tools.script import Script

        script = Script(always_create_runners=True)
        self.runner_groups()[name].add_to_script(script)
        variable = f"{name}_runners"
        return [Code(script.code(runners_name=variable))], variable
