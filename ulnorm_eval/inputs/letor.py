"""LETOR files (``grade [qid:Q] f:v ... [# comment]``) as qrels, and their score files as runs.

Query groups come from the ``qid:`` column or from a LightGBM group-size file; documents are named
by their 0-based row position within the query, which is how score files refer to them.
"""
from __future__ import annotations

import math

import numpy as np

from .arrow import string_array  # not pa.array, which imports pandas (inputs/arrow.py)
from .text import check_text
from .errors import strict_float, strict_int
from .trec import InputError, Qrels, Run, check_duplicates, check_grades, file_run_name, read_bytes, refuse_reserved_id

__all__ = ["is_letor", "read_letor", "read_letor_scores"]

def is_letor(data: bytes) -> bool:
    """True when the first data line looks like ``grade [qid:Q] f:v ...`` rather than TREC qrels."""
    for raw in data[:65536].lstrip(b"\xef\xbb\xbf").split(b"\n"):
        parts = raw.split()
        if not parts or parts[0].startswith(b"#"):
            continue
        return len(parts) >= 2 and (b":" in parts[1])
    return False


def read_letor(path: str, groups: str | None = None, data: bytes | None = None) -> Qrels:
    """LETOR rows ``grade [qid:Q] f:v ... [# comment]`` as qrels.

    Query groups come from the ``qid:`` column or, without it, from a LightGBM group-size file
    (``groups``, default ``PATH.query`` beside the data): consecutive rows form a query.  Documents
    are named by their 0-based row position within the query (``"0"``, ``"1"``, ...), which is how a
    score file refers to them.  Features are not read.
    """
    import os

    data = _text(path, data)
    grades, qids, lines = [], [], []
    for lineno, raw in enumerate(data.split(b"\n"), 1):
        body = raw.split(b"#", 1)[0]
        parts = body.split()
        if not parts:
            continue
        grade = _finite(parts[0], path, lineno, "grade")
        qid = None
        if len(parts) > 1 and parts[1].startswith(b"qid:"):
            qid = _qid(parts[1][4:], path, lineno)
        grades.append(grade)
        qids.append(qid)
        lines.append(lineno)
    if not grades:
        raise InputError(path, 1, "empty file: no rows")
    have_qid = [qid is not None for qid in qids]
    if any(have_qid) and not all(have_qid):
        index = have_qid.index(False)
        raise InputError(path, lines[index], "row without qid: in a file that uses qid:")
    if not all(have_qid):
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
    sizes = []
    for lineno, raw in enumerate(read_bytes(path).split(b"\n"), 1):
        text = raw.strip()
        if not text:
            continue
        try:
            value = strict_int(text)
        except ValueError:
            raise InputError(path, lineno, f"group size {text.decode(errors='replace')!r} is not an integer") from None
        if value <= 0:
            raise InputError(path, lineno, "group size must be positive")
        sizes.append(value)
    if not sizes:
        raise InputError(path, 1, "empty group file")
    return sizes


def read_letor_scores(path: str, qrels: Qrels, name: str | None = None, data: bytes | None = None) -> Run:
    """Scores for a LETOR file as a run.

    Either one score per line (row order of the LETOR file), or RankLib's ``qid idx score`` lines,
    where ``idx`` is the document's 0-based position within its query.
    """
    data = _text(path, data)
    rows, lines = [], []
    width = None
    for lineno, raw in enumerate(data.split(b"\n"), 1):
        parts = raw.split()
        if not parts or parts[0].startswith(b"#"):
            continue
        if width is None:
            width = len(parts)
            if width not in (1, 3):
                raise InputError(path, lineno, "expected one score per line or 'qid idx score'")
        if len(parts) != width:
            raise InputError(path, lineno, f"expected {width} fields, found {len(parts)}")
        rows.append(parts)
        lines.append(lineno)
    if not rows:
        raise InputError(path, 1, "empty file: no scores")
    scores = [_finite(parts[-1], path, line, "score") for parts, line in zip(rows, lines)]
    if width == 1:
        if len(scores) != len(qrels):
            raise InputError(path, None, f"{len(scores)} scores for {len(qrels)} LETOR rows")
        qid, docid = qrels.qid, qrels.docid
    else:
        qid, docid = _ranklib_rows(rows, lines, path, qrels)
        check_duplicates(qid, docid, path, np.asarray(lines), "the scores")
    score = np.asarray(scores, dtype=np.float64)
    return Run(qid=qid, docid=docid, score=score, rank=None, name=name or file_run_name(path),
               path=str(path), line=np.asarray(lines, dtype=np.int64))


def _text(path: str, data: bytes | None) -> bytes:
    """The file's bytes (``data`` when already read), checked as text, without a UTF-8 byte-order mark."""
    data = read_bytes(path) if data is None else data
    check_text(data, path)
    return data.removeprefix(b"\xef\xbb\xbf")


def _finite(field: bytes, path: str, lineno: int, what: str) -> float:
    try:
        value = strict_float(field)
    except ValueError:
        raise InputError(path, lineno, f"{what} {field.decode(errors='replace')!r} is not a number") from None
    if not math.isfinite(value):
        raise InputError(path, lineno, f"{what} is not finite")
    return value


def _qid(raw: bytes, path: str, lineno: int) -> str:
    """The query id after ``qid:``: non-empty UTF-8, and not a name reserved for the summary row."""
    try:
        qid = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(path, lineno, "qid: is not valid UTF-8") from None
    if not qid:
        raise InputError(path, lineno, "empty qid: (expected qid:ID)")
    refuse_reserved_id(qid, path, lineno)
    return qid


def _ranklib_rows(rows: list, lines: list, path: str, qrels: Qrels):
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
    for parts, line in zip(rows, lines):
        qid = _qid(parts[0].removeprefix(b"qid:"), path, line)
        try:
            idx = int(parts[1])
        except ValueError:
            raise InputError(path, line, f"document index {parts[1].decode(errors='replace')!r} is not an "
                                       "integer (RankLib: qid idx score)") from None
        size = sizes.get(qid)
        if idx < 0 or (size is not None and idx >= size):
            raise InputError(path, line, f"document index {idx} is outside query {qid!r}"
                                       + (f" (it has {size} documents: 0..{size - 1})" if size else ""))
        qids.append(qid)
        docs.append(str(idx))
    return string_array(qids), string_array(docs)
