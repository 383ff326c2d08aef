"""The loader base class: a lazy, reusable callable that produces something (a model, an engine)."""

from typing import Any

from poly.core.func import check_called_by, constantmethod

__all__ = ["BaseLoader"]


class BaseLoader:
    """
    Base class of loaders.

    A loader stores its parameters at construction and does its work when called, so loaders
    compose (``EngineFromNetwork(NetworkFromOnnxPath(path))``) and nothing runs until needed.
    Subclasses implement ``call_impl``; ``poly.core.func.funcify`` makes the immediately
    evaluated function of a subclass.

    As in Polygraphy, calling a subclass's ``call_impl`` directly from outside poly logs a
    warning (use ``loader()``), and, with internal correctness checks on
    (``poly.core.config.INTERNAL_CORRECTNESS_CHECKS``), a call that changes the loader's
    attributes raises ``PolyInternalException``: a loader can be called any number of times.
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        impl = cls.__dict__.get("call_impl")
        if impl is not None and not hasattr(impl, "__poly_checked_caller__"):
            cls.call_impl = check_called_by("__call__")(impl)  # type: ignore[method-assign]

    def call_impl(self, *args: Any, **kwargs: Any) -> Any:
        """Does the loader's work. Subclasses override this rather than ``__call__``."""
        raise NotImplementedError("BaseLoader is an abstract class; implement call_impl()")

    @constantmethod
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Runs the loader by forwarding the arguments to ``call_impl``."""
        return self.call_impl(*args, **kwargs)
