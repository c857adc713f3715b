"""Correlation of summary-level metric values with human ratings (Feng 2023 §8.3-8.4, §9.2).

Inputs are arrays over (system, document); NaN marks a missing value or rating (left out pairwise).

* summary level: within each document, the correlation over systems; averaged over the documents
  where it is defined (at least 3 pairs and neither side constant);
* system level: the correlation over systems of their means over documents.

Kendall's tau (tau-b), Spearman's rho and Pearson's r come from scipy.stats.  PAI (Feng 2023 eq. 8.1)
= (corr(variant) - corr(plain)) / |corr(plain)| * 100.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

__all__ = ["METHODS", "correlate", "summary_level", "system_level", "pai", "correlation_rows", "bootstrap_correlations",
           "COLUMNS", "Correlations", "correlations", "metric_arrays"]

METHODS = ("kendall", "spearman", "pearson")


def correlate(metric_scores, human_scores, method: str) -> float:
    """tau-b, rho or r of the pairs where both are finite; NaN with < 3 pairs or a constant side."""
    from scipy import stats

    coefficient = {"kendall": stats.kendalltau, "spearman": stats.spearmanr, "pearson": stats.pearsonr}.get(method)
    if coefficient is None:
        raise ValueError(f"unknown correlation {method!r}")
    metric_scores, human_scores = np.asarray(metric_scores, dtype=np.float64), np.asarray(human_scores, dtype=np.float64)
    finite = np.isfinite(metric_scores) & np.isfinite(human_scores)
    metric_scores, human_scores = metric_scores[finite], human_scores[finite]
    if len(metric_scores) < 3 or np.ptp(metric_scores) == 0 or np.ptp(human_scores) == 0:
        return float("nan")
    return float(coefficient(metric_scores, human_scores).statistic)


def summary_level(metric, human, method: str):
    """Mean over documents of the within-document correlation over systems, and the number of
    documents where it is defined.  ``metric``, ``human``: arrays (systems, documents)."""
    metric, human = np.asarray(metric, dtype=np.float64), np.asarray(human, dtype=np.float64)
    per_doc = np.array([correlate(metric[:, doc], human[:, doc], method) for doc in range(metric.shape[1])])
    finite = np.isfinite(per_doc)
    return (float(per_doc[finite].mean()) if finite.any() else float("nan")), int(finite.sum())


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
            corr = {(name, dim): summary_level(scores, ratings, method) if level == "summary"
                    else (system_level(scores, ratings, method), np.asarray(scores).shape[1])
                    for name, scores in values.items() for dim, ratings in human.items()}
            for (name, dim), (coefficient, n_docs) in corr.items():
                baseline = (base.get(name), dim)
                pai_value = pai(coefficient, corr[baseline][0]) if baseline in corr else float("nan")
                rows.append((level, method, name, dim, coefficient, pai_value, n_docs))
    return rows


# --------------------------------------------------------------------------- uncertainty

def _rank_rows(values):
    """Average ranks along the last axis (ties share their mean rank), NaN kept NaN."""
    from scipy.stats import rankdata

    return rankdata(values, axis=-1, method="average", nan_policy="omit")


def _corr_rows(values, other, method: str) -> np.ndarray:
    """The correlation of x[b] and y[b] for every row b (no NaN; at least 3 columns): Kendall's tau-b
    from the pair signs, Spearman as Pearson on average ranks, Pearson.  NaN where a side is constant."""
    values, other = np.asarray(values, np.float64), np.asarray(other, np.float64)
    if method == "kendall":
        left, right = np.triu_indices(values.shape[-1], 1)
        signs_x, signs_y = np.sign(values[..., left] - values[..., right]), np.sign(other[..., left] - other[..., right])
        n_pairs = len(left)
        ties_x, ties_y = (signs_x == 0).sum(-1), (signs_y == 0).sum(-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return (signs_x * signs_y).sum(-1) / np.sqrt((n_pairs - ties_x) * (n_pairs - ties_y))
    if method == "spearman":
        values, other = _rank_rows(values), _rank_rows(other)
    elif method != "pearson":
        raise ValueError(f"unknown correlation {method!r}")
    centred_x = values - values.mean(-1, keepdims=True)
    centred_y = other - other.mean(-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (centred_x * centred_y).sum(-1) / np.sqrt((centred_x ** 2).sum(-1) * (centred_y ** 2).sum(-1))


def bootstrap_correlations(values: dict, human: dict, methods=METHODS, levels=("summary", "system"), base=None,
                           reps: int = 1000, seed: int = 0, alpha: float = 0.05) -> dict:
    """Percentile intervals over ``reps`` seeded resamples of the documents, the same for every metric:
    (level, method, metric, dimension) -> (low, high, pai_low, pai_high).  Per resample: the mean of the
    defined per-document correlations (summary level), the correlation of the systems' means (system level)
    and PAI (eq. 8.1) against the plain metric on the same resample."""
    base = base or {}
    rng = np.random.default_rng(seed)
    n_docs = next(iter(values.values())).shape[1]
    idx = rng.integers(0, n_docs, size=(reps, n_docs))
    counts = np.zeros((reps, n_docs))
    np.add.at(counts, (np.repeat(np.arange(reps), n_docs), idx.ravel()), 1.0)
    lo_q, hi_q = 100 * alpha / 2, 100 * (1 - alpha / 2)

    def resampled_means(cells):  # each row's means over the resampled documents (NaN cells left out of a mean)
        with np.errstate(invalid="ignore", divide="ignore"):
            return ((np.where(np.isfinite(cells), cells, 0.0) @ counts.T) / (np.isfinite(cells) @ counts.T)).T

    draws = {}
    for level, method, (name, scores), (dim, ratings) in itertools.product(levels, methods, values.items(),
                                                                            human.items()):
        scores, ratings = np.asarray(scores, np.float64), np.asarray(ratings, np.float64)
        if level == "summary":
            per_doc = np.array([correlate(scores[:, doc], ratings[:, doc], method) for doc in range(n_docs)])
            finite = np.isfinite(per_doc)
            weights = counts * finite
            with np.errstate(invalid="ignore", divide="ignore"):
                draws[(level, method, name, dim)] = (weights @ np.where(finite, per_doc, 0.0)) / weights.sum(1)
        else:
            draws[(level, method, name, dim)] = _corr_rows(resampled_means(scores), resampled_means(ratings), method)
    out = {}
    for key, draw in draws.items():
        level, method, name, dim = key
        baseline = base.get(name)
        pai_draws = np.full(reps, np.nan)
        if baseline is not None and (level, method, baseline, dim) in draws:
            base_draws = draws[(level, method, baseline, dim)]
            with np.errstate(invalid="ignore", divide="ignore"):
                pai_draws = np.where(base_draws != 0, (draw - base_draws) / np.abs(base_draws) * 100.0, np.nan)
        fin, finp = draw[np.isfinite(draw)], pai_draws[np.isfinite(pai_draws)]
        low, high = (np.percentile(fin, [lo_q, hi_q]) if len(fin) else (np.nan, np.nan))
        plo, phi = (np.percentile(finp, [lo_q, hi_q]) if len(finp) else (np.nan, np.nan))
        out[key] = (float(low), float(high), float(plo), float(phi))
    return out


# --------------------------------------------------------------------------- summ --correlate

COLUMNS = ("level", "correlation", "metric", "dimension", "value", "PAI", "documents", "low", "high",
           "PAI_low", "PAI_high", "seeds_min", "seeds_max")


@dataclass(frozen=True, kw_only=True)
class Correlations:
    """What `summ --correlate` found: a row per :data:`COLUMNS` (NaN interval without the bootstrap, NaN
    spread without Monte Carlo repeats); the ratings, documents and systems, the bootstrap resamples
    (``reps``) and the Monte Carlo repeats (``repeats``, besides the first seed)."""

    rows: list
    ratings: str
    documents: int
    systems: int
    reps: int
    repeats: int


def metric_arrays(result, d) -> tuple:
    """({metric: systems x documents values}, {variant metric: its plain measure}) of the scores
    compared with human ratings (no E, IUB, SE or Hetero)."""
    pos = {doc: index for index, doc in enumerate(d.doc_ids)}
    values, base = {}, {}
    for metric in result.metrics:
        if metric.variant in ("SE", "E", "IUB", "Hetero"):
            continue
        arr = np.full((len(d.systems), len(d.doc_ids)), np.nan)
        for system, run in enumerate(result.runs):
            arr[system, [pos[doc] for doc in run.qids]] = run.values[metric]
        values[str(metric)] = arr
        if metric.variant is not None:
            base[str(metric)] = str(metric.measure)
    return values, base


def correlations(outcome, ratings: str = "expert", levels=("summary", "system"), reps: int = 0,
                 seed: int = 0) -> Correlations:
    """The correlations of a summ outcome's scores with its data's ``ratings``, each with its bootstrap
    interval over documents (``reps`` resamples, ``seed``) and, with the outcome's Monte Carlo repeats
    (--mc-repeats), its spread over seeds."""
    result, d = outcome.result, outcome.data
    values, base = metric_arrays(result, d)
    human = {dim: np.array([[np.nan if rating is None else rating for rating in row] for row in table],
                           dtype=np.float64) for dim, table in d.ratings[ratings].items()}
    rows = correlation_rows(values, human, levels=levels, base=base)
    interval = bootstrap_correlations(values, human, levels=levels, base=base, reps=reps, seed=seed) if reps else {}
    spread = {}
    if outcome.repeats:
        others = [correlation_rows(metric_arrays(repeat, d)[0], human, levels=levels, base=base)
                  for repeat in outcome.repeats]
        for index, row in enumerate(rows):
            seeds = [row[4]] + [other[index][4] for other in others]
            spread[row[:4]] = (float(np.min(seeds)), float(np.max(seeds)))
    nan4 = (np.nan,) * 4
    full = [(*row, *interval.get(row[:4], nan4), *spread.get(row[:4], (np.nan, np.nan))) for row in rows]
    return Correlations(rows=full, ratings=ratings, documents=len(d.doc_ids), systems=len(d.systems), reps=reps,
                        repeats=len(outcome.repeats))
