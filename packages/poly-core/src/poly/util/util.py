"""Polygraphy-compatible import path `poly.util.util`: Polygraphy's general helpers, from the
`poly.core` modules that hold them (files, temporary files, shapes, sequences, callables)."""

from poly.core import fileio, sequences, shape, tempfiles
from poly.core.fileio import *  # noqa: F401,F403
from poly.core.func import call_if_callable, check_called_by  # noqa: F401
from poly.core.sequences import *  # noqa: F401,F403
from poly.core.shape import *  # noqa: F401,F403
from poly.core.tempfiles import *  # noqa: F401,F403

#: Polygraphy's `util.invoke_if_callable` returns the value and whether it was called.
invoke_if_callable = call_if_callable

__all__ = [*fileio.__all__, *tempfiles.__all__, *shape.__all__, *sequences.__all__, "check_called_by",
           "invoke_if_callable"]
