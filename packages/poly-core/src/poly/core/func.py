"""
Function helpers: ``extend`` (post-process what a loader returns) and ``funcify`` (the
immediately evaluated snake_case twin of a loader class).
"""

from __future__ import annotations

import copy
import functools
import inspect
import re
import sys
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, cast

from poly.core import config
from poly.core.logging.logger import G_LOGGER

__all__ = ["extend", "funcify", "pascal_to_snake", "invoke_if_callable", "constantmethod", "check_called_by",
           "call_if_callable"]

_T = TypeVar("_T")
_F = TypeVar("_F", bound=Callable[..., Any])


def invoke_if_callable(obj: _T | Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
    """
    ``obj(*args, **kwargs)`` when ``obj`` is callable, else ``obj`` itself: how a loader takes
    either a value or a loader that produces it (``ModifyOutputs(OnnxFromPath(p))`` or
    ``ModifyOutputs(model)``).
    """
    return obj(*args, **kwargs) if callable(obj) else obj


def call_if_callable(obj: _T | Callable[..., _T], *args: Any, **kwargs: Any) -> tuple[_T, bool]:
    """
    ``(obj(*args, **kwargs), True)`` when ``obj`` is callable, else ``(obj, False)``: what
    Polygraphy's ``util.invoke_if_callable`` returns (the value and whether it was produced
    now, i.e. whether the caller owns it).
    """
    if callable(obj):
        return obj(*args, **kwargs), True
    return obj, False


def _as_tuple(obj: object) -> tuple[Any, ...]:
    # Only a plain tuple is spread into parameters; a namedtuple is one value, as in Polygraphy.
    return obj if type(obj) is tuple else (obj,)


def _name_of(obj: object) -> str:
    name: str = getattr(obj, "__name__", None) or repr(obj)
    return name


def extend(extend_func: Callable[..., Any]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """
    Decorator that makes the decorated function post-process what ``extend_func`` returns.

    The result takes ``extend_func``'s arguments. It calls ``extend_func``, passes its return
    values (a returned tuple is spread over the parameters) to the decorated function, and
    returns the decorated function's return value, or, when that is None, ``extend_func``'s.
    ::

        @extend(NetworkFromOnnxPath("model.onnx"))
        def load_network(builder, network, parser):
            network.name = "MyNetwork"  # returns None: the loader's values are passed on

        builder, network, parser = load_network()

    If the decorated function takes ``extend_func``'s arguments before the return values, it
    receives those too (after any in-place modification by ``extend_func``)::

        def x(a):
            return a + 1

        @extend(x)
        def y(a, x_ret):
            assert x_ret == a + 1

        assert y(5) == 6

    A decorated function without parameters runs after an ``extend_func`` that returns None.
    The decorated function must not take ``*args`` or ``**kwargs``.

    Args:
        extend_func (Callable): The callable (usually a loader) to extend.
    """

    def extend_decorator(func: Callable[..., Any]) -> Callable[..., Any]:
        params = list(inspect.signature(func).parameters.values())

        @functools.wraps(func)
        def extended_func(*args: Any, **kwargs: Any) -> Any:
            retval = extend_func(*args, **kwargs)
            rets = _as_tuple(retval)

            if not params and len(rets) == 1 and rets[0] is None:
                func_retval = func()
            elif len(rets) == len(params):
                func_retval = func(*rets)
            elif len(params) == len(rets) + len(args) + len(kwargs):
                # The return values go by keyword so that they can follow the caller's **kwargs.
                ret_kwargs = {
                    param.name: value for param, value in zip(params[-len(rets) :], rets, strict=True)
                }
                func_retval = func(*args, **kwargs, **ret_kwargs)
            else:
                G_LOGGER.critical(
                    f"Function: {_name_of(func)} accepts {len(params)} parameter(s), but needs to accept "
                    f"{len(rets)} parameter(s) from: {_name_of(extend_func)} instead. "
                    f"Note: Parameters should be: {tuple(type(r).__name__ for r in rets)}"
                )

            return func_retval if func_retval is not None else retval

        return extended_func

    return extend_decorator


def pascal_to_snake(name: str) -> str:
    """
    Converts a PascalCase name to snake_case the way Polygraphy names its immediately evaluated
    loaders: ``OnnxFromPath`` -> ``onnx_from_path``.
    """
    return re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), name).lstrip("_")


def _method_params(cls: type, method: str) -> list[inspect.Parameter]:
    for ancestor in inspect.getmro(cls):
        if method in vars(ancestor):
            func = vars(ancestor)[method]
            return list(inspect.signature(func).parameters.values())[1:]
    raise TypeError(f"{cls.__name__} has no {method}() to funcify")


def funcify(loader_cls: type[Any], func_name: str | None = None) -> Callable[..., Any]:
    """
    Returns the immediately evaluated function of a loader class.

    ``f(*args, **kwargs)`` constructs the loader from the ``__init__`` arguments and calls it
    with the ``call_impl`` arguments, returning what the loader returns. Its signature merges
    both: required parameters first (``__init__``'s, then ``call_impl``'s), then those with
    defaults, then variadic ones, as in Polygraphy::

        class OnnxFromPath(BaseLoader):
            def __init__(self, path): ...
            def call_impl(self): ...

        onnx_from_path = funcify(OnnxFromPath)
        model = onnx_from_path("model.onnx")  # == OnnxFromPath("model.onnx")()

    Args:
        loader_cls (type): A class with ``__init__`` and ``call_impl`` whose instances are
                callable (a ``BaseLoader``). The two methods must not share parameter names.
        func_name (str): The function's name. Defaults to the class name in snake_case.

    Returns:
        Callable: The function.
    """
    make_loader: Callable[..., Any] = loader_cls
    if not inspect.isclass(loader_cls):
        raise TypeError(f"funcify expects a loader class, not {loader_cls!r}")

    init_params = _method_params(loader_cls, "__init__")
    call_params = _method_params(loader_cls, "call_impl")
    shared = {p.name for p in init_params} & {p.name for p in call_params}
    if shared:
        raise TypeError(
            f"Cannot funcify {loader_cls.__name__}: __init__ and call_impl share parameter(s) {sorted(shared)}"
        )

    both = init_params + call_params

    def pick(kinds: tuple[inspect._ParameterKind, ...], with_default: bool | None = None) -> list[inspect.Parameter]:
        return [
            p
            for p in both
            if p.kind in kinds and (with_default is None or (p.default is not p.empty) == with_default)
        ]

    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    var_pos = pick((inspect.Parameter.VAR_POSITIONAL,))
    var_kw = pick((inspect.Parameter.VAR_KEYWORD,))
    if len(var_pos) > 1 or len(var_kw) > 1:
        raise TypeError(f"Cannot funcify {loader_cls.__name__}: both methods take variadic parameters")

    ordered = [
        p.replace(kind=inspect.Parameter.POSITIONAL_OR_KEYWORD)
        for p in pick(positional, with_default=False) + pick(positional, with_default=True)
    ]
    ordered += var_pos + pick((inspect.Parameter.KEYWORD_ONLY,)) + var_kw
    signature = inspect.Signature(ordered)

    def method_args(params: list[inspect.Parameter], arguments: Mapping[str, Any]
                    ) -> tuple[list[Any], dict[str, Any]]:
        # Positional-only parameters, and any before a *args, must stay positional.
        positional_only = any(p.kind == p.VAR_POSITIONAL for p in params)
        args: list[Any] = []
        kwargs: dict[str, Any] = {}
        for p in params:
            value = arguments[p.name]
            if p.kind == p.VAR_POSITIONAL:
                args.extend(value)
            elif p.kind == p.VAR_KEYWORD:
                kwargs.update(value)
            elif p.kind == p.POSITIONAL_ONLY or (p.kind == p.POSITIONAL_OR_KEYWORD and positional_only):
                args.append(value)
            else:
                kwargs[p.name] = value
        return args, kwargs

    def immediately_evaluated(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        init_args, init_kwargs = method_args(init_params, bound.arguments)
        call_args, call_kwargs = method_args(call_params, bound.arguments)
        return make_loader(*init_args, **init_kwargs)(*call_args, **call_kwargs)

    name = func_name or pascal_to_snake(loader_cls.__name__)
    immediately_evaluated.__name__ = name
    immediately_evaluated.__qualname__ = name
    immediately_evaluated.__module__ = loader_cls.__module__
    setattr(immediately_evaluated, "__signature__", signature)  # noqa: B010 - read by inspect.signature
    immediately_evaluated.__doc__ = (
        f"Immediately evaluated functional variant of :class:`{loader_cls.__name__}`: "
        f"constructs the loader and calls it.\n\n{inspect.getdoc(loader_cls.__init__) or ''}"
    ).rstrip()
    return immediately_evaluated


def constantmethod(func: _F) -> _F:
    """
    Decorator of methods that must not change their object's attributes.

    With ``poly.core.config.INTERNAL_CORRECTNESS_CHECKS`` set (``POLY_INTERNAL_CORRECTNESS_CHECKS=1``
    or ``POLYGRAPHY_INTERNAL_CORRECTNESS_CHECKS=1`` at import), a call that rebinds, adds or
    removes an attribute of ``self`` raises ``PolyInternalException`` naming the old and new
    state; otherwise the method is returned unchanged. Only attribute bindings are compared:
    the contents of a mutable attribute (a list, an array) are not checked.
    """
    if not config.INTERNAL_CORRECTNESS_CHECKS:
        return func

    @functools.wraps(func)
    def checked(self: Any, *args: Any, **kwargs: Any) -> Any:
        before = copy.copy(vars(self))
        try:
            return func(self, *args, **kwargs)
        finally:
            after = vars(self)
            if after.keys() != before.keys() or any(after[k] is not before[k] for k in before):
                G_LOGGER.internal_error(
                    f"{self} was mutated in a constant method! Note:\nOld state: {before}\nNew state: {dict(after)}"
                )

    return cast("_F", checked)


def check_called_by(expected_caller: str) -> Callable[[_F], _F]:
    """
    Decorator that warns when the decorated method is called by a function other than
    ``expected_caller`` (by name) from outside poly: ``call_impl`` is meant to be reached through
    ``__call__``, ``infer_impl`` through ``infer``...

    Calls from poly's own modules are not checked, nor calls from a method of the same name (an
    override that chains to its parent with ``super().infer_impl(...)``, reached through
    ``infer`` itself), which Polygraphy would warn about.
    """

    def decorator(func: _F) -> _F:
        @functools.wraps(func)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            caller = sys._getframe(1)
            module = caller.f_globals.get("__name__", "") or ""
            if module.split(".")[0] != "poly" and caller.f_code.co_name not in (expected_caller, func.__name__):
                owner = f"{type(args[0]).__name__}.{func.__name__}" if args else func.__qualname__
                G_LOGGER.warning(
                    f"Calling '{owner}()' directly is not recommended. Please use '{expected_caller}()' instead."
                )
            return func(*args, **kwargs)

        setattr(wrapped, "__poly_checked_caller__", expected_caller)  # noqa: B010
        return cast("_F", wrapped)

    return decorator
