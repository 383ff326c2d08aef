"""Turning the TensorRT flags into poly.trt loaders: the network (with marked outputs), the
builder config (profiles, precisions, calibrator, timing cache, pools) and the engine."""

from __future__ import annotations

import click

from poly.cli.model_args import parse_outputs
from poly.cli.options import MultiOption
from poly.cli.shape_parsing import parse_shapes

ENGINE_SUFFIXES = (".engine", ".plan", ".trt")

_SIZE_SUFFIXES = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def is_engine_path(path, model_type=None) -> bool:
    """Whether MODEL is a serialized engine (by --model-type or by its extension)."""
    if model_type:
        return model_type == "engine"
    return str(path).lower().endswith(ENGINE_SUFFIXES)


def _occurrences(values):
    return [v.split(MultiOption.OCCURRENCE_SEPARATOR) for v in values or ()]


def parse_profiles(opts):
    """--trt-min/opt/max-shapes -> a list of poly.trt.Profile (one per min/opt/max triple)."""
    groups = {key: _occurrences(opts.get(f"trt_{key}_shapes")) for key in ("min", "opt", "max")}
    counts = {key: len(value) for key, value in groups.items()}
    if not any(counts.values()):
        return []
    if len(set(counts.values())) != 1:
        raise click.UsageError(
            "--trt-min-shapes, --trt-opt-shapes and --trt-max-shapes must be given the same number of times "
            f"(one triple per profile), got {counts['min']}, {counts['opt']} and {counts['max']}"
        )
    from poly.trt import Profile
    from poly.trt.profile import shape_tuple_problem

    profiles = []
    for index in range(counts["min"]):
        parsed = {key: parse_shapes(f"--trt-{key}-shapes", groups[key][index]) for key in groups}
        names = set(parsed["min"]) | set(parsed["opt"]) | set(parsed["max"])
        profile = Profile()
        for name in sorted(names):
            missing = [key for key in parsed if name not in parsed[key]]
            if missing:
                raise click.UsageError(f"Profile {index}: input '{name}' has no --trt-{missing[0]}-shapes entry")
            shapes = [parsed[key][name] for key in ("min", "opt", "max")]
            if any(isinstance(d, str) for shape in shapes for d in shape):
                raise click.UsageError(f"Profile {index}: input '{name}' must have numeric dimensions, got {shapes}")
            problem = shape_tuple_problem(name, *shapes)
            if problem:
                raise click.UsageError(f"Profile {index}: {problem}")
            profile.add(name, *shapes)
        profiles.append(profile)
    return profiles


def parse_pool_limits(values):
    """`workspace:1G tactic_shared_memory:64K` -> {"workspace": 1073741824, ...}."""
    limits = {}
    for arg in values or ():
        name, sep, size = arg.rpartition(":")
        if not sep or not name:
            raise click.BadParameter(f"{arg!r}: expected POOL:SIZE, e.g. workspace:1G", param_hint="'--pool-limit'")
        text = size.strip().upper().removesuffix("B")
        scale = _SIZE_SUFFIXES.get(text[-1:], 1)
        try:
            limits[name] = int(float(text[:-1] if text[-1:] in _SIZE_SUFFIXES else text) * scale)
        except ValueError:
            raise click.BadParameter(f"{arg!r}: {size!r} is not a size", param_hint="'--pool-limit'") from None
    return limits


def check_builder_flags(opts):
    """Parses --trt-min/opt/max-shapes and --pool-limit up front, so that a bad value is a usage
    error (exit 2) before anything is loaded or built."""
    parse_profiles(opts)
    parse_pool_limits(opts.get("pool_limit"))


def network_loader(model_path, opts):
    """NetworkFromOnnxPath with --trt-outputs / --trt-exclude-outputs applied."""
    from poly.trt import ModifyNetworkOutputs, NetworkFromOnnxPath

    loader = NetworkFromOnnxPath(model_path, strongly_typed=opts.get("strongly_typed") or None)
    outputs = parse_outputs(opts.get("trt_outputs"))
    excluded = list(opts.get("trt_exclude_outputs") or ()) or None
    if outputs is not None or excluded is not None:
        loader = ModifyNetworkOutputs(loader, outputs=outputs, exclude_outputs=excluded)
    return loader


def config_loader(opts, data_loader=None):
    """CreateConfig from the builder flags; --int8 without a usable cache calibrates on `data_loader`."""
    from poly.trt import Calibrator, CreateConfig

    calibrator = None
    if opts.get("int8"):
        calibrator = Calibrator(data_loader if data_loader is not None else [], cache=opts.get("calibration_cache"),
                                algo=_calibration_algo(opts.get("calibration_base_class")))
    return CreateConfig(
        tf32=opts.get("tf32") or None,
        fp16=opts.get("fp16") or None,
        bf16=opts.get("bf16") or None,
        fp8=opts.get("fp8") or None,
        int8=opts.get("int8") or None,
        profiles=parse_profiles(opts),
        calibrator=calibrator,
        precision_constraints=opts.get("precision_constraints"),
        load_timing_cache=opts.get("load_timing_cache"),
        memory_pool_limits=parse_pool_limits(opts.get("pool_limit")),
        builder_optimization_level=opts.get("builder_optimization_level"),
        profiling_verbosity=opts.get("profiling_verbosity"),
        algorithm_selector=_algorithm_selector(opts),
    )


def _algorithm_selector(opts):
    if opts.get("save_tactics") and opts.get("load_tactics"):
        raise click.UsageError("--save-tactics and --load-tactics cannot be used together")
    if opts.get("save_tactics"):
        from poly.trt.tactic_selectors import TacticRecorder

        return TacticRecorder(opts["save_tactics"])
    if opts.get("load_tactics"):
        from poly.trt.tactic_selectors import TacticReplayer

        return TacticReplayer(opts["load_tactics"])
    return None


def _calibration_algo(name):
    if not name:
        return None
    aliases = {"IInt8EntropyCalibrator2": "entropy", "IInt8EntropyCalibrator": "entropy1",
               "IInt8MinMaxCalibrator": "minmax", "IInt8LegacyCalibrator": "legacy"}
    return aliases.get(name, name)


def engine_bytes_loader(model_path, opts, data_loader=None):
    """The serialized engine: built from the ONNX model (saved with --save-engine), or read from MODEL."""
    from poly.trt import BytesFromPath, EngineBytesFromNetwork, SaveEngine

    if is_engine_path(model_path, opts.get("model_type")):
        return BytesFromPath(model_path, what="engine")
    loader = EngineBytesFromNetwork(network_loader(model_path, opts), config=config_loader(opts, data_loader),
                                    save_timing_cache=opts.get("save_timing_cache"))
    if opts.get("save_engine"):
        loader = SaveEngine(loader, opts["save_engine"])
    return loader


def trt_runner(model_path, opts, data_loader=None):
    """A TrtRunner for MODEL with the TensorRT flags applied."""
    from poly.trt import EngineFromBytes, TrtRunner

    return TrtRunner(EngineFromBytes(engine_bytes_loader(model_path, opts, data_loader)))
