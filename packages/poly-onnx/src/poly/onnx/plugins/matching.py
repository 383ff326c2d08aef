"""
``match_plugins``: the subgraphs of a model that each plugin's pattern matches, as the documents
of a plugin config (one per plugin with a match: its name, op and instances), and
``match_counts``: how many instances each plugin has.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from poly.core import G_LOGGER
from poly.onnx.model.base import load_model
from poly.onnx.model.graph import gs_from_onnx
from poly.onnx.plugins.discovery import PluginPattern, find_plugins

__all__ = ["match_plugins", "match_counts"]


def match_plugins(model: Any, plugin_dir: str, include: Iterable[str] | None = None,
                  exclude: Iterable[str] | None = None) -> list:
    """
    Matches the pattern of every plugin of ``plugin_dir`` (see ``find_plugins`` for ``include``
    and ``exclude``) against ``model`` (an ONNX ModelProto or a loader of one).

    Returns:
        list[dict]: One document per plugin that matched, in plugin-name order:
        ``{"name": ..., "op": ..., "instances": [{"inputs": [...], "outputs": [...],
        "attributes": {...}}, ...]}`` (the instances as the plugin's ``get_matching_subgraphs``
        returns them).
    """
    model = load_model(model)
    documents = []
    for name in find_plugins(plugin_dir, include, exclude):
        G_LOGGER.info(f"checking {name} in model")
        pattern = PluginPattern(plugin_dir, name)
        # A fresh graph for every plugin: a pattern may change the graph it is given.
        instances = pattern.matching_subgraphs(gs_from_onnx(model))
        if instances:
            metadata = pattern.metadata()
            documents.append({"name": metadata.get("name", name), "op": metadata["op"], "instances": instances})
    return documents


def match_counts(documents: list, plugins: Iterable[str] = ()) -> dict:
    """Plugin name -> number of matched instances in ``documents`` (``match_plugins``'s result);
    the names in ``plugins`` are listed with 0 when they did not match."""
    counts = dict.fromkeys(plugins, 0)
    for document in documents:
        counts[document["name"]] = counts.get(document["name"], 0) + len(document["instances"])
    return counts
