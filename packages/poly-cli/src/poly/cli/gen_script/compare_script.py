"""
The comparison function of a `poly run --gen-script` script, as ``ComparisonArgs.create_compare_func``
makes it: the --compare-func-script function, or one ``CompareFunc`` per --compare name with the
thresholds, heatmaps and error plots (--show-* resolved at run time, as the command resolves them:
with no display, the plots go to files and the log says where).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from poly.cli.gen_script.script_source import Code, ScriptSource, call, literal

if TYPE_CHECKING:
    from poly.cli.args.comparison import ComparisonArgs

COMPARE_FUNC_SCRIPT_FUNC = "compare_outputs"
"""The function a --compare-func-script defines when none is named."""


def compare_func_lines(src: ScriptSource, c: ComparisonArgs) -> tuple[list, str]:
    """(lines that set ``compare_func``, the source naming it)."""
    if c.compare_func_script is not None:
        from poly.compare import parse_script_and_func_name

        src.use("poly.core.scripts", "InvokeFromScript")
        path, func = parse_script_and_func_name(c.compare_func_script, COMPARE_FUNC_SCRIPT_FUNC)
        return [f"compare_func = InvokeFromScript({literal(path)}, {literal(func)})"], "compare_func"
    lines = []
    heatmaps, plot = _display_lines(src, c, lines)
    shapes = None if c.check_shapes else False
    fail_fast = c.fail_fast or None
    funcs = []
    for name in c.compare_funcs or ("simple",):
        if name == "simple":
            funcs.append(call("CompareFunc.simple", check_shapes=shapes, rtol=c.rtol, atol=c.atol,
                              fail_fast=fail_fast, check_error_stat=c.check_error_stat,
                              error_quantile=c.error_quantile,
                              infinities_compare_equal=c.infinities_compare_equal or None, **heatmaps, **plot))
        elif name == "indices":
            funcs.append(call("CompareFunc.indices", index_tolerance=c.index_tolerance, fail_fast=fail_fast))
        elif name == "distance_metrics":
            funcs.append(call("CompareFunc.distance_metrics", l2_tolerance=c.l2_threshold,
                              cosine_similarity_threshold=c.cosine_similarity_threshold, check_shapes=shapes,
                              fail_fast=fail_fast))
        elif name == "quality_metrics":
            funcs.append(call("CompareFunc.quality_metrics", psnr_tolerance=c.psnr_threshold,
                              snr_tolerance=c.snr_threshold, check_shapes=shapes, fail_fast=fail_fast))
        else:  # l2, cosine_similarity, psnr, snr, perceptual_metrics: one threshold each
            threshold = {"l2": c.l2_threshold, "cosine_similarity": c.cosine_similarity_threshold,
                         "psnr": c.psnr_threshold, "snr": c.snr_threshold,
                         "perceptual_metrics": c.lpips_threshold}[name]
            keyword = "lpips_threshold" if name == "perceptual_metrics" else f"{name}_threshold"
            funcs.append(call(f"CompareFunc.{name}", check_shapes=shapes, fail_fast=fail_fast,
                              **{keyword: threshold}))
    src.use("poly.compare", "CompareFunc")
    lines.append("compare_func = " + (funcs[0] if len(funcs) == 1 else "[" + ", ".join(funcs) + "]"))
    return lines, "compare_func"


def _display_lines(src: ScriptSource, c: ComparisonArgs, lines: list) -> tuple[dict, dict]:
    """The heatmap and error-plot arguments of ``CompareFunc.simple``; a --show-* flag adds a
    line that decides, when the script runs, whether to show the plots or save them."""
    result = []
    for flag, show, save, show_key, save_key in (
            ("--show-heatmaps", c.show_heatmaps, c.save_heatmaps, "show_heatmaps", "save_heatmaps"),
            ("--show-error-metrics-plot", c.show_error_metrics_plot, c.save_error_metrics_plot,
             "show_error_metrics_plot", "save_error_metrics_plot")):
        if not show:
            result.append({save_key: save})
            continue
        src.use("poly.cli.args.plot_display", "resolve_display")
        lines.append(f"{show_key}, {save_key} = resolve_display({literal(flag)}, True, {literal(save)})")
        result.append({save_key: Code(save_key), show_key: Code(show_key)})
    return result[0], result[1]
