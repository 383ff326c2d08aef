import time

import numpy as np
import pytest

from poly.core import BaseRunner, DataType, PolyException, TensorMetadata


class AddOneRunner(BaseRunner):
    """A tiny runner: y = x + 1, with a dynamic batch dimension."""

    def __init__(self, name=None, delay=0.0, device_time=None):
        super().__init__(name=name, prefix="add-one-runner")
        self.delay = delay
        self.device_time = device_time
        self.events = []

    def activate_impl(self):
        self.events.append("activate")

    def deactivate_impl(self):
        self.events.append("deactivate")

    def get_input_metadata_impl(self):
        return TensorMetadata().add("x", np.float32, ("batch", 3)).add("mask", np.bool_, (-1,))

    def infer_impl(self, feed_dict, scale=1):
        time.sleep(self.delay)
        if self.device_time is not None:
            self.inference_time = self.device_time
        return {"y": (feed_dict["x"] + 1) * scale}


def feed(batch=2):
    return {"x": np.zeros((batch, 3), dtype=np.float32), "mask": np.ones(batch, dtype=bool)}


def test_default_names_are_unique():
    a, b = AddOneRunner(), AddOneRunner()
    assert a.name != b.name
    assert a.name.startswith("add-one-runner-N")
    assert AddOneRunner(name="mine").name == "mine"


def test_context_manager_activates_and_deactivates():
    runner = AddOneRunner()
    assert not runner.is_active
    with runner as active:
        assert active is runner and runner.is_active
        out = runner.infer(feed())
        np.testing.assert_array_equal(out["y"], np.ones((2, 3), dtype=np.float32))
    assert not runner.is_active
    assert runner.events == ["activate", "deactivate"]


def test_infer_passes_extra_arguments():
    with AddOneRunner() as runner:
        assert runner.infer(feed(), True, scale=3)["y"][0, 0] == 3


def test_infer_requires_activation():
    runner = AddOneRunner()
    with pytest.raises(PolyException, match="activated prior to calling infer"):
        runner.infer(feed())
    with pytest.raises(PolyException, match="get_input_metadata"):
        runner.get_input_metadata()


def test_double_activate_and_inactive_deactivate_warn(capsys):
    runner = AddOneRunner(name="warny")
    runner.deactivate()
    assert "Not active" in capsys.readouterr().out
    runner.activate()
    runner.activate()
    assert "Already active" in capsys.readouterr().out
    runner.deactivate()
    assert runner.events == ["activate", "deactivate"]


def test_get_input_metadata_returns_datatypes():
    with AddOneRunner() as runner:
        meta = runner.get_input_metadata(use_numpy_dtypes=False)
        numpy_meta = runner.get_input_metadata()  # Polygraphy's default: NumPy dtypes
    assert numpy_meta["x"].dtype == np.dtype(np.float32) and isinstance(numpy_meta["x"].dtype, np.dtype)
    assert numpy_meta["mask"].dtype == np.dtype(bool)
    assert isinstance(meta, TensorMetadata)
    assert meta["x"].dtype is DataType.FLOAT32 and meta["mask"].dtype is DataType.BOOL
    assert list(meta["x"].shape) == ["batch", 3]


@pytest.mark.parametrize(
    "bad_feed, patterns",
    [
        ({"x": np.zeros((2, 3), dtype=np.float32)}, ["Missing", "mask", "expected inputs"]),
        (dict(feed(), extra=np.zeros(1)), ["Unexpected", "extra", "expected inputs"]),
        (dict(feed(), x=np.zeros((2, 3), dtype=np.float64)), ["x", "float64", "expected: float32"]),
        (dict(feed(), x=np.zeros((2, 4), dtype=np.float32)), ["x", "(2, 4)", "('batch', 3)"]),
        (dict(feed(), x=np.zeros((2, 3, 1), dtype=np.float32)), ["x", "(2, 3, 1)"]),
        (dict(feed(), mask=np.ones((2, 2), dtype=bool)), ["mask", "(2, 2)", "(-1,)"]),
    ],
)
def test_input_checks(bad_feed, patterns, capsys):
    with AddOneRunner() as runner:
        with pytest.raises(PolyException) as err:
            runner.infer(bad_feed)
    message = str(err.value)
    assert "\n" not in message
    for pattern in patterns:
        assert pattern in message
    # raised, not logged: callers that skip a bad feed dict (validation) report it once themselves
    assert message not in capsys.readouterr().err


def test_dynamic_dimensions_accept_any_size():
    with AddOneRunner() as runner:
        for batch in (1, 5):
            assert runner.infer(feed(batch))["y"].shape == (batch, 3)


def test_check_inputs_can_be_disabled():
    with AddOneRunner() as runner:
        out = runner.infer({"x": np.zeros((1, 7), dtype=np.float64)}, check_inputs=False)
    assert out["y"].shape == (1, 7)


def test_last_inference_time_is_measured():
    with AddOneRunner(delay=0.02) as runner:
        runner.infer(feed())
        measured = runner.last_inference_time()
    assert 0.02 <= measured < 1.0


def test_runner_reported_time_wins():
    with AddOneRunner(delay=0.01, device_time=0.001) as runner:
        runner.infer(feed())
        assert runner.last_inference_time() == 0.001


def test_last_inference_time_before_infer_warns(capsys):
    with AddOneRunner(name="fresh") as runner:
        assert runner.last_inference_time() is None
    assert "No inference time" in capsys.readouterr().out


def test_base_runner_is_abstract():
    with BaseRunner() as runner:
        with pytest.raises(NotImplementedError):
            runner.infer({})
