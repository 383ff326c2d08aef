#!/usr/bin/env python3
"""Benchmark of `poly debug reduce` against `polygraphy debug reduce` on the same reduction.

It builds a detector-like ONNX model with onnx.helper (a residual Conv/Relu/Add backbone, an
FPN of Resize/Add/Concat, Conv heads per level whose outputs are reshaped, transposed and
concatenated: about 670 nodes, seeded weights, static shapes, IR 8, opset 17) and plants a
failure: one node (in a head's tower, or on the backbone with --plant backbone) is named
``planted_fault``. The check is a Python script that fails (exit 1) when a node of that name is
in the model it is given (with --check-kind inspect: each tool's own `inspect model --show
layers`, failed by --fail-regex on the node's name, as in the example's simulated failure).

Then, side by side in one run (the two tools alternate, each repetition in a fresh directory),
it runs the two steps of Polygraphy's example 02_reducing_failing_onnx_models with each tool:

    TOOL debug reduce model.onnx -o initial_reduced.onnx --mode=bisect --check python check.py polygraphy_debug.onnx
    TOOL debug reduce initial_reduced.onnx -o final_reduced.onnx --mode=linear --check python check.py polygraphy_debug.onnx

and prints, for each tool: the wall time of each step and of both, the number of iterations
(checks run: the check script appends one line per run to a log), the time per iteration split
into the check (the script's own run, measured inside it, plus the interpreter start-up
measured once on its own) and the rest (extraction and writing of the candidate, the tool's
bookkeeping), the set-up time before the first check, the nodes of both results and the
speed-up ratio (Polygraphy's wall time over poly's). Results are written as JSON with --out.

The machine's load is reported (os.getloadavg) before and after: on a shared machine, repeat
(--repeat) and read the medians.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

PLANTED = "planted_fault"
ARTIFACT = "polygraphy_debug.onnx"

_CHECK_SCRIPT = """
import time
_started = time.time()
import sys
import onnx

model = onnx.load(sys.argv[1], load_external_data=False)
failed = any(node.name == {planted!r} for node in model.graph.node)
with open({log!r}, "a") as log:
    log.write(f"{{_started}} {{time.time()}} {{int(failed)}} {{len(model.graph.node)}}\\n")
sys.exit(1 if failed else 0)
"""


# --------------------------------------------------------------------------------------------
# Model


def build_detector(path: Path, plant="head", seed=0, blocks=(3, 8, 49, 6), head_depth=10, channels=8):
    """
    Writes the detector-like model (670 nodes with the defaults); returns its node count.
    ``plant`` says where the failing node is: ``"head"``, a Relu in the middle of a
    classification tower (a branch: bisecting node prefixes leaves a window around it), or
    ``"backbone"``, the middle Relu of a residual block halfway through the backbone.
    """
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed)
    nodes, inits = [], []
    counter = {"n": 0}

    def name(prefix):
        counter["n"] += 1
        return f"{prefix}_{counter['n']}"

    def weight(shape, scale=0.1):
        tensor_name = name("w")
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), tensor_name))
        return tensor_name

    def const(array):
        tensor_name = name("c")
        inits.append(numpy_helper.from_array(np.asarray(array), tensor_name))
        return tensor_name

    def node(op, inputs, node_name=None, **attrs):
        out = name("t")
        nodes.append(helper.make_node(op, inputs, [out], name=node_name or name(op.lower()), **attrs))
        return out

    def conv(x, cin, cout, k=3, stride=1, node_name=None):
        pad = k // 2
        return node(
            "Conv", [x, weight((cout, cin, k, k)), weight((cout,), 0.01)], node_name,
            kernel_shape=[k, k], pads=[pad] * 4, strides=[stride, stride],
        )

    c = channels
    x = conv("image", 3, c, stride=2)
    x = node("Relu", [x])
    levels = []
    for stage, count in enumerate(blocks):
        for block in range(count):
            stride = 2 if block == 0 and stage > 0 else 1
            skip = x if stride == 1 else conv(x, c, c, k=1, stride=2)
            y = node("Relu", [conv(x, c, c, k=1)])
            planted = plant == "backbone" and stage == len(blocks) // 2 and block == count // 2
            y = node("Relu", [conv(y, c, c, stride=stride)], PLANTED if planted else None)
            y = conv(y, c, c, k=1)
            x = node("Relu", [node("Add", [y, skip])])
        levels.append(x)
    # FPN: laterals, top-down Resize + Add, 3x3 smoothing.
    laterals = [conv(level, c, c, k=1) for level in levels]
    merged = [laterals[-1]]
    for lateral in reversed(laterals[:-1]):
        up = node("Resize", [merged[-1], const(np.array([], np.float32)), const(np.array([1, 1, 2, 2], np.float32))], mode="nearest")
        merged.append(node("Add", [lateral, up]))
    pyramid = [conv(m, c, c) for m in reversed(merged)]
    # Heads: a classification and a box tower per level, each output flattened to [1, anchors, k].
    num_classes, plant_level = 4, len(pyramid) // 2
    scores, boxes = [], []
    for level, feature in enumerate(pyramid):
        for kind, width, out_list in (("cls", num_classes, scores), ("box", 4, boxes)):
            y = feature
            for depth in range(head_depth):
                planted = plant == "head" and kind == "cls" and level == plant_level and depth == head_depth // 2
                y = node("Relu", [conv(y, c, c)], PLANTED if planted else None)
            y = conv(y, c, width)
            y = node("Transpose", [y], perm=[0, 2, 3, 1])
            y = node("Reshape", [y, const(np.array([1, -1, width], np.int64))])
            out_list.append(y)
    score = node("Sigmoid", [node("Concat", scores, axis=1)])
    box = node("Concat", boxes, axis=1)
    detections = node("Concat", [box, score], axis=2)
    nodes.append(helper.make_node("Identity", [detections], ["detections"], name="output"))

    graph = helper.make_graph(
        nodes,
        "detector",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 128, 128])],
        [helper.make_tensor_value_info("detections", TensorProto.FLOAT, None)],
        initializer=inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="bench_reduce")
    model.ir_version = 8
    model = onnx.shape_inference.infer_shapes(model)
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return len(model.graph.node)


# --------------------------------------------------------------------------------------------
# Runs


def tool_path(name: str) -> str:
    local = Path(sys.executable).parent / name
    found = str(local) if local.exists() else shutil.which(name)
    if not found:
        sys.exit(f"bench_reduce: {name!r} is not installed")
    return found


def read_log(path: Path):
    if not path.exists():
        return []
    rows = []
    for line in path.read_text().splitlines():
        start, end, failed, count = line.split()
        rows.append((float(start), float(end), bool(int(failed)), int(count)))
    return rows


def _count_checks(output):
    """(start, end, failed, nodes) rows for checks that log nothing themselves: counted from the
    tool's log; their duration is unknown (0)."""
    return [(0.0, 0.0, False, 0) for line in output.splitlines() if "Running check command" in line]


def node_names(path: Path):
    import onnx

    return sorted(f"{n.op_type}:{n.name}" for n in onnx.load(str(path), load_external_data=False).graph.node)


def run_step(tool: str, workdir: Path, model: str, output: str, mode: str, check: list, log: Path, env=None):
    """Runs one `debug reduce` step; returns its figures. ``check`` may hold "{tool}"."""
    before = len(read_log(log))
    check = [tool if arg == "{tool}" else arg for arg in check]
    regex = ["--fail-regex", f"\\| {PLANTED} \\["] if check[0] == tool else []
    argv = [tool, "debug", "reduce", model, "-o", output, f"--mode={mode}", *regex, "--check", *check]
    started_wall = time.time()
    started = time.perf_counter()
    proc = subprocess.run(argv, cwd=workdir, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout[-3000:] + proc.stderr[-3000:])
        sys.exit(f"bench_reduce: {' '.join(argv[:4])} ... failed with exit status {proc.returncode}")
    checks = read_log(log)[before:] if not regex else _count_checks(proc.stdout + proc.stderr)
    in_check = sum(end - start for start, end, _, _ in checks)
    setup = (checks[0][0] - started_wall) if checks and not regex else 0.0
    return {
        "wall_s": wall,
        "checks": len(checks),
        "check_script_s": in_check,
        "setup_s": setup,
        "result": node_names(workdir / output),
    }


def run_tool(tool: str, root: Path, model: Path, check: list, env=None):
    workdir = Path(tempfile.mkdtemp(prefix="run_", dir=root))
    shutil.copy(model, workdir / "model.onnx")
    log = workdir / "checks.log"
    bisect = run_step(tool, workdir, "model.onnx", "initial_reduced.onnx", "bisect", check, log, env)
    linear = run_step(tool, workdir, "initial_reduced.onnx", "final_reduced.onnx", "linear", check, log, env)
    shutil.rmtree(workdir, ignore_errors=True)
    return {"bisect": bisect, "linear": linear}


def bench_env(root: Path, bytecode_cache: bool):
    """
    The environment of the runs. With ``bytecode_cache``, Python caches compiled modules (under
    ROOT/pycache, so nothing is written next to the sources) as it does by default: otherwise,
    where PYTHONDONTWRITEBYTECODE is set, every process (each check included) compiles every
    module it imports again, and that cost, the same for both tools, swamps theirs.
    """
    env = dict(os.environ)
    if bytecode_cache:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(root / "pycache")
    return env


def interpreter_startup(env, repeat=5):
    """Seconds a bare `python -c pass` takes: the part of each check that its own clock misses."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True, env=env)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def summarize(runs, startup):
    """Medians over repetitions of the figures of both steps together."""

    def total(run, key):
        return run["bisect"][key] + run["linear"][key]

    wall = statistics.median(total(r, "wall_s") for r in runs)
    checks = runs[0]["bisect"]["checks"] + runs[0]["linear"]["checks"]
    check_s = statistics.median(total(r, "check_script_s") for r in runs) + checks * startup
    setup = statistics.median(total(r, "setup_s") for r in runs)
    rest = max(wall - check_s - setup, 0.0)
    split = any(r["bisect"]["check_script_s"] > 0 for r in runs)  # False: checks that log nothing
    return {
        "split_measured": split,
        "per_iteration_s": wall / checks if checks else 0.0,
        "wall_s": wall,
        "wall_all_s": [round(total(r, "wall_s"), 3) for r in runs],
        "bisect_wall_s": statistics.median(r["bisect"]["wall_s"] for r in runs),
        "linear_wall_s": statistics.median(r["linear"]["wall_s"] for r in runs),
        "iterations": checks,
        "iterations_bisect": runs[0]["bisect"]["checks"],
        "iterations_linear": runs[0]["linear"]["checks"],
        "setup_s": setup,
        "per_iteration_check_s": check_s / checks if checks else 0.0,
        "per_iteration_extraction_s": rest / checks if checks else 0.0,
        "result": runs[0]["linear"]["result"],
        "bisect_result": runs[0]["bisect"]["result"],
        "results_stable": all(r["linear"]["result"] == runs[0]["linear"]["result"] for r in runs),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3, help="Repetitions of each tool (medians are reported).")
    parser.add_argument("--only", choices=["poly", "polygraphy"], help="Run one tool only.")
    parser.add_argument(
        "--plant",
        choices=["head", "backbone"],
        default="head",
        help="Where the failing node is: in a head's tower (a branch) or on the backbone's path.",
    )
    parser.add_argument(
        "--small",
        action="store_true",
        help="A small model of the same structure (two backbone stages, shallow heads) for a quick run.",
    )
    parser.add_argument(
        "--check-kind",
        choices=["script", "inspect"],
        default="script",
        help="'script': a Python script that loads the candidate with onnx (the same for both tools); "
        "'inspect': each tool's own `inspect model --show layers` with --fail-regex on the planted node's "
        "name, as in the example's simulated failure (then the split of each iteration is not measured).",
    )
    parser.add_argument(
        "--no-bytecode-cache",
        action="store_true",
        help="Keep the environment as it is (PYTHONDONTWRITEBYTECODE included) instead of letting Python "
        "cache compiled modules in a temporary directory.",
    )
    parser.add_argument(
        "--poly-baseline",
        metavar="SRC_DIRS",
        help="Also run poly with PYTHONPATH=SRC_DIRS (the packages/*/src directories of another revision, "
        "e.g. extracted with `git archive`), reported as 'poly-baseline': before/after in one run.",
    )
    parser.add_argument("--out", help="Write the figures as JSON here.")
    parser.add_argument("--keep", help="Keep the model and check script in this directory.")
    args = parser.parse_args()

    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench_reduce_"))
    root.mkdir(parents=True, exist_ok=True)
    model = root / "model.onnx"
    scale = {"blocks": (2, 2), "head_depth": 2} if args.small else {}
    count = build_detector(model, plant=args.plant, **scale)
    script = root / "check.py"
    # The check runs in the tool's working directory (one per run): its log is checks.log there.
    script.write_text(_CHECK_SCRIPT.format(planted=PLANTED, log="checks.log"))
    check = [sys.executable, str(script), ARTIFACT]
    if args.check_kind == "inspect":
        check = ["{tool}", "inspect", "model", ARTIFACT, "--show", "layers"]
    tools = {"polygraphy": tool_path("polygraphy"), "poly": tool_path("poly")}
    if args.only:
        tools = {args.only: tools[args.only]}
    tool_env = {name: {} for name in tools}
    if args.poly_baseline:
        tools["poly-baseline"] = tool_path("poly")
        tool_env["poly-baseline"] = {"PYTHONPATH": args.poly_baseline}

    print(f"check: {args.check_kind}; model: {count} nodes, planted node {PLANTED!r} in the {args.plant}; machine: {platform.node()}, {os.cpu_count()} CPU(s)")
    env = bench_env(root, not args.no_bytecode_cache)
    # Warm-up (not measured): both tools reduce a tiny model once, which also fills the bytecode cache.
    tiny = root / "tiny" / "model.onnx"
    tiny.parent.mkdir(exist_ok=True)
    build_detector(tiny, plant="head", blocks=(1,), head_depth=1)
    for name, tool in tools.items():
        run_tool(tool, root, tiny, check, {**env, **tool_env[name]})
    load_before = os.getloadavg()
    startup = interpreter_startup(env)
    runs = {name: [] for name in tools}
    for rep in range(args.repeat):
        order = list(tools) if rep % 2 == 0 else list(reversed(list(tools)))
        for name in order:
            run = run_tool(tools[name], root, model, check, {**env, **tool_env[name]})
            runs[name].append(run)
            print(
                f"  [{rep + 1}/{args.repeat}] {name:10s} bisect {run['bisect']['wall_s']:6.2f} s "
                f"({run['bisect']['checks']} checks) + linear {run['linear']['wall_s']:6.2f} s "
                f"({run['linear']['checks']} checks)",
                flush=True,
            )
    load_after = os.getloadavg()

    summary = {name: summarize(r, startup) for name, r in runs.items()}
    print(f"\ninterpreter start-up of each check (python -c pass): {startup * 1e3:.0f} ms")
    print(f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f} (1 min)")
    for name, s in summary.items():
        print(f"\n{name}:")
        print(f"  wall (bisect + linear): {s['wall_s']:.2f} s  (bisect {s['bisect_wall_s']:.2f} s, "
              f"linear {s['linear_wall_s']:.2f} s; all runs {s['wall_all_s']})")
        print(f"  iterations (checks run): {s['iterations']} (bisect {s['iterations_bisect']}, "
              f"linear {s['iterations_linear']})")
        if s["split_measured"]:
            print(f"  set-up before the first check: {s['setup_s']:.2f} s")
            print(f"  per iteration: check {s['per_iteration_check_s'] * 1e3:.0f} ms, "
                  f"extraction and the rest {s['per_iteration_extraction_s'] * 1e3:.0f} ms")
        else:
            print(f"  per iteration (wall / checks; the check's share is not measured): "
                  f"{s['per_iteration_s'] * 1e3:.0f} ms")
        print(f"  bisect result: {s['bisect_result']}")
        print(f"  final result:  {s['result']}{'' if s['results_stable'] else ' (differs between runs!)'}")
    if "poly" in summary and "polygraphy" in summary:
        print()
        for name in [n for n in summary if n != "polygraphy"]:
            same = summary[name]["result"] == summary["polygraphy"]["result"]
            ratio = summary["polygraphy"]["wall_s"] / summary[name]["wall_s"]
            print(f"{name}: same result as Polygraphy: {same}; speed-up (Polygraphy wall / {name} wall, "
                  f"medians): {ratio:.2f}x")
            summary[name]["same_result"] = same
            summary[name]["speedup"] = ratio
    summary["model_nodes"] = count
    summary["interpreter_startup_s"] = startup
    summary["load_average"] = {"before": load_before, "after": load_after}
    if args.out:
        Path(args.out).write_text(json.dumps(summary, indent=2))
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
