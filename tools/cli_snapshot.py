"""
Runs a fixed list of ``poly`` command lines on the bundled example model and records what each
printed and its exit code, or checks that they still print the same.

    python tools/cli_snapshot.py record tests/fixtures/cli_snapshot.json
    python tools/cli_snapshot.py check tests/fixtures/cli_snapshot.json

Output is normalized before it is stored or compared: the working directory becomes ``<TMP>``,
runner names lose their timestamps, and times (``0.47s``, ``1.2 ms``) become ``<T>``. ``check``
prints a unified diff for each command whose output or exit code changed and exits 1 if any did.
Restructuring code must leave every recorded command unchanged.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

MODEL = "model.onnx"  # the bundled example CNN, copied into the working directory

# (name, argv after `poly`); files refer to the working directory
COMMANDS = [
    ("run-two-runners", ["run", MODEL, "--onnxrt", "--onnx-ref"]),
    ("run-tolerances", ["run", MODEL, "--onnxrt", "--onnx-ref", "--atol", "1e-4", "--rtol", "probs:1e-3",
                        "--check-error-stat", "median", "--error-quantile", "0.9"]),
    ("run-mark-all", ["run", MODEL, "--onnxrt", "--onnx-ref", "--onnx-outputs", "mark", "all", "--fail-fast"]),
    ("run-save", ["run", MODEL, "--onnxrt", "--seed", "3", "--iterations", "2", "--save-inputs", "inputs.json",
                  "--save-outputs", "golden.json"]),
    ("run-load", ["run", MODEL, "--onnxrt", "--load-inputs", "inputs.json", "--load-outputs", "golden.json"]),
    ("run-load-fail", ["run", MODEL, "--onnx-ref", "--load-inputs", "inputs.json", "--load-outputs", "golden.json",
                       "--atol", "0", "--rtol", "0", "--check-error-stat", "max"]),
    ("run-indices", ["run", MODEL, "--onnxrt", "--onnx-ref", "--compare-func", "indices"]),
    ("run-distance", ["run", MODEL, "--onnxrt", "--onnx-ref", "--compare-func", "distance_metrics"]),
    ("run-indices-tolerance", ["run", MODEL, "--onnxrt", "--onnx-ref", "--compare-func", "indices", "--index-tolerance", "1"]),
    ("run-validate", ["run", MODEL, "--onnxrt", "--validate", "--input-shapes", "x:[2,3,32,32]"]),
    ("gen-script-run", ["run", MODEL, "--onnxrt", "--onnx-ref", "--gen-script", "-"]),
    ("gen-script-options", ["run", MODEL, "--onnxrt", "--onnx-ref", "--atol", "1e-4", "--rtol", "1e-3",
                            "--check-error-stat", "mean", "--infinities-compare-equal", "--fail-fast",
                            "--val-range", "[0,1]", "--seed", "5", "--iterations", "2",
                            "--onnx-outputs", "mark", "all", "--gen-script", "-"]),
    ("gen-script-load", ["run", MODEL, "--onnxrt", "--load-inputs", "inputs.json", "--load-outputs", "golden.json",
                         "--gen-script", "-"]),
    ("gen-script-distance", ["run", MODEL, "--onnxrt", "--onnx-ref", "--compare-func", "distance_metrics",
                             "--gen-script", "-"]),
    ("gen-script-trt", ["run", MODEL, "--trt", "--onnxrt", "--trt-min-shapes", "x:[1,3,32,32]",
                        "--trt-opt-shapes", "x:[1,3,32,32]", "--trt-max-shapes", "x:[2,3,32,32]",
                        "--gen-script", "-"]),
    ("convert-fp16", ["convert", MODEL, "--fp-to-fp16", "-o", "fp16.onnx"]),
    ("inspect-model", ["inspect", "model", MODEL, "--show", "layers", "attrs"]),
    ("inspect-data", ["inspect", "data", "golden.json", "--show-values"]),
    ("inspect-inputs", ["inspect", "data", "inputs.json"]),
    ("surgeon-sanitize", ["surgeon", "sanitize", MODEL, "--fold-constants", "-o", "folded.onnx"]),
    ("check-lint", ["check", "lint", MODEL]),
    ("data-to-input", ["data", "to-input", "inputs.json", "golden.json", "-o", "merged.json"]),
    ("validate", ["validate", MODEL, "--onnxrt", "--dataset", "inputs.json", "--golden", "golden.json",
                  "--report-json", "report.json"]),
    ("validate-processes", ["validate", MODEL, "--onnxrt", "--dataset", "inputs.json", "--golden",
                            "golden.json", "--processes", "2"]),
    ("err-missing-model", ["run", "nosuch.onnx", "--onnxrt"]),
    ("err-bad-flag", ["run", MODEL, "--onnxrt", "--atol", "abc"]),
    ("err-bad-compare-func", ["run", MODEL, "--onnxrt", "--compare-func", "nosuch"]),
    ("err-no-runner", ["run", MODEL]),
]

_NORMALIZE = [
    (re.compile(r"\d\d/\d\d/\d\d-\d\d:\d\d:\d\d"), "<DATE>"),
    (re.compile(r"\d+(\.\d+)?(e-?\d+)? ?(s|ms|us|sec|seconds)\b"), "<T>"),
    (re.compile(r"\d+(\.\d+)? samples/s"), "<RATE> samples/s"),
    (re.compile(r"\bpid[ =]\d+"), "pid <PID>"),
]


def _normalize(text: str, workdir: str) -> str:
    text = text.replace(workdir, "<TMP>").replace(_poly()[0], "poly")
    for pattern, replacement in _NORMALIZE:
        text = pattern.sub(replacement, text)
    return text


_NUMBER = re.compile(r"-?\d+(\.\d*)?(e[-+]?\d+)?|#+")


def _mask_floats(lines: list[str]) -> list[str]:
    """The output with every number and histogram row replaced by a token, spaces dropped."""
    masked = ("".join(_NUMBER.sub("<N>", line).split()) for line in lines)
    return ["<HISTOGRAM ROW>" if line.startswith("(<N>,<N>)|") else line for line in masked]


def _poly() -> list[str]:
    exe = shutil.which("poly", path=os.path.dirname(sys.executable)) or shutil.which("poly")
    return [exe] if exe else [sys.executable, "-m", "poly.cli.main"]


def run_all(only=None) -> dict[str, dict]:
    example = pathlib.Path(__file__).resolve().parents[1] / "packages/poly-cli/src/poly/cli/examples/example_cnn.onnx"

    results = {}
    with tempfile.TemporaryDirectory(prefix="poly-cli-snapshot-") as workdir:
        shutil.copy(example, pathlib.Path(workdir) / MODEL)
        env = dict(os.environ, NO_COLOR="1", COLUMNS="100")
        for name, argv in COMMANDS:
            if only and name not in only:
                continue
            proc = subprocess.run(_poly() + argv, cwd=workdir, capture_output=True, text=True, env=env,
                                  timeout=600, stdin=subprocess.DEVNULL)
            results[name] = {
                "argv": argv,
                "rc": proc.returncode,
                "output": _normalize(proc.stdout + proc.stderr, workdir).splitlines(),
            }
    return results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[1])
    parser.add_argument("action", choices=["record", "check"])
    parser.add_argument("path", type=pathlib.Path)
    parser.add_argument("--only", nargs="*", help="names of the commands to run (default: all)")
    args = parser.parse_args(argv)
    results = run_all(args.only)
    if args.action == "record":
        args.path.write_text(json.dumps(results, indent=1) + "\n")
        print(f"{len(results)} commands recorded -> {args.path}")
        return 0
    recorded = json.loads(args.path.read_text())
    changed = 0
    noise, noise_names = 0, []
    for name, now in results.items():
        then = recorded.get(name)
        if then is None:
            print(f"{name}: not recorded")
            changed += 1
            continue
        if then["rc"] == now["rc"] and _mask_floats(then["output"]) == _mask_floats(now["output"]):
            if then["output"] != now["output"]:
                noise += 1
                noise_names.append(name)
            continue
        if then["rc"] != now["rc"] or then["output"] != now["output"]:
            changed += 1
            print(f"== {name}: exit {then['rc']} -> {now['rc']}")
            sys.stdout.writelines(
                line + "\n" for line in difflib.unified_diff(then["output"], now["output"], "recorded", "now", lineterm="")
            )
    print(f"{changed} of {len(results)} command(s) changed")
    if noise:
        print(f"{noise} command(s) differ only in numbers ({', '.join(noise_names)}): ONNX-Runtime's "
              "kernels give other last digits on another CPU; not counted as changed")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
