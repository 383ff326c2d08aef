"""Attribute helpers: ``getattr_nested``, ``try_getattr``, ``TempAttrChange`` and ``frozen_instance``."""

from collections.abc import Mapping
from typing import Any, TypeVar

__all__ = ["getattr_nested", "try_getattr", "TempAttrChange", "frozen_instance"]

_T = TypeVar("_T")


def getattr_nested(obj: Any, attr: Any) -> Any:
    """``obj.a.b.c`` for ``attr="a.b.c"``."""
    for name in attr.split("."):
        obj = getattr(obj, name)
    return obj


def try_getattr(obj: Any, attr: Any, default: Any = None) -> Any:
    """``obj.attr`` when it exists, else ``default``."""
    return getattr(obj, attr, default)


class TempAttrChange:
    """
    Context manager that sets attributes of an object (an argument group, for example) for its
    duration and restores them afterwards; None values leave the attribute as it is.
    """

    def __init__(self, arg_group: Any, attr_values: Any) -> None:
        """
        Args:
            arg_group (object): The object whose attributes change.
            attr_values (Dict[str, Any]): The values to set, by attribute name.
        """
        self.arg_group = arg_group
        self.new_values = attr_values
        self.old_values: dict[Any, Any] = {}

    def __enter__(self) -> Any:
        for attr, value in self.new_values.items():
            if value is not None:
                self.old_values[attr] = getattr(self.arg_group, attr)
                setattr(self.arg_group, attr, value)
        return self.arg_group

    def __exit__(self, exc_type: Any, exc_value: Any, traceback: Any) -> None:
        for attr, value in self.old_values.items():
            setattr(self.arg_group, attr, value)
        self.old_values = {}


def frozen_instance(cls: type[_T], fields: Mapping[str, Any]) -> _T:
    """
    An instance of the frozen dataclass ``cls`` holding ``fields``, which must name every field of
    ``cls`` (defaults are not filled in): what ``cls(**fields)`` makes, without the generated
    ``__init__``'s ``object.__setattr__`` call per field. For results built on hot paths (a
    comparison of a small output spends microseconds on each such object); the instance is as
    frozen as one made by ``__init__``.

    Example::

        @dataclasses.dataclass(frozen=True)
        class Point:
            x: float
            y: float

        assert frozen_instance(Point, {"x": 1.0, "y": 2.0}) == Point(1.0, 2.0)
    """
    obj = object.__new__(cls)
    obj.__dict__.update(fields)
    return obj

