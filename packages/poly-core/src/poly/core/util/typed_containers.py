"""
``TypedDict`` and ``TypedList``: factories of dictionary- and list-like base classes that check
the types of what is put in them (Polygraphy's ``polygraphy.common.interface``)::

    class Scores(TypedDict(lambda: str, lambda: float)):
        pass

    scores = Scores()
    scores["a"] = 1.0
    scores[0] = 1.0   # PolyException: Unsupported key type ... (expected str)

The types are given as functions returning them, so that a class may name types defined later.
A wrong type raises ``PolyException`` through ``G_LOGGER.critical``.
"""

import copy
from typing import Any

from poly.core.logging.logger import G_LOGGER

__all__ = ["TypedDict", "TypedList"]


class _TypedContainer:
    """What both container kinds share: equality, length and iteration over their storage
    (the attribute named by ``_STORAGE``), and copies that copy the storage itself."""

    _STORAGE = ""

    def _storage(self) -> Any:
        return getattr(self, self._STORAGE)

    def __str__(self) -> str:
        return str(self._storage())

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._storage()!r})"

    def __len__(self) -> int:
        return len(self._storage())

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self._storage() == other._storage()

    __hash__: Any = None

    def __iter__(self) -> Any:
        return iter(self._storage())

    def __copy__(self) -> Any:
        new = type(self).__new__(type(self))
        new.__dict__.update(self.__dict__)
        setattr(new, self._STORAGE, copy.copy(self._storage()))
        return new

    def __deepcopy__(self, memo: Any) -> Any:
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        for attr, value in self.__dict__.items():
            setattr(new, attr, copy.deepcopy(value, memo))
        return new


def TypedDict(key_type_func: Any, value_type_func: Any) -> Any:  # noqa: N802 (Polygraphy's name)
    """
    Returns a base class (not an instance) of dictionaries whose keys are of type
    ``key_type_func()`` and values of type ``value_type_func()``.
    """

    class TypedDictBase(_TypedContainer):
        _STORAGE = "dct"

        def __init__(self, dct: Any = None) -> None:
            self.dct: dict[Any, Any] = {}
            for key, value in (dct or {}).items():
                self[key] = value

        def _check_types(self, key: Any, value: Any) -> None:
            key_type, value_type = key_type_func(), value_type_func()
            if not isinstance(key, key_type):
                G_LOGGER.critical(
                    f"Unsupported key type in {self}. Key: {key!r} is type `{type(key).__name__}` "
                    f"but {type(self).__name__} expects type `{key_type.__name__}`"
                )
            if not isinstance(value, value_type):
                G_LOGGER.critical(
                    f"Unsupported value type in {self}. Value: {value!r} for key: {key!r} is type "
                    f"`{type(value).__name__}` but {type(self).__name__} expects type `{value_type.__name__}`"
                )

        def keys(self) -> Any:
            return self.dct.keys()

        def values(self) -> Any:
            return self.dct.values()

        def items(self) -> Any:
            return self.dct.items()

        def get(self, key: Any, default: Any = None) -> Any:
            return self.dct.get(key, default)

        def update(self, other: Any) -> None:
            for key, value in dict(other).items():
                self[key] = value

        def __contains__(self, key: Any) -> bool:
            return key in self.dct

        def __getitem__(self, key: Any) -> Any:
            return self.dct[key]

        def __setitem__(self, key: Any, value: Any) -> None:
            self._check_types(key, value)
            self.dct[key] = value

        def __delitem__(self, key: Any) -> None:
            del self.dct[key]



    return TypedDictBase


def TypedList(elem_type_func: Any) -> Any:  # noqa: N802 (Polygraphy's name)
    """Returns a base class (not an instance) of lists whose elements are of type ``elem_type_func()``."""

    class TypedListBase(_TypedContainer):
        _STORAGE = "lst"

        def __init__(self, lst: Any = None) -> None:
            self.lst: list[Any] = []
            for elem in lst or []:
                self.append(elem)

        def _check_type(self, elem: Any) -> None:
            elem_type = elem_type_func()
            if not isinstance(elem, elem_type):
                G_LOGGER.critical(
                    f"Unsupported element type in {type(self).__name__}. Element: {elem!r} is type "
                    f"`{type(elem).__name__}` but type `{elem_type.__name__}` was expected"
                )

        def __contains__(self, elem: Any) -> bool:
            return elem in self.lst

        def __getitem__(self, index: Any) -> Any:
            return self.lst[index]

        def __setitem__(self, index: Any, elem: Any) -> None:
            self._check_type(elem)
            self.lst[index] = elem

        def __delitem__(self, index: Any) -> None:
            del self.lst[index]


        def append(self, elem: Any) -> None:
            self._check_type(elem)
            self.lst.append(elem)

        def extend(self, elems: Any) -> None:
            elems = list(elems)
            for elem in elems:
                self._check_type(elem)
            self.lst.extend(elems)

        def __iadd__(self, elems: Any) -> Any:
            self.extend(elems)
            return self


    return TypedListBase
