"""tools/bench_validate.py at tiny sizes: every figure present and positive, the planted bad
samples found by `poly validate`."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

TOOL = Path(__file__).resolve().parents[2] / "tools" / "bench_validate.py"

pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    importlib.util.find_spec("polygraphy") is None or importlib.util.find_spec("onnxruntime") is None,
    reason="the benchmark compares against Polygraphy on ONNX-Runtime: polygraphy or onnxruntime is not importable",
)]


def test_bench_validate_tiny(tmp_path):
    out = tmp_path / "res" / "bench.json"
    proc = subprocess.run(
        [sys.executable, str(TOOL), "--samples", "20", "--rss-sizes", "20,40", "--quick", "--planted", "3",
         "--workdir", str(tmp_path / "work"), "--out", str(out)],
        capture_output=True, text=True, timeout=180,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    res = json.loads(out.read_text())

    assert res["samples"] == 20 and len(res["planted"]) == 3
    assert res["poly"]["failed_indices"] == res["planted"]
    assert res["poly"]["report_samples"] == 20
    assert res["checks"] == {"planted_failures_found": True, "rss_runs_failures_found": True,
                             "polygraphy_failed": True}
    for section in ("poly", "polygraphy", "floor"):
        assert res[section]["wall_s"] > 0 and res[section]["samples_per_s"] > 0, section
    for section in ("poly", "polygraphy"):
        assert res[section]["peak_rss_mib"] > 0, section
    assert [r["samples"] for r in res["rss"]] == [20, 40]
    assert all(r["peak_rss_mib"] > 0 for r in res["rss"])
    for key in ("poly_vs_polygraphy_throughput", "poly_vs_polygraphy_peak_rss", "poly_wall_vs_floor",
                "rss_largest_vs_smallest"):
        assert res["ratios"][key] > 0, key
    assert set(res["targets_met"]) == {"poly_vs_polygraphy_throughput>=3", "poly_wall_vs_floor<=1.5",
                                       "rss_flat_within_10pct"}
    assert "MISSED" in proc.stdout or "met" in proc.stdout
    assert "== planted" in proc.stdout and ": OK" in proc.stdout
