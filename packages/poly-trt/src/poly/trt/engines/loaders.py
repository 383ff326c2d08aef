"""
Building, loading and saving engines: ``EngineBytesFromNetwork`` (build a serialized engine),
``EngineFromNetwork``, ``EngineFromBytes``, ``EngineFromPath``, ``SaveEngine``,
``BytesFromPath`` and ``BytesFromEngine``.
"""

import os
import time
from typing import Any

from poly.core import G_LOGGER, BaseLoader, PolyException, atomic_write_bytes, load_file
from poly.core.func import funcify, invoke_if_callable
from poly.trt.builder.config import CreateConfig
from poly.trt.builder.timing_cache import save_timing_cache
from poly.trt.networks.creation import unpack_network
from poly.trt.tensorrt_module import flavour, is_rtx, trt
from poly.trt.trt_logger import get_trt_logger

__all__ = [
    "EngineBytesFromNetwork",
    "engine_bytes_from_network",
    "EngineFromNetwork",
    "engine_from_network",
    "EngineFromBytes",
    "engine_from_bytes",
    "EngineFromPath",
    "engine_from_path",
    "SaveEngine",
    "save_engine",
    "BytesFromPath",
    "bytes_from_path",
    "BytesFromEngine",
    "bytes_from_engine",
    "BufferFromEngine",
    "buffer_from_engine",
    "LoadRuntime",
    "load_runtime",
    "EngineBuildError",
    "EngineLoadError",
    "NoCudaDeviceError",
]


class EngineBuildError(PolyException):
    """TensorRT could not build an engine."""


class EngineLoadError(PolyException):
    """An engine could not be read or deserialized."""


class NoCudaDeviceError(EngineLoadError):
    """An engine cannot be deserialized: the machine has no CUDA driver or GPU."""


class EngineBytesFromNetwork(BaseLoader):
    """Functor that builds a serialized engine (``trt.IHostMemory``) from a network."""

    def __init__(self, network: Any, config: Any = None, save_timing_cache: Any = None) -> None:
        """
        Args:
            network (Union[Tuple, Callable() -> Tuple]): ``(builder, network[, parser])`` or its loader.
            config (Callable(builder, network) -> trt.IBuilderConfig): Usually a ``CreateConfig``;
                    defaults to ``CreateConfig()``.
            save_timing_cache (Union[str, file]): Where to save the timing cache after the build
                    (merged with a cache already there).
        """
        self._network = network
        self._config = config
        self.save_timing_cache = save_timing_cache

    def call_impl(self) -> Any:
        """
        Returns:
            trt.IHostMemory: The serialized engine.
        """
        builder, network, _parser = unpack_network(invoke_if_callable(self._network))
        make_config = self._config if self._config is not None else CreateConfig()
        config = invoke_if_callable(make_config, builder, network)
        G_LOGGER.info(
            f"Building engine with {flavour()}: {network.num_inputs} input(s), {network.num_outputs} "
            f"output(s), {network.num_layers} layer(s)"
        )
        start = time.perf_counter()
        serialized = builder.build_serialized_network(network, config)
        if serialized is None:
            G_LOGGER.critical(
                "TensorRT failed to build the engine (its errors are logged above)", EngineBuildError
            )
        G_LOGGER.info(
            f"Finished engine building in {time.perf_counter() - start:.3f} s ({serialized.nbytes} bytes)"
        )
        if self.save_timing_cache is not None:
            save_timing_cache(config, self.save_timing_cache)
        return serialized


def _runtime(runtime: Any) -> Any:
    runtime = invoke_if_callable(runtime)  # a runtime, or a loader of one such as LoadRuntime
    return runtime if runtime is not None else trt.Runtime(get_trt_logger())


def _deserialize(data: Any, runtime: Any, source: Any) -> Any:
    from poly.core.cuda import cuda_available

    if not cuda_available():
        raise NoCudaDeviceError(
            f"Cannot deserialize the engine from {source}: no NVIDIA driver or GPU on this machine"
        )
    engine = _runtime(runtime).deserialize_cuda_engine(data)
    if engine is None:
        hint = ""
        if is_rtx():
            hint = " (TensorRT-RTX runs engines on GPUs of compute capability 8.0, 8.6, 8.9 or 12.x only)"
        G_LOGGER.critical(
            f"Could not deserialize the engine from {source}: TensorRT refused it; it may be corrupt, built "
            f"by another TensorRT version, or there is no GPU it can run on{hint}",
            EngineLoadError,
        )
    return engine


class EngineFromBytes(BaseLoader):
    """Functor that deserializes an engine from bytes."""

    def __init__(self, serialized_engine: Any, runtime: Any = None) -> None:
        """
        Args:
            serialized_engine (Union[bytes, trt.IHostMemory, Callable() -> either]): The engine.
            runtime (Union[trt.Runtime, Callable() -> trt.Runtime]): The runtime to use, or a
                    loader of it such as ``LoadRuntime``; a new one by default.
        """
        self._serialized_engine = serialized_engine
        self.runtime = runtime

    def call_impl(self) -> Any:
        """
        Returns:
            trt.ICudaEngine
        """
        return _deserialize(invoke_if_callable(self._serialized_engine), self.runtime, "the serialized engine bytes")


class EngineFromPath(BaseLoader):
    """Functor that reads and deserializes an engine file."""

    def __init__(self, path: Any, runtime: Any = None) -> None:
        """
        Args:
            path (Union[str, os.PathLike]): The engine file.
            runtime (trt.Runtime): The runtime to use; a new one by default.
        """
        self.path = path
        self.runtime = runtime

    def call_impl(self) -> Any:
        """
        Returns:
            trt.ICudaEngine
        """
        data = BytesFromPath(self.path, what="engine")()
        if not data:
            G_LOGGER.critical(f"Cannot deserialize the engine from '{os.fspath(self.path)}': the file is empty",
                              EngineLoadError)
        return _deserialize(data, self.runtime, f"'{os.fspath(self.path)}'")


class EngineFromNetwork(BaseLoader):
    """Functor that builds an engine from a network and deserializes it."""

    def __init__(self, network: Any, config: Any = None, save_timing_cache: Any = None, runtime: Any = None) -> None:
        """
        Args:
            network, config, save_timing_cache: As for ``EngineBytesFromNetwork``.
            runtime (trt.Runtime): The runtime to deserialize with.
        """
        self._build = EngineBytesFromNetwork(network, config, save_timing_cache)
        self.runtime = runtime

    def call_impl(self) -> Any:
        """
        Returns:
            trt.ICudaEngine
        """
        return _deserialize(self._build(), self.runtime, "the engine just built")


class BufferFromEngine(BaseLoader):
    """Functor that serializes an engine into TensorRT's own buffer (no copy into ``bytes``)."""

    def __init__(self, engine: Any) -> None:
        """
        Args:
            engine (Union[trt.ICudaEngine, Callable() -> trt.ICudaEngine]): The engine.
        """
        self._engine = engine

    def call_impl(self) -> Any:
        """
        Returns:
            trt.IHostMemory: The serialized engine (supports the buffer protocol).
        """
        return invoke_if_callable(self._engine).serialize()


class BytesFromEngine(BufferFromEngine):
    """Functor that serializes an engine into ``bytes``."""

    def call_impl(self) -> Any:
        """
        Returns:
            bytes
        """
        return bytes(super().call_impl())


class LoadRuntime(BaseLoader):
    """
    Functor that loads a TensorRT runtime from a shared library (``libnvinfer_lean.so``...), to
    run version-compatible engines built without the lean runtime.
    """

    def __init__(self, path: Any) -> None:
        """
        Args:
            path (Union[str, os.PathLike]): The runtime library.
        """
        self.path = path

    def call_impl(self) -> Any:
        """
        Returns:
            trt.IRuntime: The loaded runtime.
        """
        path = os.fspath(self.path)
        if not os.path.exists(path):
            G_LOGGER.critical(f"Cannot load a TensorRT runtime from '{path}': the file does not exist")
        G_LOGGER.info(f"Loading TensorRT runtime from: {path}")
        runtime = trt.Runtime(get_trt_logger()).load_runtime(path)
        if runtime is None:
            G_LOGGER.critical(f"TensorRT could not load a runtime from '{path}' (see its errors above)")
        return runtime


def _engine_bytes(engine: Any) -> Any:
    if isinstance(engine, (bytes, bytearray, memoryview)):
        return bytes(engine)
    if hasattr(engine, "serialize"):  # trt.ICudaEngine
        return bytes(engine.serialize())
    return bytes(engine)  # trt.IHostMemory exposes the buffer protocol


class SaveEngine(BaseLoader):
    """Functor that saves an engine (or serialized engine) to a file, atomically."""

    def __init__(self, engine: Any, path: Any) -> None:
        """
        Args:
            engine (Union[trt.ICudaEngine, trt.IHostMemory, bytes, Callable() -> any of these]):
                    The engine.
            path (Union[str, os.PathLike]): Where to write it.
        """
        self._engine = engine
        self.path = path

    def call_impl(self) -> Any:
        """
        Returns:
            The engine, as given (resolved if it was a loader).
        """
        engine = invoke_if_callable(self._engine)
        data = _engine_bytes(engine)
        atomic_write_bytes(os.fspath(self.path), data)
        G_LOGGER.info(f"Saved engine to {os.fspath(self.path)} ({len(data)} bytes)")
        return engine


class BytesFromPath(BaseLoader):
    """Functor that reads a file's bytes."""

    def __init__(self, path: Any, what: str = "file") -> None:
        """
        Args:
            path (Union[str, os.PathLike]): The file.
            what (str): What the file is, for error messages.
        """
        self.path = path
        self.what = what

    def call_impl(self) -> Any:
        """
        Returns:
            bytes
        """
        path = os.fspath(invoke_if_callable(self.path))
        try:
            return load_file(path)
        except OSError as err:
            G_LOGGER.critical(f"Cannot read {self.what} '{path}': {err.strerror or err}", EngineLoadError)


engine_bytes_from_network = funcify(EngineBytesFromNetwork)
engine_from_network = funcify(EngineFromNetwork)
engine_from_bytes = funcify(EngineFromBytes)
engine_from_path = funcify(EngineFromPath)
save_engine = funcify(SaveEngine)
bytes_from_path = funcify(BytesFromPath)
bytes_from_engine = funcify(BytesFromEngine)
buffer_from_engine = funcify(BufferFromEngine)
load_runtime = funcify(LoadRuntime)
