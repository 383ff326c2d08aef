"""
The simple comparison in one place: its options, each declared once (``SimpleCompareOptions``:
name, type, default, whether it may be given per output, help text), and the pure function that
turns the statistics of one output pair into its verdict (``simple_verdict``).

``CompareFunc.simple`` and ``SimpleCompareFunc`` take their arguments from these declarations
(Polygraphy's signature, ``SimpleCompareOptions.signature``); `poly run`'s comparison flags,
``--gen-script`` and `poly validate` build the same object, so none of them can disagree.

The rule, as Polygraphy's: ``elemwise`` passes when no element fails both tolerances
(``absdiff > atol`` and ``reldiff > rtol``, NaN failing); ``max``, ``mean``, ``median`` and
``quantile`` pass unless that statistic of the absolute difference exceeds ``atol`` and the same
statistic of the relative difference exceeds ``rtol`` (``SimpleThreshold``).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from poly.compare.verdicts.error_stat_names import SCALAR_ERROR_STATS
from poly.core.tensors.per_output import value_or_from_dict

if TYPE_CHECKING:  # imported where used: the options are read without NumPy (`poly run --help`)
    from poly.compare.stats.native import DiffStats, ErrorStats
    from poly.compare.verdicts.output_results import OutputCompareResult
    from poly.compare.verdicts.thresholds import SimpleThreshold

__all__ = [
    "SimpleCompareOptions",
    "OptionDeclaration",
    "DEFAULT_ATOL",
    "DEFAULT_RTOL",
    "DEFAULT_CHECK_ERROR_STAT",
    "DEFAULT_ERROR_QUANTILE",
    "SimpleOptions",
    "simple_verdict",
    "require_output_names",
]


@dataclass(frozen=True)
class OptionDeclaration:
    """
    How one option of the simple comparison is declared. What the CLI needs beyond the meaning
    (flag spelling, an example) is declared here too, so that the flag is derived, never rewritten.
    """

    name: str
    """The keyword argument (``CompareFunc.simple(atol=...)``)."""
    type: type
    """The type of one value: ``float``, ``bool``, ``str`` (a choice or a directory) or a callable."""
    default: Any
    """The value None stands for."""
    help: str
    """What the option does, one sentence without its final period."""
    per_output: bool = False
    """Whether a dict of output name -> value (``""``: names not listed) may be given."""
    choices: tuple[str, ...] = ()
    """The values a ``str`` option accepts, in the order the CLI lists them."""
    directory: bool = False
    """Whether the value names a directory (heatmaps and plots are saved there)."""
    flag: str | None = None
    """The CLI flag; None: no flag (``find_output_func``)."""
    example: str | None = None
    """Values of a per-output flag shown in its help (`--atol 1e-5 out0:1e-3`)."""
    flag_help: str | None = None
    """The help of a flag that turns the default off (`--no-shape-check`), where it is not ``help``."""
    shown_else_saved_to: str | None = None
    """For a ``show_*`` option: the option naming the directory the plots go to where nothing can be shown."""
    dict_label: str | None = None
    """How Polygraphy's warning about unknown names in this option's dict calls it."""
    decides_verdict: bool = False
    """Whether the option changes an output's verdict (`poly validate` takes exactly these)."""
    last_in_signature: bool = False
    """Polygraphy appended this argument to ``CompareFunc.simple`` after all the others."""


def _option(type_: type, default: Any, help_text: str, **declared: Any) -> Any:
    # the dataclass default is None ("not given"), as in Polygraphy's signature: a copy of the
    # options keeps what was given apart from what was defaulted (--gen-script writes only the former)
    return dataclasses.field(default=None, metadata={"declaration": (type_, default, help_text, declared)})


@dataclass(frozen=True)
class SimpleCompareOptions:
    """
    The options of the simple comparison (``CompareFunc.simple``), each None where not given.

    Per-output options (``atol``, ``rtol``, ``check_error_stat``, ``error_quantile``) take one
    value or a dict of output name -> value, with ``""`` as the default for names not listed.
    Relative differences are fractions of the second output's values. ``for_output`` resolves
    the options of one output, the defaults filled in.
    """

    check_shapes: bool | None = _option(
        bool, True, "Require identical output shapes; when False, the second output is transposed or reshaped "
        "to the first one's shape where possible", flag="--no-shape-check",
        flag_help="Disable checking that output shapes match exactly.", decides_verdict=True)
    rtol: float | Mapping[str, float] | None = _option(
        float, 1e-5, "Relative tolerance", per_output=True, flag="--rtol", example="1e-5 out0:1e-3",
        dict_label="rtol", decides_verdict=True)
    atol: float | Mapping[str, float] | None = _option(
        float, 1e-5, "Absolute tolerance", per_output=True, flag="--atol", example="1e-5 out0:1e-3",
        dict_label="atol", decides_verdict=True)
    fail_fast: bool | None = _option(bool, False, "Stop comparing after the first failure", flag="--fail-fast")
    find_output_func: Callable | None = _option(  # type: ignore[type-arg]
        Callable, None, "Given an output name and index of the first result and the second result, the names of "  # type: ignore[arg-type]
        "the second result's outputs to compare with ([] or None skips the output); by default, name matching "
        "with a fallback to position")
    check_error_stat: str | Mapping[str, str] | None = _option(
        str, "elemwise", "Error statistic to check ({choices})", per_output=True,
        choices=("elemwise", *SCALAR_ERROR_STATS), flag="--check-error-stat", example="max out0:mean",
        dict_label="check_error_stat", decides_verdict=True)
    error_quantile: float | Mapping[str, float] | None = _option(
        float, 0.99, "Error quantile to compare (0 to 1)", per_output=True, flag="--error-quantile",
        dict_label="quantile", decides_verdict=True, last_in_signature=True)
    infinities_compare_equal: bool | None = _option(
        bool, False, "Matching +-inf values in outputs have an absolute difference of 0",
        flag="--infinities-compare-equal", decides_verdict=True)
    save_heatmaps: str | None = _option(
        str, None, "Directory in which to save heatmaps of the absolute and relative error", directory=True,
        flag="--save-heatmaps")
    show_heatmaps: bool | None = _option(
        bool, False, "Show heatmaps of the absolute and relative error (needs matplotlib)",
        flag="--show-heatmaps", shown_else_saved_to="save_heatmaps")
    save_error_metrics_plot: str | None = _option(
        str, None, "Directory in which to save error metrics plots", directory=True,
        flag="--save-error-metrics-plot")
    show_error_metrics_plot: bool | None = _option(
        bool, False, "Show plots of the error against the reference output's magnitude (needs matplotlib)",
        flag="--show-error-metrics-plot", shown_else_saved_to="save_error_metrics_plot")

    @classmethod
    def declarations(cls) -> Iterator[OptionDeclaration]:
        """Every option's declaration, in the order of the fields."""
        return iter(_DECLARATIONS)

    @classmethod
    def declaration(cls, name: str) -> OptionDeclaration:
        """The declaration of option ``name``."""
        return _BY_NAME[name]

    @classmethod
    def signature(cls, first: tuple[str, ...] = ()) -> inspect.Signature:
        """
        Polygraphy's signature of ``CompareFunc.simple`` (every argument None by default), after
        the parameters named in ``first`` (``("self",)`` for a method).
        """
        return _signature(tuple(first))

    @classmethod
    def from_arguments(cls, *args: Any, **kwargs: Any) -> SimpleCompareOptions:
        """The options from the arguments of ``CompareFunc.simple`` (positional in Polygraphy's
        order, or by keyword); a TypeError for an argument it does not take."""
        if not args and kwargs.keys() <= _BY_NAME.keys():  # by keyword alone: nothing to bind (the common call)
            return cls(**kwargs)
        return cls(**cls.signature().bind(*args, **kwargs).arguments)

    def given(self) -> dict[str, Any]:
        """The options that were given (not None), by name, in the order of the fields."""
        return {d.name: getattr(self, d.name) for d in _DECLARATIONS if getattr(self, d.name) is not None}

    def with_defaults(self) -> SimpleCompareOptions:
        """A copy with every option not given set to its default (per-output dicts kept)."""
        return type(self)(**{d.name: d.default if getattr(self, d.name) is None else getattr(self, d.name)
                             for d in _DECLARATIONS})

    def for_output(self, output_name: str) -> SimpleCompareOptions:
        """
        The options output ``output_name`` is checked with: per-output dicts resolved (its own
        name, then ``""``, then the default) and the defaults filled in.
        """
        uniform: SimpleCompareOptions | None = self.__dict__.get("_uniform")  # (kept beside the fields: options with no dict resolve alike for every name)
        if uniform is not None:
            return uniform
        values = {}
        for d in _DECLARATIONS:
            value = getattr(self, d.name)
            value = d.default if value is None else value
            values[d.name] = value_or_from_dict(value, output_name, d.default) if d.per_output else value
        resolved = type(self)(**values)
        if not any(isinstance(getattr(self, d.name), Mapping) for d in _DECLARATIONS if d.per_output):
            object.__setattr__(self, "_uniform", resolved)  # frozen: its values cannot change after this
        return resolved

    def verdict_options(self) -> SimpleCompareOptions:
        """Only the options that decide a verdict (the others not given): what `poly validate` takes."""
        return type(self)(**{d.name: getattr(self, d.name) for d in _DECLARATIONS if d.decides_verdict})

    @property
    def threshold(self) -> SimpleThreshold:
        """The ``SimpleThreshold`` resolved options check against."""
        from poly.compare.verdicts.thresholds import SimpleThreshold

        return SimpleThreshold(self.check_error_stat, self.atol, self.rtol)

    def needs_median(self) -> bool:
        """Whether the verdict of resolved options needs the median (the only statistic that costs a
        selection pass beyond the requested quantiles)."""
        return self.check_error_stat == "median"

    def needed_quantiles(self) -> list[float]:
        """The quantiles the verdict of resolved options needs."""
        return [self.error_quantile] if self.check_error_stat == "quantile" else []  # type: ignore[list-item]


def _declare() -> tuple[OptionDeclaration, ...]:
    declared = []
    for f in dataclasses.fields(SimpleCompareOptions):
        type_, default, help_text, extra = f.metadata["declaration"]
        choices = extra.get("choices", ())
        declared.append(OptionDeclaration(f.name, type_, default, help_text.format(choices=", ".join(choices)),
                                          **extra))
    return tuple(declared)


_DECLARATIONS = _declare()
_BY_NAME = {d.name: d for d in _DECLARATIONS}


@functools.cache
def _signature(first: tuple[str, ...]) -> inspect.Signature:
    # built once per ``first``: a Signature is immutable, and building one costs more than a
    # comparison of a small output (``CompareFunc.simple()`` is often made per comparison)
    params = [inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD) for name in first]
    ordered = sorted(_DECLARATIONS, key=lambda d: d.last_in_signature)  # stable: field order otherwise
    params += [inspect.Parameter(d.name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None) for d in ordered]
    return inspect.Signature(params)


def _describe_options() -> str:
    lines = ["", "    Options:"]
    for d in _DECLARATIONS:
        per_output = ", or a dict by output name" if d.per_output else ""
        default = "" if d.default is None else f" Defaults to {d.default!r}."
        lines.append(f"        {d.name} ({getattr(d.type, '__name__', 'callable')}{per_output}): {d.help}.{default}")
    return "\n".join(lines) + "\n"


SimpleCompareOptions.__doc__ += _describe_options()  # type: ignore[operator]

DEFAULT_ATOL = SimpleCompareOptions.declaration("atol").default
DEFAULT_RTOL = SimpleCompareOptions.declaration("rtol").default
DEFAULT_CHECK_ERROR_STAT = SimpleCompareOptions.declaration("check_error_stat").default
DEFAULT_ERROR_QUANTILE = SimpleCompareOptions.declaration("error_quantile").default

SimpleOptions = SimpleCompareOptions
"""The name the per-output options had before they merged into ``SimpleCompareOptions``."""


def simple_verdict(stats: ErrorStats, absdiff: DiffStats, reldiff: DiffStats, options: SimpleCompareOptions
                   ) -> OutputCompareResult:
    """
    The simple comparison's result for one output pair.

    Args:
        stats (ErrorStats): The native statistics of the pair (its ``mismatches`` decide
                ``elemwise``).
        absdiff, reldiff (DiffStats): The absolute and relative difference statistics with
                Polygraphy's semantics, at Polygraphy's precision next to the tolerance
                (``poly.compare.stats.polygraphy_precision.polygraphy_error_stats``).
        options (SimpleCompareOptions): The output's options (``for_output``; a valid
                ``check_error_stat``).

    Returns:
        OutputCompareResult: Truthy when the output passed; its ``checked_values()`` are the figures
        the verdict looked at.
    """
    from poly.compare.verdicts.output_results import OutputCompareResult

    stat = options.check_error_stat
    quantile = options.error_quantile
    q_abs = absdiff.quantiles.get(quantile) if stat == "quantile" else None  # type: ignore[arg-type]
    q_rel = reldiff.quantiles.get(quantile) if stat == "quantile" else None  # type: ignore[arg-type]
    return OutputCompareResult(
        absdiff.max, reldiff.max, absdiff.mean, reldiff.mean, absdiff.median, reldiff.median, q_abs, q_rel,
        thresholds=options.threshold,
        # elementwise is decided per element, which no stored statistic can reproduce
        passed=(stats.mismatches == 0) if stat == "elemwise" else None,
    )


def require_output_names(results: Any, named: Mapping[str, Any]) -> None:
    """
    Raises ``PolyUsageError`` when a name in ``named`` (a flag, e.g. ``--atol``, to the output
    names its per-output values give) is no output of ``results`` (a ``RunResults``): a
    misspelt output name would otherwise only warn, and the output would be compared with the
    default value. Names are matched exactly, as per-output values are looked up.
    """
    from poly.core import PolyUsageError

    outputs: dict[str, None] = {}
    for _, iterations in results:
        for iteration in iterations:
            outputs.update(dict.fromkeys(iteration.keys()))
    for flag, names in named.items():
        unmatched = [name for name in names if name != "" and name not in outputs]
        if unmatched:
            raise PolyUsageError(f"{flag} {unmatched[0]}:...: no output is named '{unmatched[0]}' (the outputs "
                                 f"compared are {', '.join(outputs) or 'none'})")

