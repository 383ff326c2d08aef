"""Polygraphy-compatible import path: `polygraphy.backend.trt` becomes `poly.backend.trt`.
The code lives in `poly.trt`; this module only re-exports it, and Polygraphy's submodules
(`util`, `loader`, `config`, `runner`, `profile`, `calibrator`, `file_reader`, `algorithm_selector`)."""

from poly.backend.trt import (  # noqa: F401
    algorithm_selector,
    calibrator,
    config,
    file_reader,
    loader,
    profile,
    runner,
    util,
)
from poly.trt import *  # noqa: F401,F403
from poly.trt import __all__  # noqa: F401
