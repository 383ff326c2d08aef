"""
``import_from_script``: runs a Python file the user named (a data-loader script, a network
script for ``InvokeFromScript``) and returns one of its attributes. This is the only way poly
executes user code, and only for a path the user gives explicitly.
"""

import importlib.util
import os
import sys
import uuid
from typing import Any

from poly.core.backend.loader import BaseLoader
from poly.core.func import funcify
from poly.core.logging.exception import PolyException
from poly.core.logging.logger import G_LOGGER

__all__ = ["import_from_script", "InvokeFromScript", "invoke_from_script"]


def import_from_script(path: str, name: str) -> Any:
    """
    Runs the Python script at ``path`` as a module and returns its attribute ``name``. The
    script's directory is on ``sys.path`` while it is imported, so it can import its neighbours.
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        G_LOGGER.critical(f"Could not import symbol: {name} from script: {path}: the file does not exist")
    ext = os.path.splitext(path)[1]
    module_name = f"_poly_script_{os.path.splitext(os.path.basename(path))[0]}_{uuid.uuid4().hex[:8]}"
    script_dir = os.path.dirname(os.path.abspath(path))
    sys.path.insert(0, script_dir)
    try:
        spec = importlib.util.spec_from_file_location(module_name, path)
        if spec is None or spec.loader is None:
            raise ImportError("not a Python source file")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        try:
            spec.loader.exec_module(module)
            return getattr(module, name)
        finally:
            sys.modules.pop(module_name, None)
    except PolyException:
        raise  # poly's own one-line error, raised by the script's code: already says what is wrong
    except Exception as err:
        msg = f"Could not import symbol: {name} from script: {path}: {err}"
        if isinstance(err, ModuleNotFoundError) and err.name == "tensorrt":
            msg += " (the script imports full TensorRT, which is not installed here)"
        if ext != ".py":
            msg += f" (the file's extension is {ext!r}, not '.py')"
        G_LOGGER.critical(msg)
    finally:
        try:
            sys.path.remove(script_dir)
        except ValueError:
            pass


class InvokeFromScript(BaseLoader):
    """
    Loader that calls a function (or a functor) defined in a Python script the user names.

    A class is instantiated without arguments first, so the name may denote a function, a
    callable object or a callable class. The script is imported again at every call (use
    ``import_from_script`` once to reuse it); other attributes of the object are reachable
    through this loader (``loader.thresholds_for``).
    """

    def __init__(self, path: Any, name: Any) -> None:
        """
        Args:
            path (str): The script (a ``.py`` file).
            name (str): The name of the function, object or class in it.
        """
        self.path = path
        self.name = name

    @property
    def __name__(self) -> Any:
        return self.name

    def load(self) -> Any:
        """Imports the script and returns the (instantiated, when a class) object."""
        obj = import_from_script(self.path, self.name)
        return obj() if isinstance(obj, type) else obj

    def call_impl(self, *args: Any, **kwargs: Any) -> Any:
        """
        Returns:
            object: What the script's function returns for these arguments.
        """
        return self.load()(*args, **kwargs)

    def __getattr__(self, attr: Any) -> Any:
        if attr.startswith("_"):
            raise AttributeError(attr)
        return getattr(self.load(), attr)


invoke_from_script = funcify(InvokeFromScript)
