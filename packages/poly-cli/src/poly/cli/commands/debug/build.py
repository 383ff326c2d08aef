"""`poly debug build MODEL --until good|bad|N`: build the TensorRT engine again each iteration,
check it, and sort the artifacts (tactic replays, engines) into good/ and bad/."""

from __future__ import annotations

from typing import Any

import click

from poly.cli.args.data.data_loader import DataLoaderArgs
from poly.cli.args.debug.debugger import DebugCommand, DebuggerArgs
from poly.cli.args.logging import LoggingArgs
from poly.cli.args.model import ModelArgs
from poly.cli.args.trt.config import TrtConfigArgs, reject_save_engine
from poly.cli.args.trt.network import TrtNetworkArgs
from poly.cli.errors import EXIT_PASS, handle_errors

SAVE_ENGINE_REASON = "each iteration's engine is the --iter-artifact; sort it with --artifacts"


def engine_builder(model: ModelArgs, network: TrtNetworkArgs, config: TrtConfigArgs, network_postprocess: Any = None,
                   data: DataLoaderArgs | None = None) -> Any:
    """A function ``build(path, *args)`` that builds MODEL's engine with ``config`` and writes
    it to ``path``; ``network_postprocess(network_loader, *args)`` may wrap the network loader
    (to set layer precisions, for example); with --int8, ``data``'s data loader feeds the
    calibrator."""
    from poly.trt import SaveEngine

    def build(path: Any, *args: Any) -> None:
        network_loader = network.load_network(model)
        if network_postprocess is not None:
            network_loader = network_postprocess(network_loader, *args)
        calibration = data.calibration_data(config.int8) if data is not None else None
        SaveEngine(config.build_engine_bytes(network_loader, calibration), path)()

    return build


@click.command(cls=DebugCommand, context_settings={"help_option_names": ["-h", "--help"]})
@ModelArgs.options()
@TrtNetworkArgs.options()
@TrtConfigArgs.options()
@DataLoaderArgs.options(save_inputs=False)
@DebuggerArgs.options(iter_artifact_default="polygraphy_debug.engine", until_required=True)
@LoggingArgs.options()
@handle_errors
def build(**kwargs: Any) -> Any:
    """[EXPERIMENTAL] Repeatedly build an engine to isolate faulty tactics.

    Each iteration builds the engine (polygraphy_debug.engine by default), runs the --check
    command on it (or asks you), and sorts --artifacts into good/ and bad/. Use --save-tactics
    with --artifacts to collect tactic replays for `poly inspect diff-tactics`."""
    from poly.core import G_LOGGER
    from poly.debug import Build

    model = ModelArgs.from_kwargs(kwargs)
    reject_save_engine(kwargs, SAVE_ENGINE_REASON)
    debugger = DebuggerArgs.from_kwargs(kwargs).create_debugger()
    builder = engine_builder(model, TrtNetworkArgs.from_kwargs(kwargs), TrtConfigArgs.from_kwargs(kwargs),
                             data=DataLoaderArgs.from_kwargs(kwargs))
    summary = Build(debugger, builder).run()
    G_LOGGER.info(f"Ran {summary.total} iteration(s): {summary.passed} passed, {summary.total - summary.passed} failed")
    return EXIT_PASS
