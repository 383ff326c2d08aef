"""Shared helpers of the poly.compare tests: Polygraphy as an in-process oracle, a tiny NumPy
runner, and log comparison that tolerates the last printed digit."""

from __future__ import annotations

import math
import re
import warnings
from collections import OrderedDict

import numpy as np
import pytest

from poly.core import G_LOGGER, BaseRunner, TensorMetadata


@pytest.fixture
def kernel_paths() -> list[str]:
    """The POLY_NATIVE_ARCH values that pick the distinct instruction-set paths of the native
    kernels on this CPU: "generic", "avx2" where it has AVX2, "" (the best: AVX-512) where it
    has AVX-512."""
    from poly import _native

    best = _native.kernel_arch()
    return {"generic": ["generic"], "avx2": ["generic", "avx2"], "avx512": ["generic", "avx2", ""]}[best]


@pytest.fixture
def pg():
    """Polygraphy 0.53's comparator modules (skips when Polygraphy is not installed)."""
    pytest.importorskip("polygraphy", reason="polygraphy (the oracle) is not installed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import polygraphy.comparator as comparator
        import polygraphy.comparator.compare as compare
        import polygraphy.comparator.data_loader as data_loader
        import polygraphy.comparator.postprocess as postprocess
        from polygraphy.logger import G_LOGGER as PG_LOGGER

    class Namespace:
        pass

    ns = Namespace()
    ns.comparator, ns.compare, ns.data_loader, ns.postprocess, ns.logger = (
        comparator, compare, data_loader, postprocess, PG_LOGGER,
    )
    return ns


@pytest.fixture(autouse=True)
def _quiet_deprecations():
    # Polygraphy 0.53 deprecates CompareFunc.simple & co. in favour of the classes (same code).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


@pytest.fixture(autouse=True)
def _reset_logger():
    old_severity, old_once = G_LOGGER.module_severity, set(G_LOGGER.once_logged)
    yield
    G_LOGGER.module_severity = old_severity
    G_LOGGER.once_logged = old_once


def iteration_results(module, outputs0, outputs1, names=("runA", "runB")):
    """A pair of IterationResults of ``module`` (poly.compare or polygraphy.comparator)."""
    return (
        module.IterationResult(OrderedDict(outputs0), runner_name=names[0]),
        module.IterationResult(OrderedDict(outputs1), runner_name=names[1]),
    )


def run_results(module, per_runner):
    """A RunResults of ``module`` from ``{runner_name: [outputs of each iteration]}``."""
    results = module.RunResults()
    for name, iterations in per_runner.items():
        results.append((name, [module.IterationResult(OrderedDict(o), runner_name=name) for o in iterations]))
    return results


_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*(?:e[-+]?\d+)?|inf|nan)", re.IGNORECASE)


def _close(a: str, b: str, rel: float) -> bool:
    x, y = float(a), float(b)
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    return math.isclose(x, y, rel_tol=rel, abs_tol=1e-12)


def assert_logs_match(expected: str, actual: str, rel: float = 2e-4, ignore=()):
    """
    Asserts two logs have the same lines, up to numbers that agree within ``rel`` (figures are
    printed with 5 significant digits, so the last one may round differently). Lines matching
    any regex of ``ignore`` are dropped from both.
    """

    def lines(text):
        out = []
        for line in text.splitlines():
            if "'colored' module is not installed" in line or any(re.search(p, line) for p in ignore):
                continue
            out.append(line.rstrip())
        return out

    exp, act = lines(expected), lines(actual)
    assert len(exp) == len(act), "different line counts:\n" + "\n".join(exp) + "\n----- vs -----\n" + "\n".join(act)
    for e, a in zip(exp, act, strict=True):
        e_parts, a_parts = _NUMBER.split(e), _NUMBER.split(a)
        e_nums, a_nums = _NUMBER.findall(e), _NUMBER.findall(a)
        ok = e_parts == a_parts and len(e_nums) == len(a_nums)
        ok = ok and all(_close(x, y, rel) for x, y in zip(e_nums, a_nums, strict=True))
        assert ok, f"log lines differ:\n  polygraphy: {e}\n  poly:       {a}"


class NumpyRunner(BaseRunner):
    """A runner computing ``fn(feed_dict) -> outputs`` with NumPy; ``reuse=True`` returns the same
    output buffers every call, as runners that own their outputs may."""

    def __init__(self, fn, inputs, name=None, reuse=False):
        super().__init__(name=name, prefix="numpy-runner")
        self.fn, self.inputs, self.reuse = fn, inputs, reuse
        self._buffers = None

    def get_input_metadata_impl(self):
        meta = TensorMetadata()
        for name, (dtype, shape) in self.inputs.items():
            meta.add(name, dtype, shape)
        return meta

    def infer_impl(self, feed_dict):
        outputs = self.fn(feed_dict)
        if not self.reuse:
            return outputs
        if self._buffers is None:
            self._buffers = {name: np.empty_like(arr) for name, arr in outputs.items()}
        for name, arr in outputs.items():
            self._buffers[name][...] = arr
        return dict(self._buffers)


@pytest.fixture
def h():
    """The helpers above, for tests (conftest modules are not importable under importlib mode)."""
    import types

    return types.SimpleNamespace(
        iteration_results=iteration_results,
        run_results=run_results,
        assert_logs_match=assert_logs_match,
        NumpyRunner=NumpyRunner,
    )
