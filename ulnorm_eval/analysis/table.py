"""Named columns without pandas: the tables that ``compare`` builds and every table format prints.

Importing pandas costs ~0.2 s, a fifth of comparing 17 Robust 2003 runs, and the command line only
prints the tables.  A :class:`Table` holds plain Python values, one kind per column, chosen as
pandas would infer it from the same values, so that :meth:`Table.to_frame` (the library's
DataFrames) and the renderers (render/frames.py) agree with each other and with earlier versions:

- ``bool``: every value a bool;
- ``int``: every value an integer;
- ``float``: numbers, at least one a float (integers then print as ``12.0``, NaN as ``nan``);
- ``Int64``: integers with gaps (None), pandas' nullable integer;
- ``str``: text (None where missing);
- ``object``: anything else, each value kept as it is (pandas' object columns: text mixed with
  numbers, or integers beyond int64).
"""
from __future__ import annotations

import math
from collections import namedtuple

__all__ = ["Table", "KINDS"]

KINDS = ("bool", "int", "float", "Int64", "str", "object")
NUMERIC = ("int", "float", "Int64")


def _is_bool(v) -> bool:
    return isinstance(v, bool) or type(v).__name__ in ("bool_", "bool")  # numpy 2 names it numpy.bool


def _is_int(v) -> bool:
    return not _is_bool(v) and (isinstance(v, int) or type(v).__name__.startswith(("int", "uint")))


def _is_number(v) -> bool:
    return _is_int(v) or isinstance(v, float) or type(v).__name__.startswith("float")


def _beyond_int64(v) -> bool:
    return _is_int(v) and not -(1 << 63) <= int(v) < 1 << 63


def infer_kind(values) -> str:
    """The kind pandas gives a column of these Python or numpy scalars."""
    values = list(values)
    if values and all(_is_bool(v) for v in values):
        return "bool"
    if all(_is_number(v) for v in values):
        if any(_beyond_int64(v) for v in values):
            return "object"  # pandas keeps such integers as Python objects
        return "int" if all(_is_int(v) for v in values) else "float"
    if all(v is None or isinstance(v, str) for v in values):
        return "str"
    return "object"


def _missing(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v)) or type(v).__name__ in ("NAType", "NaTType")


_NATIVE = {("bool", "b"), ("int", "i"), ("int", "u"), ("float", "f")}


def _convert(values, kind: str) -> list:
    dt = getattr(values, "dtype", None)
    if dt is not None and (kind, dt.kind) in _NATIVE and dt.itemsize <= 8:
        return values.tolist()  # a numpy array: the Python bools, ints, floats the loops below give, at C speed
    if kind == "bool":
        return [bool(v) for v in values]
    if kind == "int":
        return [int(v) for v in values]
    if kind == "float":
        return [float(v) for v in values]
    if kind == "Int64":
        return [None if _missing(v) else int(v) for v in values]
    if kind == "str":
        return [None if _missing(v) else v if isinstance(v, str) else str(v) for v in values]
    return [None if _missing(v) else v.item() if hasattr(v, "item") else v for v in values]


class Table:
    """Columns of one length, in order, each a list of Python values of one kind (see the module)."""

    def __init__(self, columns: dict, kinds: dict | None = None):
        kinds = dict(kinds or {})
        lengths = {len(v) for v in columns.values()}
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
            return cls({c: [r[c] for r in rows] for c in columns}, kinds)
        return cls({c: [r[i] for r in rows] for i, c in enumerate(columns)}, kinds)

    @classmethod
    def concat(cls, tables: list) -> "Table":
        """The rows of ``tables`` (same columns) one after the other; a column's kind is the widest."""
        first = tables[0]
        cols = {c: [v for t in tables for v in t[c]] for c in first.columns}
        kinds = {}
        for c in first.columns:
            ks = {t.kinds[c] for t in tables}
            kinds[c] = ks.pop() if len(ks) == 1 else None  # mixed: inferred from the values
        return cls(cols, kinds)

    @classmethod
    def from_frame(cls, df) -> "Table":
        """A pandas DataFrame's columns, with the kinds of their dtypes."""
        import pandas as pd

        cols, kinds = {}, {}
        for c in df.columns:
            s = df[c]
            if pd.api.types.is_bool_dtype(s.dtype):
                kinds[c] = "bool"
            elif str(s.dtype) == "Int64":
                kinds[c] = "Int64"
            elif pd.api.types.is_integer_dtype(s.dtype):
                kinds[c] = "int"
            elif pd.api.types.is_float_dtype(s.dtype):
                kinds[c] = "float"
            elif pd.api.types.is_object_dtype(s.dtype):
                kinds[c] = "object"
            else:
                kinds[c] = "str"
            cols[str(c)] = s.tolist()
            kinds[str(c)] = kinds.pop(c)
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
        return (Row(*r) for r in self.rows())

    def select(self, keep) -> "Table":
        """The rows where ``keep`` (a sequence of bools) is true."""
        keep = list(keep)
        return Table({c: [v for v, k in zip(vals, keep) if k] for c, vals in self._cols.items()}, self.kinds)

    def drop(self, columns) -> "Table":
        return Table({c: v for c, v in self._cols.items() if c not in columns},
                     {c: k for c, k in self.kinds.items() if c not in columns})

    def to_frame(self):
        """The pandas DataFrame (the dtypes pandas would give the same values; Int64 for ``Int64``)."""
        import pandas as pd

        df = pd.DataFrame({c: v for c, v in self._cols.items()}, columns=self.columns)
        for c, kind in self.kinds.items():
            if kind == "Int64":
                df[c] = pd.array(self._cols[c], dtype="Int64")
            elif kind == "float":
                df[c] = df[c].astype("float64")
        return df
