"""Polygraphy-compatible import path `poly.backend.common.loader`: the byte loaders of
`poly.core.file_loaders` and the script loader of `poly.core.scripts`."""

from poly.core import file_loaders
from poly.core.file_loaders import *  # noqa: F401,F403
from poly.core.scripts import InvokeFromScript, invoke_from_script  # noqa: F401

__all__ = [*file_loaders.__all__, "InvokeFromScript", "invoke_from_script"]
