"""
The compiled images of the GPU statistics kernels (``poly.compare.stats.gpu.kernel_images``) and
their compilation ahead (``precompile``), without a GPU: NVRTC is a library.

A first use of a dtype pair compiles the quick build (logged with its duration), keeps it in the
cache and starts the optimised build in a process of its own, whose lock names it; a cached
optimised image is used as it is; a failed background build is reported and not retried; the
precompile command skips what is cached and refuses unknown dtypes. That the background build
ends with the optimised image in the cache and that comparisons move to it is checked on the GPU
machine (tests/compare/test_compare_gpu_stats.py): the optimised build takes a minute of this
machine's CPU.
"""

from __future__ import annotations

import os
import signal
import time

import pytest

from poly.compare.stats.gpu import dispatch, kernel_compile, kernel_images, precompile
from poly.compare.stats.gpu.kernel_source import KernelVariant


def _nvrtc_ok() -> bool:
    try:
        from cuda.bindings import nvrtc

        return int(nvrtc.nvrtcVersion()[0]) == 0 and "sm_75" in kernel_compile.target_archs()
    except Exception:  # noqa: BLE001 - a missing module or library, in any of its forms
        return False


needs_nvrtc = pytest.mark.skipif(not _nvrtc_ok(), reason="cuda-bindings' NVRTC for sm_75 "
                                                         "(pip install poly-compare[gpu]) is not installed here")

FLOAT32 = dispatch.kernel_variant(dispatch.DTYPE_CODES["float32"], dispatch.DTYPE_CODES["float32"])
CC = (7, 5)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("POLY_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv(kernel_images.BUILD_ENV, raising=False)
    started: list[int] = []
    yield started
    for pid in started:  # the background builds this test started: not left compiling
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass


def _builder(path) -> int:
    text = kernel_images.lock_path(path).read_text().strip()
    assert text.isdigit(), f"the lock of a background build holds {text!r}, not a process id"
    return int(text)


def _kill(pid: int) -> None:
    os.killpg(pid, signal.SIGKILL)
    for _ in range(200):  # reaped by the thread that waits for it
        try:
            os.kill(pid, 0)
        except OSError:
            return
        time.sleep(0.05)


def test_every_variant_survives_its_spec():
    for variant in dispatch.kernel_variants():
        assert KernelVariant.from_spec(variant.spec()) == variant
    for bad in ("", "1,2,3", "11,11,1,0,0,x", "99,11,1,0,0,0"):
        with pytest.raises(ValueError, match="not a kernel variant"):
            KernelVariant.from_spec(bad)


@needs_nvrtc
def test_first_use_runs_a_quick_build_and_starts_the_optimised_one(cache, capsys):
    image = kernel_images.kernel_image(FLOAT32, CC)
    pid = _builder(image.optimised_path)
    cache.append(pid)
    assert not image.optimised
    assert image.image[:4] == b"\x7fELF"  # a CUBIN
    quick_path = kernel_images.image_path(FLOAT32, "sm_75", quick=True)
    assert quick_path.read_bytes() == image.image
    assert image.optimised_path == kernel_images.image_path(FLOAT32, "sm_75") != quick_path
    assert not image.optimised_path.exists()
    # the logged line names the pair, the architecture, the duration and the background process
    log = capsys.readouterr().out
    assert "Compiled the GPU statistics kernels for float32-float32 (float32) on sm_75 in " in log
    assert f"quick build; the optimised one is compiling in background process {pid}" in log
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        argv = f.read().split(b"\0")
    assert b"poly.compare.stats.gpu.precompile" in argv and b"--background" in argv
    assert FLOAT32.spec().encode() in argv and b"sm_75" in argv
    assert kernel_images.builder_alive(image.optimised_path)

    # a second use while it runs: the cached quick build, nothing compiled, no second builder
    again = kernel_images.kernel_image(FLOAT32, CC)
    assert again.image == image.image and not again.optimised
    assert _builder(image.optimised_path) == pid
    assert "Compiled" not in capsys.readouterr().out

    # a builder that died without a word (killed): its lock is stale and the next use starts another
    _kill(pid)
    assert not kernel_images.builder_alive(image.optimised_path)
    assert not kernel_images.lock_path(image.optimised_path).exists()
    kernel_images.kernel_image(FLOAT32, CC)
    second = _builder(image.optimised_path)
    cache.append(second)
    assert second != pid


@needs_nvrtc
def test_a_cached_optimised_image_is_used_as_it_is(cache, capsys):
    path = kernel_images.image_path(FLOAT32, "sm_75")
    assert kernel_images.store_image(path, b"optimised image")
    image = kernel_images.kernel_image(FLOAT32, CC)
    assert image.optimised and image.image == b"optimised image"
    assert not kernel_images.lock_path(path).exists()
    assert "Compiled" not in capsys.readouterr().out


@needs_nvrtc
def test_a_failed_background_build_is_reported_and_not_retried(cache, capsys):
    path = kernel_images.image_path(FLOAT32, "sm_75")
    quick = kernel_images.image_path(FLOAT32, "sm_75", quick=True)
    assert kernel_images.store_image(quick, b"quick image")
    kernel_images.log_path(path).write_text("building float32-float32 for sm_75 failed: out of memory\n")
    image = kernel_images.kernel_image(FLOAT32, CC)
    assert image.image == b"quick image" and not image.optimised
    assert not kernel_images.lock_path(path).exists()
    out = capsys.readouterr().out
    assert f"failed to build before (see {kernel_images.log_path(path)}; delete it to try again)" in out


@needs_nvrtc
def test_an_unknown_build_mode_is_named(cache, capsys, monkeypatch):
    monkeypatch.setenv(kernel_images.BUILD_ENV, "later")
    path = kernel_images.image_path(FLOAT32, "sm_75")
    kernel_images.store_image(path, b"optimised image")
    kernel_images.store_image(kernel_images.image_path(FLOAT32, "sm_75", quick=True), b"quick image")
    path.unlink()
    kernel_images.kernel_image(FLOAT32, CC)
    cache.append(_builder(path))
    assert "POLY_GPU_KERNEL_BUILD='later' is not one of background, foreground" in capsys.readouterr().out


def test_precompile_names_what_it_compiles_and_refuses_unknown_dtypes(capsys):
    variants = precompile.variants_of(["float32", "float16"], ["float16:float32", "float32:float32"])
    assert [str(v).split(" ")[0] for v in variants] == ["float32-float32", "float16-float16", "float16-float32"]
    with pytest.raises(SystemExit) as exit_info:
        precompile.main(["--dtypes", "float23"])
    assert exit_info.value.code == 2
    assert "unknown dtype 'float23'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        precompile.main(["--pairs", "float16"])
    assert "--pairs 'float16': expected A:B" in capsys.readouterr().err


@needs_nvrtc
def test_precompile_skips_what_is_cached(cache, capsys):
    kernel_images.store_image(kernel_images.image_path(FLOAT32, "sm_75"), b"optimised image")
    assert precompile.main(["--dtypes", "float32", "--arch", "sm_75"]) == 0
    out = capsys.readouterr().out
    assert "1 image(s) already cached, 0 to compile (1 dtype pair(s) x 1 architecture(s): sm_75)" in out
