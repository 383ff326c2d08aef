"""PytRunner (``poly.backend.pyt``, Polygraphy's PyTorch runner): importable without torch, one
clear error when torch is missing, and, where torch is installed, a runner that feeds the inputs
in the metadata's order to the model on its device and names its outputs."""

import subprocess
import sys

import numpy as np
import pytest

from poly.core import BaseRunner, MissingModuleError, TensorMetadata

NO_TORCH = "torch is not installed here; runs where it is"


def test_importing_poly_backend_pyt_does_not_import_torch():
    code = "import sys, poly.backend.pyt as p; assert p.PytRunner; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_without_torch_creating_the_runner_is_one_clear_error(monkeypatch):
    from poly.backend.pyt import PytRunner
    from poly.core.backend import pyt_runner

    monkeypatch.setitem(sys.modules, "torch", None)  # torch missing, even where it is installed
    pyt_runner.torch.reset()
    try:
        with pytest.raises(MissingModuleError) as err:
            PytRunner(lambda: None, TensorMetadata().add("x", np.float32, (2,)), ["y"])
    finally:
        pyt_runner.torch.reset()
    message = str(err.value)
    assert "\n" not in message
    assert "PytRunner" in message and "'torch'" in message and "pip install torch" in message


def test_it_is_a_runner_under_polygraphys_name_and_signature():
    import inspect

    from poly.backend.pyt import PytRunner

    assert issubclass(PytRunner, BaseRunner)
    assert list(inspect.signature(PytRunner).parameters)[:4] == ["model", "input_metadata", "output_names", "name"]


# ---- with torch ----------------------------------------------------------------------------------




def _torch():
    try:
        import torch
    except ImportError:
        pytest.skip(NO_TORCH)
    return torch


def _affine_module(torch):
    class Affine(torch.nn.Module):
        """y = a * 2 + b (a float32, b int32 turned float), and z = b."""

        def __init__(self):
            super().__init__()
            self.scale = torch.nn.Parameter(torch.tensor(2.0))

        def forward(self, a, b):
            return a * self.scale + b.float(), b

    return Affine()


META = TensorMetadata().add("a", np.float32, (2, 3)).add("b", np.int32, (2, 3))


def test_runs_a_module_feeding_inputs_in_metadata_order():
    torch = _torch()
    from poly.backend.pyt import PytRunner

    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.ones((2, 3), dtype=np.int32)
    with PytRunner(_affine_module(torch), META, ["y", "z"]) as runner:
        assert runner.get_input_metadata()["a"].dtype == np.float32
        out = runner.infer({"b": b, "a": a})  # feed dict order differs from the model's
        assert runner.last_inference_time() is not None
    assert isinstance(out["y"], np.ndarray)
    np.testing.assert_allclose(out["y"], a * 2 + 1)
    np.testing.assert_array_equal(out["z"], b)


def test_a_loader_of_the_module_dict_outputs_and_a_wrong_output_count():
    torch = _torch()
    from poly.backend.pyt import PytRunner
    from poly.core import PolyException

    class Named(torch.nn.Module):
        def forward(self, a, b):
            return {"sum": a + b, "diff": a - b}

    feed = {"a": np.ones((2, 3), np.float32), "b": np.ones((2, 3), np.int32)}
    with PytRunner(lambda: Named(), META, ["diff", "sum"]) as runner:
        out = runner.infer(feed)
        assert list(out) == ["diff", "sum"]
        np.testing.assert_array_equal(out["sum"], 2 * np.ones((2, 3)))
    with PytRunner(_affine_module(torch), META, ["only_one"]) as runner:
        with pytest.raises(PolyException, match="returned 2 output"):
            runner.infer(feed)


def test_the_module_is_put_in_eval_mode_and_released_on_deactivate():
    torch = _torch()
    from poly.backend.pyt import PytRunner

    module = torch.nn.Sequential(torch.nn.Dropout(0.9))
    module.train()
    runner = PytRunner(module, TensorMetadata().add("x", np.float32, (100,)), ["y"])
    with runner:
        assert not module.training
        np.testing.assert_array_equal(runner.infer({"x": np.ones(100, np.float32)})["y"], np.ones(100))
    assert runner.model is None


def test_inputs_follow_a_cuda_model():
    torch = _torch()
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device for torch here")
    from poly.backend.pyt import PytRunner

    feed = {"a": np.ones((2, 3), np.float32), "b": np.ones((2, 3), np.int32)}
    with PytRunner(_affine_module(torch).cuda(), META, ["y", "z"]) as runner:
        out = runner.infer(feed)
    np.testing.assert_allclose(out["y"], 3 * np.ones((2, 3)))
