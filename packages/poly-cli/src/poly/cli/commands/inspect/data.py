"""`poly inspect data FILE`: shapes, dtypes and statistics of saved inputs or results."""

from __future__ import annotations

from typing import Any

import click

from poly.cli.args.logging import LoggingArgs
from poly.cli.errors import EXIT_PASS, handle_errors
from poly.cli.help_sections import SectionedCommand


def _stats_line(array: Any) -> str:
    """Polygraphy's statistics figures of one tensor: moments, extrema with their indices,
    avg-magnitude and (except for bool data) p90/p95/p99."""
    import numpy as np

    from poly.compare.stats.report_lines import LOGGED_QUANTILES, array_stats, str_output_stats

    stats = array_stats(array)
    if stats is not None and stats.quantiles is not None and array.dtype == np.float16 and array.size:
        # Polygraphy takes quantiles of half-precision data in half precision: so do we
        with np.errstate(all="ignore"):
            stats.quantiles = {q: float(np.quantile(array, q)) for q in LOGGED_QUANTILES}
    return str_output_stats(stats)


def _histogram(array: Any) -> str:
    """The histogram block of one tensor (empty when none can be drawn)."""
    import numpy as np

    from poly.compare.stats.report_lines import format_histogram, str_histogram

    if array.dtype == np.float16 and array.size:
        # numpy bins half-precision data with half-precision edges, as Polygraphy shows them
        try:
            counts, edges = np.histogram(array)
        except (ValueError, RuntimeError):
            return ""
        return format_histogram(counts.tolist(), edges)  # type: ignore[arg-type]
    return str_histogram(array) or ""


def _iterations_text(iterations: Any, show_all: bool, show_values: bool, histogram: bool) -> str:
    """The tensors of the first iteration (every iteration with --all, each under an
    ``-- Iteration: N`` header when there are several), laid out as Polygraphy lays them out."""
    from poly.core.util.text import indent_block

    text = ""
    for index, feed in enumerate(iterations if show_all else iterations[:1]):
        nested = show_all and len(iterations) > 1
        level = 1 if nested else 0
        if nested:
            text += indent_block(f"\n-- Iteration: {index}\n", 0)
        for name, array in feed.items():
            text += indent_block(f"\n{name} [dtype={array.dtype}, shape={array.shape}] | Stats: {_stats_line(array)}", level)
            if histogram:
                text += "\n" + indent_block(_histogram(array), level + 1)
            if show_values:
                text += "\n" + indent_block(str(array), level + 1)
        if nested:
            text += "\n"
    return text


def _print_limit(flag: str, value: int) -> int:
    """-1 (no limit) as sys.maxsize; a value below -1 is a usage error naming ``flag``."""
    import sys

    if value == -1:
        return sys.maxsize
    if value < 0:
        raise click.BadParameter(f"{value} is not a count: give a number >= 0, or -1 for no limit", param_hint=f"'{flag}'")
    return value


@click.command(cls=SectionedCommand, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("path", type=click.Path(exists=True))
@click.option("-a", "--all", "show_all", is_flag=True, help="Show every iteration, not only the first.")
@click.option("-s", "--show-values", is_flag=True, help="Show the values of the tensors.")
@click.option("--histogram", is_flag=True, help="Show a histogram of the values of each tensor.")
@click.option("-n", "--num-items", type=int, default=3, show_default=True,
              help="With --show-values, the number of values shown at the start and end of each dimension "
              "(-1: all of them).")
@click.option("--line-width", type=int, default=75, show_default=True,
              help="With --show-values, the characters per line (-1: break lines only where dimensions end).")
@LoggingArgs.options()
@handle_errors
def inspect_data(path: Any, show_all: Any, show_values: Any, histogram: Any, num_items: Any, line_width: Any) -> Any:
    """Display information about inference inputs or results saved by poly or Polygraphy."""
    import numpy as np

    edge_items = _print_limit("--num-items", num_items)
    width = _print_limit("--line-width", line_width)
    with np.printoptions(edgeitems=edge_items, linewidth=width):
        return _inspect(path, show_all, show_values, histogram)


def _inspect(path: Any, show_all: Any, show_values: Any, histogram: Any) -> Any:
    from poly.compare import RunResults, load_inputs
    from poly.core import G_LOGGER, PolyException
    from poly.core.util.text import indent_block

    results_error = None
    try:
        with G_LOGGER.verbosity(G_LOGGER.CRITICAL + 10):  # not results: try inputs next, quietly
            results = RunResults.load(path)
    except PolyException as err:
        results, results_error = None, err
    if results is not None and len(results):
        text = f"==== Run Results ({len(results)} runners) ====\n\n"
        width = max((len(runner) for runner in results.keys()), default=0)
        for runner, iterations in results.items():
            text += f"---- {runner:<{width}} ({len(iterations)} iterations) ----\n"
            text += _iterations_text(list(iterations), show_all, show_values, histogram) + "\n"
        G_LOGGER.info(indent_block(text, 0).strip())
        return EXIT_PASS
    try:
        # Polygraphy loads a single file without announcing it: only warnings and errors show
        with G_LOGGER.verbosity(max(G_LOGGER.WARNING, G_LOGGER.module_severity.get())):
            feeds = load_inputs([path])
    except PolyException as err:
        # a damaged results file is not inputs either: say what is wrong with it as results
        if results_error is not None and "RunResults" in str(err):
            raise results_error from None
        raise
    text = f"==== Data ({len(feeds)} iterations) ====\n"
    text += _iterations_text(feeds, show_all, show_values, histogram) + "\n"
    G_LOGGER.info(indent_block(text, 0).strip())
    return EXIT_PASS
