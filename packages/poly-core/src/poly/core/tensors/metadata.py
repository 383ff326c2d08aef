"""``TensorMetadata``: an ordered mapping of tensor name to data type and shape."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, MutableMapping, Sequence
from typing import Any, cast

import numpy as np

from poly.core.arrays.datatype import DataType, DataTypeEntry
from poly.core.arrays.introspect import array_dtype, array_shape
from poly.core.logging.exception import DataTypeConversionException
from poly.core.tensors.shape import BoundedShape

__all__ = ["MetadataTuple", "TensorMetadata"]

ShapeLike = Sequence[int | str | None]
"""A shape: dimensions that are ints, or -1, None or a name for dynamic ones."""


class MetadataTuple:
    """
    The data type and shape of one tensor; unpacks as ``dtype, shape = meta``.

    The dtype is converted to a ``DataTypeEntry`` on assignment when possible.
    """

    def __init__(self, dtype: object, shape: ShapeLike | None, docstring: str | None = None) -> None:
        """
        Args:
            dtype (Any): The data type, in any form ``DataType.from_dtype`` accepts, or None.
            shape (Sequence[Union[int, str, None]]): The shape, or None if unknown.
            docstring (str): Free-form information about the tensor.
        """
        self.dtype = dtype
        self.shape = shape
        self.docstring = docstring

    @property
    def dtype(self) -> DataTypeEntry | np.dtype[Any] | None:
        """The ``DataTypeEntry`` (or None when unknown)."""
        return self._dtype

    @dtype.setter
    def dtype(self, value: object) -> None:
        self._dtype = DataType.from_dtype(value) if value is not None else None

    def use_numpy_dtype(self) -> None:
        """Replaces the ``DataTypeEntry`` by its NumPy dtype (what Polygraphy's runners return
        with ``use_numpy_dtypes=True``); the setter is bypassed so that the NumPy dtype stays."""
        if self._dtype is not None:
            with contextlib.suppress(DataTypeConversionException):  # no NumPy type (e.g. int4 without ml_dtypes)
                self._dtype = DataType.to_dtype(self._dtype, "numpy")

    def __iter__(self) -> Iterator[Any]:
        yield self.dtype
        yield self.shape

    def __eq__(self, other: object) -> bool:
        if isinstance(other, MetadataTuple):
            return self.dtype == other.dtype and _shape_key(self.shape) == _shape_key(other.shape)
        return NotImplemented

    __hash__: Any = None  # mutable: unhashable, as in Polygraphy

    def __repr__(self) -> str:
        return f"MetadataTuple({self.dtype!r}, {self.shape!r}, {self.docstring!r})"

    def __str__(self) -> str:
        items = []
        if self.dtype is not None:
            items.append(f"dtype={self.dtype}")
        if self.shape is not None:
            items.append(f"shape={tuple(self.shape)}")
        if self.docstring:
            items.append(self.docstring)
        return "[" + ", ".join(items) + "]" if items else ""


def _shape_key(shape: Sequence[object] | None) -> tuple[object, ...] | None:
    return None if shape is None else tuple(shape)


class TensorMetadata(MutableMapping[str, MetadataTuple]):
    """
    An ordered mapping of tensor name to ``MetadataTuple``: what a runner expects as input.

    Shapes may hold negative values, None or strings for dynamic dimensions.
    ::

        meta = TensorMetadata().add("x", DataType.FLOAT32, (-1, 3)).add("y", "int64", ("batch",))
        dtype, shape = meta["x"]
        print(meta)  # {x [dtype=float32, shape=(-1, 3)],
                     #  y [dtype=int64, shape=('batch',)]}
    """

    def __init__(self, dct: Mapping[str, MetadataTuple | tuple[Any, ShapeLike | None]] | None = None) -> None:
        """
        Args:
            dct (Mapping[str, Union[MetadataTuple, Tuple[dtype, shape]]]): Initial entries.
        """
        self._dct: dict[str, MetadataTuple] = {}
        if dct:
            self.update(cast("Mapping[str, MetadataTuple]", dct))  # __setitem__ converts the tuples

    @staticmethod
    def from_feed_dict(feed_dict: Mapping[str, object]) -> TensorMetadata:
        """
        Builds the metadata of the arrays in ``feed_dict`` (name -> array).

        Args:
            feed_dict (Mapping[str, array-like]): NumPy arrays or anything with dtype and shape.

        Returns:
            TensorMetadata
        """
        meta = TensorMetadata()
        for name, arr in feed_dict.items():
            meta.add(name, array_dtype(arr), array_shape(arr))
        return meta

    def add(self, name: str, dtype: object, shape: ShapeLike | None, min_shape: Sequence[int] | None = None,
            max_shape: Sequence[int] | None = None, docstring: str | None = None) -> TensorMetadata:
        """
        Adds (or replaces) an entry.

        Args:
            name (str): The tensor name.
            dtype (Any): The data type, in any form ``DataType.from_dtype`` accepts.
            shape (Sequence[Union[int, str, None]]): The shape; may be None if unknown.
            min_shape (Sequence[int]): The smallest valid shape, if known.
            max_shape (Sequence[int]): The largest valid shape, if known.
            docstring (str): Free-form information about the tensor.

        Returns:
            TensorMetadata: self, so that calls chain.
        """
        bounded = BoundedShape(shape, min=min_shape, max=max_shape) if shape is not None else None
        self[name] = MetadataTuple(dtype, bounded, docstring)
        return self

    def __getitem__(self, name: str) -> MetadataTuple:
        return self._dct[name]

    def __setitem__(self, name: str, value: MetadataTuple | tuple[Any, ShapeLike | None]) -> None:
        if not isinstance(name, str):
            raise TypeError(
                f"TensorMetadata keys are tensor names (str), not {type(name).__name__}: {name!r}"
            )
        if isinstance(value, tuple) and len(value) == 2:
            value = MetadataTuple(value[0], BoundedShape(value[1]) if value[1] is not None else None)
        if not isinstance(value, MetadataTuple):
            raise TypeError(
                f"TensorMetadata values are MetadataTuple or (dtype, shape), not {type(value).__name__}: {value!r}"
            )
        self._dct[name] = value

    def __delitem__(self, name: str) -> None:
        del self._dct[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._dct)

    def __len__(self) -> int:
        return len(self._dct)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, TensorMetadata):
            return list(self._dct.items()) == list(other._dct.items())
        return super().__eq__(other)

    __hash__: Any = None  # mutable: unhashable

    def __copy__(self) -> TensorMetadata:
        new = TensorMetadata()
        new._dct = dict(self._dct)
        return new

    def __repr__(self) -> str:
        text = "TensorMetadata()"
        for name, meta in self._dct.items():
            shape = list(meta.shape) if meta.shape is not None else None
            args = [repr(name), repr(meta.dtype), repr(shape)]
            for key in ("min", "max"):
                bound = getattr(meta.shape, key, None)
                if bound is not None:
                    args.append(f"{key}_shape={bound!r}")
            if meta.docstring is not None:
                args.append(f"docstring={meta.docstring!r}")
            text += f".add({', '.join(args)})"
        return text

    def __str__(self) -> str:
        return "{" + ",\n ".join(f"{name} {meta}".strip() for name, meta in self._dct.items()) + "}"
