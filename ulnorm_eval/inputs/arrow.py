"""Keeping pyarrow from importing pandas in a command that never uses it.

pyarrow imports pandas (0.2-0.4 s, half the start-up of a small evaluation) on its first array
conversion, from its C++ layer as well as from its Python shim, only to ask whether a value is a
pandas object.  In the command's own process :func:`defer_pandas` installs an import hook that
turns those implicit imports down (pyarrow then treats every value as a non-pandas one, which ours
all are) while an ``import pandas`` statement still loads pandas as usual: compare's tables and
the ir_measures bridge import it themselves.  Once pandas is loaded the hook has nothing to do and
removes itself.  Library callers are not affected: only ``cli/guard.py`` calls this.
"""
from __future__ import annotations

import sys

__all__ = ["defer_pandas", "numeric_array"]


def _explicit_import(frame) -> bool:
    """True when the import was asked for by Python code (an import statement or importlib), not by
    an extension module calling the C import API (pyarrow's implicit pandas checks)."""
    import dis

    while frame is not None and frame.f_code.co_filename.startswith("<frozen importlib"):
        frame = frame.f_back
    if frame is None:
        return True
    if frame.f_code.co_filename.replace("\\", "/").endswith("importlib/__init__.py"):
        return True  # importlib.import_module("pandas")
    code = frame.f_code.co_code
    return 0 <= frame.f_lasti < len(code) and code[frame.f_lasti] == dis.opmap["IMPORT_NAME"]


class _DeferPandas:
    """A meta-path finder that refuses pandas to extension modules until Python code imports it."""

    def find_spec(self, name, path=None, target=None):
        if name != "pandas":
            return None
        if _explicit_import(sys._getframe(1)):
            try:
                sys.meta_path.remove(self)
            except ValueError:
                pass
            return None  # the normal finders load it
        raise ImportError("pandas is not needed by this command (ulnorm_eval/inputs/arrow.py)")


def defer_pandas() -> None:
    """Install the hook (once, and only when pandas is not loaded yet)."""
    if "pandas" in sys.modules or any(isinstance(f, _DeferPandas) for f in sys.meta_path):
        return
    sys.meta_path.insert(0, _DeferPandas())


def numeric_array(values):
    """A numpy integer, float or bool array as an Arrow array, zero-copy where the layout allows.

    ``pa.array(ndarray)`` first asks whether the array is a numpy masked array, which imports
    ``numpy.ma`` (8 ms, a tenth of a small evaluation's start-up); an array built on the numpy
    buffer never asks.
    """
    import numpy as np
    import pyarrow as pa

    a = np.ascontiguousarray(values)
    if a.dtype == np.bool_:  # Arrow packs booleans as bits
        return pa.Array.from_buffers(pa.bool_(), len(a), [None, pa.py_buffer(np.packbits(a, bitorder="little"))])
    return pa.Array.from_buffers(pa.from_numpy_dtype(a.dtype), len(a), [None, pa.py_buffer(a)])
