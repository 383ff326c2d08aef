"""
The ONNX part of a `poly run --gen-script` script: source that loads the ONNX model as
``OnnxLoadArgs.load_onnx`` does (--onnx-outputs, --shape-inference, --external-data-dir,
--ignore-external-data, --fp-to-fp16...), saves it as ``OnnxSaveArgs.save_if_asked`` does
(--save-onnx and its external data flags), and writes the model TensorRT's parser reads as
``OnnxLoadArgs.parser_model_path`` does.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from poly.cli.gen_script.script_source import Code, ScriptSource, call, literal

if TYPE_CHECKING:
    from poly.cli.args.onnx_load import OnnxLoadArgs
    from poly.cli.args.onnx_save import OnnxSaveArgs


def outputs_argument(src: ScriptSource, outputs):
    """--onnx-outputs / --trt-outputs as an argument: a list of names, or MARK_ALL."""
    from poly.core import MARK_ALL

    if outputs is None:
        return None
    if outputs == MARK_ALL:
        src.use("poly.core", "MARK_ALL")
        return Code("MARK_ALL")
    return list(outputs)


def onnx_model_lines(src: ScriptSource, path: str, onnx: OnnxLoadArgs, onnx_save: OnnxSaveArgs | None) -> list:
    """Lines that set ``onnx_model``: the path itself when nothing changes the model, else the
    loaders the command chains; with --save-onnx, the model loaded once and saved."""
    changed = (onnx.outputs is not None or onnx.exclude_outputs is not None or onnx.shape_inference
               or onnx.external_data_dir is not None or onnx.ignore_external_data or onnx.fp_to_fp16)
    if not changed:
        expr = literal(path)
    else:
        src.use("poly.onnx", "OnnxFromPath")
        expr = call("OnnxFromPath", literal(path), external_data_dir=onnx.external_data_dir,
                    ignore_external_data=onnx.ignore_external_data or None)
        if onnx.shape_inference:
            src.use("poly.onnx", "InferShapes")
            expr = call("InferShapes", expr, allow_onnxruntime=onnx.allow_onnxruntime_shape_inference)
        if onnx.outputs is not None or onnx.exclude_outputs is not None:
            src.use("poly.onnx", "ModifyOutputs")
            expr = call("ModifyOutputs", expr, outputs=outputs_argument(src, onnx.outputs),
                        exclude_outputs=list(onnx.exclude_outputs) if onnx.exclude_outputs is not None else None)
        if onnx.fp_to_fp16:
            src.use("poly.onnx", "ConvertToFp16")
            expr = f"ConvertToFp16({expr})"
    lines = [f"onnx_model = {expr}"]
    if onnx_save is not None and onnx_save.path is not None:
        src.use("poly.onnx", "OnnxFromPath", "SaveOnnx")
        loader = f"OnnxFromPath({literal(path)})" if not changed else "onnx_model"
        lines.append("onnx_model = " + call(
            "SaveOnnx", loader, literal(onnx_save.path), external_data_path=onnx_save.external_data_path,
            size_threshold=onnx_save.size_threshold, all_tensors_to_one_file=onnx_save.all_tensors_to_one_file) + "()")
    return lines


def parser_model_lines(src: ScriptSource, path: str, onnx: OnnxLoadArgs) -> tuple[list, str]:
    """(lines, source of the path TensorRT's parser reads): MODEL itself, or, with
    --external-data-dir or --fp-to-fp16, the converted model written to a temporary directory
    removed when the script exits."""
    if onnx.external_data_dir is None and not onnx.fp_to_fp16:
        return [], literal(path)
    for module in ("atexit", "os", "shutil", "tempfile"):
        src.use(module)
    src.use("poly.onnx", "OnnxFromPath", "SaveOnnx")
    expr = call("OnnxFromPath", literal(path), external_data_dir=onnx.external_data_dir)
    if onnx.fp_to_fp16:
        src.use("poly.onnx", "ConvertToFp16")
        expr = f"ConvertToFp16({expr})"
    return [
        "# TensorRT's parser reads the model as loaded and converted, from a temporary directory",
        "trt_onnx_dir = tempfile.mkdtemp(prefix='poly-trt-onnx-')",
        "atexit.register(shutil.rmtree, trt_onnx_dir, ignore_errors=True)",
        f"trt_onnx_path = os.path.join(trt_onnx_dir, {literal(os.path.basename(path))})",
        f"SaveOnnx({expr}, trt_onnx_path, external_data_path='')()",
    ], "trt_onnx_path"
