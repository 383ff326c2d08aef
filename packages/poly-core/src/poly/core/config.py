"""
Process-wide settings, read once from the environment at import and changeable at run time
(``poly.core.config.ARRAY_SWAP_THRESHOLD_MB = 8``). Polygraphy's path ``poly.config`` is this
same module, so code written for ``polygraphy.config`` changes poly's behaviour.

Each setting reads ``POLY_<NAME>`` first, then Polygraphy's ``POLYGRAPHY_<NAME>``.
"""

import os
import sys
from typing import Any

__all__ = [
    "INTERNAL_CORRECTNESS_CHECKS",
    "AUTOINSTALL_DEPS",
    "ASK_BEFORE_INSTALL",
    "INSTALL_CMD",
    "ARRAY_SWAP_THRESHOLD_MB",
    "USE_TENSORRT_RTX",
    "env_setting",
]


def env_setting(name: Any, default: Any) -> Any:
    """The value of ``POLY_<name>``, else ``POLYGRAPHY_<name>``, else ``default`` (a string)."""
    for prefix in ("POLY_", "POLYGRAPHY_"):
        value = os.environ.get(prefix + name)
        if value is not None:
            return value
    return default


def _flag(name: Any) -> bool:
    return env_setting(name, "0") not in ("", "0")


def _int(name: Any, default: Any) -> Any:
    value = env_setting(name, str(default))
    try:
        return int(value)
    except ValueError:
        print(f"poly: ignoring {name}={value!r}: not an integer", file=sys.stderr)
        return default


INTERNAL_CORRECTNESS_CHECKS = _flag("INTERNAL_CORRECTNESS_CHECKS")
"""bool: Check internal invariants, such as ``constantmethod``s leaving their object unchanged."""

AUTOINSTALL_DEPS = _flag("AUTOINSTALL_DEPS")
"""bool: Accepted for Polygraphy compatibility; poly never installs packages itself (a missing
module is reported with the ``pip install`` that brings it)."""

ASK_BEFORE_INSTALL = _flag("ASK_BEFORE_INSTALL")
"""bool: Accepted for Polygraphy compatibility (see ``AUTOINSTALL_DEPS``)."""

INSTALL_CMD = env_setting("INSTALL_CMD", f"{sys.executable} -m pip install").split()
"""List[str]: Accepted for Polygraphy compatibility (see ``AUTOINSTALL_DEPS``)."""

ARRAY_SWAP_THRESHOLD_MB = _int("ARRAY_SWAP_THRESHOLD_MB", -1)
"""int: Result arrays larger than this many MiB are kept in a temporary file until used;
negative disables swapping, 0 swaps every array."""

USE_TENSORRT_RTX = _flag("USE_TENSORRT_RTX")
"""bool: Prefer TensorRT-RTX over full TensorRT (also ``POLY_USE_TENSORRT_RTX``)."""
