"""``FileReader``: streams a serialized engine from a file to TensorRT's deserializer."""

import os
from typing import Any

from poly.core import G_LOGGER
from poly.trt.tensorrt_module import trt

__all__ = ["FileReader"]


def FileReader(filepath: Any, BaseClass: Any = None) -> Any:  # noqa: N802 (Polygraphy's name: it makes an object)
    """
    A TensorRT stream reader (``trt.IStreamReader``, or ``IStreamReaderV2`` where that is the one
    there is) over a file, so that ``runtime.deserialize_cuda_engine(reader)`` reads the engine
    in pieces instead of from one ``bytes`` object. Usable as a context manager (closes the file).

    Args:
        filepath (Union[str, os.PathLike]): The serialized engine.
        BaseClass (type): The reader interface to implement; chosen from the TensorRT module by
                default.
    """
    if BaseClass is None:
        BaseClass = getattr(trt, "IStreamReader", None) or getattr(trt, "IStreamReaderV2", None)
        if BaseClass is None:
            G_LOGGER.critical("This TensorRT has no stream reader interface (IStreamReader / IStreamReaderV2)")
    path = os.fspath(filepath)
    if not os.path.isfile(path):
        G_LOGGER.critical(f"Cannot read engine file '{path}': it does not exist")

    class FileReaderImpl(BaseClass):
        def __init__(self) -> None:
            BaseClass.__init__(self)  # pybind11 trampolines must be initialised explicitly
            self.filepath = path
            self.file = open(path, "rb")

        def read(self, size: Any, stream: Any = None) -> Any:
            # IStreamReaderV2 passes a CUDA stream; the data comes from a host file regardless.
            return self.file.read(size)

        def seek(self, offset: Any, whence: int = 0) -> Any:
            return self.file.seek(offset, int(whence))

        def free(self) -> None:
            if not self.file.closed:
                self.file.close()

        def __enter__(self) -> Any:
            return self

        def __exit__(self, exc_type: Any, exc_value: Any, traceback: Any) -> None:
            self.free()

        def __repr__(self) -> str:
            return f"FileReader({self.filepath!r}, BaseClass={BaseClass.__name__})"

    FileReaderImpl.__name__ = FileReaderImpl.__qualname__ = "FileReader"
    return FileReaderImpl()
