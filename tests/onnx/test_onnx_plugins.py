"""poly.onnx.plugins through its public API: plugin discovery, matching a model against the
patterns, the YAML config round trip (NumPy values written as plain data, malformed files
rejected), and the replacement of the matched subgraph by the plugin node."""

from __future__ import annotations

import numpy as np
import pytest
from fixtures.plugin_dirs import plugin_model, write_plugin_dir

from poly.core import PolyException
from poly.onnx.plugins import (
    find_plugins,
    load_plugin_config,
    match_counts,
    match_plugins,
    replace_plugins,
    save_plugin_config,
)

pytest.importorskip("yaml")


def test_find_plugins_lists_directories_with_a_pattern(tmp_path):
    plugins = write_plugin_dir(tmp_path)
    assert find_plugins(str(plugins)) == ["concatPlugin", "convPlugin"]
    assert find_plugins(str(plugins), include=["convPlugin", "other"]) == ["convPlugin"]
    assert find_plugins(str(plugins), exclude=["convPlugin"]) == ["concatPlugin"]
    with pytest.raises(PolyException, match="is not a directory"):
        find_plugins(str(tmp_path / "missing"))


def test_match_then_replace(tmp_path):
    plugins = str(write_plugin_dir(tmp_path))
    documents = match_plugins(plugin_model(), plugins)
    assert documents == [{"name": "concatPlugin", "op": "CustomConcatPlugin", "instances": [
        {"inputs": ["x", "y"], "outputs": ["d", "e"], "attributes": {"axis2": 2, "mode": "fast"}}]}]
    assert match_counts(documents, find_plugins(plugins)) == {"concatPlugin": 1, "convPlugin": 0}
    model, counts = replace_plugins(plugin_model, plugins, documents)  # a loader works too
    assert counts == {"concatPlugin": 1}
    (node,) = [n for n in model.graph.node if n.op_type == "CustomConcatPlugin"]
    assert list(node.input) == ["x", "y"] and list(node.output) == ["d", "e"]
    assert len(model.graph.node) == 6


def test_config_round_trip_writes_numpy_values_as_plain_data(tmp_path):
    documents = [{"name": "p", "op": "P", "instances": [
        {"inputs": ("x",), "outputs": ["y"], "attributes": {"k": np.int64(3), "v": np.array([1.5, 2.0])}}]}]
    save_plugin_config(documents, str(tmp_path / "c.yaml"))
    assert "!!" not in (tmp_path / "c.yaml").read_text()
    assert load_plugin_config(str(tmp_path / "c.yaml")) == [{"name": "p", "op": "P", "instances": [
        {"inputs": ["x"], "outputs": ["y"], "attributes": {"k": 3, "v": [1.5, 2.0]}}]}]


def test_config_with_python_tags_is_refused(tmp_path):
    (tmp_path / "c.yaml").write_text("!!python/object/apply:os.getcwd []\n")
    with pytest.raises(PolyException, match="is not valid YAML"):
        load_plugin_config(str(tmp_path / "c.yaml"))
