"""
Every NVRTC variant of the on-device statistics kernels compiles, without a GPU: NVRTC is a
library (the nvidia-cuda-nvrtc wheel, found by cuda-bindings), so CI compiles the kernels on any
machine, and any compile error or warning fails a test named by its variant and architecture.

What is compiled, and why not everything at full optimisation: a full compilation of one variant
took 6-13 s to PTX and 35-97 s to a CUBIN on CI's two shared cores (ptxas at full optimisation is
most of it), so 169 variants times 7 architectures would take hours, and the float32 pair alone for
every architecture took 9 minutes of CPU. NVRTC's quick build (``--Ofast-compile=max``: the
front end, NVVM and code generation, few optimisations) takes 0.2-0.5 s to PTX, 0.7-2.5 s to a
CUBIN. So:

- every variant ``dispatch.kernel_variants()`` lists (each ordered pair of the 13 dtypes: bool xor,
  the float32 and float64 arithmetic, the integer differences, the wrapped denominator), to PTX for
  the oldest target architecture, quick;
- each arithmetic (one variant per distinct set of preprocessor switches but the dtypes: 9) to a
  CUBIN, quick, their architectures taken in turn from ``kernel_compile.TARGET_CCS`` (7), so that
  ptxas assembles every arithmetic and every architecture;
- the float32 pair, the common case, to PTX for 8.0 (the oldest with cp.async) at full
  optimisation, as poly compiles it at run time.

The compilations of the list above are marked slow (the test of one variant, of the variant list
and of a broken kernel are not); parametrised, they spread over xdist's workers.
A skip names what cannot run here (no cuda-bindings, no NVRTC, an architecture this NVRTC lacks).
"""

from __future__ import annotations

import io
import itertools

import numpy as np
import pytest

from poly.compare.stats.gpu import dispatch, kernel_compile, kernel_source
from poly.compare.stats.gpu.device_run import DeviceOperand


def _nvrtc_ok() -> bool:
    try:
        from cuda.bindings import nvrtc

        return int(nvrtc.nvrtcVersion()[0]) == 0
    except Exception:  # noqa: BLE001 - a missing module or library, in any of its forms
        return False


needs_nvrtc = pytest.mark.skipif(not _nvrtc_ok(), reason="cuda-bindings' NVRTC (pip install poly-compare[gpu]) "
                                                         "is not installed here")

VARIANTS = dispatch.kernel_variants()
OLDEST_CC = kernel_compile.TARGET_CCS[0]
FULL_OPTIMISATION_CC = (8, 0)
FLOAT32_PAIR = dispatch.kernel_variant(dispatch.DTYPE_CODES["float32"], dispatch.DTYPE_CODES["float32"])


def _arithmetic(v: kernel_source.KernelVariant) -> tuple:
    # what a variant's preprocessor switches select beyond its two dtypes' loads
    return v.f32, v.xor_mode, v.int_diff, v.den_wrap


# the first variant (in kernel_variants' order) of each arithmetic
ARITHMETICS = [next(group) for _, group in itertools.groupby(sorted(VARIANTS, key=_arithmetic), key=_arithmetic)]


# each arithmetic with an architecture, in turn: every one of both is assembled by ptxas once at least
ARCHITECTURE_CHECKS = [(ARITHMETICS[i % len(ARITHMETICS)], kernel_compile.TARGET_CCS[i % len(kernel_compile.TARGET_CCS)])
                       for i in range(max(len(ARITHMETICS), len(kernel_compile.TARGET_CCS)))]


def _pair_id(v: kernel_source.KernelVariant) -> str:
    return f"{kernel_source.DTYPE_NAMES[v.code_a]}-{kernel_source.DTYPE_NAMES[v.code_b]}"


def _arch(cc: tuple[int, int], kind: str = "sm") -> str:
    return f"{kind}_{cc[0]}{cc[1]}"


def _supported(cc: tuple[int, int]) -> None:
    """Skips unless the installed NVRTC compiles for compute capability ``cc``."""
    if _arch(cc) not in kernel_compile.target_archs():
        pytest.skip(f"this NVRTC cannot compile for {_arch(cc)}")


def assert_compiles(variant: kernel_source.KernelVariant, arch: str, *, quick: bool) -> bytes:
    """The image of ``variant`` for ``arch``; fails naming both on a compile error or any
    message in NVRTC's log (its warnings are on by default: poly never passes ``-w``)."""
    try:
        compiled = kernel_compile.compile_variant(variant, arch, quick=quick)
    except kernel_compile.KernelCompileError as err:
        pytest.fail(str(err), pytrace=False)
    assert not compiled.log, f"NVRTC warned compiling variant {variant} for {arch}:\n{compiled.log}"
    assert compiled.image, f"NVRTC returned an empty image for variant {variant} for {arch}"
    return compiled.image


def test_the_variant_list_is_the_one_comparisons_compile():
    # kernel_variants() is what the compile tests build: every dtype pair dispatch accepts, each
    # the variant compare_setup hands to the kernels
    codes = sorted(dispatch.DTYPE_CODES.values())
    assert len(VARIANTS) == len(set(VARIANTS)) == len(codes) ** 2 == 169
    for variant in VARIANTS:
        a = DeviceOperand(0, (4,), (1,), variant.code_a, 1, None)
        b = DeviceOperand(0, (4,), (1,), variant.code_b, 1, None)
        assert dispatch.compare_setup(a, b, 1e-5, 1e-5, False).variant == variant
    # every kind of arithmetic the kernels specialise for is among them
    assert {v.int_diff for v in VARIANTS} == {kernel_source.INT_DIFF_NONE, kernel_source.INT_DIFF_I32,
                                              kernel_source.INT_DIFF_I64, kernel_source.INT_DIFF_U64}
    assert {(v.f32, v.xor_mode, v.den_wrap) for v in VARIANTS} >= {(False, True, False), (True, False, False),
                                                                   (False, False, False), (False, False, True)}
    assert str(dispatch.kernel_variant(3, 4)) == "int32-int64 (float64, integer difference int64, wrapped denominator)"


def test_target_architectures_are_the_documented_ones():
    # ordered oldest first (the PTX of every variant is made for the oldest); 8.0 onwards read
    # through cp.async, 7.5 through plain loads
    assert kernel_compile.TARGET_CCS == tuple(sorted(kernel_compile.TARGET_CCS))
    assert OLDEST_CC == (7, 5) and (8, 0) in kernel_compile.TARGET_CCS


@needs_nvrtc
def test_one_variant_compiles_quickly_with_every_kernel():
    """The quick check (not slow): a syntax error in any kernel file fails `pytest -m "not slow"`."""
    _supported(OLDEST_CC)
    ptx = assert_compiles(FLOAT32_PAIR, _arch(OLDEST_CC, "compute"), quick=True).decode(errors="replace")
    for name in kernel_source.KERNEL_NAMES:
        assert f".entry {name}(" in ptx, f"kernel {name} is missing from the PTX"


@needs_nvrtc
def test_compiling_leaves_python_s_shared_one_byte_objects_alone():
    # NVRTC writes into the buffers it is given; an empty log is 1 byte, and a 1-byte ``bytes`` is
    # CPython's shared object for that byte: writing into it broke every ``b" " * n`` of the process
    # (NumPy's .npy header padding became NUL bytes and every saved array unreadable).
    _supported(OLDEST_CC)
    compiled = kernel_compile.compile_variant(FLOAT32_PAIR, _arch(OLDEST_CC, "compute"), quick=True)
    assert compiled.log == ""
    assert [b for b in range(256) if bytes([b])[0] != b] == []
    buffer = io.BytesIO()
    np.save(buffer, np.zeros(3, np.float32))
    assert b"\x00" not in buffer.getvalue()[10:128], "the .npy header padding holds NUL bytes"


@needs_nvrtc
def test_a_broken_kernel_fails_naming_its_variant_and_architecture(monkeypatch):
    source = kernel_source.kernel_source()
    broken = kernel_source.KernelSource(source.name, source.text + "\nthis is not CUDA;\n", source.headers)
    monkeypatch.setattr(kernel_compile, "kernel_source", lambda: broken)
    variant = dispatch.kernel_variant(dispatch.DTYPE_CODES["int32"], dispatch.DTYPE_CODES["int64"])
    with pytest.raises(pytest.fail.Exception) as failed:
        assert_compiles(variant, "compute_75", quick=True)
    message = str(failed.value)
    assert "int32-int64 (float64, integer difference int64, wrapped denominator)" in message
    assert "for compute_75" in message and "error" in message


@needs_nvrtc
def test_a_kernel_warning_fails_naming_its_variant_and_architecture(monkeypatch):
    # a variable declared and never used: NVRTC compiles it, with warning #177-D in its log
    source = kernel_source.kernel_source()
    warned = kernel_source.KernelSource(
        source.name, source.text + "\n__device__ int poly_unused_local() { int unused; return 0; }\n", source.headers)
    monkeypatch.setattr(kernel_compile, "kernel_source", lambda: warned)
    with pytest.raises(AssertionError) as failed:
        assert_compiles(FLOAT32_PAIR, "compute_75", quick=True)
    message = str(failed.value)
    assert "NVRTC warned compiling variant float32-float32 (float32) for compute_75" in message
    assert "unused" in message


@pytest.mark.slow
@needs_nvrtc
@pytest.mark.parametrize("variant", VARIANTS, ids=_pair_id)
def test_every_variant_compiles_without_warnings(variant):
    _supported(OLDEST_CC)
    assert_compiles(variant, _arch(OLDEST_CC, "compute"), quick=True)


@pytest.mark.slow
@needs_nvrtc
@pytest.mark.parametrize(("variant", "cc"), ARCHITECTURE_CHECKS,
                         ids=[f"{_pair_id(v)}@{_arch(cc)}" for v, cc in ARCHITECTURE_CHECKS])
def test_each_arithmetic_and_architecture_assembles(variant, cc):
    _supported(cc)
    assert_compiles(variant, _arch(cc), quick=True)


@pytest.mark.slow
@needs_nvrtc
def test_the_float32_pair_compiles_at_full_optimisation():
    # the options poly runs its kernels with, NVVM's optimisations included, for the oldest
    # architecture that reads through cp.async
    _supported(FULL_OPTIMISATION_CC)
    ptx = assert_compiles(FLOAT32_PAIR, _arch(FULL_OPTIMISATION_CC, "compute"), quick=False)
    assert b"cp.async.cg.shared.global" in ptx
