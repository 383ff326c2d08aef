"""File path helpers: creating parent directories, file sizes, suffixes, finding files in
directories and turning names into safe file names."""

import glob
import os
import re
from typing import Any

from poly.core.logging.logger import G_LOGGER

__all__ = ["makedirs", "get_file_size", "add_file_suffix", "find_in_dirs", "sanitize_filename"]


def makedirs(path: Any) -> None:
    """Creates the directory that will hold the file ``path`` (nothing for a bare file name)."""
    dir_path = os.path.dirname(path)
    if dir_path:
        dir_path = os.path.realpath(dir_path)
        if not os.path.exists(dir_path):
            G_LOGGER.verbose(f"{dir_path} does not exist, creating now.")
        os.makedirs(dir_path, exist_ok=True)


def get_file_size(src: Any) -> Any:
    """The size in bytes of the file at path ``src`` (0 when it does not exist) or of the open
    file ``src``."""
    if hasattr(src, "fileno"):
        return os.fstat(src.fileno()).st_size
    return os.stat(src).st_size if os.path.exists(src) else 0


def add_file_suffix(path: Any, suffix: Any) -> str:
    """``path`` with ``suffix`` before its extension: ``add_file_suffix("a/b.onnx", "_fp16")``
    gives ``"a/b_fp16.onnx"``."""
    stem, ext = os.path.splitext(path)
    return f"{stem}{suffix}{ext}"


def find_in_dirs(name_glob: Any, dirs: Any) -> Any:
    """The paths matching ``name_glob`` in the first of ``dirs`` that has any, else []."""
    for dir_name in dirs:
        paths = glob.glob(os.path.join(dir_name, name_glob))
        if paths:
            return paths
    return []


def sanitize_filename(path: Any) -> Any:
    """``path`` made a single safe file name: path separators and every other character that is
    not a letter, digit, ``.``, ``-`` or ``_`` become ``_`` (``"out/x:0"`` gives ``"out_x_0"``)."""
    return re.sub(r"[^\w.\-]+", "_", path).strip("_")
