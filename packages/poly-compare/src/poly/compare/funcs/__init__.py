"""Comparison functions: the protocol and output pairing (``base``), ``simple`` (tolerances),
``indices``, ``metrics`` (L2, cosine, PSNR, SNR), ``perceptual`` (LPIPS) and the ``CompareFunc``
factory (``compare_func``)."""

from poly.compare.funcs import base, compare_func, indices, metrics, perceptual, simple
from poly.compare.funcs.base import *  # noqa: F403
from poly.compare.funcs.compare_func import *  # noqa: F403
from poly.compare.funcs.indices import *  # noqa: F403
from poly.compare.funcs.metrics import *  # noqa: F403
from poly.compare.funcs.perceptual import *  # noqa: F403
from poly.compare.funcs.simple import *  # noqa: F403

__all__ = [*base.__all__, *simple.__all__, *indices.__all__, *metrics.__all__, *perceptual.__all__, *compare_func.__all__]
