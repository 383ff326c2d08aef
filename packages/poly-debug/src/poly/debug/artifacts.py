"""
``ArtifactSorter``: after each checked iteration, moves the tracked files and directories
(``--artifacts``) into ``good/`` or ``bad/`` under ``--art-dir``, renamed with the session's
timestamp, the iteration and the check's exit status, never overwriting anything.
"""

import os
import shutil
import time
from typing import Any

from poly.core import G_LOGGER

__all__ = ["ArtifactSorter", "DEFAULT_ARTIFACTS_DIR"]

DEFAULT_ARTIFACTS_DIR = "polygraphy_artifacts"


def _split_name(path: Any) -> tuple[Any, ...]:
    """(stem, extension) of a file; directories keep their whole name as the stem."""
    base = os.path.basename(os.path.normpath(path))
    if os.path.isdir(path):
        return base, ""
    stem, ext = os.path.splitext(base)
    return stem, ext


def _free_path(path_without_ext: Any, ext: Any) -> Any:
    """``path_without_ext + ext``, or the same with ``_1``, ``_2``... when it is taken."""
    candidate = path_without_ext + ext
    count = 0
    while os.path.lexists(candidate):
        count += 1
        candidate = f"{path_without_ext}_{count}{ext}"
    return candidate


class ArtifactSorter:
    """
    Sorts per-iteration artifacts into ``<output_dir>/good`` and ``<output_dir>/bad``.

    An artifact ``logs/run.txt`` of iteration 3 (0-based) that failed with exit status 1 becomes
    ``<output_dir>/bad/run_<date>_<time>_N3_rc1.txt``. Directories move whole. A name already
    taken gets a further ``_1``, ``_2``... suffix: nothing is overwritten.
    """

    def __init__(self, artifacts: Any, output_dir: Any = None, start_time: Any = None) -> None:
        """
        Args:
            artifacts (Sequence[str]): Paths of the files or directories to sort.
            output_dir (str): Where ``good/`` and ``bad/`` go. Defaults to ``polygraphy_artifacts``.
            start_time (float): The session's start (seconds since the epoch) for the timestamp
                    suffix. Defaults to now.
        """
        self.artifacts = [os.fspath(a) for a in artifacts or ()]
        self.output_dir = os.fspath(output_dir or DEFAULT_ARTIFACTS_DIR)
        stamp = time.localtime(time.time() if start_time is None else start_time)
        self.timestamp = time.strftime("%Y-%m-%d_%H-%M-%S", stamp)
        for art in self.artifacts:
            if os.path.abspath(art) == os.path.abspath(self.output_dir):
                G_LOGGER.critical(f"--artifacts: {art!r} is the artifacts directory itself (--art-dir)")

    def destination_dir(self, success: Any) -> Any:
        """``<output_dir>/good`` or ``<output_dir>/bad``."""
        return os.path.join(self.output_dir, "good" if success else "bad")

    def sort(self, success: Any, suffix: Any, returncode: Any = None) -> Any:
        """
        Moves every artifact into the good or bad directory.

        Args:
            success (bool): Whether the iteration passed.
            suffix (str): Identifies the iteration, e.g. ``"_N3"``.
            returncode (int): The check's exit status, added as ``_rc<status>``; None adds nothing.

        Returns:
            List[str]: The new paths of the artifacts that were moved.
        """
        moved: list[Any] = []
        if not self.artifacts:
            return moved
        dest_dir = self.destination_dir(success)
        rc = "" if returncode is None else f"_rc{returncode}"
        for art in self.artifacts:
            if not os.path.lexists(art):
                G_LOGGER.warning(
                    f"Artifact {art!r} does not exist, skipping. Was it supposed to be generated?"
                )
                continue
            stem, ext = _split_name(art)
            os.makedirs(dest_dir, exist_ok=True)
            dest = _free_path(os.path.join(dest_dir, f"{stem}_{self.timestamp}{suffix}{rc}"), ext)
            G_LOGGER.info(f"Moving {art} to {dest}")
            shutil.move(art, dest)
            moved.append(dest)
        return moved
