"""The map between engine layers and ONNX nodes (poly.trt.map_layers_to_nodes), on layer
information as TensorRT's engine inspector writes it and on the TensorRT double.

ENGINE_JSON is what ``IEngineInspector.get_engine_information(LayerInformationFormat.JSON)``
returns at ``ProfilingVerbosity.DETAILED`` (TensorRT 10: "Layers" records with "Name",
"LayerType", "Inputs" / "Outputs" as per-tensor records, the parameters, the tactic and
"Metadata" with ``[ONNX Layer: <node>]`` joined by the unit separator for fused layers; then
"Bindings") for an engine built from ``_model()``: a reformatting copy inserted before the stem,
a convolution fused with its ReLU, a pointwise fusion of an unnamed Sigmoid (its layers are
named ``node_of_<output>``), a Mul and an Add, a Reshape whose shape computation was folded into
constants, a Gemm split by the parser into a matrix multiply and a bias addition (the second
layer suffixed ``_4``), and a layer normalization compiled into one Myelin region
(``{ForeignNode[first...last]}``). The model also has a dead node, which TensorRT drops.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from poly.core import PolyException

onnx = pytest.importorskip("onnx")

ENGINE_JSON = r"""{"Layers": [{
  "Name" : "Reformatting CopyNode for Input Tensor 0 to /stem/conv/Conv + /stem/act/Relu",
  "LayerType" : "Reformat",
  "Inputs": [
  {
    "Name" : "input",
    "Location" : "Device",
    "Dimensions" : [1,3,8,8],
    "Format/Datatype" : "Row major linear FP32"
  }],
  "Outputs": [
  {
    "Name" : "Reformatted Input Tensor 0 to /stem/conv/Conv + /stem/act/Relu",
    "Location" : "Device",
    "Dimensions" : [1,3,8,8],
    "Format/Datatype" : "Channel major FP32 format where channel % 4 == 0"
  }],
  "ParameterType" : "Reformat",
  "Origin" : "REFORMAT",
  "TacticValue" : "0x00000000000003e8",
  "StreamId" : 0,
  "Metadata" : ""
},{
  "Name" : "/stem/conv/Conv + /stem/act/Relu",
  "LayerType" : "CaskConvolution",
  "Inputs": [
  {
    "Name" : "Reformatted Input Tensor 0 to /stem/conv/Conv + /stem/act/Relu",
    "Location" : "Device",
    "Dimensions" : [1,3,8,8],
    "Format/Datatype" : "Channel major FP32 format where channel % 4 == 0"
  }],
  "Outputs": [
  {
    "Name" : "/stem/act/Relu_output_0",
    "Location" : "Device",
    "Dimensions" : [1,4,8,8],
    "Format/Datatype" : "Row major linear FP32"
  }],
  "ParameterType" : "Convolution",
  "Kernel" : [3,3],
  "PaddingMode" : "kEXPLICIT_ROUND_DOWN",
  "PrePadding" : [1,1],
  "PostPadding" : [1,1],
  "Stride" : [1,1],
  "Dilation" : [1,1],
  "OutMaps" : 4,
  "Groups" : 1,
  "Weights" : {"Type": "Float", "Count": 108},
  "Bias" : {"Type": "Float", "Count": 4},
  "HasBias" : 1,
  "HasReLU" : 1,
  "Activation" : "RELU",
  "TacticName" : "sm80_xmma_fprop_implicit_gemm_f32f32_f32f32_f32_nchwkcrs_nchw_tilesize32x32x8_stage3_warpsize1x2x1_g1_ffma_aligna4_alignc4",
  "TacticValue" : "0x0f2b4c5a9d7e1f36",
  "StreamId" : 0,
  "Metadata" : "[ONNX Layer: /stem/conv/Conv]\u001f[ONNX Layer: /stem/act/Relu]"
},{
  "Name" : "/block/conv/Conv",
  "LayerType" : "CaskConvolution",
  "Inputs": [
  {
    "Name" : "/stem/act/Relu_output_0",
    "Location" : "Device",
    "Dimensions" : [1,4,8,8],
    "Format/Datatype" : "Row major linear FP32"
  }],
  "Outputs": [
  {
    "Name" : "/block/conv/Conv_output_0",
    "Location" : "Device",
    "Dimensions" : [1,4,8,8],
    "Format/Datatype" : "Row major linear FP32"
  }],
  "ParameterType" : "Convolution",
  "Kernel" : [3,3],
  "OutMaps" : 4,
  "Groups" : 1,
  "HasBias" : 1,
  "HasReLU" : 0,
  "Activation" : "NONE",
  "TacticValue" : "0x6b2e0f5c3a1d9e47",
  "StreamId" : 0,
  "Metadata" : "[ONNX Layer: /block/conv/Conv]"
},{
  "Name" : "PWN(PWN(node_of_gate, /block/mul/Mul), /block/add/Add)",
  "LayerType" : "PointWiseV2",
  "Inputs": [
  {
    "Name" : "/block/conv/Conv_output_0",
    "Location" : "Device",
    "Dimensions" : [1,4,8,8],
    "Format/Datatype" : "Row major linear FP32"
  },
  {
    "Name" : "/stem/act/Relu_output_0",
    "Location" : "Device",
    "Dimensions" : [1,4,8,8],
    "Format/Datatype" : "Row major linear FP32"
  }],
  "Outputs": [
  {
    "Name" : "/block/add/Add_output_0",
    "Location" : "Device",
    "Dimensions" : [1,4,8,8],
    "Format/Datatype" : "Row major linear FP32"
  }],
  "ParameterType" : "PointWise",
  "ParameterSubType" : "PointWiseExpression",
  "NbInputArgs" : 2,
  "InputArgs" : ["arg0", "arg1"],
  "NbOutputVars" : 1,
  "OutputVars" : ["var3"],
  "NbParams" : 0,
  "Params" : [],
  "NbLiterals" : 2,
  "Literals" : ["0.000000e+00f", "1.000000e+00f"],
  "NbOperations" : 4,
  "Operations" : ["auto const var0 = pwgen::iExp(pwgen::iNeg(arg0));", "auto const var1 = pwgen::iRcp(pwgen::iPlus(literal1, var0));", "auto const var2 = pwgen::iMul(arg0, var1);", "auto const var3 = pwgen::iPlus(var2, arg1);"],
  "TacticValue" : "0x0000000000000009",
  "StreamId" : 0,
  "Metadata" : "[ONNX Layer: node_of_gate]\u001f[ONNX Layer: /block/mul/Mul]\u001f[ONNX Layer: /block/add/Add]"
},{
  "Name" : "/head/Reshape",
  "LayerType" : "NoOp",
  "Inputs": [
  {
    "Name" : "/block/add/Add_output_0",
    "Location" : "Device",
    "Dimensions" : [1,4,8,8],
    "Format/Datatype" : "Row major linear FP32"
  }],
  "Outputs": [
  {
    "Name" : "flat",
    "Location" : "Device",
    "Dimensions" : [1,256],
    "Format/Datatype" : "Row major linear FP32"
  }],
  "ParameterType" : "NoOp",
  "TacticValue" : "0x0000000000000000",
  "StreamId" : 0,
  "Metadata" : "[ONNX Layer: /head/Reshape]"
},{
  "Name" : "/head/fc/Gemm",
  "LayerType" : "CaskGemmMatrixMultiply",
  "Inputs": [
  {
    "Name" : "flat",
    "Location" : "Device",
    "Dimensions" : [1,256],
    "Format/Datatype" : "Row major linear FP32"
  }],
  "Outputs": [
  {
    "Name" : "(Unnamed Layer* 12) [Matrix Multiply]_output",
    "Location" : "Device",
    "Dimensions" : [1,10],
    "Format/Datatype" : "Row major linear FP32"
  }],
  "ParameterType" : "MatrixMultiply",
  "MatrixOpA" : "kNONE",
  "MatrixOpB" : "kNONE",
  "TacticValue" : "0x3c1b5e2a7f0d9846",
  "StreamId" : 0,
  "Metadata" : "[ONNX Layer: /head/fc/Gemm]"
},{
  "Name" : "/head/fc/Gemm_4",
  "LayerType" : "PointWiseV2",
  "Inputs": [
  {
    "Name" : "(Unnamed Layer* 12) [Matrix Multiply]_output",
    "Location" : "Device",
    "Dimensions" : [1,10],
    "Format/Datatype" : "Row major linear FP32"
  }],
  "Outputs": [
  {
    "Name" : "logits",
    "Location" : "Device",
    "Dimensions" : [1,10],
    "Format/Datatype" : "Row major linear FP32"
  }],
  "ParameterType" : "PointWise",
  "TacticValue" : "0x0000000000000001",
  "StreamId" : 0,
  "Metadata" : "[ONNX Layer: /head/fc/Gemm]"
},{
  "Name" : "{ForeignNode[/head/ln/ReduceMean.../head/ln/Div]}",
  "LayerType" : "Myelin",
  "Inputs": [
  {
    "Name" : "logits",
    "Location" : "Device",
    "Dimensions" : [1,10],
    "Format/Datatype" : "Row major linear FP32"
  }],
  "Outputs": [
  {
    "Name" : "output",
    "Location" : "Device",
    "Dimensions" : [1,10],
    "Format/Datatype" : "Row major linear FP32"
  }],
  "TacticName" : "__myl_MeanSubMulMeanAddSqrtDiv_0x5f1e9c2b",
  "TacticValue" : "0x0000000000000000",
  "StreamId" : 0,
  "Metadata" : "[ONNX Layer: /head/ln/ReduceMean]\u001f[ONNX Layer: /head/ln/Sub]\u001f[ONNX Layer: /head/ln/Mul]\u001f[ONNX Layer: /head/ln/ReduceMean_1]\u001f[ONNX Layer: /head/ln/Add]\u001f[ONNX Layer: /head/ln/Sqrt]\u001f[ONNX Layer: /head/ln/Div]"
}],
"Bindings": ["input"
,"output"
]}
"""

REFORMAT = "Reformatting CopyNode for Input Tensor 0 to /stem/conv/Conv + /stem/act/Relu"
STEM = "/stem/conv/Conv + /stem/act/Relu"
GATE = "PWN(PWN(node_of_gate, /block/mul/Mul), /block/add/Add)"
MYELIN = "{ForeignNode[/head/ln/ReduceMean.../head/ln/Div]}"
LN = ["/head/ln/ReduceMean", "/head/ln/Sub", "/head/ln/Mul", "/head/ln/ReduceMean_1", "/head/ln/Add",
      "/head/ln/Sqrt", "/head/ln/Div"]
SHAPE_NODES = ["/head/Shape", "/head/Gather", "/head/Unsqueeze", "/head/Concat"]

EXPECTED_LAYERS = {  # every layer -> its nodes, in model order
    REFORMAT: [],
    STEM: ["/stem/conv/Conv", "/stem/act/Relu"],
    "/block/conv/Conv": ["/block/conv/Conv"],
    GATE: ["node_of_gate", "/block/mul/Mul", "/block/add/Add"],
    "/head/Reshape": [*SHAPE_NODES, "/head/Reshape"],  # the shape computation was folded into it
    "/head/fc/Gemm": ["/head/fc/Gemm"],
    "/head/fc/Gemm_4": ["/head/fc/Gemm"],
    MYELIN: LN,
}


def _init(name, values):
    from onnx import numpy_helper

    return numpy_helper.from_array(np.asarray(values), name)


def _model():
    from onnx import TensorProto, helper

    rng = np.random.default_rng(0)
    n = helper.make_node
    nodes = [
        n("Identity", ["input"], ["unused"], name="/dead/Identity"),
        n("Conv", ["input", "w0", "b0"], ["/stem/conv/Conv_output_0"], name="/stem/conv/Conv", pads=[1, 1, 1, 1]),
        n("Relu", ["/stem/conv/Conv_output_0"], ["/stem/act/Relu_output_0"], name="/stem/act/Relu"),
        n("Conv", ["/stem/act/Relu_output_0", "w1", "b1"], ["/block/conv/Conv_output_0"], name="/block/conv/Conv",
          pads=[1, 1, 1, 1]),
        n("Sigmoid", ["/block/conv/Conv_output_0"], ["gate"]),  # unnamed
        n("Mul", ["/block/conv/Conv_output_0", "gate"], ["/block/mul/Mul_output_0"], name="/block/mul/Mul"),
        n("Add", ["/block/mul/Mul_output_0", "/stem/act/Relu_output_0"], ["/block/add/Add_output_0"],
          name="/block/add/Add"),
        n("Shape", ["/block/add/Add_output_0"], ["shape"], name="/head/Shape"),
        n("Gather", ["shape", "zero"], ["batch"], name="/head/Gather"),
        n("Unsqueeze", ["batch", "axes0"], ["batch1"], name="/head/Unsqueeze"),
        n("Concat", ["batch1", "minus_one"], ["new_shape"], name="/head/Concat", axis=0),
        n("Reshape", ["/block/add/Add_output_0", "new_shape"], ["flat"], name="/head/Reshape"),
        n("Gemm", ["flat", "wfc", "bfc"], ["logits"], name="/head/fc/Gemm"),
        n("ReduceMean", ["logits"], ["mean"], name="/head/ln/ReduceMean", axes=[-1]),
        n("Sub", ["logits", "mean"], ["centered"], name="/head/ln/Sub"),
        n("Mul", ["centered", "centered"], ["squared"], name="/head/ln/Mul"),
        n("ReduceMean", ["squared"], ["var"], name="/head/ln/ReduceMean_1", axes=[-1]),
        n("Add", ["var", "eps"], ["var_eps"], name="/head/ln/Add"),
        n("Sqrt", ["var_eps"], ["std"], name="/head/ln/Sqrt"),
        n("Div", ["centered", "std"], ["output"], name="/head/ln/Div"),
    ]
    initializers = [
        _init("w0", rng.standard_normal((4, 3, 3, 3)).astype(np.float32)), _init("b0", np.zeros(4, np.float32)),
        _init("w1", rng.standard_normal((4, 4, 3, 3)).astype(np.float32)), _init("b1", np.zeros(4, np.float32)),
        _init("zero", np.array(0, np.int64)), _init("axes0", np.array([0], np.int64)),
        _init("minus_one", np.array([-1], np.int64)),
        _init("wfc", rng.standard_normal((256, 10)).astype(np.float32)), _init("bfc", np.zeros(10, np.float32)),
        _init("eps", np.array([1e-5], np.float32)),
    ]
    graph = helper.make_graph(
        nodes, "block", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 10])], initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 10
    onnx.checker.check_model(model)
    return model


def _node_layers(layer_nodes, model):
    from poly.trt.inspection.layer_map import parser_node_name

    expected = {parser_node_name(node): [] for node in model.graph.node}
    for layer, nodes in layer_nodes.items():
        for node in nodes:
            expected[node].append(layer)
    return expected


def test_the_inspector_json_maps_both_ways():
    from poly.trt import LayerMap, map_layers_to_nodes

    model = _model()
    result = map_layers_to_nodes(model, ENGINE_JSON)
    assert isinstance(result, LayerMap)
    assert result.layer_nodes == EXPECTED_LAYERS
    assert list(result.layer_nodes) == list(EXPECTED_LAYERS)  # engine order
    assert result.node_layers == _node_layers(EXPECTED_LAYERS, model)
    assert list(result.node_layers)[:3] == ["/dead/Identity", "/stem/conv/Conv", "/stem/act/Relu"]  # model order
    assert result.layers_of("/head/fc/Gemm") == ["/head/fc/Gemm", "/head/fc/Gemm_4"]  # one node, two layers
    assert result.layers_of("node_of_gate") == [GATE]  # the unnamed Sigmoid
    assert result.nodes_of(MYELIN) == LN
    assert result.unmapped_nodes == ["/dead/Identity"]
    assert result.unmapped_layers == [REFORMAT]
    # the same from the loaded JSON or its "Layers" list (what engine_layers returns)
    assert map_layers_to_nodes(model, json.loads(ENGINE_JSON)).layer_nodes == EXPECTED_LAYERS
    assert map_layers_to_nodes(model, json.loads(ENGINE_JSON)["Layers"]).layer_nodes == EXPECTED_LAYERS


def test_names_and_tensors_suffice_without_metadata():
    """Before TensorRT 10 the inspector wrote no ONNX metadata: the names and tensors give the same map."""
    from poly.trt import map_layers_to_nodes

    layers = json.loads(ENGINE_JSON)["Layers"]
    for layer in layers:
        layer.pop("Metadata")
    assert map_layers_to_nodes(_model(), layers).layer_nodes == EXPECTED_LAYERS


def test_tensor_names_alone_find_fused_nodes():
    """Layers named by the builder alone (``__myl_...``), without metadata: the tensors the layers
    read and write still place every node whose outputs the engine does not hold."""
    from poly.trt import map_layers_to_nodes

    layers = json.loads(ENGINE_JSON)["Layers"]
    for index, layer in enumerate(layers):
        layer.pop("Metadata")
        if layer["LayerType"] != "Reformat":
            layer["Name"] = f"__myl_layer_{index}"
    result = map_layers_to_nodes(_model(), layers)
    assert result.nodes_of("__myl_layer_1") == ["/stem/conv/Conv", "/stem/act/Relu"]
    assert result.nodes_of("__myl_layer_3") == ["node_of_gate", "/block/mul/Mul", "/block/add/Add"]
    assert result.nodes_of("__myl_layer_4") == [*SHAPE_NODES, "/head/Reshape"]
    assert result.nodes_of("__myl_layer_5") == []  # writes a tensor the parser made up
    assert result.nodes_of("__myl_layer_6") == ["/head/fc/Gemm"]
    assert result.nodes_of("__myl_layer_7") == LN


def test_metadata_alone_places_the_nodes_of_myelin_kernels():
    """TensorRT 10's Myelin kernels have made-up names and tensors; their metadata names the nodes."""
    from poly.trt import map_layers_to_nodes

    kernel = {
        "Name": "__myl_SubMul_myl0_3", "LayerType": "kgen",
        "Inputs": [{"Name": "__myln_k_arg__bb1_2", "Location": "Device", "Dimensions": [1, 10]}],
        "Outputs": [{"Name": "__myln_k_arg__bb1_3", "Location": "Device", "Dimensions": [1, 10]}],
        "Metadata": "[ONNX Layer: /head/ln/Sub]\x1f[ONNX Layer: /head/ln/Mul]\x1f[ONNX Layer: not/in/the/model]",
    }
    joined = dict(kernel, Name="__myl_Sqrt_myl0_4", Metadata="[ONNX Layer: /head/ln/Sqrt][ONNX Layer: /head/ln/Div]")
    result = map_layers_to_nodes(_model(), [kernel, joined])
    assert result.nodes_of("__myl_SubMul_myl0_3") == ["/head/ln/Sub", "/head/ln/Mul"]
    assert result.nodes_of("__myl_Sqrt_myl0_4") == ["/head/ln/Sqrt", "/head/ln/Div"]  # entries not separated


def test_layer_names_only():
    """At ProfilingVerbosity.LAYER_NAMES_ONLY the inspector lists names: fused names, suffixes and
    the Myelin region's first and last nodes (with the nodes between them) are the evidence."""
    from poly.trt import map_layers_to_nodes

    names = [layer["Name"] for layer in json.loads(ENGINE_JSON)["Layers"]]
    result = map_layers_to_nodes(_model(), {"Layers": names})
    expected = dict(EXPECTED_LAYERS, **{"/head/Reshape": ["/head/Reshape"]})  # the folded nodes: no name, no tensor
    assert result.layer_nodes == expected
    assert result.unmapped_nodes == ["/dead/Identity", *SHAPE_NODES]


def test_a_real_node_name_ending_in_a_number_is_not_a_suffix():
    from poly.trt import map_layers_to_nodes

    result = map_layers_to_nodes(_model(), ["/head/ln/ReduceMean_1", "/head/ln/ReduceMean_7"])
    assert result.nodes_of("/head/ln/ReduceMean_1") == ["/head/ln/ReduceMean_1"]
    assert result.nodes_of("/head/ln/ReduceMean_7") == ["/head/ln/ReduceMean"]


def test_bad_input_fails_in_one_line_naming_it():
    from poly.trt import map_layers_to_nodes

    model = _model()
    with pytest.raises(PolyException, match=r"TensorRT layer 1 \| has no 'Name'"):
        map_layers_to_nodes(model, [{"Name": "a"}, {"LayerType": "Reformat"}])
    with pytest.raises(PolyException, match=r"TensorRT layer: b \| a tensor in 'Outputs' has no name"):
        map_layers_to_nodes(model, [{"Name": "b", "Outputs": [{"Location": "Device"}]}])
    with pytest.raises(PolyException, match=r"TensorRT layer\(s\): \['c'\] \| named twice"):
        map_layers_to_nodes(model, ["c", "c"])
    with pytest.raises(PolyException, match="not the inspector's JSON"):
        map_layers_to_nodes(model, "Layer(CaskConvolution): conv, Tactic: 0x1")  # the ONELINE format
    with pytest.raises(PolyException, match="has no 'Layers' list"):
        map_layers_to_nodes(model, {"Bindings": []})
    with pytest.raises(PolyException, match="needs an onnx.ModelProto, got dict"):
        map_layers_to_nodes({}, ENGINE_JSON)
    result = map_layers_to_nodes(model, ENGINE_JSON)
    with pytest.raises(PolyException, match=r"ONNX node: /nope/Conv \| not in the model"):
        result.layers_of("/nope/Conv")
    with pytest.raises(PolyException, match=r"TensorRT layer: nope \| not in the engine"):
        result.nodes_of("nope")


def test_parser_node_names():
    from onnx import helper

    from poly.trt.inspection.layer_map import parser_node_name

    assert parser_node_name(helper.make_node("Relu", ["a"], ["b"], name="/act/Relu")) == "/act/Relu"
    assert parser_node_name(helper.make_node("Relu", ["a"], ["b"])) == "node_of_b"


def test_nodes_in_subgraphs_are_mapped():
    from onnx import TensorProto, helper

    from poly.trt import map_layers_to_nodes

    branch = lambda name, op: helper.make_graph(  # noqa: E731
        [helper.make_node(op, ["x"], [f"{name}_out"], name=f"/{name}/{op}")], name, [],
        [helper.make_tensor_value_info(f"{name}_out", TensorProto.FLOAT, [2])],
    )
    cond = helper.make_node("If", ["c"], ["y"], name="/if/If", then_branch=branch("then", "Relu"),
                            else_branch=branch("else", "Neg"))
    graph = helper.make_graph(
        [cond], "g", [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
                      helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    result = map_layers_to_nodes(helper.make_model(graph), ["/if/If", "/then/Relu", "/else/Neg_2"])
    assert result.layer_nodes == {"/if/If": ["/if/If"], "/then/Relu": ["/then/Relu"], "/else/Neg_2": ["/else/Neg"]}


# -- on the TensorRT double ---------------------------------------------------------------------


def _debug_model():
    """The ONNX model of the double's DebugNetwork: x -> /scale/MatMul -> t -> /shift/Add -> u ->
    /act/Relu -> y, and /shape/Shape: x -> x_shape."""
    from fixtures.trt_double import DEBUG_B, DEBUG_W
    from onnx import TensorProto, helper

    n = helper.make_node
    graph = helper.make_graph(
        [n("MatMul", ["x", "W"], ["t"], name="/scale/MatMul"), n("Add", ["t", "B"], ["u"], name="/shift/Add"),
         n("Relu", ["u"], ["y"], name="/act/Relu"), n("Shape", ["x"], ["x_shape"], name="/shape/Shape")],
        "debug", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4])], [_init("W", DEBUG_W), _init("B", DEBUG_B)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_the_double_engines_layers_map_to_the_model(tensorrt_double):
    from fixtures.trt_double import DebugEngine

    from poly.trt import map_engine_layers

    fused = map_engine_layers(_debug_model(), DebugEngine())
    assert fused.layer_nodes == {"/scale/MatMul": ["/scale/MatMul"], "PWN(/shift/Add, /act/Relu)": ["/shift/Add", "/act/Relu"]}
    assert fused.node_layers["/act/Relu"] == ["PWN(/shift/Add, /act/Relu)"]
    assert fused.unmapped_nodes == ["/shape/Shape"]  # dead code unless x_shape is a debug tensor

    marked = map_engine_layers(_debug_model(), DebugEngine(debug=["u", "x_shape"]))  # marking u splits the fusion
    assert marked.node_layers == {"/scale/MatMul": ["/scale/MatMul"], "/shift/Add": ["/shift/Add"],
                                  "/act/Relu": ["/act/Relu"], "/shape/Shape": ["/shape/Shape"]}

    names_only = DebugEngine()
    names_only.profiling_verbosity = "LAYER_NAMES_ONLY"
    assert map_engine_layers(_debug_model(), names_only).layer_nodes == fused.layer_nodes
