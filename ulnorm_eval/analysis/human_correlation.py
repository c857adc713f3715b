"""Correlation of summary-level metric values with human ratings (Feng 2023 §8.3-8.4, §9.2).

Inputs are arrays over (system, document); NaN marks a missing value or rating (left out pairwise).

* summary level: within each document, the correlation over systems; averaged over the documents
  where it is defined (at least 3 pairs and neither side constant);
* system level: the correlation over systems of their means over documents.

Kendall's tau (tau-b), Spearman's rho and Pearson's r come from scipy.stats.  PAI (Feng 2023 eq. 8.1)
= (corr(variant) - corr(plain)) / |corr(plain)| * 100.
"""
from __future__ import annotations

import numpy as np

__all__ = ["METHODS", "correlate", "summary_level", "system_level", "pai"]

METHODS = ("kendall", "spearman", "pearson")


def correlate(x, y, method: str) -> float:
    """tau-b, rho or r of the pairs where both are finite; NaN with < 3 pairs or a constant side."""
    from scipy import stats

    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    if method == "kendall":
        return float(stats.kendalltau(x, y).statistic)
    if method == "spearman":
        return float(stats.spearmanr(x, y).statistic)
    if method == "pearson":
        return float(stats.pearsonr(x, y).statistic)
    raise ValueError(f"unknown correlation {method!r}")


def summary_level(metric, human, method: str):
    """Mean over documents of the within-document correlation over systems, and the number of
    documents where it is defined.  ``metric``, ``human``: arrays (systems, documents)."""
    metric, human = np.asarray(metric, dtype=np.float64), np.asarray(human, dtype=np.float64)
    cs = np.array([correlate(metric[:, d], human[:, d], method) for d in range(metric.shape[1])])
    ok = np.isfinite(cs)
    return (float(cs[ok].mean()) if ok.any() else float("nan")), int(ok.sum())


def system_level(metric, human, method: str) -> float:
    """Correlation over systems of the per-system means over documents (NaN left out of the means)."""
    metric, human = np.asarray(metric, dtype=np.float64), np.asarray(human, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        return correlate(np.nanmean(metric, axis=1), np.nanmean(human, axis=1), method)


def pai(variant: float, plain: float) -> float:
    """Percentage absolute increase (Feng 2023 eq. 8.1): (variant - plain) / |plain| * 100."""
    if not np.isfinite(plain) or not np.isfinite(variant) or plain == 0:
        return float("nan")
    return (variant - plain) / abs(plain) * 100.0


def correlation_rows(values: dict, human: dict, methods=METHODS, levels=("summary", "system"), base=None):
    """Rows (level, method, metric, dimension, correlation, PAI, n_documents) for every metric in
    ``values`` (name -> (systems, documents) array) and rating dimension in ``human``.  ``base`` maps a
    variant's name to its plain metric's name (for PAI; None for the plain metric itself)."""
    base = base or {}
    rows = []
    for level in levels:
        for method in methods:
            corr = {}
            for name, v in values.items():
                for dim, h in human.items():
                    if level == "summary":
                        c, n = summary_level(v, h, method)
                    else:
                        c, n = system_level(v, h, method), np.asarray(v).shape[1]
                    corr[(name, dim)] = (c, n)
            for name in values:
                for dim in human:
                    c, n = corr[(name, dim)]
                    b = base.get(name)
                    p = pai(c, corr[(b, dim)][0]) if b is not None and (b, dim) in corr else float("nan")
                    rows.append((level, method, name, dim, c, p, n))
    return rows
