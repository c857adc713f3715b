"""Formatters of a Result, gathered in FORMATS (one function per format), and the per-query order.
Each returns the whole text (``-o FILE`` is written atomically); runs as given, queries in natural
order then ``all``, measures in ``-m`` order with their variants."""
from __future__ import annotations

import math

from .rows import format_csv, format_trec, format_tsv

__all__ = ["FORMATS", "query_order"]


def _lazy(module: str, name: str):
    """A formatter imported when first called: json and table import what only they use (rich for the
    table), so a command imports the one it prints."""
    def formatter(result, **options) -> str:
        import importlib

        return getattr(importlib.import_module(f".{module}", __package__), name)(result, **options)
    return formatter


FORMATS = {"table": _lazy("table", "format_table"), "trec": format_trec, "tsv": format_tsv, "csv": format_csv,
           "json": _lazy("json_out", "format_json"), "jsonl": _lazy("json_out", "format_jsonl")}


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
