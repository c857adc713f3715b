"""glibc's malloc settings for the command's own processes (``mallopt``), each left to the user who chose.

Used by pipeline/parallel._steady_heap (a ``-j`` worker keeps its heap between tasks); a library
caller's malloc is never touched.
"""
from __future__ import annotations

import os
import sys

# glibc's malloc.h
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8


def set_malloc(options: tuple[tuple[int, int], ...], variables: tuple[str, ...], tunables: str) -> bool:
    """``mallopt(param, value)`` for each of ``options``, in order, in this process; False (nothing done)
    off Linux, where the C library has no ``mallopt`` (musl), or when the user chose: one of the
    environment ``variables`` is set, or ``GLIBC_TUNABLES`` names a tunable starting with ``tunables``
    (e.g. ``glibc.malloc.arena_max``, or ``glibc.malloc`` for any of malloc's)."""
    if not sys.platform.startswith("linux") or any(name in os.environ for name in variables) \
            or tunables in os.environ.get("GLIBC_TUNABLES", ""):
        return False
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    for param, value in options:
        mallopt(param, value)
    return True
