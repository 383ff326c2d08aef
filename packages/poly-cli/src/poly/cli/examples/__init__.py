"""The bundled example model (`poly run --example`), built by tools/make_example_model.py."""

from __future__ import annotations

from pathlib import Path

EXAMPLE_MODEL = "example_cnn.onnx"


def example_model_path() -> str:
    """Path of the bundled example CNN (input `input` [1,3,8,8] float32, output `probs` [1,4])."""
    return str(Path(__file__).with_name(EXAMPLE_MODEL))
