"""Which runs a run is significantly better (or worse) than, per metric, from the pairs of
:func:`ulnorm_eval.analysis.compare.compare`: the superscripts of a paper table (docs/comparing.md), pairwise
(ranx's report style: the pair's p-value corrected over all pairs of the metric) or against a baseline (the
correction over the k - 1 pairs with it)."""
from __future__ import annotations

import numpy as np

from . import stats

__all__ = ["pairwise_marks", "baseline_marks", "baseline_pairs", "against_baseline"]


def pairwise_marks(pairs, runs: list, metrics: list, lower_better=()) -> dict:
    """``{(run, metric): [runs it is significantly better than, in run order]}``; better is the higher
    mean, the lower for the metrics named in ``lower_better`` (compare's ``meta['lower_better']``)."""
    out = {(run, metric): [] for run in runs for metric in metrics}
    for row in pairs.itertuples(index=False):
        if not bool(row.significant) or row.diff == 0 or np.isnan(row.diff):
            continue
        win, lose = (row.run_a, row.run_b) if (row.diff > 0) != (row.metric in lower_better) else (row.run_b, row.run_a)
        out[(win, row.metric)].append(lose)
    order = {run: index for index, run in enumerate(runs)}
    return {key: sorted(marked, key=order.__getitem__) for key, marked in out.items()}


def baseline_marks(against, lower_better=()) -> dict:
    """``{(run, metric): (difference run - baseline, corrected p, 'better' | 'worse' | '')}`` for every run
    but the baseline, read from :func:`baseline_pairs`' table (p corrected over the run-baseline pairs);
    for the metrics named in ``lower_better`` a negative difference is the better."""
    return {(row.run_a, row.metric): (float(row.diff), float(row.p_adj),
                                      ("better" if (row.diff > 0) != (row.metric in lower_better) else "worse")
                                      if row.significant and row.diff != 0 else "")
            for row in against.itertuples(index=False)}


def against_baseline(comparison, baseline: str):
    """``comparison`` with the run ``baseline`` (a run's name) set: its ``meta['baseline']``, and the pairs
    against it, corrected over them (:func:`baseline_pairs`), as the table ``baseline_pairs``: what
    ``compare --baseline`` prints and what the paper table's marks read."""
    import dataclasses

    against = baseline_pairs(comparison.tables["pairs"], baseline, comparison.meta["correction"], comparison.meta["alpha"])
    return dataclasses.replace(comparison, tables={**comparison.tables, "baseline_pairs": against},
                               meta={**comparison.meta, "baseline": baseline})


_NEGATED = ("diff", "effect", "statistic")


def baseline_pairs(pairs, baseline: str, correction: str, alpha: float):
    """The pairs table against a baseline (``compare --baseline`` in every format): only the pairs
    (run, baseline) of each metric, oriented run - baseline (differences, effects and statistics
    negated and the interval mirrored where the table had baseline - run), ``p_adj`` corrected over
    those k - 1 pairs and ``significant`` at ``alpha``, as :func:`baseline_marks` decides the paper
    table's marks."""
    from .columns import Table

    rows = [row._asdict() for row in pairs.itertuples(index=False)]
    runs = list(dict.fromkeys([row[side] for row in rows for side in ("run_a", "run_b")]))
    if baseline not in runs:
        raise ValueError(f"baseline {baseline!r} is not one of the runs ({', '.join(runs)})")
    out = []
    for metric in dict.fromkeys(row["metric"] for row in rows):
        mine = [dict(row) for row in rows if row["metric"] == metric and baseline in (row["run_a"], row["run_b"])]
        for row in mine:
            if row["run_a"] == baseline:
                row["run_a"], row["run_b"] = row["run_b"], baseline
                for column in _NEGATED:
                    row[column] = -row[column]
                row["ci_low"], row["ci_high"] = -row["ci_high"], -row["ci_low"]
        p_adj = stats.adjust(np.asarray([row["p"] for row in mine], dtype=np.float64), correction)
        for row, p_value in zip(mine, p_adj):
            row["p_adj"] = float(p_value)
            row["significant"] = bool(not np.isnan(p_value) and p_value < alpha)
        out.extend(mine)
    cols = list(pairs.columns)
    return Table({column_name: [row[column_name] for row in out] for column_name in cols},
                 {column_name: pairs.kinds[column_name] for column_name in cols})
