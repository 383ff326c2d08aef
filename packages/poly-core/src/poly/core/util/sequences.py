"""Small helpers on values, sequences and dictionaries (Polygraphy's ``util`` names)."""

from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from typing import Any

from poly.core.logging.logger import G_LOGGER

__all__ = ["default", "unique_list", "invert_dict", "is_sequence", "unpack_args", "find_str_in_iterable",
           "check_sequence_contains"]


def default(value: Any, default_value: Any) -> Any:
    """``value``, or ``default_value`` when ``value`` is None (for mutable defaults)."""
    return value if value is not None else default_value


def unique_list(sequence: Any) -> list[Any]:
    """The elements of ``sequence`` without repeats, in their first order."""
    return list(dict.fromkeys(sequence))


def invert_dict(dct: Any) -> dict[Any, Any]:
    """``{value: key}`` for every item of ``dct`` (later keys win on repeated values)."""
    return {value: key for key, value in dct.items()}


def is_sequence(obj: Any) -> bool:
    """Whether ``obj`` is iterable and not a string, dictionary or set."""
    return hasattr(obj, "__iter__") and not isinstance(obj, (str, bytes, dict, set))


def unpack_args(args: Any, num: Any) -> tuple[Any, ...]:
    """The first ``num`` elements of ``args`` (a sequence or one value), padded with None."""
    args = list(args) if is_sequence(args) else [args]
    return tuple((args + [None] * num)[:num])


def find_str_in_iterable(name: Any, seq: Any, index: Any = None) -> Any:
    """
    Finds ``name`` in ``seq``: an exact match, else the first case-insensitive substring match
    either way, else the element at ``index`` (when given and in range), else None.
    """
    if isinstance(seq, (AbstractSet, Mapping)) and name in seq:  # (a dict's keys: no scan; pairing
        return name  # each of a model's thousands of outputs had scanned them all)
    seq = list(seq)
    if name in seq:
        return name
    lowered = name.lower()
    for elem in seq:
        if lowered in elem.lower() or elem.lower() in lowered:
            return elem
    if index is not None and 0 <= index < len(seq):
        return seq[index]
    return None


def check_sequence_contains(sequence: Any, items: Any, name: Any = None, items_name: Any = None, log_func: Any = None, check_missing: Any = None,
                            check_extra: Any = None) -> tuple[Any, ...]:
    """
    Reports the ``items`` that ``sequence`` lacks and the extra elements it holds, through
    ``log_func`` (default ``G_LOGGER.critical``, which raises).

    Args:
        sequence (Sequence[Any]): The sequence to check.
        items (Sequence[Any]): The items it should hold.
        name (str): What the sequence is, in messages. Defaults to "the sequence".
        items_name (str): What the items are, in messages. Defaults to "items".
        log_func (Callable[[str], None]): Where messages go. Defaults to ``G_LOGGER.critical``.
        check_missing (bool): Report missing items. Defaults to True.
        check_extra (bool): Report extra elements. Defaults to True.

    Returns:
        Tuple[Set[Any], Set[Any]]: The missing items and the extra elements.
    """
    log_func = default(log_func, G_LOGGER.critical)
    name, items_name = default(name, "the sequence"), default(items_name, "items")
    present, wanted = set(sequence), set(items)
    missing, extra = wanted - present, present - wanted
    note = f"Note: {items_name} requested were: {wanted}, but all {items_name} are: {present}"
    if default(check_missing, True) and missing:
        log_func(f"The following {items_name} were not found in {name}: {missing}.\n{note}")
    if default(check_extra, True) and extra:
        log_func(f"Extra {items_name} in {name}: {extra}.\n{note}")
    return missing, extra
