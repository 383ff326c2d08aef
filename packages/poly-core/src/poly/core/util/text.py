"""Text helpers for messages and ``__repr__``s: ``indent_block`` and ``make_repr``."""

from typing import Any

from poly.core import constants
from poly.core.util.scalars import is_inf, is_nan

__all__ = ["indent_block", "make_repr"]


def indent_block(block: Any, level: int = 1) -> Any:
    """Indents every line of ``str(block)`` by ``level`` tabs."""
    tab = constants.TAB * level
    return tab + f"\n{tab}".join(str(block).splitlines())


class _Verbatim(str):
    """A string whose ``repr`` is itself (``float('nan')`` written as code, not as a string)."""

    def __repr__(self) -> str:
        return str(self)


def _reprable(obj: Any) -> Any:
    # repr(float("nan")) is "nan", which is not code: write float('nan') instead, also inside
    # the built-in containers.
    if is_nan(obj) or is_inf(obj):
        return _Verbatim(f"float('{obj}')")
    if type(obj) in (list, tuple, set):
        return type(obj)(_reprable(elem) for elem in obj)
    if type(obj) is dict:
        return {_reprable(key): _reprable(value) for key, value in obj.items()}
    return obj


def make_repr(type_str: Any, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
    """
    A ``__repr__`` string for a call of ``type_str`` with these arguments, leaving out keyword
    arguments that are None: ``make_repr("Example", None, "s", w=None, x=2)`` gives
    ``"Example(None, 's', x=2)"``.

    Returns:
        Tuple[str, bool, bool]: The string, whether every positional argument is None and
        whether every keyword argument is None.
    """
    positional = [repr(_reprable(arg)) for arg in args]
    keywords = [f"{key}={_reprable(value)!r}" for key, value in kwargs.items() if value is not None]
    text = f"{type_str}({', '.join(positional + keywords)})"
    return text, all(arg is None for arg in args), all(value is None for value in kwargs.values())
