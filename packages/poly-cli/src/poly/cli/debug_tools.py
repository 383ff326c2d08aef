"""
Polygraphy's debug tool classes (``polygraphy.tools.debug``): ``Debug`` (the ``debug`` tool,
whose subtools are the others) and ``Build``, ``Precision``, ``Reduce``, ``Repeat``, each a
``ClickTool`` over the ``poly debug`` subcommand of the same name: same options, same behaviour.
"""

from typing import Any

from poly.cli.argparse_tools import ClickTool, Tool

__all__ = ["Build", "Precision", "Reduce", "Repeat", "Debug"]


class Build(ClickTool):
    """[EXPERIMENTAL] Repeatedly build an engine to isolate faulty tactics."""

    NAME = "build"
    COMMAND = "poly.cli.commands.debug.build:build"


class Precision(ClickTool):
    """[EXPERIMENTAL] Mark layers to run in higher precision to find what accuracy needs."""

    NAME = "precision"
    COMMAND = "poly.cli.commands.debug.precision:precision"


class Reduce(ClickTool):
    """[EXPERIMENTAL] Reduce a failing ONNX model to its smallest failing part."""

    NAME = "reduce"
    COMMAND = "poly.cli.commands.debug.reduce:reduce"


class Repeat(ClickTool):
    """[EXPERIMENTAL] Run an arbitrary command repeatedly, sorting generated artifacts into good and bad."""

    NAME = "repeat"
    COMMAND = "poly.cli.commands.debug.repeat:repeat"


class Debug(Tool):
    """[EXPERIMENTAL] Debug a wide variety of model issues."""

    def __init__(self) -> None:
        super().__init__("debug")

    def get_subtools_impl(self) -> list[Any]:
        return [Build(), Precision(), Reduce(), Repeat()]
