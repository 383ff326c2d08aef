"""What changes the TensorRT network poly parses from the ONNX model: plugin libraries loaded
first (--plugins), the ONNX parser's flags (--onnx-flags, --plugin-instancenorm), and, once the
network is parsed, layer precisions, I/O data types and formats, and debug tensors
(--layer-precisions, --tensor-dtypes, --tensor-formats, --mark-debug,
--mark-unfused-tensors-as-debug-tensors). ``TrtNetworkArgs`` holds them and applies them with
poly.trt's loaders (``LoadPlugins``, ``NetworkFromOnnxPath``'s arguments, ``SetLayerPrecisions``,
``SetTensorDatatypes``, ``SetTensorFormats``, ``MarkDebug``), in Polygraphy's order."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import click

from poly.cli.gen_script.call_tree import Ref, Value, evaluate
from poly.cli.multi_option import multi_option, stack_options
from poly.cli.trt_values import trt_dtype_names, trt_enum_names
from poly.cli.value_parsing import split_name_value


def _parse_formats(args: Any) -> dict[str, tuple[str, ...]] | None:
    """`x:[linear,chw4] y:[hwc8]` -> {"x": ("LINEAR", "CHW4"), "y": ("HWC8",)} (checked names)."""
    if not args:
        return None
    formats = {}
    for arg in args:
        name, text = split_name_value("--tensor-formats", arg)
        text = text.strip()
        if not (text.startswith("[") and text.endswith("]")):
            raise click.BadParameter(f"{arg!r}: formats must be written in brackets, e.g. x:[linear,chw4]",
                                     param_hint="'--tensor-formats'")
        values = [part.strip() for part in text[1:-1].split(",") if part.strip()]
        formats[name] = tuple(trt_enum_names("--tensor-formats", "TensorFormat", values))
    return formats


@dataclass(frozen=True)
class TrtNetworkEdits:
    """The plugin, parser and network settings, each None (or empty) when not given."""

    plugins: tuple[str, ...] = ()
    onnx_flags: tuple[str, ...] | None = None
    """``trt.OnnxParserFlag`` names to set."""
    plugin_instancenorm: bool = False
    layer_precisions: dict[str, str] | None = None
    """Layer name -> TensorRT data type alias (``"float16"``)."""
    tensor_datatypes: dict[str, str] | None = None
    """I/O tensor name -> TensorRT data type alias."""
    tensor_formats: dict[str, tuple[str, ...]] | None = None
    """I/O tensor name -> ``trt.TensorFormat`` names."""
    mark_debug: tuple[str, ...] | None = None
    mark_unfused_tensors_as_debug_tensors: bool = False

    @classmethod
    def parser_options(cls) -> Any:
        """--plugins (in the section "TensorRT Plugin Loading"), --onnx-flags and --plugin-instancenorm
        (in "ONNX-TRT Parser Flags"), listed before --trt-outputs."""
        return stack_options([
            stack_options([
                multi_option("--plugins", type=click.Path(exists=True, dir_okay=False),
                             help="Plugin libraries to load before the network is parsed or the engine loaded."),
            ], section="TensorRT Plugin Loading"),
            multi_option("--onnx-flags",
                         help="ONNX parser flags to set, named as in trt.OnnxParserFlag (any case), e.g. "
                         "`--onnx-flags native_instancenorm`."),
            click.option("--plugin-instancenorm", is_flag=True,
                         help="Parse ONNX InstanceNormalization into the plugin (clears the parser's "
                         "NATIVE_INSTANCENORM flag) instead of the native layer."),
        ], section="ONNX-TRT Parser Flags")

    @classmethod
    def network_options(cls, tensor_formats: bool = False) -> Any:
        """The layer and tensor settings (listed after --trt-exclude-outputs); ``tensor_formats``
        adds --tensor-formats (on `convert`)."""
        options = [
            multi_option("--layer-precisions",
                         help="Compute precision per layer as LAYER:DTYPE, with TensorRT's data type names, e.g. "
                         "`--layer-precisions fc1:float16 fc2:float32` (full TensorRT; use with "
                         "--precision-constraints prefer or obey)."),
            multi_option("--tensor-dtypes", "--tensor-datatypes", "tensor_dtypes",
                         help="Data type per network I/O tensor as TENSOR:DTYPE, e.g. `--tensor-dtypes x:float16` "
                         "(full TensorRT: TensorRT-RTX takes the types from the model)."),
        ]
        if tensor_formats:
            options.append(multi_option(
                "--tensor-formats",
                help="Formats allowed per network I/O tensor as TENSOR:[FORMAT,...], named as in "
                "trt.TensorFormat (any case), e.g. `--tensor-formats x:[linear,chw4] y:[hwc8]`."))
        options += [
            multi_option("--mark-debug",
                         help="Names of tensors to mark as debug tensors, e.g. `--mark-debug t1 t2`."),
            click.option("--mark-unfused-tensors-as-debug-tensors", is_flag=True,
                         help="Mark every tensor the builder does not fuse away as a debug tensor."),
        ]
        return stack_options(options)

    @classmethod
    def from_kwargs(cls, kwargs: Mapping) -> TrtNetworkEdits:
        """Checks the names and data types against the installed TensorRT (a bad one is a usage
        error naming the flag)."""
        onnx_flags = kwargs.get("onnx_flags")
        layer_precisions = trt_dtype_names("--layer-precisions", kwargs.get("layer_precisions"))
        return cls(
            plugins=tuple(kwargs.get("plugins") or ()),
            onnx_flags=tuple(trt_enum_names("--onnx-flags", "OnnxParserFlag", onnx_flags)) if onnx_flags else None,
            plugin_instancenorm=bool(kwargs.get("plugin_instancenorm")),
            layer_precisions=layer_precisions,
            tensor_datatypes=trt_dtype_names("--tensor-dtypes", kwargs.get("tensor_dtypes")),
            tensor_formats=_parse_formats(kwargs.get("tensor_formats")),
            mark_debug=tuple(kwargs.get("mark_debug") or ()) or None,
            mark_unfused_tensors_as_debug_tensors=bool(kwargs.get("mark_unfused_tensors_as_debug_tensors")),
        )

    def parser_kwargs(self) -> dict:
        """The ``NetworkFromOnnxPath`` arguments of these settings (absent ones left out)."""
        kwargs = {}
        if self.onnx_flags:
            kwargs["flags"] = list(self.onnx_flags)
        if self.plugin_instancenorm:
            kwargs["plugin_instancenorm"] = True  # type: ignore[assignment]
        if self.mark_unfused_tensors_as_debug_tensors:
            kwargs["mark_unfused_tensors_as_debug_tensors"] = True  # type: ignore[assignment]
        return kwargs

    def plugins_expr(self, loader: Any) -> Any:
        """``loader`` (a call tree) wrapped in ``LoadPlugins`` when --plugins is given (the
        libraries load before it runs)."""
        if not self.plugins:
            return loader
        return Ref("poly.trt", "LoadPlugins")(list(self.plugins), loader)

    def load_plugins(self, loader: Any) -> Any:
        """``loader`` wrapped in ``LoadPlugins`` when --plugins is given."""
        return evaluate(self.plugins_expr(Value(loader)))

    def postprocess_expr(self, network: Any) -> Any:
        """The network loader ``network`` (a call tree) wrapped in ``SetLayerPrecisions``,
        ``SetTensorDatatypes``, ``SetTensorFormats`` and ``MarkDebug``, for the settings given
        (data types as ``trt.<alias>``)."""
        trt = Ref("poly.trt", "trt")
        for loader, dtypes in (("SetLayerPrecisions", self.layer_precisions),
                               ("SetTensorDatatypes", self.tensor_datatypes)):
            if dtypes:
                network = Ref("poly.trt", loader)(network, {name: trt.attr(d) for name, d in dtypes.items()})
        if self.tensor_formats:
            network = Ref("poly.trt", "SetTensorFormats")(
                network, {name: list(f) for name, f in self.tensor_formats.items()})
        if self.mark_debug:
            network = Ref("poly.trt", "MarkDebug")(network, list(self.mark_debug))
        return network

    def postprocess(self, network: Any) -> Any:
        """The network loader ``network`` wrapped as ``postprocess_expr`` says."""
        return evaluate(self.postprocess_expr(Value(network)))
