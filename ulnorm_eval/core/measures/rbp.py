"""Rank-biased precision (Moffat & Zobel 2008)."""
from __future__ import annotations

from ..lazy import np

from ..holes import monotone
from ..kernels import judged_only, power_at, rel_of, within_cutoff
from ..records import Family, Param, register
from .common import RandomPool, mapped_gains
from .cumulative import GAINS_PARAM
from .precision import REL


def gain(grade, m, rel, max_grade):
    """[grade >= rel] when ``rel=`` is given, else grade / the largest grade in the qrels (or ``gains``)."""
    gains = m.get("gains")
    if gains is not None:
        return mapped_gains(grade, gains)
    r = m.get("rel")
    if r is not None:
        return (grade >= r).astype(np.float64)
    return np.maximum(grade, 0.0) / max_grade if max_grade > 0 else np.zeros_like(grade)


def k_rbp(rk, J, m, rel_level):
    """RBP(p)@k = (1-p) sum_{i<=k} p^(i-1) gain(d_i)."""
    p = m.get("p")
    w = judged_only(rk, gain(rk.grade, m, rel_of(m, rel_level), J.max_grade)) * power_at(p, rk.pos)
    cut = within_cutoff(rk, m)
    if cut is not None:
        w = w * cut
    return (1.0 - p) * rk.rowsum(w)


def e_rbp(rp: RandomPool) -> np.ndarray:
    """E[RBP(p)@k] = (1-p) mean(g) sum_{i<=m} p^(i-1) = mean(g) (1 - p^m), by linearity on
    RBP's definition (Westerborg 2022 eq. 2.4; the thesis gives no E[RBP])."""
    return rp.mean_gain * (1.0 - np.power(rp.measure.get("p"), rp.m))


def browse_rbp(m):
    """seen(i) = p^(i-1), N = 1/(1-p) (RBP's own; no ideal is involved)."""
    p = m.get("p")
    return (lambda pos: np.power(p, pos)), (lambda raw: (1.0 - p) * raw)


def validate(params: dict, cutoff) -> str | None:
    if not (0 < params.get("p", 0.8) < 1):
        return "p must lie strictly between 0 and 1"
    return None


register(Family(
    "RBP", (Param("p", "float", 0.8, "persistence", always_show=True), REL, GAINS_PARAM), "optional",
    k_rbp, gain, "exact", e_rbp,
    "(1-p) sum_{i<=k} p^(i-1) gain(d_i); gain = [grade >= rel] when rel is given, else grade / the largest grade in the qrels",
    "(1-p) mean(gain over pool) sum_{i<=min(k,n)} p^(i-1) (exact)",
    "Moffat & Zobel 2008; Westerborg 2022 §2", "gains", irm="RBP", validate=validate, browsing=browse_rbp,
    examples=("RBP(p=0.7)", "RBP(p=0.9,rel=2)", "RBP(p=0.5,rel=1)", "RBP(p=0.8)@{k}", "RBP(p=0.6,rel=1)@{k}"), holes=monotone))
