"""`poly validate --ray`: the checks of the flags a Ray run accepts, the runners built for the
workers, and the run on the cluster; the command writes the reports as for a local run."""

from __future__ import annotations

import math
import os

import click

from poly.cli.args.onnx_load import OnnxLoadArgs
from poly.cli.args.onnxrt import OnnxrtArgs
from poly.cli.args.trt_config import TrtConfigArgs
from poly.cli.args.trt_network import TrtNetworkArgs
from poly.cli.validate_ray.cluster import RayCluster
from poly.cli.validate_ray.engine import RayValidation
from poly.cli.validate_ray.work_items import check_uri_directory, is_uri

__all__ = ["validate_on_ray", "actor_session_options"]


def actor_session_options(ray_args, onnxrt) -> dict | None:
    """
    The ONNX-Runtime session options of each actor: on the CPU, one inference thread per CPU the
    actor reserves (``--ray-cpus-per-worker``, at least 1), as Ray sizes OpenMP pools. Left at
    ONNX-Runtime's default, every actor would spin a pool as wide as its machine: two actors on
    two cores then run a third as fast as one.
    """
    if not onnxrt.cpu_only:
        return None
    threads = max(1, math.floor(ray_args.cpus_per_worker))
    return {"intra_op_num_threads": threads, "inter_op_num_threads": 1}


def validate_on_ray(ray_args, model, runners, comparison, dataset, data_loader_script, golden, kwargs, max_failures,
                    batch, worst_k, progress):
    """Runs the validation on Ray; returns the outcome and the report's config."""
    from poly.compare.dataset import SampleChecker
    from poly.core import G_LOGGER

    if data_loader_script:
        raise click.UsageError("--data-loader-script cannot be used with --ray: give --dataset (a directory, a "
                               "Parquet file or a URI).")
    if len(dataset) != 1:
        raise click.UsageError("With --ray, give one --dataset: a directory of samples, a Parquet file or a URI.")
    if golden and (len(golden) != 1 or not (is_uri(golden[0]) or os.path.isdir(golden[0]))):
        raise click.UsageError("With --ray, --golden is one directory of golden outputs named as the samples "
                               "(or give a second backend).")
    if golden and is_uri(golden[0]):
        check_uri_directory("--golden", golden[0])
    runners.check_engine_model(model, name_other=False)
    trt_config = TrtConfigArgs.from_kwargs(kwargs) if runners.uses_trt else None
    onnxrt = OnnxrtArgs.from_kwargs(kwargs)
    built = runners.create_runners(model, OnnxLoadArgs.from_kwargs(kwargs), onnxrt, TrtNetworkArgs.from_kwargs(kwargs),
                                   trt_config, session_options=actor_session_options(ray_args, onnxrt))
    tolerances = comparison.tolerances()
    cluster = RayCluster(ray_args.address)
    reference = golden[0] if golden else built[1].name
    G_LOGGER.start(f"VALIDATING | {built[0].name} on {model.path} against {reference} | "
                   f"{ray_args.workers} Ray workers on {cluster.describe()}")
    with cluster:
        validation = RayValidation(
            built[0], dataset[0], SampleChecker(threads=1, **tolerances), golden=golden[0] if golden else None,
            reference_runner=built[1] if len(built) == 2 else None, workers=ray_args.workers,
            cpus_per_worker=ray_args.cpus_per_worker, gpus_per_worker=ray_args.gpus_per_worker,
            max_failures=max_failures, worst_k=worst_k, batch=batch, progress=progress)
        try:
            outcome = validation.run()
        except ValueError as err:  # a dataset with no samples, or that does not exist
            raise click.UsageError(str(err)) from None
    progress.finish(outcome.accumulator, outcome.elapsed)
    config = {"model": str(model.path), "runner": built[0].name, "reference": reference, "dataset": dataset[0],
              "atol": tolerances["atol"], "rtol": tolerances["rtol"],
              "check_error_stat": tolerances["check_error_stat"] or "elemwise",
              "error_quantile": tolerances["error_quantile"], "workers": ray_args.workers, "batch": batch,
              "ray": ray_args.address or "local", "ray_workers": ray_args.workers,
              "ray_steady_samples_per_second": validation.steady_samples_per_second}
    return outcome, config
