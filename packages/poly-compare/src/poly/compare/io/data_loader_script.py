"""
Data-loader scripts (``--data-loader-script FILE[:FUNC]``): a Python file whose function (by
default ``load_data``) returns or yields feed dicts. This is the one place poly runs user code
for input data, and only when the user names the script explicitly.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from poly.core import G_LOGGER
from poly.core.backend.scripts import import_from_script
from poly.core.func import invoke_if_callable

__all__ = ["DEFAULT_DATA_LOADER_FUNC", "parse_script_and_func_name", "import_from_script", "DataLoaderFromScript"]

DEFAULT_DATA_LOADER_FUNC = "load_data"
"""The function a data-loader script is expected to define when none is named."""


def parse_script_and_func_name(spec: str, default_func_name: str | None = None) -> tuple[str, str | None]:
    """
    Splits ``"path/to/script.py:func"`` into the path and the function name (``default_func_name``
    when there is no ``:func``). A colon that is part of the path (``C:\\data\\s.py``) is kept.
    """
    path, sep, name = spec.rpartition(":")
    if sep and name.isidentifier() and path:
        return path, name
    return spec, default_func_name


class DataLoaderFromScript:
    """
    A data loader backed by a data-loader script: iterating it imports ``FILE``, calls ``FUNC()``
    (or uses ``FUNC`` itself when it is not callable, e.g. a list) and yields the feed dicts.
    Each iteration over the loader calls the function again.
    """

    def __init__(self, script: Any, func_name: Any = None) -> None:
        """
        Args:
            script (str): ``"path/to/script.py"`` or ``"path/to/script.py:func"``.
            func_name (str): The function's name when ``script`` names none. Defaults to ``load_data``.
        """
        self.path, name = parse_script_and_func_name(script, func_name or DEFAULT_DATA_LOADER_FUNC)
        self.func_name = name

    def __repr__(self) -> str:
        return f"DataLoaderFromScript({self.path!r}, func_name={self.func_name!r})"

    def load(self) -> Any:
        """Imports the script and returns what its function returns (an iterable of feed dicts)."""
        obj = import_from_script(self.path, self.func_name)  # type: ignore[arg-type]
        data = invoke_if_callable(obj)
        try:
            iter(data)
        except TypeError:
            G_LOGGER.critical(
                f"Data loader script {self.path}:{self.func_name} must return an iterable (e.g. a list or a "
                f"generator) of feed dicts, not a {type(data).__name__}"
            )
        return data

    def __iter__(self) -> Iterator[Any]:
        yield from self.load()
