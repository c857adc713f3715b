"""Qrels and runs from in-memory objects, as the file readers' :class:`~ulnorm_eval.inputs.trec.Qrels`
and :class:`~ulnorm_eval.inputs.trec.Run` (the numbers those of the same data read from a file).

Columns ``query_id, doc_id, relevance|score`` (ir_measures) or ``qid, docno, label|score`` (PyTerrier)
(``docid`` and ``rel`` accepted; a run's ``rank`` kept for ``ties='rank'``); dicts ``{qid: {docid:
value}}`` (pytrec_eval, read without pandas).
"""
from __future__ import annotations

import numpy as np

from .arrow import string_array
from .trec import EXACT, RESERVED, InputError, Qrels, Run, check_duplicates, check_grades, refuse_reserved_id

__all__ = ["QUERY_COLUMNS", "DOC_COLUMNS", "GRADE_COLUMNS", "is_frame", "is_nested_dict", "qrels_from_object",
           "run_from_object", "from_columns"]

# Integers given as numbers (a DataFrame's int64 column, a dict's ints) beyond 2^53 would become float64
# silently: distinct scores 2^53 and 2^53 + 1 would tie (ordered by docid instead).
INEXACT = ("is an integer beyond 2^53, which float64 (the type of every score and grade here) cannot hold exactly: "
           "distinct values would become equal; scale them")
QUERY_COLUMNS = ("query_id", "qid")
DOC_COLUMNS = ("doc_id", "docno", "docid")
GRADE_COLUMNS = ("relevance", "label", "rel")


def is_frame(obj) -> bool:
    """A pandas DataFrame (checked without importing pandas)."""
    return type(obj).__name__ == "DataFrame" and hasattr(obj, "columns")


def is_nested_dict(obj) -> bool:
    """``{qid: {docid: number}}`` (pytrec_eval's qrels and runs)."""
    if not isinstance(obj, dict) or not obj:
        return False
    return all(isinstance(inner, dict) for inner in obj.values()) and all(
        not isinstance(value, (dict, list, tuple, str)) for inner in obj.values() for value in inner.values())


def _column(frame, choices: tuple, what: str, name: str) -> str:
    for choice in choices:
        if choice in frame.columns:
            if list(frame.columns).count(choice) > 1:  # frame[choice] would be a frame: which one is meant?
                raise InputError(name, None, f"{what} has the column {choice!r} twice: which one is meant?")
            return choice
    raise InputError(name, None, f"{what} needs a column {' or '.join(repr(choice) for choice in choices)} "
                                 f"(has {', '.join(map(str, frame.columns))})")


def _frame_columns(frame, kind: str, name: str) -> tuple:
    """(query ids and document ids as ``str``, the values, a run's ranks or None) of a DataFrame."""
    import pandas as pd

    qid_column, doc_column, value_column = (_column(frame, choices, kind, name) for choices in (
        QUERY_COLUMNS, DOC_COLUMNS, GRADE_COLUMNS if kind == "qrels" else ("score",)))
    for col, what in ((qid_column, "query id"), (doc_column, "document id")):
        gone = frame[col].isna().to_numpy()
        if gone.any():  # str() would make it the id 'nan' or 'None'
            raise InputError(name, None, f"row {int(gone.argmax())}: {col}: missing {what} (NaN or None)")
    _require_real(frame, value_column, name)
    values, rank = pd.to_numeric(frame[value_column], errors="coerce"), None
    bad = values.isna().to_numpy()
    if bad.any():
        index = int(bad.argmax())
        raise InputError(name, None, f"row {index}: {value_column} {frame[value_column].iloc[index]!r} is not a number")
    if kind == "run" and "rank" in frame.columns:  # read by ties='rank' only, as the rank column of a file
        rank = pd.to_numeric(frame["rank"], errors="coerce")
        bad = (rank.isna() | (rank != rank.round())).to_numpy()
        if bad.any():
            index = int(bad.argmax())
            raise InputError(name, None, f"row {index}: rank {frame['rank'].iloc[index]!r} is not an integer")
        rank = rank.astype("int64")
    return frame[qid_column].astype(str).tolist(), frame[doc_column].astype(str).tolist(), values, rank


def _missing_id(value) -> bool:
    """None, NaN or pandas' NA as an id: str() would make it the id 'None' or 'nan'."""
    if value is None:
        return True
    try:
        return bool(value != value)  # NaN (float or numpy); pd.NA raises on bool()
    except TypeError:
        return True


def _not_real(value) -> bool:
    """A value that is no real number: complex (its imaginary part would be dropped), a date or a
    duration (read as nanoseconds), text, None."""
    import numbers

    return isinstance(value, (bool, str, bytes)) or not isinstance(value, numbers.Real)


def _from_dict(obj: dict, kind: str, name: str):
    """The query ids, document ids (str) and values of a ``{qid: {docid: value}}`` dict, in order."""
    value = "relevance" if kind == "qrels" else "score"
    qids, docids, values = [], [], []
    for qid, docs in obj.items():
        if _missing_id(qid):
            raise InputError(name, None, f"{{qid: ...}}: missing query id ({qid!r})")
        for docno, grade_or_score in docs.items():
            if _missing_id(docno):
                raise InputError(name, None, f"query {str(qid)!r}: missing document id ({docno!r})")
            if _not_real(grade_or_score) or (isinstance(grade_or_score, int) and abs(grade_or_score) > EXACT):
                why = "is not a number" if _not_real(grade_or_score) else INEXACT
                raise InputError(name, None, f"query {str(qid)!r}, document {str(docno)!r}: {value} {grade_or_score!r} {why}")
            qids.append(str(qid))
            docids.append(str(docno))
            values.append(grade_or_score)
    return qids, docids, values


def _require_real(frame, col: str, name: str) -> None:
    """Refuse a column of complex numbers, dates or durations, which pandas' to_numeric turns into
    numbers (nanoseconds; the imaginary part dropped later) instead of refusing them."""
    values = frame[col]
    kind = values.dtype.kind
    if kind == "O":
        bad = np.fromiter((_not_real(value) and not isinstance(value, str) for value in values), bool, len(values))
    else:  # integers, floats and booleans are numbers; complex, datetime, timedelta, ... are not
        bad = np.full(len(values), kind not in "iufb")
    if bad.any():
        index = int(bad.argmax())
        raise InputError(name, None, f"row {index}: {col} {values.iloc[index]!r} is not a number")


# kind -> (what it is called, the dict it may be, the refusal of an empty one)
_KINDS = {"qrels": ("qrels", "{qid: {docid: relevance}}", "empty qrels: no judgements"),
          "run": ("a run", "{qid: {docid: score}}", "empty run: no ranked documents")}


def _from_object(obj, kind: str, name: str):
    """Qrels or a run (``kind``) from a DataFrame or a ``{qid: {docid: value}}`` dict; an input error
    for any other object or an empty one."""
    what, nested, empty = _KINDS[kind]
    if is_frame(obj):
        columns = _frame_columns(obj, kind, name)
    elif is_nested_dict(obj):
        columns = (*_from_dict(obj, kind, name), None)
    else:
        raise InputError(name, None, f"cannot read {what} from a {type(obj).__name__}: give a path, a DataFrame "
                                     f"or {nested}")
    if len(columns[0]) == 0:
        raise InputError(name, None, empty)
    return from_columns(kind, *columns, name=name)


def qrels_from_object(obj, name: str = "<qrels>") -> Qrels:
    """Qrels from a DataFrame (see the module's column names) or ``{qid: {docid: relevance}}``."""
    return obj if isinstance(obj, Qrels) else _from_object(obj, "qrels", name)


def run_from_object(obj, name: str = "run") -> Run:
    """A run from a DataFrame (see the module's column names) or ``{qid: {docid: score}}``."""
    return obj if isinstance(obj, Run) else _from_object(obj, "run", name)


def from_columns(kind: str, qids: list, docids: list, values, ranks=None, *, name: str):
    """Qrels (``kind`` "qrels") or a run from the query ids and document ids (lists of ``str``), the
    grades or scores (numbers) and a run's ranks (integers, optional) of each row, in order (a
    DataFrame's columns, a dict of dicts' items, ir_datasets' qrels), checked: no 'all' query, no
    lone surrogate, no integer beyond 2^53, no infinity, no repeated (query, document)."""
    what = "relevance" if kind == "qrels" else "score"
    if RESERVED in qids:
        refuse_reserved_id(RESERVED, name, None, row=qids.index(RESERVED))
    qid, docid = _text_array(qids, name, "query id"), _text_array(docids, name, "document id")
    raw = np.asarray(values)
    beyond = np.flatnonzero(np.abs(raw.astype(object)) > EXACT) if raw.dtype.kind in "iu" else ()
    if len(beyond):
        raise InputError(name, None, f"row {beyond[0]}: {what} {int(raw[beyond[0]])} {INEXACT}")
    values = raw.astype(np.float64)
    if not np.isfinite(values).all():
        raise InputError(name, None, f"{'relevance' if kind == 'qrels' else 'scores'} must be finite")
    check_duplicates(qid, docid, name, None, f"the {kind}")
    if kind == "qrels":
        check_grades(values, name, None)
        return Qrels(qid=qid, docid=docid, grade=values, path=name)
    rank = np.asarray(ranks, dtype=np.int64) if ranks is not None else None
    return Run(qid=qid, docid=docid, score=values, rank=rank, name=name, path=name)


def _text_array(texts: list, path: str, what: str):
    """The ids as an Arrow string array; a lone surrogate (U+D800-U+DFFF, which no UTF-8 holds: a
    mis-decoded file name, surrogateescape) is an input error naming the row."""
    try:
        return string_array(texts)
    except UnicodeEncodeError:
        row = next(i for i, text in enumerate(texts) if text.encode("utf-8", "replace").decode() != text)
        raise InputError(path, None, f"row {row}: {what} {texts[row]!r} holds a lone surrogate, which is no text "
                                     "(UTF-8 cannot write it): decode the ids with errors='replace', or fix them") from None
