#!/usr/bin/env python3
"""Benchmark of the float16 mixed-precision search (`poly convert --fp-to-fp16 --keep-accuracy`).

For each model it draws training and held-out inputs from one distribution (standard normal, the
light models' `random_inputs`; uniform in [-1, 1] for `sensitive`), measures the all-float16
model's error, and sets the tolerance to a fraction of it (--fraction; absolute only, rtol 0: an
output element passes when |candidate - float32| <= atol), so that all-float16 fails. Then it runs
``MixedPrecisionSearch`` and reports: candidate nodes, nodes kept in float32, the model
evaluations (per phase), the ranking's cost (localize segments and shadow runs), the wall time,
how many held-out inputs the mixed model passes, and whether the kept set is 1-minimal (each
kept node put back into float16 re-checked on every input the search checked, outside it). As
`poly convert --keep-accuracy` does with synthetic inputs, the set found is validated on batches
of new inputs (--validation-rounds); those that fail join the search's inputs.

Models: `sensitive` (tests/fixtures/fp16_models.py: a cancellation and an overflow planted) and the
onnx wheel's light models with random weights (tests/fixtures/planted_faults.py: squeezenet,
shufflenet, resnet50, inception_v1, densenet121...).

onnxconverter-common's ``auto_convert_mixed_precision`` runs side by side when it is installed
(it is not a dependency: `uv pip install onnxconverter-common` into the environment); its
float32 node count, time and held-out inputs passed are reported, or why it did not run.

    .venv/bin/python tools/bench_mixed_precision.py [--models sensitive squeezenet shufflenet]
        [--samples 4] [--held-out 8] [--fraction 0.5] [--out bench.json]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))


def load(name: str):
    from fixtures import fp16_models, planted_faults

    if name == "sensitive":
        return fp16_models.sensitive_model(), lambda count, seed: fp16_models.inputs(count, seed)
    model = planted_faults.light_model(name)
    return model, lambda count, seed: [planted_faults.random_inputs(model, seed * 1000 + i) for i in range(count)]


def run(model, feeds):
    import onnxruntime as ort

    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    return [dict(zip(names, session.run(names, feed), strict=True)) for feed in feeds]


def max_abs_error(model, reference, feeds) -> float:
    worst = 0.0
    for outputs, ref in zip(run(model, feeds), run(reference, feeds), strict=True):
        for name, value in outputs.items():
            diff = np.abs(value.astype(np.float64) - ref[name].astype(np.float64))
            worst = max(worst, float(np.nanmax(diff)) if np.isfinite(diff).all() else float("inf"))
    return worst


def failing_samples(model, reference, feeds, checker) -> int:
    failed = 0
    for outputs, ref in zip(run(model, feeds), run(reference, feeds), strict=True):
        failed += not all(checker.check_output(name, value, ref[name]).passed for name, value in outputs.items())
    return failed


def passes(model, reference, feeds, checker) -> bool:
    return failing_samples(model, reference, feeds, checker) == 0


def onnxconverter_common(model, feeds, atol: float) -> dict:
    if importlib.util.find_spec("onnxconverter_common") is None:
        return {"ran": False, "why": "onnxconverter-common is not installed"}
    from onnxconverter_common import auto_mixed_precision

    def validate(results, reference):
        return all(np.all(np.abs(np.asarray(a, np.float64) - np.asarray(b, np.float64)) <= atol)
                   for a, b in zip(results, reference, strict=True))

    start = time.time()
    try:
        mixed = auto_mixed_precision.auto_convert_mixed_precision(model, feeds[0], validate, keep_io_types=True)
    except Exception as err:  # noqa: BLE001 - reported, as the issue reports its failures
        return {"ran": False, "why": f"{type(err).__name__}: {str(err).splitlines()[0][:200]}",
                "time_s": round(time.time() - start, 2)}
    return {"ran": True, "time_s": round(time.time() - start, 2), "nodes": fp32_node_count(mixed), "model": mixed}


def fp32_node_count(model) -> int:
    """Nodes other than Casts that write a float32 tensor (shape inference's types)."""
    import onnx

    graph = onnx.shape_inference.infer_shapes(model).graph
    types = {vi.name: vi.type.tensor_type.elem_type for vi in (*graph.value_info, *graph.output)}
    return sum(1 for node in graph.node if node.op_type != "Cast"
               and any(types.get(o) == onnx.TensorProto.FLOAT for o in node.output))


def bench(name: str, samples: int, held_out: int, fraction: float, validation_rounds: int) -> dict:
    from poly.compare.dataset import SampleChecker
    from poly.debug.mixed_precision import MixedPrecisionSearch
    from poly.onnx import ConvertToFp16

    model, inputs = load(name)
    train, test = inputs(samples, 1), inputs(held_out, 2)
    all_half = ConvertToFp16(model)()
    error = max_abs_error(all_half, model, train)
    atol = error * fraction if np.isfinite(error) else 0.05
    checker = SampleChecker(atol=atol, rtol=0.0)
    # as `poly convert --keep-accuracy` does with synthetic inputs: batches of new inputs from the
    # same distribution validate the set found; those that fail join the search
    batches = [inputs(samples, 3 + r) for r in range(validation_rounds)]
    start = time.time()
    result = MixedPrecisionSearch(model, train, checker, validation=batches).run()
    elapsed = time.time() - start
    checked = train + [feed for batch in batches[:len(result.validation)] for feed in batch]
    minimal = all(
        not passes(ConvertToFp16(model, node_block_list=[n for n in result.fp32_nodes if n != kept])(),
                   model, checked, checker)
        for kept in result.fp32_nodes)
    theirs = onnxconverter_common(model, train, atol)
    if theirs["ran"]:
        theirs["held_out_failed"] = failing_samples(theirs.pop("model"), model, test, checker)
    return {
        "model": name, "nodes": len(model.graph.node), "candidates": len(result.candidates),
        "all_fp16_max_abs_error": error, "atol": atol,
        "kept": len(result.fp32_nodes), "fp32_nodes": result.fp32_nodes,
        "fp32_writing_nodes": fp32_node_count(result.model),
        "evaluations": result.evaluations, "phases": result.phases, "localize": result.localize,
        "samples_checked": result.samples, "validation": result.validation,
        "time_s": round(elapsed, 2), "held_out_failed": failing_samples(result.model, model, test, checker),
        "held_out": len(test),
        "one_minimal_checked": minimal,
        "onnxconverter_common": theirs,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=["sensitive", "squeezenet", "shufflenet"])
    parser.add_argument("--samples", type=int, default=4, help="Training inputs the search checks.")
    parser.add_argument("--held-out", type=int, default=8, help="Held-out inputs the result is checked on.")
    parser.add_argument("--fraction", type=float, default=0.5,
                        help="The tolerance: this fraction of the all-float16 model's max abs error.")
    parser.add_argument("--validation-rounds", type=int, default=2,
                        help="Batches of new inputs (each --samples large) that validate the set found, as "
                        "`poly convert --keep-accuracy` takes with synthetic inputs; 0: none.")
    parser.add_argument("--out", help="Write the results as JSON here.")
    args = parser.parse_args()

    from poly.core import G_LOGGER

    G_LOGGER.module_severity = G_LOGGER.WARNING
    rows = [bench(name, args.samples, args.held_out, args.fraction, args.validation_rounds) for name in args.models]
    header = f"{'model':<12} {'nodes':>5} {'cand':>5} {'kept':>4} {'evals':>5} {'inputs':>6} {'time s':>7} " \
             f"{'held-out':>8} {'1-min':>5}  onnxconverter-common"
    print(header)
    for row in rows:
        occ = row["onnxconverter_common"]
        occ_text = (f"{occ.get('nodes')} float32 nodes, {occ['time_s']} s, held-out "
                    f"{row['held_out'] - occ['held_out_failed']}/{row['held_out']}") if occ["ran"] else occ["why"]
        passed = f"{row['held_out'] - row['held_out_failed']}/{row['held_out']}"
        print(f"{row['model']:<12} {row['nodes']:>5} {row['candidates']:>5} {row['kept']:>4} {row['evaluations']:>5} "
              f"{row['samples_checked']:>6} {row['time_s']:>7} {passed:>8} "
              f"{'yes' if row['one_minimal_checked'] else 'NO':>5}  {occ_text}")
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=2, default=float))
    return 0


if __name__ == "__main__":
    sys.exit(main())
