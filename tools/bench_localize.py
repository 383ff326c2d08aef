#!/usr/bin/env python3
"""Benchmark of `poly debug localize` against Polygraphy's layer-wise comparison.

It builds a deep model with onnx.helper (BLOCKS x [1x1 Conv -> Relu] on a 1 x C x H x W input,
seeded weights) whose activations total several GB, and a candidate copy with one weight
perturbed (the planted node). Then, on the same model and input, it measures in fresh processes:

  1. `polygraphy run CAND.onnx --onnxrt --onnx-outputs mark all` (what users run today to see
     every tensor): wall time and peak RSS;
  2. `poly debug localize CAND.onnx --reference-model REF.onnx --onnxrt` (candidate and
     reference both run, every tensor compared, divergent nodes shadowed): wall time, peak RSS,
     and whether ranking[0] / first_divergent name the planted node.

Peak RSS is each command's own (os.wait4 on the child). The target: localize at most a quarter of
Polygraphy's peak RSS, with the planted node found. Results are printed side by side and written as
JSON (--out).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def build(path: Path, blocks: int, channels: int, size: int, planted: int | None) -> str:
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    nodes, inits, prev = [], [], "x"
    for i in range(blocks):
        # He initialisation: activations keep their magnitude through the Relus
        weight = (rng.standard_normal((channels, channels, 1, 1)) * np.sqrt(2.0 / channels)).astype(np.float32)
        if i == planted:
            weight = weight * 1.01
        inits.append(numpy_helper.from_array(weight, f"w{i}"))
        nodes.append(helper.make_node("Conv", [prev, f"w{i}"], [f"c{i}"], name=f"conv{i}"))
        nodes.append(helper.make_node("Relu", [f"c{i}"], [f"r{i}"], name=f"relu{i}"))
        prev = f"r{i}"
    graph = helper.make_graph(nodes, "deep", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                             [1, channels, size, size])],
                              [helper.make_tensor_value_info(prev, TensorProto.FLOAT, None)], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), path)
    return f"conv{planted}" if planted is not None else ""


def measure(argv: list[str], cwd: Path) -> dict:
    """Runs ``argv``; its wall time, exit status and peak RSS (its own, via wait4)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    output = proc.stdout.read().decode(errors="replace")
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return {"argv": " ".join(argv), "wall_s": round(time.perf_counter() - start, 2), "rc": proc.returncode,
            "peak_rss_mib": round(usage.ru_maxrss / 1024, 1), "tail": output.strip().splitlines()[-3:]}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--blocks", type=int, default=300, help="Conv+Relu blocks (default 300)")
    parser.add_argument("--channels", type=int, default=64)
    parser.add_argument("--size", type=int, default=128, help="spatial size H = W (default 128)")
    parser.add_argument("--small", action="store_true", help="a quick run: 24 blocks of 16 x 32 x 32")
    parser.add_argument("--out", type=Path, help="write the results as JSON here")
    args = parser.parse_args(argv)
    if args.small:
        args.blocks, args.channels, args.size = 24, 16, 32
    bindir = Path(sys.executable).parent
    poly = shutil.which("poly", path=str(bindir)) or "poly"
    polygraphy = shutil.which("polygraphy", path=str(bindir)) or shutil.which("polygraphy")
    planted_index = args.blocks * 2 // 3
    tensor_mib = args.channels * args.size * args.size * 4 / 2**20
    with tempfile.TemporaryDirectory(prefix="bench-localize-") as tmp:
        work = Path(tmp)
        build(work / "ref.onnx", args.blocks, args.channels, args.size, None)
        planted = build(work / "cand.onnx", args.blocks, args.channels, args.size, planted_index)
        print(f"model: {args.blocks} x (Conv+Relu), {args.blocks * 2} activations of {tensor_mib:.1f} MiB = "
              f"{args.blocks * 2 * tensor_mib / 1024:.2f} GiB in all; planted: {planted}")
        results = {"model": {"blocks": args.blocks, "channels": args.channels, "size": args.size,
                             "activations_gib": round(args.blocks * 2 * tensor_mib / 1024, 3), "planted": planted}}
        if polygraphy:
            results["polygraphy"] = measure([polygraphy, "run", "cand.onnx", "--onnxrt", "--onnx-outputs", "mark",
                                             "all"], work)
        localize = measure([poly, "debug", "localize", "cand.onnx", "--reference-model", "ref.onnx", "--onnxrt",
                            "--report-json", "report.json"], work)
        report = json.loads((work / "report.json").read_text()) if (work / "report.json").exists() else {}
        localize["ranking0"] = (report.get("ranking") or [None])[0]
        localize["first_divergent"] = report.get("first_divergent")
        localize["found_planted"] = localize["ranking0"] == planted and localize["first_divergent"] == planted
        results["poly_localize"] = localize
    print(f"{'command':<55} {'wall s':>8} {'peak RSS MiB':>13}")
    for key in ("polygraphy", "poly_localize"):
        if key in results:
            r = results[key]
            print(f"{r['argv'].split('/')[-1][:55]:<55} {r['wall_s']:>8} {r['peak_rss_mib']:>13}")
    if "polygraphy" in results:
        ratio = results["poly_localize"]["peak_rss_mib"] / results["polygraphy"]["peak_rss_mib"]
        results["rss_ratio"] = round(ratio, 3)
        print(f"peak RSS ratio localize / polygraphy mark all: {ratio:.3f} (target <= 0.25)")
    else:
        print("polygraphy is not installed: no baseline")
    print(f"planted node found (ranking[0] and first_divergent = {planted}): {localize['found_planted']}")
    if args.out:
        args.out.write_text(json.dumps(results, indent=1) + "\n")
    return 0 if localize["found_planted"] else 1


if __name__ == "__main__":
    sys.exit(main())
