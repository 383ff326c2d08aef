"""Downcasting ``trt.ILayer`` objects to their concrete class (``IConvolutionLayer``...) by type."""

from typing import Any

from poly.trt.tensorrt_module import trt

__all__ = ["layer_class", "downcast_layer", "layer_attributes"]

_CACHE: dict[Any, Any] = {}


def _key(text: Any) -> Any:
    return text.replace("_", "").lower()


def layer_class(layer_type: Any) -> Any:
    """The ``trt.I*Layer`` class of a ``trt.LayerType`` member, or ``trt.ILayer`` if unknown."""
    mod = trt.load()  # the module itself: it keys the cache
    if mod not in _CACHE:
        classes = {}
        for name in dir(mod):
            if name.startswith("I") and name.endswith("Layer") and name != "ILayer":
                classes[_key(name[1:-5])] = getattr(mod, name)
        _CACHE.clear()
        _CACHE[mod] = classes
    name = str(layer_type).split(".")[-1]
    return _CACHE[mod].get(_key(name), mod.ILayer)


def downcast_layer(layer: Any) -> Any:
    """Gives ``layer`` its concrete class so its specific attributes are reachable; returns it."""
    cls = layer_class(layer.type)
    if cls is not type(layer):
        try:
            layer.__class__ = cls
        except TypeError:
            pass
    return layer


def layer_attributes(layer: Any) -> Any:
    """``(name, value)`` of the attributes specific to the layer's class (not ``ILayer``'s)."""
    base = set(dir(trt.ILayer))
    attrs = []
    for name in sorted(set(dir(type(layer))) - base):
        if name.startswith("_"):
            continue
        try:
            value = getattr(layer, name)
        except Exception:  # some attributes only exist for some configurations of the layer
            continue
        if callable(value):
            continue
        attrs.append((name, value))
    return attrs
