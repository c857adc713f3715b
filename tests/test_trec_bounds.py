"""Expectations of trec_eval's measures (core/trec_expectations.py) against brute force: the mean of
the native kernel over every permutation of small pools (relevant at several grades, judged
nonrelevant, pooled-unjudged and not-in-the-qrels documents, extra qrels documents outside the pool,
-l 1 and 2).  Closed forms must equal the mean over all n! orders to 1e-12; Monte Carlo estimates
must lie within 4 standard errors of it.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from ulnorm_eval.core import trec_expectations as te
from ulnorm_eval.core import trec_measures as tm
from ulnorm_eval.core.kernels import Judgements, Ranking
from ulnorm_eval.core.pools import Pool


def make_case(seed: int):
    """A one-query pool of 3..7 documents and its qrels (pool's judged documents + 0..2 others)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 8))
    kinds = rng.choice(["g0", "g1", "g2", "g3", "unj", "nonpool"], size=n, p=[.3, .25, .15, .1, .1, .1])
    grade = np.array([{"g0": 0, "g1": 1, "g2": 2, "g3": 3, "unj": -1, "nonpool": 0}[k] for k in kinds], float)
    judged = kinds != "nonpool"
    extra = rng.integers(0, 3, size=int(rng.integers(0, 3))).astype(float)  # judged, not in the pool
    jg = np.concatenate([grade[judged], extra])
    J = Judgements(["q"], np.zeros(len(jg), np.int64), np.sort(jg)[::-1].copy(), 3.0)
    pool = Pool(np.zeros(n, np.int64), grade, 1, judged)
    return pool, J


def all_orders(pool: Pool) -> Ranking:
    n = len(pool.row)
    perms = np.asarray(list(itertools.permutations(range(n))), dtype=np.int64)
    M = len(perms)
    return Ranking(np.repeat(np.arange(M), n), pool.grade[perms].ravel(), M, np.zeros(M, np.int64),
                   pool.judged[perms].ravel())


def exact_cases(n):
    ks = sorted({1, 3, n, n + 2})
    out = [("map", None), ("gm_map", None), ("Rprec", None), ("recip_rank", None), ("bpref", None),
           ("gm_bpref", None), ("infAP", None), ("binG", None), ("ndcg", None), ("ndcg", {1: 3.0, 2: 9.0}),
           ("rbp", None), ("rbp", {"p": 0.5}), ("rbp_resid", None), ("rbp_resid", {"p": 0.7})]
    for k in ks:
        out += [("P", k), ("recall", k), ("relative_P", k), ("success", k), ("map_cut", k), ("ndcg_cut", k)]
    out += [("Rprec_mult", x) for x in (0.2, 0.4, 1.0, 2.0, 3.5)]
    return out


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("L", [1, 2])
def test_exact_expectations_equal_brute_force(seed, L):
    pool, J = make_case(seed)
    rk = all_orders(pool)
    ctx = tm.TrecContext(rel_level=L)
    assert set(te.EXACT) == {f.trec for f in tm.FAMILIES if f.bounds == "exact"}
    for trec, param in exact_cases(len(pool.row)):
        brute = tm.compute_trec(trec, rk, J, param, ctx).mean()
        got = te.expectation(trec, pool, J, param, ctx)[0]
        assert got == pytest.approx(brute, rel=1e-12, abs=1e-12), (trec, param, pool.grade, pool.judged, J.grade)


MC = [("iprec_at_recall", 0.0), ("iprec_at_recall", 0.5), ("11pt_avg", tm.BY_TREC["11pt_avg"].default),
      ("G", None), ("ndcg_rel", None), ("Rndcg", None), ("ERR", 3), ("ERR", None), ("Compat", None),
      ("map", None), ("bpref", None)]


def test_montecarlo_within_4_se_of_brute_force():
    """Several queries at once (rows = query x repetition): every query's estimate within 4 SE."""
    cases = [make_case(s) for s in (3, 7, 11, 19, 23)]
    rows, grades, judged, jrow, jgrade = [], [], [], [], []
    for i, (p, J) in enumerate(cases):
        rows.append(np.full(len(p.row), i)), grades.append(p.grade), judged.append(p.judged)
        jrow.append(np.full(len(J.row), i)), jgrade.append(J.grade)
    pool = Pool(np.concatenate(rows), np.concatenate(grades), len(cases), np.concatenate(judged))
    Jall = Judgements([f"q{i}" for i in range(len(cases))], np.concatenate(jrow), np.concatenate(jgrade), 3.0)
    ctx = tm.TrecContext(rel_level=1)
    for trec, param in MC:
        mean, se = te.montecarlo(trec, pool, Jall, param, ctx, reps=4000, seed=5)
        for i, (p, J) in enumerate(cases):
            brute = tm.compute_trec(trec, all_orders(p), J, param, ctx).mean()
            assert abs(mean[i] - brute) <= 4 * se[i] + 1e-12, (trec, param, i, mean[i], brute, se[i])
            assert se[i] > 0 or np.ptp(tm.compute_trec(trec, all_orders(p), J, param, ctx)) == 0


def test_infap_exact_on_a_large_pool_matches_montecarlo():
    """The hypergeometric sum on a 60-document pool with every kind of document, against 20,000 draws."""
    rng = np.random.default_rng(1)
    grade = rng.choice([0, 0, 0, 1, 2, -1], size=60).astype(float)
    judged = rng.random(60) > 0.15
    grade[~judged] = 0
    J = Judgements(["q"], np.zeros(int(judged.sum()), np.int64), np.sort(grade[judged])[::-1].copy(), 2.0)
    pool = Pool(np.zeros(60, np.int64), grade, 1, judged)
    ctx = tm.TrecContext()
    mean, se = te.montecarlo("infAP", pool, J, None, ctx, reps=20000, seed=2)
    exact = te.expectation("infAP", pool, J, None, ctx)
    assert abs(mean[0] - exact[0]) <= 4 * se[0]


@pytest.mark.parametrize("seed", range(12))
def test_judged_only_bounds(seed):
    """-J: scoring the judged-only view of every permutation of the pool equals permuting the
    judged-only pool, so the closed forms apply to te.judged_only_pool(pool)."""
    pool, J = make_case(seed)
    rk = tm.judged_only(all_orders(pool))
    jp = te.judged_only_pool(pool)
    if len(jp.row) == 0:
        return
    ctx = tm.TrecContext()
    for trec, param in [("map", None), ("bpref", None), ("infAP", None), ("P", 2), ("success", 2),
                        ("ndcg_cut", 3), ("rbp", None), ("rbp_resid", None), ("Rprec_mult", 1.2)]:
        brute = tm.compute_trec(trec, rk, J, param, ctx).mean()
        assert te.expectation(trec, jp, J, param, ctx)[0] == pytest.approx(brute, rel=1e-12, abs=1e-12), trec
