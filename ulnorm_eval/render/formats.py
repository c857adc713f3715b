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

import contextlib
import math
import os
import tempfile

from .json_out import JSON_SCHEMA, format_json, format_jsonl, json_document, sha256_file
from .progress import PROGRESS_MIN_BYTES, progress
from .registry_tables import BOUNDS_TEXT, bounds_kind, measures_markdown, syntax, variants_markdown
from .table import caption, format_table, make_table
from .text import format_csv, format_trec, format_tsv

__all__ = [
    "FORMATS", "JSON_SCHEMA", "format_trec", "format_table", "format_tsv", "format_csv", "format_json",
    "format_jsonl", "make_table", "json_document", "write_atomic", "sha256_file", "progress",
    "measures_markdown", "variants_markdown", "query_order", "caption", "BOUNDS_TEXT", "bounds_kind",
    "syntax", "PROGRESS_MIN_BYTES", "atomic_path",
]

FORMATS = {
    "table": format_table, "trec": format_trec, "tsv": format_tsv, "csv": format_csv,
    "json": format_json, "jsonl": format_jsonl,
}


# --------------------------------------------------------------------------- writing

@contextlib.contextmanager
def atomic_path(path: str, suffix: str = ""):
    """Yield a path to write in place of ``path``; on success it becomes ``path`` by a rename, on
    any error it is removed: never a half-written file.

    The file gets the permissions a plain ``open(path, 'w')`` would give (an existing file's mode, else
    0666 less the umask), not mkstemp's private 0600.  Something that exists and is not a regular file
    (``/dev/null``, ``/dev/stdout``, a FIFO) is yielded itself: renaming over it would replace it.
    A symbolic link is followed, so the link stays and its target is replaced.
    """
    import stat

    path = os.path.realpath(path)
    try:
        special = not stat.S_ISREG(os.stat(path).st_mode)
    except FileNotFoundError:
        special = False
    if special:
        yield path
        return
    d = os.path.dirname(path) or "."
    try:
        mode = os.stat(path).st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(prefix=".ulnorm-", suffix=suffix, dir=d)
    os.close(fd)
    try:
        yield tmp
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_atomic(path: str, text: str) -> None:
    """Write ``text`` to ``path`` atomically (see :func:`atomic_path`)."""
    with atomic_path(path) as target, open(target, "w", encoding="utf-8", newline="") as fh:
        fh.write(text)


# --------------------------------------------------------------------------- per-query order

def query_order(result, metric=None, descending: bool = False, head: int | None = None) -> list:
    """Queries for per-query rows: natural order, or sorted by ``metric`` of the first run (``--sort``;
    ties and queries the first run lacks keep natural order, NaN last), then the first ``head``."""
    from ..pipeline.ordering import natural_order

    qids = natural_order({q for rr in result.runs for q in rr.qids})
    if metric is not None and result.runs:
        rr = result.runs[0]
        val = dict(zip(rr.qids, rr.values[metric].tolist()))

        def key(q):
            v = val.get(q, math.nan)
            return (1, 0.0) if math.isnan(v) else (0, -v if descending else v)

        qids = sorted(qids, key=key)
    return qids[:head] if head is not None else qids
