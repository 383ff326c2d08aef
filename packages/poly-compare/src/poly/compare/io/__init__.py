"""Inputs and saved data: synthetic data loaders (``data_loader``), data-loader scripts
(``data_loader_script``), saved inputs (``saved_inputs``), the ``.npz`` codec (``npz_codec``) and
per-iteration file sequences (``iteration_files``). Reading a data file never runs code."""

from poly.compare.io import data_loader, data_loader_script, iteration_files, npz_codec, saved_inputs
from poly.compare.io.data_loader import *  # noqa: F403
from poly.compare.io.data_loader_script import *  # noqa: F403
from poly.compare.io.iteration_files import *  # noqa: F403
from poly.compare.io.npz_codec import *  # noqa: F403
from poly.compare.io.saved_inputs import *  # noqa: F403

__all__ = [*data_loader.__all__, *data_loader_script.__all__, *saved_inputs.__all__, *npz_codec.__all__, *iteration_files.__all__]
