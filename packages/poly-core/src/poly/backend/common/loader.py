"""Polygraphy-compatible import path `poly.backend.common.loader`: the byte loaders of
`poly.core.backend.bytes_loaders` and the script loader of `poly.core.backend.scripts`."""

from poly.core.backend import bytes_loaders
from poly.core.backend.bytes_loaders import *  # noqa: F401,F403
from poly.core.backend.scripts import InvokeFromScript, invoke_from_script  # noqa: F401

__all__ = [*bytes_loaders.__all__, "InvokeFromScript", "invoke_from_script"]
