"""
``TrtRunner``: runs a TensorRT engine. Inputs come from NumPy arrays (copied once into device
buffers that only grow) or from any object with ``__cuda_array_interface__`` (used in place,
no host round trip, after the work pending on the stream its producer names). Input shapes are
set only when they change, output buffers reallocated only when they grow, data-dependent
outputs handled by an ``IOutputAllocator``, and the time of each inference measured with CUDA
events.

Outputs are views of the runner's buffers (pinned host memory, or ``DeviceView`` objects when
left on the device): the next ``infer`` overwrites them, as with Polygraphy, but their memory
is never freed under them: ``deactivate()`` and buffer growth drop only the runner's reference,
and the memory goes when the last array viewing it does.

Debug tensors (an engine built with ``--mark-debug NAMES`` / ``MarkDebug``, or with
``--mark-unfused-tensors-as-debug-tensors``) come back with the outputs, under their names: TensorRT
reports them to the runner's ``IDebugListener`` during the inference, which copies them the same
way (see ``poly.trt.execution.debug_tensors``). ``set_debug_tensors(names)`` chooses which ones
(all by default), so that a large model can be read a few tensors at a time.
"""

from collections.abc import Sequence
from typing import Any

import numpy as np

from poly.core import G_LOGGER, BaseRunner, DataType, TensorMetadata
from poly.core.func import invoke_if_callable
from poly.trt.engines.loaders import EngineFromBytes, NoCudaDeviceError
from poly.trt.execution.context_memory import (
    apply_weight_streaming,
    context_memory_size,
    create_execution_context,
)
from poly.trt.execution.debug_tensors import DebugTensorReader
from poly.trt.execution.device_arrays import device_view
from poly.trt.execution.host_buffers import PinnedHostBuffer
from poly.trt.execution.output_allocator import make_output_allocator
from poly.trt.execution.tensor_binding import set_input_shape, set_tensor_address
from poly.trt.tensorrt_module import trt

__all__ = ["TrtRunner"]


class TrtRunner(BaseRunner):
    """Runs inference with a TensorRT engine."""

    def __init__(self, engine: Any, name: Any = None, optimization_profile: Any = None, copy_outputs_to_host: bool = True,
                 allocation_strategy: Any = None, weight_streaming_budget: Any = None, weight_streaming_percent: Any = None) -> None:
        """
        Args:
            engine (Union[trt.ICudaEngine, trt.IExecutionContext, bytes, Callable() -> any of these]):
                    An engine, an execution context (used as is, not owned), serialized engine
                    bytes, or a loader returning one of these.
            name (str): The runner's name.
            optimization_profile (int): The profile to use; 0 by default.
            copy_outputs_to_host (bool): Return NumPy arrays (True, default) or ``DeviceView``
                    objects (``__cuda_array_interface__``) of the device buffers. Either way the
                    next ``infer`` overwrites them (copy what you keep), and their memory stays
                    valid after the runner is deactivated.
            allocation_strategy (str): How the execution context's device memory is allocated:
                    ``"static"`` (default: by TensorRT, for every profile and shape), ``"profile"``
                    (for the active profile's largest shapes) or ``"runtime"`` (for the current
                    input shapes, before each inference); see ``poly.trt.execution.context_memory``.
            weight_streaming_budget (int): Bytes of weights kept on the device for an engine
                    built with weight streaming: -2 disables streaming, -1 lets TensorRT choose.
            weight_streaming_percent (float): The same as a percentage of the streamable weights
                    (100 disables streaming, 0 streams them all).
        """
        super().__init__(name=name, prefix="trt-runner")
        self.allocation_strategy = allocation_strategy
        self.weight_streaming_budget = weight_streaming_budget
        self.weight_streaming_percent = weight_streaming_percent
        self._engine_or_context = engine
        self.optimization_profile = optimization_profile
        self.copy_outputs_to_host = copy_outputs_to_host
        self.engine: Any = None
        self.context: Any = None
        self._debug = DebugTensorReader()  # its message prefix (the name) is set when it is used

    # -- activation ---------------------------------------------------------------------------

    def _no_gpu(self, reason: Any) -> None:
        G_LOGGER.critical(
            f"{self.name} | TrtRunner needs an NVIDIA GPU that can run TensorRT engines: {reason}",
            NoCudaDeviceError,
        )

    def _resolve_engine(self) -> Any:
        # The engine is built (and saved, when asked) before a missing GPU stops activation.
        try:
            obj = invoke_if_callable(self._engine_or_context)
            if isinstance(obj, (bytes, bytearray, memoryview)) or type(obj).__name__ == "IHostMemory":
                obj = EngineFromBytes(obj)()
        except NoCudaDeviceError as err:
            self._no_gpu(err)
        return obj

    def activate_impl(self) -> None:
        from poly.core import cuda

        obj = self._resolve_engine()
        try:
            self.stream = cuda.Stream()
        except cuda.CudaUnavailableError as err:
            self._no_gpu(err)
        if hasattr(obj, "execute_async_v3"):
            self.context, self.engine, self._owns_context = obj, obj.engine, False
        else:
            self.engine, self._owns_context = obj, True
            apply_weight_streaming(self.engine, self.weight_streaming_budget, self.weight_streaming_percent)
            self.context = create_execution_context(self.engine, self.allocation_strategy)
            if self.context is None:
                G_LOGGER.critical(
                    f"{self.name} | TensorRT could not create an execution context (see its errors above)"
                )

        mode = trt.TensorIOMode
        names = [self.engine.get_tensor_name(i) for i in range(self.engine.num_io_tensors)]
        self._input_names = [n for n in names if self.engine.get_tensor_mode(n) == mode.INPUT]
        self._output_names = [n for n in names if self.engine.get_tensor_mode(n) == mode.OUTPUT]
        self._dtypes = {n: DataType.from_dtype(self.engine.get_tensor_dtype(n)) for n in names}
        self._start, self._end = cuda.Event(), cuda.Event()
        self._input_buffers: dict[Any, Any] = {}
        self._output_buffers: dict[Any, Any] = {}
        self._host_outputs: dict[Any, Any] = {}
        self._shape_inputs: dict[Any, Any] = {}
        self._allocator = None
        self._context_memory = None
        self._input_shapes: dict[Any, Any] = {}
        self._metadata = None
        self.set_profile(self.optimization_profile or 0, force=self.optimization_profile is not None)
        self._debug.prefix = f"{self.name} | "
        self._debug.attach(self.engine, self.context)

    def set_debug_tensors(self, names: Sequence[str] | str | None) -> None:
        """
        Chooses the debug tensors that ``infer`` returns (next to the outputs, under their
        names) from the next inference on; before activation, from the first one. Only these are
        copied: TensorRT is told to report only them (``set_tensor_debug_state``) where it can,
        and the buffers of tensors no longer chosen are dropped, so that a large model can be read
        a few tensors at a time.

        Args:
            names (Union[Sequence[str], str, None]): Debug tensor names; None (the default) for all
                    of them, an empty list for none.

        Raises:
            PolyException: naming the tensors that are not debug tensors of the engine. Which
                    tensors the builder left unfused (``--mark-unfused-tensors-as-debug-tensors``)
                    is known once TensorRT reports them: a name neither marked nor reported yet
                    is checked at the next inference.
        """
        self._debug.prefix = f"{self.name} | "
        self._debug.select(names)

    @property
    def debug_tensors(self) -> list[str] | None:
        """The debug tensors ``infer`` returns (None: all); see ``set_debug_tensors``."""
        return None if self._debug.selection is None else list(self._debug.selection)

    @property
    def reported_debug_tensors(self) -> list[str]:
        """The debug tensors TensorRT reported at the last inference, returned or not (with
        ``set_debug_tensors([])``, the names of the unfused tensors without copying any)."""
        return list(self._debug.reported)

    def set_profile(self, index: Any, force: bool = True) -> None:
        """
        Switches to optimization profile ``index``; input shapes are set again at the next infer.
        """
        count = self.engine.num_optimization_profiles
        if not 0 <= index < max(count, 1):
            G_LOGGER.critical(
                f"{self.name} | Optimization profile {index} does not exist; the engine has {count}"
            )
        if force or count > 1:
            if not self.context.set_optimization_profile_async(index, self.stream.ptr):
                G_LOGGER.critical(f"{self.name} | TensorRT could not switch to optimization profile {index}")
            self.stream.synchronize()
        self.optimization_profile = index
        self._input_shapes.clear()
        self._metadata = None

    def deactivate_impl(self) -> None:
        self._debug.detach()
        for buffer in [*self._input_buffers.values(), *self._output_buffers.values()]:
            buffer.free()
        for host in self._host_outputs.values():
            host.free()
        if self._allocator is not None:
            self._allocator.free()
        if self._context_memory is not None:
            self._context_memory.free()
            self._context_memory = None
        self._input_buffers, self._output_buffers, self._host_outputs = {}, {}, {}
        self._allocator = None
        self._start.free()
        self._end.free()
        self.stream.free()
        self.context = None
        self.engine = None

    # -- metadata -----------------------------------------------------------------------------

    def get_input_metadata_impl(self) -> Any:
        if self._metadata is None:
            meta = TensorMetadata()
            for name in self._input_names:
                shape = tuple(self.engine.get_tensor_shape(name))
                min_shape = max_shape = None
                if any(d < 0 for d in shape) and not self.engine.is_shape_inference_io(name):
                    lo, _, hi = self.engine.get_tensor_profile_shape(name, self.optimization_profile)
                    min_shape, max_shape = tuple(lo), tuple(hi)
                meta.add(name, self._dtypes[name], shape, min_shape=min_shape, max_shape=max_shape)
            self._metadata = meta  # type: ignore[assignment]
        return self._metadata

    # -- inference ----------------------------------------------------------------------------

    def _set_input_shape(self, name: Any, shape: Any) -> None:
        if self._input_shapes.get(name) == shape:
            return
        set_input_shape(self.context, self.engine, name, shape, self.optimization_profile, prefix=f"{self.name} | ")
        self._input_shapes[name] = shape

    def _set_address(self, name: Any, address: Any, kind: Any) -> None:
        set_tensor_address(self.context, name, address, kind=kind, prefix=f"{self.name} | ")

    def _bind_inputs(self, feed_dict: Any) -> None:
        from poly.core.cuda import DeviceBuffer

        for name in self._input_names:
            value = feed_dict[name]
            if self.engine.is_shape_inference_io(name):
                # Shape tensors live on the host; TensorRT reads their values at enqueue time,
                # so the array is kept until the next call.
                host = np.ascontiguousarray(value, dtype=self._dtypes[name].numpy())
                self._shape_inputs[name] = host
                self._set_input_shape(name, tuple(host.shape))
                self._set_address(name, host.ctypes.data, "Input")
                continue
            view = device_view(name, value)
            if view is None:
                host = np.ascontiguousarray(value)
                buffer = self._input_buffers.get(name)
                if buffer is None:
                    buffer = self._input_buffers[name] = DeviceBuffer()
                buffer.copy_from(host, self.stream)
                ptr, shape = buffer.ptr, tuple(host.shape)
            else:
                ptr, shape = view.ptr, view.shape
                if view.stream is not None:  # the producer's writes may still be queued there
                    self.stream.wait_for(view.stream)
            self._set_input_shape(name, shape)
            self._set_address(name, ptr, "Input")

    def _bind_outputs(self) -> Any:
        from poly.core.cuda import DeviceBuffer

        dynamic = []
        for name in self._output_names:
            shape = tuple(self.context.get_tensor_shape(name))
            if any(d < 0 for d in shape):
                if self._allocator is None:
                    self._allocator = make_output_allocator()
                self.context.set_output_allocator(name, self._allocator)
                dynamic.append(name)
                continue
            buffer = self._output_buffers.get(name)
            if buffer is None:
                buffer = self._output_buffers[name] = DeviceBuffer()
            buffer.view_as(shape, self._dtypes[name].numpy())  # grows only when needed
            self._set_address(name, buffer.ptr, "Output")
        return dynamic

    def _provide_context_memory(self) -> None:
        # USER_MANAGED contexts ("profile" / "runtime") get their memory here, grown as needed.
        if not self._owns_context:
            return
        size = context_memory_size(self.engine, self.context, self.allocation_strategy, self.optimization_profile)
        if size is None:
            return
        from poly.core.cuda import DeviceBuffer

        if self._context_memory is None:
            self._context_memory = DeviceBuffer()  # type: ignore[assignment]
        if self._context_memory.capacity < size:  # type: ignore[attr-defined]
            self._context_memory.resize(size)  # type: ignore[attr-defined]
        self.context.set_device_memory(self._context_memory.ptr, max(size, 1))  # type: ignore[attr-defined]

    def infer_impl(self, feed_dict: Any, copy_outputs_to_host: Any = None) -> Any:
        """
        Args:
            feed_dict (Dict[str, array]): NumPy arrays or ``__cuda_array_interface__`` objects.
            copy_outputs_to_host (bool): Overrides the runner's setting for this call.

        Returns:
            Dict[str, Union[numpy.ndarray, DeviceView]]: Outputs, then the debug tensors read back
            (see ``set_debug_tensors``), overwritten by the next call; their memory lives as long
            as they do.
        """
        to_host = self.copy_outputs_to_host if copy_outputs_to_host is None else copy_outputs_to_host
        self._bind_inputs(feed_dict)
        dynamic = self._bind_outputs()
        self._provide_context_memory()
        self._debug.begin(to_host)
        self._start.record(self.stream)
        if not self.context.execute_async_v3(self.stream.ptr):
            G_LOGGER.critical(f"{self.name} | TensorRT failed to execute the engine (see its errors above)")
        self._end.record(self.stream)

        if dynamic:  # shapes of data-dependent outputs are final once the work is done
            self.stream.synchronize()
        device = {}
        for name in self._output_names:
            if name in dynamic:
                buffer = self._allocator.buffers[name]  # type: ignore[attr-defined]
                buffer.view_as(self._allocator.shapes[name], self._dtypes[name].numpy())  # type: ignore[attr-defined]
            else:
                buffer = self._output_buffers[name]
            device[name] = buffer

        if not to_host:  # views that keep the memory alive for __cuda_array_interface__ consumers
            outputs = {name: buffer.view() for name, buffer in device.items()}
        else:
            outputs = {}
            for name, buffer in device.items():
                host = self._host_outputs.get(name)
                if host is None:
                    host = self._host_outputs[name] = PinnedHostBuffer()
                outputs[name] = host.view(buffer.shape, buffer.dtype)
                buffer.copy_to(outputs[name], self.stream)
        self.stream.synchronize()
        self.inference_time = self._start.elapsed_time(self._end) / 1000.0
        for name, value in self._debug.finish().items():
            outputs.setdefault(name, value)  # a debug tensor that is also an output: the output
        return outputs
