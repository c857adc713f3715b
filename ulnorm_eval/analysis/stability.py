"""Stability-optimal gain and discount functions for (n)DCG@k and its UL/UE variants (docs/stability.md).

Kanoulas & Aslam 2009 (CIKM) choose the gains and discount maximising the dependability coefficient
(their eq. 2) Φ(n) = σ²(s) / (σ²(s) + (σ²(t) + σ²(s:t)) / n), whose argmax does not depend on n
(§2.3); both are distributions, the discount non-increasing, the gains non-decreasing with 0 for the
non-relevant grade.  With C[s,t][j,r] = 1 when run s ranks a document of grade j at rank r of topic t:
DCG[s,t] = gᵀ C[s,t] d, IDCG[t] = gᵀ M_I[t] d, E[DCG][t] = gᵀ M_E[t] d, WLB[t] = gᵀ M_W[t] d, with
M_E[t][j,r] = n_tj / n_t · [r <= min(k, n_t)] (Karmaker & Feng 2022 eq. 7) and M_I, M_W the judged
documents by gain (Westerborg 2022 §3.1).  A variant is core/normalise.py's on the DCG scale
(``--pool qrels``, ``--undefined zero``).
"""
from __future__ import annotations

import contextlib
import dataclasses
import math
import re
from dataclasses import dataclass, field

import numpy as np

from . import stats

__all__ = ["GAINS", "DISCOUNTS", "GAIN_FUNCTIONS", "DISCOUNT_FUNCTIONS", "named_gains", "named_discount", "normalised",
           "MeasureSpec", "parse_measure", "Design", "level_index", "scores", "objective", "components", "Optimum",
           "optimise", "gain_ratios", "measure_string", "parse_topics", "study", "StudyOptions", "ASL_FUNCTIONS",
           "function_label", "tau_table", "asl_table", "topic_resamples", "topics_needed_resampled", "topic_splits",
           "error_ratio", "paired_ratios", "ratio_claim"]

# gain(l) of a positive grade l: 'linear' l (trec_eval's, Järvelin & Kekäläinen 2002), 'exponential' 2^l - 1
# (Burges et al. 2005, as cited by Kanoulas & Aslam 2009 §1)
GAIN_FUNCTIONS = {"linear": lambda levels: levels, "exponential": lambda levels: np.exp2(levels) - 1.0}
# the discount of ranks r = 1..k (Kanoulas & Aslam 2009 §3.1, Figure 2)
DISCOUNT_FUNCTIONS = {"log": lambda ranks, k: 1.0 / np.log2(1.0 + ranks), "zipf": lambda ranks, k: 1.0 / ranks,
                      "linear": lambda ranks, k: (k + 1.0 - ranks) / k}
GAINS, DISCOUNTS = tuple(GAIN_FUNCTIONS), tuple(DISCOUNT_FUNCTIONS)
VARIANT_ALIASES = {"UE1": "UL1", "UE2": "UL2"}  # Feng 2023's names for Karmaker & Feng 2022's UL1, UL2


def normalised(values) -> np.ndarray:
    """x / sum(x): the paper's probability-distribution form (§2.3), Φ is invariant to the scale."""
    values = np.asarray(values, dtype=np.float64)
    total = values.sum()
    if not total > 0:
        raise ValueError("a gain or discount vector needs a positive sum")
    return values / total


def named_gains(name: str, levels) -> np.ndarray:
    """The gains (``GAIN_FUNCTIONS``) of the positive grade ``levels`` as a probability distribution."""
    if name not in GAIN_FUNCTIONS:
        raise ValueError(f"unknown gain {name!r} ({', '.join(GAINS)})")
    return normalised(GAIN_FUNCTIONS[name](np.asarray(levels, dtype=np.float64)))


def named_discount(name: str, k: int) -> np.ndarray:
    """The discount (``DISCOUNT_FUNCTIONS``) of ranks 1..k as a probability distribution."""
    if name not in DISCOUNT_FUNCTIONS:
        raise ValueError(f"unknown discount {name!r} ({', '.join(DISCOUNTS)})")
    return normalised(DISCOUNT_FUNCTIONS[name](np.arange(1, int(k) + 1, dtype=np.float64), k))


@dataclass(frozen=True, kw_only=True)
class MeasureSpec:
    """nDCG or DCG, optionally under a normalisation variant (UL1, UL2, EM, EB, MM, UEW)."""

    base: str  # 'nDCG' or 'DCG'
    variant: str | None = None

    def name(self, k: int) -> str:
        inner = f"{self.base}@{k}"
        return f"{self.variant}({inner})" if self.variant else inner


def _normalisers() -> dict:
    """Variant name -> normalise(A, I, E, W), for the variants that are normalisations of a measure."""
    from ..core.variants import VARIANTS

    return {variant.name: variant.normalise for variant in VARIANTS.values() if variant.normalise is not None}


def parse_measure(text: str) -> MeasureSpec:
    """'nDCG', 'DCG', 'UL2(nDCG)', 'UE2(DCG)' ... (a cutoff, '@k', is given separately with -k)."""
    match = re.fullmatch(r"(?:([A-Za-z0-9]+)\(\s*)?(n?DCG)(?(1)\s*\))", text.strip(), flags=re.IGNORECASE)
    if not match:
        raise ValueError(f"unknown measure {text!r}: stability takes nDCG, DCG or a variant of them "
                         f"such as UL2(nDCG) (the cutoff is -k)")
    base = "nDCG" if match.group(2).lower() == "ndcg" else "DCG"
    if match.group(1) is None:
        return MeasureSpec(base=base)
    variant, normalisers = VARIANT_ALIASES.get(match.group(1).upper(), match.group(1).upper()), _normalisers()
    if variant not in normalisers:
        names = ", ".join([*normalisers, *VARIANT_ALIASES])
        raise ValueError(f"unknown variant {match.group(1)!r} in {text!r} (stability takes {names})")
    return MeasureSpec(base=base, variant=variant)


def level_index(ranking, n_topics: int, k: int, levels) -> np.ndarray:
    """(T, k) grade-level index of each rank of one run's :class:`~ulnorm_eval.core.kernels.Ranking`: j for
    ``levels[j]`` (the positive grades of its qrels' judgements of these topics), -1 for gain 0 (a
    non-relevant, negative-grade or unjudged document, or no document at that rank)."""
    out = np.full((n_topics, k), -1, dtype=np.int64)
    grade = np.asarray(ranking.grade, dtype=np.float64)
    keep = (np.asarray(ranking.pos) < k) & (grade > 0) & np.asarray(ranking.judged, dtype=bool)
    out[np.asarray(ranking.row)[keep], np.asarray(ranking.pos)[keep]] = np.searchsorted(levels, grade[keep])
    return out


@dataclass(kw_only=True)
class Design:
    """What the objective needs, once from the runs and the qrels: ``C`` (S, T, J, k), C[s,t,j,r] = 1 when run
    s ranks a document of grade ``levels[j]`` at rank r+1 of topic t; ``counts`` (T, J), the judged documents
    of each positive level; ``pool`` (T,), the topic's judged documents (the random ranker's pool)."""

    C: np.ndarray
    counts: np.ndarray
    pool: np.ndarray
    levels: np.ndarray
    systems: list = field(default_factory=list)
    topics: list = field(default_factory=list)

    @property
    def k(self) -> int:
        return self.C.shape[-1]

    @property
    def n_levels(self) -> int:
        return self.C.shape[2]

    def at(self, k: int) -> "Design":
        """The same design cut at rank k <= self.k (a view, no copy)."""
        return dataclasses.replace(self, C=self.C[..., :k])

    def subset(self, idx) -> "Design":
        """The same design on the topics ``idx`` (indices into ``topics``)."""
        idx = np.asarray(idx)
        return dataclasses.replace(self, C=self.C[:, idx], counts=self.counts[idx], pool=self.pool[idx],
                                   topics=[self.topics[index] for index in idx] if self.topics else [])

    def topic_forms(self, g) -> np.ndarray:
        """(3, T, J, k): M_I, M_E, M_W, the bilinear forms of IDCG, E[DCG] and WLB for the gain order of g:
        the ideal in descending order of gain (ties: higher grade first), the worst ascending, gain 0 first."""
        g = np.asarray(g, dtype=np.float64)
        n_levels, k = self.n_levels, self.k
        ranks = np.arange(k)
        desc = np.lexsort((-self.levels, -g))
        asc = desc[::-1]
        nonrel = self.pool - self.counts.sum(axis=1)
        forms = np.empty((3, len(self.pool), n_levels, k))
        for form, order, offset in ((0, desc, np.zeros(len(self.pool))), (2, asc, nonrel)):
            sizes = self.counts[:, order]
            start = offset[:, None] + np.concatenate([np.zeros((len(self.pool), 1)), np.cumsum(sizes, axis=1)[:, :-1]],
                                                     axis=1)
            block = (ranks >= start[:, :, None]) & (ranks < (start + sizes)[:, :, None])
            forms[form][:, order, :] = block
        with np.errstate(invalid="ignore", divide="ignore"):
            share = np.where(self.pool[:, None] > 0, self.counts / np.where(self.pool > 0, self.pool, 1)[:, None], 0.0)
        depth = np.minimum(self.pool, k)
        forms[1] = share[:, :, None] * (ranks[None, None, :] < depth[:, None, None])
        return forms


def _bilinear(design: Design, g, d):
    """A (S, T) and the topic values I, E, W (3, T), with the partial contractions for gradients."""
    C_g = np.tensordot(design.C, g, axes=([2], [0]))  # (S, T, k)
    A = C_g @ d
    forms = design.topic_forms(g)
    F_g = np.tensordot(forms, g, axes=([2], [0]))  # (3, T, k)
    IEW = F_g @ d
    return A, IEW, C_g, forms, F_g


def _measure_values(spec: MeasureSpec, A, I, E, W):
    """Per (system, topic) values and their partials with respect to A, I, E, W."""
    S, T = A.shape
    zero = np.zeros((S, T))
    if spec.variant is None:
        if spec.base == "DCG":
            return A, (np.ones((S, T)), zero, zero, zero)
        defined = I > 0
        inv = np.where(defined, 1.0 / np.where(defined, I, 1.0), 0.0)
        score_matrix = A * inv[None, :]
        return score_matrix, (np.broadcast_to(inv, (S, T)), -score_matrix * inv[None, :], zero, zero)
    normalise = _normalisers()[spec.variant]
    args = np.broadcast_arrays(A, I[None, :], E[None, :], W[None, :])

    def value(*inputs):
        measured, und = normalise(*inputs)
        return np.where(und, 0.0, measured)  # --undefined zero

    score_matrix = value(*args)
    # central differences of the elementwise normaliser: only the search direction uses them
    parts = []
    step = 1e-7 * np.maximum(np.abs(args[1]), 1e-300)
    for index in range(4):
        shifted_up, shifted_down = list(args), list(args)
        shifted_up[index], shifted_down[index] = args[index] + step, args[index] - step
        with np.errstate(invalid="ignore", divide="ignore"):
            parts.append(np.nan_to_num((value(*shifted_up) - value(*shifted_down)) / (2 * step)))
    return score_matrix, tuple(parts)


def scores(design: Design, g, d, spec: MeasureSpec) -> np.ndarray:
    """(S, T) values of the measure with gains ``g`` and discount ``d``."""
    g, d = np.asarray(g, dtype=np.float64), np.asarray(d, dtype=np.float64)
    A, (I, E, W), *_ = _bilinear(design, g, d)
    return _measure_values(spec, A, I, E, W)[0]


def components(design: Design, g, d, spec: MeasureSpec) -> stats.VarianceComponents:
    """Variance components of the (S, T) scores (:func:`ulnorm_eval.analysis.stats.variance_components`)."""
    return stats.variance_components(scores(design, g, d, spec))


def _phi1_grad(score_matrix):
    """Φ(1) = σ²(s)/(σ²(s)+σ²(t)+σ²(s:t)) of Y and dΦ(1)/dY (Kanoulas & Aslam 2009 Figure 1).

    With the ANOVA mean squares of :func:`stats.variance_components`:
    dMS_s/dy_st = 2(m_s - m)/(n_s - 1), dMS_t/dy_st = 2(m_t - m)/(n_t - 1),
    dMS_st/dy_st = 2 r_st/((n_s - 1)(n_t - 1)) with r the interaction residual; an estimate clipped
    at 0 contributes no derivative.
    """
    components = stats.variance_components(score_matrix)
    n_systems, n_topics = score_matrix.shape
    grand_mean = score_matrix.mean()
    system_means, topic_means = score_matrix.mean(axis=1), score_matrix.mean(axis=0)
    residuals = score_matrix - system_means[:, None] - topic_means[None, :] + grand_mean
    dMSs = np.broadcast_to((2.0 * (system_means - grand_mean) / (n_systems - 1))[:, None], score_matrix.shape)
    dMSt = np.broadcast_to((2.0 * (topic_means - grand_mean) / (n_topics - 1))[None, :], score_matrix.shape)
    dMSst = 2.0 * residuals / ((n_systems - 1) * (n_topics - 1))
    zero = np.zeros(score_matrix.shape)
    d_system = (dMSs - dMSst) / n_topics if components.ms_system - components.ms_residual > 0 else zero
    d_topic = (dMSt - dMSst) / n_systems if components.ms_topic - components.ms_residual > 0 else zero
    tot = components.system + components.topic + components.residual
    if tot <= 0:
        return 0.0, zero, components
    phi1 = components.system / tot
    grad = (d_system * tot - components.system * (d_system + d_topic + dMSst)) / tot ** 2
    return phi1, grad, components


def objective(design: Design, g, d, spec: MeasureSpec):
    """(Φ(1), dΦ(1)/dg, dΦ(1)/dd): the objective of Kanoulas & Aslam 2009 §2.3 and its gradient."""
    g, d = np.asarray(g, dtype=np.float64), np.asarray(d, dtype=np.float64)
    A, IEW, C_g, forms, F_g = _bilinear(design, g, d)
    score_matrix, (d_A, d_I, d_E, d_W) = _measure_values(spec, A, *IEW)
    phi1, phi_grad, _ = _phi1_grad(score_matrix)
    weight_A = phi_grad * d_A
    weight_T = np.stack([(phi_grad * partial).sum(axis=0) for partial in (d_I, d_E, d_W)])  # (3, T)
    grad_d = np.einsum("st,str->r", weight_A, C_g) + np.einsum("qt,qtr->r", weight_T, F_g)
    grad_g = np.einsum("st,stj->j", weight_A, design.C @ d) + np.einsum("qt,qtj->j", weight_T, forms @ d)
    return phi1, grad_g, grad_d


@dataclass(kw_only=True)
class Optimum:
    """The best of several SLSQP runs, polished onto the constraint set: Φ(1) there, the largest
    constraint violation, SLSQP's verdict and the starts tried and agreeing (docs/stability.md, "Columns")."""

    gains: np.ndarray
    discount: np.ndarray
    phi1: float
    residual: float
    converged: bool
    starts: int
    agree: int


def _polish(point, monotone: str | None):
    """Onto the constraint set exactly: no negative entry, monotone, summing to 1."""
    point = np.maximum(np.asarray(point, dtype=np.float64), 0.0)
    if monotone:
        point = (np.minimum if monotone == "down" else np.maximum).accumulate(point)
    return normalised(point) if point.sum() > 0 else np.full(len(point), 1.0 / len(point))


def residual(point, monotone: str | None) -> float:
    """Largest violation of sum(x) = 1, x >= 0 and the monotonicity (``'down'``/``'up'``/None)."""
    point = np.asarray(point, dtype=np.float64)
    rises = (np.diff(point) if monotone == "down" else -np.diff(point)) if monotone else ()
    return float(max(abs(point.sum() - 1.0), 0.0, -point.min(), *rises))


def _block_constraints(offset: int, size: int, total: int, monotone: str | None) -> list:
    """SLSQP constraints of one block x[offset:offset+n]: sum 1, and monotone differences >= 0."""
    row = np.zeros(total)
    row[offset:offset + size] = 1.0
    # down: x_r - x_{r+1} >= 0 and x_n >= 0; up: x_{r+1} - x_r >= 0 and x_1 >= 0: no bounds needed
    if monotone == "down":
        block = np.eye(size) - np.eye(size, k=1)
    elif monotone == "up":
        block = np.eye(size, k=1) - np.eye(size)
        block[size - 1] = 0.0
        block[size - 1, 0] = 1.0
    else:
        block = np.eye(size)  # x >= 0
    diffs = np.zeros((size, total))
    diffs[:, offset:offset + size] = block
    return [{"type": "eq", "fun": lambda point: np.array([row @ point - 1.0]), "jac": lambda point: row[None, :]},
            {"type": "ineq", "fun": lambda point: diffs @ point, "jac": lambda point: diffs}]


def _random_start(rng, size: int, monotone: str | None) -> np.ndarray:
    point = rng.dirichlet(np.ones(size))
    return np.sort(point)[::-1] if monotone == "down" else np.sort(point) if monotone == "up" else point


def _named_starts(design: Design, n_g: int, n_d: int) -> list:
    """The named starts of what is free (``n_g`` gains, ``n_d`` discount factors): each named function and
    the uniform one; both free, every pair of named functions."""
    if n_g and n_d:
        return [np.concatenate([named_gains(gain_name, design.levels), named_discount(discount_name, design.k)])
                for gain_name in GAINS for discount_name in DISCOUNTS]
    named = [named_gains(name, design.levels) for name in GAINS] if n_g else [named_discount(name, n_d)
                                                                               for name in DISCOUNTS]
    return named + [np.full(n_g + n_d, 1.0 / (n_g + n_d))]


def optimise(design: Design, spec: MeasureSpec, fixed: tuple = (None, None), *, monotone: bool = True,
             restarts: int = 4, seed: int = 0, starts=(), tick=None) -> Optimum:
    """argmax Φ(1) (Kanoulas & Aslam 2009 §2.3, Figure 1) over what ``fixed`` = (gains, discount) leaves
    None: the gains of the positive grades (the non-relevant grade's 0) on the simplex, non-decreasing, and
    the discount of ranks 1..k on the simplex, non-increasing (unless ``monotone=False``: Table 2, Figure 3);
    both: §3.3's minimax as one joint maximisation (docs/stability.md).  SLSQP from :func:`_named_starts`,
    ``starts`` (points of what is free, gains first) and ``restarts`` seeded random feasible points; the
    best polished onto the constraints, never worse than its start; ``tick()`` after each start."""
    from scipy.optimize import minimize
    from threadpoolctl import threadpool_limits

    n_g, n_d = (design.n_levels if fixed[0] is None else 0), (design.k if fixed[1] is None else 0)
    g, d = (None if given is None else np.asarray(given, dtype=np.float64) for given in fixed)
    if n_g == 1 and not n_d:  # binary grades: the simplex is one point
        g = np.ones(1)
        return Optimum(gains=g, discount=d, phi1=objective(design, g, d, spec)[0],
                       residual=residual(g, "up" if monotone else None), converged=True, starts=1, agree=1)
    points = _named_starts(design, n_g, n_d)
    mono_g, mono_d = ("up" if monotone and n_g else None), ("down" if monotone and n_d else None)
    blocks = [(size, mono) for size, mono in ((n_g, mono_g), (n_d, mono_d)) if size]
    rng = np.random.default_rng(seed)
    points += [np.asarray(start) for start in starts]
    points += [np.concatenate([_random_start(rng, size, mono) for size, mono in blocks]) for _ in range(restarts)]
    cons = _block_constraints(0, n_g, n_g + n_d, mono_g) if n_g else []
    cons += _block_constraints(n_g, n_d, n_g + n_d, mono_d) if n_d else []

    def vectors(point):
        return (point[:n_g] if n_g else g), (point[n_g:] if n_d else d)

    def fun(point):
        value, grad_g, grad_d = objective(design, *vectors(point), spec)
        return -value, -np.concatenate([grad for grad, size in ((grad_g, n_g), (grad_d, n_d)) if size])

    def polish(point):
        return np.concatenate([_polish(point[:n_g], mono_g) if n_g else point[:0],
                               _polish(point[n_g:], mono_d) if n_d else point[n_g:]])

    results = []
    with threadpool_limits(1, user_api="blas"):  # SLSQP's small dense solves slow down when BLAS threads contend
        for start in points:
            start = polish(np.asarray(start, dtype=np.float64))
            res = minimize(fun, start, jac=True, method="SLSQP", constraints=cons,
                           options={"maxiter": 1000, "ftol": 1e-12})
            point = polish(res.x)
            val, start_val = -fun(point)[0], -fun(start)[0]
            if start_val > val:  # SLSQP is not monotone: never return worse than where it started
                point, val = start, start_val
            results.append((val, point, bool(res.success)))
            if tick is not None:
                tick()
    val, point, success = best = max(results, key=lambda result: result[0])
    agree = sum(abs(result[0] - best[0]) <= 1e-6 * max(1.0, abs(best[0])) for result in results)
    gains, discount = vectors(point)
    worst = max(residual(gains, mono_g), residual(discount, mono_d))
    return Optimum(gains=gains, discount=discount, phi1=val, residual=worst, converged=success, starts=len(results),
                   agree=agree)


def gain_ratios(levels, gains) -> dict:
    """{'2/1': gain(2)/gain(1), ...} between consecutive positive grade levels (Kanoulas & Aslam
    2009 Table 2 reports highly relevant / relevant); inf when the lower gain is 0."""
    out = {}
    for level_low, level_high, gain_low, gain_high in zip(levels[:-1], levels[1:], gains[:-1], gains[1:]):
        key = f"{_num(level_high)}/{_num(level_low)}"
        out[key] = gain_high / gain_low if gain_low > 0 else (math.inf if gain_high > 0 else math.nan)
    return out


def _num(value) -> str:
    value = float(value)
    return str(int(value)) if value.is_integer() else repr(value)


def measure_string(spec: MeasureSpec, k: int, levels, gains, discount, digits: int = 12) -> str:
    """The pasteable measure, e.g. ``nDCG(gains={0:0,1:1,2:1.2}, discount=[1,0.8,...])@100``, to
    ``digits`` significant digits: the lowest positive grade gains 1 (else the largest gain is 1), the
    largest discount factor is 1 (scales that leave Φ unchanged: docs/stability.md)."""
    g = np.asarray(gains, dtype=np.float64)
    d = np.asarray(discount, dtype=np.float64)
    scaled_gains = g / (g[0] if g[0] > 0 else g.max())
    scaled_discount = d / d.max()
    gtxt = ",".join([f"{_num(0)}:0"] + [f"{_num(level)}:{factor:.{digits}g}"
                                        for level, factor in zip(levels, scaled_gains)])
    dtxt = ",".join(f"{factor:.{digits}g}" for factor in scaled_discount)
    inner = f"{spec.base}(gains={{{gtxt}}}, discount=[{dtxt}])@{k}"
    return f"{spec.variant}({inner})" if spec.variant else inner


def parse_topics(spec: str, available) -> list:
    """The topics of ``available`` that ``spec`` selects, in ``available``'s order.

    ``spec``: comma-separated items, each a topic id or an inclusive numeric range ``a-b``
    (e.g. ``601-650`` or ``301-310,601-650,700``).  An item matching nothing is an error.
    """
    items = {}  # item -> its range (first, last), or None for a topic id
    for item in filter(None, (part.strip() for part in spec.split(","))):
        match = re.fullmatch(r"(\d+)\s*-\s*(\d+)", item)
        items[item] = match and (int(match.group(1)), int(match.group(2)))
        if match and items[item][0] > items[item][1]:
            raise ValueError(f"--topics: empty range {item!r}")
    if not items:
        raise ValueError(f"--topics: no topic in {spec!r}")

    def selects(item, qid):
        bounds = items[item]
        return qid == item if bounds is None else qid.isdigit() and bounds[0] <= int(qid) <= bounds[1]

    missing = [item for item in sorted(items, key=lambda x: items[x] is not None)  # the ids first
               if not any(selects(item, qid) for qid in available)]
    if missing:
        raise ValueError(f"--topics: {missing[0]!r} matches no topic of the qrels")
    return [qid for qid in available if any(selects(item, qid) for item in items)]


def topic_resamples(n_topics: int, reps: int, seed: int = 0) -> np.ndarray:
    """(reps x n_topics) topic indices drawn with replacement, seeded: the same resamples serve every
    function, so two functions are compared on identical topic sets."""
    return np.random.default_rng(seed).integers(0, n_topics, size=(reps, n_topics))


def topics_needed_resampled(score_matrix, resamples, target: float) -> np.ndarray:
    """The topics needed for Φ >= ``target`` on every topic resample of the systems x topics scores ``score_matrix``
    (a bootstrap over topics: how far the count moves with the topics drawn)."""
    return np.array([stats.topics_needed(stats.variance_components(score_matrix[:, sample]), target) for sample in resamples],
                    dtype=np.float64)


def entry_starts(unconstrained: str, restarts: int) -> int:
    """The SLSQP starts of one measure and cutoff's optima (:func:`_entries`, :func:`_named_starts`),
    the unit of stability's progress bar."""
    per = [len(DISCOUNTS) + 1, len(GAINS) + 1, len(GAINS) * len(DISCOUNTS) + 2]
    per += [len(DISCOUNTS) + 2] if unconstrained in ("discount", "both") else []
    per += [len(GAINS) + 2] if unconstrained in ("gains", "both") else []
    return sum(per) + len(per) * restarts


def _entries(design_k: Design, spec: MeasureSpec, k: int, options: "StudyOptions", tick=None) -> list:
    """The functions of one measure and cutoff, in the rows' order: (optimised, constrained, gain name,
    discount name, g, d, Optimum | None); the optima are fitted on ``design_k``'s topics.  ``tick()`` is
    called after each SLSQP start (:func:`entry_starts` in all)."""
    gain, discount, free = options.gain, options.discount, options.unconstrained
    fixed_g, fixed_d = named_gains(gain, design_k.levels), named_discount(discount, k)
    fit = {"restarts": options.restarts, "seed": options.seed, "tick": tick}
    entries = [("", True, gain, name, fixed_g, named_discount(name, k), None) for name in DISCOUNTS]
    opt_d = optimise(design_k, spec, (fixed_g, None), **fit)
    entries.append(("discount", True, gain, "optimal", opt_d.gains, opt_d.discount, opt_d))
    if free in ("discount", "both"):
        optimum = optimise(design_k, spec, (fixed_g, None), monotone=False, starts=[opt_d.discount], **fit)
        entries.append(("discount", False, gain, "optimal (unconstrained)", optimum.gains, optimum.discount, optimum))
    # (gain, discount) is already a discount row
    entries += [("", True, name, discount, named_gains(name, design_k.levels), fixed_d, None)
                for name in GAINS if name != gain]
    opt_g = optimise(design_k, spec, (None, fixed_d), **fit)
    entries.append(("gains", True, "optimal", discount, opt_g.gains, opt_g.discount, opt_g))
    if free in ("gains", "both"):
        optimum = optimise(design_k, spec, (None, fixed_d), monotone=False, starts=[opt_g.gains], **fit)
        entries.append(("gains", False, "optimal (unconstrained)", discount, optimum.gains, optimum.discount, optimum))
    joint = optimise(design_k, spec, starts=[np.concatenate([opt.gains, opt.discount]) for opt in (opt_d, opt_g)],
                     **fit)
    entries.append(("gains+discount", True, "optimal (joint)", "optimal (joint)", joint.gains, joint.discount, joint))
    return entries


def topic_splits(n_topics: int, splits: int, seed: int = 0) -> list:
    """``splits`` seeded random halves of the topics: (fit, held-out) index arrays of floor(T/2) and the
    other ceil(T/2) topics."""
    rng = np.random.default_rng(seed)
    perms = [rng.permutation(n_topics) for _ in range(splits)]
    return [(np.sort(perm[: n_topics // 2]), np.sort(perm[n_topics // 2:])) for perm in perms]


def error_ratio(score_matrix) -> float:
    """(σ²(t) + σ²(s:t)) / σ²(s) of the systems x topics scores ``score_matrix``: the topics needed for Φ >= P are
    this times P / (1 - P) (Kanoulas & Aslam 2009 eq. 2 solved for n), so the ratio of two functions'
    topic counts, unrounded, is the ratio of their error ratios whatever P (inf when σ²(s) = 0)."""
    components = stats.variance_components(score_matrix)
    return (components.topic + components.residual) / components.system if components.system > 0 else math.inf


def ratio_claim(pair: dict, digits: int = 2) -> str:
    """The sentence a comparison of :func:`paired_ratios` supports: a needs more (fewer) topics than b only
    when the ratio's 95 % interval lies above (below) 1, e.g. ``... needs more topics than ...: 1.70x [1.10, 2.35]``."""
    label_a = f"{pair['measure_a']} {pair['function_a']}"
    label_b = f"{pair['measure_b']} {pair['function_b']}"
    low, high = pair["ratio 2.5%"], pair["ratio 97.5%"]
    verb = ("needs more topics than" if low > 1 else "needs fewer topics than" if high < 1
            else "is not separated from")

    def bound(value):  # more digits where rounding would print a bound that excludes 1 as 1
        for places in range(digits, digits + 4):
            if value == 1 or float(f"{value:.{places}f}") != 1:
                return f"{value:.{places}f}"
        return repr(value)
    return f"{label_a} {verb} {label_b}: {pair['ratio']:.{digits}f}x [{bound(low)}, {bound(high)}]"


def paired_ratios(rows, draws: dict, *, reference: str = "log") -> list:
    """The paired topic-bootstrap comparisons of topics needed (docs/stability.md, `--table paired`): every
    function against the ``reference`` discount row, a variant measure's against the first measure's, a
    later cutoff's named functions against the first cutoff's.  ``draws``: row index -> its
    :func:`error_ratio` on each topic resample (the same resamples for every row).  One dict per
    comparison: the ratio a / b, its 2.5 and 97.5 percentiles and the shares of resamples each way."""
    out = []
    by_measure: dict = {}
    for index, record in enumerate(rows):
        by_measure.setdefault((record["k"], record["measure"]), []).append(index)

    def pair(index, other):
        row_a, row_b = rows[index], rows[other]
        full = row_a["_error_ratio"] / row_b["_error_ratio"]
        ratio = draws[index] / draws[other]
        row = {"k": row_a["k"], "measure_a": row_a["measure"], "function_a": function_label(row_a),
               "measure_b": row_b["measure"], "function_b": function_label(row_b), "ratio": float(full),
               **_spread("ratio", ratio), "share a<b": float(np.mean(ratio < 1)),
               "share a>b": float(np.mean(ratio > 1)), "resamples": int(len(ratio))}
        row["claim"] = ratio_claim(row)
        return row

    def matched(idx, base_idx, named_only=False):  # each row against the same function in base_idx
        base = {function_label(rows[index]) + str(rows[index]["monotone"]): index for index in base_idx}
        for index in idx:
            other = base.get(function_label(rows[index]) + str(rows[index]["monotone"]))
            if other is not None and (not named_only or rows[index]["optimised"] == "—"):
                out.append(pair(index, other))

    firsts: dict = {}
    first_k: dict = {}
    for (k, name), idx in by_measure.items():
        if len(by_measure) > 1:  # every cutoff against the first one, function by function
            base_k = first_k.setdefault(name.replace(f"@{k}", "@"), idx)
            if base_k is not idx:
                matched(idx, base_k, named_only=True)
        ref = next((index for index in idx if rows[index]["optimised"] == "—" and rows[index]["discount"] == reference
                    and rows[index]["gain"] == rows[idx[0]]["gain"]), None)
        if ref is not None:
            out.extend(pair(index, ref) for index in idx if index != ref)
        first = firsts.setdefault(k, idx)
        if first is not idx:
            matched(idx, first)
    return out


@dataclass(frozen=True, kw_only=True)
class StudyOptions:
    """How :func:`study` fits and what it reports: stability's options of the same names (docs/stability.md;
    the named rows' ``gain`` and ``discount``: Kanoulas & Aslam 2009 §3.1-3.2)."""

    gain: str = "linear"
    discount: str = "log"
    unconstrained: str = "none"
    restarts: int = 3
    seed: int = 0
    at_topics: int | None = None
    phi_targets: tuple = (0.95,)
    digits: int = 12
    topic_bootstrap: int = 0
    holdout: int = 0


def study(design, specs, cutoffs, options: StudyOptions = StudyOptions(), paired: list | None = None,
          progress=None):
    """(rows, curves): a row (dict) for every measure, cutoff and function (:func:`_entries`), and each row
    with its Φ at 1 .. max(100, 2 x the topics) topics (Kanoulas & Aslam 2009 Figure 4); :func:`paired_ratios`'
    comparisons appended to a list ``paired``; ``progress(units, total=None)`` hears each SLSQP start."""
    n_topics = options.at_topics or len(design.topics)
    if progress is not None:
        progress(0, total=entry_starts(options.unconstrained, options.restarts) * len(cutoffs) * len(specs)
                 * (1 + options.holdout))
    rows, curves, draws = [], [], {}
    resamples = topic_resamples(len(design.topics),
                                options.topic_bootstrap, options.seed) if options.topic_bootstrap else None
    halves = topic_splits(len(design.topics), options.holdout, options.seed) if options.holdout else []
    for k in cutoffs:
        design_k = design.at(k)
        for spec in specs:
            entries = _entries(design_k, spec, k, options, progress)
            split_phi = np.full((len(entries), len(halves), 2), np.nan)
            for half, (fit, held) in enumerate(halves):
                dfit, dheld = design_k.subset(fit), design_k.subset(held)
                for entry, (*_, g, d, _optimum) in enumerate(_entries(dfit, spec, k, options, progress)):
                    split_phi[entry, half] = (stats.phi(components(dfit, g, d, spec), n_topics),
                                              stats.phi(components(dheld, g, d, spec), n_topics))
            for entry, (optimised, constrained, gname, dname, g, d, optimum) in enumerate(entries):
                score_matrix = scores(design_k, g, d, spec)
                variance = stats.variance_components(score_matrix)
                row = {"measure": spec.name(k), "k": k, "gain": gname, "discount": dname,
                       "optimised": optimised or "—", "monotone": constrained,
                       "phi": stats.phi(variance, n_topics), "erho2": stats.erho2(variance, n_topics),
                       **{f"topics Φ>={target:g}": stats.topics_needed(variance, target)
                          for target in options.phi_targets},
                       **(_intervals(score_matrix, resamples, options.phi_targets) if resamples is not None else {}),
                       **(_holdout_columns(split_phi[entry], split_phi[0]) if halves else {}),
                       "phi1": stats.phi(variance, 1), "var_system": variance.system, "var_topic": variance.topic,
                       "var_residual": variance.residual,
                       **{f"gain {key}": ratio for key, ratio in gain_ratios(design_k.levels, g).items()},
                       "residual": max(residual(g, "up" if constrained else None),
                                       residual(d, "down" if constrained else None)),
                       **{key: None if optimum is None else getattr(optimum, key)
                          for key in ("converged", "starts", "agree")},
                       "gains": [float(value) for value in g], "discount_factors": [float(value) for value in d],
                       "string": measure_string(spec, k, design_k.levels, g, d, options.digits)}
                if paired is not None and resamples is not None:
                    row["_error_ratio"] = error_ratio(score_matrix)
                    draws[len(rows)] = np.array([error_ratio(score_matrix[:, sample]) for sample in resamples])
                rows.append(row)
                topics = range(1, max(100, 2 * len(design.topics)) + 1)
                curves.append((row, [stats.phi(variance, n) for n in topics]))
    if paired is not None and resamples is not None:
        paired.extend(paired_ratios(rows, draws, reference="log"))
    for record in rows:
        record.pop("_error_ratio", None)
    return rows, curves


def _holdout_columns(phis, reference) -> dict:
    """Mean and 2.5/97.5 percentiles over the splits of Φ on the fitting half, on the held-out half, and
    of the held-out Φ minus the reference function's (the first row: the log discount) on the same split."""
    out = {}
    for name, values in (("phi fit-half", phis[:, 0]), ("phi held-out", phis[:, 1]),
                    ("phi held-out - log", phis[:, 1] - reference[:, 1])):
        out |= {name: float(values.mean()), **_spread(name, values)}
    return out


def _spread(name: str, values) -> dict:
    """{'NAME 2.5%': ..., 'NAME 97.5%': ...}: the percentiles of ``values`` printed as an interval."""
    low, high = np.percentile(values, [2.5, 97.5])
    return {f"{name} 2.5%": float(low), f"{name} 97.5%": float(high)}


# the four nDCG variations of Kanoulas & Aslam 2009 §3.5 (Figure 9)
ASL_FUNCTIONS = ("joint", "linear/log", "exponential/log", "linear/linear")


def function_label(row: dict) -> str:
    """A row's gain/discount pair as one label: 'linear/zipf', 'optimal/log', 'joint'."""
    return "joint" if row["optimised"] == "gains+discount" else f"{row['gain']}/{row['discount']}"


def _intervals(score_matrix, resamples, targets) -> dict:
    out = {}
    for target in targets:
        out |= _spread(f"topics Φ>={target:g}", topics_needed_resampled(score_matrix, resamples, target))
    return out


def _measures(design, specs, rows):
    """(measure name, k, its rows, its spec, the design at k) of each measure and cutoff of ``rows``."""
    for name in dict.fromkeys(row["measure"] for row in rows):
        mine = [row for row in rows if row["measure"] == name]
        k = mine[0]["k"]
        yield name, k, mine, next(spec for spec in specs if spec.name(k) == name), design.at(k)


def tau_table(design, specs, rows) -> list:
    """Kendall's τ between the rankings of the systems by mean score (over the topics evaluated) under
    every two gain/discount functions of one measure and cutoff (Kanoulas & Aslam 2009 Table 4, there
    for the discount functions at k = 100).  One dict per (measure, function_a, function_b), both
    orders and the diagonal included (a full matrix)."""
    out = []
    for name, k, mine, spec, design_k in _measures(design, specs, rows):
        means = {function_label(row): scores(design_k, np.asarray(row["gains"]),
                                             np.asarray(row["discount_factors"]), spec).mean(axis=1) for row in mine}
        for label_a, means_a in means.items():
            for label_b, means_b in means.items():
                out.append({"measure": name, "k": k, "function_a": label_a, "function_b": label_b,
                            "tau": stats.kendall_tau(means_a, means_b)})
    return out


def asl_table(design, specs, rows, *, reps: int = 1000, seed: int = 0) -> list:
    """The achieved significance level (ASL) of Sakai's paired bootstrap test (``reps`` resamples, the same
    for every function) for every pair of systems under the four nDCG variations of Kanoulas & Aslam 2009
    §3.5, Figure 9 (``ASL_FUNCTIONS``, whatever --gain/--discount are): one dict per (measure, function,
    pair), with ``order``, its place among that function's ASLs sorted increasingly (Figure 9's x axis)."""
    out = []
    S = design.C.shape[0]
    first, second = np.triu_indices(S, 1)
    names = list(design.systems) or [str(index) for index in range(S)]
    for name, k, mine, spec, design_k in _measures(design, specs, rows):
        joint = next(row for row in mine if row["optimised"] == "gains+discount")
        vectors = {"joint": (np.asarray(joint["gains"]), np.asarray(joint["discount_factors"]))}
        for label in ASL_FUNCTIONS[1:]:
            g, d = label.split("/")
            vectors[label] = (named_gains(g, design_k.levels), named_discount(d, k))
        for label, (g, d) in vectors.items():
            score_matrix = scores(design_k, g, d, spec)
            asl = np.asarray(stats.pairwise_bootstrap(score_matrix[first] - score_matrix[second], reps=reps,
                                                      seed=seed).p, dtype=np.float64)
            order = np.empty(len(asl), dtype=np.int64)
            order[np.argsort(asl, kind="stable")] = np.arange(1, len(asl) + 1)
            for system_a, system_b, p_value, order_rank in zip(first, second, asl, order):
                out.append({"measure": name, "k": k, "function": label, "run_a": names[system_a],
                            "run_b": names[system_b], "asl": float(p_value), "order": int(order_rank)})
    return out


MAX_COUNT_BYTES = 4_000_000_000  # the precomputed S x T x J x k counts are float64


def load_design(qrels_path, run_paths, k: int, topics: str | None = None, *, ties: str = "score",
                warn=None):
    """Read QRELS and RUNS into a :class:`Design` at depth ``k``: runs ordered as trec_eval orders them
    (:func:`~ulnorm_eval.pipeline.ordering.rank_run`), the qrels' topics (natural order) filtered by
    ``topics``; a topic a run retrieved nothing for scores 0 for it (counted on stderr, as in ``eval``)."""
    from ..inputs.trec import read_qrels, read_run
    from ..pipeline.ordering import judgements, natural_order, qrels_queries, rank_run

    warn = warn or (lambda msg: None)
    qrels = read_qrels(qrels_path)
    if qrels.skipped:
        warn(f"{qrels_path}: skipped {qrels.skipped} comment or blank lines")
    all_topics = natural_order(qrels_queries(qrels))
    qids = parse_topics(topics, all_topics) if topics else all_topics
    if topics:
        warn(f"--topics {topics}: {len(qids)} of {len(all_topics)} qrels topics kept, "
             f"{len(all_topics) - len(qids)} left out")
    judged = judgements(qrels, qids)
    levels = np.unique(judged.grade[judged.grade > 0])
    if len(levels) == 0:
        raise ValueError(f"{qrels_path}: no relevant document in the topics evaluated")
    n_topics = len(qids)
    pool = np.bincount(judged.row, minlength=n_topics)[:n_topics].astype(np.float64)
    counts = np.stack([np.bincount(judged.row, weights=(judged.grade == level), minlength=n_topics)[:n_topics]
                       for level in levels], axis=1)
    size = len(run_paths) * n_topics * len(levels) * k * 8
    if size > MAX_COUNT_BYTES:
        raise ValueError(f"{len(run_paths)} runs x {n_topics} topics x {len(levels)} grades x {k} ranks need "
                         f"{size / 1e9:.1f} GB of counts: select topics (--topics) or lower -k")
    idx, names = [], []
    for path in run_paths:
        run = read_run(path)
        ranked = rank_run(run, qrels, qids, ties=ties, depth=k)
        missing = int((~ranked.present).sum())
        if missing:
            warn(f"{run.name}: {missing} of {n_topics} topics have no ranked documents and score 0")
        if ranked.ignored_queries and not topics:
            warn(f"{run.name}: {ranked.ignored_queries} run topics absent from the qrels ignored")
        if run.skipped:
            warn(f"{path}: skipped {run.skipped} comment or blank lines")
        idx.append(level_index(ranked.ranking, n_topics, k, levels))
        names.append(run.name)
    C = (np.stack(idx)[:, :, None, :] == np.arange(len(levels))[:, None]).astype(np.float64)
    return Design(C=C, counts=counts, pool=pool, levels=levels.astype(np.float64), systems=names, topics=qids)


@dataclass(frozen=True, kw_only=True)
class StabilityRequest:
    """What `ulnorm-eval stability` asks for (docs/stability.md): the files, measures (specs), cutoffs,
    Φ targets and the keywords of :func:`study`, and which extra tables (tau, asl, paired) to build."""

    qrels: str
    runs: tuple
    specs: list
    cutoffs: list
    phi_targets: list
    topics: str | None = None
    ties: str = "score"
    tables: tuple = ("functions",)
    reps: int = 1000
    study: dict = field(default_factory=dict)  # gain, discount, unconstrained, restarts, seed, at_topics, ...
    progress: object = None  # the command line's bars (render.progress: shown, work_bar); None: none


@dataclass(kw_only=True)
class StabilityOutcome:
    """The study of a request: its design, the functions' rows, the curves, and the extra tables."""

    design: object
    rows: list
    curves: list
    extra: dict


def stability_for_request(request: StabilityRequest, notes: list) -> StabilityOutcome:
    """Read the files of ``request`` into a design (:func:`load_design`), run :func:`study` and build
    the extra tables asked for; notes for stderr are appended to ``notes``.  ValueError for what the
    data cannot answer (one line, exit 2 on the command line)."""
    from ..inputs.trec import InputError

    holdout = request.study.get("holdout", 0)
    try:
        design = load_design(request.qrels, request.runs, max(request.cutoffs), request.topics, ties=request.ties,
                             warn=notes.append)
    except InputError as exc:
        raise ValueError(str(exc)) from None
    if len(design.topics) < (4 if holdout else 2):
        raise ValueError("stability needs at least two topics" + (" in each half (--holdout)" if holdout else ""))
    paired = [] if "paired" in request.tables else None
    bars = request.progress
    with (bars.work_bar(bars.shown(True), "stability: SLSQP starts of the optima") if bars
          else contextlib.nullcontext(None)) as tick:
        options = StudyOptions(phi_targets=tuple(request.phi_targets), **request.study)
        rows, curves = study(design, request.specs, request.cutoffs, options, paired, progress=tick)
    extra = {} if paired is None else {"paired": paired}
    if "tau" in request.tables:
        extra["tau"] = tau_table(design, request.specs, rows)
    if "asl" in request.tables:
        extra["asl"] = asl_table(design, request.specs, rows, reps=request.reps, seed=request.study.get("seed", 0))
    return StabilityOutcome(design=design, rows=rows, curves=curves, extra=extra)
