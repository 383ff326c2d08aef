"""`poly inspect tactics FILE` and `poly inspect diff-tactics --dir D | --good G --bad B`."""

from __future__ import annotations

import os
from typing import Any

import click

from poly.cli.args.logging import LoggingArgs
from poly.cli.errors import EXIT_PASS, handle_errors
from poly.cli.multi_option import multi_option


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
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


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--dir", "directory", type=click.Path(exists=True, file_okay=False),
              help="Directory with good/ and bad/ subdirectories of tactic replay files "
              "(as `poly debug build --save-tactics` sorts them).")
@multi_option("--good", type=click.Path(exists=True), help="Good tactic replay files, or directories of them.")
@multi_option("--bad", type=click.Path(exists=True), help="Bad tactic replay files, or directories of them.")
@LoggingArgs.options()
@handle_errors
def diff_tactics(directory: Any, good: Any, bad: Any) -> Any:
    """Find tactics used only in bad builds: candidates for the cause of a failure."""
    from poly.core import G_LOGGER
    from poly.trt.builder.tactics import diff_tactics as find_suspects

    good, bad = list(good), list(bad)
    if not directory and (not good or not bad):
        raise click.UsageError("Give --dir, or both --good and --bad")
    if directory:
        # As Polygraphy does, a missing good/ or bad/ holds zero replays (a build that never failed
        # leaves no bad/), which is said rather than treated as a usage error.
        good = good or _existing_subdir(directory, "good")
        bad = bad or _existing_subdir(directory, "bad")
    if not bad:
        G_LOGGER.info(f"Loaded 0 bad tactic replays: there are no bad builds to compare with the "
                      f"{'good ones' if good else 'good ones (of which there are none either)'}, so no tactic "
                      "can be suspected. Sort tactic replays of failing builds into a bad/ directory first "
                      "(as `poly debug build --save-tactics ... --artifacts` does).")
        return EXIT_PASS
    suspects = find_suspects(good, bad)
    if not suspects:
        G_LOGGER.info("Could not determine potentially bad tactics: every tactic in the bad replays also appears "
                      "in a good one. Try generating more tactic replay files.")
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
    G_LOGGER.warning(f"--dir: {path!r} does not exist; counting it as 0 {name} tactic replays")
    return []
