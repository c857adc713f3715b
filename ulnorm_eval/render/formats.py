"""Formatters of a Result, gathered in FORMATS (one function per format), and the per-query order.

Every formatter takes the Result and keyword options (``per_query``, ``names``, ``precision``, ...)
and returns the whole text, so that ``-o FILE`` can be written atomically and a failure half-way
leaves nothing behind.  Order is deterministic everywhere: runs as given, queries in natural
order (the Result's order), then ``all``; measures in ``-m`` order with their variants.
The formatters live by concern: :mod:`.text` (trec, tsv, csv), :mod:`.json_out` (json, jsonl and
the schema), :mod:`.table` (rich), :mod:`.values` (cells, NaN); named tables of compare and
queries: :mod:`.frames`; progress bar: :mod:`.progress`; registry tables: :mod:`.registry_tables`.
"""
from __future__ import annotations

import math
from collections.abc import MutableMapping
from importlib import import_module

__all__ = [
    "FORMATS", "JSON_SCHEMA", "format_trec", "format_table", "format_tsv", "format_csv", "format_json",
    "format_jsonl", "make_table", "json_document", "write_atomic", "sha256_file", "progress",
    "measures_markdown", "variants_markdown", "query_order", "caption", "BOUNDS_TEXT", "bounds_kind",
    "syntax", "PROGRESS_MIN_BYTES", "atomic_path",
]

# Where each name lives.  They are imported when first used (module ``__getattr__``, FORMATS'
# lookups): a command imports the formatter it prints with, not all six (the table's, the csv
# module, json and the registry tables are 3-5 ms of a 50-query evaluation's start-up).
_HOMES = {
    **dict.fromkeys(("JSON_SCHEMA", "format_json", "format_jsonl", "json_document", "sha256_file"), ".json_out"),
    **dict.fromkeys(("PROGRESS_MIN_BYTES", "progress"), ".progress"),
    **dict.fromkeys(("BOUNDS_TEXT", "bounds_kind", "measures_markdown", "syntax", "variants_markdown"),
                    ".registry_tables"),
    **dict.fromkeys(("caption", "format_table", "make_table"), ".table"),
    **dict.fromkeys(("format_csv", "format_trec", "format_tsv"), ".rows"),
    **dict.fromkeys(("atomic_path", "write_atomic"), ".files"),
}

_FORMATTERS = {"table": "format_table", "trec": "format_trec", "tsv": "format_tsv", "csv": "format_csv",
               "json": "format_json", "jsonl": "format_jsonl"}


def __getattr__(name):
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(_HOMES[name], __package__), name)
    globals()[name] = value  # once
    return value


class _Formatters(MutableMapping):
    """FORMATS: format name -> its formatter (the function itself), imported on first lookup; a dict
    in every other way (a test or a tool may replace a formatter)."""

    def __init__(self):
        self._table = dict.fromkeys(_FORMATTERS)  # None until first looked up

    def __getitem__(self, fmt):
        value = self._table[fmt]  # KeyError for a format that is not one, as a dict
        if value is None:
            value = self._table[fmt] = __getattr__(_FORMATTERS[fmt])
        return value

    def __setitem__(self, fmt, formatter):
        self._table[fmt] = formatter

    def __delitem__(self, fmt):
        del self._table[fmt]

    def __iter__(self):
        return iter(self._table)

    def __len__(self):
        return len(self._table)


FORMATS = _Formatters()


# --------------------------------------------------------------------------- per-query order

def query_order(result, metric=None, descending: bool = False, head: int | None = None) -> list:
    """Queries for per-query rows: natural order, or sorted by ``metric`` of the first run (``--sort``;
    ties and queries the first run lacks keep natural order, NaN last), then the first ``head``."""
    from ..pipeline.ordering import natural_order

    qids = natural_order({qid for first_run in result.runs for qid in first_run.qids})
    if metric is not None and result.runs:
        first_run = result.runs[0]
        val = dict(zip(first_run.qids, first_run.values[metric].tolist()))

        def key(qid):
            value = val.get(qid, math.nan)
            return (1, 0.0) if math.isnan(value) else (0, -value if descending else value)

        qids = sorted(qids, key=key)
    return qids[:head] if head is not None else qids
