"""`poly debug build MODEL --until good|bad|N`: build the TensorRT engine again each iteration,
check it, and sort the artifacts (tactic replays, engines) into good/ and bad/."""

from __future__ import annotations

import click

from poly.cli.debug_options import DebugCommand, build_debugger, debug_options
from poly.cli.errors import EXIT_PASS
from poly.cli.model_args import resolve_model
from poly.cli.trt_options import trt_build_options, trt_output_options


def engine_builder(model, opts, network_postprocess=None):
    """A function that builds MODEL's engine with the builder flags and writes it to a path;
    ``network_postprocess(network_loader)`` may wrap the network loader (layer precisions)."""
    from poly.cli.trt_args import check_builder_flags, config_loader, network_loader
    from poly.trt import EngineBytesFromNetwork, SaveEngine

    check_builder_flags(opts)

    def build(path, *args):
        network = network_loader(model, opts)
        if network_postprocess is not None:
            network = network_postprocess(network, *args)
        engine = EngineBytesFromNetwork(network, config=config_loader(opts),
                                        save_timing_cache=opts.get("save_timing_cache"))
        SaveEngine(engine, path)()

    return build


@click.command(cls=DebugCommand, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("model_file", metavar="MODEL")
@trt_output_options
@trt_build_options
@debug_options(iter_artifact_default="polygraphy_debug.engine", until_required=True)
def build(model_file, **opts):
    """[EXPERIMENTAL] Repeatedly build an engine to isolate faulty tactics.

    Each iteration builds the engine (polygraphy_debug.engine by default), runs the --check
    command on it (or asks you), and sorts --artifacts into good/ and bad/. Use --save-tactics
    with --artifacts to collect tactic replays for `poly inspect diff-tactics`."""
    from poly.core.logger import G_LOGGER
    from poly.debug import Build

    model = resolve_model(model_file)
    if opts.get("save_engine"):
        raise click.UsageError("--save-engine: each iteration's engine is the --iter-artifact; sort it with --artifacts")
    debugger = build_debugger(opts)
    summary = Build(debugger, engine_builder(model, opts)).run()
    G_LOGGER.info(f"Ran {summary.total} iteration(s): {summary.passed} passed, {summary.total - summary.passed} failed")
    return EXIT_PASS
