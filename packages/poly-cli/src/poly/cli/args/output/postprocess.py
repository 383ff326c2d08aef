"""The post-processing group: --postprocess, functions applied to every output (run and loaded
with --load-outputs) before they are compared: `top-K[,axis=A]`, per output as `out:top-5`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import click

from poly.cli.gen_script.call_tree import Do, Ref, Var
from poly.cli.multi_option import multi_option, stack_options
from poly.cli.value_parsing import parse_per_output

_FLAG = "--postprocess"


def _top_k(arg: str, text: str) -> Any:
    """`top-5` -> 5; `top-5,axis=1` -> (5, 1); anything else is a usage error naming the flag."""
    def fail(why: Any) -> Any:
        raise click.BadParameter(f"{arg!r}: {why}", param_hint=f"'{_FLAG}'")

    func, _, axis_text = text.partition(",")
    if not func.startswith("top-"):
        fail(f"unknown post-processing function {func!r}; the only one is top-<K>[,axis=<AXIS>]")
    try:
        k = int(func.removeprefix("top-"))
    except ValueError:
        fail(f"K in {func!r} is not an integer")
    if k < 1:
        fail(f"K in {func!r} must be at least 1")
    if not axis_text:
        return k
    key, _, value = axis_text.partition("=")
    if key.strip() != "axis":
        fail(f"expected `,axis=<AXIS>` after top-{k}, not {axis_text!r}")
    try:
        return (k, int(value))
    except ValueError:
        fail(f"the axis {value!r} is not an integer")


@dataclass(frozen=True)
class PostprocessArgs:
    """What is done to the outputs before they are compared."""

    top_k: int | tuple | dict | None = None
    """--postprocess top-K: K, (K, axis), or a dict of output name ("" for every other output) to
    either; None: no post-processing."""

    @classmethod
    def options(cls) -> Any:
        """--postprocess / --postprocess-func."""
        return stack_options([
            multi_option("--postprocess", "--postprocess-func", "postprocess", metavar="[OUTPUT:]FUNC",
                         help="Post-process outputs before comparing them, optionally per output: "
                         "`--postprocess top-5` or `--postprocess out0:top-5 out1:top-3,axis=1`. "
                         "top-<K>[,axis=<AXIS>] keeps the indices of the K largest values along AXIS "
                         "(default: the last axis)."),
        ], section="Comparator Postprocessing")

    @classmethod
    def from_kwargs(cls, kwargs: Mapping) -> PostprocessArgs:
        """Parses --postprocess (a bad function, K or axis is a usage error naming the flag)."""
        return cls(top_k=parse_per_output(_FLAG, kwargs.get("postprocess"), _top_k))

    def statements(self) -> list:
        """The statement that post-processes the variable ``results`` (poly.compare.RunResults)
        in place; none without --postprocess."""
        if self.top_k is None:
            return []
        top_k = Ref("poly.compare", "PostprocessFunc.top_k")(self.top_k)
        return [Do(Ref("poly.compare", "Comparator.postprocess")(Var("results"), top_k))]
