"""The samples a command works through (`poly debug localize`, `poly convert --keep-accuracy`):
the feed dicts of the data loader flags, typed and shaped from an ONNX model's inputs, or those
of a ``--dataset`` directory."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import click

from poly.cli.args.data.data_loader import DataLoaderArgs

__all__ = ["input_metadata", "dataset_samples", "samples"]


def input_metadata(model: Any) -> Any:
    """The ``TensorMetadata`` of an ONNX model's graph inputs (initializers excluded)."""
    from poly.core import DataType, TensorMetadata

    initializers = {init.name for init in model.graph.initializer}
    meta = TensorMetadata()
    for vi in model.graph.input:
        if vi.name in initializers:
            continue
        tensor_type = vi.type.tensor_type
        dtype = DataType.from_dtype(tensor_type.elem_type, "onnx") if tensor_type.elem_type else None
        shape = [d.dim_value if d.HasField("dim_value") else (d.dim_param or -1) for d in tensor_type.shape.dim] \
            if tensor_type.HasField("shape") else None
        meta.add(vi.name, dtype=dtype, shape=shape)
    return meta


def dataset_samples(path: str, model: Any) -> Iterator[Any]:
    """The feed dicts of a ``--dataset`` directory or Parquet file (bad samples are skipped with a
    warning); a dataset that cannot be opened is a usage error naming ``--dataset``."""
    from poly.compare.dataset import SampleError, open_dataset
    from poly.core import G_LOGGER

    try:
        dataset = open_dataset([path], inputs=input_metadata(model), listed=True)
    except ValueError as err:
        raise click.BadParameter(str(err), param_hint="'--dataset'") from None
    for sample in dataset:
        if isinstance(sample, SampleError):
            G_LOGGER.warning(f"Skipping sample {sample.name or sample.index}: {sample.message}")
            continue
        yield sample.feed_dict


def samples(data: DataLoaderArgs, model: Any, dataset: str | None = None) -> Any:
    """The samples of the data flags (or of ``dataset``): an iterable of feed dicts. A synthetic
    data loader without --input-shapes takes the model's input types and shapes."""
    if dataset:
        return dataset_samples(dataset, model)
    loader = data.create_data_loader()
    if hasattr(loader, "input_metadata") and getattr(loader, "input_metadata", None) is None:
        loader.input_metadata = input_metadata(model)
    return loader
