"""Which runs a run is significantly better (or worse) than, per metric: the superscripts of a paper table.

Two modes, from the pairs of :func:`ulnorm_eval.analysis.compare.compare`:

- pairwise (ranx's report style): run A is marked with run B's letter when the pair (A, B) is
  significant (its p-value corrected over all pairs of the metric is below alpha, as in the
  ``pairs`` table) and A's mean is higher;
- against a baseline: only the pairs (run, baseline) are tested, so the correction runs over those
  k - 1 p-values (``stats.adjust``); a run is ``better`` or ``worse`` when its corrected p-value is
  below alpha, by the sign of its mean difference.
"""
from __future__ import annotations

import numpy as np

from . import stats

__all__ = ["pairwise_marks", "baseline_marks"]


def pairwise_marks(pairs, runs: list, metrics: list) -> dict:
    """``{(run, metric): [runs it is significantly better than, in run order]}``."""
    out = {(r, m): [] for r in runs for m in metrics}
    for row in pairs.itertuples(index=False):
        if not bool(row.significant) or row.diff == 0 or np.isnan(row.diff):
            continue
        win, lose = (row.run_a, row.run_b) if row.diff > 0 else (row.run_b, row.run_a)
        out[(win, row.metric)].append(lose)
    order = {r: i for i, r in enumerate(runs)}
    return {k: sorted(v, key=order.__getitem__) for k, v in out.items()}


def baseline_marks(pairs, runs: list, metrics: list, baseline: str, correction: str, alpha: float) -> dict:
    """``{(run, metric): (difference run - baseline, corrected p, 'better' | 'worse' | '')}`` for every run
    but the baseline; p is corrected over the run-baseline pairs of the metric."""
    if baseline not in runs:
        raise ValueError(f"baseline {baseline!r} is not one of the runs ({', '.join(runs)})")
    out = {}
    for m in metrics:
        others, diffs, ps = [], [], []
        for row in pairs.itertuples(index=False):
            if row.metric != m or baseline not in (row.run_a, row.run_b):
                continue
            other = row.run_b if row.run_a == baseline else row.run_a
            others.append(other)
            diffs.append(-row.diff if row.run_a == baseline else row.diff)
            ps.append(row.p)
        p_adj = stats.adjust(np.asarray(ps, dtype=np.float64), correction)
        for r, d, p in zip(others, diffs, p_adj):
            sig = not np.isnan(p) and p < alpha and d != 0
            out[(r, m)] = (float(d), float(p), ("better" if d > 0 else "worse") if sig else "")
    return out
