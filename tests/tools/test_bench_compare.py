"""tools/bench_compare.py on a small input: --kernel-paths (a fresh process per instruction-set path
this CPU has, a line of figures per path, each path's time against the AVX2 path's), and the whole
run's report with the outputs' own statistics against NumPy's (no timing is asserted)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from poly import _native

TOOL = Path(__file__).resolve().parents[2] / "tools" / "bench_compare.py"


def test_kernel_paths_prints_every_path_of_this_cpu():
    out = subprocess.run([sys.executable, str(TOOL), "--kernel-paths", "--elements", "70000", "--rounds", "2",
                          "--repeat", "1", "--threads", "1", "--dtypes", "float32"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    best = _native.kernel_arch()
    expected = {"avx512": ["avx2", "avx512"], "avx2": ["generic", "avx2"]}.get(best, ["generic"])
    rows = {m.group(1): m.group(2) for m in re.finditer(r"^  (\w+) +([\d.]+x, [\d.]+x)  /", out.stdout, re.M)}
    assert sorted(rows) == sorted(expected), out.stdout
    reference = "avx2" if "avx2" in expected else "generic"
    assert re.search(rf"^  {reference} .*time against {reference}: 1\.00, 1\.00$", out.stdout, re.M), out.stdout


def test_the_report_holds_the_outputs_statistics_against_numpy(tmp_path):
    report = tmp_path / "bench.json"
    out = subprocess.run([sys.executable, str(TOOL), "--elements", "70000", "--repeat", "1", "--threads", "1",
                          "--dtypes", "float32", "--no-polygraphy", "--many-outputs", "20", "--ties-elements", "5000",
                          "--out", str(report)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    saved = json.loads(report.read_text())
    figures = saved["output_statistics"]
    assert list(figures) == ["10000", "70000"], figures  # (sizes above the input's are its size)
    assert all(f["poly_pair_stats_s"] > 0 and f["numpy_over_poly"] > 0 for f in figures.values())
    assert "both outputs' statistics with median and p90/p95/p99" in out.stdout
    tied = saved["tied_output_statistics"]
    assert sorted(tied) == ["one value", "relu", "twelve values"], tied
    assert all(f["poly_pair_stats_s"] > 0 and f["numpy_over_poly"] > 0 for f in tied.values())
    assert "tied outputs (twelve values), 70,000 float32 elements" in out.stdout
