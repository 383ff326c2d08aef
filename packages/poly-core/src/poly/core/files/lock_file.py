"""``LockFile``: exclusive access to a file across processes, through ``<path>.lock``."""

import os
import sys
from typing import Any

__all__ = ["LockFile"]


class LockFile:
    """
    Context manager that holds an exclusive lock on ``<path>.lock`` (created if needed) for its
    duration, so that processes sharing a file (a timing cache, say) take turns; it has no
    effect for file-like objects. The lock file stays: deleting it would let a newcomer lock a
    new file while another process still holds the old one.
    """

    def __init__(self, path: Any) -> None:
        """
        Args:
            path (Union[str, file-like]): The file to lock.
        """
        self.is_file_like = hasattr(path, "read") and hasattr(path, "write")
        self.lock_path = None if self.is_file_like else os.fspath(path) + ".lock"
        self._fhandle: Any = None

    def __enter__(self) -> Any:
        if self.is_file_like:
            return None
        self._fhandle = open(self.lock_path, "ab+")  # type: ignore[arg-type]  # noqa: SIM115 - held until __exit__
        if sys.platform.startswith("win"):
            import msvcrt

            self._fhandle.seek(0)
            while True:  # msvcrt.locking gives up after 10 tries: keep trying
                try:
                    msvcrt.locking(self._fhandle.fileno(), msvcrt.LK_LOCK, 1)
                    break
                except OSError:
                    continue
        else:
            import fcntl

            fcntl.lockf(self._fhandle.fileno(), fcntl.LOCK_EX)
        return self._fhandle

    def __exit__(self, exc_type: Any, exc_value: Any, traceback: Any) -> None:
        if self.is_file_like or self._fhandle is None:
            return
        try:
            if sys.platform.startswith("win"):
                import msvcrt

                self._fhandle.seek(0)
                msvcrt.locking(self._fhandle.fileno(), msvcrt.LK_UNLCK, 1)
            else:
                import fcntl

                fcntl.lockf(self._fhandle.fileno(), fcntl.LOCK_UN)
        finally:
            self._fhandle.close()
            self._fhandle = None
