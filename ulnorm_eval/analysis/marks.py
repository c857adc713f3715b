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

__all__ = ["pairwise_marks", "baseline_marks", "baseline_pairs"]


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


_NEGATED = ("diff", "effect", "statistic")


def baseline_pairs(pairs, baseline: str, correction: str, alpha: float):
    """The pairs table against a baseline (``compare --baseline`` in every format): only the pairs
    (run, baseline) of each metric, oriented run - baseline (differences, effects and statistics
    negated and the interval mirrored where the table had baseline - run), ``p_adj`` corrected over
    those k - 1 pairs and ``significant`` at ``alpha``, as :func:`baseline_marks` decides the paper
    table's marks."""
    from .table import Table

    rows = [r._asdict() for r in pairs.itertuples(index=False)]
    if baseline not in {r["run_a"] for r in rows} | {r["run_b"] for r in rows}:
        raise ValueError(f"baseline {baseline!r} is not one of the runs")
    out = []
    for m in dict.fromkeys(r["metric"] for r in rows):
        mine = [dict(r) for r in rows if r["metric"] == m and baseline in (r["run_a"], r["run_b"])]
        for r in mine:
            if r["run_a"] == baseline:
                r["run_a"], r["run_b"] = r["run_b"], baseline
                for k in _NEGATED:
                    if k in r and r[k] is not None:
                        r[k] = -r[k]
                if "ci_low" in r and "ci_high" in r:
                    r["ci_low"], r["ci_high"] = -r["ci_high"], -r["ci_low"]
        p_adj = stats.adjust(np.asarray([r["p"] for r in mine], dtype=np.float64), correction)
        for r, p in zip(mine, p_adj):
            r["p_adj"] = float(p)
            r["significant"] = bool(not np.isnan(p) and p < alpha)
        out.extend(mine)
    cols = list(pairs.columns)
    return Table({c: [r[c] for r in out] for c in cols}, {c: pairs.kinds[c] for c in cols})
