"""Run results holding PyTorch tensors: swapped to disk and back as tensors, saved as ``.npz``
with one conversion per tensor. Runs where PyTorch is installed."""

from __future__ import annotations

import numpy as np
import pytest

import poly.compare as pc
from poly.core import config

torch = pytest.importorskip("torch", reason="torch is not installed; these tests run where it is")


@pytest.fixture
def swap_over_1_mib(monkeypatch):
    monkeypatch.setattr(config, "ARRAY_SWAP_THRESHOLD_MB", 1)


@pytest.mark.parametrize("dtype", ["uint8", "float32", "bfloat16"])
def test_lazy_array_swaps_a_large_tensor_and_gives_back_a_tensor(swap_over_1_mib, dtype):
    tensor = (torch.arange(2 << 20) % 251).to(getattr(torch, dtype))
    lazy = pc.LazyArray(tensor)
    assert lazy.arr is None and lazy.tmpfile is not None
    loaded = lazy.load()
    assert isinstance(loaded, torch.Tensor) and loaded.dtype == tensor.dtype
    assert torch.equal(loaded, tensor)


def test_lazy_array_keeps_a_small_tensor_in_memory(swap_over_1_mib):
    tensor = torch.ones(16)
    lazy = pc.LazyArray(tensor)
    assert lazy.tmpfile is None and lazy.load() is tensor


def test_npz_of_tensors_converts_each_tensor_once(tmp_path, monkeypatch):
    tensors = {"y": torch.arange(12, dtype=torch.float32).reshape(3, 4), "b": torch.ones(5, dtype=torch.bfloat16)}
    results = pc.RunResults()
    results.append(("torch-runner", [pc.IterationResult(dict(tensors), runner_name="torch-runner")]))

    def no_element_access(self, *args):
        raise AssertionError("a tensor was read element by element")

    # NumPy's sequence protocol would index the tensor once per element
    monkeypatch.setattr(torch.Tensor, "__getitem__", no_element_access)
    monkeypatch.setattr(torch.Tensor, "__iter__", no_element_access)
    path = tmp_path / "results.npz"
    results.save(str(path))
    monkeypatch.undo()

    loaded = pc.RunResults.load(str(path))
    outputs = loaded["torch-runner"][0]
    np.testing.assert_array_equal(outputs["y"], tensors["y"].numpy())
    assert outputs["b"].dtype.name == "bfloat16"
    np.testing.assert_array_equal(outputs["b"].astype(np.float32), np.ones(5, np.float32))
