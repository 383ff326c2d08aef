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

from poly.core.logging.logger import G_LOGGER

__all__ = ["TypedDict", "TypedList"]


class _TypedContainer:
    """What both container kinds share: equality, length and iteration over their storage
    (the attribute named by ``_STORAGE``), and copies that copy the storage itself."""

    _STORAGE = ""

    def _storage(self):
        return getattr(self, self._STORAGE)

    def __str__(self):
        return str(self._storage())

    def __repr__(self):
        return f"{type(self).__name__}({self._storage()!r})"

    def __len__(self):
        return len(self._storage())

    def __eq__(self, other):
        return type(self) is type(other) and self._storage() == other._storage()

    __hash__ = None

    def __iter__(self):
        return iter(self._storage())

    def __copy__(self):
        new = type(self).__new__(type(self))
        new.__dict__.update(self.__dict__)
        setattr(new, self._STORAGE, copy.copy(self._storage()))
        return new

    def __deepcopy__(self, memo):
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        for attr, value in self.__dict__.items():
            setattr(new, attr, copy.deepcopy(value, memo))
        return new


def TypedDict(key_type_func, value_type_func):  # noqa: N802 (Polygraphy's name)
    """
    Returns a base class (not an instance) of dictionaries whose keys are of type
    ``key_type_func()`` and values of type ``value_type_func()``.
    """

    class TypedDictBase(_TypedContainer):
        _STORAGE = "dct"

        def __init__(self, dct=None):
            self.dct = {}
            for key, value in (dct or {}).items():
                self[key] = value

        def _check_types(self, key, value):
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

        def keys(self):
            return self.dct.keys()

        def values(self):
            return self.dct.values()

        def items(self):
            return self.dct.items()

        def get(self, key, default=None):
            return self.dct.get(key, default)

        def update(self, other):
            for key, value in dict(other).items():
                self[key] = value

        def __contains__(self, key):
            return key in self.dct

        def __getitem__(self, key):
            return self.dct[key]

        def __setitem__(self, key, value):
            self._check_types(key, value)
            self.dct[key] = value

        def __delitem__(self, key):
            del self.dct[key]



    return TypedDictBase


def TypedList(elem_type_func):  # noqa: N802 (Polygraphy's name)
    """Returns a base class (not an instance) of lists whose elements are of type ``elem_type_func()``."""

    class TypedListBase(_TypedContainer):
        _STORAGE = "lst"

        def __init__(self, lst=None):
            self.lst = []
            for elem in lst or []:
                self.append(elem)

        def _check_type(self, elem):
            elem_type = elem_type_func()
            if not isinstance(elem, elem_type):
                G_LOGGER.critical(
                    f"Unsupported element type in {type(self).__name__}. Element: {elem!r} is type "
                    f"`{type(elem).__name__}` but type `{elem_type.__name__}` was expected"
                )

        def __contains__(self, elem):
            return elem in self.lst

        def __getitem__(self, index):
            return self.lst[index]

        def __setitem__(self, index, elem):
            self._check_type(elem)
            self.lst[index] = elem

        def __delitem__(self, index):
            del self.lst[index]


        def append(self, elem):
            self._check_type(elem)
            self.lst.append(elem)

        def extend(self, elems):
            elems = list(elems)
            for elem in elems:
                self._check_type(elem)
            self.lst.extend(elems)

        def __iadd__(self, elems):
            self.extend(elems)
            return self


    return TypedListBase
