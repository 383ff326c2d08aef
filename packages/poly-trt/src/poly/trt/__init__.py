"""
poly.trt: TensorRT loaders (ONNX parsing, output marking, builder configs, engine building,
loading and saving), optimization profiles, INT8 calibrators and ``TrtRunner``. Works with
full TensorRT (``tensorrt``) or TensorRT-RTX (``tensorrt_rtx`` / ``tensorrt_rtx_bindings``),
imported at first use (see ``poly.trt.tensorrt_module``).
"""

from poly.trt.builder.calibrator import CALIBRATION_ALGORITHMS, Calibrator, CalibratorCore
from poly.trt.builder.config import CreateConfig, create_config
from poly.trt.builder.config_postprocess import PostprocessConfig, postprocess_config
from poly.trt.builder.config_rtx import CreateConfigRTX, create_config_rtx
from poly.trt.builder.profile import Profile, ShapeTuple
from poly.trt.builder.tactic_selectors import TacticRecorder, TacticReplayer
from poly.trt.builder.tactics import Algorithm, TacticReplayData, TensorInfo
from poly.trt.engines.file_reader import FileReader
from poly.trt.engines.loaders import (
    BufferFromEngine,
    BytesFromEngine,
    BytesFromPath,
    EngineBuildError,
    EngineBytesFromNetwork,
    EngineFromBytes,
    EngineFromNetwork,
    EngineFromPath,
    EngineLoadError,
    LoadRuntime,
    NoCudaDeviceError,
    SaveEngine,
    buffer_from_engine,
    bytes_from_engine,
    bytes_from_path,
    engine_bytes_from_network,
    engine_from_bytes,
    engine_from_network,
    engine_from_path,
    load_runtime,
    save_engine,
)
from poly.trt.execution.context_memory import ALLOCATION_STRATEGIES
from poly.trt.execution.runner import TrtRunner
from poly.trt.inspection.layer_map import LayerMap, map_engine_layers, map_layers_to_nodes
from poly.trt.networks.creation import (
    CreateNetwork,
    NetworkFromOnnxBytes,
    NetworkFromOnnxPath,
    OnnxParseError,
    create_network,
    network_from_onnx_bytes,
    network_from_onnx_path,
)
from poly.trt.networks.layer_precisions import (
    SetLayerPrecisions,
    layer_precisions_args,
    layer_precisions_script,
    set_layer_precisions,
)
from poly.trt.networks.modify_network import ModifyNetworkOutputs, modify_network_outputs
from poly.trt.networks.network_postprocess import (
    MarkDebug,
    PostprocessNetwork,
    SetTensorDatatypes,
    SetTensorFormats,
    mark_debug,
    postprocess_network,
    set_tensor_datatypes,
    set_tensor_formats,
)
from poly.trt.networks.onnx_like import OnnxLikeFromNetwork, onnx_like_from_network
from poly.trt.networks.plugins import LoadPlugins, load_plugins
from poly.trt.tensorrt_module import TensorRTMissingError, flavour, is_rtx, trt
from poly.trt.trt_logger import get_trt_logger

__all__ = [
    "PostprocessConfig",
    "postprocess_config",
    "CreateConfigRTX",
    "create_config_rtx",
    "ALLOCATION_STRATEGIES",
    "FileReader",
    "PostprocessNetwork",
    "postprocess_network",
    "SetTensorDatatypes",
    "set_tensor_datatypes",
    "SetTensorFormats",
    "set_tensor_formats",
    "MarkDebug",
    "mark_debug",
    "OnnxLikeFromNetwork",
    "onnx_like_from_network",
    "LoadPlugins",
    "load_plugins",
    "BufferFromEngine",
    "buffer_from_engine",
    "LoadRuntime",
    "load_runtime",
    "TensorRTMissingError",
    "flavour",
    "is_rtx",
    "trt",
    "Calibrator",
    "CalibratorCore",
    "CALIBRATION_ALGORITHMS",
    "CreateConfig",
    "create_config",
    "BytesFromEngine",
    "bytes_from_engine",
    "BytesFromPath",
    "bytes_from_path",
    "EngineBuildError",
    "EngineLoadError",
    "NoCudaDeviceError",
    "EngineBytesFromNetwork",
    "engine_bytes_from_network",
    "EngineFromBytes",
    "engine_from_bytes",
    "EngineFromNetwork",
    "engine_from_network",
    "EngineFromPath",
    "engine_from_path",
    "SaveEngine",
    "save_engine",
    "ModifyNetworkOutputs",
    "modify_network_outputs",
    "CreateNetwork",
    "create_network",
    "NetworkFromOnnxBytes",
    "network_from_onnx_bytes",
    "NetworkFromOnnxPath",
    "network_from_onnx_path",
    "OnnxParseError",
    "Profile",
    "ShapeTuple",
    "TrtRunner",
    "LayerMap",
    "map_layers_to_nodes",
    "map_engine_layers",
    "SetLayerPrecisions",
    "set_layer_precisions",
    "layer_precisions_args",
    "layer_precisions_script",
    "TacticRecorder",
    "TacticReplayer",
    "Algorithm",
    "TensorInfo",
    "TacticReplayData",
    "get_trt_logger",
]
