"""``FormattedArray``: an array whose semantic shape differs from its layout in memory."""

from typing import Any

from poly.core.json import Decoder, Encoder, add_json_methods

__all__ = ["FormattedArray"]


@add_json_methods("formatted array")
class FormattedArray:
    """
    An array (often raw bytes) together with the shape it stands for.

    A vectorized TensorRT format such as ``N(C/4)HW4`` pads channels, so an ``NCHW`` tensor of
    shape ``(1, 3, 28, 28)`` occupies ``(1, 1, 28, 112)`` elements; ``FormattedArray(data,
    (1, 3, 28, 28))`` keeps the semantic shape next to the data for shape checks. Saved in JSON
    as Polygraphy's ``FormattedArray`` (``array`` and ``shape`` keys).
    """

    def __init__(self, array: Any, shape: Any) -> None:
        """
        Args:
            array (Union[numpy.ndarray, DeviceView]): The data.
            shape (Sequence[int]): The semantic shape of the data.
        """
        self.array = array
        self.shape = shape

    def __repr__(self) -> str:
        return f"FormattedArray(array=<{type(self.array).__name__}>, shape={tuple(self.shape)})"


@Encoder.register(FormattedArray)
def _encode(farray: Any) -> dict[Any, Any]:
    return {"array": farray.array, "shape": list(farray.shape)}


@Decoder.register(FormattedArray)
def _decode(dct: Any) -> Any:
    return FormattedArray(dct["array"], dct["shape"])
