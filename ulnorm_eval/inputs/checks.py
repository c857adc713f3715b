"""Checks across inputs, made once everything is read: unique run names, a run sharing no query with
the qrels, results that overflow, a qrels query a run lacks (trec_eval 10's exit).
"""
from __future__ import annotations

import math

from .errors import InputError

__all__ = ["unique_names", "rename_runs", "disjoint_error", "require_finite", "missing_query"]


def unique_names(names: list) -> list:
    """``names`` with every repeated name suffixed ``#i`` (1-based position in the list)."""
    names = list(names)
    if len(set(names)) == len(names):
        return names
    return [f"{name}#{index + 1}" if names.count(name) > 1 else name for index, name in enumerate(names)]


def rename_runs(results: list) -> None:
    """Make the names of evaluated runs (objects with ``.name``) unique, in place."""
    for run, name in zip(results, unique_names([run.name for run in results])):
        run.name = name


def disjoint_error(path: str, qrels_path: str, run_qids: list, judged) -> InputError:
    """The one refusal of a run sharing no query with the qrels (every command and the library).
    ``run_qids``: the run's query ids in natural order.  Ids are compared as text, exactly; when the
    two sides hold the same numbers written differently (a float column's '1.0' against '1', '007'
    against '7') the message says so."""
    shown = ", ".join(repr(qid) for qid in run_qids[:3]) + (", ..." if len(run_qids) > 3 else "")
    return InputError(path, None, f"shares no query with {qrels_path}"
                                  + (f" (the run has {shown})" if shown else "")
                                  + ": the wrong qrels?" + _number_hint(run_qids, judged)
                                  + " (--allow-disjoint evaluates it anyway, scoring 0)")


def _number_hint(run_qids, judged) -> str:
    def numbers(ids):
        out = {}
        for qid in ids:
            try:
                key = float(qid)
            except (TypeError, ValueError):
                continue
            if math.isfinite(key):
                out.setdefault(key, qid)
        return out

    # repr shows an invisible character (\u200b, \xa0, \ufeff)
    for key, why in ((numbers, "a float or zero-padded id column? convert both to the same text first"),
                     (visible, "an invisible character or a non-ASCII space")):
        mine, theirs = key(run_qids), key(judged)
        both = [k for k in mine if k in theirs]
        if both:
            return (f" Query ids are compared as text, exactly: the run's {mine[both[0]]!r} is not the qrels' "
                    f"{theirs[both[0]]!r} ({why})")
    return ""


def visible(ids) -> dict:
    """id without format and space characters (zero-width space, BOM, no-break space) -> the id."""
    import unicodedata

    out = {}
    for qid in list(ids)[:100_000]:
        shown = "".join(char for char in str(qid) if unicodedata.category(char)[0] not in "CZ")
        if shown:
            out.setdefault(shown, qid)
    return out


def require_finite(result) -> None:
    """Refuse an infinite value anywhere, or NaN in a plain measure (NaN marks an undefined variant;
    under ``--trec-nan`` also trec_eval's -nan, which a plain measure may then hold)."""
    import numpy as np

    nan_ok = getattr(getattr(result, "options", None), "trec_nan", False)
    for run in result.runs:
        for metric in result.metrics:
            rec = metric.measure.record
            if rec is not None and rec.value == "text" and not metric.variant:
                continue  # relstring, runid: text echoed from the input, not a number
            values = np.asarray(run.values[metric], dtype=np.float64)
            bad = np.isinf(values) if metric.variant or nan_ok else ~np.isfinite(values)
            if bad.any():
                qid = run.qids[int(np.argmax(bad))]
            elif math.isinf(run.mean[metric]) or (not metric.variant and not nan_ok and math.isnan(run.mean[metric]) and len(values)):
                qid = "all"
            else:
                continue
            raise InputError(result.qrels_path or "<qrels>", None,
                             f"{metric} of {run.name} for query {qid!r} overflows (grades too large for its gain "
                             "or bounds; the limits are in docs/errors.md)")


def missing_query(result_runs, paths) -> tuple | None:
    """(index of the first run, the query, the error) where trec_eval 10 without ``-c`` (and without
    ``--run-queries-only``) exits (4): at the first qrels query in qid byte order with no results in
    the run, after the ``-q`` lines of the queries before it; or None."""
    for index, (run, path) in enumerate(zip(result_runs, paths)):
        if run.missing_qids:
            qid = min(run.missing_qids)  # str order = UTF-8 byte order
            more = f" (and {len(run.missing_qids) - 1} more)" if len(run.missing_qids) > 1 else ""
            return index, qid, (f"{path}: qrels query {qid}{more} has no results: trec_eval 10 exits there (4), after "
                                "printing the -q lines of the queries before it, and so does --trec; add -c to score it "
                                "0, or --run-queries-only to evaluate only the run's queries (trec_eval 9)")
    return None
