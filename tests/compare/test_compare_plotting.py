"""Heatmaps and error plots: matplotlib only when asked, and one clear line without it."""

from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest

import poly.compare as pc
from poly.compare.stats import plots
from poly.core import PolyException

HAVE_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None


def _pair():
    rng = np.random.default_rng(0)
    b = rng.random((2, 4, 5)).astype(np.float32) + 0.5
    return pc.IterationResult({"y": b + 1e-3}, runner_name="a"), pc.IterationResult({"y": b}, runner_name="b")


@pytest.fixture
def without_matplotlib(monkeypatch):
    """matplotlib made unimportable (a None entry in sys.modules), installed or not."""
    lazy = (plots.matplotlib, plots.colors, plots.figure, plots.pyplot)
    for name in ("matplotlib", "matplotlib.colors", "matplotlib.figure", "matplotlib.pyplot"):
        monkeypatch.setitem(sys.modules, name, None)
    for module in lazy:
        module.reset()
    yield
    for module in lazy:
        module.reset()


@pytest.mark.parametrize("option", ["save_heatmaps", "save_error_metrics_plot"])
def test_plots_without_matplotlib_are_one_clear_error(tmp_path, option, without_matplotlib):
    func = pc.CompareFunc.simple(**{option: str(tmp_path)})  # constructing needs nothing
    with pytest.raises(PolyException) as info:
        func(*_pair())
    assert "pip install matplotlib" in str(info.value) and "\n" not in str(info.value)
    assert str(info.value).startswith("Plotting comparison errors (heatmaps, error plots) needs 'matplotlib'")
    assert not list(tmp_path.iterdir())


@pytest.mark.skipif(not HAVE_MATPLOTLIB, reason="matplotlib is not installed (pip install matplotlib)")
def test_plots_are_saved(tmp_path):
    pc.CompareFunc.simple(save_heatmaps=str(tmp_path / "heat"), save_error_metrics_plot=str(tmp_path / "err"))(*_pair())
    assert list((tmp_path / "heat").glob("*.svg")) and list((tmp_path / "err").glob("error_metrics_y.png"))


def test_comparisons_without_plots_never_import_matplotlib():
    import subprocess
    import sys

    code = (
        "import sys, numpy as np, poly.compare as pc\n"
        "a = pc.IterationResult({'y': np.ones(3, np.float32)}, runner_name='a')\n"
        "pc.CompareFunc.simple()(a, a)\n"
        "print('matplotlib' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "False"
