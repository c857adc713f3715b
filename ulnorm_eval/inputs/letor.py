"""LETOR files (``grade [qid:Q] f:v ... [# comment]``) as qrels, and their score files as runs."""
from __future__ import annotations

import numpy as np

from .arrow import string_array  # not pa.array, which imports pandas (inputs/arrow.py)
from .text import check_text
from .errors import finite_float
from .trec import (BOM, InputError, Qrels, Run, check_duplicates, check_grades, columns, file_run_name, line_of,
                   read_bytes, refuse_reserved_id, to_float)

__all__ = ["is_letor", "read_letor", "read_letor_scores"]


def _first_fields(data: bytes) -> tuple:
    """(line number, fields) of the first line that is neither blank nor a comment ((1, []) if none)."""
    for lineno, raw in enumerate(data[:65536].removeprefix(BOM).split(b"\n"), 1):
        parts = raw.split()
        if parts and not parts[0].startswith(b"#"):
            return lineno, parts
    return 1, []


def is_letor(data: bytes) -> bool:
    """True when the first data line looks like ``grade [qid:Q] f:v ...`` rather than TREC qrels."""
    parts = _first_fields(data)[1]
    return len(parts) >= 2 and b":" in parts[1]


def read_letor(path: str, groups: str | None = None, data: bytes | None = None) -> Qrels:
    """LETOR rows ``grade [qid:Q] f:v ... [# comment]`` as qrels.

    Query groups come from the ``qid:`` column or, without it, from a LightGBM group-size file
    (``groups``, default ``PATH.query`` beside the data): consecutive rows form a query.  Documents
    are named by their 0-based row position within the query (``"0"``, ``"1"``, ...), which is how a
    score file refers to them.  Features are not read.
    """
    import os

    data = read_bytes(path) if data is None else data
    check_text(data, path)
    grades, qids, lines = [], [], []
    for lineno, raw in enumerate(data.removeprefix(BOM).split(b"\n"), 1):
        parts = raw.split(b"#", 1)[0].split()
        if not parts:
            continue
        grade = finite_float(parts[0], path, lineno, "grade")
        qid = None
        if len(parts) > 1 and parts[1].startswith(b"qid:"):
            try:
                qid = _qid(parts[1][4:].decode("utf-8"), path, lineno)
            except UnicodeDecodeError:
                raise InputError(path, lineno, "qid: is not valid UTF-8") from None
        grades.append(grade)
        qids.append(qid)
        lines.append(lineno)
    if not grades:
        raise InputError(path, 1, "empty file: no rows")
    if None in qids and any(qid is not None for qid in qids):
        raise InputError(path, lines[qids.index(None)], "row without qid: in a file that uses qid:")
    if None in qids:
        gpath = groups or (str(path) + ".query")
        if not os.path.exists(gpath):
            raise InputError(path, None, f"no qid: column and no group file {gpath} (give --groups)")
        sizes = _read_group_sizes(gpath)
        if sum(sizes) != len(grades):
            raise InputError(gpath, None, f"group sizes add up to {sum(sizes)} but {path} has {len(grades)} rows")
        qids = [str(index) for index, size in enumerate(sizes) for _ in range(size)]
    docs, seen, prev, pos = [], set(), None, 0
    for qid, line in zip(qids, lines):  # a query's rows are contiguous, as every LETOR tool assumes
        if qid != prev and qid in seen:
            raise InputError(path, line, f"rows of query {qid!r} are not contiguous")
        pos = pos + 1 if qid == prev else 0
        seen.add(qid)
        prev = qid
        docs.append(str(pos))
    grades, lines = np.asarray(grades, dtype=np.float64), np.asarray(lines, dtype=np.int64)
    check_grades(grades, path, lines)
    return Qrels(qid=string_array(qids), docid=string_array(docs), grade=grades, path=str(path), line=lines, letor=True)


def _read_group_sizes(path: str) -> list[int]:
    """LightGBM's group sizes: one positive integer per line."""
    cols, lines, _, _ = columns(read_bytes(path), 1, path, "group size", "no group sizes")
    sizes = to_float(cols[0], path, lines, "group size")
    bad = (sizes <= 0) | (sizes != np.trunc(sizes))
    if bad.any():
        i = int(np.argmax(bad))
        raise InputError(path, line_of(lines, i), f"group size {cols[0][i].as_py()!r} is not a positive integer")
    return sizes.astype(np.int64).tolist()


def read_letor_scores(path: str, qrels: Qrels, name: str | None = None, data: bytes | None = None) -> Run:
    """Scores for a LETOR file as a run.

    Either one score per line (row order of the LETOR file), or RankLib's ``qid idx score`` lines,
    where ``idx`` is the document's 0-based position within its query.
    """
    data = read_bytes(path) if data is None else data
    first, parts = _first_fields(data)
    width = len(parts) or 1
    if width not in (1, 3):
        raise InputError(path, first, "expected one score per line or 'qid idx score'")
    cols, lines, _, _ = columns(data, width, path, "score" if width == 1 else "qid idx score", "no scores")
    score = to_float(cols[-1], path, lines, "score")
    if width == 1:
        if len(score) != len(qrels):
            raise InputError(path, None, f"{len(score)} scores for {len(qrels)} LETOR rows")
        qid, docid = qrels.qid, qrels.docid
    else:
        qid, docid = _ranklib_rows(cols, lines, path, qrels)
        check_duplicates(qid, docid, path, lines, "the scores")
    return Run(qid=qid, docid=docid, score=score, rank=None, name=name or file_run_name(path),
               path=str(path), line=lines)


def _qid(qid: str, path: str, lineno: int) -> str:
    """The query id after ``qid:``: not empty, and not a name reserved for the summary row."""
    if not qid:
        raise InputError(path, lineno, "empty qid: (expected qid:ID)")
    refuse_reserved_id(qid, path, lineno)
    return qid


def _ranklib_rows(cols: list, lines, path: str, qrels: Qrels):
    """RankLib ``qid idx score`` rows as (qid, docid) columns; ``idx`` must name a document of the query.

    A document index outside the query would invent a document the LETOR file does not have.
    Queries absent from the LETOR file are kept (reported as ignored, like a run's).
    """
    import pyarrow.compute as pc

    sizes = {}
    if len(qrels.qid):
        counts = pc.value_counts(qrels.qid)
        sizes = dict(zip(counts.field("values").to_pylist(), counts.field("counts").to_pylist()))
    qids, docs = [], []
    for i, (qid, index) in enumerate(zip(cols[0].to_pylist(), cols[1].to_pylist())):
        line = line_of(lines, i)
        qid = _qid(qid.removeprefix("qid:"), path, line)
        try:
            idx = int(index.replace("_", "x"))  # Python's digit separators are no integer to RankLib
        except ValueError:
            raise InputError(path, line, f"document index {index!r} is not an integer (RankLib: qid idx score)") from None
        size = sizes.get(qid)
        if idx < 0 or (size is not None and idx >= size):
            raise InputError(path, line, f"document index {idx} is outside query {qid!r}"
                                       + (f" (it has {size} documents: 0..{size - 1})" if size else ""))
        qids.append(qid)
        docs.append(str(idx))
    return string_array(qids), string_array(docs)
