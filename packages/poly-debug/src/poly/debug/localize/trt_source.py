"""
TensorRT in ``poly debug localize``: the candidate's tensors read back as *debug tensors*, so the
engine that is checked is the engine that ships (marking tensors as outputs would change it).

``TrtSource`` runs the whole engine once per segment with only that segment's tensors reported
(``TrtRunner.set_debug_tensors``), which keeps host memory to one segment. ``TrtExecutor`` builds
and runs an engine of a small ONNX model (the shadow runs of divergent nodes). ``debug_marked_network``
marks every tensor of a network that the ONNX model names as a debug tensor.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from poly.core import G_LOGGER, PolyException, lazy_import

np = lazy_import("numpy")

__all__ = ["TrtSource", "TrtExecutor", "debug_marked_network"]


def debug_marked_network(network_loader: Any, names: Iterable[str]) -> Any:
    """A loader of the network of ``network_loader`` with each of its tensors named in ``names``
    marked as a debug tensor (tensors TensorRT's parser did not keep are skipped)."""
    from poly.trt import PostprocessNetwork

    wanted = set(names)

    def mark(network: Any) -> None:
        outputs = {network.get_output(i).name for i in range(network.num_outputs)}
        marked = 0
        for index in range(network.num_layers):
            layer = network.get_layer(index)
            for out in range(layer.num_outputs):
                tensor = layer.get_output(out)
                if tensor.name in wanted and tensor.name not in outputs and network.mark_debug(tensor):
                    marked += 1
        G_LOGGER.verbose(f"Marked {marked} tensor(s) as debug tensors")

    return PostprocessNetwork(network_loader, mark, "MarkLocalizeDebug")


class TrtSource:
    """
    The candidate's tensors from a TensorRT engine with debug tensors.

    Example::

        source = TrtSource(EngineFromNetwork(debug_marked_network(NetworkFromOnnxPath("m.onnx"), names)), names)
        source.start({"x": x})
        values = source.values(["conv1_out", "relu1_out"])
    """

    def __init__(self, engine: Any, names: Iterable[str] = (), label: str = "trt") -> None:
        """
        Args:
            engine: An engine loader (or engine) whose engine has debug tensors, or a ``TrtRunner``.
            names (Iterable[str]): The tensors callers may ask for (the ONNX model's): those the engine
                    holds as debug tensors are read back.
            label (str): How reports name this source.
        """
        from poly.trt import TrtRunner

        self.runner = engine if isinstance(engine, TrtRunner) else TrtRunner(engine, name="trt-localize")
        self.label = label
        self.names = list(names)
        self._feed: Mapping[str, Any] = {}
        self._io: set[str] | None = None
        self._debug: set[str] = set()
        self.runs = 0
        """How many inferences ran."""

    def _activate(self) -> None:
        if not self.runner.is_active:
            self.runner.activate()
        if self._io is None:
            engine = self.runner.engine
            self._io = {engine.get_tensor_name(i) for i in range(engine.num_io_tensors)}
            self._debug = {name for name in self.names if name not in self._io and engine.is_debug_tensor(name)}
            self.runner.set_debug_tensors([])
            self.runner.infer(self._feed)  # unfused tensors TensorRT reports, none of them copied
            self._debug.update(self.runner.reported_debug_tensors)

    def start(self, feed: Mapping[str, Any]) -> None:
        self._feed = dict(feed)
        self._activate()

    def provides(self, name: str) -> bool:
        return self._io is not None and (name in self._io or name in self._debug)

    def values(self, names: Sequence[str]) -> dict[str, Any]:
        """One inference reporting only ``names``; their values, copied to the host."""
        wanted = [name for name in names if self.provides(name)]
        if not wanted:
            return {}
        self.runner.set_debug_tensors([name for name in wanted if name in self._debug])
        outputs = self.runner.infer(self._feed)
        self.runs += 1
        # the runner's buffers are overwritten by its next inference: keep copies
        return {name: np.array(outputs[name]) for name in wanted if name in outputs}

    def release(self, names: Iterable[str]) -> None:
        """Nothing is held between inferences."""

    def layer_map(self, model: Any) -> Any:
        """ONNX node <-> TensorRT layer names of this engine (``poly.trt.map_engine_layers``)."""
        from poly.trt import map_engine_layers

        try:
            return map_engine_layers(model, self.runner.engine)
        except Exception as err:  # noqa: BLE001 - names only enrich the report
            G_LOGGER.warning(f"TensorRT layers could not be mapped to ONNX nodes: {err}")
            return None

    def close(self) -> None:
        if self.runner.is_active:
            self.runner.deactivate()


class TrtExecutor:
    """Builds a TensorRT engine of a small ONNX model and runs it (shadow runs)."""

    kind = "trt"

    def __init__(self, config: Any = None) -> None:
        """
        Args:
            config: A ``CreateConfig`` loader for the engines; None: TensorRT's defaults.
        """
        self.config = config
        self.runs = 0

    def run(self, model: Any, feed: dict[str, Any], outputs: Sequence[str]) -> dict[str, Any]:
        from poly.trt import EngineFromNetwork, ModifyNetworkOutputs, NetworkFromOnnxBytes, TrtRunner

        self.runs += 1
        network = ModifyNetworkOutputs(NetworkFromOnnxBytes(model.SerializeToString()), outputs=list(outputs))
        with G_LOGGER.verbosity(G_LOGGER.ERROR), TrtRunner(EngineFromNetwork(network, config=self.config)) as runner:
            values = runner.infer(feed)
            missing = [name for name in outputs if name not in values]
            if missing:
                raise PolyException(f"the TensorRT engine of the shadow model has no output(s) {', '.join(missing)}")
            return {name: np.array(values[name]) for name in outputs}
