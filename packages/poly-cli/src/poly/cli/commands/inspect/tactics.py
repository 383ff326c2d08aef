"""`poly inspect tactics FILE` and `poly inspect diff-tactics --dir D | --good G --bad B`."""

from __future__ import annotations

import os
from typing import Any

import click

from poly.cli.args.logging import LoggingArgs
from poly.cli.errors import EXIT_PASS, handle_errors
from poly.cli.help_sections import SectionedCommand
from poly.cli.multi_option import multi_option


@click.command(cls=SectionedCommand, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("tactic_file", metavar="FILE")
@LoggingArgs.options()
@handle_errors
def inspect_tactics(tactic_file: Any) -> Any:
    """Display a tactic replay file (from --save-tactics) or a timing cache in a readable form."""
    from poly.core import G_LOGGER
    from poly.trt.builder.tactics import load_tactic_records

    records = load_tactic_records(tactic_file)
    G_LOGGER.info(f"==== Tactics in {tactic_file}: {len(records)} layer(s) ====\n{records}")
    return EXIT_PASS


@click.command(cls=SectionedCommand, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--dir", "directory", type=click.Path(exists=True, file_okay=False),
              help="Directory with good/ and bad/ subdirectories of tactic replay files "
              "(as `poly debug build --save-tactics` sorts them); by default the current directory. "
              "A missing good/ or bad/ holds zero replays.")
@multi_option("--good", type=click.Path(exists=True), help="Good tactic replay files, or directories of them.")
@multi_option("--bad", type=click.Path(exists=True), help="Bad tactic replay files, or directories of them.")
@LoggingArgs.options()
@handle_errors
def diff_tactics(directory: Any, good: Any, bad: Any) -> Any:
    """Find tactics used only in bad builds: candidates for the cause of a failure."""
    from poly.core import G_LOGGER
    from poly.trt.builder.tactics import diff_tactics as find_suspects

    good, bad = list(good), list(bad)
    # As Polygraphy does: a side not given is good/ or bad/ under --dir (by default the current
    # directory), and a missing one holds zero replays (a build that never failed leaves no bad/):
    # that is said, not treated as an error.
    good = good or _existing_subdir(directory or "", "good")
    bad = bad or _existing_subdir(directory or "", "bad")
    suspects = find_suspects(good, bad)
    if not suspects:
        reason = ("there are no bad tactic replays to compare with the good ones. Sort tactic replays of failing "
                  "builds into a bad/ directory first (as `poly debug build --save-tactics ... --artifacts` does)"
                  if not suspects.bad_files else
                  "every tactic in the bad replays also appears in a good one. Try generating more tactic replay files")
        G_LOGGER.info(f"Could not determine potentially bad tactics: {reason}.")
        return EXIT_PASS
    lines = [f"Found potentially bad tactics in {len(suspects)} layer(s):"]
    for layer, algorithms in suspects.items():
        lines.append(f"Layer: {layer}")
        lines += [f"    Algorithms: {algo}" for algo in algorithms]
    G_LOGGER.info("\n".join(lines))
    return EXIT_PASS


def _existing_subdir(directory: str, name: str) -> list[str]:
    """``[directory/name]`` when it exists; otherwise ``[]``, with a warning saying it counts as
    zero replays."""
    from poly.core import G_LOGGER

    path = os.path.join(directory, name)
    if os.path.exists(path):
        return [path]
    flag = f"--dir {directory}: " if directory else f"no --dir nor --{name}: "
    G_LOGGER.warning(f"{flag}{path!r} does not exist; counting it as 0 {name} tactic replays")
    return []
