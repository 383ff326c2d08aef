"""``ModifyNetworkOutputs``: mark every tensor (``MARK_ALL``) or chosen tensors as network outputs."""

from typing import Any

from poly.core import G_LOGGER, BaseLoader
from poly.core.constants import MARK_ALL
from poly.core.func import funcify, invoke_if_callable
from poly.trt.networks.creation import unpack_network
from poly.trt.tensorrt_module import trt

__all__ = ["ModifyNetworkOutputs", "modify_network_outputs", "markable_tensors", "network_outputs"]

# Layers whose outputs cannot be network outputs: they live inside loops or conditionals, or
# only carry shapes between them.
_UNMARKABLE_LAYER_TYPES = (
    "ITERATOR",
    "RECURRENCE",
    "TRIP_LIMIT",
    "LOOP_OUTPUT",
    "CONDITIONAL_INPUT",
    "CONDITIONAL_OUTPUT",
    "CONDITION",
)


def network_outputs(network: Any) -> list[Any]:
    """The names of the network's outputs, in order."""
    return [network.get_output(i).name for i in range(network.num_outputs)]


def _outputs_by_name(network: Any) -> dict[Any, Any]:
    return {network.get_output(i).name: network.get_output(i) for i in range(network.num_outputs)}


def markable_tensors(network: Any, layer_types: Any = None) -> Any:
    """
    The output tensors of the network's layers that may be marked as network outputs, in
    layer order: not shape tensors, not inside loops or conditionals. With ``layer_types``
    (names such as ``"CONVOLUTION"``) only those layers' outputs.
    """
    unmarkable = {
        getattr(trt.LayerType, name) for name in _UNMARKABLE_LAYER_TYPES if hasattr(trt.LayerType, name)
    }
    wanted = None if layer_types is None else {str(t).split(".")[-1].upper() for t in layer_types}
    tensors = []
    seen = set()
    for index in range(network.num_layers):
        layer = network.get_layer(index)
        if layer.type in unmarkable:
            continue
        if wanted is not None and str(layer.type).split(".")[-1] not in wanted:
            continue
        for out in range(layer.num_outputs):
            tensor = layer.get_output(out)
            if tensor is None or tensor.name in seen or tensor.is_shape_tensor:
                continue
            seen.add(tensor.name)
            tensors.append(tensor)
    return tensors


class ModifyNetworkOutputs(BaseLoader):
    """Functor that sets the outputs of a TensorRT network."""

    def __init__(self, network: Any, outputs: Any = None, exclude_outputs: Any = None, mark_layer_types: Any = None) -> None:
        """
        Args:
            network (Union[Tuple, Callable() -> Tuple]): ``(builder, network[, parser])`` or its loader.
            outputs (Sequence[str] or MARK_ALL): The tensors to make outputs, replacing the
                    current outputs; ``constants.MARK_ALL`` marks every layer's outputs.
                    None keeps the current outputs.
            exclude_outputs (Sequence[str]): Tensors to unmark afterwards (with MARK_ALL, mostly).
            mark_layer_types (Sequence[str]): With MARK_ALL, only these layer types' outputs
                    (names of ``trt.LayerType`` members).
        """
        self._network = network
        self.outputs = outputs
        self.exclude_outputs = list(exclude_outputs or [])
        self.mark_layer_types = mark_layer_types

    def call_impl(self) -> Any:
        """
        Returns:
            The same tuple as the network loader, with its network's outputs changed.
        """
        value = invoke_if_callable(self._network)
        _, network, _ = unpack_network(value)
        if self.outputs == MARK_ALL:
            self._mark_all(network)
        elif self.outputs is not None:
            self._mark_named(network, list(self.outputs))
        if self.exclude_outputs:
            self._exclude(network)
        G_LOGGER.verbose(lambda: f"Network outputs are now: {network_outputs(network)}")
        return value

    def _mark_all(self, network: Any) -> None:
        current = set(network_outputs(network))
        marked = 0
        for tensor in markable_tensors(network, self.mark_layer_types):
            if tensor.name not in current and not tensor.is_network_input:
                network.mark_output(tensor)
                marked += 1
        G_LOGGER.info(f"Marked {marked} tensor(s) as outputs ({network.num_outputs} output(s) in all)")

    def _mark_named(self, network: Any, names: Any) -> None:
        outputs = _outputs_by_name(network)
        by_name = {**{t.name: t for t in markable_tensors(network)}, **outputs}
        missing = [name for name in names if name not in by_name]
        if missing:
            G_LOGGER.critical(
                f"Cannot mark {missing} as output(s): no such tensor in the network "
                f"(it has {len(by_name)} markable tensors, e.g. {sorted(by_name)[:8]})"
            )
        for name, tensor in outputs.items():
            if name not in names:
                network.unmark_output(tensor)
        for name in dict.fromkeys(names):
            if name not in outputs:
                network.mark_output(by_name[name])

    def _exclude(self, network: Any) -> None:
        outputs = _outputs_by_name(network)
        unknown = [name for name in self.exclude_outputs if name not in outputs]
        if unknown:
            G_LOGGER.warning(f"Cannot exclude {unknown}: not network outputs")
        for name in self.exclude_outputs:
            if name in outputs:
                network.unmark_output(outputs[name])
        if network.num_outputs == 0:
            G_LOGGER.critical("Excluding outputs left the network with no outputs")


modify_network_outputs = funcify(ModifyNetworkOutputs)
