"""
Polygraphy-compatible import path: `polygraphy.config` becomes `poly.config`.

The settings live in `poly.core.config`. Because code written for Polygraphy assigns them
(`config.ARRAY_SWAP_THRESHOLD_MB = 8`), this path must be that same module object, not a copy
of its values: importing `poly.config` binds the name to `poly.core.config` itself.
"""

import sys

from poly.core import config

sys.modules[__name__] = config
