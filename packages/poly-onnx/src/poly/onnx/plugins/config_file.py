"""
The plugin config: the YAML file ``poly plugin match`` writes and ``poly plugin replace`` reads,
in Polygraphy's format: one YAML document per plugin, ``name``, ``op`` and ``instances`` (each
with ``inputs`` and ``outputs``, lists of tensor names, and optionally ``attributes``, the
plugin node's attributes). It is meant to be reviewed and edited between the two steps.
"""

from __future__ import annotations

from typing import Any

from poly.core import PolyException
from poly.core.optional_import import lazy_import

yaml = lazy_import("yaml", install="pyyaml")

__all__ = ["save_plugin_config", "load_plugin_config"]


def _plain(value: Any) -> Any:
    """``value`` with NumPy scalars and arrays as Python numbers and lists, tuples as lists:
    what YAML writes without Python-specific tags."""
    if isinstance(value, dict):
        return {_plain(key): _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if hasattr(value, "tolist") and type(value).__module__ == "numpy":
        return value.tolist()
    return value


def save_plugin_config(documents: list, path: str) -> None:
    """Writes ``documents`` (``match_plugins``'s result) to the YAML file ``path``; a value YAML
    cannot write as plain data is a PolyException naming it."""
    try:
        text = yaml.safe_dump_all(_plain(documents), default_flow_style=False, sort_keys=False)
    except yaml.YAMLError as err:
        raise PolyException(f"Cannot write the plugin config {path!r}: {err}") from None
    with open(path, "w") as stream:
        stream.write(text)


def load_plugin_config(path: str) -> list:
    """
    Reads the plugin config at ``path`` (data only: no YAML tag can run code) and checks its
    structure; a malformed file is a PolyException naming the file and what is wrong.
    """
    with open(path) as stream:
        try:
            documents = [doc for doc in yaml.safe_load_all(stream) if doc is not None]
        except yaml.YAMLError as err:
            problem = str(err).replace("\n", " ")
            raise PolyException(f"--config {path!r} is not valid YAML: {problem}") from None
    for index, document in enumerate(documents):
        where = f"--config {path!r}, document {index}"
        if not isinstance(document, dict):
            raise PolyException(f"{where}: expected a mapping with name, op and instances")
        for key in ("name", "op", "instances"):
            if key not in document:
                raise PolyException(f"{where}: missing '{key}'")
        if not isinstance(document["instances"], list):
            raise PolyException(f"{where}: 'instances' must be a list")
        for number, instance in enumerate(document["instances"]):
            if not isinstance(instance, dict):
                raise PolyException(f"{where}, instance {number}: expected a mapping with inputs and outputs")
            for key in ("inputs", "outputs"):
                names = instance.get(key)
                if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
                    raise PolyException(f"{where}, instance {number}: '{key}' must be a list of tensor names")
            attributes = instance.get("attributes")
            if attributes is not None and not isinstance(attributes, dict):
                raise PolyException(f"{where}, instance {number}: 'attributes' must be a mapping")
    return documents
