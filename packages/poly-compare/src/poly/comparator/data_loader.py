"""Polygraphy-compatible import path ``polygraphy.comparator.data_loader``: the data loaders of
``poly.compare.io`` (``DataLoader``, ``DataLoaderCache``, saved and scripted inputs)."""

from poly.compare.io import *  # noqa: F403
from poly.compare.io import __all__  # noqa: F401
