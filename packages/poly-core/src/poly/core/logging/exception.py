"""Exception types raised by poly."""

__all__ = ["PolyException", "PolyInternalException", "DataFormatError", "DataTypeConversionException", "PolyUsageError"]


class PolyException(Exception):
    """
    An error reported by poly.

    ``G_LOGGER.critical`` logs its message and raises this type, so catching it separates
    failures poly diagnosed (bad input, unsupported model, failed check) from bugs.
    """


class PolyInternalException(Exception):
    """
    A broken internal invariant: a bug in poly (or in a loader or runner written on poly's base
    classes), not a problem with the user's input. Deliberately not a ``PolyException``, so
    that code catching diagnosed failures does not swallow bugs.
    """


class DataFormatError(PolyException, ValueError):
    """
    A data file (JSON, .npy payload, .npz) that poly cannot or will not read.

    The message is a single line that names the file and the problem.
    """


class DataTypeConversionException(PolyException):
    """A data type that has no counterpart in the requested library."""


class PolyUsageError(PolyException, ValueError):
    """
    A value given to poly that the model or the operation cannot take: an input or output name
    the model does not have, a shape that does not fit an input, a tolerance out of range. The
    message is one line naming the value and what is wrong; `poly` reports it as a usage error
    (exit status 2).
    """
