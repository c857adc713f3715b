"""Formatters of a Result, gathered in FORMATS (one function per format), and the per-query order.
Each returns the whole text (``-o FILE`` is written atomically); runs as given, queries in natural
order then ``all``, measures in ``-m`` order with their variants.
"""
from __future__ import annotations

import math

from .rows import format_csv, format_trec, format_tsv

__all__ = ["FORMATS", "query_order"]


# json and table each import what only they use (rich for the table): a command imports the one it prints
def format_table(result, **options) -> str:
    from .table import format_table as table

    return table(result, **options)


def format_json(result, **options) -> str:
    from .json_out import format_json as json

    return json(result, **options)


def format_jsonl(result, **options) -> str:
    from .json_out import format_jsonl as jsonl

    return jsonl(result, **options)


FORMATS = {"table": format_table, "trec": format_trec, "tsv": format_tsv, "csv": format_csv,
           "json": format_json, "jsonl": format_jsonl}


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
