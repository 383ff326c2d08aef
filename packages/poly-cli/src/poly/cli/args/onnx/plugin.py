"""The plugin group: --plugin-dir (the directory of plugin directories, each with a pattern.py)
and --include / --exclude (which of its plugins are matched), for `poly plugin`."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import click

from poly.cli.multi_option import multi_option, stack_options


@dataclass(frozen=True)
class PluginArgs:
    """Which plugins a `poly plugin` command works with."""

    plugin_dir: str
    include: tuple[str, ...] = ()
    """--include: only these plugins; (): all of --plugin-dir."""
    exclude: tuple[str, ...] = ()
    """--exclude: not these plugins."""

    @classmethod
    def options(cls, select: bool = True) -> Any:
        """--plugin-dir, and --include / --exclude when ``select``."""
        options = [click.option("--plugin-dir", required=True, type=click.Path(file_okay=False),
                                help="Directory holding one directory per plugin, each with a pattern.py "
                                "(an onnx-graphsurgeon pattern of the subgraphs the plugin replaces).")]
        if select:
            options += [
                multi_option("--include", help="Names of plugins to include: `--include pluginA pluginB`."),
                multi_option("--exclude", help="Names of plugins to exclude: `--exclude pluginA pluginB`."),
            ]
        return stack_options(options, section="Plugin Selection")

    @classmethod
    def from_kwargs(cls, kwargs: Mapping) -> PluginArgs:
        """--include with --exclude is a usage error; so is a --plugin-dir that does not exist."""
        include, exclude = tuple(kwargs.get("include") or ()), tuple(kwargs.get("exclude") or ())
        if include and exclude:
            raise click.UsageError("--include and --exclude cannot be used together")
        plugin_dir = kwargs["plugin_dir"]
        if not os.path.isdir(plugin_dir):
            raise click.BadParameter(f"{plugin_dir!r} is not a directory", param_hint="'--plugin-dir'")
        return cls(plugin_dir=plugin_dir, include=include, exclude=exclude)

    def match(self, model: Any) -> Any:
        """poly.onnx.plugins.match_plugins with these plugins: the config documents of ``model``
        (an ONNX model or a loader of one)."""
        from poly.onnx.plugins import match_plugins

        return match_plugins(model, self.plugin_dir, include=self.include or None, exclude=self.exclude or None)

    def plugin_names(self) -> list:
        """The plugins of --plugin-dir these flags select."""
        from poly.onnx.plugins import find_plugins

        return find_plugins(self.plugin_dir, include=self.include or None, exclude=self.exclude or None)
