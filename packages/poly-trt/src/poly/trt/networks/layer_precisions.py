"""``SetLayerPrecisions``: set the precision of named layers (``layer.precision``) of a network,
for ``debug precision`` and ``--layer-precisions``. Full TensorRT only: TensorRT-RTX networks are
strongly typed and have no per-layer precision."""

import shlex
from collections.abc import Mapping
from typing import Any

from poly.core import G_LOGGER, BaseLoader, DataType
from poly.core.func import funcify, invoke_if_callable
from poly.trt.networks.creation import unpack_network
from poly.trt.tensorrt_module import flavour, trt

__all__ = [
    "SetLayerPrecisions",
    "set_layer_precisions",
    "supports_layer_precisions",
    "precision_candidate_layers",
    "layer_precisions_args",
    "layer_precisions_script",
]


def supports_layer_precisions(network: Any) -> bool:
    """Whether this flavour's layers have a settable ``precision``."""
    return network.num_layers == 0 or hasattr(network.get_layer(0), "precision")


_NOT_CANDIDATES = ("CONSTANT", "SHAPE", "SHUFFLE", "IDENTITY", "GATHER", "SLICE", "CONCATENATION", "CAST")
"""Layer types that only move or reinterpret data: their precision changes nothing."""


def precision_candidate_layers(network: Any) -> Any:
    """Names of the layers whose precision matters: computing layers with floating-point outputs."""
    skip = {getattr(trt.LayerType, name) for name in _NOT_CANDIDATES if hasattr(trt.LayerType, name)}
    floating = {
        getattr(trt.DataType, name) for name in ("FLOAT", "HALF", "BF16") if hasattr(trt.DataType, name)
    }
    names = []
    for index in range(network.num_layers):
        layer = network.get_layer(index)
        if layer.type in skip:
            continue
        outputs = [layer.get_output(i) for i in range(layer.num_outputs)]
        if outputs and all(t is not None and t.dtype in floating for t in outputs):
            names.append(layer.name)
    return names


class SetLayerPrecisions(BaseLoader):
    """Functor that sets layer precisions (layer name -> data type) on a network."""

    def __init__(self, network: Any, layer_precisions: Any) -> None:
        """
        Args:
            network (Union[Tuple, Callable() -> Tuple]): ``(builder, network[, parser])`` or its loader.
            layer_precisions (Dict[str, Union[DataType, numpy dtype, str, trt.DataType]]):
                    Layer name -> precision, e.g. ``{"conv1": "float32"}``.
        """
        self._network = network
        self.layer_precisions = dict(layer_precisions)

    def call_impl(self) -> Any:
        value = invoke_if_callable(self._network)
        _, network, _ = unpack_network(value)
        if not supports_layer_precisions(network):
            G_LOGGER.critical(
                f"Per-layer precisions are not available in {flavour()} (TensorRT-RTX networks are strongly "
                "typed); build with full TensorRT for this"
            )
        layers = {network.get_layer(i).name: network.get_layer(i) for i in range(network.num_layers)}
        unknown = [name for name in self.layer_precisions if name not in layers]
        if unknown:
            G_LOGGER.critical(f"Cannot set precisions of {unknown}: no such layer(s) in the network")
        for name, precision in self.layer_precisions.items():
            layers[name].precision = DataType.to_dtype(DataType.from_dtype(precision), "tensorrt")
        return value


set_layer_precisions = funcify(SetLayerPrecisions)


def layer_precisions_args(layer_precisions: Mapping[str, str]) -> list[str]:
    """The ``--layer-precisions`` arguments that set ``layer_precisions`` (layer name ->
    precision name, e.g. ``{"conv1": "float32"}``), quoted for a shell where a name needs it.

    Example::

        >>> layer_precisions_args({"conv1": "float32", "fc 2": "float32"})
        ['--layer-precisions', 'conv1:float32', "'fc 2:float32'"]
    """
    if not layer_precisions:
        return []
    return ["--layer-precisions", *(shlex.quote(f"{name}:{precision}") for name, precision in layer_precisions.items())]


def layer_precisions_script(layer_precisions: Mapping[str, str], note: str = "") -> str:
    """
    A network postprocess script (for ``--trt-network-postprocess-script``, Polygraphy's as well
    as poly's) whose ``postprocess(network)`` sets ``layer_precisions`` (layer name -> precision
    name such as ``"float32"``) on the layers of those names. It imports only TensorRT; a name the
    network does not have is an error naming it.

    Args:
        layer_precisions (Mapping[str, str]): Layer name -> precision name.
        note (str): A comment line put at the top (what wrote the script).
    """
    unknown = sorted({p for p in layer_precisions.values() if p not in _PRECISION_NAMES})
    if unknown:
        raise ValueError(f"unknown precision(s) {unknown}; known: {sorted(_PRECISION_NAMES)}")
    entries = "".join(f"    {name!r}: {precision!r},\n" for name, precision in layer_precisions.items())
    header = "".join(f"# {line}\n" for line in note.splitlines()) if note else ""
    return (
        f"{header}"
        "# A network postprocess script: build with `--trt-network-postprocess-script THIS_FILE` and\n"
        "# `--precision-constraints obey` (or `prefer`) so that TensorRT keeps these layer precisions.\n"
        "try:\n"
        "    import tensorrt as trt\n"
        "except ImportError:  # TensorRT-RTX: strongly typed, it has no per-layer precision to set\n"
        "    import tensorrt_rtx as trt\n"
        "\n"
        f"LAYER_PRECISIONS = {{\n{entries}}}\n"
        "\n"
        "\n"
        "def postprocess(network):\n"
        "    found = set()\n"
        "    for index in range(network.num_layers):\n"
        "        layer = network.get_layer(index)\n"
        "        if layer.name in LAYER_PRECISIONS:\n"
        "            layer.precision = getattr(trt, LAYER_PRECISIONS[layer.name])\n"
        "            found.add(layer.name)\n"
        "    missing = sorted(set(LAYER_PRECISIONS) - found)\n"
        "    if missing:\n"
        "        raise ValueError(f\"no layer named {missing} in the network\")\n"
        "    return network\n"
    )


_PRECISION_NAMES = frozenset({"float32", "float16", "bfloat16", "int8", "fp8", "int32", "int64", "bool", "uint8"})
"""Precision names TensorRT's module has as ``trt.<name>``."""
