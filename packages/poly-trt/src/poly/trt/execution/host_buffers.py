"""
``PinnedHostBuffer``: the grow-only page-locked host memory that ``TrtRunner`` copies outputs
(and debug tensors) into, so that device-to-host copies are truly asynchronous.
"""

from typing import Any

import numpy as np

__all__ = ["PinnedHostBuffer"]


class PinnedHostBuffer:
    """
    A grow-only page-locked host buffer that output copies land in. Growing allocates a new
    block and drops this buffer's reference to the old one, which arrays returned earlier keep
    alive (with their values) until they go.
    """

    def __init__(self) -> None:
        self._pinned: Any = None
        self._capacity = 0

    def view(self, shape: Any, dtype: Any) -> Any:
        """A ``shape`` / ``dtype`` NumPy array over the buffer (grown when the bytes do not fit)."""
        nbytes = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
        if nbytes > self._capacity or self._pinned is None:
            from poly.core.cuda import PinnedBuffer

            if self._pinned is not None:
                self._pinned.free()  # the memory goes now unless an array still views it
            self._capacity = max(nbytes, 1)
            self._pinned = PinnedBuffer(self._capacity)
        return self._pinned.array(np.uint8, (self._capacity,))[:nbytes].view(dtype).reshape(shape)

    def free(self) -> None:
        """Drops the buffer's reference to its memory (arrays viewing it keep it alive)."""
        if self._pinned is not None:
            self._pinned.free()
            self._pinned = None
            self._capacity = 0
