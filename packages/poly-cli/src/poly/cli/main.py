"""The `poly` command: a click group whose subcommands are imported on first use."""

from __future__ import annotations

from typing import Any

import click

from poly.cli.args.logging import LoggingArgs
from poly.cli.lazy_group import LazyGroup
from poly.cli.process_exit import exit_process


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("poly-cli")
    except PackageNotFoundError:  # running from a source tree without metadata
        return "unknown"


def _print_version(ctx: Any, param: Any, value: Any) -> None:
    # Looked up only when asked for: importlib.metadata costs every other command ~40 ms.
    if value and not ctx.resilient_parsing:
        click.echo(f"poly {_version()}")
        ctx.exit()


SUBCOMMANDS = {
    "run": ("poly.cli.commands.run:run", "Run inference and compare results across backends."),
    "convert": ("poly.cli.commands.convert:convert", "Convert models to other formats (ONNX fp16; TensorRT with poly-trt)."),
    "inspect": ("poly.cli.commands.inspect.group:inspect", "View information about various types of files."),
    "surgeon": ("poly.cli.commands.surgeon.group:surgeon", "Modify ONNX models."),
    "debug": ("poly.cli.commands.debug.group:debug", "[EXPERIMENTAL] Debug model issues: build, localize, precision, reduce, repeat."),
    "validate": ("poly.cli.commands.validate:validate", "Validate a model over a whole dataset against golden outputs."),
    "multi-device": ("poly.cli.commands.multi_device.group:multi_device", "Multi-device operations on ONNX models (shard)."),
    "template": ("poly.cli.commands.template.group:template",
                 "Write template files to edit (TensorRT networks and configs, ONNX-GraphSurgeon scripts, shard hints)."),
    "plugin": ("poly.cli.commands.plugin.group:plugin", "Plugin substitution in ONNX models: list, match, replace."),
    "check": ("poly.cli.commands.check.group:check", "Check and validate models: lint."),
    "data": ("poly.cli.commands.data.group:data", "Manipulate input and output data: to-input."),
}


@click.group(
    cls=LazyGroup,
    lazy_subcommands=SUBCOMMANDS,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
              help="Show the version and exit.")
@LoggingArgs.options()
def cli() -> None:
    """poly: run, compare and debug deep-learning models across inference backends."""


def main() -> None:
    """Runs `poly` with ``sys.argv`` (``SystemExit`` carries the status)."""
    cli(prog_name="poly")


def console_script() -> None:
    """Entry point of the `poly` console script: ``main``, then the process ends without the
    interpreter's teardown (``exit_process``)."""
    try:
        main()
    except SystemExit as exc:
        exit_process(exc.code)
    exit_process(0)
