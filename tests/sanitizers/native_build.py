"""Builds ``poly._native`` with sanitizers (the ``POLY_SANITIZE`` option of the root
CMakeLists.txt) into ``build/sanitizers/<sanitizers>/`` and describes how to run Python against
that build.

A build is reused while its inputs are unchanged: the stamp file of a build folder records a
hash of native/src and CMakeLists.txt, and the folder is wiped when the compiler, Python or
pybind11 changes. Otherwise CMake rebuilds incrementally, on every core. The builds live in the
checkout, not in a test's temporary folder, so that the pytest workers of one run (and later
runs) share them: a file lock lets one worker build while the others wait for it.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / "build" / "sanitizers"
OVERLAY = Path(__file__).resolve().parent / "overlay"

# sanitizer -> the GCC runtime library that must be loaded first into the (uninstrumented) Python
RUNTIMES = {"address": "libasan.so", "undefined": "libubsan.so", "thread": "libtsan.so"}
# the runtimes' settings: stop at the first report; Python's own allocations are never freed
# at exit by design, so leak detection would only report CPython
OPTIONS = {
    "ASAN_OPTIONS": "detect_leaks=0:abort_on_error=1",
    "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1",
    "TSAN_OPTIONS": "halt_on_error=1",
}


class SanitizerUnavailable(Exception):
    """A tool the sanitizer build needs is missing here; the message says which."""


@dataclass(frozen=True)
class SanitizedNative:
    """A sanitizer build of ``poly._native``: the module's path and the runtimes to preload."""

    sanitize: str
    module: Path
    preload: tuple[str, ...]
    built_s: float = 0.0  # seconds this process spent building it (0: an up-to-date build was reused)

    def environment(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """Variables under which ``import poly._native`` loads this build (in every Python
        process started from them) with its sanitizer runtimes loaded first."""
        env = dict(os.environ if base is None else base)
        env["POLY_SANITIZED_NATIVE"] = str(self.module)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(OVERLAY), env.get("PYTHONPATH", "")) if p)
        env["LD_PRELOAD"] = " ".join((*self.preload, env.get("LD_PRELOAD", ""))).strip()
        env.update(OPTIONS)
        return env


def compiler() -> str:
    """The C++ compiler to build with: $CXX, else g++ or c++ from PATH."""
    cxx = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++")
    if not cxx or not shutil.which(cxx):
        raise SanitizerUnavailable("no C++ compiler (g++, c++ or $CXX) on PATH")
    return shutil.which(cxx)


def runtime_libraries(cxx: str, sanitize: str) -> tuple[str, ...]:
    """Paths of the sanitizer runtimes of ``cxx`` for a ``-fsanitize=`` list."""
    paths = []
    for name in sanitize.split(","):
        if name not in RUNTIMES:
            raise ValueError(f"unknown sanitizer {name!r} (known: {', '.join(RUNTIMES)})")
        out = subprocess.run([cxx, f"-print-file-name={RUNTIMES[name]}"], capture_output=True, text=True)
        path = out.stdout.strip()
        if out.returncode != 0 or not os.path.isabs(path) or not os.path.exists(path):
            raise SanitizerUnavailable(f"{cxx} has no {RUNTIMES[name]} (the {name} sanitizer runtime); "
                                       "install the compiler's sanitizer libraries (Debian: libasan8, "
                                       "libubsan1, libtsan2)")
        paths.append(os.path.realpath(path))
    return tuple(paths)


def cpu_has_avx512() -> bool:
    """Whether this CPU has the AVX-512 subsets of the native engine's AVX-512 kernels (F, VL, BW,
    DQ). A sanitizer build on a CPU without them leaves that variant out: it could not run there,
    and it would add a third of the kernels' compile time to every fresh run of the suite."""
    try:
        with open("/proc/cpuinfo") as info:
            flags = next((line.split(":", 1)[1].split() for line in info if line.startswith("flags")), [])
    except OSError:
        return False
    return {"avx512f", "avx512vl", "avx512bw", "avx512dq"} <= set(flags)


def _hash(parts) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part if isinstance(part, bytes) else str(part).encode())
        digest.update(b"\0")
    return digest.hexdigest()


def _source_key() -> str:
    files = [ROOT / "CMakeLists.txt", *sorted((ROOT / "native").rglob("*"))]
    return _hash(x for f in files if f.is_file() for x in (f.relative_to(ROOT).as_posix(), f.read_bytes()))


def _run(cmd: list[str], log: Path, env: dict[str, str] | None = None) -> None:
    with open(log, "a") as out:
        out.write("$ " + " ".join(cmd) + "\n")
        out.flush()
        res = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT, env=env)
    if res.returncode != 0:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-40:])
        raise RuntimeError(f"the sanitizer build failed ({' '.join(cmd[:3])} ...), log {log}:\n{tail}")


def build(sanitize: str) -> SanitizedNative:
    """The ``-fsanitize={sanitize}`` build of ``poly._native``, built or rebuilt when needed."""
    cmake = shutil.which("cmake")
    if cmake is None:
        raise SanitizerUnavailable("cmake is not on PATH")
    cxx = compiler()
    preload = runtime_libraries(cxx, sanitize)
    try:
        import pybind11
    except ImportError as exc:  # pragma: no cover - a dev dependency
        raise SanitizerUnavailable("pybind11 (a dev dependency: uv sync) is not installed") from exc
    version = subprocess.run([cxx, "--version"], capture_output=True, text=True).stdout
    avx512 = "ON" if cpu_has_avx512() else "OFF"
    config_key = _hash([sanitize, cxx, version, sys.executable, sys.version, pybind11.__version__, avx512])
    folder = CACHE / sanitize.replace(",", "+")
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / f"{folder.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one build at a time per folder
        stamp = folder / "poly-stamp.txt"
        wanted = f"{config_key}\n{_source_key()}\n"
        old = stamp.read_text() if stamp.exists() else ""
        if old.split("\n")[0] != config_key:
            shutil.rmtree(folder, ignore_errors=True)
        modules = sorted(folder.glob("_native*.so"))
        if old == wanted and len(modules) == 1:
            return SanitizedNative(sanitize, modules[0], preload)
        start = time.monotonic()
        folder.mkdir(parents=True, exist_ok=True)
        log = folder / "build.log"
        log.write_text("")
        stamp.unlink(missing_ok=True)
        env = dict(os.environ, CXX=cxx)
        if not (folder / "CMakeCache.txt").exists():
            generator = ["-G", "Ninja"] if shutil.which("ninja") else []
            _run([cmake, "-S", str(ROOT), "-B", str(folder), *generator, f"-DPOLY_SANITIZE={sanitize}",
                  f"-DPOLY_KERNEL_AVX512={avx512}",
                  "-DCMAKE_BUILD_TYPE=Debug", f"-DCMAKE_CXX_COMPILER={cxx}", f"-Dpybind11_DIR={pybind11.get_cmake_dir()}",
                  f"-DPython_EXECUTABLE={sys.executable}"], log, env)
        # only the extension (and the kernel objects it links), on every core
        _run([cmake, "--build", str(folder), "--target", "_native", "--parallel", str(os.cpu_count() or 2)],
             log, env)
        modules = sorted(folder.glob("_native*.so"))
        if len(modules) != 1:
            raise RuntimeError(f"the sanitizer build in {folder} made {len(modules)} _native modules, not 1")
        stamp.write_text(wanted)
        return SanitizedNative(sanitize, modules[0], preload, time.monotonic() - start)
