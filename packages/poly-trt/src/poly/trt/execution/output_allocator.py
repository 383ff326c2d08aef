"""
The ``trt.IOutputAllocator`` that ``TrtRunner`` gives outputs whose shapes depend on the data
(NonZero, for example): TensorRT asks it for memory once the size is known and tells it the
final shape. Buffers are reused across inferences and only grow.
"""

from typing import Any

from poly.trt.tensorrt_module import trt

__all__ = ["make_output_allocator"]


def make_output_allocator() -> Any:
    """Returns a new output allocator (a subclass of the flavour's ``trt.IOutputAllocator``)."""
    base = trt.IOutputAllocator

    class OutputAllocator(base):  # type: ignore[misc, valid-type]
        """Device buffers for data-dependent outputs, with the shapes TensorRT reported."""

        def __init__(self) -> None:
            base.__init__(self)
            self.buffers: dict[Any, Any] = {}
            """Output name -> ``poly.core.cuda.DeviceBuffer``."""
            self.shapes: dict[Any, Any] = {}
            """Output name -> shape reported by ``notify_shape`` for the last inference."""

        def reallocate_output(self, tensor_name: Any, memory: Any, size: Any, alignment: Any) -> Any:
            from poly.core.cuda import DeviceBuffer

            buffer = self.buffers.get(tensor_name)
            if buffer is None:
                buffer = self.buffers[tensor_name] = DeviceBuffer()
            buffer.resize(max(int(size), 1))
            return buffer.ptr

        def reallocate_output_async(self, tensor_name: Any, memory: Any, size: Any, alignment: Any, stream: Any = None) -> Any:
            return self.reallocate_output(tensor_name, memory, size, alignment)

        def notify_shape(self, tensor_name: Any, shape: Any) -> None:
            self.shapes[tensor_name] = tuple(int(d) for d in shape)

        def free(self) -> None:
            for buffer in self.buffers.values():
                buffer.free()
            self.buffers.clear()
            self.shapes.clear()

    return OutputAllocator()
