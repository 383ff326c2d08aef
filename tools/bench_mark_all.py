#!/usr/bin/env python3
"""
Benchmark of a comparison with every tensor of a model marked as an output, as users debug an
accuracy problem: `poly run MODEL --onnxrt --onnx-outputs mark all --save-outputs golden.json`, then
the same with `--load-outputs golden.json` (the comparison of every tensor against the golden
ones, with each output's statistics in the report), against `polygraphy run` with the same flags.

The model is a real architecture from the onnx wheel's backend test data (`--model`, default
light_densenet121: 1,746 tensors). Prints the wall time of each command (the median of `--repeat`
runs) and Polygraphy's time over poly's.

Usage: python tools/bench_mark_all.py [--model light_densenet121] [--repeat 1]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def light_model(name: str) -> Path:
    import onnx

    path = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light" / f"{name}.onnx"
    if not path.exists():
        raise SystemExit(f"{path}: no such model in the onnx wheel's light backend test data")
    return path


def tool(name: str) -> str:
    candidate = Path(sys.executable).parent / name
    return str(candidate) if candidate.exists() else name


def timed(cmd: list[str], cwd: Path, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
        times.append(time.perf_counter() - start)
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="light_densenet121", help="a model of onnx/backend/test/data/light")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each command (median reported)")
    args = parser.parse_args(argv)
    model = light_model(args.model)
    flags = ["--onnxrt", "--onnx-outputs", "mark", "all"]
    print(f"{model.name}, {' '.join(flags)}; median of {args.repeat} run(s)")
    print(f"{'command':<28} {'poly s':>8} {'Polygraphy s':>13} {'ratio':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for label, extra in (("save the golden outputs", ["--save-outputs"]), ("compare with them", ["--load-outputs"])):
            figures = {}
            for name in ("poly", "polygraphy"):
                golden = f"{name}_golden.json"
                figures[name] = timed([tool(name), "run", str(model), *flags, *extra, golden], work, args.repeat)
            print(f"{label:<28} {figures['poly']:8.2f} {figures['polygraphy']:13.2f} "
                  f"{figures['polygraphy'] / figures['poly']:5.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
