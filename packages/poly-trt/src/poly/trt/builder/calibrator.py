"""
``Calibrator``: an INT8 calibrator fed by a data loader (any iterable of feed dicts), with a
calibration cache read from and written to a file. The feeding and caching logic lives in
``CalibratorCore``; ``Calibrator`` mixes it into TensorRT's calibrator class of the chosen
algorithm (full TensorRT only: TensorRT-RTX has no INT8 calibration).
"""

import os
from typing import Any

import numpy as np

from poly.core import G_LOGGER, atomic_write_bytes
from poly.trt.execution.device_arrays import device_view
from poly.trt.tensorrt_module import flavour, trt

__all__ = ["Calibrator", "CalibratorCore", "CALIBRATION_ALGORITHMS", "fill_calibration_metadata"]

CALIBRATION_ALGORITHMS = {
    "entropy": "IInt8EntropyCalibrator2",
    "entropy2": "IInt8EntropyCalibrator2",
    "entropy1": "IInt8EntropyCalibrator",
    "minmax": "IInt8MinMaxCalibrator",
    "legacy": "IInt8LegacyCalibrator",
}
"""Names accepted by ``Calibrator(algo=...)`` and the TensorRT base class each selects."""


class CalibratorCore:
    """Feeds calibration batches from a data loader to device memory and manages the cache."""

    DEFAULT_QUANTILE = 0.5
    """The quantile ``IInt8LegacyCalibrator`` is given when none is chosen."""
    DEFAULT_REGRESSION_CUTOFF = 0.5
    """The regression cutoff ``IInt8LegacyCalibrator`` is given when none is chosen."""

    def __init__(self, data_loader: Any, cache: Any = None, batch_size: Any = None, quantile: Any = None, regression_cutoff: Any = None) -> None:
        super().__init__()
        self.data_loader = data_loader
        self.quantile = self.DEFAULT_QUANTILE if quantile is None else float(quantile)
        self.regression_cutoff = (self.DEFAULT_REGRESSION_CUTOFF if regression_cutoff is None
                                  else float(regression_cutoff))
        self._cache = cache
        self.batch_size = int(batch_size) if batch_size else None
        self._iterator: Any = None
        self._buffers: dict[Any, Any] = {}
        self.batches_fed = 0
        """How many batches ``get_batch`` has handed out since the last ``reset``."""

    def reset(self) -> None:
        """Starts again from the first batch of the data loader."""
        self._iterator = None
        self.batches_fed = 0

    def get_batch_size(self) -> Any:
        """The batch size TensorRT is told (1 for explicit-batch networks, where shapes carry it)."""
        return self.batch_size or 1

    def get_batch(self, names: Any) -> Any:
        """
        Copies the next feed dict's arrays to device memory and returns their addresses in the
        order of ``names``; None once the data loader is exhausted.
        """
        if self._iterator is None:
            self._iterator = iter(self.data_loader)
        try:
            feed = next(self._iterator)
        except StopIteration:
            G_LOGGER.info(f"Calibration finished after {self.batches_fed} batch(es)")
            return None
        missing = [name for name in names if name not in feed]
        if missing:
            G_LOGGER.critical(
                f"Calibration batch {self.batches_fed} lacks input(s) {missing}; it has: {list(feed)}"
            )
        pointers = []
        for name in names:
            value = feed[name]
            if isinstance(value, int):  # a device pointer
                ptr = value
            else:
                view = device_view(name, value)
                ptr = view.ptr if view is not None else None  # type: ignore[assignment]
                if view is not None and view.stream is not None:
                    # TensorRT reads the batch on its own stream once get_batch returns: the
                    # producer's pending writes must be done by then.
                    from poly.core.cuda import synchronize_stream

                    synchronize_stream(view.stream)
            if ptr is None:
                from poly.core.cuda import DeviceBuffer

                buffer = self._buffers.get(name)
                if buffer is None:
                    buffer = self._buffers[name] = DeviceBuffer()
                buffer.copy_from(np.ascontiguousarray(value))
                ptr = buffer.ptr
            pointers.append(ptr)
        self.batches_fed += 1
        G_LOGGER.extra_verbose(lambda: f"Calibration batch {self.batches_fed}: {list(names)}")
        return pointers

    def read_calibration_cache(self) -> Any:
        """The cache's bytes, or None when there is none yet (TensorRT then calibrates)."""
        cache = self._cache
        if cache is None:
            return None
        if hasattr(cache, "read"):
            if hasattr(cache, "seek"):
                cache.seek(0)
            data = cache.read()
            return data or None
        path = os.fspath(cache)
        if not os.path.exists(path):
            return None
        with open(path, "rb") as f:
            data = f.read()
        if not data:
            return None
        G_LOGGER.info(f"Using calibration cache: {path} ({len(data)} bytes); calibration is skipped")
        return data

    def write_calibration_cache(self, cache: Any) -> None:
        """Saves the cache TensorRT produced (atomically for a path)."""
        if self._cache is None:
            return
        data = bytes(cache)
        if hasattr(self._cache, "write"):
            if hasattr(self._cache, "seek"):
                self._cache.seek(0)
            self._cache.write(data)
            return
        atomic_write_bytes(os.fspath(self._cache), data)
        G_LOGGER.info(f"Wrote calibration cache: {os.fspath(self._cache)} ({len(data)} bytes)")

    # IInt8LegacyCalibrator's questions (the other algorithms never ask them).

    def get_quantile(self) -> Any:
        """The quantile of the legacy calibration algorithm."""
        return self.quantile

    def get_regression_cutoff(self) -> Any:
        """The regression cutoff of the legacy calibration algorithm."""
        return self.regression_cutoff

    def read_histogram_cache(self, length: Any) -> None:
        """No histogram cache is kept: TensorRT computes the histograms."""
        return None

    def write_histogram_cache(self, ptr: Any, length: Any) -> None:
        """No histogram cache is kept."""
        return None

    def free(self) -> None:
        """Releases the device buffers."""
        for buffer in self._buffers.values():
            buffer.free()
        self._buffers.clear()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(cache={self._cache!r}, batches_fed={self.batches_fed})"


def fill_calibration_metadata(calibrator: Any, network: Any, profile: Any = None) -> Any:
    """
    Gives a synthetic data loader (one with ``input_metadata`` still None, such as
    ``poly.compare.DataLoader``) the network's inputs to generate: names, dtypes and shapes,
    dynamic dimensions taken from ``profile``'s opt shapes (defaults from the network otherwise).
    Data loaders that bring their own data are left alone.
    """
    from poly.core import DataType, TensorMetadata
    from poly.trt.builder.profile import Profile

    loader = getattr(calibrator, "data_loader", None)
    if loader is None or not hasattr(loader, "input_metadata") or loader.input_metadata is not None:
        return None
    shapes = Profile(profile or {}).fill_defaults(network)
    meta = TensorMetadata()
    for index in range(network.num_inputs):
        tensor = network.get_input(index)
        meta.add(tensor.name, DataType.from_dtype(tensor.dtype), shapes[tensor.name].opt)
    loader.input_metadata = meta
    G_LOGGER.verbose(lambda: f"Calibration data will be generated for: {meta}")
    return meta


def Calibrator(data_loader: Any, cache: Any = None, BaseClass: Any = None, batch_size: Any = None, quantile: Any = None,  # noqa: N802 (Polygraphy's name)
               regression_cutoff: Any = None, algo: Any = None) -> Any:
    """
    Creates an INT8 calibrator.

    Args:
        data_loader (Iterable[Dict[str, array]]): Calibration feed dicts (NumPy arrays, device
                pointers, or objects with ``__cuda_array_interface__``).
        cache (Union[str, os.PathLike, file]): Calibration cache: read when it exists (and
                calibration then skipped), written after calibration.
        BaseClass (type): The TensorRT calibrator class to derive from; chosen by ``algo`` by default.
        batch_size (int): Batch size reported to TensorRT (implicit-batch networks only).
        quantile (float): The quantile for ``IInt8LegacyCalibrator`` (``algo="legacy"``); 0.5 by default.
        regression_cutoff (float): The regression cutoff for ``IInt8LegacyCalibrator``; 0.5 by default.
        algo (str): "entropy" (default, IInt8EntropyCalibrator2), "entropy1", "minmax" or "legacy".

    Returns:
        An instance of ``CalibratorCore`` and ``BaseClass``.
    """
    if BaseClass is None:
        key = (algo or "entropy").lower()
        if key not in CALIBRATION_ALGORITHMS:
            G_LOGGER.critical(
                f"Unknown calibration algorithm '{algo}'; choose from: {sorted(CALIBRATION_ALGORITHMS)}"
            )
        BaseClass = getattr(trt, CALIBRATION_ALGORITHMS[key], None)
        if BaseClass is None:
            G_LOGGER.critical(
                f"INT8 calibration is not available in {flavour()} (no {CALIBRATION_ALGORITHMS[key]}); "
                "use full TensorRT for --int8"
            )
    cls = type("Calibrator", (CalibratorCore, BaseClass), {})
    return cls(data_loader, cache=cache, batch_size=batch_size, quantile=quantile,
               regression_cutoff=regression_cutoff)
