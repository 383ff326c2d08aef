#!/usr/bin/env python3
"""Benchmark of `poly validate` against Polygraphy and the ORT floor.

It builds a small CNN with onnx.helper (Conv-Relu-Conv-Relu-GlobalAveragePool-Flatten-Gemm-
Softmax, seeded weights, IR 10, opset 17), a dataset of N samples (a directory of .npz feed
dicts) and golden outputs from ONNX-Runtime (a directory of .npz), the same data as a
Polygraphy inputs JSON and RunResults JSON, and plants a few bad samples by perturbing their
golden outputs. Then, on the same data, it measures:

  1. `poly validate MODEL --onnxrt --dataset DIR --golden DIR` (fresh process): wall time,
     samples/s, peak RSS;
  2. `polygraphy run MODEL --onnxrt --load-inputs inputs.json --load-outputs golden.json`
     (fresh process): wall time, samples/s, peak RSS;
  3. the floor: bare onnxruntime InferenceSession.run over the samples already in memory;
  4. peak RSS of `poly validate` at several dataset sizes (default 1,000 and 10,000).

Peak RSS of a command is taken in a small wrapper process with
resource.getrusage(RUSAGE_CHILDREN).ru_maxrss, so each figure is that command's alone.
Targets: poly >= 3x Polygraphy's throughput; poly wall <= 1.5x the floor; RSS flat (within
10%) from the smallest to the largest size. Results are printed and written as JSON (--out).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

import numpy as np

INPUT_NAME, OUTPUT_NAME = "input", "probs"
INPUT_SHAPE = (1, 3, 64, 64)
NUM_CLASSES = 10

# Run a command and print its wall time and peak RSS (KiB on Linux) as JSON on the last line.
_MEASURE = r"""
import json, resource, subprocess, sys, time
start = time.perf_counter()
proc = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
wall = time.perf_counter() - start
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
sys.stdout.write(proc.stdout.decode(errors="replace")[-4000:])
print("\n" + json.dumps({"wall_s": wall, "rc": proc.returncode, "maxrss_kib": rss}))
"""


# --------------------------------------------------------------------------------------------
# Model and data


MODEL_KINDS = {
    # ~110 MMAC: ORT takes a few ms a sample on a small CPU; its 1.5 MB activations outgrow a core's L2
    "cnn": (INPUT_SHAPE, (32, 96), (0.2, 0.06)),
    # ~58 MMAC on 16x16 feature maps: weights and activations (about 1 MB) stay in a core's L2, so
    # that sixteen processes share no memory bandwidth (CPU-bound, as the scaling target asks)
    "compact": ((1, 8, 16, 16), (64,) * 6, (0.17,) + (0.06,) * 5),
}


def build_model(path: Path, seed: int = 0, kind: str = "cnn") -> None:
    """Writes the benchmark CNN of ``kind`` (MODEL_KINDS: input shape, channels and weight scales of
    its 3x3 convs, each followed by a Relu, then GlobalAveragePool-Flatten-Gemm-Softmax) with seeded
    weights."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed)
    shape, channels, scales = MODEL_KINDS[kind]

    def init(name, shape, scale):
        return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)

    inits, nodes, prev, width = [], [], INPUT_NAME, shape[1]
    for k, (c, scale) in enumerate(zip(channels, scales, strict=True), start=1):
        inits += [init(f"w{k}", (c, width, 3, 3), scale), init(f"b{k}", (c,), 0.05)]
        nodes += [helper.make_node("Conv", [prev, f"w{k}", f"b{k}"], [f"c{k}"], pads=[1, 1, 1, 1]),
                  helper.make_node("Relu", [f"c{k}"], [f"r{k}"])]
        prev, width = f"r{k}", c
    last = len(channels) + 1
    inits += [init(f"w{last}", (width, NUM_CLASSES), 0.2), init(f"b{last}", (NUM_CLASSES,), 0.05)]
    nodes += [
        helper.make_node("GlobalAveragePool", [prev], ["gap"]),
        helper.make_node("Flatten", ["gap"], ["flat"], axis=1),
        helper.make_node("Gemm", ["flat", f"w{last}", f"b{last}"], ["logits"]),
        helper.make_node("Softmax", ["logits"], [OUTPUT_NAME], axis=-1),
    ]
    graph = helper.make_graph(
        nodes, "bench_cnn",
        [helper.make_tensor_value_info(INPUT_NAME, TensorProto.FLOAT, list(shape))],
        [helper.make_tensor_value_info(OUTPUT_NAME, TensorProto.FLOAT, [shape[0], NUM_CLASSES])],
        initializer=inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="bench_validate")
    model.ir_version = 10
    onnx.checker.check_model(model)
    onnx.save(model, str(path))


def sample_name(i: int) -> str:
    return f"sample_{i:06d}.npz"


def planted_indices(n: int, count: int) -> list[int]:
    """Spread `count` bad samples over the first n (distinct, deterministic)."""
    count = min(count, n)
    return sorted({int(round((k + 0.5) * n / count)) % n for k in range(count)})


def make_dataset(model: Path, root: Path, n: int, planted: set[int], seed: int = 1) -> None:
    """Writes root/dataset/*.npz and root/golden/*.npz for n samples; planted golden outputs are
    perturbed well beyond the default tolerances."""
    import onnxruntime as ort

    ds, golden = root / "dataset", root / "golden"
    ds.mkdir(parents=True, exist_ok=True)
    golden.mkdir(parents=True, exist_ok=True)
    sess = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    shape = sess.get_inputs()[0].shape
    rng = np.random.default_rng(seed)
    for i in range(n):
        x = rng.standard_normal(shape).astype(np.float32)
        (out,) = sess.run([OUTPUT_NAME], {INPUT_NAME: x})
        if i in planted:
            out = out.copy()
            out[0, i % NUM_CLASSES] += 0.05
        np.savez(ds / sample_name(i), **{INPUT_NAME: x})
        np.savez(golden / sample_name(i), **{OUTPUT_NAME: out})


def link_subset(root: Path, n: int, dest: Path) -> None:
    """dest/dataset and dest/golden with the first n samples of root's (hard links: no copy)."""
    for sub in ("dataset", "golden"):
        (dest / sub).mkdir(parents=True, exist_ok=True)
        for i in range(n):
            src, dst = root / sub / sample_name(i), dest / sub / sample_name(i)
            if not dst.exists():
                try:
                    os.link(src, dst)
                except OSError:
                    shutil.copyfile(src, dst)


def load_samples(root: Path, n: int):
    feeds, outs = [], []
    for i in range(n):
        with np.load(root / "dataset" / sample_name(i)) as z:
            feeds.append({INPUT_NAME: z[INPUT_NAME]})
        with np.load(root / "golden" / sample_name(i)) as z:
            outs.append({OUTPUT_NAME: z[OUTPUT_NAME]})
    return feeds, outs


def write_polygraphy_files(feeds, outs, inputs_json: Path, golden_json: Path) -> None:
    """The same data in Polygraphy's formats, written with poly.compare."""
    from poly.compare import IterationResult, RunResults, save_inputs

    save_inputs(feeds, str(inputs_json))
    iters = [IterationResult(dict(o), runner_name="onnxrt-golden") for o in outs]
    RunResults([("onnxrt-golden", iters)]).save(str(golden_json))


# --------------------------------------------------------------------------------------------
# Measurements


def tool(name: str) -> str:
    """The venv's console script (not `uv run`, whose own process would blur the figures)."""
    candidate = Path(sys.executable).parent / name
    return str(candidate) if candidate.exists() else (shutil.which(name) or name)


def measure(cmd: list[str], log: Path | None = None) -> dict:
    """Runs cmd in a fresh wrapper process; wall time, exit code and peak RSS (MiB)."""
    proc = subprocess.run([sys.executable, "-c", _MEASURE, *cmd], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, check=True)
    text = proc.stdout.decode(errors="replace")
    body, _, last = text.rstrip().rpartition("\n")
    fig = json.loads(last)
    if log is not None:
        log.write_text(body)
    # ru_maxrss is KiB on Linux, bytes on macOS.
    kib = fig["maxrss_kib"] / (1024 if sys.platform == "darwin" else 1)
    return {"wall_s": fig["wall_s"], "rc": fig["rc"], "peak_rss_mib": kib / 1024, "output_tail": body[-1500:]}


@contextlib.contextmanager
def work_dir(workdir: Path | None, prefix: str):
    """``workdir`` (created), or a temporary directory removed afterwards."""
    if workdir is not None:
        workdir.mkdir(parents=True, exist_ok=True)
        yield workdir
        return
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        yield Path(tmp)


def poly_command() -> list[str]:
    """`poly` as a command: the console script, or this interpreter running poly's CLI (where poly
    is importable but not installed as a script, e.g. from PYTHONPATH)."""
    script = tool("poly")
    if Path(script).exists() or shutil.which(script):
        return [script]
    return [sys.executable, "-c", "import sys; from poly.cli.main import console_script; sys.argv[0] = 'poly'; console_script()"]


def run_poly(model: Path, root: Path, n: int, report: Path, workers: int | None, extra=(), prefix=()) -> dict:
    cmd = [*prefix, *poly_command(), "validate", str(model), "--onnxrt", "--dataset", str(root / "dataset"),
           "--golden", str(root / "golden"), "--report-json", str(report), "-q", *extra]
    if workers:
        cmd += ["--workers", str(workers)]
    fig = measure(cmd)
    fig["samples"] = n
    fig["samples_per_s"] = n / fig["wall_s"]
    if report.exists():
        rep = json.loads(report.read_text())
        fig["report_elapsed_s"] = rep.get("elapsed_s")
        fig["report_samples_per_s"] = rep.get("samples_per_second")
        fig["report_samples"] = rep.get("samples")
        fig["failed_indices"] = sorted(s["index"] for s in rep.get("failed_samples", []))
        fig["failed_files"] = sorted(s.get("file") for s in rep.get("failed_samples", []))
    return fig


def run_polygraphy(model: Path, inputs_json: Path, golden_json: Path, n: int, log: Path) -> dict:
    cmd = [tool("polygraphy"), "run", str(model), "--onnxrt", "--load-inputs", str(inputs_json),
           "--load-outputs", str(golden_json)]
    fig = measure(cmd, log)
    fig["samples"] = n
    fig["samples_per_s"] = n / fig["wall_s"]
    return fig


def run_floor(model: Path, feeds, repeat: int) -> dict:
    """Bare ORT over in-memory samples: only the run calls are timed (best of `repeat`)."""
    import onnxruntime as ort

    sess = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    sess.run(None, feeds[0])  # warm-up
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for feed in feeds:
            sess.run(None, feed)
        best = min(best, time.perf_counter() - start)
    return {"wall_s": best, "samples": len(feeds), "samples_per_s": len(feeds) / best,
            "ms_per_sample": 1e3 * best / len(feeds)}


def atomic_write_json(path: Path, obj) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(obj, f, indent=2)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        with __import__("contextlib").suppress(OSError):
            os.unlink(tmp)
        raise


def verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


# --------------------------------------------------------------------------------------------


def uncompiled_ray_data() -> bool:
    """Whether Ray Data's modules lack compiled bytecode (an environment with
    PYTHONDONTWRITEBYTECODE set, a `uv sync` without --compile-bytecode): then nothing installed
    is likely compiled, and each Ray worker process compiles what it imports (Ray, pyarrow, NumPy)
    from source at start-up, time that a normal install has not."""
    import importlib.util

    spec = importlib.util.find_spec("ray.data")
    if spec is None or not spec.origin:
        return False
    return not os.path.exists(importlib.util.cache_from_source(spec.origin))


def ray_main(args) -> int:
    """`--ray`: the overhead of Ray against a local run, and the scale-out curve. samples/s are the
    report's (the pipeline's elapsed time: no process or Ray start-up; actor start-up included)."""
    if uncompiled_ray_data():
        print("WARNING: Ray Data has no compiled bytecode here (nor, likely, anything installed): every Ray worker "
              "process compiles what it imports from source at start-up and the figures below overstate Ray's "
              "overhead. Compile it first: "
              f"{sys.executable} -m compileall -q {sysconfig.get_paths()['purelib']} "
              "(or install with UV_COMPILE_BYTECODE=1).", flush=True)
    work = args.workdir or Path(tempfile.mkdtemp(prefix="bench_validate_ray_"))
    work.mkdir(parents=True, exist_ok=True)
    model = work / "bench_cnn.onnx"
    build_model(model, kind=args.model)
    planted = planted_indices(args.samples, args.planted)
    root = work / f"n{args.samples}"
    make_dataset(model, root, args.samples, set(planted))
    print(f"{args.samples} samples under {root}; planted bad samples: {planted}")

    def figure(label, extra):
        report = work / f"report_{label}.json"
        fig = run_poly(model, root, args.samples, report, None, extra)
        ok = fig.get("failed_indices") == planted and fig.get("report_samples") == args.samples
        fig["label"], fig["planted_found"] = label, ok
        if report.exists():
            fig["steady_samples_per_s"] = json.loads(report.read_text()).get("config", {}).get(
                "ray_steady_samples_per_second")
        steady = fig.get("steady_samples_per_s")
        print(f"    {label:<28} {fig['report_samples_per_s'] or 0:8.1f} samples/s (pipeline), "
              + (f"{steady:8.1f} after the first batch, " if steady else "")
              + f"wall {fig['wall_s']:.1f} s, planted found: {'OK' if ok else 'WRONG'}", flush=True)
        return fig

    print("[1] local run against a local 2-worker Ray run ...", flush=True)
    local = figure("local", [])
    ray2 = figure("ray, 2 workers", ["--ray", "--ray-workers", "2"])
    overhead = 1.0 - ray2["report_samples_per_s"] / local["report_samples_per_s"]
    print(f"    Ray overhead, end to end: {100 * overhead:.1f}% of the local throughput (target <= 25%)")
    steady_overhead = None
    if ray2.get("steady_samples_per_s"):
        steady_overhead = 1.0 - ray2["steady_samples_per_s"] / local["report_samples_per_s"]
        print(f"    Ray overhead after the first batch (actor and Ray Data start-up excluded): "
              f"{100 * steady_overhead:.1f}%")
    print("[2] simulated scale-out: 1, 2, 4 actors on this machine's CPUs ...", flush=True)
    cpus = os.cpu_count() or 2
    curve = [figure(f"ray, {k} actor(s)", ["--ray", "--ray-workers", str(k), "--ray-cpus-per-worker",
                                           str(min(1.0, cpus / k))]) for k in (1, 2, 4)]
    atomic_write_json(args.out, {"machine": platform.platform(), "cpus": cpus, "samples": args.samples,
                                 "local": local, "ray_2_workers": ray2, "ray_overhead": overhead,
                                 "ray_overhead_after_first_batch": steady_overhead,
                                 "scale_out": curve})
    print(f"wrote {args.out}")
    return 0 if all(f["planted_found"] for f in [local, ray2, *curve]) else 1


# One single-thread ONNX-Runtime session running K inferences from a shared start time; prints its
# inferences per second (the host's own scaling, without poly: ort_curve).
_ORT_ALONE = r"""
import sys, time, numpy as np, onnxruntime as ort
model, k, start_at = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
so = ort.SessionOptions()
so.intra_op_num_threads = so.inter_op_num_threads = 1
s = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
feed = {s.get_inputs()[0].name: np.random.default_rng(0).standard_normal(s.get_inputs()[0].shape).astype(np.float32)}
for _ in range(10):
    s.run(None, feed)
while time.time() < start_at:
    time.sleep(0.001)
t = time.perf_counter()
for _ in range(k):
    s.run(None, feed)
print(k / (time.perf_counter() - t))
"""


def ort_curve(model: Path, counts: list[int], cpus: list[int], seconds: float = 4.0) -> list[dict]:
    """ONNX-Runtime alone at each count N: N processes, each one single-thread session pinned to its
    CPU, run together; the mean rate per process against the lone one's (the efficiency the host
    itself allows, e.g. where sixteen sessions share memory bandwidth)."""
    def rates(n: int, k: int) -> list[float]:
        start_at = time.time() + 3.0 + 0.05 * n  # after every process has loaded the model
        procs = [subprocess.Popen(["taskset", "-c", str(cpus[i]), sys.executable, "-c", _ORT_ALONE, str(model),
                                  str(k), str(start_at)], stdout=subprocess.PIPE, text=True) for i in range(n)]
        return [float(proc.communicate()[0].split()[-1]) for proc in procs]

    k = max(50, int(rates(1, 50)[0] * seconds))
    base = None
    rows = []
    for n in sorted(set(counts) | {1}):
        got = rates(n, k)
        mean = sum(got) / len(got)
        base = base or mean  # (the lone session's, n = 1 coming first)
        if n not in counts:
            continue
        rows.append({"processes": n, "per_process": mean, "slowest": min(got), "efficiency": mean / base})
        print(f"  {n:>3} ORT alone: {mean:8.1f} inferences/s a process (slowest {min(got):.1f}), "
              f"efficiency {rows[-1]['efficiency']:.2f}", flush=True)
    return rows


def workers_curve_main(args, counts: list[int]) -> int:
    """Throughput of `poly validate` at N workers on N CPUs, against 1 worker on 1 CPU."""
    cpus = sorted(os.sched_getaffinity(0))
    counts = [c for c in counts if c <= len(cpus)]
    if not counts:
        print("no worker count fits this machine's CPUs", file=sys.stderr)
        return 2
    if shutil.which("taskset") is None:
        print("needs taskset (util-linux) to pin each run to its CPUs", file=sys.stderr)
        return 2
    planted = planted_indices(args.samples, args.planted)
    with work_dir(args.workdir, "bench_validate_curve_") as work:
        model = work / "bench_cnn.onnx"
        build_model(model, kind=args.model)
        root = work / f"n{args.samples}"
        t0 = time.perf_counter()
        make_dataset(model, root, args.samples, set(planted))
        print(f"built model and {args.samples} samples (+ golden) in {time.perf_counter() - t0:.1f} s; "
              f"{len(cpus)} CPUs")
        print("\nONNX-Runtime alone: one single-thread session per CPU, N started together (the host's own scaling)")
        ort_rows = ort_curve(model, counts, cpus)
        curves = {}
        titles = {"threads": "--workers N --infer-threads N (one process)",
                  "processes": "--processes N (one runner per process)",
                  "default": "no engine flag (what poly picks on N CPUs)"}
        for mode in ("default", "threads", "processes"):
            print(f"\n{mode}: {titles[mode]}")
            rows = curves[mode] = []
            for n in counts:
                pin = ["taskset", "-c", ",".join(str(c) for c in cpus[:n])]
                extra = {"threads": ("--infer-threads", str(n)), "processes": ("--processes", str(n)),
                         "default": ()}[mode]
                fig = run_poly(model, root, args.samples, work / f"report_{mode}_{n}.json",
                               n if mode == "threads" else None, extra=extra, prefix=pin)
                ok = fig.get("failed_indices") == planted and fig.get("report_samples") == args.samples
                rate = fig.get("report_samples_per_s") or fig["samples_per_s"]
                rows.append({"workers": n, "samples_per_s": rate, "wall_samples_per_s": fig["samples_per_s"],
                             "peak_rss_mib": fig["peak_rss_mib"], "rc": fig["rc"], "planted_found": ok})
                print(f"  {n:>3} {mode:>9}: {rate:8.1f} samples/s (run), {fig['samples_per_s']:8.1f} with start-up, "
                      f"peak RSS {fig['peak_rss_mib']:7.1f} MiB, planted failures found: {'OK' if ok else 'WRONG'}",
                      flush=True)
            base = rows[0]["samples_per_s"] / rows[0]["workers"]
            wall_base = rows[0]["wall_samples_per_s"] / rows[0]["workers"]
            print(f"\n  {mode:>9}  samples/s  speed-up  efficiency  | with start-up: samples/s  efficiency  "
                  f"| peak RSS (MiB, largest process)")
            for r in rows:
                r["speedup"] = r["samples_per_s"] / base
                r["efficiency"] = r["speedup"] / r["workers"]
                r["wall_efficiency"] = r["wall_samples_per_s"] / wall_base / r["workers"]
                print(f"  {r['workers']:>9}  {r['samples_per_s']:9.1f}  {r['speedup']:8.2f}  {r['efficiency']:10.2f}  "
                      f"|                {r['wall_samples_per_s']:9.1f}  {r['wall_efficiency']:10.2f}  "
                      f"| {r['peak_rss_mib']:14.1f}")
            print("  (target: efficiency >= 0.8 at every count; speed-up is over "
                  f"{rows[0]['workers']} worker{'s' if rows[0]['workers'] > 1 else ''} scaled per worker)")
        import onnxruntime as ort

        atomic_write_json(args.out.with_name("bench_validate_workers.json"), {
            "tool": "tools/bench_validate.py --workers-curve", "samples": args.samples, "planted": planted,
            "model": args.model, "rows": curves["threads"], "process_rows": curves["processes"], "ort_alone_rows": ort_rows,
            "environment": {"python": platform.python_version(), "cpus": len(cpus),
                                          "onnxruntime": ort.__version__}})
        return 0 if all(r["planted_found"] for rows in curves.values() for r in rows) else 1


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--samples", type=int, default=2000, help="dataset size for the poly/Polygraphy comparison")
    p.add_argument("--rss-sizes", default=None,
                   help="comma-separated dataset sizes for the RSS check (default 1000,10000; 200,2000 with --quick)")
    p.add_argument("--quick", action="store_true", help="smaller default RSS sizes, one floor repeat")
    p.add_argument("--planted", type=int, default=5, help="number of bad samples planted")
    p.add_argument("--workers", type=int, default=None, help="--workers for poly validate (default: poly's)")
    p.add_argument("--workdir", type=Path, default=None, help="keep the model and data here (default: a temp dir)")
    p.add_argument("--out", type=Path, default=Path("bench-results/bench_validate.json"))
    p.add_argument("--skip-polygraphy", action="store_true", help="do not run Polygraphy")
    p.add_argument("--workers-curve", default=None, metavar="N,N,...",
                   help="instead: the scaling curves of `poly validate --workers N --infer-threads N` (threads, one "
                   "ONNX-Runtime thread per worker) and of `poly validate --processes N`, each run pinned to N CPUs "
                   "(taskset): samples/s, speed-up over 1 worker, efficiency and peak RSS per N (e.g. 1,2,4,8,16; counts above this machine's CPUs are skipped)")
    p.add_argument("--model", choices=sorted(MODEL_KINDS), default="cnn",
                   help="the benchmark model: cnn (default; its activations outgrow a core's L2) or compact (all "
                   "in a core's L2: CPU-bound)")
    p.add_argument("--ray", action="store_true",
                   help="instead: samples/s of a local 2-worker Ray run against the same run without Ray, and "
                   "a simulated scale-out curve (1, 2, 4 actors sharing this machine's CPUs)")
    args = p.parse_args(argv)
    if args.ray:
        return ray_main(args)
    if args.workers_curve:
        try:
            counts = sorted({int(c) for c in args.workers_curve.split(",") if c.strip()})
        except ValueError:
            p.error(f"--workers-curve: expected comma-separated worker counts, got {args.workers_curve!r}")
        if not counts or counts[0] < 1:
            p.error("--workers-curve: worker counts must be positive")
        return workers_curve_main(args, counts)

    rss_default = "200,2000" if args.quick else "1000,10000"
    rss_sizes = sorted({int(s) for s in (args.rss_sizes or rss_default).split(",") if s.strip()})
    if args.samples < 1 or not rss_sizes or min(rss_sizes) < 1:
        p.error("sizes must be positive")
    total = max([args.samples, *rss_sizes])
    planted = planted_indices(args.samples, args.planted)
    planted_set = set(planted)

    with work_dir(args.workdir, "bench_validate_") as work:
        model = work / "bench_cnn.onnx"
        build_model(model, kind=args.model)
        full = work / "full"
        t0 = time.perf_counter()
        # Samples beyond args.samples carry no planted failure: planted indices are < args.samples.
        make_dataset(model, full, total, planted_set)
        print(f"built model and {total} samples (+ golden) in {time.perf_counter() - t0:.1f} s under {work}")
        print(f"planted bad samples: {planted}")

        main_root = work / f"n{args.samples}"
        link_subset(full, args.samples, main_root)
        feeds, outs = load_samples(main_root, args.samples)
        inputs_json, golden_json = work / "inputs.json", work / "golden.json"
        if not args.skip_polygraphy:
            write_polygraphy_files(feeds, outs, inputs_json, golden_json)

        print("\n[1] poly validate ...", flush=True)
        poly = run_poly(model, main_root, args.samples, work / "poly_report.json", args.workers)
        print(f"    wall {poly['wall_s']:.2f} s, {poly['samples_per_s']:.1f} samples/s, "
              f"peak RSS {poly['peak_rss_mib']:.1f} MiB, rc {poly['rc']} "
              f"(pipeline alone: {poly.get('report_elapsed_s') or float('nan'):.2f} s)")

        polyg = None
        if not args.skip_polygraphy:
            print("[2] polygraphy run --load-inputs --load-outputs ...", flush=True)
            polyg = run_polygraphy(model, inputs_json, golden_json, args.samples, work / "polygraphy.log")
            print(f"    wall {polyg['wall_s']:.2f} s, {polyg['samples_per_s']:.1f} samples/s, "
                  f"peak RSS {polyg['peak_rss_mib']:.1f} MiB, rc {polyg['rc']}")

        print("[3] floor: bare onnxruntime InferenceSession.run over in-memory samples ...", flush=True)
        floor = run_floor(model, feeds, repeat=1 if args.quick else 3)
        print(f"    {floor['wall_s']:.2f} s, {floor['samples_per_s']:.1f} samples/s, "
              f"{floor['ms_per_sample']:.3f} ms/sample")
        del feeds, outs

        print(f"[4] poly validate peak RSS at {rss_sizes} samples ...", flush=True)
        rss = []
        for n in rss_sizes:
            root = work / f"n{n}"
            link_subset(full, n, root)
            fig = run_poly(model, root, n, work / f"poly_report_{n}.json", args.workers)
            rss.append({"samples": n, "peak_rss_mib": fig["peak_rss_mib"], "wall_s": fig["wall_s"],
                        "samples_per_s": fig["samples_per_s"], "rc": fig["rc"],
                        "failed_indices": fig.get("failed_indices")})
            print(f"    {n:>7} samples: peak RSS {fig['peak_rss_mib']:.1f} MiB, wall {fig['wall_s']:.2f} s")

        found = poly.get("failed_indices")
        planted_ok = found == planted and poly["rc"] == 1 and poly.get("report_samples") == args.samples
        print(f"\ncheck: poly reported failures {found} == planted {planted}: {'OK' if planted_ok else 'WRONG'}")
        rss_subsets_ok = all(r["failed_indices"] == [i for i in planted if i < r["samples"]] for r in rss)
        print(f"check: failures in the RSS runs are the planted ones below each size: "
              f"{'OK' if rss_subsets_ok else 'WRONG'}")
        if polyg is not None:
            print(f"check: polygraphy failed the run (planted samples): {'OK' if polyg['rc'] != 0 else 'WRONG'}")

        ratios, targets = {}, {}
        if polyg is not None:
            ratios["poly_vs_polygraphy_throughput"] = poly["samples_per_s"] / polyg["samples_per_s"]
            ratios["poly_vs_polygraphy_peak_rss"] = poly["peak_rss_mib"] / polyg["peak_rss_mib"]
            targets["poly_vs_polygraphy_throughput>=3"] = ratios["poly_vs_polygraphy_throughput"] >= 3
        ratios["poly_wall_vs_floor"] = poly["wall_s"] / floor["wall_s"]
        targets["poly_wall_vs_floor<=1.5"] = ratios["poly_wall_vs_floor"] <= 1.5
        if poly.get("report_elapsed_s"):
            ratios["poly_pipeline_vs_floor"] = poly["report_elapsed_s"] / floor["wall_s"]
        ratios["rss_largest_vs_smallest"] = rss[-1]["peak_rss_mib"] / rss[0]["peak_rss_mib"]
        targets["rss_flat_within_10pct"] = abs(ratios["rss_largest_vs_smallest"] - 1) <= 0.10

        print("\nratios:")
        if polyg is not None:
            print(f"  poly / Polygraphy throughput : {ratios['poly_vs_polygraphy_throughput']:.2f}x "
                  f"(target >= 3x) {verdict(targets['poly_vs_polygraphy_throughput>=3'])}")
            print(f"  poly / Polygraphy peak RSS   : {ratios['poly_vs_polygraphy_peak_rss']:.2f}")
        print(f"  poly wall / floor            : {ratios['poly_wall_vs_floor']:.2f}x "
              f"(target <= 1.5x) {verdict(targets['poly_wall_vs_floor<=1.5'])}"
              " [whole process: start-up, model load, reading files, comparisons]")
        if "poly_pipeline_vs_floor" in ratios:
            print(f"  poly pipeline / floor        : {ratios['poly_pipeline_vs_floor']:.2f}x"
                  " [the report's elapsed_s, without interpreter start-up; for information]")
        print(f"  RSS({rss[-1]['samples']}) / RSS({rss[0]['samples']})    : "
              f"{ratios['rss_largest_vs_smallest']:.3f} (target within 10%) "
              f"{verdict(targets['rss_flat_within_10pct'])}")

        import onnxruntime as ort

        result = {
            "tool": "tools/bench_validate.py",
            "model": {"ops": "Conv-Relu-Conv-Relu-GlobalAveragePool-Flatten-Gemm-Softmax",
                      "input_shape": list(MODEL_KINDS[args.model][0]), "opset": 17, "ir_version": 10},
            "samples": args.samples, "planted": planted, "rss_sizes": rss_sizes, "quick": args.quick,
            "poly": {k: v for k, v in poly.items() if k != "output_tail"},
            "polygraphy": None if polyg is None else {k: v for k, v in polyg.items() if k != "output_tail"},
            "floor": floor, "rss": rss, "ratios": ratios, "targets_met": targets,
            "checks": {"planted_failures_found": planted_ok, "rss_runs_failures_found": rss_subsets_ok,
                       "polygraphy_failed": None if polyg is None else polyg["rc"] != 0},
            "environment": {"python": platform.python_version(), "machine": platform.machine(),
                            "cpus": os.cpu_count(), "onnxruntime": ort.__version__},
        }
        atomic_write_json(args.out, result)
        print(f"\nwrote {args.out}")
        return 0 if planted_ok and rss_subsets_ok else 1


if __name__ == "__main__":
    sys.exit(main())
