#!/usr/bin/env python3
"""Compares two saved result files (.npz, one array per output) with poly's native error
statistics and prints, per output, what Polygraphy's simple comparison reports.

    uv run python tools/compare_saved.py examples/outputs_fp32.npz examples/outputs_fp16.npz

Exit status: 0 when every output passes, 1 when one fails, 2 for bad input.
(`poly run --load-outputs` supersedes this once poly-cli lands.)
"""

from __future__ import annotations

import argparse
import sys
import zipfile
from pathlib import Path

import numpy as np

from poly.compare import error_stats


def load_outputs(path: str) -> dict[str, np.ndarray]:
    p = Path(path)
    if not p.is_file():
        raise SystemExit(_usage_error(f"{path}: no such file"))
    try:
        with np.load(p, allow_pickle=False) as data:  # a data file never runs code
            return {name: data[name] for name in data.files}
    except (ValueError, OSError, zipfile.BadZipFile, EOFError) as err:
        raise SystemExit(_usage_error(f"{path}: not a readable .npz file ({err})")) from None


def _usage_error(msg: str) -> int:
    print(f"[E] {msg}", file=sys.stderr)
    return 2


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("reference", help=".npz of the reference run (relative differences divide by it)")
    parser.add_argument("candidate", help=".npz of the run under test")
    parser.add_argument("--atol", type=float, default=1e-5, help="absolute tolerance (default 1e-5)")
    parser.add_argument("--rtol", type=float, default=1e-5, help="relative tolerance (default 1e-5)")
    parser.add_argument("--error-quantile", type=float, action="append", default=None,
                        help="also report this quantile of the errors (repeatable)")
    args = parser.parse_args(argv)

    ref = load_outputs(args.reference)
    cand = load_outputs(args.candidate)
    qs = tuple(args.error_quantile or (0.9, 0.99))
    failed = []
    for name, b in ref.items():
        if name not in cand:
            print(f"[W] Output: '{name}' is missing from {args.candidate}; skipping")
            continue
        a = cand[name]
        if a.shape != b.shape:
            print(f"[E] Output: '{name}': shape {a.shape} in {args.candidate} differs from {b.shape}")
            failed.append(name)
            continue
        s = error_stats(a, b, atol=args.atol, rtol=args.rtol, quantiles=qs)
        print(f"[I] Comparing Output: '{name}' (dtype={a.dtype}, shape={a.shape}) with '{name}' (dtype={b.dtype}, shape={b.shape})")
        for label, v in (("candidate", s.a), ("reference", s.b)):
            print(f"[I]     {label:9s} | Stats: mean={v.mean:.5g}, std-dev={v.std:.5g}, var={v.var:.5g}, "
                  f"median={v.median:.5g}, min={v.min:.5g} at {v.argmin}, max={v.max:.5g} at {v.argmax}, "
                  f"avg-magnitude={v.mean_abs:.5g}")
        for label, d in (("Absolute Difference", s.absdiff), ("Relative Difference", s.reldiff)):
            qtext = ", ".join(f"p{q * 100:g}={v:.5g}" for q, v in d.quantiles.items())
            print(f"[I]     {label} | Stats: mean={d.mean:.5g}, std-dev={d.std:.5g}, var={d.var:.5g}, "
                  f"median={d.median:.5g}, min={d.min:.5g} at {d.argmin}, max={d.max:.5g} at {d.argmax}, {qtext}")
        print(f"[I]     Distance: L2={s.l2:.5g}, cosine={s.cosine:.8g} | Quality: PSNR={s.psnr:.4g} dB, SNR={s.snr:.4g} dB")
        ok = s.mismatches == 0
        verdict = "PASSED" if ok else f"FAILED ({s.mismatches} of {s.size} elements exceed atol={args.atol:g} and rtol={args.rtol:g})"
        print(f"[I]     {verdict} | Output: '{name}' | Difference is within tolerance"
              if ok else f"[E]     {verdict} | Output: '{name}'")
        if not ok:
            failed.append(name)
    if failed:
        print(f"[E] FAILED | Mismatched outputs: {failed}")
        return 1
    print(f"[I] PASSED | All {len(ref)} outputs matched")
    return 0


if __name__ == "__main__":
    sys.exit(main())
