"""Named columns without pandas (its import is a large share of a comparison's time): the tables
``compare`` builds and every table format prints.  Each column has the one kind pandas would infer
from its values (``bool``, ``int``, ``float``, ``Int64`` with gaps, ``str``, ``object``), so that
:meth:`Table.to_frame` and the renderers (render/frames.py) agree.
"""
from __future__ import annotations

import math
from collections import namedtuple

__all__ = ["Table", "KINDS"]

KINDS = ("bool", "int", "float", "Int64", "str", "object")
NUMERIC = ("int", "float", "Int64")


def _is_bool(value) -> bool:
    return isinstance(value, bool) or type(value).__name__ in ("bool_", "bool")  # numpy 2 names it numpy.bool


def _is_int(value) -> bool:
    return not _is_bool(value) and (isinstance(value, int) or type(value).__name__.startswith(("int", "uint")))


def _is_number(value) -> bool:
    return _is_int(value) or isinstance(value, float) or type(value).__name__.startswith("float")


def _beyond_int64(value) -> bool:
    return _is_int(value) and not -(1 << 63) <= int(value) < 1 << 63


def infer_kind(values) -> str:
    """The kind pandas gives a column of these Python or numpy scalars."""
    values = list(values)
    if values and all(_is_bool(value) for value in values):
        return "bool"
    if all(_is_number(value) for value in values):
        if any(_beyond_int64(value) for value in values):
            return "object"  # pandas keeps such integers as Python objects
        return "int" if all(_is_int(value) for value in values) else "float"
    if all(value is None or isinstance(value, str) for value in values):
        return "str"
    return "object"


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or type(value).__name__ in ("NAType", "NaTType")


_NATIVE = {("bool", "b"), ("int", "i"), ("int", "u"), ("float", "f")}


def _convert(values, kind: str) -> list:
    dtype = getattr(values, "dtype", None)
    if dtype is not None and (kind, dtype.kind) in _NATIVE and dtype.itemsize <= 8:
        return values.tolist()  # a numpy array: the Python bools, ints, floats the loops below give, at C speed
    if kind == "bool":
        return [bool(item) for item in values]
    if kind == "int":
        return [int(item) for item in values]
    if kind == "float":
        return [float(item) for item in values]
    if kind == "Int64":
        return [None if _missing(item) else int(item) for item in values]
    if kind == "str":
        items = list(values)
        if all(type(item) is str for item in items):  # text without gaps (compare's run names): kept as it is
            return items
        return [None if _missing(item) else item if isinstance(item, str) else str(item) for item in items]
    return [None if _missing(item) else item.item() if hasattr(item, "item") else item for item in values]


class Table:
    """Columns of one length, in order, each a list of Python values of one kind (see the module)."""

    def __init__(self, columns: dict, kinds: dict | None = None):
        kinds = dict(kinds or {})
        lengths = {len(value) for value in columns.values()}
        if len(lengths) > 1:
            raise ValueError(f"columns of different lengths: {sorted(lengths)}")
        self._n = lengths.pop() if lengths else 0
        self._cols = {}
        self.kinds = {}
        for name, values in columns.items():
            kind = kinds.get(name) or infer_kind(values)
            if kind not in KINDS:
                raise ValueError(f"unknown column kind {kind!r}")
            self._cols[name] = _convert(values, kind)
            self.kinds[name] = kind

    @classmethod
    def from_rows(cls, rows: list, columns: list, kinds: dict | None = None) -> "Table":
        """Rows as tuples (in ``columns`` order) or dicts (keyed by column)."""
        if rows and isinstance(rows[0], dict):
            return cls({column: [row[column] for row in rows] for column in columns}, kinds)
        return cls({column: [row[index] for row in rows] for index, column in enumerate(columns)}, kinds)

    @classmethod
    def from_frame(cls, frame) -> "Table":
        """A pandas DataFrame's columns, with the kinds of their dtypes."""
        import pandas as pd

        types = pd.api.types
        cols, kinds = {}, {}
        for column in frame.columns:
            dtype = frame[column].dtype
            kinds[str(column)] = ("bool" if types.is_bool_dtype(dtype) else "Int64" if str(dtype) == "Int64"
                                  else "int" if types.is_integer_dtype(dtype) else "float" if types.is_float_dtype(dtype)
                                  else "object" if types.is_object_dtype(dtype) else "str")
            cols[str(column)] = frame[column].tolist()
        return cls(cols, kinds)

    @property
    def columns(self) -> list:
        return list(self._cols)

    def __getitem__(self, name: str) -> list:
        return self._cols[name]

    def __contains__(self, name: str) -> bool:
        return name in self._cols

    def __len__(self) -> int:
        return self._n

    def rows(self):
        """Each row as a tuple, in column order."""
        return zip(*self._cols.values()) if self._cols else iter(())

    def itertuples(self, index: bool = False):
        """Each row as a named tuple (fields: the column names), as DataFrame.itertuples(index=False)."""
        if index:
            raise ValueError("a Table has no index")
        Row = namedtuple("Row", self.columns)
        return (Row(*row) for row in self.rows())

    def drop(self, columns) -> "Table":
        return Table({column: value for column, value in self._cols.items() if column not in columns},
                     {column: kind for column, kind in self.kinds.items() if column not in columns})

    def to_frame(self):
        """The pandas DataFrame (the dtypes pandas would give the same values; Int64 for ``Int64``)."""
        import pandas as pd

        frame = pd.DataFrame({column: value for column, value in self._cols.items()}, columns=self.columns)
        for column, kind in self.kinds.items():
            if kind == "Int64":
                frame[column] = pd.array(self._cols[column], dtype="Int64")
            elif kind == "float":
                frame[column] = frame[column].astype("float64")
        return frame
