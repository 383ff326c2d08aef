"""--show-heatmaps and --show-error-metrics-plot: showing the comparison's plots in a window, and
what happens instead where there is no display to show them on (the plots are written to files
and the log says where)."""

from __future__ import annotations

import os
import sys

import click

_NON_INTERACTIVE_BACKENDS = ("agg", "pdf", "ps", "svg", "cairo", "template", "module://matplotlib_inline")


def display_options() -> list:
    """--show-heatmaps and --show-error-metrics-plot (click option decorators, for ``stack_options``)."""
    return [
        click.option("--show-heatmaps", is_flag=True,
                     help="Show heatmaps of the absolute and relative error (needs matplotlib); with no display, "
                     "they are saved to files and the log says where."),
        click.option("--show-error-metrics-plot", is_flag=True,
                     help="Show plots of the error against the reference output's magnitude (needs matplotlib); "
                     "with no display, they are saved to files and the log says where."),
    ]


def has_display() -> bool:
    """Whether matplotlib can open a window here: not with a non-interactive MPLBACKEND, and on
    Linux and other X11/Wayland systems only with DISPLAY or WAYLAND_DISPLAY set."""
    backend = os.environ.get("MPLBACKEND", "").lower()
    if backend and backend.startswith(_NON_INTERACTIVE_BACKENDS):
        return False
    if sys.platform in ("darwin", "win32", "cygwin"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def resolve_display(flag: str, show: bool, save_dir: str | None) -> tuple[bool, str | None]:
    """
    What a --show-* ``flag`` does here, as ``(show, save_dir)``: unchanged with a display; without
    one, nothing is shown and the plots go to ``save_dir`` (a new temporary directory when none
    was given), with a warning naming the directory.
    """
    if not show or has_display():
        return show, save_dir
    from poly.core import G_LOGGER

    if save_dir is None:
        import tempfile

        save_dir = tempfile.mkdtemp(prefix=f"poly{flag.removeprefix('--show')}-")
    G_LOGGER.warning(f"{flag}: there is no display to show the plots on (DISPLAY is not set); "
                     f"saving them to: {save_dir}")
    return False, save_dir
