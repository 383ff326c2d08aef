"""`poly template`: the group and its subcommands (trt-network, trt-config, onnx-gs, shard-hints)."""
