"""``CreateConfigRTX``: ``CreateConfig`` with TensorRT-RTX's build targets given Polygraphy's way
(``use_gpu``, or compute capabilities as ``(major, minor)`` tuples)."""

from typing import Any

from poly.core import G_LOGGER
from poly.core.func import funcify
from poly.trt.builder.config import CreateConfig
from poly.trt.tensorrt_module import flavour, is_rtx, trt

__all__ = ["CreateConfigRTX", "create_config_rtx"]


class CreateConfigRTX(CreateConfig):
    """A builder configuration for TensorRT-RTX: ``CreateConfig``'s options plus build targets."""

    def __init__(self, use_gpu: Any = None, compute_capabilities: Any = None, **kwargs: Any) -> None:
        """
        Args:
            use_gpu (bool): Build for the GPU of this machine (``ComputeCapability.CURRENT``).
                    Excludes ``compute_capabilities``.
            compute_capabilities (Sequence[Tuple[int, int]]): Build for these ``(major, minor)``
                    compute capabilities (``(8, 6)`` is ``SM86``); also accepts names or members
                    of ``trt.ComputeCapability``.
            **kwargs: ``CreateConfig``'s options.
        """
        if use_gpu and compute_capabilities:
            G_LOGGER.critical("CreateConfigRTX: use_gpu and compute_capabilities are mutually exclusive")
        self.use_gpu = bool(use_gpu)
        targets = ["CURRENT"] if self.use_gpu else [_capability_name(cc) for cc in compute_capabilities or []]
        super().__init__(compute_capabilities=targets or None, **kwargs)

    def call_impl(self, builder: Any, network: Any) -> Any:
        """
        Returns:
            trt.IBuilderConfig: The configuration.
        """
        if self.compute_capabilities:
            if not is_rtx():
                G_LOGGER.critical(f"CreateConfigRTX: compute capabilities are a TensorRT-RTX option; "
                                  f"{flavour()} does not have them")
            unknown = [cc for cc in self.compute_capabilities
                       if isinstance(cc, str) and not hasattr(trt.ComputeCapability, cc)]
            if unknown:
                supported = [n for n in dir(trt.ComputeCapability) if n.isupper()]
                G_LOGGER.critical(f"CreateConfigRTX: compute capabilities {unknown} are not supported by "
                                  f"{flavour()}; it knows: {supported}")
        return super().call_impl(builder, network)


def _capability_name(cc: Any) -> Any:
    if isinstance(cc, (tuple, list)) and len(cc) == 2:
        return f"SM{int(cc[0])}{int(cc[1])}"
    return cc


create_config_rtx = funcify(CreateConfigRTX)
