"""Rank-biased precision (Moffat & Zobel 2008)."""
from __future__ import annotations

import numpy as np

from ..holes import monotone
from ..kernels import judged_only, power_at, rel_of, within_cutoff
from ..records import Family, Param, register
from .common import RandomPool, check_p, mapped_gains, reads_gain_of
from .cumulative import GAINS_PARAM
from .precision import REL


def gain(grade, measure, rel, max_grade):
    """[grade >= rel] when ``rel=`` is given, else grade / the largest grade in the qrels (or ``gains``)."""
    gains = measure.get("gains")
    if gains is not None:
        return mapped_gains(grade, gains)
    rel_level_given = measure.get("rel")
    if rel_level_given is not None:
        return (grade >= rel_level_given).astype(np.float64)
    return np.maximum(grade, 0.0) / max_grade if max_grade > 0 else np.zeros_like(grade)


def k_rbp(ranking, judgements, measure, rel_level):
    """RBP(p)@k = (1-p) sum_{i<=k} p^(i-1) gain(d_i)."""
    p = measure.get("p")
    weights = judged_only(ranking,
                          gain(ranking.grade, measure, rel_of(measure, rel_level), judgements.max_grade)) * power_at(p, ranking.pos)
    cut = within_cutoff(ranking, measure)
    if cut is not None:
        weights = weights * cut
    return (1.0 - p) * ranking.rowsum(weights)


def e_rbp(random_pool: RandomPool) -> np.ndarray:
    """E[RBP(p)@k] = (1-p) mean(g) sum_{i<=m} p^(i-1) = mean(g) (1 - p^m), by linearity on
    RBP's definition (Westerborg 2022 eq. 2.4; the thesis gives no E[RBP])."""
    return random_pool.mean_gain * (1.0 - np.power(random_pool.measure.get("p"), random_pool.m))


def browse_rbp(measure):
    """seen(i) = p^(i-1), N = 1/(1-p) (RBP's own; no ideal is involved)."""
    p = measure.get("p")
    return (lambda pos: np.power(p, pos)), (lambda raw: (1.0 - p) * raw)


register(Family(
    name="RBP", params=(Param(name="p", kind="float", default=0.8, doc="persistence", always_show=True), REL, GAINS_PARAM), cutoff="optional",
    kernel=k_rbp, gain=gain, bounds="exact", expectation=e_rbp, reads=reads_gain_of(gain),
    formula="(1-p) sum_{i<=k} p^(i-1) gain(d_i); gain = [grade >= rel] when rel is given, else grade / the largest grade in the qrels",
    expectation_formula="(1-p) mean(gain over pool) sum_{i<=min(k,n)} p^(i-1) (exact)",
    cite="Moffat & Zobel 2008; Westerborg 2022 §2", level="gains", irm="RBP", validate=check_p, browsing=browse_rbp,
    examples=("RBP(p=0.7)", "RBP(p=0.9,rel=2)", "RBP(p=0.5,rel=1)", "RBP(p=0.8)@{k}", "RBP(p=0.6,rel=1)@{k}"), holes=monotone))
