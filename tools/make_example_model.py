"""Builds the bundled example model of `poly run --example`: a small seeded CNN
(Conv-BatchNormalization-Relu-MaxPool-Flatten-Gemm-Softmax), input `input` [1,3,8,8] float32,
output `probs` [1,4], IR 10 / opset 17 (readable by the installed ONNX-Runtime)."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

DEST = Path(__file__).resolve().parents[1] / "packages/poly-cli/src/poly/cli/examples/example_cnn.onnx"


def build() -> onnx.ModelProto:
    rng = np.random.default_rng(0)

    def init(name, array):
        return numpy_helper.from_array(np.asarray(array, dtype=np.float32), name)

    inits = [
        init("conv_w", rng.normal(0, 0.3, (8, 3, 3, 3))),
        init("conv_b", rng.normal(0, 0.1, (8,))),
        init("bn_scale", rng.uniform(0.5, 1.5, (8,))),
        init("bn_bias", rng.normal(0, 0.1, (8,))),
        init("bn_mean", rng.normal(0, 0.1, (8,))),
        init("bn_var", rng.uniform(0.5, 1.5, (8,))),
        init("fc_w", rng.normal(0, 0.2, (4, 8 * 4 * 4))),
        init("fc_b", rng.normal(0, 0.1, (4,))),
    ]
    nodes = [
        helper.make_node("Conv", ["input", "conv_w", "conv_b"], ["conv"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["conv", "bn_scale", "bn_bias", "bn_mean", "bn_var"], ["bn"],
                         name="bn"),
        helper.make_node("Relu", ["bn"], ["relu"], name="relu"),
        helper.make_node("MaxPool", ["relu"], ["pool"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["pool"], ["flat"], name="flatten", axis=1),
        helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["logits"], name="fc", transB=1),
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=1),
    ]
    graph = helper.make_graph(
        nodes, "example_cnn",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [1, 4])],
        initializer=inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="poly-example")
    model.ir_version = 10
    onnx.checker.check_model(model)
    return model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dest", nargs="?", type=Path, default=DEST,
                        help=f"where to write the model (default: {DEST.relative_to(DEST.parents[6])})")
    dest = parser.parse_args().dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(build(), str(dest))
    print(dest)


if __name__ == "__main__":
    main()
