"""``LoadPlugins``: loads TensorRT plugin libraries before a network is parsed or an engine run."""

import ctypes
import os
from typing import Any

from poly.core import G_LOGGER, BaseLoader
from poly.core.func import funcify, invoke_if_callable

__all__ = ["LoadPlugins", "load_plugins"]


class LoadPlugins(BaseLoader):
    """
    Functor that loads plugin libraries (``ctypes.CDLL``, which runs their registration), then
    returns ``obj`` or, when it is callable, what it returns for the call's arguments: it wraps
    any loader (``LoadPlugins(["libplugin.so"], NetworkFromOnnxPath(path))``).
    """

    def __init__(self, plugins: Any = None, obj: Any = None) -> None:
        """
        Args:
            plugins (Sequence[str]): Paths (or names the dynamic loader finds) of plugin libraries.
            obj: A value to return, or a callable (a loader) to call after loading them.
        """
        self.plugins = list(plugins or [])
        self.obj = obj

    def call_impl(self, *args: Any, **kwargs: Any) -> Any:
        """
        Returns:
            ``obj``, or what it returned; None when ``obj`` is None.
        """
        for plugin in self.plugins:
            G_LOGGER.info(f"Loading plugin library: {plugin}")
            try:
                ctypes.CDLL(os.fspath(plugin))
            except OSError as err:
                G_LOGGER.critical(f"Cannot load plugin library '{plugin}': {err}")
        return invoke_if_callable(self.obj, *args, **kwargs)


load_plugins = funcify(LoadPlugins)
