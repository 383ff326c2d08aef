"""
Debug tensors read back for ``TrtRunner``, through TensorRT's ``IDebugListener``.

An engine built with debug tensors (``MarkDebug`` / ``--mark-debug NAMES``, or a network made
with ``mark_unfused_tensors_as_debug_tensors`` / ``--mark-unfused-tensors-as-debug-tensors``)
calls the execution context's debug listener, during ``execute_async_v3``, once for each debug
tensor whose debug state is on, with the tensor's address, location, type, shape, name and the
stream it was written on. The address is valid only during that call, so ``DebugTensorReader``
copies the tensor there: into pinned host memory (NumPy arrays) or into device buffers
(``DeviceView`` objects) as the runner does for its outputs, waiting for the copy before it
returns. Buffers are grow-only and kept per tensor, for the tensors selected only.

The selection (``TrtRunner.set_debug_tensors``) is applied with the context's
``set_all_tensors_debug_state`` / ``set_tensor_debug_state`` (tensors marked by name) and its
``unfused_tensors_debug_state`` (tensors marked because the builder did not fuse them), where
the TensorRT version has them; the listener itself copies only selected tensors. Which tensors
the builder left unfused is known only once TensorRT has reported them (their debug state stays
on, so every inference reports them; the listener returns at once for those not selected): a name
that is neither a marked debug tensor nor reported is an error naming it, at the next inference
when no inference has reported the unfused tensors yet.
"""

import ctypes
from collections.abc import Sequence
from typing import Any

import numpy as np

from poly.core import G_LOGGER, DataType
from poly.trt.execution.host_buffers import PinnedHostBuffer
from poly.trt.tensorrt_module import flavour, trt

__all__ = ["DebugTensorReader", "pointer_value"]

_MARK_HINT = (
    "mark it when building (--mark-debug NAME, MarkDebug), or build with "
    "--mark-unfused-tensors-as-debug-tensors and pick a tensor TensorRT reports"
)


def pointer_value(addr: Any) -> int:
    """The address ``process_debug_tensor`` was given: an int, or a ``PyCapsule`` holding it
    (as TensorRT's Python bindings pass ``void const*``)."""
    if isinstance(addr, int):
        return addr
    api = ctypes.pythonapi
    api.PyCapsule_GetName.restype = ctypes.c_void_p
    api.PyCapsule_GetName.argtypes = [ctypes.py_object]
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_void_p]
    try:
        pointer = api.PyCapsule_GetPointer(addr, api.PyCapsule_GetName(addr))
    except (TypeError, ValueError, ctypes.ArgumentError):
        pointer = None
    if not pointer:
        raise TypeError(f"expected an address (int or PyCapsule), got {type(addr).__name__}")
    return int(pointer)


def _make_listener(reader: "DebugTensorReader") -> Any:
    base = trt.IDebugListener

    class DebugListener(base):  # type: ignore[misc, valid-type]
        """Hands each debug tensor TensorRT reports to the reader; never raises into TensorRT."""

        def __init__(self) -> None:
            base.__init__(self)

        def process_debug_tensor(self, addr: Any, location: Any, type: Any, shape: Any, name: Any, stream: Any) -> bool:
            return reader.receive(addr, location, type, shape, name, stream)

    return DebugListener()


class DebugTensorReader:
    """
    The debug tensors of one execution context: which ones are read back, their buffers, and
    the values TensorRT reported at the last inference.
    """

    def __init__(self, prefix: str = "") -> None:
        """
        Args:
            prefix (str): Put before error messages (the runner's name).
        """
        self.prefix = prefix
        self.selection: list[str] | None = None
        """The names of the debug tensors to read back, or None for all."""
        self.reported: list[str] = []
        """Names TensorRT reported at the last inference (read back or not), in its order."""
        self._engine: Any = None
        self._context: Any = None
        self._listener: Any = None
        self._seen: set[str] = set()
        self._discovered = False  # an inference ran with the unfused tensors' debug state on
        self._provisional: set[str] = set()
        self._host: dict[str, PinnedHostBuffer] = {}
        self._device: dict[str, Any] = {}
        self._captured: dict[str, Any] = {}
        self._to_host = True
        self._error: Any = None
        self._warned: set[str] = set()

    # -- attaching to a context ----------------------------------------------------------------

    def supported(self, context: Any) -> bool:
        """Whether the TensorRT in use and ``context`` have the debug listener API."""
        return hasattr(trt, "IDebugListener") and hasattr(context, "set_debug_listener")

    def attach(self, engine: Any, context: Any) -> None:
        """Installs the listener on ``context`` (when supported) and applies the selection."""
        self._engine, self._context = engine, context
        self._seen, self._discovered, self._provisional = set(), False, set()
        if not self.supported(context):
            if self.selection:
                self._unsupported(self.selection)
            return
        provisional = self._check(self.selection)
        self._listener = _make_listener(self)
        if context.set_debug_listener(self._listener) is False:
            G_LOGGER.critical(f"{self.prefix}TensorRT refused the debug listener (set_debug_listener returned False)")
        self._apply(provisional)

    def detach(self) -> None:
        """Stops reading (the listener ignores later reports) and drops every buffer."""
        context, self._context, self._engine = self._context, None, None
        if context is not None and self._listener is not None:
            try:
                context.set_debug_listener(None)
            except Exception:  # bindings that take no None: the listener now ignores reports
                pass
        self._listener = None
        for name in list(self._host) + list(self._device):
            self._drop(name)
        self._captured = {}

    def _unsupported(self, selection: list[str]) -> None:
        G_LOGGER.critical(
            f"{self.prefix}Debug tensor(s) {selection} | cannot be read back: {flavour()} has no "
            "IDebugListener for this execution context (TensorRT 10 or later)"
        )

    # -- the selection -------------------------------------------------------------------------

    def select(self, names: Sequence[str] | str | None) -> None:
        """
        Chooses the debug tensors read back from the next inference on (None: all). Buffers of
        tensors no longer selected are dropped; names that are not debug tensors are an error
        naming them (see the module's documentation for tensors marked as unfused).
        """
        if isinstance(names, str):
            names = [names]
        selection = None if names is None else list(dict.fromkeys(str(name) for name in names))
        attached = self._context is not None and self.supported(self._context)
        if self._context is not None and not attached and selection:
            self._unsupported(selection)
        provisional = self._check(selection) if attached else set()  # raises before any change
        self.selection = selection
        for name in list(self._host) + list(self._device):
            if selection is not None and name not in selection:
                self._drop(name)
        if attached:
            self._apply(provisional)

    def _is_marked(self, name: str) -> bool:
        check = getattr(self._engine, "is_debug_tensor", None)
        return bool(check(name)) if check is not None else False

    def _check(self, selection: list[str] | None) -> set[str]:
        """The names of ``selection`` to check at the next inference (perhaps unfused tensors not
        reported yet); names that cannot be debug tensors are an error naming them."""
        if selection is None:
            return set()
        unknown = [name for name in selection if not self._is_marked(name) and name not in self._seen]
        if not unknown:
            return set()
        if self._discovered or not hasattr(self._context, "unfused_tensors_debug_state"):
            where = ""
            if self._discovered:
                where = f"; TensorRT reported {sorted(self._seen) if self._seen else 'none'}"
            G_LOGGER.critical(
                f"{self.prefix}Debug tensor(s) {unknown} | not debug tensor(s) of this engine{where}: {_MARK_HINT}"
            )
        return set(unknown)

    def _apply(self, provisional: set[str]) -> None:
        context = self._context
        unfused = hasattr(context, "unfused_tensors_debug_state")
        self._provisional = set(provisional)
        if self.selection is None:
            if hasattr(context, "set_all_tensors_debug_state") and context.set_all_tensors_debug_state(True) is False:
                G_LOGGER.critical(f"{self.prefix}TensorRT refused to turn on the debug tensors (set_all_tensors_debug_state)")
        else:
            marked = [name for name in self.selection if self._is_marked(name)]
            if hasattr(context, "set_all_tensors_debug_state"):
                context.set_all_tensors_debug_state(False)
            if hasattr(context, "set_tensor_debug_state"):
                for name in marked:
                    if context.set_tensor_debug_state(name, True) is False:
                        G_LOGGER.critical(
                            f"{self.prefix}Debug tensor: {name} | TensorRT refused to turn its debug state on "
                            "(set_tensor_debug_state returned False)"
                        )
        if unfused:
            # On whatever the selection: unfused tensors are reported (and so known) at each
            # inference; the listener copies only the selected ones.
            context.unfused_tensors_debug_state = True

    def _drop(self, name: str) -> None:
        for buffers in (self._host, self._device):
            buffer = buffers.pop(name, None)
            if buffer is not None:
                buffer.free()  # arrays returned earlier keep their memory

    # -- one inference -------------------------------------------------------------------------

    def begin(self, to_host: bool) -> None:
        """Before ``execute_async_v3``: values will be NumPy arrays (or ``DeviceView`` objects)."""
        self._to_host = bool(to_host)
        self._captured = {}
        self.reported = []
        self._error = None

    def receive(self, addr: Any, location: Any, dtype: Any, shape: Any, name: Any, stream: Any) -> bool:
        """``IDebugListener.process_debug_tensor``: copies a selected tensor before returning."""
        if self._context is None:
            return True
        name = str(name)
        self.reported.append(name)
        self._seen.add(name)
        if self.selection is not None and name not in self.selection:
            return True
        try:
            self._capture(addr, location, dtype, shape, name, stream)
        except Exception as err:  # raised by finish(): an exception must not cross into TensorRT
            if self._error is None:
                self._error = (name, err)
            return False
        return True

    def _numpy_dtype(self, name: str, dtype: Any) -> Any:
        entry = DataType.from_dtype(dtype)
        reason = None
        if entry is None:
            reason = f"its type {dtype} is unknown to poly"
        elif entry.itemsize < 1:
            reason = f"its type {entry} packs several values in a byte, which NumPy cannot hold"
        else:
            try:
                return entry.numpy()
            except Exception as err:
                reason = str(err)
        if name not in self._warned:
            self._warned.add(name)
            G_LOGGER.warning(f"{self.prefix}Debug tensor: {name} | not read back: {reason}")
        return None

    def _capture(self, addr: Any, location: Any, dtype: Any, shape: Any, name: str, stream: Any) -> None:
        from poly.core.cuda import DeviceBuffer
        from poly.core.cuda.device_arrays import MemcpyKind, wrapper

        np_dtype = self._numpy_dtype(name, dtype)
        if np_dtype is None:
            return
        dims = tuple(int(d) for d in shape)
        nbytes = int(np.prod(dims, dtype=np.int64)) * np.dtype(np_dtype).itemsize
        source = pointer_value(addr) if nbytes else 0
        on_host = location == trt.TensorLocation.HOST
        stream = int(stream or 0)
        driver: Any = wrapper() if nbytes and not (on_host and self._to_host) else None
        if self._to_host:
            host = self._host.get(name)
            if host is None:
                host = self._host[name] = PinnedHostBuffer()
            array = host.view(dims, np_dtype)
            if nbytes and on_host:
                ctypes.memmove(array.ctypes.data, source, nbytes)
            elif nbytes:
                driver.memcpy(array.ctypes.data, source, nbytes, MemcpyKind.DeviceToHost, stream_ptr=stream)
                driver.stream_synchronize(stream)  # the address is valid only during this call
            self._captured[name] = array
            return
        buffer = self._device.get(name)
        if buffer is None:
            buffer = self._device[name] = DeviceBuffer()
        buffer.view_as(dims, np_dtype)
        if nbytes:
            kind = MemcpyKind.HostToDevice if on_host else MemcpyKind.DeviceToDevice
            driver.memcpy(buffer.ptr, source, nbytes, kind, stream_ptr=stream)
            driver.stream_synchronize(stream)
        self._captured[name] = buffer

    def finish(self) -> dict[str, Any]:
        """
        After the inference's stream is synchronised: the debug tensors read back (name ->
        NumPy array or ``DeviceView``), in the order TensorRT reported them.
        """
        if self._error is not None:
            name, err = self._error
            self._error = None
            G_LOGGER.critical(f"{self.prefix}Debug tensor: {name} | could not be read back: {err}")
        context = self._context
        if context is not None and hasattr(context, "unfused_tensors_debug_state"):
            self._discovered = True
        if self._provisional:
            missing = sorted(self._provisional - set(self.reported))
            self._provisional = set()
            if missing:
                if self.selection is not None:  # not asked for again at later inferences
                    self.selection = [name for name in self.selection if name not in missing]
                reported = sorted(set(self.reported))
                G_LOGGER.critical(
                    f"{self.prefix}Debug tensor(s) {missing} | not debug tensor(s) of this engine; TensorRT "
                    f"reported {reported if reported else 'none'}: {_MARK_HINT}"
                )
        values = {}
        for name, value in self._captured.items():
            values[name] = value if self._to_host else value.view()
        return values
