"""Statistics of outputs and of their differences: the native engine's figures (``native``),
Polygraphy's definitions on top of them and whether they pass a tolerance at Polygraphy's
precision (``polygraphy_precision``), the log lines that report them (``report_lines``), plots
(``plots``) and the NaN/Inf check of ``--validate`` (``nan_inf_check``)."""

from poly.compare.stats import nan_inf_check, native, plots, polygraphy_precision, report_lines
from poly.compare.stats.nan_inf_check import *  # noqa: F403
from poly.compare.stats.native import *  # noqa: F403
from poly.compare.stats.plots import *  # noqa: F403
from poly.compare.stats.polygraphy_precision import *  # noqa: F403
from poly.compare.stats.report_lines import *  # noqa: F403

__all__ = [*native.__all__, *polygraphy_precision.__all__, *report_lines.__all__, *plots.__all__,
           *nan_inf_check.__all__]
