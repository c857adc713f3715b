"""E, IUB and WLB of every closed form against brute force over all permutations of small pools.

Each permutation is scored twice: with the library's kernels and with the tiny pure-Python
reference measures below (written from the textbook definitions, sharing no code with the
library).  The closed forms must equal the mean, max and min over ``itertools.permutations`` to
1e-12.  The mean over *distinct* arrangements equals the mean over all n! permutations, because each
distinct arrangement of a multiset arises from the same number of permutations.

Private names: ``permutations._padded``/``_shuffled``, the shuffling step on its own, whose depth cut
no public function exposes apart from the whole Monte Carlo estimate.
"""
from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ulnorm_eval.core import expectations as bounds

from ulnorm_eval.core import permutations

from ulnorm_eval.core import registry
from ulnorm_eval.core.kernels import Judgements, Ranking
from ulnorm_eval.core.measures import compute

TOL = dict(rel=1e-12, abs=1e-12)


# --------------------------------------------------------------------------- reference measures

def ref_gain(g, spec):
    """Gain of grade g under spec['gain']: 'lin' (max(g, 0)), 'exp' (2^g - 1) or a dict."""
    kind = spec["gain"]
    if isinstance(kind, dict):
        return kind[g]
    if kind == "exp":
        return 2.0 ** max(g, 0) - 1.0
    return float(max(g, 0))


def ref_discount(i, spec):
    """Discount of 0-based rank i: 1/log2(i+2) by default, 1/(i+1) 'zipf', (k-i)/k 'linear', d[i] a vector."""
    d = spec.get("discount")
    if d is None or d == "log2":
        return 1.0 / math.log2(i + 2)
    if d == "zipf":
        return 1.0 / (i + 1)
    if d == "linear":
        return max(spec["k"] - i, 0) / spec["k"]
    return d[i] if i < len(d) else 0.0


def ref_dcg(grades, k, spec):
    return sum(ref_gain(g, spec) * ref_discount(i, spec) for i, g in enumerate(grades[:k]))


def ref_sp(rels, k):
    hits, total = 0, 0.0
    for i, r in enumerate(rels[:k], 1):
        if r:
            hits += 1
            total += hits / i
    return total


def ref_rr(rels, k):
    for i, r in enumerate(rels[:k], 1):
        if r:
            return 1.0 / i
    return 0.0


def reference(perm, pool, spec):
    """The measure ``spec`` of the ranking ``perm`` (grades) of a query whose qrels are ``pool``."""
    fam, k, rel = spec["family"], spec["k"], spec["rel"]
    depth = len(perm) if k is None else k
    rels = [g >= rel for g in perm]
    R = sum(g >= rel for g in pool)
    if fam == "DCG":
        return ref_dcg(perm, depth, spec)
    if fam == "nDCG":  # the ideal ranks only documents of positive gain (trec_eval's m_ndcg.c)
        ideal = ref_dcg(sorted((g for g in pool if ref_gain(g, spec) > 0), key=lambda g: -ref_gain(g, spec)),
                        depth, spec)
        return ref_dcg(perm, depth, spec) / ideal if ideal > 0 else 0.0
    if fam == "SP":
        return ref_sp(rels, depth)
    if fam == "AP":
        if spec.get("norm") == "k":  # Karmaker & Feng 2022 eq. 3
            return ref_sp(rels, depth) / k
        return ref_sp(rels, depth) / R if R else 0.0
    if fam == "P":
        return sum(rels[:k]) / k
    if fam == "R":
        return sum(rels[:k]) / R if R else 0.0
    if fam == "Rprec":
        return sum(rels[:R]) / R if R else 0.0
    if fam == "RR":
        return ref_rr(rels, depth)
    if fam == "RBP":
        p = spec["p"]
        if spec.get("binary"):
            gains = [1.0 if g >= spec["binary"] else 0.0 for g in perm]
        else:
            gains = [max(g, 0) / spec["max_grade"] if spec["max_grade"] else 0.0 for g in perm]
        return (1 - p) * sum(x * p ** i for i, x in enumerate(gains[:depth]))
    # trec_eval's families (every pool document judged, grade >= 0: nothing is unjudged)
    if fam in ("GMAP",):
        return ref_sp(rels, depth) / R if R else 0.0
    if fam in ("Bpref", "GMBpref"):  # Buckley & Voorhees 2004, as m_bpref.c
        N = sum(g < rel for g in pool)
        total, nonrel = 0.0, 0
        for r in rels:
            if r:
                total += 1.0 - min(nonrel, R) / min(N, R) if nonrel else 1.0
            else:
                nonrel += 1
        return total / R if R else 0.0
    if fam == "infAP":  # Yilmaz & Aslam 2006, as m_infap.c with every document judged
        eps, total, above_rel = 1e-5, 0.0, 0
        for j, r in enumerate(rels):
            if r:
                total += 1.0 if j == 0 else 1 / (j + 1) + (j / (j + 1)) * (above_rel + eps) / (j + 2 * eps)
                above_rel += 1
        return total / R if R else 0.0
    if fam == "RprecMult":
        c = math.floor(spec["mult"] * R + 0.9)
        return 0.0 if c == 0 else sum(rels[:c]) / c
    if fam == "binG":
        total, nonrel = 0.0, 0
        for r in rels:
            if r:
                total += 1 / math.log2(2 + nonrel)
            else:
                nonrel += 1
        return total / R if R else 0.0
    if fam == "RelP":
        return sum(rels[:k]) / min(k, R) if R else 0.0
    if fam == "Success":
        return 1.0 if any(rels[:k]) else 0.0
    if fam == "RBP_trec":  # grades scaled to [0, 1] by the query's largest grade when it exceeds 1
        p, top = spec["p"], max(pool)
        return (1 - p) * sum((g / top if top > 1 else g) * p ** i for i, g in enumerate(perm))
    if fam == "RBP_resid":  # nothing unjudged: no residual
        return 0.0
    if fam == "Rndcg":  # m_Rndcg.c: nDCG at the end of each run of equal positive ideal gains, and over the
        # whole ranking when it extends two documents past the last of them; 0 when R = 0
        if not R:
            return 0.0
        gmap = spec["gain"] if isinstance(spec["gain"], dict) else {}

        def tgain(g):  # trec_eval's get_gain: a listed level its gain, another judged level its own value
            return float(gmap.get(g, max(g, 0)))

        ideal = sorted((tgain(g) for g in pool if tgain(g) > 0), reverse=True)
        ends = [i + 1 for i in range(len(ideal)) if i + 1 == len(ideal) or ideal[i + 1] != ideal[i]]

        def dcg_gains(gs, b):
            return sum(x / math.log2(i + 2) for i, x in enumerate(gs[:b]))

        run = [tgain(g) for g in perm]
        vals = [dcg_gains(run, b) / dcg_gains(ideal, b) for b in ends]
        if ends and len(perm) >= max(ends) + 2 and dcg_gains(ideal, len(ideal)) > 0:
            vals.append(dcg_gains(run, len(run)) / dcg_gains(ideal, len(ideal)))
        return sum(vals) / len(vals) if vals else 0.0
    if fam == "nDCG_rel":  # m_ndcg_rel.c: at each document of positive gain, DCG so far / ideal DCG at that rank
        # (the ideal stops growing past its last positive gain); each positive ideal gain not met among the
        # ranked ones adds the final DCG / the full ideal DCG; averaged over the positive ideal gains
        gmap = spec["gain"] if isinstance(spec["gain"], dict) else {}

        def tgain(g):
            return float(gmap.get(g, max(g, 0)))

        ideal = sorted((tgain(g) for g in pool if tgain(g) > 0), reverse=True)
        if not ideal:
            return 0.0
        total, dcg, idcg, met = 0.0, 0.0, 0.0, 0
        for i, g in enumerate(perm):
            dcg += tgain(g) / math.log2(i + 2)
            if i < len(ideal):
                idcg += ideal[i] / math.log2(i + 2)
            if tgain(g) > 0:
                total += dcg / idcg
                met += 1
        full = sum(x / math.log2(i + 2) for i, x in enumerate(ideal))
        total += (len(ideal) - met) * dcg / full
        return total / len(ideal) if total > 0 else 0.0
    raise KeyError(fam)


# --------------------------------------------------------------------------- cases

REFERENCE_FAMILIES = ("DCG", "nDCG", "SP", "AP", "P", "R", "Rprec", "RR", "RBP", "GMAP", "Bpref", "GMBpref",
                      "infAP", "RprecMult", "binG", "RelP", "Success", "RBP_trec", "RBP_resid", "Rndcg",
                      "nDCG_rel")  # what reference() scores


def spec_of(meas, rel_level: int, max_grade: int) -> dict:
    """The reference spec of a parsed measure (its family, cutoff, gain and parameters)."""
    gains = meas.get("gains")
    gain = dict(gains) if gains is not None else ("exp" if meas.get("dcg") == "exp-log2" else "lin")
    rel = meas.get("rel")
    spec = dict(family=meas.family, k=meas.cutoff, rel=rel_level if rel is None else rel, gain=gain,
                discount=meas.get("discount"),
                max_grade=max_grade)
    if meas.family in ("RBP", "RBP_trec", "RBP_resid"):
        spec.update(p=meas.get("p"), binary=rel)
    if meas.family == "RprecMult":
        spec.update(mult=meas.get("mult"))
    if meas.family == "AP":
        spec.update(norm=meas.get("norm"))
    return spec


def measure_specs(n: int, max_grade: int, rel_level: int):
    """(measure name, reference spec) pairs from every exact family's record (``Family.examples``),
    with cutoffs below, at and above the pool size n for the examples that take one."""
    cuts = sorted({max(1, n - 2), n, n + 3})
    out = []
    for f in registry.FAMILIES.values():
        if f.bounds != "exact":
            continue
        for ex in f.examples:
            for name in ([ex.replace("{k}", str(k)) for k in cuts] if "{k}" in ex else [ex]):
                if registry.parse(name).measure.bounds != "exact":
                    continue  # a parameter outside the closed form's condition (exact_for): Monte Carlo
                out.append((name, spec_of(registry.parse(name).measure, rel_level, max_grade)))
    return out


def test_every_exact_family_has_examples_and_a_reference():
    for f in registry.FAMILIES.values():
        if f.bounds == "exact":
            assert f.examples, f"{f.name}: no brute-force examples in its record"
            assert f.name in REFERENCE_FAMILIES, f"{f.name}: add its reference implementation to this test"


def random_pools():
    """Deterministic random pools: graded (0..3) and binary, n = 1..8, plus the edge cases."""
    rnd = random.Random(20240611)
    pools = [[0], [1], [0, 0, 0], [2, 2], [1, 1, 1, 1], [3, 0, 0, 0, 0, 0, 0, 0], [0, 1, 0, 0, 0, 0, 0, 1]]
    for n in (2, 3, 4, 5, 6, 7, 8):
        pools.append([rnd.choice([0, 0, 1, 2, 3]) for _ in range(n)])
        pools.append([rnd.choice([0, 1]) for _ in range(n)])
    return pools


def judgements(pools) -> Judgements:
    row = np.concatenate([np.full(len(p), i) for i, p in enumerate(pools)]).astype(np.int64)
    grade = np.concatenate([sorted(p, reverse=True) for p in pools]).astype(np.float64)
    return Judgements([str(i) for i in range(len(pools))], row, grade, float(max(max(p) for p in pools)))


def arrangements(pool):
    """Distinct arrangements of a multiset (via itertools.permutations for n <= 8)."""
    if len(pool) <= 8:
        return sorted(set(itertools.permutations(pool)))
    out = []

    def rec(prefix, left):
        if not left:
            out.append(tuple(prefix))
        for v in sorted(set(left)):
            rest = list(left)
            rest.remove(v)
            rec(prefix + [v], rest)

    rec([], list(pool))
    return out


def kernel_values(perms, q, J, meas, rel_level):
    n = len(perms[0])
    rk = Ranking(np.repeat(np.arange(len(perms)), n), np.asarray(perms, dtype=np.float64).ravel(),
                 len(perms), np.full(len(perms), q))
    return compute(rk, J, meas, rel_level)


POOLS = random_pools()
MAXG = max(max(p) for p in POOLS)


@pytest.mark.parametrize("rel_level", [1, 2])
def test_closed_forms_equal_brute_force(rel_level):
    J = judgements(POOLS)
    pool = bounds.make_pool("qrels", None, J)
    checked = 0
    for n in sorted({len(p) for p in POOLS}):
        for name, spec in measure_specs(n, MAXG, rel_level):
            meas = registry.parse(name).measure
            if meas.record.binary and meas.get("rel") is not None:
                spec = dict(spec, rel=meas.get("rel"))
            E = bounds.expectation(pool, J, meas, rel_level)  # all queries at once
            I = bounds.ideal(pool, J, meas, rel_level)
            W = bounds.worst(pool, J, meas, rel_level)
            for q, grades in enumerate(POOLS):
                if len(grades) != n:
                    continue
                perms = arrangements(grades)
                ref = [reference(list(p), grades, spec) for p in perms]
                lib = kernel_values(perms, q, J, meas, rel_level)
                assert lib == pytest.approx(ref, **TOL), (name, grades)
                assert E[q] == pytest.approx(sum(ref) / len(ref), **TOL), (name, grades, "E")
                assert I[q] == pytest.approx(max(ref), **TOL), (name, grades, "IUB")
                assert W[q] == pytest.approx(min(ref), **TOL), (name, grades, "WLB")
                assert E[q] == pytest.approx(lib.mean(), **TOL)
                checked += 1
    assert checked > 600


def test_mean_over_all_permutations_equals_mean_over_distinct_arrangements():
    grades = [2, 0, 1, 0, 1]
    spec = dict(family="AP", k=3, rel=1, gain="lin")
    every = [reference(list(p), grades, spec) for p in itertools.permutations(grades)]
    distinct = [reference(list(p), grades, spec) for p in arrangements(grades)]
    assert len(every) == 120 and len(distinct) == 30
    assert sum(every) / len(every) == pytest.approx(sum(distinct) / len(distinct), **TOL)


@given(st.lists(st.integers(0, 3), min_size=1, max_size=6), st.integers(1, 8),
       st.sampled_from(["nDCG", "AP", "SP", "RR", "P", "R", "RBP(p=0.8)", "DCG(dcg='exp-log2')"]))
@settings(max_examples=60, deadline=None)
def test_closed_forms_hypothesis(grades, k, family):
    """Random pools and cutoffs beyond the fixed cases (E, IUB, WLB vs the reference)."""
    J = judgements([grades])
    pool = bounds.make_pool("qrels", None, J)
    meas = registry.parse(f"{family}@{k}").measure
    spec = dict(family=family.split("(")[0], k=k, rel=1, gain="exp" if "exp" in family else "lin",
                p=0.8, max_grade=max(grades))
    ref = [reference(list(p), grades, spec) for p in arrangements(grades)]
    assert bounds.expectation(pool, J, meas, 1)[0] == pytest.approx(sum(ref) / len(ref), **TOL)
    assert bounds.ideal(pool, J, meas, 1)[0] == pytest.approx(max(ref), **TOL)
    assert bounds.worst(pool, J, meas, 1)[0] == pytest.approx(min(ref), **TOL)


# --------------------------------------------------------------------------- run and union pools

def test_run_and_union_pools_brute_force():
    """Pools with unjudged documents: they gain nothing, even at rel_level 0, where a judged
    grade-0 document counts as relevant (trec_eval's -l 0)."""
    qrels = [3, 2, 0, 1, 0]  # judged documents d0..d4
    # the run retrieves d1, d4, two unjudged documents u0 u1, and d0
    run = [(2, True), (0, True), (0, False), (0, False), (3, True)]
    J = judgements([qrels])
    rk = Ranking(np.zeros(len(run), np.int64), np.asarray([g for g, _ in run], float), 1, np.zeros(1, np.int64),
                 np.asarray([j for _, j in run]))
    # qrels+2: the judged documents and two placeholders held as a count, the documents of the union here
    pools = {"run": run, "union": [(g, True) for g in qrels] + [(0, False), (0, False)]}
    pools["qrels+2"] = pools["union"]
    for kind, docs in pools.items():
        pool = bounds.make_pool(kind, rk, J)
        assert int(pool.n[0]) == len(docs)
        for name, rel_level in [("nDCG@3", 1), ("AP", 1), ("AP", 0), ("P@4", 0), ("RR@3", 1), ("SP@10", 0),
                                ("RBP(p=0.7)", 1), ("DCG(dcg='exp-log2')@4", 1), ("Rprec", 0)]:
            meas = registry.parse(name).measure
            perms = sorted(set(itertools.permutations(docs)))
            vals = compute(Ranking(np.repeat(np.arange(len(perms)), len(docs)),
                                   np.asarray([[g for g, _ in p] for p in perms], float).ravel(), len(perms),
                                   np.zeros(len(perms), np.int64),
                                   np.asarray([[j for _, j in p] for p in perms]).ravel()), J, meas, rel_level)
            # reference: an unjudged document is a grade that is never relevant and gains nothing
            spec = dict(family=meas.family, k=meas.cutoff, rel=rel_level,
                        gain="exp" if meas.get("dcg") == "exp-log2" else "lin", p=meas.get("p"), max_grade=3)
            ref = [reference([g if j else -99 for g, j in p], qrels, spec) for p in perms]
            assert vals == pytest.approx(ref, **TOL), (kind, name, rel_level)
            assert bounds.expectation(pool, J, meas, rel_level)[0] == pytest.approx(np.mean(ref), **TOL), (kind, name)
            assert bounds.ideal(pool, J, meas, rel_level)[0] == pytest.approx(max(ref), **TOL), (kind, name)
            assert bounds.worst(pool, J, meas, rel_level)[0] == pytest.approx(min(ref), **TOL), (kind, name)


def _every_bounded_measure():
    from ulnorm_eval.core.measures import FAMILIES

    for f in FAMILIES.values():
        if f.bounds != "none":
            for ex in f.examples:
                yield ex.replace("{k}", "5")


@pytest.mark.parametrize("extra", [1, 4, 30])
def test_placeholders_held_as_a_count_are_the_placeholders_as_rows(extra):
    """qrels+N's placeholders as a count (Pool.extra) give every family's E, IUB, WLB and Monte Carlo
    draws exactly as the same documents held as rows (Pool.whole): the same numbers to the bit."""
    from ulnorm_eval.core.kernels import Level
    from ulnorm_eval.core.permutations import Keys, permutation_values

    rng = np.random.default_rng(extra)
    nq = 7
    n = rng.integers(0, 9, nq)
    row = np.repeat(np.arange(nq), n)
    grade = rng.choice([0.0, 0.0, 1.0, 2.0, 3.0, -1.0], len(row))
    order = np.lexsort((-grade, row))
    J = Judgements([f"q{i}" for i in range(nq)], row[order], grade[order], 3.0)
    counted = bounds.make_pool(f"qrels+{extra}", None, J)
    rows = counted.whole()
    assert counted.extra is not None and rows.extra is None and len(rows.row) == len(row) + nq * extra
    assert np.array_equal(counted.n, n + extra) and np.array_equal(rows.n, counted.n)
    checked = 0
    for name in _every_bounded_measure():
        meas = registry.parse(name).measure
        for level in (Level(1), Level(2)):
            if meas.bounds == "exact":
                got = [f(counted, J, meas, level) for f in (bounds.expectation, bounds.ideal, bounds.worst)]
                want = [f(rows, J, meas, level) for f in (bounds.expectation, bounds.ideal, bounds.worst)]
            else:
                got = list(bounds.montecarlo_bounds(counted, J, [meas], level, 30, Keys(3, J.qids))[0].values())
                want = list(bounds.montecarlo_bounds(rows, J, [meas], level, 30, Keys(3, J.qids))[0].values())
            for a, b in zip(got, want):
                assert np.array_equal(a, b, equal_nan=True), (name, float(level), a, b)
            draws = permutation_values(counted, J, meas, level, 20, Keys(5, J.qids))
            assert np.array_equal(draws, permutation_values(rows, J, meas, level, 20, Keys(5, J.qids))), name
            checked += 1
    assert checked > 80


# --------------------------------------------------------------------------- RR and SP at scale

def test_expected_rr_matches_first_relevant_distribution():
    """E[RR@k] against the hypergeometric law of the first relevant rank, for larger pools and
    queries of very different sizes in one call (chunked cumulative products)."""
    n = np.array([1, 2, 10, 50, 300, 1000, 7, 40], float)
    P = np.array([1, 0, 3, 1, 17, 999, 7, 0], float)
    for k in (1, 5, 100, None):
        m = n if k is None else np.minimum(n, k)
        got = bounds.expected_rr(n, P, m)
        for q in range(len(n)):
            N, p, mq = int(n[q]), int(P[q]), int(m[q])
            want = sum(math.comb(N - i, p - 1) / math.comb(N, p) / i for i in range(1, mq + 1)) if p else 0.0
            assert got[q] == pytest.approx(want, rel=1e-12, abs=1e-15)


def test_expected_sp_paper_and_exact_differ():
    # Karmaker & Feng 2022's independence assumption: k (P/n)^2; exact: (P/n) H_m + P(P-1)/(n(n-1)) (m - H_m)
    assert bounds.expected_sp([10], [1], [5], paper=True, k=5)[0] == pytest.approx(0.05, **TOL)
    assert bounds.expected_sp([10], [1], [5])[0] == pytest.approx((1 + 1 / 2 + 1 / 3 + 1 / 4 + 1 / 5) / 10, **TOL)


# --------------------------------------------------------------------------- DB

DB_POOLS = [[0, 1, 0, 0, 2, 0], [1, 1, 0, 0, 0, 0, 0], [3, 2, 1, 0, 0], [0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0]]


@pytest.mark.parametrize("name", ["nDCG@5", "AP", "RR", "RBP(p=0.8)", "P@3"])
def test_db_enumeration_is_the_permutation_cdf_and_monte_carlo_agrees(name):
    J = judgements(DB_POOLS)
    pool = bounds.make_pool("qrels", None, J)
    meas = registry.parse(name).measure
    rng = np.random.default_rng(7)
    # A: the value of one random arrangement of each pool, and a value between two attainable ones
    A = np.array([kernel_values([tuple(rng.permutation(p))], q, J, meas, 1)[0] for q, p in enumerate(DB_POOLS)])
    A[0] = A[0] * 0.999
    exact, se0 = bounds.db_values(pool, J, meas, 1, A, 1000, rng)
    assert np.all(se0 == 0)
    for q, grades in enumerate(DB_POOLS):
        every = kernel_values(arrangements(grades), q, J, meas, 1)
        assert exact[q] == pytest.approx(np.mean(every <= A[q] + 1e-12), **TOL)
    reps = 20000
    mc, se = bounds.db_values(pool, J, meas, 1, A, reps, np.random.default_rng(11), limit=0)
    assert np.all(se > 0) or np.all((se == 0) == np.isin(exact, (0.0, 1.0)))
    assert np.all(np.abs(mc - exact) <= 4 * se + 1e-12), (mc, exact, se)


def test_db_enumerates_gain_classes_not_grades():
    """AP only sees relevant/non-relevant: 12 documents with grades 0..3 have 12!/(...) grade
    arrangements but only C(12, 4) = 495 relevance patterns, so DB(AP) is still exact."""
    grades = [3, 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0]
    J = judgements([grades])
    pool = bounds.make_pool("qrels", None, J)
    meas = registry.parse("AP").measure
    A = np.array([0.5])
    val, se = bounds.db_values(pool, J, meas, 1, A, 10, np.random.default_rng(0))
    assert se[0] == 0
    pats = set(itertools.combinations(range(12), 4))
    vals = [sum((j + 1) / (pos + 1) for j, pos in enumerate(sorted(c))) / 4 for c in pats]
    assert val[0] == pytest.approx(np.mean(np.asarray(vals) <= 0.5 + 1e-12), **TOL)


def test_db_inactive_queries_are_nan():
    J = judgements([[1, 0, 0], [0, 0]])
    pool = bounds.make_pool("qrels", None, J)
    val, _ = bounds.db_values(pool, J, registry.parse("AP").measure, 1, np.full(2, 0.5), 10,
                              np.random.default_rng(0), active=np.array([True, False]))
    assert val[0] == pytest.approx(2 / 3, **TOL) and np.isnan(val[1])  # AP in {1, 1/2, 1/3}


def test_permutation_values_are_uniform_shuffles():
    """Monte Carlo machinery (buckets of pool sizes, padding, depth): each arrangement's frequency
    and E[M] agree with the exact values; pools of very different sizes share one call."""
    pools = [[1, 0, 0], [2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                         0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                         0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], []]
    J = judgements([p if p else [0] for p in pools])
    pool = bounds.Pool(J.row[J.row < 2], J.grade[J.row < 2], 3)  # the third query's pool is empty
    reps = 30000
    for name in ("RR", "nDCG@5", "AP@2"):
        meas = registry.parse(name).measure
        vals = bounds.permutation_values(pool, J, meas, 1, reps, np.random.default_rng(3))
        E = bounds.expectation(pool, J, meas, 1)
        se = vals.std(axis=0, ddof=1) / np.sqrt(reps)
        assert np.all(np.abs(vals.mean(axis=0) - E)[:2] <= 4 * se[:2])
        assert np.all(vals[:, 2] == 0)
    # RR of [1, 0, 0]: the relevant document lands at rank 1, 2, 3 with probability 1/3 each
    vals = bounds.permutation_values(pool, J, registry.parse("RR").measure, 1, reps, np.random.default_rng(5))[:, 0]
    for v in (1, 1 / 2, 1 / 3):
        f = np.mean(np.isclose(vals, v))
        assert abs(f - 1 / 3) <= 4 * math.sqrt(2 / 9 / reps)


def test_top_depth_draws_are_uniform_without_replacement():
    """Short cutoffs on long pools draw the top d directly (d(d-1) <= n): distinct documents, each
    equally likely at every rank, pairs in either order equally often."""
    grades = list(range(40))  # distinct gains identify the documents
    J = judgements([grades])
    pool = bounds.make_pool("qrels", None, J)
    # private: the shuffling step alone, its top-d draw checked for uniformity (no command exposes the draws)
    grade, judged, n = permutations._padded(pool, np.array([0]))
    reps = 40000
    top = permutations._shuffled(grade, judged, n, np.array([0]), reps, np.random.default_rng(1), depth=3)
    top = top.grade.reshape(reps, 3)
    assert np.all((top[:, 0] != top[:, 1]) & (top[:, 0] != top[:, 2]) & (top[:, 1] != top[:, 2]))
    se = np.sqrt(1 / 40 * (1 - 1 / 40) / reps)
    for rank in range(3):
        freq = np.bincount(top[:, rank].astype(int), minlength=40) / reps
        assert np.all(np.abs(freq - 1 / 40) <= 4.5 * se), rank
    assert abs(np.mean(top[:, 0] < top[:, 1]) - 0.5) <= 4 * np.sqrt(0.25 / reps)
    meas = registry.parse("DCG@3").measure
    vals = bounds.permutation_values(pool, J, meas, 1, reps, np.random.default_rng(2))[:, 0]
    assert abs(vals.mean() - bounds.expectation(pool, J, meas, 1)[0]) <= 4 * vals.std(ddof=1) / np.sqrt(reps)


def test_db_is_exact_up_to_the_limit_measures_prints():
    """7 distinct gains: 7! = 5,040 arrangements, the limit: enumerated (standard error 0, equal to the
    brute-force CDF); 8 distinct gains (40,320): Monte Carlo.  `measures` prints the same limit."""
    from ulnorm_eval.core import permutations
    from ulnorm_eval.render.registry_tables import BOUNDS_TEXT, bounds_kind

    assert permutations.ENUMERATE_LIMIT == math.factorial(7)
    pools = [[6, 5, 4, 3, 2, 1, 0], [7, 6, 5, 4, 3, 2, 1, 0]]
    J = judgements(pools)
    pool = bounds.make_pool("qrels", None, J)
    meas = registry.parse("nDCG@3").measure
    A = np.array([0.8, 0.8])
    val, se = bounds.db_values(pool, J, meas, 1, A, 2000, np.random.default_rng(0))
    every = kernel_values(arrangements(pools[0]), 0, J, meas, 1)
    assert len(every) == 5040 and se[0] == 0
    assert val[0] == pytest.approx(np.mean(every <= 0.8 + 1e-12), **TOL)
    assert se[1] > 0
    every8 = kernel_values(arrangements(pools[1]), 1, J, meas, 1)
    assert abs(val[1] - np.mean(every8 <= 0.8 + 1e-12)) <= 4 * se[1]
    limit = f"{permutations.ENUMERATE_LIMIT:,}"
    assert limit == "5,040"
    assert f"at most {limit} distinct arrangements" in BOUNDS_TEXT["exact"]
    assert f"at most {limit} distinct arrangements" in bounds_kind("DB")
    assert "DB by Monte Carlo" not in BOUNDS_TEXT["exact"]
