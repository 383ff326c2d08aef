"""`poly template trt-config [builder flags] -o SCRIPT`: a script whose `load_config` creates the
TensorRT builder configuration the flags describe, for you to edit and then pass to
--trt-config-script."""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

import click

from poly.cli.args.data.data_loader import DataLoaderArgs
from poly.cli.args.logging import LoggingArgs
from poly.cli.args.model import ModelArgs
from poly.cli.args.trt.config import TrtConfigArgs
from poly.cli.args.trt.scripts import CONFIG_FUNC, TrtConfigScriptArgs
from poly.cli.commands.template.script_source import call, literal, output_option, write_script
from poly.cli.errors import EXIT_PASS, handle_errors
from poly.cli.help_sections import SectionedCommand

USAGE = "Use it with `poly run MODEL --trt --trt-config-script {path}` or `poly convert ... --trt-config-script {path}`."
TODO = "pass  # TODO: Set up the builder configuration here. This function should not return anything."


def profile_source(profile: Any) -> str:
    """`Profile().add("x", min=[...], opt=[...], max=[...])...` for a poly.trt.Profile."""
    adds = "".join(f"\n{' ' * 8}.add({literal(name)}, min={literal(list(shapes.min))}, opt={literal(list(shapes.opt))}, "
                   f"max={literal(list(shapes.max))})" for name, shapes in profile.items())
    return f"Profile(){adds}"


def data_loader_source(data: DataLoaderArgs) -> tuple[list[str], str]:
    """(imports, source) of the data loader the data loader flags describe (for calibration)."""
    if data.load_inputs:
        return ["from poly.compare import load_inputs"], call("load_inputs", literal(list(data.load_inputs)))
    if data.script:
        return ["from poly.compare import DataLoaderFromScript"], call("DataLoaderFromScript", literal(data.script))
    imports = ["from poly.compare import DataLoader"]
    kwargs = {key: literal(getattr(data, key)) for key in ("seed", "iterations", "val_range")
              if getattr(data, key) is not None}
    if data.input_shapes:
        imports.append("from poly.core import TensorMetadata")
        adds = "".join(f".add({literal(name)}, dtype=None, shape={literal(list(shape))})"
                       for name, shape in data.input_shapes.items())
        kwargs["input_metadata"] = f"TensorMetadata(){adds}"
    return imports, call("DataLoader", **kwargs)


def config_source(config: TrtConfigArgs, data: DataLoaderArgs) -> tuple[list[str], str]:
    """(imports, `CreateConfig(...)` source) of the builder flags: the arguments of the
    CreateConfig the flags create that differ from its defaults, with the INT8 calibrator and
    the tactic replay loaders written out."""
    from poly.trt import CreateConfig

    plain = dataclasses.replace(config, int8=False, save_tactics=None, load_tactics=None, scripts=TrtConfigScriptArgs())
    created = plain.create_config()
    imports = ["from poly.trt import CreateConfig"]
    kwargs = {}
    for name in inspect.signature(CreateConfig.__init__).parameters:
        if name in ("self", "flags", "calibrator", "algorithm_selector"):
            continue
        value = created.bool_flags.get(name) if name in created.bool_flags else getattr(created, name, None)
        if value is None or value is False or value == [] or value == {}:
            continue
        if name == "profiles":
            imports.append("from poly.trt import Profile")
            body = "".join(f"\n{' ' * 8}{profile_source(p)}," for p in value)
            kwargs[name] = f"[{body}\n    ]"
        else:
            kwargs[name] = literal(value)
    kwargs.update({name: "True" for name, value in created.bool_flags.items() if value and name not in kwargs})
    if config.int8:
        loader_imports, loader = data_loader_source(data)
        imports += ["from poly.trt import Calibrator", *loader_imports]
        calibrator = {"data_loader": loader}
        if config.calibration_cache:
            calibrator["cache"] = literal(config.calibration_cache)
        if config.calibration_algo:
            calibrator["algo"] = literal(config.calibration_algo)
        kwargs["int8"] = "True"
        kwargs["calibrator"] = call("Calibrator", **calibrator).replace("\n", "\n    ")
    if config.save_tactics or config.load_tactics:
        if config.save_tactics and config.load_tactics:
            raise click.UsageError("--save-tactics and --load-tactics cannot be used together")
        name, path = ("TacticRecorder", config.save_tactics) if config.save_tactics else ("TacticReplayer",
                                                                                         config.load_tactics)
        imports.append(f"from poly.trt import {name}")
        kwargs["algorithm_selector"] = call(name, literal(path))
    return imports, call("CreateConfig", **kwargs)


@click.command("trt-config", cls=SectionedCommand, context_settings={"help_option_names": ["-h", "--help"]})
@ModelArgs.options(required=False)
@output_option()
@TrtConfigArgs.options()
@DataLoaderArgs.options(save_inputs=False)
@LoggingArgs.options()
@handle_errors
def trt_config(output: Any, **kwargs: Any) -> Any:
    """Write a script that creates a TensorRT builder configuration.

    The builder flags given (--fp16, --trt-min/opt/max-shapes, --pool-limit, ...) are written
    into the script's CreateConfig; edit its `load_config` function to change the configuration
    further with TensorRT's API, then pass the script to --trt-config-script."""
    ModelArgs.from_kwargs(kwargs, required=False)  # a MODEL given must exist
    data = DataLoaderArgs.from_kwargs(kwargs)
    imports, source = config_source(TrtConfigArgs.from_kwargs(kwargs), data)
    imports = ["from poly import func", "from poly.trt import trt", *imports]
    function = f"@func.extend(create_trt_config)\ndef {CONFIG_FUNC}(builder, network, config):\n    {TODO}"
    write_script(output, "Creates a TensorRT builder configuration.", USAGE.format(path=output), imports,
                 [f"create_trt_config = {source}", function])
    return EXIT_PASS
