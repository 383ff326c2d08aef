"""`poly inspect tactics FILE` and `poly inspect diff-tactics --dir D | --good G --bad B`."""

from __future__ import annotations

import os

import click

from poly.cli.args.logging import LoggingArgs
from poly.cli.errors import EXIT_PASS, handle_errors
from poly.cli.multi_option import multi_option


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("tactic_file", metavar="FILE")
@LoggingArgs.options()
@handle_errors
def inspect_tactics(tactic_file):
    """Display a tactic replay file (from --save-tactics) or a timing cache in a readable form."""
    from poly.core import G_LOGGER
    from poly.trt.tactics import load_tactic_records

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
def diff_tactics(directory, good, bad):
    """Find tactics used only in bad builds: candidates for the cause of a failure."""
    from poly.core import G_LOGGER
    from poly.trt.tactics import diff_tactics as find_suspects

    good, bad = list(good), list(bad)
    if directory:
        good = good or [os.path.join(directory, "good")]
        bad = bad or [os.path.join(directory, "bad")]
    if not good or not bad:
        raise click.UsageError("Give --dir, or both --good and --bad")
    for path in good + bad:
        if not os.path.exists(path):
            raise click.BadParameter(f"{path!r} does not exist", param_hint="'--dir'")
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
