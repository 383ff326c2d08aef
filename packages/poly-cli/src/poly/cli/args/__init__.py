"""The option groups of the `poly` commands, by concept (``onnx``, ``trt``, ``data``, ``output``,
``debug``; the model, runner, comparison, logging and Ray groups at the top): each with its click
options, its parsed value (a frozen dataclass) and the call trees of the poly loaders it builds."""
