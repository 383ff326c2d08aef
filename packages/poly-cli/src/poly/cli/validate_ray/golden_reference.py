"""
``UriGoldenReference``: golden outputs in a directory given as a URI (``file://``, ``s3://``,
``gs://``, ``hdfs://``: whatever pyarrow's filesystems open), one file per sample named as the
sample (or its stem with ``.npz``/``.json``), as a local golden directory is. Each worker copies a
sample's golden file to a temporary directory and reads it there exactly as a local golden
directory is read (plain ``.npz``, saved ``RunResults``); loading never runs code.
"""

from __future__ import annotations

import os
import posixpath
import shutil
import tempfile

from poly.cli.validate_ray.work_items import open_filesystem
from poly.compare.dataset import DirectoryReference, Reference
from poly.core.optional_import import lazy_import

__all__ = ["UriGoldenReference"]

pafs = lazy_import("pyarrow.fs", install="poly-cli[ray]")


class UriGoldenReference(Reference):
    """
    Args:
        uri (str): The directory of golden outputs, as a URI.
    """

    def __init__(self, uri: str):
        self.uri = uri.rstrip("/")
        self._fs = None

    def describe(self) -> str:
        return self.uri

    def _filesystem(self):
        if self._fs is None:
            self._fs = open_filesystem(self.uri)
        return self._fs

    def outputs_for(self, sample):
        if sample.name is None:
            raise ValueError("samples without a file name cannot be matched to a golden directory")
        name = sample.name.partition("#")[0]
        fs, root = self._filesystem()
        stem = posixpath.splitext(name)[0]
        for candidate in dict.fromkeys((name, stem + ".npz", stem + ".json")):
            path = posixpath.join(root, candidate)
            if fs.get_file_info(path).type != pafs.FileType.File:
                continue
            with tempfile.TemporaryDirectory(prefix="poly_golden_") as tmp:
                with fs.open_input_stream(path) as src, open(os.path.join(tmp, candidate), "wb") as out:
                    shutil.copyfileobj(src, out, 1 << 20)
                return DirectoryReference(tmp).outputs_for(sample)
        raise FileNotFoundError(f"no golden file for sample '{name}' in '{self.uri}'")

    def __getstate__(self):  # the filesystem handle is opened again where the reference lands
        return {"uri": self.uri, "_fs": None}
