"""A click group that imports its subcommands only when they are used, so that `poly --help`
stays fast and imports neither onnx nor onnxruntime, and that reports every error as one line."""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

from poly.cli.errors import error_line
from poly.cli.help_sections import SectionedCommand


class LazyGroup(click.Group, SectionedCommand):
    """
    ``lazy_subcommands`` maps a command name to ``("module:attribute", "short help")``; the module
    is imported on first use. ``main`` turns click's usage errors into a single line (exit 2)
    and returns the command's integer result as the exit status.
    """

    def __init__(self, *args: Any, lazy_subcommands: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy_subcommands = dict(lazy_subcommands or {})

    def list_commands(self, ctx: Any) -> Any:
        return sorted(set(super().list_commands(ctx)) | set(self.lazy_subcommands))

    def get_command(self, ctx: Any, cmd_name: Any) -> Any:
        if cmd_name in self.lazy_subcommands:
            target, _ = self.lazy_subcommands[cmd_name]
            module_name, attr = target.split(":")
            return getattr(importlib.import_module(module_name), attr)
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        rows = []
        for name in self.list_commands(ctx):
            if name in self.lazy_subcommands:
                rows.append((name, self.lazy_subcommands[name][1]))
            else:
                cmd = super().get_command(ctx, name)
                rows.append((name, cmd.get_short_help_str() if cmd else ""))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def main(self, args: Any = None, prog_name: Any = None, complete_var: Any = None, standalone_mode: bool = True, **extra: Any) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.exceptions.Exit as exc:
            sys.exit(exc.exit_code)
        except click.exceptions.Abort:
            error_line("Aborted!")
            sys.exit(1)
        except click.UsageError as exc:
            hint = f" (see '{exc.ctx.command_path} -h')" if exc.ctx is not None else ""
            error_line(f"Error: {exc.format_message()}{hint}")
            sys.exit(exc.exit_code)
        except click.ClickException as exc:
            error_line(f"Error: {exc.format_message()}")
            sys.exit(exc.exit_code)
        sys.exit(rv if isinstance(rv, int) else 0)
