"""Polygraphy-compatible import path `poly.backend.trt.file_reader`: re-exports the `poly.trt` modules that hold
what Polygraphy keeps there (file_reader)."""

from poly.trt.engines import file_reader
from poly.trt.engines.file_reader import *  # noqa: F401,F403

__all__ = [*file_reader.__all__]
