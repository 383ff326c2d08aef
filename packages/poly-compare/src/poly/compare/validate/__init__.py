"""Streaming validation of a runner over a dataset against reference outputs (``poly validate``)."""

from poly.compare.validate.accumulator import Accumulator, LogHistogram, OutputDistribution, SampleResult
from poly.compare.validate.check import OutputCheck, SampleChecker
from poly.compare.validate.dataset import (
    Dataset,
    DirectoryDataset,
    FileDataset,
    IterableDataset,
    Sample,
    SampleError,
    open_dataset,
)
from poly.compare.validate.pipeline import ValidationOutcome, ValidationPipeline
from poly.compare.validate.reference import (
    DirectoryReference,
    Reference,
    RunnerReference,
    StreamReference,
    open_reference,
)
from poly.compare.validate.report import build_report, render_html, write_html_report, write_json_report

__all__ = [
    "Accumulator", "LogHistogram", "OutputDistribution", "SampleResult", "OutputCheck", "SampleChecker",
    "Dataset", "DirectoryDataset", "FileDataset", "IterableDataset", "Sample", "SampleError", "open_dataset",
    "ValidationOutcome", "ValidationPipeline", "DirectoryReference", "Reference", "RunnerReference",
    "StreamReference", "open_reference", "build_report", "render_html", "write_html_report", "write_json_report",
]
