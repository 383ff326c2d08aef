"""
Device memory of an execution context: the allocation strategy (``TrtRunner(allocation_strategy=)``)
and the weight-streaming budget (``weight_streaming_budget`` / ``weight_streaming_percent``).

- ``"static"`` (default): TensorRT allocates, with the context, enough for every profile and shape.
- ``"profile"``: the runner allocates enough for the active profile's largest shapes.
- ``"runtime"``: the runner allocates enough for the current input shapes, before each inference.
"""

from typing import Any

from poly.core import G_LOGGER
from poly.trt.tensorrt_module import trt

__all__ = [
    "ALLOCATION_STRATEGIES",
    "create_execution_context",
    "context_memory_size",
    "weight_streaming_budget_bytes",
    "apply_weight_streaming",
]

ALLOCATION_STRATEGIES = ("static", "profile", "runtime")
"""The values ``TrtRunner(allocation_strategy=)`` accepts."""


def _strategy(strategy: Any) -> Any:
    strategy = "static" if strategy is None else str(strategy).lower()
    if strategy not in ALLOCATION_STRATEGIES:
        G_LOGGER.critical(f"Unknown allocation strategy '{strategy}'; choose from: {list(ALLOCATION_STRATEGIES)}")
    return strategy


def create_execution_context(engine: Any, strategy: Any = None) -> Any:
    """
    Creates an execution context: with TensorRT's own memory for ``"static"``, or with memory
    the caller provides (``USER_MANAGED``, see ``context_memory_size``) otherwise. Returns None
    when TensorRT could not create one.
    """
    if _strategy(strategy) == "static":
        return engine.create_execution_context()
    return engine.create_execution_context(trt.ExecutionContextAllocationStrategy.USER_MANAGED)


def context_memory_size(engine: Any, context: Any, strategy: Any, profile: Any) -> Any:
    """
    The bytes of device memory to give a ``USER_MANAGED`` context before inference: the active
    profile's need (``"profile"``) or the current input shapes' need (``"runtime"``, after the
    input shapes are set); None for ``"static"`` (TensorRT allocated it).
    """
    strategy = _strategy(strategy)
    if strategy == "static":
        return None
    if strategy == "profile":
        if hasattr(engine, "get_device_memory_size_for_profile_v2"):
            return int(engine.get_device_memory_size_for_profile_v2(profile))
        return int(engine.get_device_memory_size_for_profile(profile))
    return int(context.update_device_memory_size_for_shapes())


def weight_streaming_budget_bytes(engine: Any, budget: Any = None, percent: Any = None) -> Any:
    """
    The weight-streaming budget (bytes of weights TensorRT keeps on the device) asked for, or
    None when neither is given. ``budget``: -2 disables streaming (every weight resident), -1
    lets TensorRT choose, >= 0 is a number of bytes; ``percent``: the share of the streamable
    weights kept resident (100 disables streaming, 0 streams all of them). ``budget`` wins
    when both are given (with a warning).
    """
    if budget is not None and percent is not None:
        G_LOGGER.warning("Both a weight streaming budget and a percentage were given; using the budget in bytes")
    if budget is not None:
        budget = int(budget)
        if budget < -2:
            G_LOGGER.critical(f"Invalid weight streaming budget {budget}: use -2 (disabled), -1 (automatic) or bytes >= 0")
        if budget == -2:
            return int(engine.streamable_weights_size)
        if budget == -1:
            return int(engine.get_weight_streaming_automatic_budget())
        return budget
    if percent is not None:
        percent = float(percent)
        if not 0 <= percent <= 100:
            G_LOGGER.critical(f"Invalid weight streaming percentage {percent}: must be between 0 and 100")
        return int(engine.streamable_weights_size * percent / 100.0)
    return None


def apply_weight_streaming(engine: Any, budget: Any = None, percent: Any = None) -> Any:
    """Sets the engine's weight-streaming budget as asked (see ``weight_streaming_budget_bytes``);
    returns the budget set, or None when nothing was asked."""
    budget_bytes = weight_streaming_budget_bytes(engine, budget, percent)
    if budget_bytes is None:
        return None
    engine.weight_streaming_budget_v2 = budget_bytes
    if engine.weight_streaming_budget_v2 != budget_bytes:
        G_LOGGER.critical(f"TensorRT did not accept a weight streaming budget of {budget_bytes} bytes "
                          "(was the engine built with weight streaming enabled?)")
    G_LOGGER.info(f"Weight streaming budget: {budget_bytes} bytes of {engine.streamable_weights_size} streamable")
    return budget_bytes
