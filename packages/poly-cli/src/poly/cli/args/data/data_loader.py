"""The data loader group: where inference inputs come from (synthetic data shaped by
--input-shapes, --seed, --val-range and --iterations; --load-inputs files; a
--data-loader-script) and where they are saved (--save-inputs)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import click

from poly.cli.gen_script.call_tree import Assign, Const, Do, Ref, Var, run_statements
from poly.cli.multi_option import multi_option, stack_options
from poly.cli.value_parsing import parse_ranges, parse_shapes


@dataclass(frozen=True)
class DataLoaderArgs:
    """Where the inference inputs of `poly run` come from."""

    input_shapes: dict[str, list] = field(default_factory=dict)
    """--input-shapes: input name -> shape (names in a shape are dynamic dimensions)."""
    seed: int | None = None
    val_range: dict[str, tuple] | None = None
    """--val-range: input name ("" for every input) -> (min, max); None: the data loader's default."""
    iterations: int | None = None
    script: str | None = None
    """--data-loader-script as FILE[:FUNC], with --data-loader-func-name applied."""
    load_inputs: tuple[str, ...] = ()
    save_inputs: str | None = None

    @classmethod
    def options(cls, input_shapes: bool = True, save_inputs: bool = True) -> Any:
        """--input-shapes (unless ``input_shapes`` is False: commands whose own flag gives the
        shapes), --seed, --val-range, --iterations, --data-loader-script,
        --data-loader-func-name, --load-inputs, and --save-inputs where the command runs
        inference (``save_inputs``)."""
        shapes = [multi_option("--input-shapes", "--inputs", "input_shapes",
                               help="Input shapes for dynamic inputs: `--input-shapes x:[1,3,224,224] y:[1,10]`. "
                               "Without --trt-min/opt/max-shapes they are also the TensorRT optimization profile "
                               "(min = opt = max).")]
        return stack_options(shapes[:int(input_shapes)] + [
            click.option("--seed", type=int, help="Seed of the synthetic input data (default 1)."),
            multi_option("--val-range", help="Range of synthetic values [MIN,MAX], optionally per input: "
                         "`--val-range [0,1] x:[-1,1]`."),
            click.option("--iterations", "--iters", "iterations", type=click.IntRange(min=1),
                         help="Number of inference iterations (default 1)."),
            click.option("--data-loader-script", metavar="FILE[:FUNC]",
                         help="Python script defining a data loader (function `load_data` by default)."),
            click.option("--data-loader-func-name", help="[DEPRECATED] Function name in --data-loader-script."),
            multi_option("--load-inputs", "--load-input-data", "load_inputs",
                         type=click.Path(exists=True), help="Input data files (JSON or .npz) to use."),
        ] + ([
            click.option("--save-inputs", "--save-input-data", "save_inputs", type=click.Path(),
                         help="Path to save the inference inputs (JSON, .npz, or a directory)."),
        ] if save_inputs else []), section="Data Loader")

    @classmethod
    def from_kwargs(cls, kwargs: Mapping) -> DataLoaderArgs:
        """Parses --input-shapes and --val-range (a bad value is a usage error naming the flag)."""
        script = kwargs["data_loader_script"]
        if script and kwargs["data_loader_func_name"] and ":" not in script:
            script = f"{script}:{kwargs['data_loader_func_name']}"
        if script:
            from poly.compare.io.data_loader_script import parse_script_and_func_name

            path, _ = parse_script_and_func_name(script)
            if not os.path.isfile(path):
                raise click.BadParameter(f"script {path!r} does not exist", param_hint="'--data-loader-script'")
        return cls(
            input_shapes=parse_shapes("--input-shapes", kwargs.get("input_shapes")),
            seed=kwargs["seed"],
            val_range=parse_ranges("--val-range", kwargs["val_range"]),
            iterations=kwargs["iterations"],
            script=script,
            load_inputs=tuple(kwargs["load_inputs"]),
            save_inputs=kwargs.get("save_inputs"),
        )

    def data_loader_statements(self) -> list:
        """The statements that set ``data_loader``: the --load-inputs feed dicts, a
        DataLoaderFromScript, or a synthetic poly.compare.DataLoader (its ``input_metadata`` from
        --input-shapes)."""
        if self.load_inputs:  # load_inputs logs each file it loads
            return [Assign("data_loader", Ref("poly.compare", "load_inputs")(list(self.load_inputs)))]
        if self.script:
            return [Assign("data_loader", Ref("poly.compare", "DataLoaderFromScript")(self.script))]
        statements, metadata = [], None
        if self.input_shapes:
            statements.append(Assign("input_metadata", Ref("poly.core", "TensorMetadata")()))
            for name, shape in self.input_shapes.items():
                statements.append(Do(Var("input_metadata").attr("add")(name, dtype=Const(None), shape=list(shape))))  # type: ignore[arg-type]
            metadata = Var("input_metadata")
        # strict: an --input-shapes input the model lacks, or a shape that does not fit it, is a
        # usage error (exit status 2), not a warning before a run on the model's own shape
        statements.append(Assign("data_loader", Ref("poly.compare", "DataLoader")(
            seed=self.seed, iterations=self.iterations, input_metadata=metadata, val_range=self.val_range,
            strict=True)))
        return statements

    def create_data_loader(self) -> Any:
        """The data loader ``data_loader_statements`` create."""
        return run_statements(self.data_loader_statements())["data_loader"]

    def calibration_data(self, int8: bool) -> Any:
        """The data loader that feeds TensorRT's INT8 calibrator: ``create_data_loader()`` with
        --int8 (``int8``), else None."""
        return self.create_data_loader() if int8 else None
