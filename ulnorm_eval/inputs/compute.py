"""The Arrow compute functions of the evaluation path, called without importing ``pyarrow.compute``.

``import pyarrow.compute`` generates a Python wrapper, docstring included, for each of Arrow's ~290
compute functions: 20-25 ms of every process (a seventh of a small evaluation's start-up, again in
each ``-j`` worker) for the dozen functions an evaluation calls.  Each function here calls the same
Arrow kernel through ``call_function`` with the options pyarrow.compute's wrapper of that name
would build from the same arguments, so the results are the same arrays (tests/test_compute.py
compares every one with pyarrow.compute's).  pyarrow's own array methods (``Array.take``,
``Array.cast``, ``Array.fill_null``, ...) import pyarrow.compute on first use: the evaluation path
calls the functions below instead.  Other commands (compare's tables, nrg, LETOR) may import
pyarrow.compute as usual.
"""
from __future__ import annotations

import pyarrow as pa

try:
    from pyarrow._compute import (CastOptions, IndexOptions, MatchSubstringOptions, ReplaceSubstringOptions,
                                  ScalarAggregateOptions, SetLookupOptions, SortOptions, call_function)
except ImportError:  # a pyarrow that moved its compute module: the public names (and their import cost)
    from pyarrow.compute import (CastOptions, IndexOptions, MatchSubstringOptions, ReplaceSubstringOptions,  # noqa: F401
                                 ScalarAggregateOptions, SetLookupOptions, SortOptions, call_function)

__all__ = ["all_", "and_", "any_", "cast", "dictionary_encode", "equal", "fill_null", "index", "index_in", "is_finite",
           "is_in", "match_substring_regex", "replace_substring_regex", "sort_indices", "starts_with", "take",
           "unique"]


def _scalar(value, like):
    """``value`` as a scalar of ``like``'s type, as pyarrow.compute's fill_null and index convert it."""
    from .arrow import scalar  # pa.scalar would import pandas

    if not isinstance(value, pa.Scalar):
        return scalar(value, like.type)
    return value if value.type == like.type else scalar(value.as_py(), like.type)


def take(data, indices):
    """``pc.take(data, indices)`` (bounds checked)."""
    return call_function("take", [data, indices])


def cast(arr, target_type):
    """``pc.cast(arr, target_type)``: a safe cast (overflow and truncation are errors)."""
    return call_function("cast", [arr], CastOptions.safe(target_type))


def dictionary_encode(arr):
    """``pc.dictionary_encode(arr)``: nulls masked, as by default."""
    return call_function("dictionary_encode", [arr])


def unique(arr):
    return call_function("unique", [arr])


def index_in(values, value_set):
    """``pc.index_in(values, value_set=...)``: the position in ``value_set``, null when absent."""
    return call_function("index_in", [values], SetLookupOptions(value_set))


def is_in(values, value_set):
    return call_function("is_in", [values], SetLookupOptions(value_set))


def fill_null(values, fill_value):
    """``pc.fill_null``: Arrow's ``coalesce`` with the fill value as a scalar of the values' type."""
    return call_function("coalesce", [values, _scalar(fill_value, values)])


def index(data, value):
    """``pc.index(data, value)``: the first position of ``value`` (-1 when absent), an Int64Scalar."""
    return call_function("index", [data], IndexOptions(value=_scalar(value, data)))


def sort_indices(data, sort_keys):
    """``pc.sort_indices(data, sort_keys=...)``: a stable sort, nulls at the end."""
    return call_function("sort_indices", [data], SortOptions(sort_keys))


def all_(arr):
    """``pc.all(arr)``: nulls skipped, null when fewer than one value."""
    return call_function("all", [arr], ScalarAggregateOptions())


def any_(arr):
    return call_function("any", [arr], ScalarAggregateOptions())


def is_finite(arr):
    return call_function("is_finite", [arr])


def equal(left, right):
    return call_function("equal", [left, right])


def and_(left, right):
    return call_function("and", [left, right])


def starts_with(strings, pattern):
    return call_function("starts_with", [strings], MatchSubstringOptions(pattern))


def match_substring_regex(strings, pattern):
    return call_function("match_substring_regex", [strings], MatchSubstringOptions(pattern))


def replace_substring_regex(strings, pattern, replacement):
    return call_function("replace_substring_regex", [strings], ReplaceSubstringOptions(pattern, replacement))
