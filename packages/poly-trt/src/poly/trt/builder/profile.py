"""
``Profile``: an optimization profile (per input, the min/opt/max shapes TensorRT must handle),
validated when shapes are added, completed from a network's inputs by ``fill_defaults`` and
turned into a ``trt.IOptimizationProfile`` by ``to_trt``.
"""

from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

from poly.core import G_LOGGER

__all__ = ["Profile", "ShapeTuple", "DEFAULT_SHAPE_VALUE", "check_shape_tuple", "shape_tuple_problem"]

DEFAULT_SHAPE_VALUE = 1
"""Value that ``fill_defaults`` gives to a dynamic dimension of an input the profile does not name."""


class ShapeTuple:
    """The min, opt and max shapes (or, for shape-tensor inputs, values) of one input."""

    def __init__(self, min: Any, opt: Any, max: Any) -> None:
        self.min = tuple(int(d) for d in min)
        self.opt = tuple(int(d) for d in opt)
        self.max = tuple(int(d) for d in max)

    def __iter__(self) -> Iterator[Any]:
        yield from (self.min, self.opt, self.max)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ShapeTuple) and tuple(self) == tuple(other)

    def __repr__(self) -> str:
        return f"ShapeTuple(min={list(self.min)}, opt={list(self.opt)}, max={list(self.max)})"

    def __str__(self) -> str:
        return f"(min={list(self.min)}, opt={list(self.opt)}, max={list(self.max)})"


def shape_tuple_problem(name: Any, min: Any, opt: Any, max: Any) -> str | None:
    """What is wrong with a min/opt/max triple (one line naming the input), or None."""
    shapes = {"min": tuple(min), "opt": tuple(opt), "max": tuple(max)}
    given = f"min={list(shapes['min'])}, opt={list(shapes['opt'])}, max={list(shapes['max'])}"
    if len({len(s) for s in shapes.values()}) != 1:
        return f"Profile for input '{name}': min, opt and max must have the same rank, got {given}"
    for axis, (lo, mid, hi) in enumerate(zip(*shapes.values(), strict=True)):
        if any(int(d) < 0 for d in (lo, mid, hi)):
            return f"Profile for input '{name}': dimension {axis} must be given in full (no -1), got {given}"
        if not lo <= mid <= hi:
            return (
                f"Profile for input '{name}': dimension {axis} must satisfy min <= opt <= max, "
                f"got {lo}, {mid}, {hi} ({given})"
            )
    return None


def check_shape_tuple(name: Any, min: Any, opt: Any, max: Any) -> None:
    """Raises (one line naming the input) unless min <= opt <= max dimension by dimension."""
    problem = shape_tuple_problem(name, min, opt, max)
    if problem:
        G_LOGGER.critical(problem)


def _network_inputs(network: Any) -> list[Any]:
    return [network.get_input(i) for i in range(network.num_inputs)]


class Profile(OrderedDict):
    """An optimization profile: input name -> ``ShapeTuple``."""

    def add(self, name: Any, min: Any, opt: Any, max: Any) -> Any:
        """
        Sets the shapes of one input (checked: same rank, min <= opt <= max) and returns the
        profile, so calls chain.

        Args:
            name (str): The input's name.
            min, opt, max (Sequence[int]): Its minimum, optimum and maximum shapes.
        """
        check_shape_tuple(name, min, opt, max)
        self[name] = ShapeTuple(min, opt, max)
        return self

    def __getitem__(self, key: Any) -> Any:
        """The ``ShapeTuple`` of an input; a clear error for an input the profile does not name."""
        if key not in self:
            G_LOGGER.critical(f"Profile has no shapes for input '{key}'; it has: {list(self.keys())}")
        return super().__getitem__(key)

    def fill_defaults(self, network: Any, default_shape_value: Any = None) -> Any:
        """
        Adds the inputs of ``network`` the profile does not name: a static input gets its own
        shape, each dynamic dimension ``default_shape_value`` (default 1). Shape-tensor inputs
        get that value for each element. Returns the profile.
        """
        value = DEFAULT_SHAPE_VALUE if default_shape_value is None else int(default_shape_value)
        for tensor in _network_inputs(network):
            if tensor.name in self:
                continue
            dims = tuple(tensor.shape)
            if tensor.is_shape_tensor:
                count = dims[0] if dims else 1
                shape = (value,) * max(int(count), 0)
            else:
                shape = tuple(value if d < 0 else d for d in dims)
            if any(d < 0 for d in dims):
                G_LOGGER.warning(
                    f"Input '{tensor.name}' has dynamic shape {list(dims)} and no profile entry: "
                    f"using {list(shape)} for min, opt and max (set shapes with --trt-min/opt/max-shapes, or "
                    f"fix them in the model once: poly surgeon sanitize MODEL --override-input-shapes "
                    f"{tensor.name}:[{','.join(str(d) for d in shape)}] -o fixed.onnx)"
                )
            super().__setitem__(tensor.name, ShapeTuple(shape, shape, shape))
        return self

    def to_trt(self, builder: Any, network: Any) -> Any:
        """
        Creates a ``trt.IOptimizationProfile`` from this profile, first filling in defaults
        for inputs it does not name. Names and ranks are checked against the network.
        """
        inputs = {t.name: t for t in _network_inputs(network)}
        unknown = [name for name in self if name not in inputs]
        if unknown:
            G_LOGGER.critical(
                f"Profile names input(s) {unknown} that the network does not have; its inputs are: {list(inputs)}"
            )
        full = Profile(self).fill_defaults(network)
        profile = builder.create_optimization_profile()
        for name, shapes in full.items():
            tensor = inputs[name]
            dims = tuple(tensor.shape)
            if tensor.is_shape_tensor:
                profile.set_shape_input(name, *shapes)
                continue
            if len(shapes.min) != len(dims):
                G_LOGGER.critical(
                    f"Profile for input '{name}' has rank {len(shapes.min)} but the network input has shape {list(dims)}"
                )
            for axis, dim in enumerate(dims):
                if dim >= 0 and any(shape[axis] != dim for shape in shapes):
                    G_LOGGER.critical(
                        f"Profile for input '{name}' sets static dimension {axis} (= {dim}) to {shapes}"
                    )
            profile.set_shape(name, *shapes)
        return profile

    def __repr__(self) -> str:
        return "Profile(" + ", ".join(f"{name!r}: {shapes!r}" for name, shapes in self.items()) + ")"

    def __str__(self) -> str:
        return "{" + ", ".join(f"{name} {shapes}" for name, shapes in self.items()) + "}"
