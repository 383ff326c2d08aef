"""
``InferShapes``: ONNX shape inference, completed by ONNX-Runtime's own type and shape
inference for what onnx cannot infer (ops outside the ONNX standard, for example), and run
through files for models too large for one protobuf message.
"""

import os
import tempfile
from typing import Any

from poly.core import G_LOGGER, BaseLoader, DataType, atomic_write_bytes
from poly.core.func import funcify, invoke_if_callable
from poly.core.optional_import import lazy_import
from poly.onnx.model.base import PROTOBUF_THRESHOLD, copy_model, iter_graphs, model_size

onnx = lazy_import("onnx")
onnxrt = lazy_import("onnxruntime")
shape_inference = lazy_import("onnx.shape_inference")

__all__ = ["InferShapes", "infer_shapes", "tensor_types", "untyped_tensors", "onnxruntime_tensor_types"]


def _has_type(value_info: Any) -> Any:
    kind = value_info.type.WhichOneof("value")
    if kind is None:
        return False
    if kind == "tensor_type":
        tensor_type = value_info.type.tensor_type
        return tensor_type.elem_type != 0 and tensor_type.HasField("shape")
    return True


def tensor_types(graph: Any) -> Any:
    """Returns {name: ValueInfoProto} for every typed value of ``graph`` (inputs, outputs, value_info)."""
    types: dict[Any, Any] = {}
    for value_info in (*graph.value_info, *graph.input, *graph.output):
        if value_info.name and value_info.type.WhichOneof("value") is not None:
            types.setdefault(value_info.name, value_info)
    return types


def untyped_tensors(model: Any) -> Any:
    """Returns the names of the top-level node outputs whose data type or shape is unknown."""
    graph = model.graph
    known = {name for name, vi in tensor_types(graph).items() if _has_type(vi)}
    known.update(t.name for t in graph.initializer)
    missing = []
    for node in graph.node:
        for name in node.output:
            if name and name not in known:
                missing.append(name)
                known.add(name)
    return missing


def _ort_value_info(name: Any, type_str: Any, shape: Any) -> Any:
    if not type_str.startswith("tensor("):
        return None
    try:
        elem_type = DataType.from_dtype(type_str, "onnxruntime").onnx()
    except Exception:
        return None
    # ONNX-Runtime reports an unknown rank as [], like a scalar: keep only the type then.
    dims = None if not shape else [d if isinstance(d, (int, str)) else None for d in shape]
    return onnx.helper.make_tensor_value_info(name, elem_type, dims)


def onnxruntime_tensor_types(model: Any, names: Any, model_path: Any = None) -> Any:
    """
    Asks ONNX-Runtime for the data types and shapes of tensors, without running the model:
    the tensors are marked as outputs and the session reports what it inferred for them.

    Args:
        model (onnx.ModelProto): The model (small enough to serialize) or its structure when
                ``model_path`` is given.
        names (Sequence[str]): Tensors to ask about.
        model_path (str): Where to write the probe model instead of serializing it to memory;
                external data must already be next to it.

    Returns:
        Dict[str, onnx.ValueInfoProto]: What ONNX-Runtime knows, by tensor name.
    """
    from poly.onnx.model.ir_version import onnxruntime_max_ir_version

    probe = copy_model(model)
    present = {o.name for o in probe.graph.output}
    for name in names:
        if name not in present:
            probe.graph.output.append(onnx.helper.make_empty_tensor_value_info(name))
    probe.ir_version = min(probe.ir_version, onnxruntime_max_ir_version())

    options = onnxrt.SessionOptions()
    options.graph_optimization_level = onnxrt.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.log_severity_level = 3
    if model_path is not None:
        atomic_write_bytes(model_path, probe.SerializeToString())
        source = model_path
    else:
        source = probe.SerializeToString()
    session = onnxrt.InferenceSession(source, options, providers=["CPUExecutionProvider"])
    wanted = set(names)
    found = {}
    for output in session.get_outputs():
        if output.name in wanted:
            value_info = _ort_value_info(output.name, output.type, output.shape)
            if value_info is not None:
                found[output.name] = value_info
    return found


def _merge_value_info(model: Any, found: Any) -> None:
    graph = model.graph
    existing = {vi.name: vi for vi in graph.value_info}
    outputs = {o.name: o for o in graph.output}
    for name, value_info in found.items():
        target = outputs.get(name) or existing.get(name)
        if target is not None:
            if _has_type(target):
                continue
            target.type.CopyFrom(value_info.type)
        else:
            graph.value_info.append(value_info)


def _transplant(src: Any, dst: Any) -> None:
    # src and dst have the same structure (one is a weightless copy of the other).
    for src_graph, dst_graph in zip(iter_graphs(src.graph), iter_graphs(dst.graph), strict=True):
        del dst_graph.value_info[:]
        dst_graph.value_info.extend(src_graph.value_info)
        for src_out, dst_out in zip(src_graph.output, dst_graph.output, strict=True):
            if not _has_type(dst_out) and src_out.type.WhichOneof("value") is not None:
                dst_out.type.CopyFrom(src_out.type)


class InferShapes(BaseLoader):
    """
    Functor that runs shape inference on an ONNX model.
    """

    def __init__(
        self,
        model: Any,
        error_ok: Any = None,
        external_data_dir: Any = None,
        save_to_disk_threshold_bytes: Any = None,
        allow_onnxruntime: Any = None,
    ) -> None:
        """
        Runs shape inference on an ONNX model.

        ONNX's shape inference runs first. Tensors it leaves without a type or shape, typically
        downstream of ops outside the ONNX standard, are then asked of ONNX-Runtime, which knows
        its own contrib ops. (ONNX's data propagation is not used: it expands constants element
        by element and needs some 25 times their size in memory.)

        Args:
            model (Union[onnx.ModelProto, Callable() -> onnx.ModelProto, str, Callable() -> str]):
                    An ONNX model or a callable that returns one, or a path to a model.
                    Models larger than the protobuf limit are supported.
            error_ok (bool):
                    Whether to return the model unchanged, with a warning, when inference fails.
                    Defaults to True.
            external_data_dir (str):
                    The directory of the model's external data, when the model is given as a path.
                    Defaults to the model's directory.
            save_to_disk_threshold_bytes (int):
                    Serialized model size above which inference goes through files on disk, with
                    the weights as external data. Defaults to about 2 GB (the protobuf limit).
                    For such models, the inferred shapes are added to the given model in place
                    rather than to a copy of all its weights.
            allow_onnxruntime (bool):
                    Whether to ask ONNX-Runtime for what ONNX's shape inference leaves unknown.
                    Defaults to True.
        """
        self._model = model
        self.error_ok = True if error_ok is None else bool(error_ok)
        self.external_data_dir = external_data_dir
        self.save_to_disk_threshold_bytes = (
            PROTOBUF_THRESHOLD if save_to_disk_threshold_bytes is None else save_to_disk_threshold_bytes
        )
        self.allow_onnxruntime = True if allow_onnxruntime is None else bool(allow_onnxruntime)

    def _fail(self, what: Any, err: Any) -> None:
        if not self.error_ok:
            G_LOGGER.critical(f"{what} failed: {err}")
        G_LOGGER.warning(
            f"{what} failed; continuing without the shapes it would give. Note: error was: {err}"
        )

    def _infer_from_path(self, path: Any) -> Any:
        from poly.onnx.model.io import onnx_from_path

        external_data_dir = self.external_data_dir or os.path.dirname(os.path.abspath(path))
        with tempfile.TemporaryDirectory(prefix="poly_shapes_") as tmp:
            out_path = os.path.join(tmp, "inferred.onnx")
            try:
                shape_inference.infer_shapes_path(os.fspath(path), out_path)
            except Exception as err:
                self._fail("ONNX shape inference", err)
                return onnx_from_path(path, external_data_dir=external_data_dir)
            return onnx_from_path(out_path, external_data_dir=external_data_dir)

    def _infer_large(self, model: Any, run_onnx: bool = True) -> Any:
        from poly.onnx.model.io import onnx_from_path, save_onnx

        G_LOGGER.warning(
            f"Model size ({model_size(model) / 1024**2:.1f} MiB) exceeds the in-memory threshold "
            f"({self.save_to_disk_threshold_bytes / 1024**2:.1f} MiB); running shape inference through files"
        )
        with tempfile.TemporaryDirectory(prefix="poly_shapes_") as tmp:
            src = os.path.join(tmp, "model.onnx")
            save_onnx(model, src, external_data_path="model.data", size_threshold=1024)
            out_path = os.path.join(tmp, "inferred.onnx")
            try:
                if run_onnx:
                    shape_inference.infer_shapes_path(src, out_path)
                    _transplant(onnx_from_path(out_path, ignore_external_data=True), model)
            except Exception as err:
                self._fail("ONNX shape inference", err)
            # The probe for ONNX-Runtime reads the weights from the files written above.
            self._complete_with_onnxruntime(
                model, onnx_from_path(src, ignore_external_data=True), os.path.join(tmp, "probe.onnx")
            )
        return model

    def _complete_with_onnxruntime(self, model: Any, structure: Any = None, probe_path: Any = None) -> None:
        if not self.allow_onnxruntime:
            return
        missing = untyped_tensors(model)
        if not missing:
            return
        G_LOGGER.verbose(
            f"Asking ONNX-Runtime for the types of {len(missing)} tensor(s) ONNX could not infer"
        )
        try:
            found = onnxruntime_tensor_types(
                structure if structure is not None else model, missing, probe_path
            )
        except Exception as err:
            from poly.onnx.model.errors import explain_onnxruntime_error

            G_LOGGER.warning(
                f"ONNX-Runtime could not infer the {len(missing)} tensor type(s) that ONNX shape inference "
                f"left unknown (e.g. '{missing[0]}'): {explain_onnxruntime_error(err)}"
            )
            return
        _merge_value_info(model, found)

    def call_impl(self) -> Any:
        """
        Returns:
            onnx.ModelProto: The model with shapes inferred.
        """
        model = invoke_if_callable(self._model)
        G_LOGGER.verbose("Starting shape inference")

        if isinstance(model, (str, os.PathLike)):
            model = self._infer_from_path(model)
            if model_size(model) >= self.save_to_disk_threshold_bytes:
                return self._infer_large(model, run_onnx=False)
        elif not isinstance(model, onnx.ModelProto):
            G_LOGGER.critical(
                f"Expected an ONNX ModelProto or a path (or a loader returning one), got: {type(model).__name__}"
            )
        elif model_size(model) >= self.save_to_disk_threshold_bytes:
            return self._infer_large(model)
        else:
            try:
                model = shape_inference.infer_shapes(model)
            except Exception as err:
                self._fail("ONNX shape inference", err)
                model = copy_model(model)

        self._complete_with_onnxruntime(model)
        G_LOGGER.verbose("Shape inference completed")
        return model


infer_shapes = funcify(InferShapes)
