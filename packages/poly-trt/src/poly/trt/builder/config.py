"""
``CreateConfig``: the builder configuration (precisions, optimization profiles, calibrator,
timing cache, memory pools, optimization level, precision constraints, profiling verbosity, DLA,
quantization flags and the other builder options), checked against what the installed TensorRT
flavour offers.
"""

from typing import Any

from poly.core import G_LOGGER, BaseLoader
from poly.core.func import funcify
from poly.trt.builder.calibrator import fill_calibration_metadata
from poly.trt.builder.profile import Profile
from poly.trt.builder.timing_cache import load_timing_cache
from poly.trt.tensorrt_module import flavour, is_rtx, trt

__all__ = ["CreateConfig", "create_config", "BOOLEAN_FLAGS", "enum_member", "network_is_dynamic"]

BOOLEAN_FLAGS = {
    "tf32": "TF32",
    "fp16": "FP16",
    "int8": "INT8",
    "fp8": "FP8",
    "bf16": "BF16",
    "sparse_weights": "SPARSE_WEIGHTS",
    "refittable": "REFIT",
    "strip_plan": "STRIP_PLAN",
    "direct_io": "DIRECT_IO",
    "version_compatible": "VERSION_COMPATIBLE",
    "exclude_lean_runtime": "EXCLUDE_LEAN_RUNTIME",
    "error_on_timing_cache_miss": "ERROR_ON_TIMING_CACHE_MISS",
    "disable_compilation_cache": "DISABLE_COMPILATION_CACHE",
    "weight_streaming": "WEIGHT_STREAMING",
    "allow_gpu_fallback": "GPU_FALLBACK",
    "strict_nans": "STRICT_NANS",
}
"""CreateConfig's boolean options and the ``trt.BuilderFlag`` each sets."""

_PRECISION_CONSTRAINTS = {"obey": "OBEY_PRECISION_CONSTRAINTS", "prefer": "PREFER_PRECISION_CONSTRAINTS"}

_RTX_HINT = (
    " (TensorRT-RTX networks are strongly typed: precisions come from the model's own types; "
    "build with full TensorRT for this option)"
)


def enum_member(enum: Any, value: Any, what: Any) -> Any:
    """``value`` if it is already a member of ``enum``, else the member named ``value`` (any case)."""
    if not isinstance(value, str):
        return value
    name = value.strip().upper().replace("-", "_")
    member = getattr(enum, name, None)
    if member is None:
        choices = [n for n in dir(enum) if n.isupper()]
        G_LOGGER.critical(f"Unknown {what} '{value}'; choose from: {choices}")
    return member


def network_is_dynamic(network: Any) -> bool:
    """Whether any network input has a dynamic dimension or is a shape tensor."""
    for i in range(network.num_inputs):
        tensor = network.get_input(i)
        if tensor.is_shape_tensor or any(d < 0 for d in tensor.shape):
            return True
    return False


class CreateConfig(BaseLoader):
    """Functor that creates a ``trt.IBuilderConfig`` for a builder and network."""

    def __init__(
        self,
        tf32: Any = None,
        fp16: Any = None,
        int8: Any = None,
        fp8: Any = None,
        bf16: Any = None,
        profiles: Any = None,
        calibrator: Any = None,
        precision_constraints: Any = None,
        load_timing_cache: Any = None,
        memory_pool_limits: Any = None,
        builder_optimization_level: Any = None,
        profiling_verbosity: Any = None,
        tactic_sources: Any = None,
        hardware_compatibility_level: Any = None,
        max_aux_streams: Any = None,
        runtime_platform: Any = None,
        tiling_optimization_level: Any = None,
        compute_capabilities: Any = None,
        engine_capability: Any = None,
        preview_features: Any = None,
        algorithm_selector: Any = None,
        use_dla: Any = None,
        quantization_flags: Any = None,
        **flags: Any,
    ) -> None:
        """
        Args:
            tf32, fp16, int8, fp8, bf16 (bool): Enable those precisions (full TensorRT; RTX has TF32 only).
                    TF32, on by default in TensorRT, is turned off unless ``tf32=True``.
            profiles (List[Profile]): Optimization profiles. A network with dynamic inputs and
                    no profile gets one from ``Profile().fill_defaults``.
            calibrator (trt.IInt8Calibrator): INT8 calibrator (see ``poly.trt.Calibrator``).
            precision_constraints (str): "obey" or "prefer" layer precisions; None ignores them.
            load_timing_cache (Union[str, bytes, file]): A timing cache to start from (a path
                    that does not exist yet starts an empty cache).
            memory_pool_limits (Dict[Union[trt.MemoryPoolType, str], int]): Pool size limits in bytes.
            builder_optimization_level (int): 0 (fast build) to 5 (most optimized).
            profiling_verbosity (Union[trt.ProfilingVerbosity, str]): Layer detail kept in the engine.
            tactic_sources (List[trt.TacticSource or str]): Allowed tactic sources.
            hardware_compatibility_level, runtime_platform, tiling_optimization_level, engine_capability:
                    The ``trt`` enum member or its name.
            max_aux_streams (int): Auxiliary streams TensorRT may use.
            compute_capabilities (List[Union[trt.ComputeCapability, str]]): TensorRT-RTX build targets
                    (e.g. "SM86"); by default the builder's own choice.
            preview_features (List[trt.PreviewFeature or str]): Preview features to enable, every
                    other one disabled (an empty list disables them all); None keeps TensorRT's defaults.
            algorithm_selector (trt.IAlgorithmSelector): Tactic selection hook, e.g.
                    ``TacticRecorder`` or ``TacticReplayer`` (full TensorRT 10 and older).
            use_dla (bool): Make DLA the default device type (DLA core 0); layers fall back
                    to the GPU only with ``allow_gpu_fallback``. Full TensorRT only.
            quantization_flags (List[trt.QuantizationFlag or str]): The quantization flags to
                    enable, every other one cleared (an empty list clears them all); None keeps
                    TensorRT's defaults. Full TensorRT only.
            **flags: Boolean builder flags by keyword (see ``BOOLEAN_FLAGS``: sparse_weights,
                    refittable, strip_plan, direct_io, version_compatible, exclude_lean_runtime,
                    error_on_timing_cache_miss, disable_compilation_cache, weight_streaming,
                    allow_gpu_fallback, strict_nans).
        """
        unknown = [key for key in flags if key not in BOOLEAN_FLAGS]
        if unknown:
            raise TypeError(f"CreateConfig got unexpected keyword argument(s): {unknown}")
        self.bool_flags = {"tf32": tf32, "fp16": fp16, "int8": int8, "fp8": fp8, "bf16": bf16, **flags}
        self.profiles = list(profiles or [])
        for profile in self.profiles:
            if not isinstance(profile, Profile):
                G_LOGGER.critical(
                    f"CreateConfig profiles must be poly.trt.Profile objects, got {type(profile).__name__}"
                )
        self.calibrator = calibrator
        if precision_constraints not in (None, "none", *_PRECISION_CONSTRAINTS):
            G_LOGGER.critical(
                f"precision_constraints must be one of 'obey', 'prefer' or None, got {precision_constraints!r}"
            )
        self.precision_constraints = None if precision_constraints == "none" else precision_constraints
        self.load_timing_cache = load_timing_cache
        self.memory_pool_limits = dict(memory_pool_limits or {})
        self.builder_optimization_level = builder_optimization_level
        self.profiling_verbosity = profiling_verbosity
        self.tactic_sources = tactic_sources
        self.hardware_compatibility_level = hardware_compatibility_level
        self.max_aux_streams = max_aux_streams
        self.runtime_platform = runtime_platform
        self.tiling_optimization_level = tiling_optimization_level
        self.compute_capabilities = compute_capabilities
        self.engine_capability = engine_capability
        self.preview_features = preview_features
        self.algorithm_selector = algorithm_selector
        self.use_dla = bool(use_dla)
        self.quantization_flags = None if quantization_flags is None else list(quantization_flags)

    def _set_flag(self, config: Any, name: Any, option: Any) -> None:
        flag = getattr(trt.BuilderFlag, name, None)
        if flag is None:
            G_LOGGER.critical(f"{option} is not available in {flavour()}{_RTX_HINT if is_rtx() else ''}")
        config.set_flag(flag)

    def _set_dla_and_quantization(self, config: Any) -> None:
        if self.use_dla:
            if is_rtx() or not hasattr(trt, "DeviceType"):
                G_LOGGER.critical(f"use_dla (DLA) is not available in {flavour()}; it needs full TensorRT")
            config.default_device_type = trt.DeviceType.DLA
            config.DLA_core = 0
        if self.quantization_flags is not None:
            enum = getattr(trt, "QuantizationFlag", None)
            if enum is None:
                G_LOGGER.critical(f"quantization_flags are not available in {flavour()}; they need full TensorRT")
            wanted = {enum_member(enum, flag, "quantization flag") for flag in self.quantization_flags}
            for name in (n for n in dir(enum) if n.isupper()):
                member = getattr(enum, name)
                if member in wanted:
                    config.set_quantization_flag(member)
                else:
                    config.clear_quantization_flag(member)

    def _set_enum(self, config: Any, attribute: Any, value: Any, enum_name: Any) -> None:
        if value is None:
            return
        enum = getattr(trt, enum_name, None)
        if enum is None or not hasattr(config, attribute):
            G_LOGGER.critical(f"{attribute} is not available in {flavour()}")
        setattr(config, attribute, enum_member(enum, value, attribute.replace("_", " ")))

    def call_impl(self, builder: Any, network: Any) -> Any:
        """
        Args:
            builder (trt.Builder): The builder.
            network (trt.INetworkDefinition): The network (for profiles and checks).

        Returns:
            trt.IBuilderConfig
        """
        config = builder.create_builder_config()
        if not self.bool_flags["tf32"] and hasattr(trt.BuilderFlag, "TF32"):
            config.clear_flag(
                trt.BuilderFlag.TF32
            )  # on by default in TensorRT; off unless asked, as in Polygraphy
        for option, enabled in self.bool_flags.items():
            if enabled:
                self._set_flag(config, BOOLEAN_FLAGS[option], option)
        if self.precision_constraints:
            self._set_flag(
                config, _PRECISION_CONSTRAINTS[self.precision_constraints], "precision constraints"
            )

        profiles = self.profiles
        if not profiles and network_is_dynamic(network):
            G_LOGGER.warning("The network has dynamic inputs and no profile was given: using default shapes")
            profiles = [Profile()]
        for index, profile in enumerate(profiles):
            G_LOGGER.verbose(lambda index=index, profile=profile: f"Optimization profile {index}: {profile}")
            if config.add_optimization_profile(profile.to_trt(builder, network)) < 0:
                G_LOGGER.critical(f"TensorRT refused optimization profile {index}: {profile}")

        if self.calibrator is not None:
            if not hasattr(config, "int8_calibrator"):
                G_LOGGER.critical(
                    f"INT8 calibration is not available in {flavour()}{_RTX_HINT if is_rtx() else ''}"
                )
            fill_calibration_metadata(self.calibrator, network, profiles[0] if profiles else None)
            config.int8_calibrator = self.calibrator
            if profiles and hasattr(config, "set_calibration_profile"):
                config.set_calibration_profile(profiles[0].to_trt(builder, network))

        for pool, limit in self.memory_pool_limits.items():
            config.set_memory_pool_limit(enum_member(trt.MemoryPoolType, pool, "memory pool"), int(limit))
        if self.builder_optimization_level is not None:
            level = int(self.builder_optimization_level)
            if not 0 <= level <= 5:
                G_LOGGER.critical(f"builder_optimization_level must be between 0 and 5, got {level}")
            config.builder_optimization_level = level
        self._set_enum(config, "profiling_verbosity", self.profiling_verbosity, "ProfilingVerbosity")
        self._set_enum(
            config,
            "hardware_compatibility_level",
            self.hardware_compatibility_level,
            "HardwareCompatibilityLevel",
        )
        self._set_enum(config, "runtime_platform", self.runtime_platform, "RuntimePlatform")
        self._set_enum(
            config, "tiling_optimization_level", self.tiling_optimization_level, "TilingOptimizationLevel"
        )
        self._set_enum(config, "engine_capability", self.engine_capability, "EngineCapability")
        if self.max_aux_streams is not None:
            config.max_aux_streams = int(self.max_aux_streams)
        if self.tactic_sources is not None:
            mask = 0
            for source in self.tactic_sources:
                mask |= 1 << int(enum_member(trt.TacticSource, source, "tactic source"))
            config.set_tactic_sources(mask)
        if self.preview_features is not None:  # the features given on, every other one off
            wanted = {enum_member(trt.PreviewFeature, f, "preview feature") for f in self.preview_features}
            for name in (n for n in dir(trt.PreviewFeature) if n.isupper()):
                feature = getattr(trt.PreviewFeature, name)
                config.set_preview_feature(feature, feature in wanted)
        if self.compute_capabilities:
            if not hasattr(config, "set_compute_capability"):
                G_LOGGER.critical(
                    f"compute_capabilities is a TensorRT-RTX option; {flavour()} does not have it"
                )
            config.num_compute_capabilities = len(self.compute_capabilities)
            for index, cc in enumerate(self.compute_capabilities):
                config.set_compute_capability(
                    enum_member(trt.ComputeCapability, cc, "compute capability"), index
                )
        self._set_dla_and_quantization(config)
        if self.algorithm_selector is not None:
            if not hasattr(config, "algorithm_selector"):
                G_LOGGER.critical(f"Algorithm selectors are not available in {flavour()}")
            config.algorithm_selector = self.algorithm_selector
        # Always a timing cache, empty unless one is loaded, so that a build can save it.
        load_timing_cache(config, self.load_timing_cache)
        return config


create_config = funcify(CreateConfig)
