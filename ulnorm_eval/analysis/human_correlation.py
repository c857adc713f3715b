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

__all__ = ["METHODS", "correlate", "summary_level", "system_level", "pai", "correlation_rows", "bootstrap_correlations"]

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


# --------------------------------------------------------------------------- uncertainty

def _rank_rows(x):
    """Average ranks along the last axis (ties share their mean rank), NaN kept NaN."""
    from scipy.stats import rankdata

    return rankdata(x, axis=-1, method="average", nan_policy="omit")


def _corr_rows(x, y, method: str) -> np.ndarray:
    """The correlation of x[b] and y[b] for every row b (no NaN; at least 3 columns): Kendall's tau-b
    from the pair signs, Spearman as Pearson on average ranks, Pearson.  NaN where a side is constant."""
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    if method == "kendall":
        i, j = np.triu_indices(x.shape[-1], 1)
        sx, sy = np.sign(x[..., i] - x[..., j]), np.sign(y[..., i] - y[..., j])
        n0 = len(i)
        tx, ty = (sx == 0).sum(-1), (sy == 0).sum(-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return (sx * sy).sum(-1) / np.sqrt((n0 - tx) * (n0 - ty))
    if method == "spearman":
        x, y = _rank_rows(x), _rank_rows(y)
    elif method != "pearson":
        raise ValueError(f"unknown correlation {method!r}")
    xc = x - x.mean(-1, keepdims=True)
    yc = y - y.mean(-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (xc * yc).sum(-1) / np.sqrt((xc ** 2).sum(-1) * (yc ** 2).sum(-1))


def bootstrap_correlations(values: dict, human: dict, methods=METHODS, levels=("summary", "system"), base=None,
                           reps: int = 1000, seed: int = 0, alpha: float = 0.05) -> dict:
    """Percentile intervals over ``reps`` resamples of the documents (with replacement, seeded; the same
    resamples for every metric, so a variant and its plain metric are compared on identical documents):
    (level, method, metric, dimension) -> (low, high, pai_low, pai_high).

    Summary level: the mean of the per-document correlations over the resampled documents (documents
    where it is undefined left out, as in :func:`summary_level`).  System level: the correlation over
    systems of their means over the resampled documents.  PAI (eq. 8.1) per resample, against the
    plain metric on the same resample."""
    base = base or {}
    rng = np.random.default_rng(seed)
    D = next(iter(values.values())).shape[1]
    idx = rng.integers(0, D, size=(reps, D))
    counts = np.zeros((reps, D))
    np.add.at(counts, (np.repeat(np.arange(reps), D), idx.ravel()), 1.0)
    lo_q, hi_q = 100 * alpha / 2, 100 * (1 - alpha / 2)
    draws = {}
    for level in levels:
        for method in methods:
            for name, v in values.items():
                v = np.asarray(v, np.float64)
                for dim, h in human.items():
                    h = np.asarray(h, np.float64)
                    if level == "summary":
                        cs = np.array([correlate(v[:, d], h[:, d], method) for d in range(D)])
                        ok = np.isfinite(cs)
                        w = counts * ok
                        with np.errstate(invalid="ignore", divide="ignore"):
                            r = (w @ np.where(ok, cs, 0.0)) / w.sum(1)
                    else:
                        # systems' means over the resampled documents (NaN cells left out of a mean)
                        with np.errstate(invalid="ignore", divide="ignore"):
                            mv = (np.where(np.isfinite(v), v, 0.0) @ counts.T) / (np.isfinite(v) @ counts.T)
                            mh = (np.where(np.isfinite(h), h, 0.0) @ counts.T) / (np.isfinite(h) @ counts.T)
                        r = _corr_rows(mv.T, mh.T, method)
                    draws[(level, method, name, dim)] = r
    out = {}
    for key, r in draws.items():
        level, method, name, dim = key
        b = base.get(name)
        pa = np.full(reps, np.nan)
        if b is not None and (level, method, b, dim) in draws:
            p0 = draws[(level, method, b, dim)]
            with np.errstate(invalid="ignore", divide="ignore"):
                pa = np.where(p0 != 0, (r - p0) / np.abs(p0) * 100.0, np.nan)
        fin, finp = r[np.isfinite(r)], pa[np.isfinite(pa)]
        lo, hi = (np.percentile(fin, [lo_q, hi_q]) if len(fin) else (np.nan, np.nan))
        plo, phi = (np.percentile(finp, [lo_q, hi_q]) if len(finp) else (np.nan, np.nan))
        out[key] = (float(lo), float(hi), float(plo), float(phi))
    return out
