"""
Executors: run one piece of a model (a segment, or the shadow model of some nodes) on a backend
and return the values of the tensors asked for.

``OnnxExecutor`` runs ONNX models with ONNX-Runtime (``"onnxrt"``) or the ONNX reference
evaluator (``"onnx-ref"``) through poly's runners. A piece whose weights live in external data
files keeps them there: ONNX-Runtime reads them from the model's directory, the reference
evaluator loads only that piece's weights. Models over 2 GB therefore run a piece at a time.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from poly.core import G_LOGGER, PolyException, lazy_import

onnx = lazy_import("onnx")
onnxrt = lazy_import("onnxruntime")

_ORT_EXTERNAL_FOLDER = "session.model_external_initializers_file_folder_path"
"""ONNX-Runtime's session option naming the directory external data is read from when a model
is given as bytes."""

__all__ = ["OnnxExecutor", "EXECUTOR_KINDS"]

EXECUTOR_KINDS = ("onnxrt", "onnx-ref")
"""The backends an ``OnnxExecutor`` runs ONNX models on."""


def _external_locations(model: Any) -> list[str]:
    locations = []
    for init in model.graph.initializer:
        if init.data_location == onnx.TensorProto.EXTERNAL:
            for entry in init.external_data:
                if entry.key == "location" and entry.value not in locations:
                    locations.append(entry.value)
    return locations


class OnnxExecutor:
    """
    Runs ONNX models on one backend.

    Example::

        executor = OnnxExecutor("onnxrt", providers=["cpu"])
        values = executor.run(model, {"x": x}, ["y"])
    """

    def __init__(self, kind: str, providers: Sequence[Any] | None = None, model_dir: str | None = None) -> None:
        """
        Args:
            kind (str): ``"onnxrt"`` or ``"onnx-ref"``.
            providers (Sequence): ONNX-Runtime execution providers (``SessionFromOnnx``'s);
                    None: CPU.
            model_dir (str): The directory external data locations are relative to.
        """
        if kind not in EXECUTOR_KINDS:
            raise PolyException(f"unknown backend {kind!r}: choose from {', '.join(EXECUTOR_KINDS)}")
        self.kind = kind
        self.providers = providers
        self.model_dir = model_dir or os.getcwd()
        self.runs = 0
        """How many models this executor ran."""

    def __repr__(self) -> str:
        return f"OnnxExecutor({self.kind!r})"

    def _runner(self, source: Any, external: bool) -> Any:
        from poly.onnx import OnnxRefRunner, OnnxrtRunner, SessionFromOnnx

        if self.kind == "onnxrt":
            options = onnxrt.SessionOptions()
            # no arena, no preplanned block: a piece's memory goes back as soon as its tensors go
            options.enable_cpu_mem_arena = False
            options.enable_mem_pattern = False
            options.log_severity_level = 3
            threads = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 0
            options.intra_op_num_threads = options.inter_op_num_threads = threads
            if external:  # the weights are read from model_dir, where the model's data files are
                options.add_session_config_entry(_ORT_EXTERNAL_FOLDER, os.path.abspath(self.model_dir))
            return OnnxrtRunner(SessionFromOnnx(source, providers=self.providers, session_options=options),
                                name=f"{self.kind}-localize")
        return OnnxRefRunner(source, name=f"{self.kind}-localize")

    def run(self, model: Any, feed: dict[str, Any], outputs: Sequence[str]) -> dict[str, Any]:
        """
        Runs ``model`` on ``feed`` and returns the values of ``outputs`` (name -> NumPy array).

        Raises:
            PolyException: If the backend cannot build or run the model, naming the backend.
        """
        self.runs += 1
        external = bool(_external_locations(model))
        if external and self.kind == "onnx-ref":
            # only this piece's weights are read, from the model's directory
            model = onnx.ModelProto.FromString(model.SerializeToString())
            onnx.external_data_helper.load_external_data_for_model(model, os.path.abspath(self.model_dir))
            external = False
        return self._infer(model if self.kind == "onnx-ref" else model.SerializeToString(), feed, outputs,
                           external)

    def _infer(self, source: Any, feed: dict[str, Any], outputs: Sequence[str], external: bool) -> dict[str, Any]:
        with G_LOGGER.verbosity(G_LOGGER.ERROR):
            runner = self._runner(source, external)
            with runner:
                values = runner.infer(feed, check_inputs=False)
        return {name: values[name] for name in outputs if name in values}
