"""``PerceptualMetricsCompareFunc``: LPIPS distance of image-like outputs, through torch and lpips."""

from __future__ import annotations

from typing import Any

import numpy as np

from poly.compare.funcs.metrics import SingleMetricCompareFunc
from poly.compare.verdicts.output_results import PerceptualMetricsResult
from poly.compare.verdicts.thresholds import LpipsThreshold
from poly.core import G_LOGGER
from poly.core.optional_import import has_module, lazy_import

__all__ = ["PerceptualMetricsCompareFunc", "require_lpips"]

_INSTALL_HINT = "pip install torch lpips"
torch = lazy_import("torch", install="torch lpips", purpose="Perceptual metrics (LPIPS)")
lpips = lazy_import("lpips", install="torch lpips", purpose="Perceptual metrics (LPIPS)")


def require_lpips() -> None:
    """Raises ``PolyException`` with one line naming the ``pip install`` when torch or lpips is missing."""
    missing = [name for name in ("torch", "lpips") if not has_module(name)]
    if missing:
        G_LOGGER.critical(
            f"Perceptual metrics (LPIPS) need {' and '.join(missing)}, which "
            f"{'is' if len(missing) == 1 else 'are'} not installed: {_INSTALL_HINT}"
        )


def _to_nchw3(arr: np.ndarray) -> np.ndarray:
    # LPIPS takes RGB batches in [-1, 1]: HWC/CHW/NHWC/NCHW become NCHW with 3 channels.
    if arr.ndim == 3:
        arr = arr.transpose(2, 0, 1)[None] if arr.shape[2] <= 3 else arr[None]
    elif arr.ndim == 4 and arr.shape[3] <= 3:
        arr = arr.transpose(0, 3, 1, 2)
    elif arr.ndim > 4:
        arr = arr.reshape((-1,) + arr.shape[-3:])
    arr = arr.astype(np.float32)
    if arr.size and arr.max() > 1.0:
        arr = arr / 255.0
    if arr.size and arr.min() >= 0.0 and arr.max() <= 1.0:
        arr = arr * 2.0 - 1.0
    channels = arr.shape[1]
    if channels == 1:
        arr = np.repeat(arr, 3, axis=1)
    elif channels == 2:
        arr = np.concatenate([arr, arr[:, 1:2]], axis=1)
    elif channels > 3:
        arr = arr[:, :3]
    return np.ascontiguousarray(arr)


class PerceptualMetricsCompareFunc(SingleMetricCompareFunc):
    """
    Passes image-like outputs whose LPIPS distance is at most ``lpips_threshold``. Needs torch and
    lpips (``pip install torch lpips``): constructing it without them raises a clear error.
    """

    _RESULT_CLASS = PerceptualMetricsResult
    _THRESHOLD_CLASS = LpipsThreshold
    _DEFAULT_THRESHOLD = 0.1
    _THRESHOLD_ARG = "lpips_threshold"

    def __init__(self, lpips_threshold: Any = None, check_shapes: Any = None, fail_fast: Any = None, find_output_func: Any = None) -> None:
        """
        Args:
            lpips_threshold (Union[float, Dict[str, float]]): The largest LPIPS distance allowed;
                    per output as a dict with ``""`` as the default. Defaults to 0.1.
            check_shapes (bool): Require identical shapes. Defaults to True.
            fail_fast (bool): Stop at the first failure. Defaults to False.
            find_output_func (Callable): Pairs outputs, as for ``SimpleCompareFunc``.

        Raises:
            PolyException: When torch or lpips is not installed.
        """
        require_lpips()
        super().__init__(lpips_threshold, check_shapes, fail_fast, find_output_func)
        self._model: Any = None

    def _lpips_model(self) -> Any:
        if self._model is None:
            self._model = lpips.LPIPS(net="alex", version="0.1", verbose=False).eval()
        return self._model

    def _compute_metric(self, out0: Any, out1: Any) -> Any:
        out0, out1 = np.asarray(out0), np.asarray(out1)
        if out0.ndim < 3 or out1.ndim < 3:
            G_LOGGER.warning(
                f"LPIPS requires at least 3D arrays, got shapes {out0.shape} and {out1.shape}. "
                "LPIPS check will be skipped."
            )
            return None
        try:
            img0 = torch.from_numpy(_to_nchw3(out0))
            img1 = torch.from_numpy(_to_nchw3(out1))
            if img0.shape[2:] != img1.shape[2:]:
                size = (max(img0.shape[2], img1.shape[2]), max(img0.shape[3], img1.shape[3]))
                img0 = torch.nn.functional.interpolate(img0, size=size, mode="bilinear", align_corners=False)
                img1 = torch.nn.functional.interpolate(img1, size=size, mode="bilinear", align_corners=False)
            with torch.no_grad():
                return float(self._lpips_model()(img0, img1).mean().item())
        except Exception as err:
            G_LOGGER.warning(f"Error computing LPIPS: {err}. LPIPS check will be skipped.")
            return None

    def _check_outputs_match(self, out0: Any, out1: Any, threshold: Any) -> Any:
        value = self._compute_metric(out0, out1)
        result = PerceptualMetricsResult(value, thresholds=threshold)
        described = result.describe()
        if described is None:
            G_LOGGER.warning(
                "LPIPS could not be computed (see the warning above); "
                "this output is being treated as a PASS, so its accuracy was NOT verified."
            )
        else:
            msg, passed = described
            (G_LOGGER.finish if passed else G_LOGGER.error)(msg)
        return result
