"""
The compiled images of the statistics kernels: kept on disk, and never waited for longer than a
quick build.

An optimised build of one variant (a dtype pair) takes NVRTC 20-60 s, a quick one 1-2 s
(``kernel_compile``). The first comparison of a variant on a machine therefore runs on a quick build
and starts the optimised one in a background process of lower priority, which writes it to the
cache; comparisons use it from when it is there (the same process included: ``program_cache``
looks for it before each comparison that still runs on a quick build). Images are kept under
``$POLY_CACHE_DIR`` (default ``~/.cache/poly``), in ``gpu_kernels/``, named by the hash of the
source (headers included) and options, the architecture and the NVRTC version; a read-only cache
only costs compilations. ``python -m poly.compare.stats.gpu.precompile`` fills the cache ahead
(in a container's build, say), and ``POLY_GPU_KERNEL_BUILD=foreground`` makes a process build the
optimised image itself and wait for it (the behaviour before quick builds).

Every compilation is logged (INFO) with what was built, for which architecture and how long it
took.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from poly.compare.stats.gpu.kernel_compile import (
    QUICK_OPTIONS,
    compile_variant,
    nvrtc_version,
    quick_build_supported,
    supported_archs,
)
from poly.compare.stats.gpu.kernel_source import KernelVariant, kernel_options, kernel_source
from poly.core import G_LOGGER, LogMode

__all__ = ["BUILD_ENV", "KernelImage", "cache_dir", "arch_for", "image_path", "kernel_image", "build_optimised",
           "store_image", "builder_alive", "lock_path", "log_path"]

BUILD_ENV = "POLY_GPU_KERNEL_BUILD"  # "background" (the default) or "foreground"
_BUILDS = ("background", "foreground")
_STALE_EMPTY_LOCK_S = 60.0  # a lock file still without a process id after this long is left over


@dataclass(frozen=True)
class KernelImage:
    """An image to load (``image``), whether it is the optimised build, and where the optimised
    build is (or will be) kept."""

    image: bytes
    optimised: bool
    optimised_path: Path


def cache_dir() -> Path:
    """Where compiled kernels are kept: ``$POLY_CACHE_DIR/gpu_kernels`` or ``~/.cache/poly/gpu_kernels``."""
    root = os.environ.get("POLY_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "poly")
    return Path(root) / "gpu_kernels"


def arch_for(cc: tuple[int, int]) -> str:
    """What to compile for a GPU of compute capability ``cc``: ``sm_XY``, or, for a GPU newer than
    the installed NVRTC, PTX of the newest architecture it knows (``compute_XY``; the driver
    compiles it)."""
    sm = cc[0] * 10 + cc[1]
    supported = supported_archs()
    if not supported or sm in supported:
        return f"sm_{sm}"
    return f"compute_{max(a for a in supported if a <= sm)}"


def image_path(variant: KernelVariant, arch: str, *, quick: bool = False) -> Path:
    """The cache file of ``variant``'s image for ``arch`` (the quick build's with ``quick``)."""
    options = kernel_options(variant) + (list(QUICK_OPTIONS) if quick else [])
    digest = hashlib.sha256((kernel_source().fingerprint() + "\0" + " ".join(options)).encode()).hexdigest()[:32]
    major, minor = nvrtc_version()
    kind = "cubin" if arch.startswith("sm_") else "ptx"
    return cache_dir() / f"{digest}-{arch}-nvrtc{major}.{minor}{'-quick' if quick else ''}.{kind}"


def _read(path: Path) -> bytes | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return data or None


def store_image(path: Path, image: bytes) -> bool:
    """Writes ``image`` to ``path`` whole or not at all (a reader never sees part of it); False
    when the cache cannot be written (the image is then only kept in memory)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=f".{path.name}.", delete=False) as tmp:
            tmp.write(image)
        os.replace(tmp.name, path)
        return True
    except OSError:
        return False


def _build_mode() -> str:
    mode = os.environ.get(BUILD_ENV, "background").strip().lower() or "background"
    if mode not in _BUILDS:
        G_LOGGER.warning(f"{BUILD_ENV}={mode!r} is not one of {', '.join(_BUILDS)}: building in the background",
                         mode=LogMode.ONCE)
        return "background"
    return mode


def build_optimised(variant: KernelVariant, arch: str) -> tuple[bytes, float]:
    """Compiles the optimised image of ``variant`` for ``arch`` and keeps it in the cache; returns
    it and the seconds the compilation took."""
    start = time.perf_counter()
    image = compile_variant(variant, arch).image
    seconds = time.perf_counter() - start
    store_image(image_path(variant, arch), image)
    return image, seconds


def lock_path(path: Path) -> Path:
    """The lock file of a background build of the optimised image ``path`` (it holds the builder's process id)."""
    return path.with_name(path.name + ".building")


def log_path(path: Path) -> Path:
    """What a background build of ``path`` wrote to stderr; left non-empty only when it failed."""
    return path.with_name(path.name + ".log")


def builder_alive(path: Path) -> bool:
    """Whether a background build of the optimised image ``path`` is running (its lock file names
    a live process); a lock left by a process that is gone is removed."""
    lock = lock_path(path)
    try:
        text = lock.read_text().strip()
        age = time.time() - lock.stat().st_mtime
    except OSError:
        return False
    if not text:  # being written by the process that starts the build
        if age < _STALE_EMPTY_LOCK_S:
            return True
    elif text.isdigit():
        try:
            os.kill(int(text), 0)
            return True
        except PermissionError:  # alive, another user's
            return True
        except OSError:
            pass
    try:
        lock.unlink()
    except OSError:
        pass
    return False


def _child_environment() -> dict[str, str]:
    # the build imports the same poly as this process, wherever that was found
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    return env


def _start_background_build(variant: KernelVariant, arch: str, path: Path) -> int | None:
    """Starts the optimised build of ``path`` in a process of its own unless one runs or failed
    before; returns its process id, or None when none was started."""
    if builder_alive(path):
        return None
    log = log_path(path)
    try:
        failed = log.stat().st_size > 0
    except OSError:
        failed = False
    if failed:
        G_LOGGER.warning(f"The optimised GPU kernels for {variant} on {arch} failed to build before (see {log}; "
                         f"delete it to try again): comparing with the quick build", mode=LogMode.ONCE)
        return None
    lock = lock_path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:  # another process started it just now
        return None
    except OSError as err:
        G_LOGGER.verbose(f"No background build of the GPU kernels: the cache {path.parent} is not writable ({err})")
        return None
    try:
        with open(log, "wb") as errors:
            proc = subprocess.Popen(
                [sys.executable, "-m", "poly.compare.stats.gpu.precompile", "--background", variant.spec(), arch],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=errors, env=_child_environment(),
                start_new_session=True, close_fds=True)
        os.write(fd, str(proc.pid).encode())
    except OSError as err:
        os.close(fd)
        lock.unlink(missing_ok=True)
        G_LOGGER.verbose(f"No background build of the GPU kernels: {err}")
        return None
    os.close(fd)
    threading.Thread(target=proc.wait, name="poly-kernel-build", daemon=True).start()  # reaped when it ends
    return proc.pid


def _describe(variant: KernelVariant, arch: str, seconds: float) -> str:
    return f"Compiled the GPU statistics kernels for {variant} on {arch} in {seconds:.1f} s"


def kernel_image(variant: KernelVariant, cc: tuple[int, int]) -> KernelImage:
    """
    The image to load for ``variant`` on a GPU of compute capability ``cc``: the optimised build
    when the cache has it; otherwise the quick build (from the cache, or compiled now) while the
    optimised one is built in the background; with ``POLY_GPU_KERNEL_BUILD=foreground`` (or an
    NVRTC without quick builds) the optimised one compiled now.

    Raises:
        KernelCompileError: when NVRTC fails.
        GpuUnavailableError: when NVRTC cannot be loaded.
    """
    arch = arch_for(cc)
    optimised_path = image_path(variant, arch)
    image = _read(optimised_path)
    if image is not None:
        return KernelImage(image, True, optimised_path)
    if _build_mode() == "foreground" or not quick_build_supported():
        image, seconds = build_optimised(variant, arch)
        G_LOGGER.info(f"{_describe(variant, arch, seconds)} (optimised; kept in {optimised_path.parent})")
        return KernelImage(image, True, optimised_path)
    quick_path = image_path(variant, arch, quick=True)
    image = _read(quick_path)
    if image is None:
        start = time.perf_counter()
        image = compile_variant(variant, arch, quick=True).image
        seconds = time.perf_counter() - start
        store_image(quick_path, image)
        pid = _start_background_build(variant, arch, optimised_path)
        later = (f"the optimised one is compiling in background process {pid} and serves comparisons once it is "
                 f"in {optimised_path.parent}" if pid is not None else "comparing with it")
        G_LOGGER.info(f"{_describe(variant, arch, seconds)} (a quick build; {later})")
    else:
        _start_background_build(variant, arch, optimised_path)
    return KernelImage(image, False, optimised_path)
