"""`poly data to-input FILE... -o OUT`: saved inputs and outputs merged into feed dicts."""

from __future__ import annotations

from typing import Any

import click

from poly.cli.args.logging import LoggingArgs
from poly.cli.errors import EXIT_PASS, handle_errors
from poly.cli.help_sections import SectionedCommand


@click.command("to-input", cls=SectionedCommand, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("paths", nargs=-1, required=True, metavar="FILE...",
                type=click.Path(exists=True, dir_okay=False))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="Where to write the merged inputs (JSON in Polygraphy's input format, or .npz).")
@LoggingArgs.options()
@handle_errors
def to_input(paths: Any, output: Any, **kwargs: Any) -> Any:
    """Merge input and output files (from --save-inputs / --save-outputs, JSON or .npz) into one
    input file usable with --load-inputs.

    Iteration i of the result holds every tensor of iteration i of every file; a tensor in
    several files takes the value of the last one. Output files should hold one runner's outputs."""
    from poly.compare import merge_inputs, save_inputs

    feed_dicts = merge_inputs(paths)
    save_inputs(feed_dicts, output, description=f"input file containing {len(feed_dicts)} iteration(s)")
    return EXIT_PASS
