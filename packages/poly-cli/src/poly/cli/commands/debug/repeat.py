"""`poly debug repeat --until good|bad|N --check CMD...`: run a command repeatedly, sorting
the artifacts of each run into good/ and bad/."""

from __future__ import annotations

from typing import Any

import click

from poly.cli.args.debug.debugger import DebugCommand, DebuggerArgs
from poly.cli.args.logging import LoggingArgs
from poly.cli.errors import EXIT_PASS, handle_errors


@click.command(cls=DebugCommand, context_settings={"help_option_names": ["-h", "--help"]})
@DebuggerArgs.options(until_required=True)
@LoggingArgs.options()
@handle_errors
def repeat(**kwargs: Any) -> Any:
    """[EXPERIMENTAL] Run an arbitrary command repeatedly, sorting generated artifacts into
    `good` and `bad` directories."""
    from poly.core import G_LOGGER
    from poly.debug import Repeat

    summary = Repeat(DebuggerArgs.from_kwargs(kwargs).create_debugger()).run()
    G_LOGGER.info(
        f"Ran {summary.total} iteration(s): {summary.passed} passed, {summary.total - summary.passed} failed"
    )
    return EXIT_PASS
