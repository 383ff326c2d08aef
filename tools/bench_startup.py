#!/usr/bin/env python3
"""Benchmark of poly's start-up against Polygraphy's: the waits a user sees before any work.

It builds a tiny model with onnx.helper (MatMul-Relu, input `x` [1,8] float32, seeded weights,
IR 10, opset 17), then measures, each in fresh processes, poly and Polygraphy run alternately:

  1. `import constants`: `python -c "from poly import constants"` against
     `python -c "from polygraphy import constants"`: wall time, and whether NumPy got imported;
  2. `--help`: `poly --help` against `polygraphy --help`;
  3. `run --help`: `poly run --help` against `polygraphy run --help`;
  4. `run small.onnx --onnxrt`: the whole command, wall time and exit status;

each with bytecode cached (compiled once, as an install with compiled bytecode has it) and
without (PYTHONDONTWRITEBYTECODE=1 and an empty PYTHONPYCACHEPREFIX: every module compiled from
source, as on the first run of an install that did not compile its bytecode). The pycache prefix
is this benchmark's own temporary directory in both cases, so the installed __pycache__ folders
are neither read nor written. The figure of a cell is the median of --repeat runs; the bare
interpreter (`python -c pass`) is printed as the floor.

Targets: `run small.onnx --onnxrt` at most 0.8x Polygraphy's wall time, cached and uncached;
`import constants` and `--help` without NumPy. Results are printed side by side and written as
JSON (--out).
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

RUN_TARGET = 0.8  # poly run / polygraphy run, wall time
# Runs a console script (argv[1], its arguments after it) and prints, at exit, whether NumPy got
# imported: a separate, untimed run of each command.
_NUMPY_PROBE = ("import atexit, runpy, sys; atexit.register(lambda: print('NUMPY', 'numpy' in sys.modules)); "
                "sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')")


def build_model(path: Path) -> None:
    """Writes the benchmark's tiny model (MatMul-Relu, [1,8] -> [1,4])."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    weight = np.random.default_rng(0).standard_normal((8, 4)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"]), helper.make_node("Relu", ["y"], ["out"])], "small",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, 4])],
        initializer=[numpy_helper.from_array(weight, "w")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="bench_startup")
    model.ir_version = 10
    onnx.checker.check_model(model)
    onnx.save(model, str(path))


def tool(name: str) -> str:
    """The venv's console script (not `uv run`, whose own process would blur the figures)."""
    candidate = Path(sys.executable).parent / name
    return str(candidate) if candidate.exists() else (shutil.which(name) or name)


def cases(model: Path) -> list[tuple[str, list[str], list[str]]]:
    """(label, poly's command, Polygraphy's command) of each measurement."""
    py = sys.executable
    return [
        ("python -c pass (floor)", [py, "-c", "pass"], [py, "-c", "pass"]),
        ("import constants", [py, "-c", "from poly import constants"], [py, "-c", "from polygraphy import constants"]),
        ("--help", [tool("poly"), "--help"], [tool("polygraphy"), "--help"]),
        ("run --help", [tool("poly"), "run", "--help"], [tool("polygraphy"), "run", "--help"]),
        ("run small.onnx --onnxrt", [tool("poly"), "run", str(model), "--onnxrt"],
         [tool("polygraphy"), "run", str(model), "--onnxrt"]),
    ]


def environment(cached: bool, work: Path) -> dict[str, str]:
    """The process environment of a mode: a shared, warmed pycache prefix (cached), or a fresh,
    empty one that nothing is written to (uncached)."""
    env = dict(os.environ)
    if cached:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env["PYTHONPYCACHEPREFIX"] = tempfile.mkdtemp(prefix="nocache_", dir=work)
    return env


def measure(cmd: list[str], env: dict[str, str], cwd: Path) -> dict:
    """Runs ``cmd`` once: wall time, exit status and the end of its output."""
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    wall = time.perf_counter() - start
    return {"wall_s": wall, "rc": proc.returncode, "output_tail": proc.stdout.decode(errors="replace")[-800:]}


def imports_numpy(cmd: list[str], env: dict[str, str], cwd: Path) -> bool | None:
    """Whether ``cmd`` imports NumPy (None for the bare interpreter): ``python -c CODE`` gets a
    check appended, a console script is run by the probe."""
    if cmd[1:] == ["-c", "pass"]:
        return None
    if cmd[1] == "-c":
        probe = [cmd[0], "-c", cmd[2] + "; import sys; print('NUMPY', 'numpy' in sys.modules)"]
    else:
        probe = [sys.executable, "-c", _NUMPY_PROBE, *cmd]
    out = subprocess.run(probe, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT).stdout
    return b"NUMPY True" in out if b"NUMPY" in out else None


def summary(runs: list[dict], numpy: bool | None) -> dict:
    return {"wall_s": statistics.median(r["wall_s"] for r in runs), "runs_s": [r["wall_s"] for r in runs],
            "rc": max(r["rc"] for r in runs), "numpy": numpy}


def bench(model: Path, work: Path, repeat: int, only: str | None = None, modes=("cached", "uncached")) -> list[dict]:
    rows, numpy_of = [], {}
    for mode in modes:
        cached = mode == "cached"
        for label, poly_cmd, polyg_cmd in cases(model):
            if only is not None and only not in label:
                continue
            if label not in numpy_of:  # look for NumPy, compiling into the shared prefix (the cached mode's)
                numpy_of[label] = {"poly": imports_numpy(poly_cmd, environment(True, work), work),
                                   "polygraphy": imports_numpy(polyg_cmd, environment(True, work), work)}
            numpy = numpy_of[label]
            poly_runs, polyg_runs = [], []
            for _ in range(repeat):  # alternately, so that drift of the machine hits both alike
                poly_runs.append(measure(poly_cmd, environment(cached, work), work))
                polyg_runs.append(measure(polyg_cmd, environment(cached, work), work))
            row = {"case": label, "mode": mode, "poly": summary(poly_runs, numpy["poly"]),
                   "polygraphy": summary(polyg_runs, numpy["polygraphy"])}
            row["ratio"] = row["poly"]["wall_s"] / row["polygraphy"]["wall_s"]
            for who, runs in (("poly", poly_runs), ("polygraphy", polyg_runs)):
                if runs[-1]["rc"] != 0:
                    print(f"  WARNING: {who} {label} ({mode}) exited {runs[-1]['rc']}:\n{runs[-1]['output_tail']}")
            rows.append(row)
            print_row(row)
    return rows


def _numpy(flag: bool | None) -> str:
    return "-" if flag is None else ("yes" if flag else "no")


def print_header() -> None:
    print(f"{'case':<26} {'bytecode':<9} {'poly s':>8} {'Polygraphy s':>13} {'ratio':>6}  NumPy imported (poly/Polygraphy)")


def print_row(row: dict) -> None:
    print(f"{row['case']:<26} {row['mode']:<9} {row['poly']['wall_s']:8.3f} {row['polygraphy']['wall_s']:13.3f} "
          f"{row['ratio']:6.2f}  {_numpy(row['poly']['numpy'])}/{_numpy(row['polygraphy']['numpy'])}", flush=True)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=5, help="runs of each command per mode (the median is printed)")
    p.add_argument("--workdir", type=Path, default=None, help="keep the model and pycache here (default: a temp dir)")
    p.add_argument("--out", type=Path, default=Path("bench-results/bench_startup.json"))
    p.add_argument("--case", default=None, help="only the cases whose label contains this (e.g. 'run small')")
    p.add_argument("--mode", choices=("cached", "uncached"), default=None, help="only this mode (default: both)")
    args = p.parse_args(argv)
    if args.repeat < 1:
        p.error("--repeat must be positive")

    work = args.workdir or Path(tempfile.mkdtemp(prefix="bench_startup_"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        model = work / "small.onnx"
        build_model(model)
        print(f"median of {args.repeat} runs each; poly and Polygraphy alternately; under {work}\n")
        print_header()
        rows = bench(model, work, args.repeat, args.case, (args.mode,) if args.mode else ("cached", "uncached"))
    finally:
        if args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)

    targets = {}
    for row in rows:
        if row["case"] == "run small.onnx --onnxrt":
            targets[f"run_{row['mode']}<={RUN_TARGET}x"] = row["ratio"] <= RUN_TARGET
        if row["case"] in ("import constants", "--help", "run --help") and row["mode"] == "cached":
            targets[f"{row['case']}_without_numpy"] = row["poly"]["numpy"] is False
    print("\ntargets:")
    for name, ok in targets.items():
        print(f"  {name:<42} {'met' if ok else 'MISSED'}")
    failed = [r for r in rows if r["poly"]["rc"] != 0]

    import onnxruntime as ort

    result = {
        "tool": "tools/bench_startup.py", "repeat": args.repeat, "run_target": RUN_TARGET,
        "rows": rows, "targets_met": targets,
        "environment": {"python": platform.python_version(), "machine": platform.machine(),
                        "cpus": os.cpu_count(), "onnxruntime": ort.__version__},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"\nwrote {args.out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
