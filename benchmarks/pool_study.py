"""Which default makes the headline number mean one thing?  The study of issue 47 (docs/bounds.md, "The study").

    python benchmarks/pool_study.py                      # both collections -> benchmarks/pool_study.md (~15 min, 2 busy cores)
    python benchmarks/pool_study.py --only dlhard --shuffles 20 --out -   # a quick look, markdown on stdout

A *candidate default* is a pool (what a random ranker permutes), a variant and an aggregate (how the 'all'
row is made from the queries), and for the interval check an interval method:

* pools: ``run`` (the run's own ranked documents), ``qrels`` (the judged documents), ``union`` (both),
  ``depth D`` (the run's top D documents, the places below its last one filled with non-relevant
  documents, so every pool has D documents and what lies below D changes nothing), ``file D`` (each
  query's top D documents of a first-stage run, the same for every run: TREC DL's re-ranking setting,
  where Karmaker & Feng 2022's question, a random ordering of the candidates, applies as in their paper;
  DL-HARD: bm25, of which three of the other runs are re-rankings; Robust 2003 has no shared first stage
  and stands in SABIR03BASE, Cornell's SMART baseline run), and ``qrels+U``: the judged documents and U
  unjudged (non-relevant) placeholders, the same for every run: the union pool of a run of U unjudged
  documents, made independent of the runs;
* variants: UL2 (Karmaker & Feng 2022 eq. 6), EM (Westerborg 2022 eq. 3.11), UEW (docs/bounds.md);
* aggregates: ``of means`` (the variant's formula on the means of A, I, E, W over the queries where it is
  defined: today's 'all' row) and ``mean`` (the mean over all queries of the per-query values, undefined
  ones scored 0: Karmaker & Feng 2022's average, the quantity compare's paired tests test);
* intervals (95%, over the queries): ``percentile`` bootstrap (today's), ``BCa`` (Efron 1987),
  ``studentised`` bootstrap (bootstrap-t; the ratio's standard error by its linearisation), and
  ``randomisation``: the statistic's null distribution from K random permutations of each query's pool
  (the very model E assumes), inverted as a shift: [T - t(K+1-k), T - t(k)], t(i) the i-th smallest of
  the K null values and k = floor((K + 1) 0.025), the exact Monte Carlo test (K = 999: the 25th and the
  975th; Davison & Hinkley 1997, ch. 4).

The checks, on Robust 2003 (17 runs) and DL-HARD passage (6 runs), with nDCG@10, AP and RBP(p=0.8):

1. sign: submitted runs above 0, their reversals below 0; Kendall tau of the candidate's system ordering
   against the plain measure's mean (bootstrap interval over topics);
2. omission: queries removed from a run (30% at random, 10 draws a run; its 30% worst by the plain
   measure) and bottom documents cut (each query at a random depth, 2 draws a run; every query to
   100, 20, 10): how often the aggregate rises, and how often a gate failing by 0.01 (``--fail-below``
   at the full run's value + 0.01, or ``--baseline`` a run 0.01 better, no test) then passes;
3. depth: runs cut to 100, 20 and 10 documents: the mean |change| of the aggregate and the Kendall tau
   of the system ordering against the full runs (bootstrap intervals over topics);
4. consistency: today's numbers for one run in eval's 'all' row, compare's systems table (and the paper
   table, which prints it), the mean of the per-query column and the gate; per candidate, how many
   pairs of runs its aggregate orders against the mean of the per-query values the paired tests test;
5. coverage: seeded random rankings drawn from the candidate pool's own model (4 base runs x
   ``--shuffles``), each with its interval: does it contain 0 (>= 93% asked)?  Clopper-Pearson
   intervals; how many base runs (and reversals) each interval tells from random, and its width.

Per-query A, E, IUB and WLB come from ``ulnorm_eval.evaluate`` (``pool=``; the ``depth``/``file`` pools as
the bounds of a run made of the pool's documents under ``pool='run'``); the random rankings from the
library's own sampler (``core.permutations.permutation_values_many``), checked against the library: its
mean is E, and the percentile interval computed here is the one ``evaluate(ci=0.95)`` gives shuffled runs.
Everything is seeded; numbers are whatever they turn out to be; docs/bounds.md quotes the report.
"""
from __future__ import annotations

import argparse
import gzip
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pandas as pd  # noqa: E402
from scipy import stats as sps  # noqa: E402

import ulnorm_eval as ue  # noqa: E402
from ulnorm_eval.core.normalise import em, ul2, uew  # noqa: E402

DATA = Path(__import__("os").environ.get("ULNORM_EVAL_SHARED_DATA", ROOT.parent / "shared" / "data"))
MEASURES = ("nDCG@10", "AP", "RBP(p=0.8)")
NORM = {"UL2": ul2, "EM": em, "UEW": uew}
# the denominator of each variant's branch (above E, below E): the studentised interval's linearisation
BRANCH = {"UL2": (lambda A, I, E, W: I - E, lambda A, I, E, W: E),
          "EM": (lambda A, I, E, W: I - E, lambda A, I, E, W: I - E),
          "UEW": (lambda A, I, E, W: I - E, lambda A, I, E, W: E - W)}
AGGREGATES = ("of means", "mean")
INTERVALS = ("percentile", "BCa", "studentised", "randomisation")
LEVEL = 0.95
CUTS = (100, 20, 10)
GATE_MARGIN = 0.01


def log(*a):
    print(f"[{time.strftime('%H:%M:%S')}]", *a, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- inputs

def read_qrels(path) -> pd.DataFrame:
    q = pd.read_csv(path, sep=r"\s+", header=None, names=["qid", "iter", "docno", "label"],
                    dtype={"qid": str, "docno": str, "label": int}, usecols=[0, 1, 2, 3])
    return q[["qid", "docno", "label"]]


def read_run(path) -> pd.DataFrame:
    with gzip.open(path, "rt") as f:
        r = pd.read_csv(f, sep=r"\s+", header=None, names=["qid", "Q0", "docno", "rank", "score", "tag"],
                        dtype={"qid": str, "docno": str}, usecols=[0, 1, 2, 3, 4, 5])
    return r[["qid", "docno", "score"]]


def trec_order(run: pd.DataFrame) -> pd.DataFrame:
    """trec_eval's order: score descending, ties by docno descending."""
    return run.sort_values(["qid", "score", "docno"], ascending=[True, False, False], kind="stable")


def reversal(run: pd.DataFrame) -> pd.DataFrame:
    """The same documents read bottom-up (unique scores: no tie decides anything)."""
    r = trec_order(run).copy()
    r["score"] = r.groupby("qid").cumcount().astype(float)
    return r.reset_index(drop=True)


def top(run: pd.DataFrame, depth: int, pad: bool = False) -> pd.DataFrame:
    """The top ``depth`` documents of each query; ``pad``: the places below the last one filled with
    (unjudged, non-relevant) placeholder documents, so that each query the run answers has ``depth``."""
    r = trec_order(run).groupby("qid", sort=False).head(depth).reset_index(drop=True)
    if not pad:
        return r
    have = r.groupby("qid", sort=False).size()
    short = have[have < depth]
    if len(short):
        q = np.repeat(short.index.to_numpy(), depth - short.to_numpy())
        k = np.concatenate([np.arange(h, depth) for h in short.to_numpy()])
        fill = pd.DataFrame({"qid": q, "docno": [f"~pad{i}" for i in k], "score": -1e9 - k.astype(float)})
        r = pd.concat([r, fill], ignore_index=True)
    return r


def cut_random(run: pd.DataFrame, seed: int) -> pd.DataFrame:
    """Each query cut to a depth drawn uniformly from 1 .. its length (seeded)."""
    r = trec_order(run)
    rank = r.groupby("qid", sort=False).cumcount().to_numpy()
    size = r.groupby("qid", sort=False)["docno"].transform("size").to_numpy()
    keep = np.random.default_rng(seed).random(len(size))  # one draw a query, read at its first row
    first = np.r_[True, r.qid.to_numpy()[1:] != r.qid.to_numpy()[:-1]]
    depth = np.maximum.accumulate(np.where(first, np.arange(len(r)), 0))  # each row's query start
    cut = 1 + np.floor(keep[depth] * size).astype(int)
    return r[rank < cut].reset_index(drop=True)


@dataclass
class Collection:
    key: str
    title: str
    qrels_path: str
    qrels: pd.DataFrame
    runs: dict  # name -> DataFrame
    first: str  # the first-stage run of the 'file' pool
    qids: list = field(default_factory=list)  # every qrels query, in byte order (the bootstrap's order)


def robust03() -> Collection:
    d = DATA / "robust03"
    runs = {p.name[len("input."):-3]: read_run(p) for p in sorted((d / "runs").glob("input.*.gz"))}
    return Collection("robust03", "Robust 2003 (100 topics, 17 runs of depth 1000, judged to depth 125)",
                      str(d / "qrels.txt"), read_qrels(d / "qrels.txt"), runs, "SABIR03BASE")


def dlhard() -> Collection:
    d = DATA / "dlhard-passage"
    runs = {p.name[:-len(".run.gz")]: read_run(p) for p in sorted((d / "runs").glob("*.run.gz"))}
    return Collection("dlhard", "DL-HARD passage (50 topics, 6 runs of depth 1000, shallow judgments)",
                      str(d / "qrels.txt"), read_qrels(d / "qrels.txt"), runs, "bm25")


COLLECTIONS = {"robust03": robust03, "dlhard": dlhard}


# --------------------------------------------------------------------------- A, I, E, W through the library

class Parts:
    """Per-query A, I, E, W (arrays 4 x runs x queries, queries in byte order) of runs under each pool."""

    def __init__(self, coll: Collection, depth: int, unjudged: int):
        self.c, self.depth, self.unjudged = coll, depth, unjudged
        self.pools = ("run", "qrels", "union", f"depth {depth}", f"file {depth}", f"qrels+{unjudged}")
        self.fixed = ("qrels", f"file {depth}", f"qrels+{unjudged}")  # the same documents for every run
        self.c.qids = sorted(self.c.qrels.qid.unique())
        self._fixed: dict = {}

    def _frame(self, ev, names, metrics) -> np.ndarray:
        col = {q: i for i, q in enumerate(self.c.qids)}
        out = np.zeros((len(metrics), len(names), len(self.c.qids)))
        for r, n in enumerate(names):
            idx = np.array([col[q] for q in ev.queries[n]])
            for k, m in enumerate(metrics):
                out[k, r, idx] = ev.per_query[n][m]
        return out

    def evaluate(self, runs: dict, pool: str, bounds: bool = True) -> dict:
        """{measure: 4 x runs x queries} (A, I, E, W) under a library pool; A alone when not ``bounds``."""
        ev = ue.evaluate(self.c.qrels_path, runs, list(MEASURES), variants=["E", "IUB", "WLB"] if bounds else [],
                         pool=pool)
        out = {}
        for m in MEASURES:
            got = self._frame(ev, list(runs), [m] + ([f"IUB({m})", f"E({m})", f"WLB({m})"] if bounds else []))
            out[m] = got if bounds else np.concatenate([got, np.zeros((3,) + got.shape[1:])])
        return out

    def fixed_bounds(self, pool: str) -> dict:
        """{measure: 3 x queries}: I, E, W of a pool that is the same for every run (its documents as a
        run, under ``pool='run'``)."""
        if pool not in self._fixed:
            got = self.evaluate({"pool": self.pool_run(pool, None)}, "run")
            self._fixed[pool] = {m: got[m][1:, 0] for m in MEASURES}
        return self._fixed[pool]

    def missing(self, pool: str) -> dict:
        """{measure: 3 x queries}: I, E, W of a query the run does not answer (A = 0 there)."""
        if pool in ("qrels", "union"):  # the union of the judged documents and nothing
            return self.fixed_bounds("qrels")
        if pool in self.fixed:
            return self.fixed_bounds(pool)
        return {m: np.zeros((3, len(self.c.qids))) for m in MEASURES}  # an empty pool: I = E = W = 0

    def of(self, runs: dict, pool: str) -> dict:
        """{measure: 4 x runs x queries} of ``runs`` under ``pool`` (one of ``self.pools``)."""
        if pool in ("run", "qrels", "union"):
            return self.evaluate(runs, pool)
        plain = self.evaluate(runs, "run", bounds=False)
        if pool.startswith("depth"):
            b = self.evaluate({n: self.pool_run(pool, r) for n, r in runs.items()}, "run")
            return {m: np.concatenate([plain[m][:1], b[m][1:]]) for m in MEASURES}
        fb = self.fixed_bounds(pool)
        return {m: np.concatenate([plain[m][:1], np.broadcast_to(fb[m][:, None, :], (3,) + plain[m].shape[1:])])
                for m in MEASURES}

    def pool_run(self, pool: str, run: pd.DataFrame | None) -> pd.DataFrame:
        """A run made of exactly the documents ``pool`` gives ``run``: a shuffle of it is a draw of the
        random ranking that pool's E is the expectation of."""
        q = self.c.qrels
        judged = q.assign(score=0.0)[["qid", "docno", "score"]]
        if pool == "run":
            return run
        if pool == "qrels":
            return judged
        if pool == "union":
            return pd.concat([q[["qid", "docno"]], run[["qid", "docno"]]]).drop_duplicates().assign(score=0.0)
        if pool.startswith("depth"):
            return top(run, self.depth, pad=True)
        if pool.startswith("file"):
            return top(self.c.runs[self.c.first], self.depth)
        qids = q.qid.unique()  # qrels + U: every judged document and U unjudged placeholders
        u = self.unjudged
        fill = pd.DataFrame({"qid": np.repeat(qids, u), "docno": [f"~pad{i}" for i in range(u)] * len(qids),
                             "score": -1.0})
        return pd.concat([judged, fill], ignore_index=True)

    def sample(self, pool_run: pd.DataFrame, reps: int, seed: int) -> dict:
        """{measure: reps x queries}: the measure on ``reps`` uniformly random orderings of each query's
        documents in ``pool_run`` (the library's Monte Carlo sampler, keyed by seed and query)."""
        from ulnorm_eval.api import to_qrels, to_runs
        from ulnorm_eval.core.draws import Keys
        from ulnorm_eval.core.kernels import Level
        from ulnorm_eval.core.permutations import permutation_values_many
        from ulnorm_eval.core.pools import make_pool
        from ulnorm_eval.core.registry import parse
        from ulnorm_eval.pipeline.blocks import Options
        from ulnorm_eval.pipeline.ordering import judgements, rank_run

        q = to_qrels(self.c.qrels_path)
        J = judgements(q, self.c.qids)
        pool = make_pool("run", rank_run(to_runs({"pool": pool_run}, q)[0], q, self.c.qids).ranking, J)
        vals = permutation_values_many(pool, J, [parse(m).measure for m in MEASURES], Level.of(Options()), reps,
                                       Keys(seed, J.qids))
        return dict(zip(MEASURES, vals))


# --------------------------------------------------------------------------- aggregates and intervals

def aggregate(variant: str, how: str, P: np.ndarray, C: np.ndarray | None = None) -> np.ndarray:
    """The aggregate of ``P`` (A, I, E, W; 4 x ... x queries) for each row of the count matrix ``C``
    (resamples x queries; None: the queries once): ... x resamples, or ... when C is None.

    ``of means``: the variant on the means of A, I, E, W over the queries where it is defined (as
    pipeline.blocks.of_means); ``mean``: the mean of the per-query values, undefined ones scored 0.
    Undefined on the means scores 0 (--undefined zero)."""
    point = C is None
    C = np.ones((1, P.shape[-1])) if point else C
    if variant == "plain":  # the measure itself: its mean over every query (trec_eval's)
        out = P[0] @ C.T / C.sum(axis=1)
        return out[..., 0] if point else out
    with np.errstate(invalid="ignore", divide="ignore"):
        v, und = NORM[variant](*P)
        ok = ~und & np.isfinite(v)
        if how == "mean":
            out = np.where(ok, v, 0.0) @ C.T / C.sum(axis=1)
        else:
            count = ok.astype(float) @ C.T
            means = [np.where(ok, x, 0.0) @ C.T / count for x in P]
            out, u = NORM[variant](*means)
            out = np.where(u | ~np.isfinite(out), 0.0, out)
    return out[..., 0] if point else out


def _quantile_rows(X: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Per row of X (NaN ignored), the quantile at that row's own level ``q`` (numpy's linear rule)."""
    X = np.sort(np.where(np.isfinite(X), X, np.inf), axis=1)
    n = np.isfinite(X).sum(axis=1)
    pos = np.clip(q, 0, 1) * np.maximum(n - 1, 0)
    lo = np.floor(pos).astype(int)
    hi = np.minimum(lo + 1, np.maximum(n - 1, 0))
    rows = np.arange(len(X))
    with np.errstate(invalid="ignore"):
        out = X[rows, lo] + (pos - lo) * (X[rows, hi] - X[rows, lo])
    return np.where(n > 0, out, np.nan)


def _studentised(variant: str, how: str, P: np.ndarray, C: np.ndarray):
    """(T, se) per row of ``C``: the aggregate and its standard error (mean: sd/sqrt(n); of means: the
    linearisation of N/D, se^2 = sum (d - T g)^2 / (n D)^2 over the defined queries, d = A - E and g
    the denominator of T's branch)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        v, und = NORM[variant](*P)
        ok = ~und & np.isfinite(v)
        nb = C.sum(axis=1)
        if how == "mean":
            x = np.where(ok, v, 0.0)
            m1, m2 = x @ C.T / nb, x ** 2 @ C.T / nb
            return m1, np.sqrt(np.maximum(m2 - m1 ** 2, 0) / (nb - 1))
        okf = ok.astype(float)
        cnt = okf @ C.T
        d = np.where(ok, P[0] - P[2], 0.0)
        N = d @ C.T / cnt
        above = N >= 0
        T = np.zeros_like(N)
        se = np.full_like(N, np.nan)
        for branch, where in zip(BRANCH[variant], (above, ~above)):
            g = np.where(ok, branch(*P), 0.0)
            D = g @ C.T / cnt
            t = N / D
            num = (d ** 2) @ C.T - 2 * t * ((d * g) @ C.T) + t ** 2 * ((g ** 2) @ C.T)
            T = np.where(where, t, T)
            se = np.where(where, np.sqrt(np.maximum(num, 0)) / (cnt * np.abs(D)), se)
        return T, se


def intervals(variant: str, how: str, P: np.ndarray, C: np.ndarray, null_T: np.ndarray | None) -> dict:
    """{method: (lo, hi)} arrays over the rows of P (4 x rows x queries); ``null_T``: rows x K values of
    the aggregate on random orderings of each row's pool (the randomisation interval), or None."""
    a = 1 - LEVEL
    T = aggregate(variant, how, P)
    Tb = aggregate(variant, how, P, C)
    out = {"percentile": (_quantile_rows(Tb, np.full(len(T), a / 2)), _quantile_rows(Tb, np.full(len(T), 1 - a / 2)))}
    # BCa (Efron 1987): bias from the share of resamples below T, acceleration from the jackknife
    n = P.shape[-1]
    jack = aggregate(variant, how, P, np.ones((n, n)) - np.eye(n))
    dev = jack.mean(axis=1, keepdims=True) - jack
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = (dev ** 3).sum(axis=1) / (6 * ((dev ** 2).sum(axis=1)) ** 1.5)
        acc = np.where(np.isfinite(acc), acc, 0.0)
        share = (np.mean(Tb < T[:, None], axis=1) + 0.5 * np.mean(Tb == T[:, None], axis=1))
        z0 = sps.norm.ppf(share)
        ends = []
        for alpha in (a / 2, 1 - a / 2):
            z = sps.norm.ppf(alpha)
            level = sps.norm.cdf(z0 + (z0 + z) / (1 - acc * (z0 + z)))
            ends.append(_quantile_rows(Tb, np.where(np.isfinite(level), level, alpha)))
    out["BCa"] = tuple(ends)
    # studentised (bootstrap-t): [T - t*_{97.5} se, T - t*_{2.5} se]
    T1, se1 = _studentised(variant, how, P, np.ones((1, n)))
    Tb2, seb = _studentised(variant, how, P, C)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = (Tb2 - T1) / seb
    t = np.where(np.isfinite(t), t, np.nan)
    se1 = se1[..., 0]
    out["studentised"] = (T - _quantile_rows(t, np.full(len(T), 1 - a / 2)) * se1,
                          T - _quantile_rows(t, np.full(len(T), a / 2)) * se1)
    if null_T is not None:  # the exact Monte Carlo test's order statistics: K = 999 -> the 25th and the 975th
        K = null_T.shape[1]
        k = int(np.floor((K + 1) * a / 2))
        ordered = np.sort(null_T, axis=1)
        out["randomisation"] = (T - ordered[:, K - k], T - ordered[:, k - 1])
    return out


def tau_b(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b between the rows (systems) of x and y, per column (resample): as scipy's kendalltau."""
    i, j = np.triu_indices(len(x), 1)
    sx, sy = np.sign(x[i] - x[j]), np.sign(y[i] - y[j])
    with np.errstate(invalid="ignore", divide="ignore"):
        return (sx * sy).sum(axis=0) / np.sqrt((sx != 0).sum(axis=0) * (sy != 0).sum(axis=0))


def boot_interval(values: np.ndarray) -> tuple:
    v = values[np.isfinite(values)]
    return tuple(np.quantile(v, [(1 - LEVEL) / 2, 1 - (1 - LEVEL) / 2])) if len(v) else (np.nan, np.nan)


def binom_ci(k: int, n: int) -> tuple:
    ci = sps.binomtest(int(k), int(n)).proportion_ci(LEVEL, method="exact")
    return ci.low, ci.high


# --------------------------------------------------------------------------- formatting

def f_ci(x, lo, hi, fmt="{:.2f}") -> str:
    return f"{fmt.format(x)} [{fmt.format(lo)}, {fmt.format(hi)}]"


def f_share(k, n) -> str:
    lo, hi = binom_ci(k, n)
    return f"{100 * k / n:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]"


def table(head: list, rows: list) -> list:
    return ["| " + " | ".join(head) + " |", "|" + "|".join(":-" if i < 3 else "-:" for i in range(len(head))) + "|",
            *("| " + " | ".join(map(str, r)) + " |" for r in rows), ""]


# --------------------------------------------------------------------------- the study

class Study:
    def __init__(self, coll: Collection, args):
        self.c, self.a = coll, args
        self.parts = Parts(coll, args.depth, args.unjudged)
        self.names = list(coll.runs)
        self.n = len(coll.qids)
        from ulnorm_eval.core.intervals import resample_counts

        self.C = np.asarray(resample_counts(self.n, args.resamples, 0))  # the library's resamples (--seed 0)
        self.full = {}  # pool -> {measure: 4 x runs x queries}
        self.candidates = [(p, v, h) for p in self.parts.pools for v in NORM for h in AGGREGATES]
        self.stats: dict = {}  # (check, pool, variant, aggregate, measure[, more]) -> numbers: the summary's

    def full_parts(self, pool):
        if pool not in self.full:
            self.full[pool] = self.parts.of(self.c.runs, pool)
        return self.full[pool]

    def plain_mean(self, m, C=None):
        A = self.full_parts("run")[m][0]
        return A.mean(axis=1) if C is None else A @ C.T / C.sum(axis=1)

    # ---- 1. sign and tau against the plain measure
    def sign(self) -> list:
        rev = {n: reversal(r) for n, r in self.c.runs.items()}
        rows = []
        for pool in self.parts.pools:
            full, back = self.full_parts(pool), self.parts.of(rev, pool)
            for v in NORM:
                for h in AGGREGATES:
                    cells = [pool, v, h]
                    for m in MEASURES:
                        x, r = aggregate(v, h, full[m]), aggregate(v, h, back[m])
                        tau = tau_b(x[:, None], self.plain_mean(m)[:, None])[0]
                        tb = tau_b(aggregate(v, h, full[m], self.C), self.plain_mean(m, self.C))
                        cells.append(f"{(x > 0).sum()}/{len(x)} · {(r < 0).sum()}/{len(r)} · "
                                     + f_ci(tau, *boot_interval(tb)))
                        self.stats["sign", pool, v, h, m] = ((x > 0).sum(), len(x), (r < 0).sum(), len(r), tau,
                                                             *boot_interval(tb))
                    rows.append(cells)
            log(self.c.key, "sign", pool)
        return rows

    # ---- 2. omission and 3. depth
    def omission_and_depth(self) -> tuple:
        rng = np.random.default_rng(47)
        k = int(round(0.3 * self.n))
        drops = [(r, rng.choice(self.n, k, replace=False)) for r in range(len(self.names)) for _ in range(10)]
        cuts = {d: {n: trec_order(r).groupby("qid", sort=False).head(d) for n, r in self.c.runs.items()} for d in CUTS}
        rand_cut = {f"{n}#{s}": cut_random(r, 1000 * s + i)
                    for i, (n, r) in enumerate(self.c.runs.items()) for s in range(2)}
        om_rows, dp_rows = [], []
        for pool in self.parts.pools:
            full, miss = self.full_parts(pool), self.parts.missing(pool)
            cut_parts = {d: self.parts.of(cuts[d], pool) for d in CUTS}
            rc = self.parts.of(rand_cut, pool)
            self._check_missing(pool, full, miss)
            # the plain measure (its A is the same under every pool) as a reference, with the first pool
            rows = ([("—", "plain", "mean")] if pool == self.parts.pools[0] else []) + \
                [(pool, v, h) for v in NORM for h in AGGREGATES]
            for label, v, h in rows:
                om, dp = [label, v, h], [label, v, h]
                for m in MEASURES:
                    P = full[m]
                    x = aggregate(v, h, P)
                    # queries: random 30%, and the 30% worst by the plain measure
                    Q = P[:, [r for r, _ in drops]].copy()
                    for t, (r, gone) in enumerate(drops):
                        Q[0, t, gone] = 0.0
                        Q[1:, t, gone] = miss[m][:, gone]
                    rise_q = aggregate(v, h, Q) - x[[r for r, _ in drops]]
                    W = P.copy()
                    for r in range(len(self.names)):
                        gone = np.argsort(P[0, r], kind="stable")[:k]
                        W[0, r, gone] = 0.0
                        W[1:, r, gone] = miss[m][:, gone]
                    rise_w = aggregate(v, h, W) - x
                    rise_c = np.concatenate([aggregate(v, h, rc[m]) - np.repeat(x, 2)]
                                            + [aggregate(v, h, cut_parts[d][m]) - x for d in CUTS])
                    allr = np.concatenate([rise_q, rise_w, rise_c])
                    self.stats["omission", label, v, h, m] = ((allr > 1e-9).sum(), len(allr), max(0.0, allr.max()),
                                                              (allr >= GATE_MARGIN - 1e-12).sum())
                    om.append(f"{(rise_q > 1e-9).sum()}/{len(rise_q)} · {(rise_w > 1e-9).sum()}/{len(rise_w)} · "
                              f"{(rise_c > 1e-9).sum()}/{len(rise_c)} · {max(0.0, allr.max()):.3f} · "
                              f"{(allr >= GATE_MARGIN - 1e-12).sum()}/{len(allr)}")
                    # depth: mean |change| and tau against the full runs, with bootstrap intervals
                    xb = aggregate(v, h, P, self.C)
                    for d in CUTS:
                        y, yb = aggregate(v, h, cut_parts[d][m]), aggregate(v, h, cut_parts[d][m], self.C)
                        self.stats["depth", label, v, h, m, d] = (
                            np.abs(y - x).mean(), *boot_interval(np.abs(yb - xb).mean(axis=0)),
                            tau_b(x[:, None], y[:, None])[0], *boot_interval(tau_b(xb, yb)))
                        dp.append(f_ci(np.abs(y - x).mean(), *boot_interval(np.abs(yb - xb).mean(axis=0)), "{:.3f}")
                                  + " · " + f_ci(tau_b(x[:, None], y[:, None])[0], *boot_interval(tau_b(xb, yb))))
                om_rows.append(om)
                dp_rows.append(dp)
            log(self.c.key, "omission and depth", pool)
        return om_rows, dp_rows

    def _check_missing(self, pool, full, miss) -> None:
        """The study's shortcut for a removed query (A = 0 and the I, E, W of a query the run does not
        answer) equals the library's evaluation of the run without it."""
        name = self.names[0]
        gone = self.c.qids[::3]
        got = self.parts.of({name: self.c.runs[name][~self.c.runs[name].qid.isin(gone)]}, pool)
        idx = [self.c.qids.index(q) for q in gone]
        for m in MEASURES:
            want = full[m][:, 0].copy()
            want[0, idx] = 0.0
            want[1:, idx] = miss[m][:, idx]
            assert np.allclose(got[m][:, 0], want, atol=1e-12), (pool, m)

    # ---- 4. consistency
    def consistency(self) -> tuple:
        """(today's numbers for UL2 under the defaults, per-candidate discordant pairs)."""
        from ulnorm_eval.analysis.gate import check_baseline

        ev = ue.evaluate(self.c.qrels_path, self.c.runs, list(MEASURES))
        cmp = ue.compare(self.c.qrels_path, self.c.runs, list(MEASURES), variants=["UL2"])
        sysm = cmp.systems
        paper = ue.paper_table(cmp, fmt="markdown")
        today = []
        for m in MEASURES:
            lab = f"UL2({m})"
            e = np.array([ev.means[n][lab] for n in self.names])
            c = np.array([float(sysm[(sysm.run == n) & (sysm.metric == lab)]["mean"].iloc[0]) for n in self.names])
            col = np.array([np.mean(ev.per_query[n][lab]) for n in self.names])
            shown = all(f"{x:.4f}" in paper for x in c)
            best = int(np.argmax(e))
            base = next(r for r in ev.runs if r.name == self.names[best])
            checks = [ch for ch in check_baseline(ev, base, 0.0, 0.05) if str(ch.metric) == lab and ch.run != base.name]
            diff_pq = {r.name: float(np.mean(r.values[ch.metric] - base.values[ch.metric]))
                       for r in ev.runs for ch in checks if ch.run == r.name}
            against = sum(np.sign(ch.difference) != np.sign(diff_pq[ch.run]) for ch in checks)
            worst = int(np.argmax(np.abs(e - c)))
            i, j = np.triu_indices(len(e), 1)
            disc = int((np.sign(e[i] - e[j]) * np.sign(c[i] - c[j]) < 0).sum())
            today.append([lab, f"{self.names[worst]}: {e[worst]:.4f} · {c[worst]:.4f} · {col[worst]:.4f}",
                          f"{np.abs(e - c).max():.4f}", f"{disc}/{len(i)}", "yes" if shown else "no",
                          f"{against}/{len(checks)}"])
        rows = []
        for pool, v, h in self.candidates:
            cells = [pool, v, h]
            for m in MEASURES:
                P = self.full_parts(pool)[m]
                x = aggregate(v, h, P)
                y = aggregate(v, "mean", P)
                i, j = np.triu_indices(len(x), 1)
                k = int((np.sign(x[i] - x[j]) * np.sign(y[i] - y[j]) < 0).sum())
                self.stats["disc", pool, v, h, m] = (k, len(i))
                cells.append(f"{k}/{len(i)}")
            rows.append(cells)
        return today, rows

    # ---- 5. coverage
    def bases(self) -> list:
        """Four runs spanning the collection's quality (by the plain AP): the coverage check's bases."""
        ap = self.plain_mean("AP")
        order = np.argsort(-ap, kind="stable")
        pick = sorted(set(np.linspace(0, len(order) - 1, min(4, len(order))).round().astype(int)))
        return [self.names[order[i]] for i in pick]

    def coverage(self) -> tuple:
        S, K = self.a.shuffles, self.a.null
        bases = self.bases()
        rows, power = [], []
        for pool in self.parts.pools:
            # base -> {measure: (K + S) x queries}: the null's orderings, then the observed ones (seeded per base)
            if pool in self.parts.fixed:  # one pool for every run: one draw, split
                got = self.parts.sample(self.parts.pool_run(pool, None), K + S * len(bases), 7)
                draws = {b: {m: np.concatenate([x[:K], x[K + S * i:K + S * (i + 1)]]) for m, x in got.items()}
                         for i, b in enumerate(bases)}
            else:
                draws = {b: self.parts.sample(self.parts.pool_run(pool, self.c.runs[b]), K + S, 7 + 100 * i)
                         for i, b in enumerate(bases)}
            rev = {b: reversal(self.c.runs[b]) for b in bases}
            runs_P = self.parts.of({b: self.c.runs[b] for b in bases}, pool)
            rev_P = self.parts.of(rev, pool)
            nulls_rev = {}
            if pool.startswith("depth"):  # a reversal's top D is another pool: its own null
                nulls_rev = {b: self.parts.sample(self.parts.pool_run(pool, rev[b]), K, 7 + 100 * i)
                             for i, b in enumerate(bases)}
            for m in MEASURES:
                self._check_sampler(pool, m, draws, runs_P[m], bases)
            for v in NORM:
                for h in AGGREGATES:
                    cells, pw = [pool, v, h], [pool, v, h]
                    for m in MEASURES:
                        cover = {k: 0 for k in INTERVALS}
                        told = {k: [0, 0, []] for k in INTERVALS}
                        for bi, b in enumerate(bases):
                            IEW = runs_P[m][1:, bi]
                            A = draws[b][m]
                            null = np.concatenate([A[None, :K], np.broadcast_to(IEW[:, None], (3, K, self.n))])
                            obs = np.concatenate([A[None, K:], np.broadcast_to(IEW[:, None], (3, S, self.n))])
                            null_T = aggregate(v, h, null)
                            got = intervals(v, h, obs, self.C, np.broadcast_to(null_T, (S, K)))
                            for k, (lo, hi) in got.items():
                                cover[k] += int(((lo <= 0) & (0 <= hi)).sum())
                            # the base run and its reversal: told from random (interval wholly above / below 0)?
                            if nulls_rev:
                                rn = nulls_rev[b][m][:K]
                                rIEW = rev_P[m][1:, bi]
                                rnull_T = aggregate(v, h, np.concatenate(
                                    [rn[None], np.broadcast_to(rIEW[:, None], (3, K, self.n))]))
                            else:
                                rnull_T = null_T
                            two = np.stack([runs_P[m][:, bi], rev_P[m][:, bi]], axis=1)
                            g2 = intervals(v, h, two, self.C, np.stack([null_T, rnull_T]))
                            for k, (lo, hi) in g2.items():
                                told[k][0] += int(lo[0] > 0)
                                told[k][1] += int(hi[1] < 0)
                                told[k][2].append(hi[0] - lo[0])
                        total = S * len(bases)
                        for k in INTERVALS:
                            self.stats["cover", pool, v, h, m, k] = (cover[k], total)
                        cells.append(" · ".join(f_share(cover[k], total) for k in INTERVALS))
                        pw.append(" · ".join(f"{told[k][0]}/{len(bases)} {told[k][1]}/{len(bases)} "
                                             f"{np.mean(told[k][2]):.2f}" for k in INTERVALS))
                    rows.append(cells)
                    power.append(pw)
            log(self.c.key, "coverage", pool)
        return bases, rows, power

    def _check_sampler(self, pool, m, draws, runs_P, bases) -> None:
        """The sampler's mean is the library's E: mean A - mean E over the queries, averaged over the
        orderings, within 5 standard errors of 0 for the pool of each base run (a query's own mean is
        too skewed for its sample's standard error: a relevant document rarely in the top 10)."""
        for bi, b in enumerate(bases):
            gap = (draws[b][m] - runs_P[2, bi]).mean(axis=1)
            assert abs(gap.mean()) < 5 * gap.std(ddof=1) / np.sqrt(len(gap)) + 1e-12, (pool, m, b, gap.mean())

    def check_printed_interval(self) -> str:
        """The percentile interval computed here is the one ``eval --ci`` prints for shuffled runs' mean EM
        (``--pool run``: the study's parts are the runs' own pools)."""
        run = self.c.runs[self.bases()[0]]
        sh = {f"s{i}": run.assign(score=np.random.default_rng(100 + i).permutation(len(run)).astype(float))
              for i in range(10)}
        ev = ue.evaluate(self.c.qrels_path, sh, list(MEASURES), variants=["E", "IUB", "WLB", "EM"], pool="run", ci=LEVEL)
        P = self.parts.evaluate(sh, "run")
        from ulnorm_eval.core.intervals import RESAMPLES, resample_counts

        C = np.asarray(resample_counts(self.n, RESAMPLES, 0))
        worst = 0.0
        for m in MEASURES:
            lo, hi = intervals("EM", "mean", P[m], C, None)["percentile"]
            for i, rr in enumerate(ev.runs):
                plo, phi = next(ci for k, ci in rr.ci.items() if str(k) == f"EM({m})")
                worst = max(worst, abs(plo - lo[i]), abs(phi - hi[i]))
        assert worst < 1e-9, worst
        return f"{worst:.1e}"


def report(coll: Collection, args) -> list:
    st = Study(coll, args)
    t0 = time.time()
    check = st.check_printed_interval()
    meas = " | ".join(MEASURES)
    lines = [f"## {coll.title}", "",
             f"Runs: {', '.join(st.names)}. `file {args.depth}` = the top {args.depth} of {coll.first}. "
             f"Topic bootstrap: {args.resamples} resamples (the library's, seed 0). "
             f"The percentile interval computed here equals eval --ci's on 10 shuffled runs' mean EM (largest "
             f"difference {check}).", ""]
    head = ["pool", "variant", "aggregate", *MEASURES]
    lines += ["### Sign and agreement", "",
              "Per measure: submitted runs above 0 · reversals below 0 · Kendall tau against the plain "
              "measure's mean [95% bootstrap interval over topics].", ""]
    lines += table(head, st.sign())
    om, dp = st.omission_and_depth()
    lines += ["### Omission", "",
              f"Per measure: rises when 30% of the queries are removed at random (10 draws a run) · when the "
              f"30% worst by the plain measure are removed (a run) · when bottom documents are cut (each query "
              f"at a random depth, 2 draws a run, and every query to {', '.join(map(str, CUTS))}) · the largest "
              f"rise · trials where a gate failing by {GATE_MARGIN} then passes (a rise of {GATE_MARGIN} or more).", ""]
    lines += table(head, om)
    lines += ["### Depth", "",
              "Per measure and cut (" + ", ".join(map(str, CUTS)) + " documents): mean |change| of the aggregate "
              "over the runs · Kendall tau of the system ordering against the full runs [95% bootstrap "
              "intervals over topics].", ""]
    lines += table(["pool", "variant", "aggregate", *(f"{m} @{d}" for m in MEASURES for d in CUTS)], dp)
    today, disc = st.consistency()
    lines += ["### Consistency", "",
              "Today (defaults: `--pool run`, UL2, the 'all' row of the means): the run where eval and compare "
              "differ most (eval's 'all' row · compare's systems table · the mean of the per-query column), the "
              "largest difference, the run pairs eval and compare order differently, whether the paper table "
              "prints compare's numbers, and the gate's checks against the best run whose difference "
              "(of the means) has the other sign than the mean per-query difference its t-test tests.", ""]
    lines += table(["metric", "run: eval · compare · column mean", "largest |eval - compare|",
                    "pairs ordered differently", "paper table = compare", "gate: difference vs test"], today)
    lines += ["Per candidate: the pairs of runs its aggregate orders against the mean of the per-query "
              "values (what compare's and the gate's paired tests test).", ""]
    lines += table(head, disc)
    bases, cov, power = st.coverage()
    lines += ["### Coverage", "",
              f"Base runs: {', '.join(bases)}; {args.shuffles} random orderings of each base's pool (drawn from "
              f"the pool's own model), {args.shuffles * len(bases)} in all; randomisation null {args.null} "
              "orderings. Per measure, the share of intervals containing 0 [Clopper-Pearson 95%]: "
              + " · ".join(INTERVALS) + ".", ""]
    lines += table(head, cov)
    lines += ["Per measure and interval (" + " · ".join(INTERVALS) + "): base runs whose interval lies above 0, "
              "their reversals below 0, and the mean width for the base runs.", ""]
    lines += table(head, power)
    log(coll.key, f"done in {time.time() - t0:.0f} s")
    return lines, st.stats


def summary(stats: list, pools: tuple) -> list:
    """One row per candidate over both collections and the three measures: the docs' table."""
    def total(check, key, *more, at=(0, 1)):
        got = [s[(check, *key, m, *more)] for s in stats for m in MEASURES]
        return tuple(sum(g[i] for g in got) for i in at)

    def worst(check, key, pick, *more):
        """The (value, lo, hi) of the worst collection x measure: ``pick`` chooses it (min or max)."""
        got = [s[(check, *key, m, *more)] for s in stats for m in MEASURES]
        return pick(got, key=lambda g: g[0])

    rows = []
    for key in [("—", "plain", "mean")] + [(p, v, h) for p in pools for v in NORM for h in AGGREGATES]:
        plain = key[1] == "plain"
        above, n, below, nr = (total("sign", key, at=(0, 1, 2, 3)) if not plain else ("",) * 4)
        tau = "" if plain else min((s[("sign", *key, m)][4:] for s in stats for m in MEASURES), key=lambda t: t[0])
        rises, trials = total("omission", key)
        flips, _ = total("omission", key, at=(3, 1))
        top = max(s[("omission", *key, m)][2] for s in stats for m in MEASURES)
        move = max((s[("depth", *key, "nDCG@10", CUTS[-1])] for s in stats), key=lambda g: g[0])
        dtau = min((s[("depth", *key, "nDCG@10", CUTS[-1])] for s in stats), key=lambda g: g[3])
        disc = "" if plain else "{}/{}".format(*total("disc", key))
        cov = ["" if plain else _cover(worst("cover", key, min, k)) + " · all " + _cover(total("cover", key, k))
               for k in INTERVALS]
        rows.append([*key, "" if plain else f"{above}/{n}", "" if plain else f"{below}/{nr}",
                     "" if plain else f_ci(*tau), f"{rises}/{trials}", f"{top:.3f}", f"{flips}/{trials}",
                     f_ci(*move[:3], "{:.3f}"), f_ci(*dtau[3:]), disc, *cov])
    head = ["pool", "variant", "aggregate", "runs > 0", "reversals < 0", "tau vs plain (lowest)",
            "omission: rises", "largest rise", f"gate flips (rise >= {GATE_MARGIN})",
            f"nDCG@10 cut to {CUTS[-1]}: mean change (largest)", f"tau cut to {CUTS[-1]} (lowest)",
            "pairs against the column mean", *(f"coverage, {k} (lowest · all)" for k in INTERVALS)]
    return table(head, rows)


def _cover(kn) -> str:
    k, n = kn
    lo, hi = binom_ci(k, n)
    return f"{100 * k / n:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", choices=list(COLLECTIONS), action="append")
    ap.add_argument("--shuffles", type=int, default=50, help="random orderings per base run (4 bases)")
    ap.add_argument("--null", type=int, default=999, help="random orderings of the randomisation null")
    ap.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples of the topics")
    ap.add_argument("--depth", type=int, default=100, help="D of the 'depth D' and 'file D' pools")
    ap.add_argument("--unjudged", type=int, default=1000, help="U of the 'qrels+U' pool")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "pool_study.md"), help="the report ('-': stdout)")
    a = ap.parse_args(argv)
    lines = ["# The pool study (benchmarks/pool_study.py)", "",
             f"`python benchmarks/pool_study.py{' --only ' + ' --only '.join(a.only) if a.only else ''}"
             f" --shuffles {a.shuffles} --null {a.null} --resamples {a.resamples} --depth {a.depth}"
             f" --unjudged {a.unjudged}`, {time.strftime('%Y-%m-%d')}. What the candidates and the checks are: the "
             "script's docstring; what they say: docs/bounds.md, \"The study\". Every interval is 95%: over the "
             "topics (bootstrap, the percentile interval; a bootstrap's taus are biased low, since a resample only "
             "adds noise, so a tau of 1 can sit above its interval) or binomial (Clopper-Pearson) for a share.", ""]
    body, stats, pools = [], [], ()  # the per-collection sections follow the summary
    for name in a.only or COLLECTIONS:
        got, st = report(COLLECTIONS[name](), a)
        body += got
        stats.append(st)
        pools = tuple(dict.fromkeys(k[1] for k in st if k[0] == "sign"))
    lines += ["## Summary over the collections and measures", "",
              "Per candidate, over " + " and ".join(a.only or COLLECTIONS) + " and " + ", ".join(MEASURES) + ": "
              "submitted runs above 0 and reversals below 0 (all counted); the lowest Kendall tau against the "
              "plain measure's mean; omission trials where the aggregate rises, the largest rise and the "
              f"trials where a gate failing by {GATE_MARGIN} would pass; nDCG@10 with every run cut to "
              f"{CUTS[-1]} documents: the largest mean |change| (over the collections) and the lowest tau; the "
              "pairs of runs the aggregate orders against the mean of its per-query values; the coverage of 0 by "
              "each interval: the lowest of the six collection x measure cells, and all cells together. 95% "
              "intervals in brackets.", ""]
    lines += summary(stats, pools) + body
    text = "\n".join(lines) + "\n"
    if a.out == "-":
        sys.stdout.write(text)
    else:
        Path(a.out).write_text(text, encoding="utf-8")
        log("wrote", a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
