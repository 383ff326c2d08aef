"""
Compiles the optimised GPU statistics kernels ahead, into the cache comparisons read them from.

    python -m poly.compare.stats.gpu.precompile                      # float32, float16, bfloat16; this machine's GPUs
    python -m poly.compare.stats.gpu.precompile --dtypes float32 --pairs float16:float32 --arch sm_90 sm_100

A dtype names the pair of two arrays of that dtype; ``--pairs A:B`` a mixed pair (A the first
array's). Without ``--arch``, the architectures of the GPUs present, or, with none, every
architecture poly targets. Images already cached are skipped; the others are compiled in parallel
(``--jobs``). Run it where an image is built (a container's build step) so that no comparison
waits for NVRTC; ``POLY_CACHE_DIR`` chooses the cache (default ``~/.cache/poly``).

``--background VARIANT ARCH`` is how a comparison runs one optimised build in a process of its own
(``kernel_images``): at low priority, its lock released and its log emptied when it ends.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor

from poly.compare.stats.gpu.cuda_api import check, compute_capability, driver_api
from poly.compare.stats.gpu.kernel_compile import target_archs
from poly.compare.stats.gpu.kernel_images import build_optimised, image_path, lock_path, log_path
from poly.compare.stats.gpu.kernel_source import DTYPE_NAMES, KernelVariant

__all__ = ["main", "variants_of", "present_archs", "DEFAULT_DTYPES"]

DEFAULT_DTYPES = ("float32", "float16", "bfloat16")


def variants_of(dtypes: list[str], pairs: list[str]) -> list[KernelVariant]:
    """The variants comparing each dtype of ``dtypes`` with itself and each ``A:B`` of ``pairs``;
    ValueError naming an unknown dtype."""
    from poly.compare.stats.gpu.dispatch import DTYPE_CODES, kernel_variant

    def code(name: str) -> int:
        if name not in DTYPE_CODES:
            raise ValueError(f"unknown dtype {name!r}: one of {', '.join(DTYPE_NAMES)}")
        return DTYPE_CODES[name]

    wanted = [(code(d), code(d)) for d in dtypes]
    for pair in pairs:
        a, sep, b = pair.partition(":")
        if not sep:
            raise ValueError(f"--pairs {pair!r}: expected A:B, e.g. float16:float32")
        wanted.append((code(a), code(b)))
    return list(dict.fromkeys(kernel_variant(a, b) for a, b in wanted))


def present_archs() -> list[str]:
    """The ``sm_XY`` of each GPU present (empty without a driver or a GPU)."""
    drv = driver_api
    try:
        check(drv.cuInit(0), "cuInit")
        count = check(drv.cuDeviceGetCount(), "cuDeviceGetCount")
        archs = []
        for ordinal in range(int(count)):
            major, minor = compute_capability(check(drv.cuDeviceGet(ordinal), "cuDeviceGet"))
            archs.append(f"sm_{major}{minor}")
        return list(dict.fromkeys(archs))
    except Exception:  # noqa: BLE001 - no driver library, no GPU, an old driver: in any form, none present
        return []


def _build(spec: str, arch: str) -> tuple[str, str, float]:
    _, seconds = build_optimised(KernelVariant.from_spec(spec), arch)
    return spec, arch, seconds


def _background(spec: str, arch: str) -> int:
    variant = KernelVariant.from_spec(spec)
    path = image_path(variant, arch)
    lock, log = lock_path(path), log_path(path)
    try:
        os.nice(10)
    except OSError:
        pass
    try:
        build_optimised(variant, arch)
    except BaseException as err:  # noqa: BLE001 - kept in the log the next comparison reports
        print(f"building {variant} for {arch} failed: {err}", file=sys.stderr)
        return 1
    finally:
        try:
            if lock.read_text().strip() == str(os.getpid()):
                lock.unlink()
        except OSError:
            pass
    try:
        os.truncate(log, 0)
        log.unlink()
    except OSError:
        pass
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m poly.compare.stats.gpu.precompile",
                                     description="Compile poly's optimised GPU statistics kernels into the cache "
                                                 "ahead of the comparisons that use them.")
    parser.add_argument("--dtypes", nargs="*", default=None, metavar="DTYPE",
                        help=f"dtypes whose same-dtype pair to compile (default: {' '.join(DEFAULT_DTYPES)}; "
                             f"any of {', '.join(DTYPE_NAMES)})")
    parser.add_argument("--pairs", nargs="*", default=[], metavar="A:B",
                        help="mixed pairs to compile too, the first array's dtype first (e.g. float16:float32)")
    parser.add_argument("--arch", nargs="*", default=None, metavar="sm_XY",
                        help="architectures to compile for (default: the GPUs present, else every one poly targets)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help="compilations run at once (default: the number of CPUs)")
    parser.add_argument("--background", nargs=2, metavar=("VARIANT", "ARCH"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.background:
        return _background(*args.background)
    try:
        dtypes = list(DEFAULT_DTYPES) if args.dtypes is None and not args.pairs else (args.dtypes or [])
        variants = variants_of(dtypes, args.pairs)
    except ValueError as err:
        parser.error(str(err))
    if not variants:
        parser.error("nothing to compile: name --dtypes or --pairs")
    archs = args.arch or present_archs() or target_archs()
    if args.jobs < 1:
        parser.error(f"--jobs {args.jobs}: expected 1 or more")
    todo = [(v, a) for v in variants for a in archs if not image_path(v, a).exists()]
    print(f"{len(variants) * len(archs) - len(todo)} image(s) already cached, {len(todo)} to compile "
          f"({len(variants)} dtype pair(s) x {len(archs)} architecture(s): {' '.join(archs)})")
    start = time.perf_counter()
    with ProcessPoolExecutor(max_workers=min(args.jobs, max(len(todo), 1))) as pool:
        futures = [pool.submit(_build, v.spec(), a) for v, a in todo]
        failed = 0
        for future in futures:
            try:
                spec, arch, seconds = future.result()
                print(f"  {KernelVariant.from_spec(spec)} for {arch}: {seconds:.1f} s")
            except Exception as err:  # noqa: BLE001 - one variant's failure is reported, the rest go on
                failed += 1
                print(f"  failed: {err}", file=sys.stderr)
    print(f"done in {time.perf_counter() - start:.1f} s; cache: {image_path(variants[0], archs[0]).parent}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
