"""
``override_input_shapes``: sets the shapes of a model's graph inputs in place (the
``--input-shapes`` / ``--model-input-shapes`` flags of ``check lint`` and ``debug reduce``).
"""

from typing import Any

from poly.core import G_LOGGER

__all__ = ["override_input_shapes"]


def override_input_shapes(model: Any, shapes: Any, flag: str = "--input-shapes", drop_value_info: bool = True) -> Any:
    """
    Sets the shapes of graph inputs (in place). ``shapes`` maps input name -> list of dims
    (non-negative ints, or strings for dynamic ones; anything else leaves the dimension
    unknown). With ``drop_value_info``, the intermediate shapes the new input shapes make stale
    are dropped. An unknown input name ends with one line naming ``flag`` and the model's inputs.

    Returns:
        onnx.ModelProto: ``model``.
    """
    if not shapes:
        return model
    initializers = {t.name for t in model.graph.initializer}
    inputs = {vi.name: vi for vi in model.graph.input if vi.name not in initializers}
    for name, dims in shapes.items():
        if name not in inputs:
            G_LOGGER.critical(f"{flag}: {name!r} is not an input of the model (inputs: {list(inputs)})")
        shape = inputs[name].type.tensor_type.shape
        del shape.dim[:]
        for dim in dims:
            entry = shape.dim.add()
            if isinstance(dim, int) and dim >= 0:
                entry.dim_value = dim
            elif isinstance(dim, str):
                entry.dim_param = dim
    if drop_value_info:
        del model.graph.value_info[:]
    return model
