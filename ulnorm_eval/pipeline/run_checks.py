"""The overflow checks of the analyses (compare, queries, nrg; docs/errors.md); a run sharing no query
with the qrels is refused by the orchestrator (``refuse_disjoint``), repeated run names are renamed
by the commands (``#1``, ``#2``... by position):

* a value that overflows (``nDCG(dcg='exp-log2')`` with grades >= 1024: 2^1024 is not a double)
  is refused with the measure, instead of printing ``inf``/``nan`` as a number.

Nothing is imported at module level: the commands import this module before reading any input.
"""
from __future__ import annotations

__all__ = ["refuse_non_finite_frame", "refuse_non_finite_means", "require_finite_gains"]


def require_finite_gains(qrels, measures, qrels_path: str, rel_level: float = 1) -> None:
    """Refuse, before evaluating, a measure whose gain of the qrels' largest grade is not a finite
    double (``2^grade - 1`` under ``dcg='exp-log2'`` for grades >= 1024): its values and bounds
    would be ``inf``/``nan``.  ``measures``: names or Metric objects (None: the defaults)."""
    import numpy as np

    from . import evaluate as api

    grade = np.asarray(getattr(qrels, "grade", []), dtype=np.float64)
    if not grade.size:
        return
    top = float(grade.max())
    for metric in api.resolve_metrics(measures, []):
        rec = metric.measure.record
        if rec is None or rec.gain is None:
            continue
        rel = metric.measure.get("rel")
        gain = np.asarray(rec.gain(np.array([top]), metric.measure, rel_level if rel is None else rel, top), dtype=np.float64)
        if not np.all(np.isfinite(gain)):
            _overflow(qrels_path, f"{metric.measure}: the gain of grade {top:g}")


def refuse_non_finite_means(cmp, qrels_path: str) -> None:
    """compare: a mean that is infinite, or NaN for a plain measure, came from an overflow."""
    import math

    plain = {str(entry) for entry in cmp.metrics if not entry.variant}
    systems = cmp.tables["systems"]
    for run, metric, mean in zip(systems["run"], systems["metric"], systems["mean"]):
        if math.isinf(mean) or (math.isnan(mean) and metric in plain):
            _overflow(qrels_path, f"{metric} of {run}")


def refuse_non_finite_frame(frame, columns, qrels_path: str) -> None:
    """queries: E, IUB, WLB or a run's mean that is not finite came from an overflow."""
    import numpy as np

    for column in columns:
        if column not in frame.columns:
            continue
        bad = ~np.isfinite(frame[column].to_numpy(dtype=np.float64))
        if bad.any():
            index = int(np.argmax(bad))
            _overflow(qrels_path,
                      f"{column} of {frame['measure'].iloc[index]} for query {frame['query'].iloc[index]!r}")


def _overflow(qrels_path: str, what: str):
    from ..inputs.errors import InputError

    raise InputError(qrels_path or "<qrels>", None, f"{what} overflows (grades too large for its gain or bounds; "
                                                    "the limits are in docs/errors.md)")
