"""`poly inspect data FILE`: shapes, dtypes and statistics of saved inputs or results."""

from __future__ import annotations

from typing import Any

import click

from poly.cli.args.logging import LoggingArgs
from poly.cli.errors import EXIT_PASS, handle_errors


def _summary(name: Any, array: Any, show_values: Any, histogram: bool = False) -> str:
    import numpy as np

    line = f"{name} [dtype={array.dtype}, shape={array.shape}]"
    if array.size and np.issubdtype(array.dtype, np.number):
        as_f = array.astype(np.float64)
        line += (f" | Stats: mean={as_f.mean():.5g}, std-dev={as_f.std():.5g}, var={as_f.var():.5g}, "
                 f"median={np.median(as_f):.5g}, min={as_f.min():.5g} at {tuple(int(i) for i in np.unravel_index(as_f.argmin(), as_f.shape))}, "
                 f"max={as_f.max():.5g} at {tuple(int(i) for i in np.unravel_index(as_f.argmax(), as_f.shape))}")
    if histogram:
        from poly.compare.stats.report_lines import str_histogram

        text = str_histogram(array).rstrip("\n")
        if text:
            line += "\n    " + text.replace("\n", "\n    ")
    if show_values:
        line += "\n    " + str(array).replace("\n", "\n    ")
    return line


def _print_limit(flag: str, value: int) -> int:
    """-1 (no limit) as sys.maxsize; a value below -1 is a usage error naming ``flag``."""
    import sys

    if value == -1:
        return sys.maxsize
    if value < 0:
        raise click.BadParameter(f"{value} is not a count: give a number >= 0, or -1 for no limit", param_hint=f"'{flag}'")
    return value


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
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

    results_error = None
    try:
        with G_LOGGER.verbosity(G_LOGGER.CRITICAL + 10):  # not results: try inputs next, quietly
            results = RunResults.load(path)
    except PolyException as err:
        results, results_error = None, err
    if results is not None and len(results):
        lines = [f"==== Run Results ({len(results)} runners) ===="]
        for runner, iterations in results.items():
            lines.append(f"\n---- {runner} ({len(iterations)} iterations) ----")
            for index, iteration in enumerate(iterations if show_all else iterations[:1]):
                lines.append(f"Iteration {index}:")
                lines += ["    " + _summary(n, v, show_values, histogram).replace("\n", "\n    ")
                          for n, v in iteration.items()]
        G_LOGGER.info("\n".join(lines))
        return EXIT_PASS
    try:
        feeds = load_inputs([path])
    except PolyException as err:
        # a damaged results file is not inputs either: say what is wrong with it as results
        if results_error is not None and "RunResults" in str(err):
            raise results_error from None
        raise
    lines = [f"==== Data ({len(feeds)} iterations) ===="]
    for index, feed in enumerate(feeds if show_all else feeds[:1]):
        lines.append(f"Iteration {index}:")
        lines += ["    " + _summary(n, v, show_values, histogram).replace("\n", "\n    ") for n, v in feed.items()]
    G_LOGGER.info("\n".join(lines))
    return EXIT_PASS
