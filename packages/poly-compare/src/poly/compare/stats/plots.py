"""
Plots of comparison errors with matplotlib (an optional dependency, imported only here and only
when a plot is asked for): heatmaps of the absolute/relative differences, and the error against
the reference output's magnitude; and where there is no display to show them on, what showing
them becomes (``resolve_display``: they are saved to files and the log says where).
"""

from __future__ import annotations

import math
import os
import sys
from typing import Any

import numpy as np

from poly.core import G_LOGGER
from poly.core.files.paths import sanitize_filename
from poly.core.optional_import import lazy_import

__all__ = ["require_matplotlib", "build_heatmaps", "scatter_plot_error_magnitude", "has_display", "resolve_display"]

_PURPOSE = "Plotting comparison errors (heatmaps, error plots)"
matplotlib = lazy_import("matplotlib", purpose=_PURPOSE)
colors = lazy_import("matplotlib.colors", install="matplotlib", purpose=_PURPOSE)
figure = lazy_import("matplotlib.figure", install="matplotlib", purpose=_PURPOSE)
pyplot = lazy_import("matplotlib.pyplot", install="matplotlib", purpose=_PURPOSE)


_NON_INTERACTIVE_BACKENDS = ("agg", "pdf", "ps", "svg", "cairo", "template", "module://matplotlib_inline")


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
    What showing plots (``show``, asked for by the option or flag ``flag``, e.g.
    ``"--show-heatmaps"``) does here, as ``(show, save_dir)``: unchanged with a display; without
    one, nothing is shown and the plots go to ``save_dir`` (a new temporary directory when none was
    given), with a warning naming the directory.
    """
    if not show or has_display():
        return show, save_dir
    if save_dir is None:
        import tempfile

        save_dir = tempfile.mkdtemp(prefix=f"poly{flag.removeprefix('--show')}-")
    G_LOGGER.warning(f"{flag}: there is no display to show the plots on (DISPLAY is not set); "
                     f"saving them to: {save_dir}")
    return False, save_dir


def require_matplotlib() -> Any:
    """Imports matplotlib, or raises ``MissingModuleError`` (a ``PolyException``) with one line
    naming ``pip install matplotlib``."""
    for module in (matplotlib, colors, figure):
        module.load()
    return matplotlib.load()


def _new_figure(show: bool, **kwargs: Any) -> Any:
    if show:
        return pyplot.figure(**kwargs)
    return figure.Figure(**kwargs)


def _finish(fig: Any, path: Any, show: Any, **save_kwargs: Any) -> None:
    try:
        if path is not None:
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
            fig.savefig(path, **save_kwargs)
        if show:
            pyplot.show()
    finally:
        if show:
            pyplot.close(fig)


def build_heatmaps(arr: Any, min_val: Any, max_val: Any, prefix: Any, save_dir: Any = None, show: Any = None, use_lognorm: Any = None) -> str:  # type: ignore[return]
    """
    Draws an array as heatmaps: the last two dimensions are an image; leading dimensions are
    flattened into a grid of images, several figures when there are many.

    Args:
        arr (numpy.ndarray): The data (e.g. absolute differences).
        min_val, max_val (float): The colour scale's range.
        prefix (str): Title prefix of the figures.
        save_dir (str): Directory to save ``.svg`` figures to.
        show (bool): Show the figures.
        use_lognorm (bool): Logarithmic colour scale (when the range is not a single value).
    """
    require_matplotlib()
    G_LOGGER.start(f"Building heatmaps for {prefix}. This may take a while...")
    arr = np.asarray(arr)
    if arr.dtype == np.bool_:
        arr = arr.astype(np.float32)
    if arr.ndim < 3:
        arr = arr.reshape((1,) * (3 - arr.ndim) + arr.shape)
    original_shape = arr.shape
    arr = arr.reshape((-1,) + original_shape[-2:])
    num_images, height, width = arr.shape

    def coord(index: Any) -> str:
        parts: list[Any] = []
        for dim in reversed(original_shape[:-2]):
            parts.insert(0, index % dim)
            index //= dim
        return f"({','.join(map(str, parts))},0:{height},0:{width})"

    rows = max(1, min(1080 // max(height, 1), 14))
    cols = max(1, min(1920 // max(width, 1), 7))
    if num_images < rows * cols:
        cols = max(1, min(num_images, cols))
        rows = max(1, math.ceil(num_images / cols))
    per_figure = rows * cols
    lognorm = bool(use_lognorm) and min_val != max_val and min_val > 0
    with G_LOGGER.indent():
        for fig_index in range(math.ceil(num_images / per_figure)):
            fig = _new_figure(bool(show), dpi=200, constrained_layout=True)
            axs = fig.subplots(rows, cols, squeeze=False)
            base = fig_index * per_figure
            title_prefix = prefix + (" (Log Scale)" if lognorm else "")
            title = f"{title_prefix}: {coord(base)} to {coord(min(base + per_figure, num_images) - 1)}"
            fig.suptitle(title, fontsize="xx-small")
            norm_type = colors.LogNorm if lognorm else colors.Normalize
            norm = norm_type(vmin=min_val, vmax=max_val)
            images = []
            for row in range(rows):
                for col in range(cols):
                    index = base + col + row * cols
                    ax = axs[row, col]
                    ax.set_axis_off()
                    image = arr[index] if index < num_images else np.zeros((height, width))
                    ax.set_title(coord(index) if index < num_images else "Out Of Bounds", fontsize="xx-small")
                    images.append(ax.imshow(image, cmap="plasma", norm=norm, filternorm=False, resample=False))
            fig.colorbar(images[0], ax=axs, shrink=0.7)
            path = None
            if save_dir is not None:
                path = os.path.join(save_dir, f"{sanitize_filename(title) or 'plot'}.svg")
                G_LOGGER.info(f"Saving '{prefix}' heatmap to: '{path}'")
            _finish(fig, path, bool(show))


def scatter_plot_error_magnitude(absdiff: Any, reldiff: Any, reference_output: Any, min_reldiff: Any, max_reldiff: Any, runner0_name: Any,
                                 runner1_name: Any, out0_name: Any, out1_name: Any, save_dir: Any = None, show: Any = None) -> None:
    """
    Plots the absolute and relative differences against the magnitude of the reference (second)
    output, saved as ``error_metrics_<output>.png`` in ``save_dir`` and/or shown.
    """
    require_matplotlib()
    G_LOGGER.start(f"Building error metrics plot for {out0_name}. This may take a while...")
    magnitude = np.abs(np.asarray(reference_output, dtype=np.float64)).ravel()
    absdiff = np.asarray(absdiff, dtype=np.float64).ravel()
    reldiff = np.asarray(reldiff, dtype=np.float64).ravel()
    with G_LOGGER.indent():
        fig = _new_figure(bool(show), constrained_layout=True)
        axs = fig.subplots(2, sharex=True)
        fig.suptitle(
            f"Error metrics between output0 and output1\noutput0: {runner0_name:35} | {out0_name}\n"
            f"output1: {runner1_name:35} | {out1_name}",
            fontsize=7,
        )
        axs[0].scatter(magnitude, absdiff, s=1)
        axs[0].set(ylabel="Absolute error")
        axs[1].scatter(magnitude, reldiff, s=1)
        suffix = ""
        if min_reldiff != max_reldiff and max_reldiff > 0 and math.isfinite(max_reldiff):
            axs[1].set_yscale("log")
            suffix = " (log scale)"
        axs[1].set(xlabel="output1 magnitude", ylabel=f"Relative error{suffix}")
        for ax in axs:
            ax.tick_params(axis="x", labelrotation=90)
            ax.tick_params(axis="both", labelsize=6)
            ax.grid(linestyle="--")
        path = None
        if save_dir is not None:
            path = os.path.join(save_dir, sanitize_filename(f"error_metrics_{out0_name}.png"))
            G_LOGGER.info(f"Saving error metrics plot to: '{path}'")
        _finish(fig, path, bool(show), dpi=300, bbox_inches="tight")
