"""
Plugin substitution in ONNX models (Polygraphy's ``plugin`` tool): plugin directories whose
``pattern.py`` describes, with an onnx-graphsurgeon pattern, the subgraphs the plugin can stand
for; matching them against a model (``match_plugins``), the YAML config of the matches
(``save_plugin_config``, ``load_plugin_config``), and replacing the matched subgraphs with one
plugin node each (``replace_plugins``).
"""

from poly.onnx.plugins.config_file import load_plugin_config, save_plugin_config
from poly.onnx.plugins.discovery import PATTERN_FILE_NAME, PluginPattern, find_plugins
from poly.onnx.plugins.matching import match_counts, match_plugins
from poly.onnx.plugins.replacement import default_replace_with_plugin, replace_plugins

__all__ = [
    "PATTERN_FILE_NAME",
    "PluginPattern",
    "find_plugins",
    "match_plugins",
    "match_counts",
    "save_plugin_config",
    "load_plugin_config",
    "default_replace_with_plugin",
    "replace_plugins",
]
