"""
Optional and heavy third-party modules, imported at first use.

Every poly package reaches onnx, onnxruntime, TensorRT, matplotlib, torch or ml_dtypes through
``lazy_import``, so that importing a poly package costs nothing until the module is needed, and a
missing module is reported as one line naming the ``pip install`` that brings it::

    onnx = lazy_import("onnx")
    gs = lazy_import("onnx_graphsurgeon", install="onnx-graphsurgeon")
    trt = lazy_import(["tensorrt", "tensorrt_rtx"], install="tensorrt")  # the first that imports

    onnx.load(path)  # onnx is imported here

A package's ``__init__.py`` re-exports the names of its submodules the same way, through
``lazy_exports``: ``import poly.core`` (and ``from poly import constants``) imports no submodule
until one of its names is read, so that a command imports only what it runs.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from poly.core import config
from poly.core.logging.exception import PolyException

__all__ = ["MissingModuleError", "LazyModule", "lazy_import", "has_module", "has_mod", "tensorrt_candidates",
           "lazy_exports"]


class MissingModuleError(PolyException, ImportError):
    """An optional module poly needs is not installed (the message names the ``pip install``)."""


class LazyModule:
    """
    A stand-in for a module that imports it on first attribute access.

    ``names`` is a module name, a list of names to try in order (the first that imports is used),
    or a function returning such a list, called at import time (for choices made by environment
    variables).
    """

    def __init__(self, names: str | Sequence[str] | Callable[[], Sequence[str]], install: str | None = None,
                 purpose: str | None = None, error: type[MissingModuleError] = MissingModuleError) -> None:
        """
        Args:
            names: What to import, as described above.
            install (str): The ``pip install`` arguments that bring the module; defaults to the
                    top-level name of the first candidate with ``_`` spelled ``-``.
            purpose (str): What the module is needed for, put in the error message
                    (``"Plotting heatmaps"``).
            error (type): The ``MissingModuleError`` subclass raised when no candidate imports
                    (a package's own error type, such as ``poly.trt.TensorRTMissingError``).
        """
        self._names = names
        self._install = install
        self._purpose = purpose
        self._error = error
        self._module: Any = None

    def candidates(self) -> list[str]:
        """The module names tried, in order."""
        # here, not at the top: poly.core.func imports the logger, which every package __init__
        # that re-exports through lazy_exports would otherwise import with this module
        from poly.core.func import invoke_if_callable

        names = invoke_if_callable(self._names)
        return [names] if isinstance(names, str) else list(names)

    def load(self) -> Any:
        """Imports (once) and returns the module, or raises ``MissingModuleError``."""
        if self._module is None:
            errors = []
            for name in self.candidates():
                try:
                    self._module = importlib.import_module(name)
                    break
                except ImportError as err:
                    errors.append(f"{name}: {err}")
            else:
                raise self._error(self._missing_message(errors))
        return self._module

    def _missing_message(self, errors: Any) -> str:
        candidates = self.candidates()
        install = self._install or candidates[0].split(".")[0].replace("_", "-")
        what = f"{self._purpose} needs" if self._purpose else "poly needs"
        names = " or ".join(f"'{name}'" for name in candidates)
        detail = errors[0] if len(errors) == 1 else "; ".join(errors)
        return f"{what} {names}, which could not be imported ({detail}): pip install {install}"

    def is_available(self) -> bool:
        """Whether the module imports (imports it when it does)."""
        try:
            self.load()
        except ImportError:
            return False
        return True

    @property
    def is_loaded(self) -> bool:
        """Whether the module has been imported through this stand-in."""
        return self._module is not None

    def reset(self) -> None:
        """Forgets the imported module: the next access imports again, choosing among the
        candidates anew (after an environment variable that orders them has changed, or after
        ``sys.modules`` has been given a substitute)."""
        self._module = None

    def __getattr__(self, attr: Any) -> Any:
        # Protocol lookups (copy, pickle, inspect, hasattr on dunders) must not import the module.
        if attr.startswith("__") and attr.endswith("__") and attr not in ("__version__", "__file__", "__name__"):
            raise AttributeError(attr)
        return getattr(self.load(), attr)

    def __repr__(self) -> str:
        state = f"loaded from {self._module.__name__}" if self._module is not None else "not loaded"
        return f"<LazyModule {' | '.join(self.candidates())} ({state})>"


def lazy_import(names: str | Sequence[str] | Callable[[], Sequence[str]], install: str | None = None,
                purpose: str | None = None, error: type[MissingModuleError] = MissingModuleError, *,
                pkg_name: str | None = None, log: bool = True, install_flags: Any = None, requires: Any = None) -> LazyModule:
    """
    Returns a ``LazyModule`` for ``names`` (see ``LazyModule``): nothing is imported until an
    attribute is read.

    Polygraphy's spelling (``polygraphy.mod.lazy_import``) is accepted too: a version
    requirement in the name (``"onnx>=1.8.1"``) is dropped (poly reports a missing module, it
    does not check versions), ``pkg_name`` is the pip name (``install``); ``log``,
    ``install_flags`` and ``requires`` concern automatic installation, which poly never does.
    """
    if isinstance(names, str):
        names = re.split(r"[<>=!~\s]", names, maxsplit=1)[0]
    return LazyModule(names, install=install or pkg_name, purpose=purpose, error=error)


def has_mod(name: str) -> bool:
    """Polygraphy's name of ``has_module``."""
    return has_module(name)


def has_module(name: str) -> bool:
    """Whether ``name`` is importable, found without importing it (already imported counts)."""
    if name in sys.modules:
        return sys.modules[name] is not None
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def tensorrt_candidates() -> list[str]:
    """
    The TensorRT modules poly tries, in order: full TensorRT (``tensorrt``), else TensorRT-RTX
    (``tensorrt_rtx``, then ``tensorrt_rtx_bindings``); ``POLY_USE_TENSORRT_RTX=1`` skips full
    TensorRT. Read each time, so a ``LazyModule`` given this function orders its candidates when
    it imports.
    """
    if config.USE_TENSORRT_RTX or os.environ.get("POLY_USE_TENSORRT_RTX", "0") not in ("", "0"):
        return ["tensorrt_rtx", "tensorrt_rtx_bindings"]
    return ["tensorrt", "tensorrt_rtx", "tensorrt_rtx_bindings"]


def lazy_exports(package: str, exports: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """
    The module-level ``__getattr__`` and ``__dir__`` of package ``package`` (its ``__name__``),
    whose ``__init__.py`` re-exports names of its submodules without importing them::

        __getattr__, __dir__ = lazy_exports(__name__, {"DataType": "poly.core.arrays.datatype", ...})

    ``exports`` maps each re-exported name to the module that defines it; a name whose module is
    ``package.name`` is that submodule itself (so no name may be both a submodule and an object
    that submodule defines, such as a function ``strip_weights`` of module ``strip_weights``:
    importing the submodule would bind the name to the module first). The first read of a name imports its module and
    stores the object in the package, so later reads cost nothing and every read gives the same
    object as the module's. Any other submodule of the package is imported when read as an
    attribute (as an eager ``__init__`` that imported it made it readable). ``__dir__`` lists the
    package's names and ``exports``'. The ``__init__`` imports the same names under
    ``if TYPE_CHECKING:`` for type checkers (tests/test_architecture.py checks that the two agree).
    """
    table = dict(exports)

    def __getattr__(name: str) -> Any:
        module_name = table.get(name)
        if module_name is None:
            if name.startswith("__") or importlib.util.find_spec(f"{package}.{name}") is None:
                raise AttributeError(f"module {package!r} has no attribute {name!r}")
            return importlib.import_module(f"{package}.{name}")  # sets the package's attribute itself
        module = importlib.import_module(module_name)
        value = module if module_name == f"{package}.{name}" else getattr(module, name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *table})

    return __getattr__, __dir__
