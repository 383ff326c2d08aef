"""Polygraphy-compatible import path: `polygraphy.tools.args` becomes `poly.tools.args`. Only
re-exports `poly.tools.args.base`, the flag groups of `poly.tools.args.flag_groups` and the
debug argument groups of `poly.tools.args.iterative_debug_args`; `poly.tools.args.util` is its
submodule, as in Polygraphy."""

from poly.tools.args import base, flag_groups, iterative_debug_args, util  # noqa: F401 (util: a submodule, as in Polygraphy)
from poly.tools.args.base import *  # noqa: F401,F403
from poly.tools.args.flag_groups import *  # noqa: F401,F403
from poly.tools.args.iterative_debug_args import *  # noqa: F401,F403

__all__ = [*base.__all__, *flag_groups.__all__, *iterative_debug_args.__all__]
