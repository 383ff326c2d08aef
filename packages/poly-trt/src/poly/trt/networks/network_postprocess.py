"""
Loaders that change a parsed TensorRT network before it is built: ``PostprocessNetwork`` runs
any callable on it; ``SetTensorDatatypes``, ``SetTensorFormats`` and ``MarkDebug`` set the data
types and allowed formats of I/O tensors and mark debug tensors. Each takes and returns
``(builder, network[, parser])`` (or a loader of it), so they chain like Polygraphy's.
"""

from typing import Any

from poly.core import G_LOGGER, BaseLoader, DataType
from poly.core.func import funcify
from poly.trt.networks.creation import unpack_network
from poly.trt.tensorrt_module import flavour, trt

__all__ = [
    "all_tensors",
    "io_tensors",
    "PostprocessNetwork",
    "postprocess_network",
    "SetTensorDatatypes",
    "set_tensor_datatypes",
    "SetTensorFormats",
    "set_tensor_formats",
    "MarkDebug",
    "mark_debug",
]


def all_tensors(network: Any) -> Any:
    """Every tensor of the network by name: its inputs and every layer's inputs and outputs."""
    tensors = {network.get_input(i).name: network.get_input(i) for i in range(network.num_inputs)}
    for index in range(network.num_layers):
        layer = network.get_layer(index)
        for tensor in [layer.get_input(i) for i in range(layer.num_inputs)] + [
            layer.get_output(i) for i in range(layer.num_outputs)
        ]:
            if tensor is not None:
                tensors.setdefault(tensor.name, tensor)
    return tensors


def io_tensors(network: Any) -> Any:
    """The network's input and output tensors by name."""
    tensors = {network.get_input(i).name: network.get_input(i) for i in range(network.num_inputs)}
    tensors.update({network.get_output(i).name: network.get_output(i) for i in range(network.num_outputs)})
    return tensors


def _check_names(wanted: Any, available: Any, what: Any) -> None:
    unknown = [name for name in wanted if name not in available]
    if unknown:
        G_LOGGER.critical(f"{what}: no tensor(s) {unknown} in the network; it has: {sorted(available)}")


def _per_io_tensor(network: Any, wanted: Any, what: Any) -> tuple[Any, ...]:
    """``(name -> I/O tensor, name -> wanted value)``: one value for every I/O tensor when
    ``wanted`` is not a dict; names not in the network are an error naming them."""
    tensors = io_tensors(network)
    if not isinstance(wanted, dict):
        wanted = dict.fromkeys(tensors, wanted)
    _check_names(wanted, tensors, what)
    return tensors, wanted


class PostprocessNetwork(BaseLoader):
    """Functor that calls ``func(network=network)`` on a TensorRT network, which it may modify."""

    def __init__(self, network: Any, func: Any, name: Any = None) -> None:
        """
        Args:
            network (Union[Tuple, Callable() -> Tuple]): ``(builder, network[, parser])`` or its loader.
            func (Callable): Called with the keyword argument ``network`` (an ``INetworkDefinition``).
            name (str): A name for this step, in log messages.
        """
        if not callable(func):
            G_LOGGER.critical(f"Object {func!r} is not a callable: PostprocessNetwork needs a function of `network`")
        self._network = network
        self.func = func
        self.name = name or getattr(func, "__name__", "postprocessing")

    def call_impl(self) -> Any:
        """
        Returns:
            Tuple: ``(builder, network, parser)``, or ``(builder, network)`` when there is no parser.
        """
        builder, network, parser = unpack_network(self._network)
        G_LOGGER.verbose(f"Executing postprocessing step [{self.name}]")
        self.func(network=network)
        return (builder, network) if parser is None else (builder, network, parser)


class SetTensorDatatypes(PostprocessNetwork):
    """Functor that sets the data types of network input and output tensors."""

    def __init__(self, network: Any, tensor_datatypes: Any) -> None:
        """
        Args:
            network (Union[Tuple, Callable() -> Tuple]): ``(builder, network[, parser])`` or its loader.
            tensor_datatypes (Union[Dict[str, dtype], dtype]): Data type per I/O tensor name, or
                    one for every I/O tensor (``trt.float16``, ``DataType.FLOAT16``, ``"float16"``...).
        """
        self.tensor_datatypes = tensor_datatypes
        super().__init__(network, self._apply, "SetTensorDatatypes")

    def _apply(self, network: Any) -> None:
        tensors, wanted = _per_io_tensor(network, self.tensor_datatypes, "SetTensorDatatypes")
        for name, dtype in wanted.items():
            try:
                tensors[name].dtype = DataType.to_dtype(DataType.from_dtype(dtype), "tensorrt")
            except AttributeError:  # a read-only ``dtype``: TensorRT-RTX's strongly typed networks
                G_LOGGER.critical(f"SetTensorDatatypes: {flavour()} cannot change the data type of tensor {name} "
                                  "(its networks are strongly typed: types come from the model); "
                                  "this needs full TensorRT")


class SetTensorFormats(PostprocessNetwork):
    """Functor that sets the memory formats allowed for network input and output tensors."""

    def __init__(self, network: Any, tensor_formats: Any) -> None:
        """
        Args:
            network (Union[Tuple, Callable() -> Tuple]): ``(builder, network[, parser])`` or its loader.
            tensor_formats (Union[Dict[str, List[trt.TensorFormat]], List[trt.TensorFormat]]):
                    Allowed formats per I/O tensor name, or one list for every I/O tensor.
        """
        self.tensor_formats = tensor_formats
        super().__init__(network, self._apply, "SetTensorFormats")

    def _apply(self, network: Any) -> None:
        tensors, wanted = _per_io_tensor(network, self.tensor_formats, "SetTensorFormats")
        for name, formats in wanted.items():
            mask = 0
            for fmt in formats:
                if isinstance(fmt, str):
                    fmt = getattr(trt.TensorFormat, fmt.upper())
                mask |= 1 << int(fmt)
            tensors[name].allowed_formats = mask


class MarkDebug(PostprocessNetwork):
    """Functor that marks tensors as debug tensors: their values are reported at every inference
    (``TrtRunner`` returns them with the outputs)."""

    def __init__(self, network: Any, mark_debug: Any) -> None:
        """
        Args:
            network (Union[Tuple, Callable() -> Tuple]): ``(builder, network[, parser])`` or its loader.
            mark_debug (Sequence[str]): The names of the tensors to mark.
        """
        self.mark_debug = list(mark_debug)
        super().__init__(network, self._apply, "MarkDebug")

    def _apply(self, network: Any) -> None:
        tensors = all_tensors(network)
        _check_names(self.mark_debug, tensors, "MarkDebug")
        for name in self.mark_debug:
            if not network.mark_debug(tensors[name]):
                G_LOGGER.critical(f"MarkDebug: TensorRT refused to mark tensor {name} as a debug tensor")


postprocess_network = funcify(PostprocessNetwork)
set_tensor_datatypes = funcify(SetTensorDatatypes)
set_tensor_formats = funcify(SetTensorFormats)
mark_debug = funcify(MarkDebug)
