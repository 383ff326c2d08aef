"""Small helpers on values, sequences and dictionaries (Polygraphy's ``util`` names)."""

__all__ = ["default", "unique_list", "invert_dict", "is_sequence", "unpack_args", "find_str_in_iterable"]


def default(value, default_value):
    """``value``, or ``default_value`` when ``value`` is None (for mutable defaults)."""
    return value if value is not None else default_value


def unique_list(sequence):
    """The elements of ``sequence`` without repeats, in their first order."""
    return list(dict.fromkeys(sequence))


def invert_dict(dct):
    """``{value: key}`` for every item of ``dct`` (later keys win on repeated values)."""
    return {value: key for key, value in dct.items()}


def is_sequence(obj):
    """Whether ``obj`` is iterable and not a string, dictionary or set."""
    return hasattr(obj, "__iter__") and not isinstance(obj, (str, bytes, dict, set))


def unpack_args(args, num):
    """The first ``num`` elements of ``args`` (a sequence or one value), padded with None."""
    args = list(args) if is_sequence(args) else [args]
    return tuple((args + [None] * num)[:num])


def find_str_in_iterable(name, seq, index=None):
    """
    ``name`` if it is in ``seq``; else the element at ``index``, when given and in range; else
    None.
    """
    if name in seq:
        return name
    if index is not None and 0 <= index < len(seq):
        return seq[index]
    return None
