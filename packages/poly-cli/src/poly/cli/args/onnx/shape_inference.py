"""The ONNX shape-inference group of the surgeon commands: --no-shape-inference (or
--shape-inference where it is off by default), --force-fallback-shape-inference (types and
shapes from a run in ONNX-Runtime on the data loader's inputs) and
--no-onnxruntime-shape-inference."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import click

from poly.cli.multi_option import stack_options


@dataclass(frozen=True)
class OnnxInferShapesArgs:
    """Whether and how shapes of an ONNX model's tensors are inferred."""

    shape_inference: bool = True
    """Run ONNX shape inference when the model is loaded (off when the fallback is forced)."""
    force_fallback: bool = False
    """--force-fallback-shape-inference: take every tensor's type and shape from a run in ONNX-Runtime."""
    allow_onnxruntime: bool = True
    """False with --no-onnxruntime-shape-inference: ONNX shape inference alone."""

    @classmethod
    def options(cls, default: bool = True, force_fallback: bool = True) -> Any:
        """--no-shape-inference (``default``) or --shape-inference, --force-fallback-shape-inference
        (with ``force_fallback``) and --no-onnxruntime-shape-inference."""
        if default:
            options = [click.option("--no-shape-inference", "shape_inference", flag_value=False, default=None,
                                    help="Do not run ONNX shape inference when loading the model.")]
        else:
            options = [click.option("--shape-inference", "--do-shape-inference", "shape_inference", flag_value=True,
                                    default=None, help="Run ONNX shape inference when loading the model.")]
        if force_fallback:
            options.append(click.option(
                "--force-fallback-shape-inference", is_flag=True,
                help="Take the types and shapes of all tensors from a run of the model in ONNX-Runtime, on inputs "
                "from the data loader options (dynamic dimensions become static)."))
        options.append(click.option(
            "--no-onnxruntime-shape-inference", "allow_onnxruntime", flag_value=False, default=True,
            help="Do not ask ONNX-Runtime about the tensors ONNX shape inference cannot type."))
        return stack_options(options, section="ONNX Shape Inference")

    @classmethod
    def from_kwargs(cls, kwargs: Mapping, default: bool = True) -> OnnxInferShapesArgs:
        """``default``: as given to ``options``. The shape-inference flag and
        --force-fallback-shape-inference together are a usage error."""
        force_fallback = bool(kwargs.get("force_fallback_shape_inference", False))
        given = kwargs["shape_inference"]
        if force_fallback and given is not None:
            flag = "--no-shape-inference" if default else "--shape-inference"
            raise click.UsageError(f"{flag} and --force-fallback-shape-inference cannot be used together.")
        return cls(
            # Shape inference is pointless when the fallback overwrites its results.
            shape_inference=(default if given is None else bool(given)) and not force_fallback,
            force_fallback=force_fallback,
            allow_onnxruntime=bool(kwargs["allow_onnxruntime"]),
        )

    def infer_shapes(self, model: Any, force: bool = False) -> Any:
        """A lazy InferShapes loader over ``model`` (a model or a loader of one) when shape
        inference is on (or ``force``), else ``model`` itself."""
        if not (self.shape_inference or force):
            return model
        from poly.onnx import InferShapes

        return InferShapes(model, allow_onnxruntime=self.allow_onnxruntime)

    def fallback_metadata(self, model: Any, data_loader_args: Any, outputs: Any = None) -> dict[Any, Any]:
        """
        Runs ``model`` (an onnx.ModelProto) in ONNX-Runtime on the first input of the data loader
        that ``data_loader_args`` (a DataLoaderArgs) describes, with every tensor (or
        ``outputs``) marked as an output (the input is saved where --save-inputs says). Returns
        {name: (poly.core.DataType, shape)}, inputs included.
        """
        from poly.compare import DataLoaderCache, save_inputs
        from poly.core import G_LOGGER, MARK_ALL, DataType
        from poly.onnx import ModifyOutputs, OnnxrtRunner, SessionFromOnnx

        marked = ModifyOutputs(model, outputs=outputs if outputs is not None else MARK_ALL)()
        with OnnxrtRunner(SessionFromOnnx(marked.SerializeToString())) as runner:
            cache = DataLoaderCache(data_loader_args.create_data_loader())
            cache.set_input_metadata(runner.get_input_metadata(use_numpy_dtypes=False))
            feed_dict = cache[0]
            if data_loader_args.save_inputs:
                save_inputs([feed_dict], data_loader_args.save_inputs)
            G_LOGGER.info("Running fallback shape inference with input shapes: "
                          f"{ {name: tuple(value.shape) for name, value in feed_dict.items()} }")
            results = dict(runner.infer(feed_dict))
        results.update(feed_dict)
        return {name: (DataType.from_dtype(value.dtype), tuple(value.shape)) for name, value in results.items()}
