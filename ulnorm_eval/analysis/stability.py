"""Stability-optimal gain and discount functions for (n)DCG@k, and for its UL/UE variants.

Kanoulas & Aslam 2009 ("Empirical Justification of the Gain and Discount Function for nDCG", CIKM
2009) treat the gain of every relevance grade and the discount of every rank as unknowns and choose
them to maximise the dependability coefficient of generalizability theory (their eq. 2),

    Φ(n) = σ²(s) / (σ²(s) + (σ²(t) + σ²(s:t)) / n),

with the variance components of a systems x topics ANOVA of the per-topic scores.  Since Φ(n) is an
increasing function of σ²(s) / (σ²(t) + σ²(s:t)), its argmax does not depend on n and the objective is
Φ(1) (§2.3).  Gains and discounts are probability distributions (nDCG is scale-free in both), the
discount non-increasing in the rank, the gains non-decreasing in the grade with gain 0 for the
non-relevant grade (their Figure 1); the optimisers here are scipy's SLSQP (the paper used MATLAB's
fmincon, an SQP method too, and minimax for the joint problem).

Every quantity is bilinear in the gain vector g (one entry per positive grade level) and the discount
vector d (one entry per rank 1..k).  For system s and topic t with C[s,t][j,r] = 1 when the document
at rank r has grade level j,

    DCG[s,t]  = gᵀ C[s,t] d,
    IDCG[t]   = gᵀ M_I[t] d     (judged documents sorted by gain, descending: trec_eval's ideal),
    E[DCG][t] = gᵀ M_E[t] d,    M_E[t][j,r] = n_tj / n_t · [r <= min(k, n_t)]
                                (linearity of expectation over a uniformly random permutation of the
                                 n_t judged documents; Karmaker & Feng 2022 eq. 7 with any discount),
    WLB[t]    = gᵀ M_W[t] d     (judged documents sorted by gain, ascending; Westerborg 2022 §3.1),

so C is precomputed once (S x T x J x k counts) and every optimiser step costs a few tensor
contractions, never a re-evaluation of the runs.  nDCG = DCG / IDCG (0 when IDCG = 0); a variant V of
Karmaker & Feng 2022 / Feng 2023 is V(A, I, E, W) from :mod:`ulnorm_eval.core.normalise` on the DCG
scale, which equals V on the nDCG scale (every normaliser is invariant to a common scale of A, I, E,
W), with the judged documents as the random ranker's pool (``--pool qrels``) and an undefined topic
scoring 0 (``--undefined zero``), as ``eval`` does by default.

Everything here is a pure function over numpy arrays (scipy for the optimiser).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np

from . import stats

__all__ = [
    "GAINS", "DISCOUNTS", "named_gains", "named_discount", "normalised",
    "MeasureSpec", "parse_measure", "Design", "level_index",
    "scores", "objective", "components",
    "Optimum", "optimise_discount", "optimise_gains", "optimise_joint",
    "gain_ratios", "measure_string", "dcg_with_vectors", "discount_at", "parse_topics", "study",
    "ASL_FUNCTIONS", "function_label", "tau_table", "asl_table", "topic_resamples", "topics_needed_resampled",
    "topic_splits", "error_ratio", "paired_ratios", "ratio_claim",
]

GAINS = ("linear", "exponential")
DISCOUNTS = ("log", "zipf", "linear")
VARIANT_ALIASES = {"UE1": "UL1", "UE2": "UL2"}  # Feng 2023's names for Karmaker & Feng 2022's UL1, UL2


# =========================================================================== named functions

def normalised(x) -> np.ndarray:
    """x / sum(x): the paper's probability-distribution form (§2.3), Φ is invariant to the scale."""
    x = np.asarray(x, dtype=np.float64)
    s = x.sum()
    if not s > 0:
        raise ValueError("a gain or discount vector needs a positive sum")
    return x / s


def named_gains(name: str, levels) -> np.ndarray:
    """Gains of the positive grade ``levels`` as a probability distribution.

    'linear': gain(l) = l (trec_eval's, Järvelin & Kekäläinen 2002); 'exponential': 2^l - 1 (Burges
    et al. 2005, as cited by Kanoulas & Aslam 2009 §1).
    """
    levels = np.asarray(levels, dtype=np.float64)
    if name == "linear":
        return normalised(levels)
    if name in ("exponential", "exp"):
        return normalised(np.exp2(levels) - 1.0)
    raise ValueError(f"unknown gain {name!r} ({', '.join(GAINS)})")


def named_discount(name: str, k: int) -> np.ndarray:
    """Discount of ranks r = 1..k as a probability distribution (Kanoulas & Aslam 2009 §3.1, Figure 2).

    'log': 1/log2(1+r); 'zipf': 1/r; 'linear': (k+1-r)/k; 'log2' is an alias of 'log'.
    """
    r = np.arange(1, int(k) + 1, dtype=np.float64)
    if name in ("log", "log2"):
        return normalised(1.0 / np.log2(1.0 + r))
    if name in ("zipf", "zipfian"):
        return normalised(1.0 / r)
    if name == "linear":
        return normalised((k + 1.0 - r) / k)
    raise ValueError(f"unknown discount {name!r} ({', '.join(DISCOUNTS)})")


# =========================================================================== kernels for the registry

def discount_at(pos, discount) -> np.ndarray:
    """Discount factor of each 0-based rank ``pos`` from a discount vector (0 past its end): the
    measure's own kernel (:func:`ulnorm_eval.core.kernels.vector_discount`), so DCG = rowsum(gain * discount_at(pos, d))."""
    from ..core.kernels import vector_discount

    return vector_discount(pos, discount)


def dcg_with_vectors(gain_matrix, discount) -> np.ndarray:
    """DCG of each row of ``gain_matrix`` (rows x ranks: the gain of the document at each rank, 0
    where there is none) with an arbitrary discount vector: sum_r gain[row, r] * d_r.

    Ranks past the end of ``discount`` count 0 (a cutoff); ranks past the end of the matrix add
    nothing.  nDCG is this divided by the same sum over the ideal ordering.
    """
    G = np.asarray(gain_matrix, dtype=np.float64)
    d = np.asarray(discount, dtype=np.float64)
    k = min(G.shape[-1], len(d))
    return G[..., :k] @ d[:k]


# =========================================================================== measures

@dataclass(frozen=True)
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

    return {v.name: v.normalise for v in VARIANTS.values() if v.normalise is not None}


def parse_measure(text: str) -> MeasureSpec:
    """'nDCG', 'DCG', 'UL2(nDCG)', 'UE2(DCG)' ... (a cutoff, '@k', is given separately with -k)."""
    normalisers = _normalisers()

    t = text.strip()
    m = re.fullmatch(r"(?:([A-Za-z0-9]+)\(\s*)?(n?DCG)(?(1)\s*\))", t, flags=re.IGNORECASE)
    if not m:
        raise ValueError(f"unknown measure {text!r}: stability takes nDCG, DCG or a variant of them "
                         f"such as UL2(nDCG) (the cutoff is -k)")
    base = "nDCG" if m.group(2).lower() == "ndcg" else "DCG"
    v = m.group(1)
    if v is None:
        return MeasureSpec(base)
    v = VARIANT_ALIASES.get(v.upper(), v.upper())
    if v not in normalisers:
        names = ", ".join([*normalisers, *VARIANT_ALIASES])
        raise ValueError(f"unknown variant {m.group(1)!r} in {text!r} (stability takes {names})")
    return MeasureSpec(base, v)


# =========================================================================== the precomputed design

def level_index(row, grade, judged, pos, nt: int, k: int, levels) -> np.ndarray:
    """(T, k) grade-level index of each rank of one run: j for ``levels[j]``, -1 for gain 0 (a
    non-relevant, negative-grade or unjudged document, or no document at that rank).

    ``row``, ``grade``, ``judged``, ``pos``: the flat ranking (topic index, grade, judged flag,
    0-based rank) of :class:`~ulnorm_eval.core.kernels.Ranking`.
    """
    out = np.full((nt, k), -1, dtype=np.int64)
    levels = np.asarray(levels, dtype=np.float64)
    row, grade, pos = np.asarray(row), np.asarray(grade, dtype=np.float64), np.asarray(pos)
    keep = (pos < k) & (grade > 0)
    if judged is not None:
        keep &= np.asarray(judged, dtype=bool)
    j = np.searchsorted(levels, grade[keep])
    ok = (j < len(levels))
    ok[ok] = levels[j[ok]] == grade[keep][ok]
    if not ok.all():
        raise ValueError("a ranked grade is not among the qrels' grade levels")
    out[row[keep], pos[keep]] = j
    return out


@dataclass
class Design:
    """What the objective needs, computed once from the runs and the qrels.

    ``C``: (S, T, J, k) 0/1 counts, C[s,t,j,r] = 1 when run s ranks a document of grade ``levels[j]``
    at rank r+1 of topic t; ``counts``: (T, J) judged documents of each positive level; ``pool``: (T,)
    judged documents of the topic (the random ranker's pool, any grade).
    """

    C: np.ndarray
    counts: np.ndarray
    pool: np.ndarray
    levels: np.ndarray
    systems: list = field(default_factory=list)
    topics: list = field(default_factory=list)

    @classmethod
    def from_levels(cls, idx, counts, pool, levels, systems=(), topics=()):
        """From the (S, T, k) level indices of :func:`level_index` (one per run, stacked)."""
        idx = np.asarray(idx)
        J = len(levels)
        C = (idx[:, :, None, :] == np.arange(J)[None, None, :, None]).astype(np.float64)
        return cls(C, np.asarray(counts, dtype=np.float64), np.asarray(pool, dtype=np.float64),
                   np.asarray(levels, dtype=np.float64), list(systems), list(topics))

    @property
    def k(self) -> int:
        return self.C.shape[-1]

    @property
    def n_levels(self) -> int:
        return self.C.shape[2]

    def at(self, k: int) -> "Design":
        """The same design cut at rank k (a view, no copy)."""
        if k > self.k:
            raise ValueError(f"the design holds ranks 1..{self.k}, not {k}")
        return Design(self.C[..., :k], self.counts, self.pool, self.levels, self.systems, self.topics)

    def subset(self, idx) -> "Design":
        """The same design on the topics ``idx`` (indices into ``topics``)."""
        idx = np.asarray(idx)
        return Design(self.C[:, idx], self.counts[idx], self.pool[idx], self.levels, self.systems,
                      [self.topics[i] for i in idx] if self.topics else [])

    def topic_forms(self, g) -> np.ndarray:
        """(3, T, J, k): M_I, M_E, M_W, the bilinear forms of IDCG, E[DCG] and WLB for the gain order of g.

        The ideal puts the judged documents in descending order of gain (ties: higher grade first,
        which changes no value), the worst in ascending order, the non-relevant ones (gain 0) first.
        """
        g = np.asarray(g, dtype=np.float64)
        J, k = self.n_levels, self.k
        r = np.arange(k)
        desc = np.lexsort((-self.levels, -g))
        asc = desc[::-1]
        nonrel = self.pool - self.counts.sum(axis=1)
        forms = np.empty((3, len(self.pool), J, k))
        for q, order, offset in ((0, desc, np.zeros(len(self.pool))), (2, asc, nonrel)):
            sizes = self.counts[:, order]
            start = offset[:, None] + np.concatenate([np.zeros((len(self.pool), 1)), np.cumsum(sizes, axis=1)[:, :-1]],
                                                     axis=1)
            block = (r >= start[:, :, None]) & (r < (start + sizes)[:, :, None])
            forms[q][:, order, :] = block
        with np.errstate(invalid="ignore", divide="ignore"):
            share = np.where(self.pool[:, None] > 0, self.counts / np.where(self.pool > 0, self.pool, 1)[:, None], 0.0)
        depth = np.minimum(self.pool, k)
        forms[1] = share[:, :, None] * (r[None, None, :] < depth[:, None, None])
        return forms


# =========================================================================== objective

def _bilinear(design: Design, g, d):
    """A (S, T) and the topic values I, E, W (3, T), with the partial contractions for gradients."""
    Cg = np.tensordot(design.C, g, axes=([2], [0]))  # (S, T, k)
    A = Cg @ d
    forms = design.topic_forms(g)
    Fg = np.tensordot(forms, g, axes=([2], [0]))  # (3, T, k)
    IEW = Fg @ d
    return A, IEW, Cg, forms, Fg


def _measure_values(spec: MeasureSpec, A, I, E, W):
    """Per (system, topic) values and their partials with respect to A, I, E, W."""
    S, T = A.shape
    zero = np.zeros((S, T))
    if spec.variant is None:
        if spec.base == "DCG":
            return A, (np.ones((S, T)), zero, zero, zero)
        ok = I > 0
        inv = np.where(ok, 1.0 / np.where(ok, I, 1.0), 0.0)
        Y = A * inv[None, :]
        return Y, (np.broadcast_to(inv, (S, T)), -Y * inv[None, :], zero, zero)
    f = _normalisers()[spec.variant]
    args = np.broadcast_arrays(A, I[None, :], E[None, :], W[None, :])

    def value(*xs):
        v, und = f(*xs)
        return np.where(und, 0.0, v)  # --undefined zero

    Y = value(*args)
    # central differences of the elementwise normaliser: only the search direction uses them, every
    # reported value is exact
    parts = []
    scale = np.maximum(np.abs(args[1]), 1e-300)
    for i in range(4):
        h = 1e-7 * scale
        up = list(args)
        dn = list(args)
        up[i] = args[i] + h
        dn[i] = args[i] - h
        with np.errstate(invalid="ignore", divide="ignore"):
            parts.append(np.nan_to_num((value(*up) - value(*dn)) / (2 * h)))
    return Y, tuple(parts)


def scores(design: Design, g, d, spec: MeasureSpec) -> np.ndarray:
    """(S, T) values of the measure with gains ``g`` and discount ``d``."""
    g, d = np.asarray(g, dtype=np.float64), np.asarray(d, dtype=np.float64)
    A, (I, E, W), *_ = _bilinear(design, g, d)
    return _measure_values(spec, A, I, E, W)[0]


def components(design: Design, g, d, spec: MeasureSpec) -> stats.VarianceComponents:
    """Variance components of the (S, T) scores (:func:`ulnorm_eval.analysis.stats.variance_components`)."""
    return stats.variance_components(scores(design, g, d, spec))


def _phi1_grad(Y):
    """Φ(1) = σ²(s)/(σ²(s)+σ²(t)+σ²(s:t)) of Y and dΦ(1)/dY (Kanoulas & Aslam 2009 Figure 1).

    With the ANOVA mean squares of :func:`stats.variance_components`:
    dMS_s/dy_st = 2(m_s - m)/(n_s - 1), dMS_t/dy_st = 2(m_t - m)/(n_t - 1),
    dMS_st/dy_st = 2 r_st/((n_s - 1)(n_t - 1)) with r the interaction residual; an estimate clipped
    at 0 contributes no derivative.
    """
    vc = stats.variance_components(Y)
    ns, nt = Y.shape
    m = Y.mean()
    ms, mt = Y.mean(axis=1), Y.mean(axis=0)
    R = Y - ms[:, None] - mt[None, :] + m
    dMSs = np.broadcast_to((2.0 * (ms - m) / (ns - 1))[:, None], Y.shape)
    dMSt = np.broadcast_to((2.0 * (mt - m) / (nt - 1))[None, :], Y.shape)
    dMSst = 2.0 * R / ((ns - 1) * (nt - 1))
    ds = (dMSs - dMSst) / nt if vc.ms_system - vc.ms_residual > 0 else np.zeros(Y.shape)
    dt = (dMSt - dMSst) / ns if vc.ms_topic - vc.ms_residual > 0 else np.zeros(Y.shape)
    tot = vc.system + vc.topic + vc.residual
    if tot <= 0:
        return 0.0, np.zeros(Y.shape), vc
    phi1 = vc.system / tot
    grad = (ds * tot - vc.system * (ds + dt + dMSst)) / tot ** 2
    return phi1, grad, vc


def objective(design: Design, g, d, spec: MeasureSpec):
    """(Φ(1), dΦ(1)/dg, dΦ(1)/dd): the objective of Kanoulas & Aslam 2009 §2.3 and its gradient."""
    g, d = np.asarray(g, dtype=np.float64), np.asarray(d, dtype=np.float64)
    A, IEW, Cg, forms, Fg = _bilinear(design, g, d)
    Y, (fA, fI, fE, fW) = _measure_values(spec, A, *IEW)
    phi1, P, _ = _phi1_grad(Y)
    wA = P * fA
    wT = np.stack([(P * f).sum(axis=0) for f in (fI, fE, fW)])  # (3, T)
    grad_d = np.einsum("st,str->r", wA, Cg) + np.einsum("qt,qtr->r", wT, Fg)
    grad_g = np.einsum("st,stj->j", wA, design.C @ d) + np.einsum("qt,qtj->j", wT, forms @ d)
    return phi1, grad_g, grad_d


# =========================================================================== optimisers

@dataclass
class Optimum:
    """The best of several SLSQP runs, polished onto the constraint set.

    ``phi1``: Φ(1) at the returned vectors (the maximised objective, computed afresh);
    ``residual``: largest violation of any constraint (sums, bounds, monotonicity);
    ``converged``: SLSQP reported success for the best start; ``agree``: starts whose objective came
    within 1e-6 of the best (a hint that the optimum is global); ``starts``: starts tried.
    """

    gains: np.ndarray
    discount: np.ndarray
    phi1: float
    residual: float
    converged: bool
    message: str
    nit: int
    starts: int
    agree: int
    successes: int


def _polish(x, monotone: str | None):
    """Onto the constraint set exactly: no negative entry, monotone, summing to 1."""
    x = np.maximum(np.asarray(x, dtype=np.float64), 0.0)
    if monotone == "down":
        x = np.minimum.accumulate(x)
    elif monotone == "up":
        x = np.maximum.accumulate(x)
    return normalised(x) if x.sum() > 0 else np.full(len(x), 1.0 / len(x))


def residual(x, monotone: str | None) -> float:
    """Largest violation of sum(x) = 1, x >= 0 and the monotonicity (``'down'``/``'up'``/None)."""
    x = np.asarray(x, dtype=np.float64)
    worst = max(abs(x.sum() - 1.0), float(max(0.0, -x.min())))
    if monotone == "down" and len(x) > 1:
        worst = max(worst, float(max(0.0, np.max(x[1:] - x[:-1]))))
    if monotone == "up" and len(x) > 1:
        worst = max(worst, float(max(0.0, np.max(x[:-1] - x[1:]))))
    return worst


def _block_constraints(offset: int, n: int, total: int, monotone: str | None) -> list:
    """SLSQP constraints of one block x[offset:offset+n]: sum 1, and monotone differences >= 0."""
    a = np.zeros(total)
    a[offset:offset + n] = 1.0
    cons = [{"type": "eq", "fun": lambda x, a=a: np.array([a @ x - 1.0]), "jac": lambda x, a=a: a[None, :]}]
    if monotone:
        # down: x_r - x_{r+1} >= 0 and x_n >= 0; up: x_{r+1} - x_r >= 0 and x_1 >= 0.  With the sum,
        # these imply 0 <= x <= 1, so no bounds are needed (SLSQP is ~2x faster without them).
        D = np.zeros((n, total))
        i = np.arange(n - 1)
        if monotone == "down":
            D[i, offset + i], D[i, offset + i + 1] = 1.0, -1.0
            D[n - 1, offset + n - 1] = 1.0
        else:
            D[i, offset + i + 1], D[i, offset + i] = 1.0, -1.0
            D[n - 1, offset] = 1.0
    else:
        D = np.zeros((n, total))
        D[np.arange(n), offset + np.arange(n)] = 1.0  # x >= 0
    cons.append({"type": "ineq", "fun": lambda x, D=D: D @ x, "jac": lambda x, D=D: D})
    return cons


def _random_start(rng, n: int, monotone: str | None) -> np.ndarray:
    x = rng.dirichlet(np.ones(n))
    if monotone == "down":
        x = np.sort(x)[::-1]
    elif monotone == "up":
        x = np.sort(x)
    return x


def _one_blas_thread():
    """BLAS limited to one thread: SLSQP's small dense solves are 8x slower when OpenBLAS threads
    contend on a busy machine (threadpoolctl; without it, nothing changes)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover
        import contextlib
        return contextlib.nullcontext()
    return threadpool_limits(1, user_api="blas")


def _run(fun, starts, n_g, n_d, mono_g, mono_d, tick=None):
    """SLSQP from every start; the best polished result (a start itself counts as a candidate).
    ``tick()`` (a progress bar's) is called after each start."""
    with _one_blas_thread():
        return _run_starts(fun, starts, n_g, n_d, mono_g, mono_d, tick)


def _run_starts(fun, starts, n_g, n_d, mono_g, mono_d, tick=None):
    from scipy.optimize import minimize

    total = n_g + n_d
    cons = []
    if n_g:
        cons += _block_constraints(0, n_g, total, mono_g)
    if n_d:
        cons += _block_constraints(n_g, n_d, total, mono_d)

    def split(x):
        return x[:n_g], x[n_g:]

    def polish(x):
        g, d = split(x)
        return np.concatenate([_polish(g, mono_g) if n_g else g, _polish(d, mono_d) if n_d else d])

    results = []
    for x0 in starts:
        x0 = polish(np.asarray(x0, dtype=np.float64))
        res = minimize(fun, x0, jac=True, method="SLSQP", constraints=cons,
                       options={"maxiter": 1000, "ftol": 1e-12})
        x = polish(res.x)
        val = -fun(x)[0]
        start_val = -fun(x0)[0]
        if start_val > val:  # SLSQP is not monotone: never return worse than where it started
            x, val = x0, start_val
        results.append((val, x, bool(res.success), str(res.message), int(res.nit)))
        if tick is not None:
            tick()
    best = max(results, key=lambda r: r[0])
    agree = sum(abs(r[0] - best[0]) <= 1e-6 * max(1.0, abs(best[0])) for r in results)
    return best, agree, sum(r[2] for r in results), len(results)


def _finish(best, agree, successes, nstarts, g, d, mono_g, mono_d) -> Optimum:
    val, _, ok, msg, nit = best
    res = max(residual(g, mono_g), residual(d, mono_d))
    return Optimum(g, d, val, res, ok, msg, nit, nstarts, agree, successes)


def optimise_discount(design: Design, gains, spec: MeasureSpec, *, monotone: bool = True, restarts: int = 4,
                      seed: int = 0, starts=(), tick=None) -> Optimum:
    """argmax_d Φ(1) over the simplex of ranks 1..k, non-increasing unless ``monotone=False``
    (Kanoulas & Aslam 2009 Figure 1, right; Figure 3 without monotonicity), gains fixed.

    Starts: the log, Zipfian, linear and uniform discounts, any given ``starts``, then ``restarts``
    seeded random points of the feasible set.
    """
    g = np.asarray(gains, dtype=np.float64)
    k = design.k
    mono = "down" if monotone else None
    rng = np.random.default_rng(seed)
    x0 = [named_discount(n, k) for n in DISCOUNTS] + [np.full(k, 1.0 / k)] + [np.asarray(s) for s in starts]
    x0 += [_random_start(rng, k, mono) for _ in range(restarts)]

    def fun(x):
        v, _, gd = objective(design, g, x, spec)
        return -v, -gd

    best, agree, succ, n = _run(fun, x0, 0, k, None, mono, tick)
    return _finish(best, agree, succ, n, g, best[1], None, mono)


def optimise_gains(design: Design, discount, spec: MeasureSpec, *, monotone: bool = True, restarts: int = 4,
                   seed: int = 0, starts=(), tick=None) -> Optimum:
    """argmax_g Φ(1) over the simplex of the positive grade levels (the non-relevant grade's gain fixed
    at 0), non-decreasing in the grade unless ``monotone=False`` (Kanoulas & Aslam 2009 Figure 1,
    left; Table 2's unconstrained column), discount fixed."""
    d = np.asarray(discount, dtype=np.float64)
    J = design.n_levels
    mono = "up" if monotone else None
    rng = np.random.default_rng(seed)
    x0 = [named_gains(n, design.levels) for n in GAINS] + [np.full(J, 1.0 / J)] + [np.asarray(s) for s in starts]
    x0 += [_random_start(rng, J, mono) for _ in range(restarts)]

    def fun(x):
        v, gg, _ = objective(design, x, d, spec)
        return -v, -gg

    if J == 1:  # binary grades: the simplex is one point
        g = np.ones(1)
        v = objective(design, g, d, spec)[0]
        return Optimum(g, d, v, residual(g, mono), True, "one grade level: nothing to optimise", 0, 1, 1, 1)
    best, agree, succ, n = _run(fun, x0, J, 0, mono, None, tick)
    return _finish(best, agree, succ, n, best[1], d, mono, None)


def optimise_joint(design: Design, spec: MeasureSpec, *, monotone: bool = True, restarts: int = 4, seed: int = 0,
                   starts=(), tick=None) -> Optimum:
    """argmax_(g, d) Φ(1) over both simplices with both monotonicity constraints.

    Kanoulas & Aslam 2009 §3.3 solve this with MATLAB's minimax ("the discount and gain functions that
    maximize the worst case value of nDCG stability"); with the single objective Φ the minimax
    problem is this joint maximisation.  Starts: every pair of named gains and discounts, the given
    ``starts`` ((g, d) pairs, e.g. the separate optima, so the joint optimum is never below them),
    then ``restarts`` seeded random points.
    """
    J, k = design.n_levels, design.k
    mg, md = ("up", "down") if monotone else (None, None)
    rng = np.random.default_rng(seed)
    x0 = [np.concatenate([named_gains(a, design.levels), named_discount(b, k)]) for a in GAINS for b in DISCOUNTS]
    x0 += [np.concatenate([np.asarray(g, float), np.asarray(d, float)]) for g, d in starts]
    x0 += [np.concatenate([_random_start(rng, J, mg), _random_start(rng, k, md)]) for _ in range(restarts)]

    def fun(x):
        v, gg, gd = objective(design, x[:J], x[J:], spec)
        return -v, -np.concatenate([gg, gd])

    best, agree, succ, n = _run(fun, x0, J, k, mg, md, tick)
    return _finish(best, agree, succ, n, best[1][:J], best[1][J:], mg, md)


# =========================================================================== reporting helpers

def gain_ratios(levels, gains) -> dict:
    """{'2/1': gain(2)/gain(1), ...} between consecutive positive grade levels (Kanoulas & Aslam
    2009 Table 2 reports highly relevant / relevant); inf when the lower gain is 0."""
    out = {}
    for a, b, ga, gb in zip(levels[:-1], levels[1:], gains[:-1], gains[1:]):
        key = f"{_num(b)}/{_num(a)}"
        out[key] = gb / ga if ga > 0 else (math.inf if gb > 0 else math.nan)
    return out


def _num(x) -> str:
    x = float(x)
    return str(int(x)) if x.is_integer() else repr(x)


def _short(x: float, digits: int) -> str:
    return f"{x:.{digits}g}"


def measure_string(spec: MeasureSpec, k: int, levels, gains, discount, digits: int = 12) -> str:
    """The pasteable measure, e.g. ``nDCG(gains={0:0,1:1,2:1.2}, discount=[1,0.8,...])@100``.

    Gains are scaled so the lowest positive grade gains 1 (or the largest gain is 1 when that one
    is 0), the discount so its largest factor is 1: nDCG and every variant are invariant to both
    scales, DCG is multiplied by a constant, which leaves Φ unchanged.  ``digits`` significant digits.
    """
    g = np.asarray(gains, dtype=np.float64)
    d = np.asarray(discount, dtype=np.float64)
    gs = g / (g[0] if g[0] > 0 else g.max())
    ds = d / d.max()
    gtxt = ",".join([f"{_num(0)}:0"] + [f"{_num(lv)}:{_short(x, digits)}" for lv, x in zip(levels, gs)])
    dtxt = ",".join(_short(x, digits) for x in ds)
    inner = f"{spec.base}(gains={{{gtxt}}}, discount=[{dtxt}])@{k}"
    return f"{spec.variant}({inner})" if spec.variant else inner


def parse_topics(spec: str, available) -> list:
    """The topics of ``available`` that ``spec`` selects, in ``available``'s order.

    ``spec``: comma-separated items, each a topic id or an inclusive numeric range ``a-b``
    (e.g. ``601-650`` or ``301-310,601-650,700``).  An item matching nothing is an error.
    """
    want_ids, ranges = set(), []
    for item in (x.strip() for x in spec.split(",")):
        if not item:
            continue
        m = re.fullmatch(r"(\d+)\s*-\s*(\d+)", item)
        if m:
            lo, hi = int(m.group(1)), int(m.group(2))
            if lo > hi:
                raise ValueError(f"--topics: empty range {item!r}")
            ranges.append((lo, hi, item))
        else:
            want_ids.add(item)
    if not want_ids and not ranges:
        raise ValueError(f"--topics: no topic in {spec!r}")
    avail = list(available)
    chosen = []
    hit = dict.fromkeys([*want_ids, *(r[2] for r in ranges)], False)
    for q in avail:
        take = False
        if q in want_ids:
            hit[q] = take = True
        if q.isdigit():
            for lo, hi, item in ranges:
                if lo <= int(q) <= hi:
                    hit[item] = take = True
        if take:
            chosen.append(q)
    missing = [i for i, h in hit.items() if not h]
    if missing:
        raise ValueError(f"--topics: {missing[0]!r} matches no topic of the qrels")
    return chosen


# =========================================================================== the study of the command

def topic_resamples(n_topics: int, reps: int, seed: int = 0) -> np.ndarray:
    """(reps x n_topics) topic indices drawn with replacement, seeded: the same resamples serve every
    function, so two functions are compared on identical topic sets."""
    return np.random.default_rng(seed).integers(0, n_topics, size=(reps, n_topics))


def topics_needed_resampled(Y, resamples, target: float) -> np.ndarray:
    """The topics needed for Φ >= ``target`` on every topic resample of the systems x topics scores ``Y``
    (a bootstrap over topics: how far the count moves with the topics drawn)."""
    return np.array([stats.topics_needed(stats.variance_components(Y[:, ix]), target) for ix in resamples],
                    dtype=np.float64)


def entry_starts(unconstrained: str, restarts: int) -> int:
    """The SLSQP starts of one measure and cutoff's optima (:func:`_entries`), the unit of stability's
    progress bar: the discount's named and uniform starts, the gains', the joint's pairs of named
    functions and the two separate optima, each with ``restarts`` random ones, and the unconstrained
    runs from their constrained optimum."""
    per = [len(DISCOUNTS) + 1, len(GAINS) + 1, len(GAINS) * len(DISCOUNTS) + 2]
    per += [len(DISCOUNTS) + 2] if unconstrained in ("discount", "both") else []
    per += [len(GAINS) + 2] if unconstrained in ("gains", "both") else []
    return sum(per) + len(per) * restarts


def _entries(dk: Design, spec: MeasureSpec, k: int, *, gain: str, discount: str, unconstrained: str,
             restarts: int, seed: int, tick=None) -> list:
    """The functions of one measure and cutoff, in the rows' order: (optimised, constrained, gain name,
    discount name, g, d, Optimum | None); the optima are fitted on ``dk``'s topics.  ``tick()`` is
    called after each SLSQP start (:func:`entry_starts` in all)."""
    fixed_g = named_gains(gain, dk.levels)
    fixed_d = named_discount(discount, k)
    entries = []
    for dn in DISCOUNTS:
        entries.append(("", True, gain, dn, fixed_g, named_discount(dn, k), None))
    opt_d = optimise_discount(dk, fixed_g, spec, restarts=restarts, seed=seed, tick=tick)
    entries.append(("discount", True, gain, "optimal", opt_d.gains, opt_d.discount, opt_d))
    if unconstrained in ("discount", "both"):
        o = optimise_discount(dk, fixed_g, spec, monotone=False, restarts=restarts, seed=seed,
                              starts=[opt_d.discount], tick=tick)
        entries.append(("discount", False, gain, "optimal (unconstrained)", o.gains, o.discount, o))
    for gn in GAINS:
        if gn != gain:  # (gain, discount) is already a discount row
            entries.append(("", True, gn, discount, named_gains(gn, dk.levels), fixed_d, None))
    opt_g = optimise_gains(dk, fixed_d, spec, restarts=restarts, seed=seed, tick=tick)
    entries.append(("gains", True, "optimal", discount, opt_g.gains, opt_g.discount, opt_g))
    if unconstrained in ("gains", "both"):
        o = optimise_gains(dk, fixed_d, spec, monotone=False, restarts=restarts, seed=seed,
                           starts=[opt_g.gains], tick=tick)
        entries.append(("gains", False, "optimal (unconstrained)", discount, o.gains, o.discount, o))
    joint = optimise_joint(dk, spec, restarts=restarts, seed=seed,
                           starts=[(opt_d.gains, opt_d.discount), (opt_g.gains, opt_g.discount)], tick=tick)
    entries.append(("gains+discount", True, "optimal (joint)", "optimal (joint)", joint.gains,
                    joint.discount, joint))
    return entries


def topic_splits(n_topics: int, splits: int, seed: int = 0) -> list:
    """``splits`` seeded random halves of the topics: (fit, held-out) index arrays of floor(T/2) and the
    other ceil(T/2) topics."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(splits):
        perm = rng.permutation(n_topics)
        out.append((np.sort(perm[: n_topics // 2]), np.sort(perm[n_topics // 2:])))
    return out


def error_ratio(Y) -> float:
    """(σ²(t) + σ²(s:t)) / σ²(s) of the systems x topics scores ``Y``: the topics needed for Φ >= P are
    this times P / (1 - P) (Kanoulas & Aslam 2009 eq. 2 solved for n), so the ratio of two functions'
    topic counts, unrounded, is the ratio of their error ratios whatever P (inf when σ²(s) = 0)."""
    vc = stats.variance_components(Y)
    return (vc.topic + vc.residual) / vc.system if vc.system > 0 else math.inf


def ratio_claim(p: dict, digits: int = 2) -> str:
    """The sentence a paired comparison of :func:`paired_ratios` supports: a needs more (fewer) topics
    than b only when the whole 95 % interval of the ratio lies above (below) 1, else "not separated
    from"; with the ratio and its interval, e.g. ``UL2(nDCG@20) linear/log needs more topics than
    nDCG@20 linear/log: 1.70x [1.10, 2.35]``."""
    a = f"{p['measure_a']} {p['function_a']}"
    b = f"{p['measure_b']} {p['function_b']}"
    lo, hi = p["ratio 2.5%"], p["ratio 97.5%"]
    verb = ("needs more topics than" if lo > 1 else "needs fewer topics than" if hi < 1
            else "is not separated from")

    def bound(x):  # more digits where rounding would print a bound that excludes 1 as 1
        for d in range(digits, digits + 4):
            if x == 1 or float(f"{x:.{d}f}") != 1:
                return f"{x:.{d}f}"
        return repr(x)
    return f"{a} {verb} {b}: {p['ratio']:.{digits}f}x [{bound(lo)}, {bound(hi)}]"


def paired_ratios(rows, draws: dict, *, reference: str = "log") -> list:
    """Paired topic-bootstrap comparisons of topics needed: within each measure and cutoff every
    function against the ``reference`` discount row (the --gain gains with it), every function of
    a variant measure against the same function of the first measure, and every named function at a
    later cutoff against the same at the first cutoff.  ``draws``: row index -> the
    error ratio (:func:`error_ratio`) on each topic resample, the same resamples for every row, so each
    ratio is paired.  One dict per comparison: the ratio of the unrounded topic counts (a / b) on the
    topics evaluated, the 2.5 and 97.5 percentiles of the resampled ratios, and the share of resamples
    where a needs fewer topics than b.  An optimum is not re-fitted on a resample (its ratio to a named
    function is optimistic: see the held-out split)."""
    out = []
    by_measure: dict = {}
    for i, r in enumerate(rows):
        by_measure.setdefault((r["k"], r["measure"]), []).append(i)

    def pair(i, j):
        a, b = rows[i], rows[j]
        full = a["_error_ratio"] / b["_error_ratio"]
        ratio = draws[i] / draws[j]
        lo, hi = np.percentile(ratio, [2.5, 97.5])
        row = {"k": a["k"], "measure_a": a["measure"], "function_a": function_label(a),
               "measure_b": b["measure"], "function_b": function_label(b), "ratio": float(full),
               "ratio 2.5%": float(lo), "ratio 97.5%": float(hi), "share a<b": float(np.mean(ratio < 1)),
               "share a>b": float(np.mean(ratio > 1)), "resamples": int(len(ratio))}
        row["claim"] = ratio_claim(row)
        return row

    firsts: dict = {}
    first_k: dict = {}
    for (k, name), idx in by_measure.items():
        if len(by_measure) > 1:  # every cutoff against the first one, function by function
            base_k = first_k.setdefault(name.replace(f"@{k}", "@"), idx)
            if base_k is not idx:
                base = {function_label(rows[i]) + str(rows[i]["monotone"]): i for i in base_k}
                for i in idx:
                    j = base.get(function_label(rows[i]) + str(rows[i]["monotone"]))
                    if j is not None and rows[i]["optimised"] == "—":
                        out.append(pair(i, j))
        ref = next((i for i in idx if rows[i]["optimised"] == "—" and rows[i]["discount"] == reference
                    and rows[i]["gain"] == rows[idx[0]]["gain"]), None)
        if ref is not None:
            out.extend(pair(i, ref) for i in idx if i != ref)
        first = firsts.setdefault(k, idx)
        if first is not idx:
            base = {function_label(rows[i]) + str(rows[i]["monotone"]): i for i in first}
            for i in idx:
                j = base.get(function_label(rows[i]) + str(rows[i]["monotone"]))
                if j is not None:
                    out.append(pair(i, j))
    return out


def study(design, specs, cutoffs, *, gain: str = "linear", discount: str = "log", unconstrained: str = "none",
          restarts: int = 3, seed: int = 0, at_topics: int | None = None, phi_targets=(0.95,),
          digits: int = 12, topic_bootstrap: int = 0, holdout: int = 0, paired: list | None = None,
          progress=None):
    """Rows (dicts) for every measure and cutoff: the named functions and the optima.

    Discount rows use the ``gain`` gains (Kanoulas & Aslam 2009 §3.1: linear), gain rows the
    ``discount`` discount (§3.2: log); the joint optimum starts also from both separate optima.
    ``unconstrained``: 'none', 'gains', 'discount' or 'both': which optimisations are repeated
    without monotonicity.  ``phi_targets``: a 'topics Φ>=P' column per target P.  ``topic_bootstrap``:
    resamples of the topics (seeded by ``seed``, the same for every row) giving the 2.5 and 97.5
    percentiles of each 'topics Φ>=P' (the optima are not re-optimised on each resample); with a list
    ``paired``, the paired comparisons of :func:`paired_ratios` are appended to it.  ``holdout``: random
    half splits of the topics (seeded by ``seed``): on each, every function is fitted on one half
    (the named ones need no fitting) and Φ at ``at_topics`` topics is computed from the variance
    components of the fitting half ('phi fit-half') and of the other half ('phi held-out'), and the
    held-out Φ minus the log discount's on the same split ('phi held-out - log'); each is reported as
    its mean over the splits with the 2.5 and 97.5 percentiles.  ``progress``: a progress bar's
    ``advance(units, total=None)``, told the SLSQP starts of every fit (:func:`entry_starts` per
    measure, cutoff and fitting half) and advanced after each.
    """
    n = at_topics or len(design.topics)
    if progress is not None:
        progress(0, total=entry_starts(unconstrained, restarts) * len(cutoffs) * len(specs) * (1 + holdout))
    rows, curves = [], []
    resamples = topic_resamples(len(design.topics), topic_bootstrap, seed) if topic_bootstrap else None
    halves = topic_splits(len(design.topics), holdout, seed) if holdout else []
    draws = {}
    for k in cutoffs:
        dk = design.at(k)
        for spec in specs:
            entries = _entries(dk, spec, k, gain=gain, discount=discount, unconstrained=unconstrained,
                               restarts=restarts, seed=seed, tick=progress)
            split_phi = np.full((len(entries), len(halves), 2), np.nan)
            for h, (fit, held) in enumerate(halves):
                dfit, dheld = dk.subset(fit), dk.subset(held)
                refit = _entries(dfit, spec, k, gain=gain, discount=discount, unconstrained=unconstrained,
                                 restarts=restarts, seed=seed, tick=progress)
                for e, (*_, g, d, _o) in enumerate(refit):
                    split_phi[e, h] = (stats.phi(components(dfit, g, d, spec), n),
                                       stats.phi(components(dheld, g, d, spec), n))
            for e, (optimised, constrained, gname, dname, g, d, o) in enumerate(entries):
                Y = scores(dk, g, d, spec)
                vc = stats.variance_components(Y)
                row = {"measure": spec.name(k), "k": k, "gain": gname, "discount": dname,
                       "optimised": optimised or "—", "monotone": constrained,
                       "phi": stats.phi(vc, n), "erho2": stats.erho2(vc, n),
                       **{f"topics Φ>={p:g}": stats.topics_needed(vc, p) for p in phi_targets},
                       **(_intervals(Y, resamples, phi_targets) if resamples is not None else {}),
                       **(_holdout_columns(split_phi[e], split_phi[0]) if halves else {}),
                       "phi1": stats.phi(vc, 1), "var_system": vc.system, "var_topic": vc.topic,
                       "var_residual": vc.residual}
                row.update({f"gain {key}": v for key, v in gain_ratios(dk.levels, g).items()})
                row.update({
                    "residual": max(residual(g, "up" if constrained else None),
                                    residual(d, "down" if constrained else None)),
                    "converged": None if o is None else o.converged,
                    "starts": None if o is None else o.starts,
                    "agree": None if o is None else o.agree,
                    "gains": [float(x) for x in g], "discount_factors": [float(x) for x in d],
                    "string": measure_string(spec, k, dk.levels, g, d, digits)})
                if paired is not None and resamples is not None:
                    row["_error_ratio"] = error_ratio(Y)
                    draws[len(rows)] = np.array([error_ratio(Y[:, ix]) for ix in resamples])
                rows.append(row)
                curves.append((row, vc))
    if paired is not None and resamples is not None:
        paired.extend(paired_ratios(rows, draws, reference="log"))
    for r in rows:
        r.pop("_error_ratio", None)
    return rows, curves


def _holdout_columns(phis, reference) -> dict:
    """Mean and 2.5/97.5 percentiles over the splits of Φ on the fitting half, on the held-out half, and
    of the held-out Φ minus the reference function's (the first row: the log discount) on the same split."""
    out = {}
    for name, v in (("phi fit-half", phis[:, 0]), ("phi held-out", phis[:, 1]),
                    ("phi held-out - log", phis[:, 1] - reference[:, 1])):
        lo, hi = np.percentile(v, [2.5, 97.5])
        out[name], out[f"{name} 2.5%"], out[f"{name} 97.5%"] = float(v.mean()), float(lo), float(hi)
    return out


# =========================================================================== rankings and discriminative power

# Kanoulas & Aslam 2009 §3.5 (Figure 9) compare four nDCG variations: (a) optimal gain and optimal
# discount, (b) linear gain and log discount, (c) exponential gain and log discount, (d) linear gain
# and linear discount.
ASL_FUNCTIONS = ("joint", "linear/log", "exponential/log", "linear/linear")


def function_label(row: dict) -> str:
    """A row's gain/discount pair as one label: 'linear/zipf', 'optimal/log', 'joint'."""
    return "joint" if row["optimised"] == "gains+discount" else f"{row['gain']}/{row['discount']}"


def _spec_of(row: dict, specs, k: int):
    return next(s for s in specs if s.name(k) == row["measure"])


def _intervals(Y, resamples, targets) -> dict:
    out = {}
    for p in targets:
        lo, hi = np.percentile(topics_needed_resampled(Y, resamples, p), [2.5, 97.5])
        out[f"topics Φ>={p:g} 2.5%"], out[f"topics Φ>={p:g} 97.5%"] = float(lo), float(hi)
    return out


def tau_table(design, specs, rows) -> list:
    """Kendall's τ between the rankings of the systems by mean score (over the topics evaluated) under
    every two gain/discount functions of one measure and cutoff (Kanoulas & Aslam 2009 Table 4, there
    for the discount functions at k = 100).  One dict per (measure, function_a, function_b), both
    orders and the diagonal included (a full matrix)."""
    out = []
    for name in dict.fromkeys(r["measure"] for r in rows):
        mine = [r for r in rows if r["measure"] == name]
        k = mine[0]["k"]
        spec, dk = _spec_of(mine[0], specs, k), design.at(k)
        means = {function_label(r): scores(dk, np.asarray(r["gains"]), np.asarray(r["discount_factors"]),
                                           spec).mean(axis=1) for r in mine}
        for a, ma in means.items():
            for b, mb in means.items():
                out.append({"measure": name, "k": k, "function_a": a, "function_b": b,
                            "tau": stats.kendall_tau(ma, mb)})
    return out


def asl_table(design, specs, rows, *, reps: int = 1000, seed: int = 0) -> list:
    """The achieved significance level (ASL) of Sakai's paired bootstrap test (``reps`` resamples) for
    every pair of systems under the four nDCG variations of Kanoulas & Aslam 2009 §3.5, Figure 9:
    the joint optimum, linear/log, exponential/log and linear/linear (computed here whatever
    --gain/--discount are).  One dict per (measure, function, pair), with ``order``, the pair's
    place when that function's ASLs are sorted increasingly (Figure 9's horizontal axis).  The same
    resamples serve every function (one seed)."""
    out = []
    S = design.C.shape[0]
    ii, jj = np.triu_indices(S, 1)
    names = list(design.systems) or [str(i) for i in range(S)]
    for name in dict.fromkeys(r["measure"] for r in rows):
        mine = [r for r in rows if r["measure"] == name]
        k = mine[0]["k"]
        spec, dk = _spec_of(mine[0], specs, k), design.at(k)
        joint = next(r for r in mine if r["optimised"] == "gains+discount")
        vectors = {"joint": (np.asarray(joint["gains"]), np.asarray(joint["discount_factors"]))}
        for label in ASL_FUNCTIONS[1:]:
            g, d = label.split("/")
            vectors[label] = (named_gains(g, dk.levels), named_discount(d, k))
        for label, (g, d) in vectors.items():
            Y = scores(dk, g, d, spec)
            asl = np.asarray(stats.pairwise_bootstrap(Y[ii] - Y[jj], reps=reps, seed=seed).p, dtype=np.float64)
            order = np.empty(len(asl), dtype=np.int64)
            order[np.argsort(asl, kind="stable")] = np.arange(1, len(asl) + 1)
            for a, b, p, o in zip(ii, jj, asl, order):
                out.append({"measure": name, "k": k, "function": label, "run_a": names[a], "run_b": names[b],
                            "asl": float(p), "order": int(o)})
    return out


# --------------------------------------------------------------------------- the command's request

MAX_COUNT_BYTES = 4_000_000_000  # the precomputed S x T x J x k counts are float64


def load_design(qrels_path, run_paths, k: int, topics: str | None = None, *, ties: str = "score",
                warn=None):
    """Read QRELS and RUNS into a :class:`~ulnorm_eval.analysis.stability.Design` at depth ``k``.

    Runs are ordered as trec_eval orders them (:func:`~ulnorm_eval.pipeline.ordering.rank_run`); the
    topics are the qrels' (natural order), filtered by ``topics``.  A topic a run retrieved nothing
    for scores 0 for that run (counted on stderr, as in ``eval``).
    """
    from ..inputs.trec import read_qrels, read_run
    from ..pipeline.ordering import judgements, natural_order, qrels_queries, rank_run

    warn = warn or (lambda msg: None)
    q = read_qrels(qrels_path)
    if q.skipped:
        warn(f"{qrels_path}: skipped {q.skipped} comment or blank lines")
    all_topics = natural_order(qrels_queries(q))
    qids = parse_topics(topics, all_topics) if topics else all_topics
    if topics:
        warn(f"--topics {topics}: {len(qids)} of {len(all_topics)} qrels topics kept, "
             f"{len(all_topics) - len(qids)} left out")
    J = judgements(q, qids)
    levels = np.unique(J.grade[J.grade > 0])
    if len(levels) == 0:
        raise ValueError(f"{qrels_path}: no relevant document in the topics evaluated")
    T = len(qids)
    pool = np.bincount(J.row, minlength=T)[:T].astype(np.float64)
    counts = np.stack([np.bincount(J.row, weights=(J.grade == lv), minlength=T)[:T] for lv in levels], axis=1)
    size = len(run_paths) * T * len(levels) * k * 8
    if size > MAX_COUNT_BYTES:
        raise ValueError(f"{len(run_paths)} runs x {T} topics x {len(levels)} grades x {k} ranks need "
                         f"{size / 1e9:.1f} GB of counts: select topics (--topics) or lower -k")
    idx, names = [], []
    for path in run_paths:
        run = read_run(path)
        rr = rank_run(run, q, qids, ties=ties, depth=k)
        rk = rr.ranking
        missing = int((~rr.present).sum())
        if missing:
            warn(f"{run.name}: {missing} of {T} topics have no ranked documents and score 0")
        if rr.ignored_queries and not topics:
            warn(f"{run.name}: {rr.ignored_queries} run topics absent from the qrels ignored")
        if run.skipped:
            warn(f"{path}: skipped {run.skipped} comment or blank lines")
        idx.append(level_index(rk.row, rk.grade, rk.judged, rk.pos, T, k, levels))
        names.append(run.name)
    return Design.from_levels(np.stack(idx), counts, pool, levels, names, qids)


@dataclass(frozen=True)
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
    progress: bool = True  # a progress bar on stderr when it is a terminal (render.progress.shown)


@dataclass
class StabilityOutcome:
    """The study of a request: its design, the functions' rows, the curves, and the extra tables."""

    design: object
    rows: list
    curves: dict
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
    from ..render.progress import shown, work_bar

    paired = [] if "paired" in request.tables else None
    with work_bar(shown(request.progress), "stability: SLSQP starts of the optima") as tick:
        rows, curves = study(design, request.specs, request.cutoffs, phi_targets=request.phi_targets, paired=paired,
                             progress=tick, **request.study)
    extra = {} if paired is None else {"paired": paired}
    if "tau" in request.tables:
        extra["tau"] = tau_table(design, request.specs, rows)
    if "asl" in request.tables:
        extra["asl"] = asl_table(design, request.specs, rows, reps=request.reps, seed=request.study.get("seed", 0))
    return StabilityOutcome(design, rows, curves, extra)
