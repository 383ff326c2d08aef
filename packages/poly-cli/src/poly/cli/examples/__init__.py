"""Data files bundled with poly-cli: example_cnn.onnx, the model of `poly run --example` (built by
tools/make_example_model.py; ``poly.cli.args.model.example_model_path`` finds it)."""
