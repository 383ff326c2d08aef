"""Polygraphy-compatible import path ``polygraphy.comparator.data_loader``, re-exported from
``poly.compare``."""

from poly.compare.data_loader import (
    ArraySampler,
    DataLoader,
    DataLoaderCache,
    check_feed_dict,
    coerce_buffer,
    coerce_feed_dict,
)
from poly.compare.saved_inputs import StreamingDataLoader

__all__ = [
    "ArraySampler", "DataLoader", "DataLoaderCache", "check_feed_dict", "coerce_buffer", "coerce_feed_dict",
    "StreamingDataLoader",
]
