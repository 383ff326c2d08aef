"""
Polygraphy's module-building decorators (``polygraphy.mod.export`` and friends), for code
written against them: ``export`` adds a class or function to its module's ``__all__`` (and, for
a loader class, defines its immediately evaluated function); ``deprecate`` and
``export_deprecated_alias`` keep old names working with a warning.
"""

import functools
import inspect
import sys
from typing import Any

from poly.core.func import funcify as make_function
from poly.core.logging.logger import G_LOGGER, LogMode

__all__ = ["export", "warn_deprecated", "deprecate", "export_deprecated_alias"]


def _module_of(obj: Any) -> Any:
    return sys.modules[obj.__module__]


def _add_to_all(module: Any, name: Any) -> None:
    names = module.__dict__.setdefault("__all__", [])
    if name not in names:
        names.append(name)


def export(funcify: bool = False, func_name: Any = None) -> Any:
    """
    Decorator that adds the decorated class or function to its module's ``__all__``.

    Args:
        funcify (bool): For a loader class: also define, export and attach to the class
                (as ``__func__``) its immediately evaluated function.
        func_name (str): The function's name; defaults to the class name in snake_case.
    """

    def export_impl(obj: Any) -> Any:
        module = _module_of(obj)
        _add_to_all(module, obj.__name__)
        if funcify:
            if not inspect.isclass(obj):
                G_LOGGER.critical(f"Only loader classes can be funcified, not {obj!r}")
            function = make_function(obj, func_name)
            setattr(module, function.__name__, function)
            _add_to_all(module, function.__name__)
        return obj

    return export_impl


def warn_deprecated(name: Any, use_instead: Any, remove_in: Any, module_name: Any = None, always_show_warning: bool = False) -> None:
    """Logs (once per message, unless ``always_show_warning``) that ``name`` is deprecated."""
    full = f"{module_name}.{name}" if module_name else name
    message = f"{full} is deprecated and will be removed in Polygraphy {remove_in}."
    if use_instead is not None:
        message += f" Use {use_instead} instead."
    G_LOGGER.warning(message, mode=LogMode.EACH if always_show_warning else LogMode.ONCE)


def deprecate(remove_in: Any, use_instead: Any, module_name: Any = None, name: Any = None) -> Any:
    """Decorator that warns, at every use, that a class or function is deprecated."""

    def deprecate_impl(obj: Any) -> Any:
        what = name or obj.__name__
        if inspect.isclass(obj):
            init = obj.__init__

            @functools.wraps(init)
            def warning_init(self: Any, *args: Any, **kwargs: Any) -> None:
                warn_deprecated(what, use_instead, remove_in, module_name)
                init(self, *args, **kwargs)

            # A subclass, so that the original name keeps working without the warning.
            return type(what, (obj,), {"__init__": warning_init, "__module__": obj.__module__})

        @functools.wraps(obj)
        def warning_func(*args: Any, **kwargs: Any) -> Any:
            warn_deprecated(what, use_instead, remove_in, module_name)
            return obj(*args, **kwargs)

        return warning_func

    return deprecate_impl


def export_deprecated_alias(name: Any, remove_in: Any, use_instead: Any = None) -> Any:
    """Decorator that also exports the decorated object under a deprecated ``name``."""

    def alias_impl(obj: Any) -> Any:
        module = _module_of(obj)
        setattr(module, name, deprecate(remove_in, use_instead or obj.__name__, name=name)(obj))
        _add_to_all(module, name)
        return obj

    return alias_impl
