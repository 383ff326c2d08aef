"""Attribute helpers: ``getattr_nested``, ``try_getattr`` and ``TempAttrChange``."""

from typing import Any

__all__ = ["getattr_nested", "try_getattr", "TempAttrChange"]


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
