"""
Polygraphy's argument groups ``ModelArgs``, ``OnnxLoadArgs``, ``TrtConfigArgs`` and ``DataLoaderArgs``
(``polygraphy.tools.args``), as
argparse groups rendered from the click flag groups poly's commands declare
(``poly.cli.args.model``, ``poly.cli.args.onnx.load``, ``poly.cli.args.trt.config``): the same
options, parsed the same way, into the same value objects, whose attributes the groups answer
after ``parse``. ``OnnxLoadArgs.add_to_script`` writes the ONNX loader `poly run` would use into a
``poly.tools.script.Script`` (the code of poly's own call tree), for extensions' groups to build on.

Example::

    import argparse
    from poly.tools.args import ModelArgs, TrtConfigArgs

    parser = argparse.ArgumentParser()
    groups = [ModelArgs(), TrtConfigArgs()]
    for group in groups:
        group.add_parser_args(parser)
    args = parser.parse_args(["model.onnx", "--fp16", "--input-shapes", "x:[1,3,224,224]"])
    for group in groups:
        group.parse(args)
    groups[0].path, groups[0].input_shapes, groups[1].builder_flags.fp16
"""

from __future__ import annotations

from typing import Any

from poly.cli.argparse_tools import ClickOptionsArgs
from poly.cli.multi_option import multi_option, stack_options

__all__ = ["ModelArgs", "OnnxLoadArgs", "TrtConfigArgs", "DataLoaderArgs"]


class ModelArgs(ClickOptionsArgs):
    """Model: MODEL, --model-type and the input shapes (Polygraphy's ``--input-shapes``, or
    ``input_shapes_opt_name``), as ``poly run`` reads them. After ``parse``: ``path``,
    ``model_type``, ``func_name`` and ``input_shapes`` (name -> shape)."""

    GROUP_TITLE = "Model"

    def __init__(self, model_opt_required: bool | None = None, required_model_type: str | None = None,
                 input_shapes_opt_name: str | None = None, input_shapes_opt_doc: str | None = None,
                 guess_model_type_from_runners: bool | None = None) -> None:
        """
        Args:
            model_opt_required (bool): Whether MODEL must be given. Defaults to False.
            required_model_type (str): The model type the tool needs ("onnx", "engine"...); a
                    model of another type given with --model-type is an error. None: any.
            input_shapes_opt_name (str): The input shapes option's name, without dashes
                    ("input-shapes" by default; False or "" for none).
            input_shapes_opt_doc (str): Its help text.
            guess_model_type_from_runners (bool): Accepted for Polygraphy's signature; poly
                    decides the type from --model-type or the file's extension.
        """
        super().__init__()
        self.model_opt_required = bool(model_opt_required)
        self.required_model_type = required_model_type
        self.input_shapes_opt_name = "input-shapes" if input_shapes_opt_name is None else input_shapes_opt_name
        self.input_shapes_opt_doc = input_shapes_opt_doc or (
            "Input shapes for dynamic inputs: `--input-shapes x:[1,3,224,224] y:[1,10]`.")
        self.guess_model_type_from_runners = guess_model_type_from_runners

    def click_options(self) -> Any:
        from poly.cli.args.model import ModelArgs as ClickModelArgs

        options = [ClickModelArgs.options(required=self.model_opt_required, model_type=True)]
        if self.input_shapes_opt_name:
            options.append(multi_option(f"--{self.input_shapes_opt_name}", "input_shapes",
                                        help=self.input_shapes_opt_doc))
        return stack_options(options)

    def from_kwargs(self, kwargs: dict[str, Any]) -> Any:
        import dataclasses

        from poly.cli.args.model import ModelArgs as ClickModelArgs
        from poly.cli.value_parsing import parse_shapes
        from poly.core import G_LOGGER

        model = ClickModelArgs.from_kwargs(kwargs, required=self.model_opt_required)
        if self.required_model_type and model.model_type and model.model_type != self.required_model_type:
            G_LOGGER.critical(f"--model-type: this tool needs a {self.required_model_type} model, not "
                              f"{model.model_type}")
        shapes = parse_shapes(f"--{self.input_shapes_opt_name}", kwargs.get("input_shapes"))

        @dataclasses.dataclass(frozen=True)
        class Model:
            path: str | None
            model_type: str | None
            func_name: str | None
            input_shapes: dict[str, list]

        return Model(model.path, model.model_type, model.func_name, shapes)


class OnnxLoadArgs(ClickOptionsArgs):
    """ONNX Model Loading: the outputs marked, shape inference, external data and float16
    conversion of `poly run`. Depends on ``ModelArgs`` (the model's path). After ``parse``: the
    attributes of ``poly.cli.args.onnx.load.OnnxLoadArgs``; ``load_onnx()`` loads the model, and
    ``add_to_script(script)`` adds its loader to a script and returns the loader's name."""

    GROUP_TITLE = "ONNX Model Loading"

    def __init__(self, allow_saving: bool | None = None, outputs_opt_prefix: str | None = None,
                 allow_shape_inference: bool | None = None, allow_from_tf: bool | None = None,
                 allow_setting_upper_bounds: bool | None = None) -> None:
        """Polygraphy's signature; poly offers `poly run`'s ONNX loading options whatever it is."""
        super().__init__()

    def click_options(self) -> Any:
        from poly.cli.args.onnx.load import OnnxLoadArgs as ClickOnnxLoadArgs

        return ClickOnnxLoadArgs.options(shape_inference=True, run_flags=True)

    def from_kwargs(self, kwargs: dict[str, Any]) -> Any:
        from poly.cli.args.onnx.load import OnnxLoadArgs as ClickOnnxLoadArgs

        return ClickOnnxLoadArgs.from_kwargs(kwargs)

    def _model_path(self) -> str:
        model = self.arg_groups.get(ModelArgs)
        path = getattr(model, "path", None) if model is not None else None
        if not path:
            from poly.core import G_LOGGER

            G_LOGGER.critical("OnnxLoadArgs needs a model path: register it with a parsed ModelArgs group")
        return str(path)

    def _loader_expr(self) -> Any:
        from poly.cli.gen_script.call_tree import Ref

        path = self._model_path()
        expr = self.values.loader_expr(path)
        return Ref("poly.onnx", "OnnxFromPath")(path) if isinstance(expr, str) else expr

    def load_onnx(self) -> Any:
        """The ONNX model (an ``onnx.ModelProto``) as these options load it."""
        from poly.cli.gen_script.call_tree import evaluate

        return evaluate(self._loader_expr())()

    def add_to_script_impl(self, script: Any, disable_custom_outputs: bool | None = None,
                           serialize_model: bool | None = None) -> Any:
        from poly.cli.gen_script.script_source import ScriptSource

        source = ScriptSource([])
        code = self._loader_expr().source(source)
        for module, names in sorted(source.imports.items()):
            script.add_import(imports=sorted(names), frm=module)
        for module in sorted(source.plain_imports):
            script.add_import(imports=[module])
        return script.add_loader(script.String(code, safe=True, inline=True), "load_onnx")


class TrtConfigArgs(ClickOptionsArgs):
    """TensorRT Builder Configuration: the builder flags, precisions, profiles, calibration,
    timing cache, tactics and config scripts of `poly convert` and `poly run --trt`. After
    ``parse``: the attributes of ``poly.cli.args.trt.config.TrtConfigArgs`` (``builder_flags``,
    ``profiles``, ``precision_constraints``, ``save_tactics``...) and ``create_config(...)``
    through it."""

    GROUP_TITLE = "TensorRT Builder Configuration"

    def __init__(self, precision_constraints_default: str | bool | None = None,
                 allow_random_data_calib_warning: bool | None = None, allow_custom_input_shapes: bool | None = None,
                 allow_engine_capability: bool | None = None, allow_tensor_formats: bool | None = None,
                 allow_compute_capabilities: bool | None = None) -> None:
        """
        Args (Polygraphy's signature; poly's `convert` options are offered whatever they are):
            precision_constraints_default (str): The --precision-constraints used when none is given.
            allow_random_data_calib_warning, allow_custom_input_shapes, allow_engine_capability,
            allow_tensor_formats, allow_compute_capabilities (bool): Accepted, not needed.
        """
        super().__init__()
        self.precision_constraints_default = precision_constraints_default

    def click_options(self) -> Any:
        from poly.cli.args.trt.config import TrtConfigArgs as ClickTrtConfigArgs

        return ClickTrtConfigArgs.options()

    def from_kwargs(self, kwargs: dict[str, Any]) -> Any:
        from poly.cli.args.trt.config import TrtConfigArgs as ClickTrtConfigArgs

        config = ClickTrtConfigArgs.from_kwargs(kwargs)
        default = self.precision_constraints_default
        if isinstance(default, str) and config.precision_constraints is None:
            config = config.with_precision_constraints(default)
        return config


class DataLoaderArgs(ClickOptionsArgs):
    """Data Loader: the synthetic data and input files of `poly run` (--seed, --val-range,
    --iterations, --input-shapes, --data-loader-script, --load-inputs...). After ``parse``: the
    attributes of ``poly.cli.args.data.data_loader.DataLoaderArgs``; ``get_data_loader`` makes the
    data loader they describe."""

    GROUP_TITLE = "Data Loader"

    def __init__(self, allow_custom_input_shapes: bool | None = None) -> None:
        """
        Args:
            allow_custom_input_shapes (bool): Offer --input-shapes. Defaults to True.
        """
        super().__init__()
        self.allow_custom_input_shapes = True if allow_custom_input_shapes is None else allow_custom_input_shapes

    def click_options(self) -> Any:
        from poly.cli.args.data.data_loader import DataLoaderArgs as ClickDataLoaderArgs

        return ClickDataLoaderArgs.options(input_shapes=self.allow_custom_input_shapes)

    def from_kwargs(self, kwargs: dict[str, Any]) -> Any:
        from poly.cli.args.data.data_loader import DataLoaderArgs as ClickDataLoaderArgs

        return ClickDataLoaderArgs.from_kwargs(kwargs)

    def get_data_loader(self, user_input_metadata: Any = None) -> Any:
        """The data loader of the options (an iterable of feed dicts); ``user_input_metadata``
        (a ``TensorMetadata``) gives the inputs' names, types and shapes for synthetic data."""
        loader = self.values.create_data_loader()
        if user_input_metadata is not None and hasattr(loader, "input_metadata"):
            loader.input_metadata = user_input_metadata
        return loader
