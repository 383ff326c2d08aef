"""Polygraphy-compatible import path `poly.util.util`: Polygraphy's general helpers, from the
`poly.core` modules that hold them (files and paths, temporary files, shapes, sequences,
per-name options, attributes, text, callables)."""

from poly.core.files import lock_file, paths, read_write, tempfiles
from poly.core.files.lock_file import *  # noqa: F401,F403
from poly.core.files.paths import *  # noqa: F401,F403
from poly.core.files.read_write import *  # noqa: F401,F403
from poly.core.files.tempfiles import *  # noqa: F401,F403
from poly.core.func import call_if_callable, check_called_by  # noqa: F401
from poly.core.tensors import fit_shape, per_output, shape
from poly.core.tensors.fit_shape import *  # noqa: F401,F403
from poly.core.tensors.per_output import *  # noqa: F401,F403
from poly.core.tensors.shape import *  # noqa: F401,F403
from poly.core.util import attributes, scalars, sequences, text
from poly.core.util.attributes import *  # noqa: F401,F403
from poly.core.util.scalars import *  # noqa: F401,F403
from poly.core.util.sequences import *  # noqa: F401,F403
from poly.core.util.text import *  # noqa: F401,F403

#: Polygraphy's `util.invoke_if_callable` returns the value and whether it was called.
invoke_if_callable = call_if_callable

__all__ = [*read_write.__all__, *tempfiles.__all__, *shape.__all__, *sequences.__all__, *attributes.__all__,
           *lock_file.__all__, *paths.__all__, *per_output.__all__, *scalars.__all__, *fit_shape.__all__,
           *text.__all__, "check_called_by", "invoke_if_callable"]
