"""
Recording and replaying the tactics TensorRT picks (``--save-tactics`` / ``--load-tactics``),
through ``trt.IAlgorithmSelector``. Full TensorRT up to 10.x has it; TensorRT-RTX does not,
and asking for it there is one clear error.
"""

import os
from typing import Any

from poly.core import G_LOGGER
from poly.trt.builder.tactics import Algorithm, TacticReplayData
from poly.trt.tensorrt_module import flavour, trt

__all__ = ["TacticRecorder", "TacticReplayer", "algorithm_from_trt"]


def _base() -> Any:
    base = getattr(trt, "IAlgorithmSelector", None)
    if base is None:
        G_LOGGER.critical(
            f"Tactic recording and replay (--save-tactics / --load-tactics) need full TensorRT 10 or older "
            f"(trt.IAlgorithmSelector, which {flavour()} does not have)"
        )
    return base


def algorithm_from_trt(algorithm: Any, context: Any) -> Any:
    """An ``Algorithm`` from TensorRT's ``IAlgorithm`` chosen for a layer (``IAlgorithmContext``)."""

    def io(index: Any) -> tuple[Any, ...]:
        info = algorithm.get_algorithm_io_info(index)
        return (
            str(info.dtype),
            tuple(info.strides),
            getattr(info, "vectorized_dim", -1),
            getattr(info, "components_per_element", -1),
        )

    count = context.num_inputs + context.num_outputs
    infos = [io(i) for i in range(count)]
    variant = algorithm.algorithm_variant
    return Algorithm(
        variant.implementation, variant.tactic, infos[: context.num_inputs], infos[context.num_inputs :]
    )


def TacticRecorder(record: Any = None) -> Any:  # noqa: N802 (Polygraphy's name)
    """
    An algorithm selector that keeps TensorRT's choices and records them.

    Args:
        record (Union[str, os.PathLike]): Where to save the tactic replay after the build.
    """
    base = _base()

    class _Recorder(base):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            base.__init__(self)
            self.path = os.fspath(record) if record is not None else None
            self.data = TacticReplayData()

        def select_algorithms(self, context: Any, choices: Any) -> list[Any]:
            return list(range(len(choices)))

        def report_algorithms(self, contexts: Any, choices: Any) -> None:
            for context, choice in zip(contexts, choices, strict=True):
                self.data.add(context.name, algorithm_from_trt(choice, context))
            if self.path:
                self.data.save(self.path)
                G_LOGGER.info(f"Saved tactic replay ({len(self.data)} layers) to {self.path}")

    return _Recorder()


def TacticReplayer(replay: Any) -> Any:  # noqa: N802 (Polygraphy's name)
    """
    An algorithm selector that makes TensorRT pick the recorded tactic for each layer.

    Args:
        replay (Union[str, os.PathLike, TacticReplayData]): The tactic replay.
    """
    base = _base()
    data = replay if isinstance(replay, TacticReplayData) else TacticReplayData.load(replay)

    class _Replayer(base):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            base.__init__(self)
            self.data = data

        def select_algorithms(self, context: Any, choices: Any) -> list[Any]:
            wanted = self.data.get(context.name)
            if wanted is None:
                return list(range(len(choices)))
            for index, choice in enumerate(choices):
                if algorithm_from_trt(choice, context) == wanted:
                    return [index]
            G_LOGGER.critical(
                f"Layer {context.name}: the recorded tactic {wanted} is not among TensorRT's {len(choices)} choices"
            )

        def report_algorithms(self, contexts: Any, choices: Any) -> None:
            for context, choice in zip(contexts, choices, strict=True):
                wanted = self.data.get(context.name)
                chosen = algorithm_from_trt(choice, context)
                if wanted is not None and wanted != chosen:
                    G_LOGGER.warning(
                        f"Layer {context.name}: TensorRT used {chosen}, not the recorded {wanted}"
                    )

    return _Replayer()
