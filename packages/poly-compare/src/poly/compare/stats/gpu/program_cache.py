"""
Loading the on-device statistics kernels with the CUDA driver: one variant's kernels per CUDA
context, from the image ``kernel_images`` gives (the optimised build, or a quick one until the
optimised one is in the cache: a context then moves to the optimised image at the first
comparison after it appears).
"""

from __future__ import annotations

import threading

import numpy as np

from poly.compare.stats.gpu.cuda_api import check, driver_api
from poly.compare.stats.gpu.kernel_images import KernelImage, kernel_image
from poly.compare.stats.gpu.kernel_source import (
    DIGIT_BITS,
    GATHER_STAGE_BYTES,
    HIST_GROUPS,
    KERNEL_NAMES,
    RING_BYTES,
    SELECT_BITS,
    SELECT_TARGETS,
    STATS_HIST_BYTES,
    KernelVariant,
)
from poly.core import G_LOGGER

__all__ = ["Program", "load_program", "DYNAMIC_SHARED"]

# Dynamic shared memory of the kernels that take it, at most: the ring of asynchronous copies,
# then the histogram counters.
DYNAMIC_SHARED = {
    "poly_stats": STATS_HIST_BYTES,
    "poly_stats_ranges": STATS_HIST_BYTES,
    "poly_radix_hist": RING_BYTES + HIST_GROUPS * (1 << DIGIT_BITS) * 4,
    "poly_radix_gather": RING_BYTES + GATHER_STAGE_BYTES,
    "poly_keys_hist": HIST_GROUPS * (1 << DIGIT_BITS) * 4,
    "poly_select_input": RING_BYTES + SELECT_TARGETS * (1 << SELECT_BITS) * 4,
    "poly_range_pass": HIST_GROUPS * (1 << DIGIT_BITS) * 4,
}


class Program:
    """One variant's kernels, loaded in one CUDA context from ``source`` (``image`` the bytes loaded)."""

    def __init__(self, source: KernelImage):
        drv = driver_api
        self.source = source
        buf = np.frombuffer(source.image, dtype=np.uint8).copy()
        self.module = check(drv.cuModuleLoadData(buf.ctypes.data), "cuModuleLoadData")
        self.module_handle = int(self.module)  # (modules are never unloaded: a handle names one build for good)
        self.functions = {name: check(drv.cuModuleGetFunction(self.module, name.encode()), "cuModuleGetFunction")
                          for name in KERNEL_NAMES}
        self.handles = {name: int(function) for name, function in self.functions.items()}  # for poly._native.cuda_launch
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
    device of compute capability ``cc``: compiled or read from the disk cache on first use; a
    quick build is replaced by the optimised one as soon as the cache has it."""
    key = (context, variant)
    with _LOCK:
        prog = _PROGRAMS.get(key)
        if prog is not None and not prog.source.optimised and prog.source.optimised_path.exists():
            prog = None  # the background build has finished (its module stays loaded: nothing is unloaded)
            G_LOGGER.verbose(f"GPU statistics kernels for {variant}: moving to the optimised build")
        if prog is None:
            prog = Program(kernel_image(variant, cc))
            _PROGRAMS[key] = prog
        return prog
