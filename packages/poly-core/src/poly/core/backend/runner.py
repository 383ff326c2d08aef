"""``BaseRunner``: the interface every inference backend implements."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterable, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typing_extensions import Self

from poly.core.arrays.datatype import DataType
from poly.core.arrays.introspect import array_dtype, array_shape
from poly.core.func import check_called_by
from poly.core.logging.exception import PolyException
from poly.core.logging.logger import G_LOGGER, LogMode
from poly.core.tensors.metadata import TensorMetadata
from poly.core.tensors.shape import is_valid_shape_override

__all__ = ["BaseRunner", "check_inputs"]


def _names(items: Iterable[str]) -> list[str]:
    return sorted(items, key=str)


def check_inputs(feed_dict: Mapping[str, Any], input_metadata: TensorMetadata) -> None:
    """
    Checks ``feed_dict`` against the expected inputs and raises ``PolyException`` at the first
    problem (raised, not logged: a caller that skips bad feed dicts, such as validation, reports
    it once in its own way): a missing input, an extra input, a wrong data
    type, or a shape that does not fit (dynamic dimensions, written -1, None or a name, match
    any size).

    Values that are plain ints (device pointers) are not checked.

    Args:
        feed_dict (Mapping[str, array-like]): The inputs.
        input_metadata (TensorMetadata): The expected inputs.
    """
    expected = list(input_metadata.keys())
    missing = [name for name in expected if name not in feed_dict]
    if missing:
        raise PolyException(
            f"Missing input(s) {_names(missing)}: The following inputs were not found in the feed_dict; "
            f"expected inputs: {expected}, "
            f"given: {list(feed_dict.keys())}"
        )
    extra = [name for name in feed_dict if name not in input_metadata]
    if extra:
        raise PolyException(
            f"Unexpected input(s) {_names(extra)}: Extra inputs in the feed_dict; expected inputs: {expected}, "
            f"given: {list(feed_dict.keys())}"
        )

    for name, value in feed_dict.items():
        if isinstance(value, int):
            continue
        meta = input_metadata[name]
        if meta.dtype is not None:
            dtype = array_dtype(value)
            if dtype != meta.dtype:
                raise PolyException(
                    f"Input tensor: {name} | Received unexpected dtype: {dtype}; expected: {meta.dtype}"
                )
        if meta.shape is not None:
            shape = array_shape(value)
            if not is_valid_shape_override(shape, meta.shape):
                raise PolyException(
                    f"Input tensor: {name} | Received incompatible shape: {shape}; "
                    f"expected a shape compatible with: {tuple(meta.shape)}"
                )


# infer()'s check_inputs parameter shadows the function inside it.
_check_inputs = check_inputs


class BaseRunner:
    """
    Base class of runners.

    A runner is activated (``activate()`` or ``with runner:``), runs ``infer(feed_dict)`` any
    number of times, and is deactivated. Subclasses implement ``activate_impl``,
    ``get_input_metadata_impl``, ``infer_impl`` and ``deactivate_impl``.
    """

    #: The public method through which each ``*_impl`` method is meant to be reached: calling
    #: a subclass's implementation directly from outside poly logs a warning, as in Polygraphy.
    IMPL_CALLERS = {
        "activate_impl": "activate",
        "get_input_metadata_impl": "get_input_metadata",
        "infer_impl": "infer",
        "deactivate_impl": "deactivate",
    }

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for impl, caller in BaseRunner.IMPL_CALLERS.items():
            method = cls.__dict__.get(impl)
            if method is not None and not hasattr(method, "__poly_checked_caller__"):
                setattr(cls, impl, check_called_by(caller)(method))

    RUNNER_COUNTS: defaultdict[str, int] = defaultdict(int)
    """Runners created so far, by name prefix; numbers default names."""

    is_active = False

    def __init__(self, name: str | None = None, prefix: str | None = None) -> None:
        """
        Args:
            name (str): The runner's name.
            prefix (str):
                    When no name is given, the name is this prefix (default ``"Runner"``)
                    followed by a per-prefix counter and the date and time, as in Polygraphy:
                    ``"onnxrt-runner-N0-11/21/26-05:04:00"``.
        """
        prefix = prefix or "Runner"
        if name is None:
            count = BaseRunner.RUNNER_COUNTS[prefix]
            BaseRunner.RUNNER_COUNTS[prefix] += 1
            name = f"{prefix}-N{count}-{time.strftime('%x')}-{time.strftime('%X')}"
        self.name = name
        self.inference_time: float | None = None
        """Seconds taken by the last ``infer()``; ``infer_impl`` may set it to a more precise figure."""
        self.is_active = False
        """Whether the runner is activated."""

    def __enter__(self) -> Self:
        self.activate()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc_value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.deactivate()

    def activate_impl(self) -> None:
        """Acquires resources (sessions, engines, buffers). Override this, not ``activate``."""

    def activate(self) -> None:
        """Activates the runner for inference; prefer ``with runner:``."""
        if self.is_active:
            G_LOGGER.warning(
                f"{self.name:35} | Already active; will not activate again. "
                "To really activate it again, call activate_impl() directly"
            )
            return
        self.activate_impl()
        self.is_active = True

    def deactivate_impl(self) -> None:
        """Releases resources. Override this, not ``deactivate``."""

    def deactivate(self) -> None:
        """Deactivates the runner; warns when it is not active."""
        if not self.is_active:
            G_LOGGER.warning(
                f"{self.name:35} | Not active; will not deactivate. "
                "To really deactivate it, call deactivate_impl() directly"
            )
            return
        self.inference_time = None
        try:
            self.deactivate_impl()
        finally:
            self.is_active = False

    def get_input_metadata_impl(self) -> TensorMetadata:
        """Returns a ``TensorMetadata`` of the model's inputs. Subclasses must implement it."""
        raise NotImplementedError("BaseRunner is an abstract class; implement get_input_metadata_impl()")

    def get_input_metadata(self, use_numpy_dtypes: bool | None = None) -> TensorMetadata:
        """
        Returns the model's inputs: names, ``DataTypeEntry`` data types and shapes (dynamic
        dimensions as -1, None or names). The runner must be active.

        Args:
            use_numpy_dtypes (bool):
                    Return NumPy data types instead of ``DataTypeEntry``s, as Polygraphy does by
                    default (types NumPy cannot hold stay ``DataTypeEntry``s). Pass False for
                    ``DataTypeEntry``s, which ``.numpy()`` converts. Defaults to True.

        Returns:
            TensorMetadata
        """
        if not self.is_active:
            G_LOGGER.critical(f"{self.name:35} | Must be activated prior to calling get_input_metadata()")
        meta = self.get_input_metadata_impl()
        if not isinstance(meta, TensorMetadata):
            meta = TensorMetadata(meta)
        for entry in meta.values():
            if entry.dtype is not None:
                entry.dtype = DataType.from_dtype(entry.dtype)
        if use_numpy_dtypes is None or use_numpy_dtypes:
            for entry in meta.values():
                entry.use_numpy_dtype()
        return meta

    def infer_impl(self, feed_dict: Mapping[str, Any], *args: Any, **kwargs: Any) -> dict[str, Any]:
        """Runs inference and returns a dict of output arrays. Subclasses must implement it."""
        raise NotImplementedError("BaseRunner is an abstract class; implement infer_impl()")

    def infer(self, feed_dict: Mapping[str, Any], check_inputs: bool = True, *args: Any, **kwargs: Any
              ) -> dict[str, Any]:
        """
        Runs inference on ``feed_dict`` (input name -> array). The runner must be active.

        The returned arrays belong to the runner until the next call; copy them to keep them.

        Args:
            feed_dict (Mapping[str, array-like]): The inputs.
            check_inputs (bool):
                    Check names, data types and shapes against ``get_input_metadata()`` first.
                    Defaults to True.
            *args, **kwargs: Passed to ``infer_impl``.

        Returns:
            Dict[str, numpy.ndarray]: Output name -> array.
        """
        if not self.is_active:
            G_LOGGER.critical(f"{self.name:35} | Must be activated prior to calling infer()")

        if check_inputs:
            input_metadata = self.get_input_metadata(use_numpy_dtypes=False)
            G_LOGGER.verbose(
                lambda: f"{self.name:35} | Input metadata is: {input_metadata}", mode=LogMode.ONCE
            )
            _check_inputs(feed_dict, input_metadata)

        # An infer_impl that times only the device work reports it by setting inference_time.
        self.inference_time = None
        start = time.perf_counter()
        outputs = self.infer_impl(feed_dict, *args, **kwargs)
        elapsed = time.perf_counter() - start
        if self.inference_time is None:
            self.inference_time = elapsed
        return outputs

    def last_inference_time(self) -> float | None:
        """
        Returns the seconds taken by the last ``infer()``, or None (with a warning) when there
        was none since activation.
        """
        if self.inference_time is None:
            G_LOGGER.warning(
                f"{self.name:35} | No inference time recorded: call infer() first", mode=LogMode.ONCE
            )
        return self.inference_time

    def __del__(self) -> None:
        if getattr(self, "is_active", False):
            # Interpreter shutdown may have torn down the logger's streams already.
            try:
                G_LOGGER.warning(
                    f"{self.name:35} | Was activated but never deactivated. This could cause a memory leak!"
                )
            except Exception:
                pass
