"""
Compiling the on-device statistics kernels with NVRTC and loading them with the CUDA driver.

A variant (``kernel_source.KernelVariant``) of the CUDA files in ``kernels/`` is compiled once per
GPU architecture: its CUBIN is kept in memory per CUDA context and on disk under
``$POLY_CACHE_DIR`` (default ``~/.cache/poly``), in ``gpu_kernels/``, named by the hash of the
source (headers included) and options, the architecture and the NVRTC version, so a later
process loads it without compiling. No CUDA
toolkit is needed beyond what cuda-python (``pip install poly-compare[gpu]``) finds: NVRTC and
the driver.

``compile_variant`` compiles without a GPU (NVRTC is a library): CI compiles every variant with it
for the architectures of ``TARGET_CCS`` (tests/compare/test_gpu_kernel_compile.py).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from poly.compare.stats.gpu.kernel_source import (
    DIGIT_BITS,
    GATHER_STAGE_BYTES,
    HIST_GROUPS,
    KERNEL_NAMES,
    RANGES,
    RING_BYTES,
    SELECT_BITS,
    SELECT_TARGETS,
    STATS_HIST_BYTES,
    KernelVariant,
    kernel_options,
    kernel_source,
)
from poly.core.optional_import import lazy_import

__all__ = ["GpuUnavailableError", "GpuError", "Program", "load_program", "cache_dir", "check", "driver_api",
           "nvrtc_api", "DYNAMIC_SHARED", "TARGET_CCS", "FAST_COMPILE_OPTIONS", "KernelCompileError",
           "CompiledKernels", "compile_variant", "target_archs"]

_GPU_INSTALL = "poly-compare[gpu]"
driver_api = lazy_import("cuda.bindings.driver", install=_GPU_INSTALL, purpose="Comparisons on the GPU")
nvrtc_api = lazy_import("cuda.bindings.nvrtc", install=_GPU_INSTALL, purpose="Comparisons on the GPU")

# Dynamic shared memory of the kernels that take it, at most: the ring of asynchronous copies,
# then the histogram counters.
DYNAMIC_SHARED = {
    "poly_stats": STATS_HIST_BYTES,
    "poly_stats_ranges": STATS_HIST_BYTES,
    "poly_radix_hist": RING_BYTES + HIST_GROUPS * (1 << DIGIT_BITS) * 4,
    "poly_radix_gather": RING_BYTES + GATHER_STAGE_BYTES,
    "poly_keys_hist": HIST_GROUPS * (1 << DIGIT_BITS) * 4,
    "poly_keys_hist_planned": RANGES * (1 << DIGIT_BITS) * 4,
    "poly_select_input": RING_BYTES + SELECT_TARGETS * (1 << SELECT_BITS) * 4,
}


class GpuError(RuntimeError):
    """A CUDA driver call failed."""


class GpuUnavailableError(GpuError):
    """NVRTC or the driver cannot serve on-device statistics here (the comparison runs on the host)."""


def check(result, what: str):
    """The values of a cuda-python call's result tuple, or GpuError naming ``what`` and the error."""
    err, *rest = result if isinstance(result, tuple) else (result,)
    if int(err) != 0:
        raise GpuError(f"{what} failed: {getattr(err, 'name', err)}")
    if not rest:
        return None
    return rest[0] if len(rest) == 1 else tuple(rest)


def cache_dir() -> Path:
    """Where compiled kernels are kept: ``$POLY_CACHE_DIR/gpu_kernels`` or ``~/.cache/poly/gpu_kernels``."""
    root = os.environ.get("POLY_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "poly")
    return Path(root) / "gpu_kernels"


def _nvrtc_version() -> tuple[int, int]:
    try:
        major, minor = check(nvrtc_api.nvrtcVersion(), "nvrtcVersion")
    except (OSError, RuntimeError) as err:  # the NVRTC library is not found
        raise GpuUnavailableError(f"NVRTC is not available: {err}") from err
    return int(major), int(minor)


# The GPU architectures poly compiles its kernels for, as compute capabilities: one of each family
# from Turing to Blackwell (7.5 T4; 8.0 A100; 8.6 / 8.9 Ampere and Ada cards; 9.0 H100 / H200;
# 10.0 B200; 12.0 Blackwell cards). 7.5, the oldest CUDA 13 compiles for, reads through plain
# loads (streaming.cuh's cp.async needs 8.0), so both ways of reading the input are compiled. A
# GPU of another capability compiles its own (``_image_for``); these are what CI compiles for
# (tests/compare/test_gpu_kernel_compile.py), intersected with what the installed NVRTC supports.
TARGET_CCS = ((7, 5), (8, 0), (8, 6), (8, 9), (9, 0), (10, 0), (12, 0))

# NVRTC's quickest compilation (NVRTC 13.0 has it): the front end, NVVM and code generation, with few
# optimisations; 25-50x quicker than a full one to PTX. For compile checks only, never for images run.
FAST_COMPILE_OPTIONS = ("--Ofast-compile=max",)


class KernelCompileError(GpuError):
    """NVRTC rejected a variant of the statistics kernels (its message names the variant, the
    architecture and NVRTC's log)."""


@dataclass(frozen=True)
class CompiledKernels:
    """What NVRTC made of one variant for one architecture: the image (a CUBIN for ``sm_XY``, PTX
    for ``compute_XY``) and NVRTC's log, empty when it had nothing to say (no warning)."""

    image: bytes
    log: str


def target_archs() -> list[str]:
    """The ``sm_XY`` architectures of ``TARGET_CCS`` the installed NVRTC can compile for, oldest first."""
    supported = set(_supported_archs())
    return [f"sm_{major}{minor}" for major, minor in TARGET_CCS if major * 10 + minor in supported]


def _output_buffer(size: int) -> bytearray:
    """A fresh writable buffer for NVRTC to fill. Never ``b" " * size``: NVRTC writes into the buffer
    it is given, and a 1-byte ``bytes`` is CPython's shared ``b" "`` object, which it would turn into
    ``b"\\0"`` for the whole process (every ``b" " * n`` after that, NumPy's .npy header padding among
    them, would be NUL bytes)."""
    return bytearray(int(size))


def _program_log(prog: object) -> str:
    size = check(nvrtc_api.nvrtcGetProgramLogSize(prog), "nvrtcGetProgramLogSize")
    log = _output_buffer(size)
    check(nvrtc_api.nvrtcGetProgramLog(prog, log), "nvrtcGetProgramLog")
    return bytes(log).rstrip(b"\0").decode(errors="replace").strip()


def compile_variant(variant: KernelVariant, arch: str, *, fast: bool = False) -> CompiledKernels:
    """
    Compiles ``variant`` of the kernels for ``arch`` (``sm_XY``: a CUBIN; ``compute_XY``: PTX) with
    the options poly runs them with, and ``FAST_COMPILE_OPTIONS`` when ``fast``. Nothing is cached.

    Raises:
        KernelCompileError: when NVRTC fails, naming the variant, the architecture and NVRTC's log.
    """
    nv = nvrtc_api
    source = kernel_source()
    # the headers go in memory, by the names error_stats.cu includes them by: no include path on disk
    names = [name.encode() for name, _ in source.headers]
    texts = [text.encode() for _, text in source.headers]
    prog = check(nv.nvrtcCreateProgram(source.text.encode(), source.name.encode(), len(texts), texts, names),
                 "nvrtcCreateProgram")
    try:
        options = kernel_options(variant) + [f"--gpu-architecture={arch}", "--fmad=false", "-std=c++17"]
        options += FAST_COMPILE_OPTIONS if fast else ()
        opts = [o.encode() for o in options]
        err = nv.nvrtcCompileProgram(prog, len(opts), opts)[0]
        log = _program_log(prog)
        if int(err) != 0:
            raise KernelCompileError(f"NVRTC could not compile the statistics kernels of variant {variant} "
                                     f"for {arch}: {getattr(err, 'name', err)}\n{log}")
        if arch.startswith("sm_"):
            size = check(nv.nvrtcGetCUBINSize(prog), "nvrtcGetCUBINSize")
            image = _output_buffer(size)
            check(nv.nvrtcGetCUBIN(prog, image), "nvrtcGetCUBIN")
        else:
            size = check(nv.nvrtcGetPTXSize(prog), "nvrtcGetPTXSize")
            image = _output_buffer(size)
            check(nv.nvrtcGetPTX(prog, image), "nvrtcGetPTX")
        return CompiledKernels(bytes(image), log)
    finally:
        nv.nvrtcDestroyProgram(prog)


def _supported_archs() -> list[int]:
    try:
        archs = check(nvrtc_api.nvrtcGetSupportedArchs(), "nvrtcGetSupportedArchs")
        return [int(a) for a in archs]
    except (GpuError, AttributeError):
        return []


def _image_for(variant: KernelVariant, cc: tuple[int, int]) -> bytes:
    options = kernel_options(variant)
    major, minor = _nvrtc_version()
    sm = cc[0] * 10 + cc[1]
    supported = _supported_archs()
    # A GPU newer than this NVRTC gets PTX of the newest architecture it knows (the driver JITs it).
    arch = f"sm_{sm}" if not supported or sm in supported else f"compute_{max(a for a in supported if a <= sm)}"
    digest = hashlib.sha256((kernel_source().fingerprint() + "\0" + " ".join(options)).encode()).hexdigest()[:32]
    path = cache_dir() / f"{digest}-{arch}-nvrtc{major}.{minor}.{'cubin' if arch.startswith('sm_') else 'ptx'}"
    try:
        return path.read_bytes()
    except OSError:
        pass
    image = compile_variant(variant, arch).image
    try:  # the cache is an optimisation: a read-only home directory only costs a compilation
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, delete=False) as tmp:
            tmp.write(image)
        os.replace(tmp.name, path)
    except OSError:
        pass
    return image


class Program:
    """One variant's kernels, loaded in one CUDA context."""

    def __init__(self, image: bytes):
        drv = driver_api
        buf = np.frombuffer(image, dtype=np.uint8).copy()
        self.module = check(drv.cuModuleLoadData(buf.ctypes.data), "cuModuleLoadData")
        self.functions = {name: check(drv.cuModuleGetFunction(self.module, name.encode()), "cuModuleGetFunction")
                          for name in KERNEL_NAMES}
        for name, nbytes in DYNAMIC_SHARED.items():
            check(drv.cuFuncSetAttribute(
                self.functions[name], drv.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                nbytes), "cuFuncSetAttribute")
        self._occupancy: dict[tuple[str, int, int], int] = {}
        # the constant RangeTable the statistics pass reads its predicted ranges from: (address, bytes)
        self.range_table = tuple(int(x) for x in check(drv.cuModuleGetGlobal(self.module, b"poly_plan"),
                                                       "cuModuleGetGlobal(poly_plan)"))

    def blocks_per_sm(self, name: str, threads: int, shared: int) -> int:
        """Blocks of ``threads`` threads (and ``shared`` bytes of dynamic shared memory) of kernel
        ``name`` resident per multiprocessor."""
        key = (name, threads, shared)
        if key not in self._occupancy:
            blocks = check(driver_api.cuOccupancyMaxActiveBlocksPerMultiprocessor(self.functions[name], threads, shared),
                           "cuOccupancyMaxActiveBlocksPerMultiprocessor")
            self._occupancy[key] = max(1, int(blocks))
        return self._occupancy[key]


_PROGRAMS: dict[tuple[int, KernelVariant], Program] = {}
_LOCK = threading.Lock()


def load_program(context: int, cc: tuple[int, int], variant: KernelVariant) -> Program:
    """The loaded kernels of ``variant`` in CUDA context ``context`` (a handle as an int) of a
    device of compute capability ``cc``, compiled or read from the disk cache on first use."""
    key = (context, variant)
    with _LOCK:
        prog = _PROGRAMS.get(key)
        if prog is None:
            prog = Program(_image_for(variant, cc))
            _PROGRAMS[key] = prog
        return prog
