"""Damaged datasets and golden outputs read by `poly validate`. Validation streams a dataset and
skips samples it cannot read, so a damaged file ends differently from other commands: exit 1
with the sample reported as unreadable (on stdout, naming the file and what is wrong) and the
JSON report complete; stderr carries only the progress line, or one error line naming the file."""

from __future__ import annotations

import json
import os

from fixtures import corruption
from fixtures.cli_outcome import UNEXPECTED_MARK, problem
from fixtures.fuzz_profiles import fuzz_settings
from hypothesis import given
from hypothesis import strategies as st

PROGRESS = "[I] validate |"


def validated(result, path, allow_success=True):
    """Why ``result`` is not a clean end of `poly validate` on the damaged ``path``, or None."""
    name = os.path.basename(path)
    errors = [line for line in result.stderr.splitlines() if line.strip() and not line.startswith(PROGRESS)]
    if errors or result.exception is not None and not isinstance(result.exception, SystemExit):
        return problem(result, path, allow_success=allow_success)
    if "Traceback" in result.output or UNEXPECTED_MARK in result.output:
        return "traceback or unexplained exception:\n" + result.output[-2000:]
    if result.exit_code == 0:
        return None if allow_success else "exit 0 for a damaged file"
    if result.exit_code != 1:
        return f"exit code {result.exit_code}"
    unreadable = [line for line in result.stdout.splitlines() if line.startswith("[W] Unreadable sample")]
    if unreadable:
        return None if all(name in line and line.count(":") >= 2 for line in unreadable) else (
            "an unreadable sample is reported without its file or reason:\n" + "\n".join(unreadable))
    return None if "FAILED" in result.stdout else "exit 1 without a reason:\n" + result.output[-2000:]


def _report_is_complete(work):
    report = os.path.join(work, "report.json")
    assert os.path.exists(report), "validate wrote no report"
    with open(report) as f:
        assert "samples" in json.dumps(json.load(f))


@given(data=st.data())
@fuzz_settings(60)
def test_damaged_dataset_file(seeds, damaged, data):
    blob = data.draw(st.one_of(corruption.corrupted_bytes(seeds["inputs.npz"].read_bytes()), corruption.huge_npz()))
    result = damaged(blob, "sample.npz",
                     lambda path, work: ["validate", seeds["identity.onnx"], "--onnxrt", "--dataset", path,
                                         "--golden", seeds["outputs.npz"], "--report-json", f"{work}/report.json"],
                     outputs=["report.json"], check=validated)
    assert result.exit_code in (0, 1)


@given(data=st.data())
@fuzz_settings(60)
def test_damaged_dataset_directory_sample(seeds, damaged, data):
    blob = data.draw(corruption.corrupted_json(json.loads(seeds["inputs.json"].read_text())))

    def args(path, work):
        return ["validate", seeds["identity.onnx"], "--onnxrt", "--dataset", os.path.dirname(path),
                "--golden", f"{work}/golden", "--report-json", f"{work}/report.json"]

    damaged(blob, "data/sample.json", args, outputs=["report.json"], check=validated,
            extra_files={"golden/sample.npz": seeds["outputs.npz"].read_bytes()})


@given(data=st.data())
@fuzz_settings(60)
def test_damaged_golden_file(seeds, damaged, data):
    blob = data.draw(corruption.corrupted_json(json.loads(seeds["outputs.json"].read_text())))
    damaged(blob, "golden.json",
            lambda path, work: ["validate", seeds["identity.onnx"], "--onnxrt", "--dataset", seeds["inputs.npz"],
                                "--golden", path, "--report-json", f"{work}/report.json"],
            outputs=["report.json"], check=validated)


def test_unreadable_sample_is_reported_with_its_reason(seeds, damaged):
    result = damaged(seeds["inputs.npz"].read_bytes()[:100], "sample.npz",
                     lambda path, work: ["validate", seeds["identity.onnx"], "--onnxrt", "--dataset", path,
                                         "--golden", seeds["outputs.npz"], "--report-json", f"{work}/report.json"],
                     outputs=["report.json"], check=validated, allow_success=False)
    assert result.exit_code == 1
    line = next(line for line in result.stdout.splitlines() if "Unreadable sample" in line)
    assert "sample.npz" in line and "not a valid .npz archive" in line
