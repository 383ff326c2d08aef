"""``PostprocessConfig``: runs a callable on a builder configuration after it is created."""

from typing import Any

from poly.core import G_LOGGER, BaseLoader
from poly.core.func import funcify, invoke_if_callable

__all__ = ["PostprocessConfig", "postprocess_config"]


class PostprocessConfig(BaseLoader):
    """
    Functor that creates a builder configuration (from a loader such as ``CreateConfig``, called
    with the builder and network) and calls ``func(builder, network, config)``, which modifies it.
    """

    def __init__(self, config: Any, func: Any) -> None:
        """
        Args:
            config (Union[trt.IBuilderConfig, Callable(builder, network) -> trt.IBuilderConfig]):
                    The configuration or its loader.
            func (Callable[[trt.Builder, trt.INetworkDefinition, trt.IBuilderConfig], None]):
                    Modifies the configuration in place.
        """
        if not callable(func):
            G_LOGGER.critical(f"Object {func!r} is not a callable: PostprocessConfig needs a function of "
                              "(builder, network, config)")
        self._config = config
        self.func = func

    def call_impl(self, builder: Any, network: Any) -> Any:
        """
        Args:
            builder (trt.Builder): The builder.
            network (trt.INetworkDefinition): The network.

        Returns:
            trt.IBuilderConfig: The modified configuration.
        """
        config = invoke_if_callable(self._config, builder, network)
        self.func(builder, network, config)
        return config


postprocess_config = funcify(PostprocessConfig)
