"""
Compiling the on-device statistics kernels with NVRTC: one variant (``kernel_source.KernelVariant``)
for one architecture, with nothing cached (``kernel_images`` keeps what is compiled).

NVRTC is a library (the nvidia-cuda-nvrtc wheel cuda-bindings finds), so compiling needs no GPU:
CI compiles every variant for the architectures of ``TARGET_CCS`` (tests/compare/test_gpu_kernel_compile.py).
Two builds of a variant: the optimised one poly runs, and the quick one (``QUICK_OPTIONS``: NVRTC's
fastest compilation, 25-50x quicker) that serves a comparison while the optimised one is built.
"""

from __future__ import annotations

from dataclasses import dataclass

from poly.compare.stats.gpu.cuda_api import GpuError, GpuUnavailableError, check, nvrtc_api
from poly.compare.stats.gpu.kernel_source import KernelVariant, kernel_options, kernel_source

__all__ = ["TARGET_CCS", "QUICK_OPTIONS", "KernelCompileError", "CompiledKernels", "compile_variant", "target_archs",
           "supported_archs", "nvrtc_version", "quick_build_supported"]

# The GPU architectures poly compiles its kernels for, as compute capabilities: one of each family
# from Turing to Blackwell (7.5 T4; 8.0 A100; 8.6 / 8.9 Ampere and Ada cards; 9.0 H100 / H200;
# 10.0 B200; 12.0 Blackwell cards). 7.5, the oldest CUDA 13 compiles for, reads through plain
# loads (streaming.cuh's cp.async needs 8.0), so both ways of reading the input are compiled. A
# GPU of another capability compiles its own; these are what CI compiles for
# (tests/compare/test_gpu_kernel_compile.py), intersected with what the installed NVRTC supports.
TARGET_CCS = ((7, 5), (8, 0), (8, 6), (8, 9), (9, 0), (10, 0), (12, 0))

# NVRTC's quickest compilation (NVRTC 13.0 has it): the front end, NVVM and code generation with few
# optimisations. 1-2 s for a variant where the optimised build takes 20-60 s; its kernels compute the
# same values (the same source, ``--fmad=false`` in both), more slowly.
QUICK_OPTIONS = ("--Ofast-compile=max",)
_QUICK_SINCE = (13, 0)


class KernelCompileError(GpuError):
    """NVRTC rejected a variant of the statistics kernels (its message names the variant, the
    architecture and NVRTC's log)."""


@dataclass(frozen=True)
class CompiledKernels:
    """What NVRTC made of one variant for one architecture: the image (a CUBIN for ``sm_XY``, PTX
    for ``compute_XY``) and NVRTC's log, empty when it had nothing to say (no warning)."""

    image: bytes
    log: str


def nvrtc_version() -> tuple[int, int]:
    """The installed NVRTC's (major, minor); GpuUnavailableError when it cannot be loaded."""
    try:
        major, minor = check(nvrtc_api.nvrtcVersion(), "nvrtcVersion")
    except (OSError, RuntimeError) as err:  # the NVRTC library is not found
        raise GpuUnavailableError(f"NVRTC is not available: {err}") from err
    return int(major), int(minor)


def quick_build_supported() -> bool:
    """Whether the installed NVRTC has the quick build's options."""
    return nvrtc_version() >= _QUICK_SINCE


def supported_archs() -> list[int]:
    """The architectures (``XY`` of ``sm_XY``) the installed NVRTC compiles for; empty if it cannot say."""
    try:
        archs = check(nvrtc_api.nvrtcGetSupportedArchs(), "nvrtcGetSupportedArchs")
        return [int(a) for a in archs]
    except (GpuError, AttributeError):
        return []


def target_archs() -> list[str]:
    """The ``sm_XY`` architectures of ``TARGET_CCS`` the installed NVRTC can compile for, oldest first."""
    supported = set(supported_archs())
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


def compile_variant(variant: KernelVariant, arch: str, *, quick: bool = False) -> CompiledKernels:
    """
    Compiles ``variant`` of the kernels for ``arch`` (``sm_XY``: a CUBIN; ``compute_XY``: PTX) with
    the options poly runs them with, and ``QUICK_OPTIONS`` when ``quick``. Nothing is cached.

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
        options += QUICK_OPTIONS if quick else ()
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
