"""Arrow arrays built and read on their buffers (public pyarrow API), so that pyarrow never imports pandas
for them, as its first conversion of Python or numpy values would (docs/performance.md):
:func:`string_array`, :func:`numeric_array`, :func:`to_numpy` and :func:`scalar` stand for
``pa.array``, ``Array.to_numpy`` and ``pa.scalar``.
"""
from __future__ import annotations

__all__ = ["numeric_array", "offsets", "scalar", "string_array", "to_numpy"]


def offsets(strings):
    """The ``len + 1`` offsets of a string (or large string) array's values in its data buffer."""
    import numpy as np

    wide = strings.type != "string"
    return np.frombuffer(strings.buffers()[1], dtype=np.int64 if wide else np.int32, count=len(strings) + 1,
                         offset=strings.offset * (8 if wide else 4))


def numeric_array(values):
    """A numpy integer, float or bool array as an Arrow array, zero-copy where the layout allows
    (``pa.array(ndarray)`` imports ``numpy.ma`` to ask whether it is a masked array)."""
    import numpy as np
    import pyarrow as pa

    a = np.ascontiguousarray(values)
    if a.dtype == np.bool_:  # Arrow packs booleans as bits
        return pa.Array.from_buffers(pa.bool_(), len(a), [None, pa.py_buffer(np.packbits(a, bitorder="little"))])
    return pa.Array.from_buffers(pa.from_numpy_dtype(a.dtype), len(a), [None, pa.py_buffer(a)])


def string_array(values):
    """``pa.array(values, pa.string())`` for a sequence of ``str``, built on its buffers (UTF-8 bytes
    and int32 offsets; past 2 GiB of text ``pa.array`` itself).  ASCII text takes its offsets from
    the string lengths; other text is encoded one string at a time."""
    import numpy as np
    import pyarrow as pa

    values = values if isinstance(values, list) else list(values)
    count = len(values)
    data = "".join(values).encode("utf-8")
    lengths = np.fromiter(map(len, values), np.int64, count)
    if len(data) != int(lengths.sum()):  # not ASCII: byte lengths
        lengths = np.fromiter((len(value.encode("utf-8")) for value in values), np.int64, count)
    if len(data) >= 2 ** 31:
        return pa.array(values, pa.string())
    offsets = np.zeros(count + 1, np.int32)
    np.cumsum(lengths, out=offsets[1:], dtype=np.int32) if count else None
    return pa.Array.from_buffers(pa.string(), count, [None, pa.py_buffer(offsets), pa.py_buffer(data)])


def to_numpy(array):
    """``array.to_numpy(zero_copy_only=False)``: an integer or float array without nulls as a
    read-only view of its data buffer, a boolean one unpacked from its bits; any other array, or one
    with nulls, through Arrow; a numpy array as it is."""
    import numpy as np
    import pyarrow as pa

    if not isinstance(array, (pa.Array, pa.ChunkedArray)):
        return np.asarray(array)  # already numpy (or a list)
    kind = array.type
    if isinstance(array, pa.Array) and array.null_count == 0 and (pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_boolean(kind)):
        data = array.buffers()[1]
        count, offset = len(array), array.offset
        if pa.types.is_boolean(kind):
            if data is None or count == 0:
                return np.zeros(count, np.bool_)
            bits = np.frombuffer(data, np.uint8)
            return np.unpackbits(bits, bitorder="little", count=offset + count)[offset:].view(np.bool_)
        dtype = np.dtype(kind.to_pandas_dtype())
        if data is None or count == 0:
            return np.zeros(count, dtype)
        return np.frombuffer(data, dtype, count, offset * dtype.itemsize)
    return array.to_numpy(zero_copy_only=False)


def scalar(value, type_):
    """``pa.scalar(value, type=type_)`` for a string, boolean or integer type, made from a one-element
    array (:func:`string_array`, :func:`numeric_array`)."""
    import numpy as np
    import pyarrow as pa

    if pa.types.is_string(type_):
        return string_array([value])[0]
    return numeric_array(np.array([value], type_.to_pandas_dtype()))[0]
