"""
The CUDA C++ source of the on-device error statistics, as NVRTC gets it, and the sizes the host
shares with it.

The source lives in ``kernels/`` beside this module, shipped as package data: ``error_stats.cu``
(the translation unit, which lists the kernels) and the ``.cuh`` headers it includes, among them
``limits.cuh`` (the sizes both sides use) and ``layouts.cuh`` (every structure the host reads or
writes; device_run's and predicted_ranges' ctypes and NumPy layouts mirror it).
``kernel_source()`` reads them with ``importlib.resources``; NVRTC is handed the ``.cu`` text with
the headers as in-memory includes (program_cache), so no include path on disk is needed.

One source serves every dtype pair: ``kernel_options`` turns a pair into preprocessor
definitions, so each compiled variant has its loads and its difference arithmetic fixed at
compile time (contiguity, ``infinities_compare_equal`` and the histogram are run-time flags,
so that a pair compiles once). The definitions mirror the CPU engine's
(poly-core's native/src: element loads, ``CompareConfig``, the float32/float64/integer
differences, the order-preserving keys).

The module constants below (``FIRST_BITS``, ``RING_BYTES``...) are read from ``limits.cuh`` when
this module is imported: a size is written once, in the header, and the kernels and the host's
launch sizing cannot disagree.
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass
from importlib import resources

__all__ = ["KernelSource", "kernel_source", "KernelVariant", "kernel_options", "read_limits", "LIMITS",
           "KERNEL_DIR", "MAIN_FILE", "DIGIT_BITS", "FIRST_BITS", "MAX_GROUPS", "HIST_GROUPS", "MAX_DIMS",
           "THREADS", "STAGES", "RING_BYTES", "STATS_HIST_BYTES", "GATHER_STAGE_BYTES", "GATHER_RESERVE_BYTES",
           "RANGES", "PLAN_RANKS", "PLAN_BLOCKS", "SELECT_TARGETS", "SELECT_BITS", "SELECT_PER_SLOT", "KERNEL_NAMES",
           "INT_DIFF_NONE", "INT_DIFF_I32", "INT_DIFF_I64", "INT_DIFF_U64", "DTYPE_NAMES"]

KERNEL_DIR = "kernels"  # the folder of the CUDA files, beside this module
MAIN_FILE = "error_stats.cu"  # the translation unit NVRTC compiles; the folder's .cuh files are its headers
_LIMITS_FILE = "limits.cuh"

_DEFINE = re.compile(r"^\s*#\s*define\s+(POLY_\w+)\s+(.+?)\s*$")
_COMMENTS = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)


def _kernel_dir():
    return resources.files(__package__).joinpath(KERNEL_DIR)


def _evaluate(node: ast.AST, known: dict[str, int], name: str) -> int:
    """An integer expression of a ``#define``: numbers, earlier POLY_ names, + - * / << >>, with
    C's truncating integer division."""
    if isinstance(node, ast.Expression):
        return _evaluate(node.body, known, name)
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.Name) and node.id in known:
        return known[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_evaluate(node.operand, known, name)
    if isinstance(node, ast.BinOp):
        a, b = _evaluate(node.left, known, name), _evaluate(node.right, known, name)
        if isinstance(node.op, ast.Div):
            q = abs(a) // abs(b)
            return q if (a >= 0) == (b >= 0) else -q
        ops = {ast.Add: lambda: a + b, ast.Sub: lambda: a - b, ast.Mult: lambda: a * b,
               ast.LShift: lambda: a << b, ast.RShift: lambda: a >> b}
        if type(node.op) in ops:
            return ops[type(node.op)]()
    raise ValueError(f"{_LIMITS_FILE}: {name} is not an integer expression of earlier POLY_ definitions")


def read_limits(text: str) -> dict[str, int]:
    """The value of each ``#define POLY_NAME expression`` of a header's ``text``, in order."""
    values: dict[str, int] = {}
    for line in _COMMENTS.sub("", text).splitlines():
        match = _DEFINE.match(line)
        if match is None or match.group(1).endswith("_CUH"):  # (the include guard)
            continue
        name, expr = match.groups()
        values[name] = _evaluate(ast.parse(expr, mode="eval"), values, name)
    return values


LIMITS = read_limits(_kernel_dir().joinpath(_LIMITS_FILE).read_text(encoding="utf-8"))

FIRST_BITS = LIMITS["POLY_FIRST_BITS"]  # key bits counted by the statistics pass
DIGIT_BITS = LIMITS["POLY_DIGIT_BITS"]  # later radix digits
MAX_GROUPS = LIMITS["POLY_MAX_GROUPS"]  # groups per gather or gathered-keys launch
HIST_GROUPS = LIMITS["POLY_HIST_GROUPS"]  # groups per histogram pass over the input
MAX_DIMS = LIMITS["POLY_MAX_DIMS"]  # dimensions of a strided view after collapsing
THREADS = LIMITS["POLY_THREADS"]  # threads per block of every kernel
STAGES = LIMITS["POLY_STAGES"]  # chunks of each array in flight per thread (the asynchronous-copy ring)
RING_BYTES = LIMITS["POLY_RING_BYTES"]  # shared memory of the ring
STATS_HIST_BYTES = LIMITS["POLY_STATS_HIST_BYTES"]  # the statistics pass's, with its first-digit histograms
GATHER_STAGE_BYTES = LIMITS["POLY_GATHER_STAGE_BYTES"]  # the gather's staging of keys per warp and stream
GATHER_RESERVE_BYTES = LIMITS["POLY_RESERVE_BYTES"]  # the run of a stream's buffer a gathering warp reserves
RANGES = LIMITS["POLY_RANGES"]  # predicted ranges per stream (absdiff, reldiff)
PLAN_RANKS = LIMITS["POLY_PLAN_RANKS"]  # ranks per stream whose predicted ranges the device plans
PLAN_BLOCKS = LIMITS["POLY_PLAN_BLOCKS"]  # blocks per stream of the device's plan
SELECT_TARGETS = LIMITS["POLY_SEL_TARGETS"]  # ranks a device-side select narrows at once
SELECT_BITS = LIMITS["POLY_SELECT_BITS"]  # key bits each pass of a device-side select counts
SELECT_PER_SLOT = LIMITS["POLY_SEL_PER_SLOT"]  # its targets per shared histogram

# The kernels of error_stats.cu, each looked up by name in every loaded variant.
KERNEL_NAMES = ("poly_stats", "poly_stats_ranges", "poly_merge_parts", "poly_radix_hist", "poly_radix_gather",
                "poly_keys_hist", "poly_keys_collect", "poly_select_first",
                "poly_select_input", "poly_sample", "poly_plan_ranges", "poly_range_seed", "poly_range_pass",
                "poly_count_zeros")

# Integer differences as poly's CPU engine forms them (kernel.hpp's IntDiff).
INT_DIFF_NONE, INT_DIFF_I32, INT_DIFF_I64, INT_DIFF_U64 = 0, 1, 2, 3


@dataclass(frozen=True)
class KernelSource:
    """The translation unit NVRTC compiles (``name``, ``text``) and the headers it may include,
    as (include name, text) pairs."""

    name: str
    text: str
    headers: tuple[tuple[str, str], ...]

    def fingerprint(self) -> str:
        """All of the source, headers included, as one string (what a compiled image is keyed by)."""
        parts = [self.name, self.text] + [part for header in self.headers for part in header]
        return "\0".join(parts)


@functools.cache
def kernel_source() -> KernelSource:
    """The CUDA files of ``kernels/``, read once from the package's data."""
    folder = _kernel_dir()
    headers = sorted((entry.name, entry.read_text(encoding="utf-8")) for entry in folder.iterdir()
                     if entry.name.endswith(".cuh"))
    return KernelSource(MAIN_FILE, folder.joinpath(MAIN_FILE).read_text(encoding="utf-8"), tuple(headers))


# The dtypes the kernels load, by their code (a variant's POLY_DTA / POLY_DTB; elements.cuh's order).
DTYPE_NAMES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
               "bfloat16", "float32", "float64")
_INT_DIFF_NAMES = {INT_DIFF_I32: "int32", INT_DIFF_I64: "int64", INT_DIFF_U64: "uint64"}


@dataclass(frozen=True)
class KernelVariant:
    """What one compiled variant is specialised for."""

    code_a: int  # dtype codes (DTYPE_NAMES order: bool, int8..int64, uint8..uint64, f16, bf16, f32, f64)
    code_b: int
    f32: bool
    xor_mode: bool
    int_diff: int
    den_wrap: bool

    def __str__(self) -> str:
        """The dtype pair and its arithmetic, e.g. ``int32-int64 (float64, integer difference int64)``:
        how compile errors and the kernel-compile tests name a variant."""
        mode = ["bool xor" if self.xor_mode else ("float32" if self.f32 else "float64")]
        if self.int_diff in _INT_DIFF_NAMES:
            mode.append(f"integer difference {_INT_DIFF_NAMES[self.int_diff]}")
        if self.den_wrap:
            mode.append("wrapped denominator")
        return f"{DTYPE_NAMES[self.code_a]}-{DTYPE_NAMES[self.code_b]} ({', '.join(mode)})"

    def spec(self) -> str:
        """The variant as a short string (``11,11,1,0,0,0``) that ``from_spec`` reads back: how a
        background build is told what to compile."""
        return ",".join(str(int(x)) for x in (self.code_a, self.code_b, self.f32, self.xor_mode, self.int_diff,
                                              self.den_wrap))

    @classmethod
    def from_spec(cls, text: str) -> KernelVariant:
        """The variant ``spec()`` wrote; ValueError for any other text."""
        parts = text.split(",")
        if len(parts) != 6 or not all(p.strip().isdigit() for p in parts):
            raise ValueError(f"not a kernel variant: {text!r} (expected six comma-separated integers)")
        a, b, f32, xor, int_diff, den_wrap = (int(p) for p in parts)
        if not (0 <= a < len(DTYPE_NAMES) and 0 <= b < len(DTYPE_NAMES)):
            raise ValueError(f"not a kernel variant: {text!r} (dtype codes are 0-{len(DTYPE_NAMES) - 1})")
        return cls(a, b, bool(f32), bool(xor), int_diff, bool(den_wrap))


def kernel_options(v: KernelVariant) -> list[str]:
    """NVRTC options (preprocessor definitions) of one variant; the sizes come from limits.cuh."""
    flags = {
        "POLY_DTA": v.code_a, "POLY_DTB": v.code_b, "POLY_F32": int(v.f32), "POLY_XOR": int(v.xor_mode),
        "POLY_INT_DIFF": v.int_diff, "POLY_DEN_WRAP": int(v.den_wrap),
    }
    return [f"-D{k}={int(val)}" for k, val in flags.items()]
