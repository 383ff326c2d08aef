"""Polygraphy-compatible import path `poly.util.util`: Polygraphy's general helpers, from the
`poly.core` modules that hold them (files and paths, temporary files, shapes, sequences,
per-name options, attributes, text, callables)."""

from poly.core import (
    attributes,
    fileio,
    fit_shape,
    lock_file,
    paths,
    per_output,
    scalars,
    sequences,
    shape,
    tempfiles,
    text,
)
from poly.core.attributes import *  # noqa: F401,F403
from poly.core.fileio import *  # noqa: F401,F403
from poly.core.fit_shape import *  # noqa: F401,F403
from poly.core.func import call_if_callable, check_called_by  # noqa: F401
from poly.core.lock_file import *  # noqa: F401,F403
from poly.core.paths import *  # noqa: F401,F403
from poly.core.per_output import *  # noqa: F401,F403
from poly.core.scalars import *  # noqa: F401,F403
from poly.core.sequences import *  # noqa: F401,F403
from poly.core.shape import *  # noqa: F401,F403
from poly.core.tempfiles import *  # noqa: F401,F403
from poly.core.text import *  # noqa: F401,F403

#: Polygraphy's `util.invoke_if_callable` returns the value and whether it was called.
invoke_if_callable = call_if_callable

__all__ = [*fileio.__all__, *tempfiles.__all__, *shape.__all__, *sequences.__all__, *attributes.__all__,
           *lock_file.__all__, *paths.__all__, *per_output.__all__, *scalars.__all__, *fit_shape.__all__,
           *text.__all__, "check_called_by", "invoke_if_callable"]
