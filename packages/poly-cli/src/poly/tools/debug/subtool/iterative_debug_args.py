"""Polygraphy-compatible import path `poly.tools.debug.subtool.iterative_debug_args`. The code
lives in `poly.cli.args.debug.argparse_groups`; this module only re-exports it."""

from poly.cli.args.debug.argparse_groups import *  # noqa: F401,F403
from poly.cli.args.debug.argparse_groups import __all__  # noqa: F401
