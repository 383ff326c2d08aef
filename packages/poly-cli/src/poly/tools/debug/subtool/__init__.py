"""Polygraphy-compatible import path `poly.tools.debug.subtool`: the debug subtools and their
argument groups."""

from poly.tools.debug.subtool import build, iterative_debug_args, precision, reduce, repeat
from poly.tools.debug.subtool.build import *  # noqa: F401,F403
from poly.tools.debug.subtool.iterative_debug_args import *  # noqa: F401,F403
from poly.tools.debug.subtool.precision import *  # noqa: F401,F403
from poly.tools.debug.subtool.reduce import *  # noqa: F401,F403
from poly.tools.debug.subtool.repeat import *  # noqa: F401,F403

__all__ = [*build.__all__, *precision.__all__, *reduce.__all__, *repeat.__all__, *iterative_debug_args.__all__]
