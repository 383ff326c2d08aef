"""The equivalent of Polygraphy's runner tests ``test_warn_if_impl_methods_called`` (its
fixture ``check_warnings_on_runner_impl_methods``), on poly's ONNX runners: the public methods
run without the warning, each ``*_impl`` called directly warns naming the public method."""

import numpy as np
import pytest
from fixtures import onnx_models

from poly.backend.onnx import GsFromOnnx
from poly.backend.onnxrt import OnnxrtRunner, SessionFromOnnx
from poly.backend.pluginref import PluginRefRunner
from poly.datatype import DataType
from poly.onnx import OnnxRefRunner

RUNNERS = {
    "onnxrt": lambda model: OnnxrtRunner(SessionFromOnnx(model.SerializeToString())),
    "onnx-ref": lambda model: OnnxRefRunner(model),
    "pluginref": lambda model: PluginRefRunner(GsFromOnnx(model)),
}


def check_warnings_on_runner_impl_methods(runner, capsys):
    def check_warning(out, method, expected):
        text = f"Calling '{type(runner).__name__}.{method}_impl()' directly is not recommended. " \
               f"Please use '{method}()' instead."
        assert (text in out) == expected, (method, out)

    runner.activate()
    metadata = runner.get_input_metadata()
    for dtype, _ in metadata.values():
        assert isinstance(dtype, np.dtype)  # NumPy data types by default, as in Polygraphy
    metadata = runner.get_input_metadata(use_numpy_dtypes=False)
    runner.infer({name: np.ones(shape, dtype=DataType.to_dtype(dtype, "numpy"))
                  for name, (dtype, shape) in metadata.items()})
    runner.deactivate()
    out = capsys.readouterr().out
    for method in ("get_input_metadata", "activate", "infer", "deactivate"):
        check_warning(out, method, expected=False)

    runner.activate_impl()
    metadata = runner.get_input_metadata_impl()
    runner.infer_impl({name: np.ones(shape, dtype=DataType.to_dtype(DataType.from_dtype(dtype), "numpy"))
                       for name, (dtype, shape) in metadata.items()})
    runner.deactivate_impl()
    out = capsys.readouterr().out
    for method in ("get_input_metadata", "activate", "infer", "deactivate"):
        check_warning(out, method, expected=True)


@pytest.mark.parametrize("kind", sorted(RUNNERS))
def test_warn_if_impl_methods_called(kind, capsys):
    check_warnings_on_runner_impl_methods(RUNNERS[kind](onnx_models.identity()), capsys)
