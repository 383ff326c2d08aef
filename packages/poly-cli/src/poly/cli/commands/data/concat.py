"""`poly data concat FILE... -o OUT`: the iterations of several data files, one after the other."""

from __future__ import annotations

from typing import Any

import click

from poly.cli.args.logging import LoggingArgs
from poly.cli.errors import EXIT_PASS, handle_errors
from poly.cli.help_sections import SectionedCommand


@click.command("concat", cls=SectionedCommand, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("paths", nargs=-1, required=True, metavar="FILE...",
                type=click.Path(exists=True, dir_okay=False))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="Where to write the concatenated data (JSON in Polygraphy's format, or .npz).")
@LoggingArgs.options()
@handle_errors
def concat(paths: Any, output: Any, **kwargs: Any) -> Any:
    """Concatenate the iterations of several files: all input files (from --save-inputs), or all
    output files (from --save-outputs, a runner's iterations joined by runner name)."""
    from poly.compare import RunResults, concat_data, save_inputs

    data = concat_data(paths)
    if isinstance(data, RunResults):
        if str(output).lower().endswith(".npz"):
            data.save(output)
        else:
            from poly.core.json import save_json

            save_json(data, output, description="output file containing concatenated iteration(s)")
    else:
        save_inputs(data, output, description=f"input file containing {len(data)} iteration(s)")
    return EXIT_PASS
