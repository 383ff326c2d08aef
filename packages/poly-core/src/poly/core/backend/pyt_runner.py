"""
``PytRunner``: runs a PyTorch ``torch.nn.Module`` (Polygraphy's ``polygraphy.backend.pyt``).

torch is never a dependency of poly: this module imports without it, and creating a runner
without torch installed is one error saying that torch is needed.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from poly.core.arrays.datatype import DataType
from poly.core.arrays.host import host_array
from poly.core.arrays.ops import is_torch
from poly.core.backend.runner import BaseRunner
from poly.core.func import invoke_if_callable
from poly.core.logging.exception import PolyException
from poly.core.optional_import import lazy_import
from poly.core.tensors.metadata import TensorMetadata

__all__ = ["PytRunner"]

torch = lazy_import("torch", purpose="PytRunner (running PyTorch models)")


class PytRunner(BaseRunner):
    """
    Runs inference using PyTorch.

    Unlike Polygraphy's, which always moves the inputs to CUDA and returns its outputs paired
    with the inference time, inputs go to the model's device (that of its first parameter or
    buffer; the CPU for a model that has none, unless ``device`` says otherwise), are passed in
    the order of ``input_metadata`` whatever the feed dict's order, and the model may return a
    tensor, a sequence of tensors or a dict of them.
    """

    def __init__(self, model: Any, input_metadata: TensorMetadata | Mapping[str, Any], output_names: Sequence[str],
                 name: str | None = None, device: Any = None) -> None:
        """
        Args:
            model (Union[torch.nn.Module, Callable() -> torch.nn.Module]):
                    A torch.nn.Module (or subclass), or a callable that returns one; called at
                    activation.
            input_metadata (TensorMetadata):
                    The model's inputs (names, data types, shapes), in the order of the model's
                    positional arguments.
            output_names (List[str]):
                    Names of the model's outputs, in the order it returns them (the
                    Comparator compares outputs by name).
            name (str):
                    The runner's name. Defaults to ``"pytorch-runner-N<count>-<date>-<time>"``.
            device (Union[str, torch.device]):
                    Where the inputs are placed. Defaults to the device of the model's
                    parameters, or the CPU for a model without parameters.

        Raises:
            MissingModuleError: when torch is not installed.
        """
        torch.load()  # torch is needed from the start: one clear error when it is missing
        super().__init__(name=name, prefix="pytorch-runner")
        self._model = model
        self.input_metadata = input_metadata if isinstance(input_metadata, TensorMetadata) \
            else TensorMetadata(input_metadata)
        self.output_names = list(output_names)
        self.device = device
        self.model: Any = None

    def activate_impl(self) -> None:
        # a module is callable too: only something that is not a module is called to make one
        self.model = self._model if isinstance(self._model, torch.nn.Module) else invoke_if_callable(self._model)
        if hasattr(self.model, "eval"):
            self.model.eval()

    def get_input_metadata_impl(self) -> TensorMetadata:
        return self.input_metadata

    def _device(self) -> Any:
        if self.device is not None:
            return torch.device(self.device)
        for tensors in ("parameters", "buffers"):
            first = next(iter(getattr(self.model, tensors, lambda: ())()), None)
            if first is not None:
                return first.device
        return torch.device("cpu")

    def _to_tensor(self, name: str, value: Any, device: Any) -> Any:
        if is_torch(value):
            return value.to(device)
        dtype = self.input_metadata[name].dtype
        array = np.asarray(value)
        if dtype is not None:
            array = array.astype(DataType.to_dtype(DataType.from_dtype(dtype), "numpy"), copy=False)
        return torch.from_numpy(np.ascontiguousarray(array)).to(device)

    def infer_impl(self, feed_dict: Mapping[str, Any]) -> dict[str, Any]:
        device = self._device()
        with torch.no_grad():
            inputs = [self._to_tensor(name, feed_dict[name], device) for name in self.input_metadata]
            start = time.perf_counter()
            outputs = self.model(*inputs)
            if device.type == "cuda":
                torch.cuda.synchronize(device)
            self.inference_time = time.perf_counter() - start

        if isinstance(outputs, Mapping):
            missing = [name for name in self.output_names if name not in outputs]
            if missing:
                raise PolyException(f"{self.name}: the model's outputs lack {missing} (it returned: {list(outputs)})")
            return {name: host_array(outputs[name]) for name in self.output_names}
        if is_torch(outputs):
            outputs = (outputs,)
        outputs = list(outputs)
        if len(outputs) != len(self.output_names):
            raise PolyException(f"{self.name}: the model returned {len(outputs)} output(s), but output_names names "
                                f"{len(self.output_names)}: {self.output_names}")
        return {name: host_array(out) for name, out in zip(self.output_names, outputs, strict=True)}

    def deactivate_impl(self) -> None:
        self.model = None
