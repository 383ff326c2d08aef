"""The loader base class: a lazy, reusable callable that produces something (a model, an engine)."""

__all__ = ["BaseLoader"]


class BaseLoader:
    """
    Base class of loaders.

    A loader stores its parameters at construction and does its work when called, so loaders
    compose (``EngineFromNetwork(NetworkFromOnnxPath(path))``) and nothing runs until needed.
    Subclasses implement ``call_impl``; ``poly.core.func.funcify`` makes the immediately
    evaluated function of a subclass.
    """

    def call_impl(self, *args, **kwargs):
        """Does the loader's work. Subclasses override this rather than ``__call__``."""
        raise NotImplementedError("BaseLoader is an abstract class; implement call_impl()")

    def __call__(self, *args, **kwargs):
        """Runs the loader by forwarding the arguments to ``call_impl``."""
        return self.call_impl(*args, **kwargs)
