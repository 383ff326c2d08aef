"""
Timing caches: loading one into a builder config and saving a config's cache, merged into the
cache already at the destination (as builds accumulate timings). TensorRT-RTX keeps the API
but its timing-cache operations are no-ops; its deprecation warnings are silenced here.
"""

import contextlib
import os
import warnings
from collections.abc import Iterator
from typing import Any

from poly.core import G_LOGGER, atomic_write_bytes

__all__ = ["load_timing_cache", "save_timing_cache", "read_cache_bytes", "quiet_timing_cache_api"]


@contextlib.contextmanager
def quiet_timing_cache_api() -> Iterator[Any]:
    """Silences TensorRT-RTX's "timing cache operations are no-ops" deprecation warnings."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        yield


def read_cache_bytes(source: Any, what: str = "timing cache") -> Any:
    """Bytes of a cache given as a path, bytes or a readable file object (missing path: empty)."""
    if source is None:
        return b""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source)
    if hasattr(source, "read"):
        return source.read()
    path = os.fspath(source)
    if not os.path.exists(path):
        G_LOGGER.info(f"{what.capitalize()} '{path}' does not exist yet; starting from an empty one")
        return b""
    with open(path, "rb") as f:
        data = f.read()
    G_LOGGER.info(f"Loaded {what}: {path} ({len(data)} bytes)")
    return data


def load_timing_cache(config: Any, source: Any) -> Any:
    """Creates a timing cache from ``source`` (path, bytes or file) and sets it on ``config``."""
    data = read_cache_bytes(source)
    with quiet_timing_cache_api():
        cache = config.create_timing_cache(data)
        if cache is None:
            G_LOGGER.critical(f"Could not read the timing cache {source!r}: TensorRT refused its contents")
        config.set_timing_cache(cache, ignore_mismatch=False)
    return cache


def save_timing_cache(config: Any, dest: Any) -> None:
    """
    Writes ``config``'s timing cache to ``dest`` (a path or a writable file object), combined
    with the cache already there; paths are written atomically.
    """
    with quiet_timing_cache_api():
        cache = config.get_timing_cache()
        if cache is None:
            G_LOGGER.warning("The builder config has no timing cache to save")
            return
        if not hasattr(dest, "write") and os.path.exists(os.fspath(dest)):
            existing = config.create_timing_cache(read_cache_bytes(dest))
            if existing is not None and not cache.combine(existing, ignore_mismatch=False):
                G_LOGGER.warning(
                    f"Could not merge the existing timing cache in {os.fspath(dest)}; overwriting it"
                )
        data = bytes(cache.serialize())
    if hasattr(dest, "write"):
        dest.write(data)
        return
    atomic_write_bytes(os.fspath(dest), data)
    G_LOGGER.info(f"Saved timing cache: {os.fspath(dest)} ({len(data)} bytes)")
