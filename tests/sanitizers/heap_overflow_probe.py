"""A deliberate heap-buffer overflow, read through ctypes.memmove (which AddressSanitizer
intercepts): run by tests/native/test_native_sanitizers.py to show that a report fails a
sanitizer run. Not collected by the suite itself (its name does not start with test_)."""

import ctypes

import numpy as np


def test_reads_past_the_end_of_an_array():
    src = np.zeros(4096, np.uint8)
    dst = np.zeros(8192, np.uint8)
    ctypes.memmove(dst.ctypes.data, src.ctypes.data, 8192)
