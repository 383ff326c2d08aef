"""The comparison group: the inference results (--save-outputs, and saved --load-outputs to
compare with), how they are compared (--compare and the thresholds of each comparison function,
--check-average, and the simple comparison's flags: --atol, --rtol, --check-error-stat,
--fail-fast, heatmaps and plots...) and --validate (checking them for NaNs and Infs).

The simple comparison's flags are not written here: each is derived from its declaration in
``poly.compare.SimpleCompareOptions`` (spelling, help, per-output parsing), and parsed into one
such object, which ``create_compare_func``, ``--gen-script`` and `poly validate` all use; only
their order in the help is the CLI's own (``_VERDICT_FLAGS``, ``_OTHER_FLAGS``).

What `poly run` does with the results is one list of statements (``check_statements``): the
command evaluates it and ``--gen-script`` prints it, so the two cannot drift apart."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import click

from poly.cli.gen_script.call_tree import Assign, BinOp, Builtin, Do, For, If, Ref, Var, run_statements
from poly.cli.multi_option import multi_option, stack_options
from poly.cli.value_parsing import number_within, parse_per_output
from poly.compare import SimpleCompareOptions

COMPARE_FUNCS = ["simple", "indices", "l2", "cosine_similarity", "distance_metrics", "psnr", "snr",
                 "quality_metrics", "perceptual_metrics"]

_THRESHOLDS = ("index_tolerance", "l2_threshold", "cosine_similarity_threshold", "psnr_threshold", "snr_threshold",
               "lpips_threshold")
"""The thresholds of the other comparison functions: numbers, optionally per output."""

_VERDICT_FLAGS = ("atol", "rtol", "check_error_stat", "error_quantile", "infinities_compare_equal", "check_shapes")
"""The options that decide a verdict, in the order `poly run --help` and `poly validate --help` list
their flags (Polygraphy's argument order, the declarations' order, is not the help's)."""

_FAIL_FAST_FLAG = ("fail_fast",)
_PLOT_FLAGS = ("save_heatmaps", "save_error_metrics_plot", "show_heatmaps", "show_error_metrics_plot")
"""The other options with a flag, in help order: --fail-fast (listed before --check-average), then the plots'."""

COMPARE_FUNC_SCRIPT_FUNC = "compare_outputs"
"""The function a --compare-func-script defines when none is named."""

_NO_DISPLAY_NOTE = "; with no display, they are saved to files and the log says where"
"""What a --show-* flag adds to its option's help (``resolve_display``)."""


def _param_name(flag: str) -> str:
    """The click parameter a flag fills (`--no-shape-check` -> no_shape_check)."""
    return flag.lstrip("-").replace("-", "_")


def _simple_flag(declared: Any) -> Any:
    """The click option of one option of the simple comparison, from its declaration."""
    if declared.per_output:
        example = f": `{declared.flag} {declared.example}`" if declared.example else ""
        return multi_option(declared.flag, help=f"{declared.help}, optionally per output{example}.")
    if declared.type is bool:
        note = _NO_DISPLAY_NOTE if declared.shown_else_saved_to else ""
        return click.option(declared.flag, is_flag=True, help=declared.flag_help or f"{declared.help}{note}.")
    path = click.Path(file_okay=False) if declared.directory else None
    return click.option(declared.flag, type=path, help=f"{declared.help}.")


def _simple_flags(names: tuple[str, ...]) -> list:
    """The flags of the simple comparison's options ``names``, in that order."""
    return [_simple_flag(SimpleCompareOptions.declaration(name)) for name in names]


def _choice(declared: Any) -> Any:
    def convert(arg: str, text: str) -> str:
        if text not in declared.choices:
            raise click.BadParameter(f"{arg!r}: choose from {', '.join(declared.choices)}",
                                     param_hint=f"'{declared.flag}'")
        return text

    return convert


_RANGES = {"atol": number_within(0.0), "rtol": number_within(0.0), "error_quantile": number_within(0.0, 1.0)}
"""The numbers the simple comparison's options take: tolerances are not negative, a quantile is a
fraction (a value outside is a usage error naming its flag, not a comparison that cannot pass)."""


def _parse_simple_options(kwargs: Mapping) -> SimpleCompareOptions:
    """The simple comparison's flags as ``SimpleCompareOptions``: None for a flag not given (or
    that the command does not have), a bad value a usage error naming its flag."""
    values = {}
    for declared in SimpleCompareOptions.declarations():
        if declared.flag is None:
            continue
        given = kwargs.get(_param_name(declared.flag))
        if declared.per_output:
            within = _RANGES.get(declared.name)
            convert = _choice(declared) if declared.choices else (within(declared.flag) if within else None)
            values[declared.name] = parse_per_output(declared.flag, given, convert)
        elif declared.type is bool:
            # a flag given sets the option against its default (--no-shape-check: check_shapes=False)
            values[declared.name] = (not declared.default) if given else None
        else:
            values[declared.name] = given
    return SimpleCompareOptions(**values)


def _script(spec: str | None) -> str | None:
    """--compare-func-script checked: its FILE must exist (a usage error naming the flag otherwise)."""
    if spec is None:
        return None
    from poly.compare import parse_script_and_func_name

    path, _ = parse_script_and_func_name(spec)
    if not os.path.isfile(path):
        raise click.BadParameter(f"no such file: {path!r}", param_hint="'--compare-func-script'")
    return spec


@dataclass(frozen=True)
class ComparisonArgs:
    """How inference results are saved, loaded, checked and compared. Per-output values are a
    plain value, or a dict of output name ("" for the default) -> value."""

    save_outputs: str | None = None
    load_outputs: tuple[str, ...] = ()
    simple: SimpleCompareOptions = dataclasses.field(default_factory=SimpleCompareOptions)
    """The simple comparison's flags (also --fail-fast and --no-shape-check for every function), None where not given."""
    compare_funcs: tuple[str, ...] = ()
    """--compare: names from COMPARE_FUNCS; (): simple."""
    index_tolerance: int | dict | None = None
    l2_threshold: float | dict | None = None
    cosine_similarity_threshold: float | dict | None = None
    psnr_threshold: float | dict | None = None
    snr_threshold: float | dict | None = None
    lpips_threshold: float | dict | None = None
    check_average: bool = False
    compare_func_script: str | None = None
    """--compare-func-script as FILE[:FUNC]; None: the --compare functions."""
    validate: bool = False

    @property
    def fail_fast(self) -> bool:
        """--fail-fast: stop comparing after the first failure."""
        return bool(self.simple.fail_fast)

    @property
    def check_shapes(self) -> bool:
        """Whether output shapes must match (no --no-shape-check)."""
        return self.simple.check_shapes is not False

    @classmethod
    def options(cls) -> Any:
        """Every flag of the group, as `poly run` has them."""
        return stack_options([
            click.option("--save-outputs", "--save-results", "save_outputs", type=click.Path(),
                         help="Path to save the inference results (JSON, .npz, or a directory)."),
            multi_option("--load-outputs", "--load-results", "load_outputs", type=click.Path(exists=True),
                         help="Saved results to compare against (e.g. from --save-outputs)."),
            *_simple_flags(_VERDICT_FLAGS),
            multi_option("--compare", "--compare-func", "compare_func", type=click.Choice(COMPARE_FUNCS),
                         help="Comparison function(s): simple (default), indices, l2, cosine_similarity, "
                         "distance_metrics, psnr, snr, quality_metrics, perceptual_metrics."),
            multi_option("--index-tolerance", help="Index tolerance for `--compare indices`, optionally per output."),
            multi_option("--l2-threshold", "--l2-tolerance", "l2_threshold", help="L2 norm threshold."),
            multi_option("--cosine-similarity-threshold", help="Cosine similarity threshold."),
            multi_option("--psnr-threshold", "--psnr-tolerance", "psnr_threshold", help="PSNR threshold (dB)."),
            multi_option("--snr-threshold", "--snr-tolerance", "snr_threshold", help="SNR threshold (dB)."),
            multi_option("--lpips-threshold", help="LPIPS threshold (needs torch and lpips)."),
            *_simple_flags(_FAIL_FAST_FLAG),
            click.option("--check-average", is_flag=True,
                         help="Check each metric averaged over all iterations instead of per iteration."),
            *_simple_flags(_PLOT_FLAGS),
            click.option("--compare-func-script", metavar="FILE[:FUNC]",
                         help="Python script defining the comparison function `(IterationResult, IterationResult) "
                         "-> dict of output name -> bool` (function `compare_outputs` by default); it replaces "
                         "--compare and its thresholds."),
            click.option("--validate", is_flag=True, help="Check outputs for NaNs and Infs."),
        ], section="Comparator Comparisons")

    @classmethod
    def tolerance_options(cls) -> Any:
        """Only the flags of the options that decide a verdict: --atol, --rtol, --check-error-stat,
        --error-quantile, --infinities-compare-equal, --no-shape-check (for `poly validate`)."""
        return stack_options(_simple_flags(_VERDICT_FLAGS), section="Comparator Comparisons")

    @classmethod
    def from_kwargs(cls, kwargs: Mapping) -> ComparisonArgs:
        """Parses the simple comparison's flags, then the thresholds; a bad value is a usage error
        naming the flag. Flags the command does not have keep their defaults."""
        simple = _parse_simple_options(kwargs)
        thresholds = {name: parse_per_output("--" + name.replace("_", "-"), kwargs.get(name)) for name in _THRESHOLDS}
        return cls(
            save_outputs=kwargs.get("save_outputs"),
            load_outputs=tuple(kwargs.get("load_outputs") or ()),
            simple=simple,
            compare_funcs=tuple(kwargs.get("compare_func") or ()),
            check_average=bool(kwargs.get("check_average")),
            compare_func_script=_script(kwargs.get("compare_func_script")),
            validate=bool(kwargs.get("validate")),
            **thresholds,
        )

    @staticmethod
    def reads_results(kwargs: Mapping) -> bool:
        """Whether --load-outputs or --validate is given: then `poly run` needs a MODEL even
        without a runner, as it does with one."""
        return bool(kwargs.get("load_outputs") or kwargs.get("validate"))

    def tolerances(self) -> dict:
        """The options that decide a verdict as keyword arguments (atol, rtol, check_error_stat,
        error_quantile as given, None where not; infinities_compare_equal, check_shapes as booleans)."""
        given, defaulted = self.simple.verdict_options(), self.simple.with_defaults()
        return {d.name: getattr(defaulted if d.type is bool else given, d.name)
                for d in SimpleCompareOptions.declarations() if d.decides_verdict}

    # ---- what is done with the results: statements `poly run` evaluates and its script prints ----

    def load_statements(self) -> list:
        """The statement that extends the variable ``results`` (``poly.compare.RunResults``) with
        the --load-outputs files; none without them."""
        if not self.load_outputs:
            return []
        load = Ref("poly.compare", "RunResults.load")(Var("path"))  # RunResults.load logs each file it loads
        return [For("path", list(self.load_outputs), [Do(Var("results").attr("extend")(load))])]

    def verdict_statements(self) -> list:
        """The statements that check ``results`` and fold their verdict into ``success`` (set
        before them): --validate (NaNs, Infs), then, with two or more result sets, the accuracy
        comparison of every one with the first (``compare_func_statements``)."""
        statements: list[Any] = []
        named = self._per_output_names()
        if named:  # a misspelt output name is a usage error, not a warning before a default tolerance
            statements.append(Do(Ref("poly.compare.verdicts", "require_output_names")(Var("results"), named)))
        if self.validate:
            validate = Ref("poly.compare", "Comparator.validate")(Var("results"), check_inf=True, check_nan=True)
            statements.append(_and_success(validate))
        accuracy = Ref("poly.compare", "Comparator.compare_accuracy")(
            Var("results"), fail_fast=self.fail_fast, compare_func=Var("compare_func"),
            check_average=self.check_average)
        statements.append(If(BinOp(Builtin("len")(Var("results")), ">", 1), [  # type: ignore[arg-type]
            *self.compare_func_statements(), Assign("accuracy", accuracy), _and_success(Var("accuracy"))]))
        return statements

    def _per_output_names(self) -> dict[str, list[str]]:
        """Each flag given per output (the simple comparison's and the thresholds'), to the output
        names its values name (the default "" left out)."""
        named = {}
        given = self.simple.given()
        per_output = [(d.flag, given.get(d.name)) for d in SimpleCompareOptions.declarations() if d.per_output and d.flag]
        per_output += [(f"--{name.replace('_', '-')}", getattr(self, name)) for name in _THRESHOLDS]
        for flag, value in per_output:
            if isinstance(value, Mapping) and any(key != "" for key in value):
                named[flag] = [key for key in value if key != ""]
        return named

    def check_statements(self, after_loading: Any = ()) -> list:
        """Every statement that reads ``results`` and sets ``success``: ``success = True``, the
        --load-outputs extend (``load_statements``), ``after_loading`` (statements run on all the
        results, such as post-processing), then ``verdict_statements``."""
        return [Assign("success", True), *self.load_statements(), *after_loading, *self.verdict_statements()]

    def compare_func_statements(self) -> list:
        """The statements that set ``compare_func``: the --compare-func-script function, or one
        ``CompareFunc`` per --compare name (a list of them for several) with its thresholds.
        ``CompareFunc.simple`` takes the simple comparison's options given; a --show-* option is
        resolved first, when the statements run (``poly.compare.resolve_display``: with no
        display, the plots are saved to files and the log says where)."""
        if self.compare_func_script is not None:
            from poly.compare import parse_script_and_func_name

            path, func = parse_script_and_func_name(self.compare_func_script, COMPARE_FUNC_SCRIPT_FUNC)
            return [Assign("compare_func", Ref("poly.backend.common", "InvokeFromScript")(path, func))]
        statements, simple = self._simple_arguments()
        shapes, fail_fast = self.simple.check_shapes, self.simple.fail_fast
        thresholds = {"l2": ("l2_threshold", self.l2_threshold),
                      "cosine_similarity": ("cosine_similarity_threshold", self.cosine_similarity_threshold),
                      "psnr": ("psnr_threshold", self.psnr_threshold), "snr": ("snr_threshold", self.snr_threshold),
                      "perceptual_metrics": ("lpips_threshold", self.lpips_threshold)}
        funcs = []
        for name in self.compare_funcs or ("simple",):
            func = Ref("poly.compare", f"CompareFunc.{name}")  # type: ignore[assignment]
            if name == "simple":
                funcs.append(func(**simple))  # type: ignore[misc, operator]
            elif name == "indices":
                funcs.append(func(index_tolerance=self.index_tolerance, fail_fast=fail_fast))  # type: ignore[misc, operator]
            elif name == "distance_metrics":
                funcs.append(func(l2_tolerance=self.l2_threshold,  # type: ignore[misc, operator]
                                  cosine_similarity_threshold=self.cosine_similarity_threshold,
                                  check_shapes=shapes, fail_fast=fail_fast))
            elif name == "quality_metrics":
                funcs.append(func(psnr_tolerance=self.psnr_threshold, snr_tolerance=self.snr_threshold,  # type: ignore[misc, operator]
                                  check_shapes=shapes, fail_fast=fail_fast))
            else:  # l2, cosine_similarity, psnr, snr, perceptual_metrics: one threshold each
                keyword, threshold = thresholds[name]
                funcs.append(func(check_shapes=shapes, fail_fast=fail_fast, **{keyword: threshold}))  # type: ignore[misc, operator]
        return [*statements, Assign("compare_func", funcs[0] if len(funcs) == 1 else funcs)]

    def _simple_arguments(self) -> tuple[list, dict]:
        """(statements resolving the --show-* options given, the keyword arguments of
        ``CompareFunc.simple``: the options given, in their declared order)."""
        arguments, statements = self.simple.given(), []
        for declared in SimpleCompareOptions.declarations():
            save_key = declared.shown_else_saved_to
            if save_key is None or not arguments.get(declared.name):
                continue
            resolve = Ref("poly.compare", "resolve_display")(declared.flag, True, arguments.get(save_key))
            statements.append(Assign((declared.name, save_key), resolve))
            arguments.update({save_key: Var(save_key), declared.name: Var(declared.name)})
        # in declared order again: the save option may not have been given before its show option
        return statements, {d.name: arguments[d.name] for d in SimpleCompareOptions.declarations()
                            if d.name in arguments}

    def create_compare_func(self) -> Any:
        """The comparison function of --compare (a list of them when several are given), as
        ``compare_func_statements`` make it."""
        return run_statements(self.compare_func_statements())["compare_func"]

    def add_loaded_outputs(self, run_results: Any) -> None:
        """Extends ``run_results`` (poly.compare.RunResults) with the --load-outputs files
        (``load_statements`` run)."""
        run_statements(self.load_statements(), {"results": run_results})

    def check_results(self, run_results: Any) -> bool:
        """--validate (NaNs, Infs) and, with two or more result sets, the accuracy comparison of
        every one with the first (``verdict_statements`` run); whether all passed."""
        env = run_statements([Assign("success", True), *self.verdict_statements()], {"results": run_results})
        return bool(env["success"])


def _and_success(value: Any) -> Assign:
    """``success = bool(value) and success``."""
    return Assign("success", BinOp(Builtin("bool")(value), "and", Var("success")))
