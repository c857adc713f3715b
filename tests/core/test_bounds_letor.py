"""Exact expectations on real LETOR queries against Monte Carlo.

LightGBM's lambdarank example (rank.test: 50 queries of 6-24 documents graded 0-4, groups in
rank.test.query), ranked by a single feature as a simple ranker.  The closed-form E(nDCG@10) must
agree, query by query, with a 100,000-permutation Monte Carlo estimate written here independently
(numpy: sort iid uniform keys, score the top 10) within 4 standard errors; the library's own Monte
Carlo machinery (used for DB and for measures without a closed form) must agree with the closed
forms of the other measures too.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ulnorm_eval import evaluate

from ulnorm_eval.core import expectations as bounds

from ulnorm_eval.core import registry
from ulnorm_eval.pipeline.evaluate import load_qrels
from ulnorm_eval.inputs.in_memory import run_from_object
from ulnorm_eval.pipeline.ordering import judgements

FEATURE = 8  # any single feature makes a (weak) ranker


def letor_features(path: str, feature: int) -> np.ndarray:
    """The value of one feature on every row of a LETOR file (0 where the row omits it)."""
    key, out = f"{feature}:", []
    for line in open(path, encoding="utf-8").read().split("\n"):
        parts = line.split("#", 1)[0].split()
        if parts:
            out.append(next((float(part[len(key):]) for part in parts[1:] if part.startswith(key)), 0.0))
    return np.asarray(out, dtype=np.float64)


@pytest.fixture(scope="module")
def letor(shared):
    path = str(shared / "letor" / "lightgbm_lambdarank" / "rank.test")
    qrels = load_qrels(path)
    score = letor_features(path, FEATURE)
    run = run_from_object(pd.DataFrame({"query_id": qrels.qid.to_pylist(), "doc_id": qrels.docid.to_pylist(),
                                       "score": score}), name=f"feature{FEATURE}")
    return qrels, run


def grades_by_query(qrels):
    qid = np.asarray(qrels.qid.to_pylist())
    order = list(dict.fromkeys(qid))
    return {q: qrels.grade[qid == q] for q in order}


def monte_carlo_ndcg10(pools: list, reps: int, seed: int):
    """Mean and standard error of nDCG@10 (gain = grade, trec_eval) over random permutations."""
    nq = len(pools)
    width = max(len(p) for p in pools)
    gains = np.zeros((nq, width))
    pad = np.ones((nq, width), bool)
    for i, p in enumerate(pools):
        gains[i, :len(p)] = p
        pad[i, :len(p)] = False
    disc = 1 / np.log2(np.arange(2, 12))
    idcg = np.array([np.sum(np.sort(p)[::-1][:10] * disc[:min(10, len(p))]) for p in pools])
    rng = np.random.default_rng(seed)
    s1 = np.zeros(nq)
    s2 = np.zeros(nq)
    done = 0
    while done < reps:
        b = min(2000, reps - done)
        keys = rng.random((b, nq, width)) + pad  # padding sorts after every document
        top = np.argsort(keys, axis=2)[:, :, :10]
        g = np.take_along_axis(np.broadcast_to(gains, (b, nq, width)), top, axis=2)
        v = (g * disc).sum(axis=2) / idcg
        s1 += v.sum(axis=0)
        s2 += (v ** 2).sum(axis=0)
        done += b
    mean = s1 / reps
    var = (s2 - reps * mean ** 2) / (reps - 1)
    return mean, np.sqrt(np.maximum(var, 0) / reps)


def test_expected_ndcg10_matches_100k_monte_carlo(letor):
    qrels, run = letor
    res = evaluate(qrels, run, measures=["nDCG@10"], variants=["E", "IUB", "WLB"])
    rr = res.runs[0]
    metric = {str(m): m for m in res.metrics}
    E = rr.values[metric["E(nDCG@10)"]]
    pools = grades_by_query(qrels)
    assert list(pools) == rr.qids and len(pools) == 50
    mc, se = monte_carlo_ndcg10(list(pools.values()), 100_000, seed=2024)
    z = np.abs(mc - E) / np.where(se > 0, se, 1)
    assert np.all(z <= 4), (z.max(), rr.qids[int(z.argmax())])
    assert np.all((se > 0) | (np.abs(mc - E) < 1e-12))
    assert se.max() < 2e-3  # 100,000 permutations: the comparison is sharp
    # the ranker lies between the bounds; IUB is 1 with the qrels pool
    A = rr.values[metric["nDCG@10"]]
    I, W = rr.values[metric["IUB(nDCG@10)"]], rr.values[metric["WLB(nDCG@10)"]]
    ok = I > 0
    assert np.allclose(I[ok], 1.0) and np.all(W[ok] <= A[ok] + 1e-12) and np.all(A[ok] <= I[ok] + 1e-12)
    assert 0 < E[ok].mean() < A[ok].mean() + 0.5


@pytest.mark.parametrize("name", ["AP", "AP@5", "RR", "RR@3", "P@5", "SP@10", "RBP(p=0.8)", "R@5", "Rprec",
                                  "nDCG(dcg='exp-log2')", "DCG@30"])
def test_closed_forms_match_library_monte_carlo(letor, name):
    qrels, _ = letor
    qids = list(dict.fromkeys(qrels.qid.to_pylist()))
    J = judgements(qrels, qids)
    pool = bounds.make_pool("qrels", None, J)
    meas = registry.parse(name).measure
    reps = 5_000
    vals = bounds.permutation_values(pool, J, meas, 1, reps, np.random.default_rng(99))
    E = bounds.expectation(pool, J, meas, 1)
    se = vals.std(axis=0, ddof=1) / np.sqrt(reps)
    diff = np.abs(vals.mean(axis=0) - E)
    assert np.all(diff <= 4 * se + 1e-12), (name, (diff / np.where(se > 0, se, 1)).max())
    # and every sampled value lies between the worst and the ideal ranking
    assert np.all(vals >= bounds.worst(pool, J, meas, 1) - 1e-12)
    assert np.all(vals <= bounds.ideal(pool, J, meas, 1) + 1e-12)
