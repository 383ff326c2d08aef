"""`poly debug repeat --until good|bad|N --check CMD...`: run a command repeatedly, sorting
the artifacts of each run into good/ and bad/."""

from __future__ import annotations

import click

from poly.cli.debug_options import DebugCommand, build_debugger, debug_options
from poly.cli.errors import EXIT_PASS


@click.command(cls=DebugCommand, context_settings={"help_option_names": ["-h", "--help"]})
@debug_options(until_required=True)
def repeat(**options):
    """[EXPERIMENTAL] Run an arbitrary command repeatedly, sorting generated artifacts into
    `good` and `bad` directories."""
    from poly.core.logger import G_LOGGER
    from poly.debug import Repeat

    summary = Repeat(build_debugger(options)).run()
    G_LOGGER.info(
        f"Ran {summary.total} iteration(s): {summary.passed} passed, {summary.total - summary.passed} failed"
    )
    return EXIT_PASS
