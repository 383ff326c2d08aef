"""Loaded at interpreter start when this folder is on PYTHONPATH: makes ``import poly._native``
load the sanitizer build named by POLY_SANITIZED_NATIVE instead of the installed extension.

poly-core's editable install resolves ``poly._native`` through its own import hook at the
front of ``sys.meta_path``, so a folder on PYTHONPATH alone would not win; this finder goes in
front of it. Every Python process the tests start inherits the environment, so subprocesses
load the sanitized module too. Nothing else about importing poly changes.
"""

from __future__ import annotations

import importlib.util
import os
import sys


class SanitizedNativeFinder:
    """Finds ``poly._native`` at the path given; leaves every other module to the next finder."""

    def __init__(self, path: str):
        self.path = path

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "poly._native":
            return None
        return importlib.util.spec_from_file_location(fullname, self.path)


_PATH = os.environ.get("POLY_SANITIZED_NATIVE")
if _PATH:
    sys.meta_path.insert(0, SanitizedNativeFinder(_PATH))
