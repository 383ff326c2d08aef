"""
The error statistics a simple comparison checks (``check_error_stat``), by name.

A module of their own that imports nothing: the simple comparison's options
(``simple_comparison``), which `poly run --help` reads without NumPy, and the thresholds that
check the statistics (``thresholds``, which re-exports them) share them.
"""

__all__ = ["SCALAR_ERROR_STATS", "VALID_CHECK_ERROR_STATS"]

SCALAR_ERROR_STATS = ("max", "mean", "median", "quantile")
"""Error statistics that a single number summarizes (everything but ``elemwise``)."""

VALID_CHECK_ERROR_STATS = ("max", "mean", "median", "elemwise", "quantile")
"""Every value ``check_error_stat`` accepts."""
