"""The TensorRT script options: Python scripts the user names that create or change the TensorRT
network (a network-script MODEL, --trt-network-func-name, --trt-network-postprocess-script) or
the builder configuration (--trt-config-script, --trt-config-func-name,
--trt-config-postprocess-script). Each is FILE[:FUNC]; only these explicit flags run user code."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import click

from poly.cli.gen_script.call_tree import Assign, Ref, Value, Var, evaluate
from poly.cli.multi_option import multi_option, stack_options

if TYPE_CHECKING:
    from poly.cli.args.model import ModelArgs

NETWORK_POSTPROCESS_FUNC = "postprocess"
"""The function a --trt-network-postprocess-script defines when none is named."""
CONFIG_FUNC = "load_config"
"""The function a --trt-config-script defines when none is named."""
CONFIG_POSTPROCESS_FUNC = "postprocess_config"
"""The function a --trt-config-postprocess-script defines when none is named."""


def parse_script(flag: str, spec: str | None, default_func: str) -> tuple[str, str] | None:
    """``FILE[:FUNC]`` -> (FILE, FUNC or ``default_func``); a usage error naming ``flag`` when
    FILE does not exist."""
    if not spec:
        return None
    from poly.compare.io.data_loader_script import parse_script_and_func_name

    path, func = parse_script_and_func_name(spec, default_func)
    if not os.path.isfile(path):
        raise click.BadParameter(f"script {path!r} does not exist", param_hint=f"'{flag}'")
    return path, func  # type: ignore[return-value]


@dataclass(frozen=True)
class TrtNetworkScriptArgs:
    """Scripts that create the TensorRT network (MODEL as a network script) or change it after
    it is created."""

    func_name: str | None = None
    """--trt-network-func-name: the function of a network-script MODEL (None: MODEL's `:func`,
    else `load_network`)."""
    postprocess: tuple[tuple[str, str], ...] = ()
    """--trt-network-postprocess-script: (script, function) pairs, applied in the order given."""

    @classmethod
    def options(cls) -> Any:
        """--trt-network-func-name (--trt-network-func), --trt-network-postprocess-script (--trt-npps)."""
        return stack_options([
            click.option("--trt-network-func-name", "--trt-network-func", "trt_network_func_name",
                         help="Function of a TensorRT network script MODEL that creates the network (default "
                         "`load_network`; `script.py:func` as MODEL names it too). It returns a builder, a network "
                         "and optionally a parser."),
            multi_option("--trt-network-postprocess-script", "--trt-npps", "trt_network_postprocess_script",
                         metavar="FILE[:FUNC] [FILE[:FUNC] ...]",
                         help="Script(s) whose function (default `postprocess`) is called as `func(network=network)` "
                         "on the TensorRT network after it is created, to change it. Several run in the order given."),
        ], section="TensorRT Network Loading")

    @classmethod
    def from_kwargs(cls, kwargs: Mapping) -> TrtNetworkScriptArgs:
        """Checks that the postprocessing scripts exist (a usage error naming the flag otherwise)."""
        scripts = kwargs.get("trt_network_postprocess_script") or ()
        return cls(
            func_name=kwargs.get("trt_network_func_name"),
            postprocess=tuple(parse_script("--trt-network-postprocess-script", spec, NETWORK_POSTPROCESS_FUNC)  # type: ignore[misc]
                              for spec in scripts),
        )

    def network_func(self, model: ModelArgs) -> str:
        """The function of the network script MODEL to call."""
        from poly.cli.args.model import DEFAULT_NETWORK_FUNC

        return self.func_name or model.func_name or DEFAULT_NETWORK_FUNC

    def script_network_expr(self, model: ModelArgs) -> Any:
        """The call tree of InvokeFromScript for the network script MODEL: it returns (builder,
        network[, parser])."""
        return Ref("poly.backend.common", "InvokeFromScript")(model.path, self.network_func(model))

    def load_script_network(self, model: ModelArgs) -> Any:
        """InvokeFromScript for the network script MODEL."""
        return evaluate(self.script_network_expr(model))

    def postprocess_expr(self, loader: Any) -> Any:
        """``loader`` (a call tree) wrapped in one PostprocessNetwork per
        --trt-network-postprocess-script."""
        for path, func in self.postprocess:
            loader = Ref("poly.trt", "PostprocessNetwork")(
                loader, func=Ref("poly.backend.common", "InvokeFromScript")(path, func), name=f"{path}:{func}")
        return loader

    def postprocess_network(self, loader: Any) -> Any:
        """``loader`` wrapped in one PostprocessNetwork per --trt-network-postprocess-script."""
        return evaluate(self.postprocess_expr(Value(loader)))


@dataclass(frozen=True)
class TrtConfigScriptArgs:
    """Scripts that create the TensorRT builder configuration, or change the one poly creates."""

    script: tuple[str, str] | None = None
    """--trt-config-script: (script, function); the function replaces every other config flag."""
    postprocess: tuple[str, str] | None = None
    """--trt-config-postprocess-script: (script, function) called on the created configuration."""

    @classmethod
    def options(cls) -> Any:
        """--trt-config-script, --trt-config-func-name, --trt-config-postprocess-script (--trt-cpps)."""
        return stack_options([
            click.option("--trt-config-script", metavar="FILE[:FUNC]",
                         help="Script whose function (default `load_config`) takes a builder and a network and "
                         "returns the TensorRT builder configuration; the other builder flags are then ignored."),
            click.option("--trt-config-func-name",
                         help="[DEPRECATED: use --trt-config-script FILE:FUNC] Function of --trt-config-script."),
            click.option("--trt-config-postprocess-script", "--trt-cpps", "trt_config_postprocess_script",
                         metavar="FILE[:FUNC]",
                         help="Script whose function (default `postprocess_config`) is called as "
                         "`func(builder, network, config)` on the configuration the builder flags create, to change it."),
        ], section="TensorRT Builder Configuration")

    @classmethod
    def from_kwargs(cls, kwargs: Mapping) -> TrtConfigScriptArgs:
        """Checks that the scripts exist (a usage error naming the flag otherwise)."""
        spec, func_name = kwargs.get("trt_config_script"), kwargs.get("trt_config_func_name")
        script = parse_script("--trt-config-script", spec, CONFIG_FUNC)
        if script and func_name:
            script = (script[0], func_name)
        elif func_name and not spec:
            raise click.UsageError("--trt-config-func-name needs --trt-config-script")
        postprocess = parse_script("--trt-config-postprocess-script", kwargs.get("trt_config_postprocess_script"),
                                   CONFIG_POSTPROCESS_FUNC)
        return cls(script=script, postprocess=postprocess)

    def config_statements(self, create_config: list) -> list:
        """The statements that set ``config``: the --trt-config-script function's in place of
        ``create_config`` (statements creating poly's CreateConfig), then PostprocessConfig for
        --trt-config-postprocess-script."""
        invoke = Ref("poly.backend.common", "InvokeFromScript")
        statements = [Assign("config", invoke(*self.script))] if self.script else list(create_config)
        if self.postprocess:
            statements.append(Assign("config", Ref("poly.trt", "PostprocessConfig")(
                Var("config"), func=invoke(*self.postprocess))))
        return statements
