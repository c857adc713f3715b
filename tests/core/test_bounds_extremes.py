"""Bounds that bound: for every native measure with random-ranking bounds (each family's record
``examples``), over every ordering of small pools with grades -1..3 (judged with a negative grade,
judged 0..3) and, in union-like pools, documents the qrels do not list, at -l 1 and -l 2:

* E (closed form, or exact enumeration for a Monte Carlo family on a small pool) = the mean,
* IUB = the maximum, WLB = the minimum (sorted when the record proves it, else enumerated),
* DB = the exact share of orderings scoring <= A, for A at and between attainable values, and
  undefined exactly when every ordering scores alike.

The brute force scores each ordering with the library's kernels (their values are checked against
trec_eval and the textbook definitions elsewhere: tests/core/test_bounds_bruteforce.py, the parity tests);
what is checked here is that the bounds are the extremes, mean and distribution of those values.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from ulnorm_eval.core import expectations as B
from ulnorm_eval.core import registry
from ulnorm_eval.core.kernels import Judgements, Level, Ranking
from ulnorm_eval.core.measures import compute
from ulnorm_eval.core.normalise import undefined_mask
from ulnorm_eval.core.permutations import Keys, db_values
from ulnorm_eval.core.pools import Pool, judged_only_pool

EXTRA = ("RBP_trec(p=0.8,gains={1:-1})", "nDCG(gains={0:-1,1:1,2:3})", "DCG(discount=[0.2,1,0.5])",
         "AP(judged_only=True)", "P(judged_only=True)@2", "nDCG(judged_only=True)@3")


def names(n: int) -> list:
    """Every example of every family with bounds, cutoffs below, at and above the pool size."""
    cuts = sorted({max(1, n - 2), n, n + 3})
    out = []
    for f in registry.FAMILIES.values():
        if f.bounds == "none":
            continue
        for ex in f.examples:
            out += [ex.replace("{k}", str(k)) for k in cuts] if "{k}" in ex else [ex]
    return out + list(EXTRA)


def test_every_family_with_bounds_has_examples():
    for f in registry.FAMILIES.values():
        if f.bounds != "none":
            assert f.examples, f"{f.name}: no brute-force examples in its record"


def cases():
    """(grades, judged, extra qrels grades): the issue's pools, then deterministic random ones."""
    out = [([-1, 0], None, []), ([2, 1], None, []), ([2, 1, 3, 1], None, []), ([1, 0], [True, False], [2])]
    rng = np.random.default_rng(22)
    for i in range(26):
        n = int(rng.integers(2, 7))
        grades = [int(x) for x in rng.choice([-1, 0, 0, 1, 2, 3], size=n)]
        judged = None
        if i % 3 == 2:  # a union-like pool: some documents are not in the qrels (grade 0, as a run's)
            judged = [bool(x) for x in rng.random(n) > 0.3]
            grades = [g if j else 0 for g, j in zip(grades, judged)]
        extra = [int(x) for x in rng.integers(0, 4, size=int(rng.integers(0, 2)))] if judged else []
        out.append((grades, judged, extra))
    return out


def setup(grades, judged, extra):
    n = len(grades)
    grade = np.asarray(grades, float)
    jflag = np.ones(n, bool) if judged is None else np.asarray(judged)
    jg = np.concatenate([grade[jflag], np.asarray(extra, float)])
    J = Judgements(["q"], np.zeros(len(jg), np.int64), np.sort(jg)[::-1].copy(), 3.0)
    pool = Pool(np.zeros(n, np.int64), grade, 1, None if judged is None else jflag)
    perms = np.asarray(list(itertools.permutations(range(n))), np.int64)
    M = len(perms)
    rk = Ranking(np.repeat(np.arange(M), n), grade[perms].ravel(), M, np.zeros(M, np.int64), jflag[perms].ravel())
    return pool, J, rk


def bounds_of(pool, J, meas, lv):
    if meas.bounds == "exact":
        return B.expectation(pool, J, meas, lv)[0], B.ideal(pool, J, meas, lv)[0], B.worst(pool, J, meas, lv)[0]
    b = B.montecarlo_bounds(pool, J, [meas], lv, 20, Keys(0, J.qids))[0]
    assert b["se"][0] == 0  # a small pool is enumerated: E is exact
    return b["E"][0], b["IUB"][0], b["WLB"][0]


def close(a, b):
    return abs(a - b) <= 1e-12 * max(1.0, abs(b))


@pytest.mark.parametrize("L", [1, 2])
def test_bounds_are_mean_max_min_and_db_the_exact_share(L):
    lv = Level(L)
    checked = set()
    for grades, judged, extra in cases():
        pool0, J, rk = setup(grades, judged, extra)
        for name in names(len(grades)):
            meas = registry.parse(name).measure
            v = compute(rk, J, meas, lv)
            if meas.get("judged_only"):  # its own -J: the bounds permute what -J keeps (as variant_values)
                pool = judged_only_pool(pool0)
                if len(pool.row) == 0:
                    continue
            else:
                pool = pool0
            E, I, W = bounds_of(pool, J, meas, lv)
            ctx = (name, L, grades, judged, extra)
            assert close(E, v.mean()), ctx + ("E", E, v.mean())
            assert close(I, v.max()), ctx + ("IUB", I, v.max())
            assert close(W, v.min()), ctx + ("WLB", W, v.min())
            und = undefined_mask(np.array([I]), np.array([E]), np.array([W]))
            flat = np.ptp(v) <= 1e-12 * max(1.0, np.abs(v).max())
            assert bool(und[0]) == bool(flat), ctx
            vals = np.unique(v)
            probes = sorted({vals[0], vals[-1], vals[len(vals) // 2]}
                            | ({(vals[0] + vals[1]) / 2} if len(vals) > 1 else set()))
            for a in probes:
                d, se = db_values(pool, J, meas, lv, np.array([a]), 10, Keys(0, J.qids), active=~und)
                if flat:
                    assert np.isnan(d[0]), ctx
                else:
                    assert se[0] == 0 and close(d[0], np.mean(v <= a + 1e-12 * max(1.0, abs(a)))), ctx + ("DB", a)
            checked.add(meas.family)
    with_bounds = {f.name for f in registry.FAMILIES.values() if f.bounds != "none"}
    assert checked == with_bounds


# --------------------------------------------------------------------------- the cases found by enumeration

def one(grades, name, L=1):
    pool, J, rk = setup(grades, None, [])
    meas = registry.parse(name).measure
    return pool, J, rk, meas, Level(L)


def test_rbp_resid_tells_negative_grades_from_zero():
    """qrels d0 = -1 (judged, negative: unjudged for trec_eval), d1 = 0: the orderings score
    0.9^2 + 0.1 * 1 = 0.91 (d0 first) and 0.81 + 0.1 * 0.9 = 0.90."""
    pool, J, rk, meas, lv = one([-1, 0], "RBP_resid(p=0.9)")
    assert sorted(compute(rk, J, meas, lv)) == pytest.approx([0.90, 0.91], abs=1e-15)
    assert B.ideal(pool, J, meas, lv)[0] == pytest.approx(0.91, abs=1e-15)
    assert B.worst(pool, J, meas, lv)[0] == pytest.approx(0.90, abs=1e-15)
    assert B.expectation(pool, J, meas, lv)[0] == pytest.approx(0.905, abs=1e-15)
    d, _ = db_values(pool, J, meas, lv, np.array([0.90]), 10, Keys(0, J.qids))
    assert d[0] == 0.5


def test_compat_worst_ordering_puts_the_lower_grade_first():
    """qrels d0 = 2, d1 = 1; the ideal d0, d1 has Compat 1; d1, d0 overlaps it only at depth 2:
    RBO sum p^1 * 2/2 against the ideal's 1 + p * 2/2, so Compat = p/(1+p) = 0.95/1.95 = 0.4872."""
    pool, J, rk, meas, lv = one([2, 1], "Compat")
    v = compute(rk, J, meas, lv)
    p = 0.95
    assert sorted(v) == pytest.approx([p / (1 + p), 1.0], abs=1e-15)
    assert B.ideal(pool, J, meas, lv)[0] == 1.0
    b = B.montecarlo_bounds(pool, J, [meas], lv, 10, Keys(0, J.qids))[0]
    assert b["WLB"][0] == pytest.approx(min(v), abs=1e-15) and b["IUB"][0] == 1.0
    d, _ = db_values(pool, J, meas, lv, np.array([min(v)]), 10, Keys(0, J.qids))
    assert d[0] == 0.5


def test_g_minimum_is_not_the_ascending_ordering():
    """Pool 2,1,3,1: ascending (1,1,2,3) scores 0.7044, the minimum is 0.6891 at 1,1,3,2."""
    pool, J, rk, meas, lv = one([2, 1, 3, 1], "G")
    asc = compute(pool.ordered(np.asarray([2.0, 1, 3, 1]), False), J, meas, lv)[0]
    assert asc == pytest.approx(0.7043823654390561, abs=1e-12)
    b = B.montecarlo_bounds(pool, J, [meas], lv, 10, Keys(0, J.qids))[0]
    assert b["WLB"][0] == pytest.approx(0.6890665455411094, abs=1e-12) and b["WLB"][0] < asc
    # by hand: ideal gains 3,2,1,1 (costs 3,5,6,7); run 1,1,3,2 has running gains 1,2,5,7
    want = (1 / np.log2(2 + 3 - 1) + 1 / np.log2(2 + 5 - 2) + 3 / np.log2(2 + 6 - 5) + 2 / np.log2(2 + 7 - 7)) / 7
    assert b["WLB"][0] == pytest.approx(want, abs=1e-15)


def test_searched_extremes_are_withheld_beyond_the_enumeration():
    """G's minimum over a pool with more than 5040 arrangements is not computed: WLB is NaN, and
    the pipeline counts MM/UEW/WLB of G as undefined with the reason, never a silent value."""
    import ulnorm_eval as ue
    grades = [3, 2, 2, 1, 1, 1, 0, 0, 0, 0, 3, 2]  # 12!/(2!3!3!4!) = 277,200 arrangements
    qrels = {"q1": {f"d{i}": g for i, g in enumerate(grades)}, "q2": {"a": 2, "b": 1}}
    run = {"q1": {f"d{i}": float(i) for i in range(12)}, "q2": {"a": 1.0, "b": 2.0}}
    res = ue.evaluate(qrels, run, measures=["G"], variants=["IUB", "WLB", "MM", "UL2"], undefined="skip",
                      pool="qrels")  # the judged documents: q2's two are enumerated
    notes = " ".join(res.notes)
    assert "WLB of G" in notes and "withheld" in notes
    rr = res.runs[0]
    vals = {str(m): rr.values[m] for m in rr.values}
    assert np.isnan(vals["WLB(G)"][0]) and np.isnan(vals["MM(G)"][0])
    assert vals["IUB(G)"][0] == pytest.approx(1.0)  # sorting is G's maximum (gains >= 0)
    # q2: b (grade 1) then a (grade 2): G = (1/log2(2 + 2 - 1) + 2/log2(2 + 3 - 3)) / 3, the worse of two
    assert vals["WLB(G)"][1] == pytest.approx((1 / np.log2(3) + 2) / 3, abs=1e-12)
    assert not np.isnan(vals["UL2(G)"][0])
    assert rr.undefined[next(m for m in rr.values if str(m) == "WLB(G)")] == 1
