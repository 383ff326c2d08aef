"""CalibratorCore: batches from a data loader in the order TensorRT asks for, and the cache.

Feeding NumPy arrays copies them to device memory, which needs a GPU: that part runs on the
lent GPU machine (tools/run_device_tests.sh); device pointers need no copy and run here.
"""

from __future__ import annotations

import io

import numpy as np
import pytest

from poly.core import PolyException, cuda


def _calibrator(loader, cache=None):
    from poly.trt import Calibrator

    return Calibrator(loader, cache=cache, BaseClass=object)


def test_batches_follow_the_requested_names_and_end_with_none():
    calib = _calibrator([{"a": 100, "b": 200}, {"b": 201, "a": 101}])
    assert calib.get_batch_size() == 1
    assert calib.get_batch(["b", "a"]) == [200, 100]
    assert calib.get_batch(["a", "b"]) == [101, 201]
    assert calib.get_batch(["a", "b"]) is None
    assert calib.batches_fed == 2
    calib.reset()
    assert calib.get_batch(["a"]) == [100]


def test_a_missing_input_names_the_batch():
    calib = _calibrator([{"a": 1}])
    with pytest.raises(PolyException, match=r"batch 0 lacks input\(s\) \['b'\]"):
        calib.get_batch(["a", "b"])


def test_cache_file_round_trip(tmp_path):
    path = tmp_path / "calib.cache"
    calib = _calibrator([], cache=path)
    assert calib.read_calibration_cache() is None  # nothing yet: TensorRT calibrates
    calib.write_calibration_cache(memoryview(b"TRT-8501-EntropyCalibration2\nx: 3c010a14\n"))
    assert path.read_bytes().startswith(b"TRT-8501")
    assert _calibrator([], cache=path).read_calibration_cache() == path.read_bytes()
    assert [p.name for p in tmp_path.iterdir()] == ["calib.cache"]


def test_cache_file_object():
    buffer = io.BytesIO()
    calib = _calibrator([], cache=buffer)
    calib.write_calibration_cache(b"abc")
    assert calib.read_calibration_cache() == b"abc"
    assert _calibrator([], cache=None).read_calibration_cache() is None


def test_unknown_algorithm():
    from poly.trt import Calibrator

    with pytest.raises(PolyException, match="Unknown calibration algorithm 'fancy'"):
        Calibrator([], algo="fancy")


@pytest.mark.skipif(not cuda.cuda_available(),
                    reason="copying calibration arrays to the device needs a GPU: run tools/run_device_tests.sh")
def test_numpy_batches_are_copied_to_device():
    data = [{"x": np.full((2, 3), i, np.float32)} for i in range(3)]
    calib = _calibrator(data)
    for i in range(3):
        (ptr,) = calib.get_batch(["x"])
        buffer = calib._buffers["x"]
        assert ptr == buffer.ptr
        np.testing.assert_array_equal(buffer.numpy(), data[i]["x"])
    assert calib.get_batch(["x"]) is None
    calib.free()


def test_synthetic_data_loaders_learn_the_network_inputs(trt_mod, trt_models):
    """`--int8` without a calibration cache calibrates on the run's DataLoader, which must be told
    what to generate: the network's inputs, dynamic dimensions from the profile's opt shapes."""
    from poly.compare import DataLoader
    from poly.trt import NetworkFromOnnxPath, Profile
    from poly.trt.builder.calibrator import fill_calibration_metadata

    _, network, _ = NetworkFromOnnxPath(trt_models["mlp"])()
    calib = _calibrator(DataLoader(iterations=2))
    meta = fill_calibration_metadata(calib, network, Profile().add("x", (1, 8), (3, 8), (4, 8)))
    assert list(meta) == ["x"] and tuple(meta["x"].shape) == (3, 8)
    feeds = list(calib.data_loader)
    assert len(feeds) == 2 and feeds[0]["x"].shape == (3, 8) and feeds[0]["x"].dtype == np.float32
    own = _calibrator([{"x": np.zeros((1, 8), np.float32)}])
    assert fill_calibration_metadata(own, network) is None  # loaders with their own data: untouched


@pytest.mark.skipif(not cuda.cuda_available(),
                    reason="device arrays need a GPU: run tools/run_device_tests.sh")
def test_device_batches_are_ready_when_tensorrt_reads_them():
    """TensorRT reads a batch on its own stream once get_batch returns: the producer's pending
    writes (the "stream" of the batch's __cuda_array_interface__) must be done by then."""
    cp = pytest.importorskip("cupy")
    from fixtures.cuda_garbage import slowly_filled

    producer = cp.cuda.Stream(non_blocking=True)
    x = slowly_filled(cp, producer, 1 << 16, 6.0)
    calib = _calibrator([{"x": x}])
    with producer:
        (ptr,) = calib.get_batch(["x"])
    assert ptr == x.data.ptr and calib._buffers == {}  # used in place
    assert producer.done
    assert (cp.asnumpy(x) == 6.0).all()
