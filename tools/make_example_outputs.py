#!/usr/bin/env python3
"""Writes examples/outputs_fp32.npz and examples/outputs_fp16.npz: the outputs of a small
two-layer perceptron with softmax, run once in float32 and once in float16, on the same
seeded inputs. They are the saved results README's first command compares."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def mlp(x: np.ndarray, w1: np.ndarray, w2: np.ndarray, dtype) -> dict[str, np.ndarray]:
    x, w1, w2 = x.astype(dtype), w1.astype(dtype), w2.astype(dtype)
    hidden = np.maximum(x @ w1, 0)
    logits = hidden @ w2
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return {"hidden": hidden, "logits": logits, "probs": e / e.sum(axis=-1, keepdims=True)}


def main() -> None:
    rng = np.random.default_rng(2026)
    x = rng.standard_normal((16, 64)).astype(np.float32)
    w1 = (rng.standard_normal((64, 128)) / 8).astype(np.float32)
    w2 = (rng.standard_normal((128, 10)) / 11).astype(np.float32)
    out = Path(__file__).resolve().parent.parent / "examples"
    out.mkdir(exist_ok=True)
    np.savez(out / "outputs_fp32.npz", **mlp(x, w1, w2, np.float32))
    np.savez(out / "outputs_fp16.npz", **mlp(x, w1, w2, np.float16))
    print(f"wrote {out / 'outputs_fp32.npz'} and {out / 'outputs_fp16.npz'}")


if __name__ == "__main__":
    main()
