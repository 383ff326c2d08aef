"""poly.compare: comparing outputs of inference backends."""

from poly.compare.error_stats import DiffStats, ErrorStats, ValueSummary, error_stats

__all__ = ["error_stats", "ErrorStats", "DiffStats", "ValueSummary"]
