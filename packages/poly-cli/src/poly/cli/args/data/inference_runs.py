"""The inference-runs group: --warm-up (untimed runs before the timed iterations) and
--use-subprocess (each runner in a child process of its own), passed to ``Comparator.run``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import click

from poly.cli.multi_option import stack_options


@dataclass(frozen=True)
class InferenceRunArgs:
    """How ``Comparator.run`` runs each runner."""

    warm_up: int | None = None
    use_subprocess: bool = False

    @classmethod
    def options(cls) -> Any:
        """--warm-up, --use-subprocess."""
        return stack_options([
            click.option("--warm-up", metavar="NUM", type=click.IntRange(min=0),
                         help="Number of warm-up runs of each runner before the timed iterations."),
            click.option("--use-subprocess", is_flag=True,
                         help="Run each runner in a child process of its own (not with a debugger)."),
        ], section="Comparator Inference")

    @classmethod
    def from_kwargs(cls, kwargs: Mapping) -> InferenceRunArgs:
        return cls(warm_up=kwargs.get("warm_up"), use_subprocess=bool(kwargs.get("use_subprocess")))

    def run_kwargs(self) -> dict:
        """The keyword arguments of ``Comparator.run`` these flags set."""
        return {"warm_up": self.warm_up, "use_subprocess": self.use_subprocess or None}
