"""`poly plugin list|match|replace` driven as a user would: a model with one subgraph a plugin
can replace (and one its pattern's check rejects), plugin directories the test writes, the
YAML config `match` writes and `replace` reads, and the replaced model's plugin node."""

from __future__ import annotations

import onnx
import pytest
from fixtures.cli_helpers import POLY, POLYGRAPHY, run_cli
from fixtures.plugin_dirs import plugin_model, write_plugin_dir

yaml = pytest.importorskip("yaml")

EXPECTED_CONFIG = [{
    "name": "concatPlugin",
    "op": "CustomConcatPlugin",
    "instances": [{"inputs": ["x", "y"], "outputs": ["d", "e"], "attributes": {"axis2": 2, "mode": "fast"}}],
}]


@pytest.fixture
def setup(tmp_path):
    model = tmp_path / "model.onnx"
    onnx.save(plugin_model(), str(model))
    return model, write_plugin_dir(tmp_path)


def _load_config(path):
    with open(path) as stream:
        return list(yaml.safe_load_all(stream))


def test_match_writes_the_config_of_the_matches(poly, setup, tmp_path):
    model, plugins = setup
    result = poly("plugin", "match", model, "--plugin-dir", plugins, "-o", tmp_path / "c.yaml")
    assert result.exit_code == 0, result.output
    assert _load_config(tmp_path / "c.yaml") == EXPECTED_CONFIG
    # every plugin of the directory is checked; the one whose pattern matches nothing counts 0
    assert "{'concatPlugin': 1, 'convPlugin': 0}" in result.output
    assert "notAPlugin" not in result.output


def test_match_writes_config_yaml_next_to_the_model_by_default(poly, setup, tmp_path):
    model, plugins = setup
    assert poly("plugin", "match", model, "--plugin-dir", plugins).exit_code == 0
    assert _load_config(tmp_path / "config.yaml") == EXPECTED_CONFIG


def test_include_and_exclude_choose_the_plugins(poly, setup, tmp_path):
    model, plugins = setup
    result = poly("plugin", "match", model, "--plugin-dir", plugins, "--exclude", "concatPlugin", "-o", tmp_path / "c.yaml")
    assert result.exit_code == 0, result.output
    assert _load_config(tmp_path / "c.yaml") == []
    assert "{'convPlugin': 0}" in result.output
    result = poly("plugin", "list", model, "--plugin-dir", plugins, "--include", "concatPlugin")
    assert "{'concatPlugin': 1}" in result.output
    both = poly("plugin", "list", model, "--plugin-dir", plugins, "--include", "a", "--exclude", "b")
    assert both.exit_code == 2 and "--include and --exclude cannot be used together" in both.output


def test_list_prints_the_matches_and_writes_no_file(poly, setup, tmp_path):
    model, plugins = setup
    result = poly("plugin", "list", model, "--plugin-dir", plugins)
    assert result.exit_code == 0, result.output
    assert "{'concatPlugin': 1, 'convPlugin': 0}" in result.output
    assert "concatPlugin (CustomConcatPlugin): inputs ['x', 'y'] -> outputs ['d', 'e']" in result.output
    assert not (tmp_path / "config.yaml").exists()


def _nodes(path):
    return {node.name or node.op_type: node for node in onnx.load(str(path)).graph.node}


def test_replace_puts_the_plugin_node_in_place_of_the_subgraph(poly, setup, tmp_path):
    model, plugins = setup
    assert poly("plugin", "match", model, "--plugin-dir", plugins).exit_code == 0
    result = poly("plugin", "replace", model, "--plugin-dir", plugins, "--config", tmp_path / "config.yaml",
                  "-o", tmp_path / "out.onnx")
    assert result.exit_code == 0, result.output
    assert "replaced 1 instances of concatPlugin plugin" in result.output
    replaced = onnx.load(str(tmp_path / "out.onnx"))
    plugin_nodes = [node for node in replaced.graph.node if node.op_type == "CustomConcatPlugin"]
    assert len(plugin_nodes) == 1
    node = plugin_nodes[0]
    assert list(node.input) == ["x", "y"] and list(node.output) == ["d", "e"]
    assert {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute} == {"axis2": 2, "mode": b"fast"}
    # the matched nodes are gone, the rejected subgraph on z stays, the outputs are unchanged
    ops = sorted(n.op_type for n in replaced.graph.node)
    assert ops == sorted(["CustomConcatPlugin", "Relu", "Sigmoid", "Concat", "Neg", "Abs"])
    assert [o.name for o in replaced.graph.output] == ["d", "e", "g", "h"]
    assert [i.name for i in replaced.graph.input] == ["x", "y", "z"]


def test_replace_follows_the_edited_config_and_defaults_next_to_the_model(poly, setup, tmp_path):
    model, plugins = setup
    config = [dict(EXPECTED_CONFIG[0], instances=[dict(EXPECTED_CONFIG[0]["instances"][0], attributes={"axis2": 7})])]
    (tmp_path / "config.yaml").write_text(yaml.safe_dump_all(config))
    assert poly("plugin", "replace", model, "--plugin-dir", plugins).exit_code == 0
    node = next(n for n in onnx.load(str(tmp_path / "replaced.onnx")).graph.node if n.op_type == "CustomConcatPlugin")
    assert {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute} == {"axis2": 7}
    # an instance removed from the config is not replaced
    (tmp_path / "config.yaml").write_text(yaml.safe_dump_all([dict(EXPECTED_CONFIG[0], instances=[])]))
    assert poly("plugin", "replace", model, "--plugin-dir", plugins, "-o", tmp_path / "same.onnx").exit_code == 0
    assert sorted(n.name for n in onnx.load(str(tmp_path / "same.onnx")).graph.node) == \
        sorted(n.name for n in plugin_model().graph.node)


def test_replace_uses_the_plugins_own_replace_function(poly, tmp_path):
    model = tmp_path / "model.onnx"
    onnx.save(plugin_model(), str(model))
    plugins = write_plugin_dir(tmp_path, custom_replace=True)
    assert poly("plugin", "match", model, "--plugin-dir", plugins).exit_code == 0
    assert poly("plugin", "replace", model, "--plugin-dir", plugins).exit_code == 0
    node = next(n for n in onnx.load(str(tmp_path / "replaced.onnx")).graph.node if n.op_type.endswith("Custom"))
    assert node.op_type == "CustomConcatPluginCustom"
    assert {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}["custom"] == 1


@pytest.mark.parametrize("config_text, message", [
    ("name: concatPlugin\nop: X\ninstances:\n- inputs: [x, nope]\n  outputs: [d]\n",
     "the model has no tensor 'nope' (listed in its inputs)"),
    ("name: concatPlugin\ninstances: []\n", "document 0: missing 'op'"),
    ("name: [unclosed\n", "is not valid YAML"),
    ("name: concatPlugin\nop: X\ninstances:\n- inputs: x\n  outputs: [d]\n", "'inputs' must be a list of tensor names"),
])
def test_a_bad_config_is_one_line_naming_it(poly, setup, tmp_path, config_text, message):
    model, plugins = setup
    (tmp_path / "bad.yaml").write_text(config_text)
    result = poly("plugin", "replace", model, "--plugin-dir", plugins, "--config", tmp_path / "bad.yaml")
    assert result.exit_code == 1
    (line,) = result.stderr.strip().splitlines()
    assert message in line and "Traceback" not in result.output
    assert not (tmp_path / "replaced.onnx").exists()


def test_missing_inputs_are_one_line_naming_the_flag(poly, setup, tmp_path):
    model, plugins = setup
    result = poly("plugin", "match", model, "--plugin-dir", tmp_path / "nowhere")
    assert result.exit_code == 2 and "--plugin-dir" in result.output and "is not a directory" in result.output
    result = poly("plugin", "replace", model, "--plugin-dir", plugins, "--config", tmp_path / "none.yaml")
    assert result.exit_code == 2 and "--config" in result.output and "does not exist" in result.output
    assert poly("plugin", "match", "--plugin-dir", plugins).exit_code == 2  # no MODEL


def test_a_pattern_without_its_functions_is_one_line_naming_it(poly, setup):
    model, plugins = setup
    (plugins / "concatPlugin" / "pattern.py").write_text("def get_matching_subgraphs(graph):\n"
                                                         "    return [{'inputs': ['x'], 'outputs': ['d']}]\n")
    result = poly("plugin", "list", model, "--plugin-dir", plugins)
    assert result.exit_code == 1
    (line,) = result.stderr.strip().splitlines()
    assert "pattern.py defines no function get_plugin_metadata()" in line


@pytest.mark.slow
def test_same_config_and_replaced_model_as_polygraphy(setup, tmp_path):
    pytest.importorskip("polygraphy")
    model, plugins = setup
    for exe, name in ((POLY, "poly"), (POLYGRAPHY, "polygraphy")):
        result = run_cli(exe, "plugin", "match", model, "--plugin-dir", plugins, "-o", tmp_path / f"{name}.yaml")
        assert result.returncode == 0, result.stderr
        result = run_cli(exe, "plugin", "replace", model, "--plugin-dir", plugins, "--config",
                         tmp_path / f"{name}.yaml", "-o", tmp_path / f"{name}.onnx")
        assert result.returncode == 0, result.stderr
    assert _load_config(tmp_path / "poly.yaml") == _load_config(tmp_path / "polygraphy.yaml")
    ours, theirs = onnx.load(str(tmp_path / "poly.onnx")).graph, onnx.load(str(tmp_path / "polygraphy.onnx")).graph
    assert [(n.op_type, list(n.input), list(n.output)) for n in ours.node] == \
        [(n.op_type, list(n.input), list(n.output)) for n in theirs.node]
