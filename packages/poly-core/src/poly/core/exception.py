"""Exception types raised by poly."""

__all__ = ["PolyException", "DataFormatError", "DataTypeConversionException"]


class PolyException(Exception):
    """
    An error reported by poly.

    ``G_LOGGER.critical`` logs its message and raises this type, so catching it separates
    failures poly diagnosed (bad input, unsupported model, failed check) from bugs.
    """


class DataFormatError(PolyException, ValueError):
    """
    A data file (JSON, .npy payload, .npz) that poly cannot or will not read.

    The message is a single line that names the file and the problem.
    """


class DataTypeConversionException(PolyException):
    """A data type that has no counterpart in the requested library."""
