"""The bootstrap of judgment holes (BS, BSLO, BSHI; Froebe et al. 2023): its mean against the exact
expectation under the prior (every assignment of the holes' grades enumerated and weighted by its
probability), the prior by hand, determinism and independence from the other queries, the collapse
without holes, and the CLI."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from ulnorm_eval.core import registry
from ulnorm_eval.core.holes import (BOOT_SMOOTHING, HoleContext, bootstrap, candidate_grades, grade_prior,
                                    hole_bounds)
from ulnorm_eval.core.kernels import Judgements, Ranking
from ulnorm_eval.core.records import FAMILIES

from test_holes import build  # the rankings with holes of test_holes, shared

from conftest import command

MEASURES = ["nDCG@3", "nDCG", "AP", "AP@2", "P@2", "R@3", "RR", "Rprec", "DCG@3", "RBP(p=0.8)", "SP@3",
            "Success@2", "nDCG(gains={0:0,1:1,2:5,3:11.5})@3", "nDCG(dcg='exp-log2')"]


def reference_prior(run, other, cutoff, cands, prior):
    """The prior written out: grade frequencies over the candidate grades (a judged grade counts for the
    largest candidate not above it, negative ones for 0), floored at BOOT_SMOOTHING on the grades the
    query's judgments use and on 0 and G (the others 0), renormalised."""
    def counts(grades):
        c = [0.0] * len(cands)
        for g in grades:
            g = min(max(g, 0.0), cands[-1])
            c[max(i for i, x in enumerate(cands) if x <= g)] += 1
        return c

    depth = len(run) if cutoff is None else cutoff
    pool = counts([g for g in run if g is not None] + list(other))
    # floored: the grades the query's judgments use, 0 and G; the other candidates are never drawn
    support = [x > 0 or i in (0, len(cands) - 1) for i, x in enumerate(pool)]

    def freq(c):
        tot = sum(c)
        p = [max((x / tot) if tot else 0.0, BOOT_SMOOTHING) if ok else 0.0 for x, ok in zip(c, support)]
        return [x / sum(p) for x in p]

    mine = counts([g for g in run[:depth] if g is not None])
    if sum(mine) == 0:
        mine = pool
    if prior == "pool":
        return freq(pool)
    if prior == "run":
        return freq(mine)
    return [(a + b) / 2 for a, b in zip(freq(mine), freq(pool))]


def exact(queries, m, max_grade, level, prior):
    """Per query: E and sd of the measure under the prior, every assignment of the holes within the
    cutoff enumerated (the holes past it stay unjudged, non-relevant) and weighted by its probability."""
    kernel = FAMILIES[m.family].kernel
    cands = list(candidate_grades(max_grade))
    means, sds, m4s = [], [], []
    for run, other in queries:
        depth = len(run) if m.cutoff is None else m.cutoff
        holes = [i for i, g in enumerate(run) if g is None and i < depth]
        p = reference_prior(run, other, m.cutoff, cands, prior)
        combos = list(itertools.product(range(len(cands)), repeat=len(holes)))
        w = np.array([np.prod([p[c] for c in combo]) for combo in combos])
        row, grade, judged, jrow, jgrade = [], [], [], [], []
        for a, combo in enumerate(combos):
            full = list(run)
            for i, c in zip(holes, combo):
                full[i] = cands[c]
            row += [a] * len(full)
            grade += [0.0 if g is None else g for g in full]
            judged += [g is not None for g in full]
            js = [g for g in full if g is not None] + list(other)
            jrow += [a] * len(js)
            jgrade += js
        A = len(combos)
        rk = Ranking(np.array(row, np.int64), np.array(grade, dtype=float), A, np.arange(A), np.array(judged, bool))
        jrow, jgrade = np.array(jrow, np.int64), np.array(jgrade, dtype=float)
        order = np.lexsort((-jgrade, jrow))
        v = kernel(rk, Judgements([f"a{i}" for i in range(A)], jrow[order], jgrade[order], max_grade), m, level)
        mean = float(np.dot(w, v))
        means.append(mean)
        sds.append(float(np.sqrt(max(np.dot(w, (v - mean) ** 2), 0.0))))
        m4s.append(float(np.dot(w, (v - mean) ** 4)))
    return np.array(means), np.array(sds), np.array(m4s)


def random_queries(rng, nq=4, max_holes=3):
    G = int(rng.integers(1, 4))
    out = []
    for _ in range(nq):
        run, holes = [], 0
        for _ in range(int(rng.integers(0, 7))):
            if holes < max_holes and rng.random() < 0.45:
                run.append(None)
                holes += 1
            else:
                run.append(float(rng.integers(-1 if rng.random() < 0.1 else 0, G + 1)))
        out.append((run, [float(x) for x in rng.integers(0, G + 1, size=int(rng.integers(0, 4)))]))
    return out


SAMPLES = 20000


@pytest.mark.parametrize("name", MEASURES)
@pytest.mark.parametrize("prior", ["run", "pool", "mix"])
def test_bootstrap_mean_converges_to_the_exact_expectation(name, prior):
    """The bootstrap mean of 20,000 samples lies within 5 standard errors (the exact sd / sqrt(20,000),
    from the enumeration) of the exact expectation, for every query; with no hole in the cutoff the
    sd is 0 and the values must be equal (to 1e-12)."""
    m = registry.parse(name).measure
    rng = np.random.default_rng(7000 + len(name) + len(prior))
    for trial in range(3):
        queries = random_queries(rng)
        rk, J = build(queries)
        for level in (1.0, 2.0):
            out = bootstrap(rk, J, m, level, SAMPLES, seed=11, prior=prior)
            mean, sd, m4 = exact(queries, m, J.max_grade, level, prior)
            tol = 5 * sd / np.sqrt(SAMPLES) + 1e-12
            assert np.all(np.abs(out["BS"] - mean) <= tol), (name, prior, trial, level, out["BS"], mean, sd)
            # the sample variance (from the standard error) within 6 of its standard errors of the exact
            # variance: Var(s^2) = (mu4 - sd^4) / n + 2 sd^4 / (n (n - 1))
            var = (out["se"] * np.sqrt(SAMPLES)) ** 2
            spread = np.sqrt(np.maximum(m4 - sd ** 4, 0) / SAMPLES + 2 * sd ** 4 / (SAMPLES * (SAMPLES - 1)))
            assert np.all(np.abs(var - sd ** 2) <= 6 * spread + 1e-12)
            lb, ub = hole_bounds(rk, J, m, level)
            # every sample is one closed assignment: mean and percentiles lie in [LB, UB] (a skewed
            # distribution can put the 2.5th percentile above the mean: no order between BS and BSLO)
            for k in ("BS", "BSLO", "BSHI"):
                assert np.all(lb - 1e-12 <= out[k]) and np.all(out[k] <= ub + 1e-12), k
            assert np.all(out["BSLO"] <= out["BSHI"])


def test_prior_by_hand():
    """Ranking [2, hole, 0, hole, 1] of a query with one more judged 0 unretrieved; G = 2."""
    queries = [([2.0, None, 0.0, None, 1.0], [0.0])]
    rk, J = build(queries)
    m = registry.parse("P@2").measure
    h = HoleContext(rk=rk, J=J, m=m, level=1.0)
    e = BOOT_SMOOTHING
    # run prior within the top 2: one judged document, grade 2 -> (e, e, 1) / (1 + 2e)
    np.testing.assert_allclose(grade_prior(h, "run")[0], np.array([e, e, 1.0]) / (1 + 2 * e), rtol=1e-15)
    # pool prior: judged grades 2, 0, 1, 0 -> (1/2, 1/4, 1/4), none below the floor
    np.testing.assert_allclose(grade_prior(h, "pool")[0], [0.5, 0.25, 0.25], rtol=1e-15)
    np.testing.assert_allclose(grade_prior(h, "mix")[0], (np.array([e, e, 1.0]) / (1 + 2 * e) + [0.5, 0.25, 0.25]) / 2,
                               rtol=1e-15)
    # P@2 = (1 + X) / 2, X = 1 when the hole at rank 2 is relevant (grade >= 1): under the run prior
    # Pr[X = 1] = (1 + e) / (1 + 2e), so E[P@2] = (1 + (1 + e)/(1 + 2e)) / 2 and the sd is
    # sqrt(q (1 - q)) / 2 with q = Pr[X = 1]
    q = (1 + e) / (1 + 2 * e)
    out = bootstrap(rk, J, m, 1.0, 4000, seed=3, prior="run")
    assert abs(out["BS"][0] - (1 + q) / 2) <= 5 * np.sqrt(q * (1 - q)) / 2 / np.sqrt(4000) + 1e-12
    # the pool prior: Pr[X = 1] = 1/2, E = 3/4, sd 1/4
    out = bootstrap(rk, J, m, 1.0, 4000, seed=3, prior="pool")
    assert abs(out["BS"][0] - 0.75) <= 5 * 0.25 / np.sqrt(4000)
    assert out["BSLO"][0] == 0.5 and out["BSHI"][0] == 1.0  # both outcomes are common: the 95% interval spans them


def test_no_holes_collapses_to_the_value():
    queries = [([2.0, 0.0, 1.0], [1.0]), ([0.0, 1.0], []), ([None, 1.0, 0.0, None], [2.0])]
    rk, J = build(queries)
    for name in ("nDCG@2", "AP@1", "P@1"):  # query 3's holes lie past these cutoffs
        m = registry.parse(name).measure
        plain = FAMILIES[m.family].kernel(rk, J, m, 1.0)
        cut = bootstrap(rk, J, m, 1.0, 50, seed=1)
        for k in ("BS", "BSLO", "BSHI"):
            np.testing.assert_array_equal(cut[k][:2], plain[:2])
        np.testing.assert_array_equal(cut["se"][:2], 0.0)
        if m.cutoff == 1:  # query 3's only hole in the top 1: sampled; the others' values are untouched
            assert cut["se"][2] > 0 or cut["BS"][2] in (0.0, 1.0)


def test_seeded_and_independent_of_the_other_queries():
    rng = np.random.default_rng(5)
    queries = random_queries(rng, nq=6)
    queries[3] = ([None, 1.0, None, 0.0, None], [1.0, 2.0])
    rk, J = build(queries)
    m = registry.parse("nDCG@5").measure
    a = bootstrap(rk, J, m, 1.0, 300, seed=9)
    b = bootstrap(rk, J, m, 1.0, 300, seed=9)
    c = bootstrap(rk, J, m, 1.0, 300, seed=10)
    for k in ("BS", "BSLO", "BSHI", "se"):
        np.testing.assert_array_equal(a[k], b[k])
    assert a["BS"][3] != c["BS"][3]
    # query q3 alone (same id, the qrels' largest grade as before): the same draws, the same values
    rk1, J1 = build([queries[3]], qids=["q3"], max_grade=J.max_grade)
    one = bootstrap(rk1, J1, m, 1.0, 300, seed=9)
    for k in ("BS", "BSLO", "BSHI", "se"):  # the kernels' running sums over other rows: last-bit differences
        np.testing.assert_allclose(one[k][0], a[k][3], rtol=1e-13, atol=1e-15)
    assert one["BS"][0] != c["BS"][3]


def test_batches_do_not_change_the_values(monkeypatch):
    import ulnorm_eval.core.holes as holes

    queries = [([None, 1.0, None, 0.0, None, 2.0], [1.0]), ([0.0, None], [1.0])]
    rk, J = build(queries)
    m = registry.parse("AP").measure
    whole = bootstrap(rk, J, m, 1.0, 97, seed=4)
    monkeypatch.setattr(holes, "BOOT_BATCH", 1)  # one sample per batch
    single = bootstrap(rk, J, m, 1.0, 97, seed=4)
    for k in ("BS", "BSLO", "BSHI", "se"):
        np.testing.assert_array_equal(whole[k], single[k])


def test_cli_bootstrap(tmp_path):
    qrels = tmp_path / "qrels"
    qrels.write_text("1 0 a 2\n1 0 b 0\n1 0 c 1\n2 0 a 1\n")
    run = tmp_path / "run"
    run.write_text("1 Q0 a 1 3 r\n1 Q0 x 2 2 r\n1 Q0 b 3 1 r\n2 Q0 y 1 2 r\n2 Q0 a 2 1 r\n")
    base = ["--norm", "none", "-m", "P@2", str(qrels), str(run)]
    out = command(["--holes", "--holes-samples", "400", "--seed", "2"] + base)
    assert out.returncode == 0, out.stderr
    names = [line.split("\t")[0] for line in out.stdout.splitlines()]
    assert names == ["P@2", "LB(P@2)", "UB(P@2)", "BS(P@2)", "BSLO(P@2)", "BSHI(P@2)"]
    again = command(["--holes", "--holes-samples", "400", "--seed", "2"] + base)
    assert again.stdout == out.stdout
    # named directly, with the pool prior: query 1's hole is relevant with probability 1/3 + ..., query 2's 1/2
    named = command(["--norm", "none", "-q", "--holes-prior", "pool", "-m", "BS(P@2)",
                     str(qrels), str(run)])
    assert named.returncode == 0, named.stderr
    vals = {line.split("\t")[1]: float(line.split("\t")[2]) for line in named.stdout.splitlines()}
    # P@2 = (1 + X)/2 on both queries, X: the hole at rank 2 is relevant.  Query 1's pool prior: grades
    # 2, 0, 1 -> Pr[X = 1] = 2/3; query 2's: one judged grade 1 -> (e, 1, e)/(1 + 2e) over grades 0..2
    e = BOOT_SMOOTHING
    for q, p in (("1", 2 / 3), ("2", (1 + e) / (1 + 2 * e))):
        assert abs(vals[q] - (1 + p) / 2) <= 5 * np.sqrt(p * (1 - p)) / 2 / np.sqrt(1000) + 1e-12, (q, vals[q])
    refused = command(["-m", "BS(Bpref)", str(qrels), str(run)])
    assert refused.returncode == 2 and "no hole bounds" in refused.stderr and "Traceback" not in refused.stderr


def test_judged_only_keeps_a_judged_hole(tmp_path):
    """-J removes the holes before scoring, but a hole given a grade is judged and -J keeps it (issue
    52.5): LB, UB and the bootstrap range over the whole ranking, as without -J, while the value is
    the condensed one (a, c: P@2 = 1; x judged 0 gives x, a: 0.5)."""
    qrels = tmp_path / "qrels"
    qrels.write_text("1 0 a 2\n1 0 b 0\n1 0 c 1\n")
    run = tmp_path / "run"
    run.write_text("1 Q0 x 1 4 r\n1 Q0 a 2 3 r\n1 Q0 y 3 2 r\n1 Q0 c 4 1 r\n")
    names = ["P@2", "LB(P@2)", "UB(P@2)", "BS(P@2)", "BSLO(P@2)", "BSHI(P@2)"]

    def values(*flags):
        out = command([*flags, "--norm", "none", *sum((["-m", n] for n in names), []),
                       str(qrels), str(run)])
        assert out.returncode == 0, out.stderr
        return [ln.split("\t")[2] for ln in out.stdout.splitlines()]

    judged, plain = values("-J"), values()
    assert judged[:3] == ["1.0000", "0.5000", "1.0000"] and plain[0] == "0.5000"
    assert judged[1:] == plain[1:]


def test_prior_floor_does_not_grow_with_the_largest_grade():
    """A query judged only 0 (its hole at rank 1): BS(P@5) is about the floor, 1e-4, whether the
    qrels' largest grade (another query's) is 1 or 100000 (was 0.3612 with 100000: a floor per grade
    0..G); the draws' grades are a few values, not 0..G."""
    from ulnorm_eval.core.holes import boot_grades

    m = registry.parse("P@5").measure
    got = []
    for G in (1.0, 100000.0, 2.0 ** 53):
        rk, J = build([([None, 0.0], []), ([G], [])])
        assert len(boot_grades(J)) == 2  # 0 and G
        h = HoleContext(rk=rk, J=J, m=m, level=1.0)
        p = grade_prior(h, "run")[0]
        np.testing.assert_allclose(p, [1 / (1 + BOOT_SMOOTHING), BOOT_SMOOTHING / (1 + BOOT_SMOOTHING)], rtol=1e-15)
        got.append(bootstrap(rk, J, m, 1.0, 200, seed=1)["BS"][0])
    assert got[0] == got[1] == got[2]
    assert got[0] <= 1 / 5  # at most one hole relevant, and almost never


def test_holes_note_names_each_family_once():
    from ulnorm_eval.pipeline.evaluate import holes_note

    note = holes_note(["all_trec"])
    assert note.count("IPrec") == 1 and note.count("RprecMult") == 1
    assert note.count("no exact extremes derived for this measure") == 1
    assert holes_note(["AP", "Bpref", "IPrec@0.1", "IPrec@0.2"]) == \
        "--holes: no hole bounds for Bpref, IPrec: no exact extremes derived for this measure"


def test_streamed_and_whole_agree_to_the_last_bits(tmp_path):
    """docs/holes.md: the draws do not depend on the blocking; the values agree up to the last bit or
    two (the kernels' running sums span the rows evaluated together).  256-byte blocks force many."""
    from ulnorm_eval.pipeline import evaluate as api
    from ulnorm_eval.pipeline.orchestrator import evaluate_runs

    rng = np.random.default_rng(12)
    run = tmp_path / "run"
    run.write_text("".join(f"q{q:02d} Q0 d{q}_{r} {r + 1} {20 - r}.{int(rng.integers(0, 99))} run\n"
                           for q in range(30) for r in range(8)))
    qrels = tmp_path / "qrels"
    qrels.write_text("".join(f"q{q:02d} 0 d{q}_{r} {int(rng.integers(0, 3))}\n" for q in range(30)
                             for r in range(8) if rng.random() < 0.5) + "q00 0 zz 2\n")
    q = api.load_qrels(str(qrels))
    metrics = api.resolve_metrics(["BS(nDCG@5)", "BS(AP)", "BSLO(AP)", "BSHI(nDCG@5)"], [])
    opts = api.Options(holes_samples=50)
    (streamed,) = evaluate_runs(q, [str(run)], metrics, opts, stream=True, block_bytes=256)
    (whole,) = evaluate_runs(q, [str(run)], metrics, opts, stream=False)
    assert streamed.qids == whole.qids
    for m in metrics:
        np.testing.assert_allclose(streamed.values[m], whole.values[m], rtol=1e-13, atol=1e-15, err_msg=str(m))
        assert streamed.values[m].std() > 0  # the holes move the values: not a vacuous comparison
