"""The Monte Carlo sampler that draws only the documents a kernel reads (``Family.reads``:
iprec_at_recall and 11pt_avg their relevant documents, G and ndcg_rel their nonzero-gain ones).

* its draws are a uniform injection of those documents into the pool's ranks (chi-square over every
  injection of small cases);
* a kernel scores a placed ranking exactly as it scores the whole permutation with those documents
  at those ranks (bit for bit), whatever fills the other ranks;
* its estimates agree with the exact mean over every permutation of pools beyond the enumeration
  limit's reach (within 4 standard errors);
* they depend on the seed, the query and the repetition only: the same for a query alone or beside
  others, for any batch of repetitions, and for a measure alone or sharing its draws.
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from ulnorm_eval.core import expectations, registry
from ulnorm_eval.core.kernels import Judgements, Level, Ranking
from ulnorm_eval.core.measures import FAMILIES, compute
from ulnorm_eval.core.permutations import Keys, permutation_values, placed, placements
from ulnorm_eval.core.pools import Pool, pool_reads

READERS = ["iprec_at_recall.0.0", "iprec_at_recall.0.30", "iprec_at_recall.1.0", "11pt_avg", "G", "G.1=3,2=-1",
           "ndcg_rel.1=0.5,2=-2", "ndcg_rel.-1=2", "nDCG@10", "nDCG", "nDCG(gains={0:1,2:5})@5", "nDCG(dcg='exp-log2')",
           "DCG(discount='zipf')@20", "nDCG(discount='linear')@7", "AP", "AP@10", "AP(rel=2)", "AP(norm='k')@5", "SP@4",
           "RBP(p=0.8)", "RBP(p=0.5,rel=2)@10", "RBP(p=0.9,gains={1:2,2:-1})", "P@5", "R@10", "RR", "RR@3", "Rprec",
           "bpref", "bpref(rel=2)", "infAP", "infAP(rel=2)", "RprecMult(mult=0.2)", "RprecMult(mult=3.5)", "binG",
           "binG(rel=2)", "RelP@5", "RelP(rel=2)@3", "Success@3", "Success(rel=2)@1"]


def _pools(seed: int, nq: int = 6):
    """Pools with relevant documents at several grades, judged nonrelevant, negative grades and
    documents not in the qrels; a few relevant among many (the placed sampler) and many relevant
    among few (whole shuffles); qrels with extra judged documents outside the pool."""
    rng = np.random.default_rng(seed)
    n = rng.integers(1, 60, nq)
    n[0] = 0
    row = np.repeat(np.arange(nq), n)
    rich = rng.random(nq) < 0.3  # most documents relevant: whole shuffles
    p_rel = np.where(rich, 0.8, 0.12)[row]
    u = rng.random(len(row))
    grade = np.where(u < p_rel, rng.choice([1.0, 2.0, 3.0], len(row)), rng.choice([0.0, 0.0, -1.0], len(row)))
    judged = rng.random(len(row)) < 0.9
    grade = np.where(judged, grade, 0.0)
    jrow = np.concatenate([row[judged], rng.integers(0, nq, 10)])
    jgrade = np.concatenate([grade[judged], rng.choice([0.0, 1.0, 2.0], 10)])
    order = np.lexsort((-jgrade, jrow))
    J = Judgements([f"q{i}" for i in range(nq)], jrow[order], jgrade[order], 3.0)
    return Pool(row, grade, nq, judged), J


def _whole(rk: Ranking, pool: Pool, reads: np.ndarray, rng) -> Ranking:
    """The permutations a placed ranking stands for: each row's documents at their ranks, the pool's
    other documents in a random order in the ranks left."""
    rows, grade, judged = [], [], []
    for r in range(rk.nrows):
        q = int(rk.base[r])
        docs = np.flatnonzero(pool.row == q)
        others = rng.permutation(docs[~reads[docs]])
        lo, hi = rk.starts[r], rk.starts[r + 1]
        n = len(docs)
        assert rk.length[r] == n and hi - lo == reads[docs].sum()
        g, jd = np.full(n, np.nan), np.zeros(n, bool)
        at = rk.pos[lo:hi]
        g[at] = rk.grade[lo:hi]
        jd[at] = True if rk.judged is None else rk.judged[lo:hi]
        free = np.isnan(g)
        g[free], jd[free] = pool.grade[others], pool.judged[others]
        rows.append(np.full(n, r)), grade.append(g), judged.append(jd)
    return Ranking(np.concatenate(rows).astype(np.int64), np.concatenate(grade).astype(float), rk.nrows,
                   rk.base, np.concatenate(judged).astype(bool))


def test_the_families_that_declare_what_they_read():
    assert {f.name for f in FAMILIES.values() if f.reads is not None} == {"IPrec", "Avg11pt", "G", "nDCG_rel", "nDCG",
                                                                          "DCG", "AP", "SP", "RBP", "P", "R", "RR", "Rprec",
                                                                          "Bpref", "GMBpref", "infAP", "RprecMult", "binG",
                                                                          "RelP", "Success"}


@pytest.mark.parametrize("seed", range(6))
def test_a_placed_ranking_scores_as_the_whole_permutation(seed):
    pool, J = _pools(seed)
    rng = np.random.default_rng(seed)
    for name in READERS:
        m = registry.parse(name).measure
        for lv in (Level(1), Level(2)):
            reads = pool_reads(pool, J, m, lv)
            rk = placed(pool, reads, np.arange(pool.nq), 7, Keys(seed, J.qids), rep0=3)
            got = compute(rk, J, m, lv)
            want = compute(_whole(rk, pool, reads, rng), J, m, lv)
            assert np.array_equal(got, want), (name, float(lv))


@pytest.mark.parametrize("cnt, n", [(1, 3), (2, 4), (2, 5), (3, 6), (3, 7), (0, 4)])
def test_placements_are_uniform_injections(cnt, n):
    reps = 30000
    rank, doc = placements(np.array([cnt]), np.array([n]), np.array([0]), reps, Keys(11, ["q"]))
    assert rank.shape == (reps, cnt) and np.all((rank >= 0) & (rank < n))
    assert np.all(np.diff(rank, axis=1) > 0)  # distinct, sorted
    inj = np.zeros((reps, cnt), np.int64)
    inj[np.repeat(np.arange(reps), cnt), doc.ravel()] = rank.ravel()
    counts = np.unique(inj, axis=0, return_counts=True)[1]
    cells = math.perm(n, cnt)
    assert len(counts) == cells  # every injection occurs
    expected = reps / cells
    chi2 = float(np.sum((counts - expected) ** 2 / expected))
    df = cells - 1
    assert chi2 < df + 5 * math.sqrt(2 * df) + 5, (chi2, df)  # ~5 standard deviations of chi2(df)


def test_placements_pad_rows_of_fewer_documents_and_redraw_collisions():
    cnt, n = np.array([0, 1, 5, 3]), np.array([4, 9, 10, 6])
    rank, doc = placements(cnt, n, np.arange(4), 500, Keys(2, list("abcd")))
    c = np.tile(cnt, 500)
    for r in range(len(c)):
        k = c[r]
        assert sorted(doc[r, :k]) == list(range(k)) and len(set(rank[r, :k])) == k
        assert np.all(rank[r, :k] < n[r % 4]) and np.all(rank[r, k:] >= n[r % 4])


def test_placed_estimates_agree_with_every_permutation():
    """Pools of 9 documents with 1 to 4 relevant (placed) or 6 (whole shuffles) against the mean over
    all 9! orders, within 4 standard errors."""
    pools = [[2, 0, 0, 0, 0, -1, 0, 0, 0], [1, 0, 3, 0, 0, 0, 0, 0, 0], [1, 1, 0, 2, 0, 0, 0, -1, 0],
             [2, 1, 1, 1, 0, 0, 0, 0, 0], [1, 2, 1, 3, 1, 1, 0, 0, 0]]
    nq = len(pools)
    grade = np.concatenate(pools).astype(float)
    row = np.repeat(np.arange(nq), 9)
    judged = np.ones(len(row), bool)
    judged[[8, 17]] = False  # two documents not in the qrels
    grade[~judged] = 0.0
    order = np.lexsort((-grade[judged], row[judged]))
    J = Judgements([f"q{i}" for i in range(nq)], row[judged][order], grade[judged][order], 3.0)
    pool = Pool(row, grade, nq, judged)
    perms = np.asarray(list(itertools.permutations(range(9))), dtype=np.int64)
    reps = 4000
    for name in ["iprec_at_recall.0.50", "11pt_avg", "G", "ndcg_rel.1=0.5,2=-2"]:
        m = registry.parse(name).measure
        reads = pool_reads(pool, J, m, Level(1))
        vals = permutation_values(pool, J, m, Level(1), reps, Keys(9, J.qids))
        mean, se = vals.mean(axis=0), vals.std(axis=0, ddof=1) / np.sqrt(reps)
        for q in range(nq):
            docs = np.flatnonzero(row == q)[perms]
            rk = Ranking(np.repeat(np.arange(len(perms)), 9), grade[docs].ravel(), len(perms),
                         np.full(len(perms), q), judged[docs].ravel())
            every = compute(rk, J, m, Level(1))
            assert abs(mean[q] - every.mean()) <= 4 * se[q] + 1e-12, (name, q, mean[q], every.mean(), se[q])
            if 2 * reads[row == q].sum() <= 9:
                assert se[q] > 0 or np.ptp(every) == 0


def test_placed_draws_depend_on_seed_query_and_repetition_only():
    pool, J = _pools(5, nq=9)
    m = registry.parse("iprec_at_recall.0.30").measure
    g = registry.parse("G").measure
    g0 = registry.parse_many("G.0=1")[0].measure  # reads the judged nonrelevant documents too
    lv = Level(1)
    keys = Keys(4, J.qids)
    everyone = permutation_values(pool, J, m, lv, 50, keys)
    some = permutation_values(pool, J, m, lv, 50, keys, queries=np.array([2, 5, 7]))
    assert np.array_equal(everyone[:, [2, 5, 7]], some[:, [2, 5, 7]])
    alone_5 = pool.row == 5  # the same pool with every other query emptied
    sub = Pool(pool.row[alone_5], pool.grade[alone_5], pool.nq, pool.judged[alone_5])
    alone = permutation_values(sub, J, m, lv, 50, keys)
    assert np.array_equal(everyone[:, 5], alone[:, 5])
    # repetitions drawn in another batching: rep0 numbers them globally
    reads = pool_reads(pool, J, m, lv)
    qs = np.arange(pool.nq)
    whole = compute(placed(pool, reads, qs, 6, keys), J, m, lv).reshape(6, -1)
    later = compute(placed(pool, reads, qs, 2, keys, rep0=4), J, m, lv).reshape(2, -1)
    assert np.array_equal(whole[4:], later)
    # a measure alone or sharing its draws with others reading the same documents
    together = expectations.montecarlo_bounds(pool, J, [m, g0, g], lv, 50, keys)
    for meas, b in zip((m, g0, g), together):
        one = expectations.montecarlo_bounds(pool, J, [meas], lv, 50, keys)[0]
        assert np.array_equal(b["E"], one["E"], equal_nan=True) and np.array_equal(b["se"], one["se"], equal_nan=True)


def test_a_placed_ranking_refuses_to_close_up_ranks():
    """-J on a placed ranking cannot drop documents (the others are not held); with nothing to drop
    it is the ranking itself (the pool of a -J measure's bounds is already judged only)."""
    from ulnorm_eval.core.measures.common import judged_only

    pool = Pool(np.zeros(6, np.int64), np.array([1.0, 0, -1, 0, 0, 0]), 1)
    J = Judgements(["q"], np.zeros(6, np.int64), np.array([1.0, 0, 0, 0, 0, -1]), 1.0)
    reads = np.array([True, False, True, False, False, False])  # a negative grade among the read
    rk = placed(pool, reads, np.array([0]), 3, Keys(0, J.qids))
    with pytest.raises(ValueError, match="placed ranking"):
        judged_only(rk)
    ok = placed(pool, reads & (pool.grade >= 0), np.array([0]), 3, Keys(0, J.qids))
    assert judged_only(ok) is ok


def test_a_judged_only_measure_on_a_pool_with_unjudged_documents_draws_whole_shuffles():
    """IPrec(judged_only=1) closes up the ranks of the unjudged documents it drops, so on a pool
    holding some (a caller that did not clear them first) every document's rank matters."""
    grade = np.array([1.0, 0, -1, 0, 2, 0, 0, 0])
    judged = np.array([True, True, True, False, True, True, True, True])
    pool = Pool(np.zeros(8, np.int64), grade, 1, judged)
    J = Judgements(["q"], np.zeros(7, np.int64), np.sort(grade[judged])[::-1].copy(), 2.0)
    m = registry.parse("IPrec(judged_only=1)@0.5").measure
    assert pool_reads(pool, J, m, Level(1)) is None
    assert pool_reads(pool, J, registry.parse("IPrec@0.5").measure, Level(1)) is not None
    reps = 4000
    vals = permutation_values(pool, J, m, Level(1), reps, Keys(1, J.qids))[:, 0]
    perms = np.asarray(list(itertools.permutations(range(8))), dtype=np.int64)
    rk = Ranking(np.repeat(np.arange(len(perms)), 8), grade[perms].ravel(), len(perms),
                 np.zeros(len(perms), np.int64), judged[perms].ravel())
    every = compute(rk, J, m, Level(1))
    assert abs(vals.mean() - every.mean()) <= 4 * vals.std(ddof=1) / np.sqrt(reps)


def test_random_orderings_of_robust_qrels_plus_1000_centre_on_the_closed_forms(shared):
    """The randomisation null's draws (nDCG@10, AP and RBP share one placed draw of their relevant
    documents among 1,000 placeholders and the judged ones): over Robust 2003's 100 queries the mean
    of 999 orderings minus E averages within 4 standard errors of 0, query by query within 6 (a
    query's value is skewed: rare large ones), and a measure alone draws what it draws beside others."""
    from ulnorm_eval.api import to_qrels
    from ulnorm_eval.pipeline.ordering import judgements, natural_order, qrels_queries

    q = to_qrels(str(shared / "robust03" / "qrels.txt"))
    J = judgements(q, natural_order(qrels_queries(q)))
    pool = expectations.make_pool("qrels+1000", None, J)
    ms = [registry.parse(m).measure for m in ("nDCG@10", "AP", "RBP(p=0.8)")]
    reads = [pool_reads(pool, J, m, Level(1)) for m in ms]
    assert all(np.array_equal(reads[0], r) for r in reads) and reads[0].sum() < len(pool.row) / 5
    vals = expectations.random_orderings(pool, J, ms, Level(1), 999, Keys(0, J.qids))
    for m, v in zip(ms, vals):
        gap = v - expectations.expectation(pool, J, m, Level(1))
        se = gap.std(axis=0, ddof=1) / np.sqrt(len(gap))
        assert np.all(np.abs(gap.mean(axis=0)) <= 6 * se + 1e-15), m
        over = gap.mean(axis=1)
        assert abs(over.mean()) <= 4 * over.std(ddof=1) / np.sqrt(len(over)), m
    alone = expectations.random_orderings(pool, J, ms[1:2], Level(1), 50, Keys(0, J.qids))[0]
    assert np.array_equal(alone, vals[1][:50])
