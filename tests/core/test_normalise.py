"""Normalisations: hand-computed values, ranges and fixed points (hypothesis), undefined cases, and
scale invariance on the bundled DL-HARD runs."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ulnorm_eval.core import expectations as bounds

from ulnorm_eval.core import normalise

from ulnorm_eval.core import registry

NORMALISERS = {v.name: v.normalise for v in registry.VARIANTS.values() if v.kind == "ratio"}
from ulnorm_eval.core.kernels import Judgements, Ranking
from ulnorm_eval.core.measures import compute

from conftest import ROOT

EPS = 1e-12
EXAMPLES = ROOT / "examples"


def arr(*xs):
    return [np.asarray([x], dtype=np.float64) for x in xs]


# --------------------------------------------------------------------------- hand-computed values

def test_formulas_by_hand():
    A, I, E, W = arr(0.6, 1.0, 0.4, 0.1)
    assert normalise.ul1(A, I, E)[0][0] == pytest.approx(0.6 * 0.6 / 1.0)  # (A/I)(A/(A+E))
    assert normalise.ul2(A, I, E)[0][0] == pytest.approx(0.2 / 0.6)
    assert normalise.mm(A, I, E, W)[0][0] == pytest.approx(0.5 / 0.9)
    assert normalise.eb(A, I, E)[0][0] == pytest.approx(1.5)
    assert normalise.em(A, I, E)[0][0] == pytest.approx(0.2 / 0.6)
    assert normalise.uew(A, I, E, W)[0][0] == pytest.approx(0.2 / 0.6)
    A, I, E, W = arr(0.25, 1.0, 0.4, 0.1)  # below the expectation: the branches differ
    assert normalise.ul2(A, I, E)[0][0] == pytest.approx(-0.15 / 0.4)
    assert normalise.em(A, I, E)[0][0] == pytest.approx(-0.15 / 0.6)
    assert normalise.uew(A, I, E, W)[0][0] == pytest.approx(-0.15 / 0.3)


def test_undefined_cases():
    # I = E (= W): every ranking scores alike -> undefined for every variant
    A, I, E, W = arr(0.5, 0.5, 0.5, 0.5)
    for name, f in NORMALISERS.items():
        val, und = f(A, I, E, W)
        assert und[0] and np.isnan(val[0]), name
    # a query without relevant documents: all zero
    A, I, E, W = arr(0.0, 0.0, 0.0, 0.0)
    for name, f in NORMALISERS.items():
        assert f(A, I, E, W)[1][0], name
    # float noise in a closed-form E does not make a query informative
    A, I, E, W = arr(0.3, 0.3, 0.3 * (1 + 1e-15), 0.3)
    assert normalise.ul2(A, I, E)[1][0]
    # defined: a small but real gap
    A, I, E, W = arr(0.3, 0.3, 0.29, 0.2)
    for name, f in NORMALISERS.items():
        assert not f(A, I, E, W)[1][0], name
    # the mask is per query
    val, und = normalise.ul2(np.array([1.0, 0.5]), np.array([1.0, 0.5]), np.array([0.5, 0.5]))
    assert list(und) == [False, True] and val[0] == 1.0


def test_ul2_at_a_equal_to_e_takes_the_upper_branch(write):
    """UL2 and UEW use the upper branch when A >= E (Karmaker & Feng 2022 eq. 6).  At A = E > 0 both
    branches give 0; they differ only at A = E = 0, where the lower branch divides by E = 0.  That
    happens under --expectation paper on a query without relevant documents: E[SP@k] = k(P/n)^2 = 0
    and IUB = k, so UL2 = 0/k = 0 is defined, and --undefined skip must keep the query.

    q1: d1, d2 relevant among 4, ranked d1 d3 d2 d4: SP@4 = 1 + 2/3 = 5/3, E = 4 (2/4)^2 = 1, IUB = 4,
    UL2 = UEW = (5/3 - 1)/(4 - 1) = 2/9.  q2: 4 judged documents, none relevant: A = E = 0, UL2 = 0.
    """
    from click.testing import CliRunner

    from ulnorm_eval.cli.main import main

    qrels = write("qrels", "".join(f"q1 0 d{i} {int(i <= 2)}\n" for i in range(1, 5))
                  + "".join(f"q2 0 e{i} 0\n" for i in range(1, 5)))
    run = write("run", "q1 Q0 d1 1 4 r\nq1 Q0 d3 2 3 r\nq1 Q0 d2 3 2 r\nq1 Q0 d4 4 1 r\nq2 Q0 e1 1 4 r\nq2 Q0 e2 2 3 r\n")
    res = CliRunner().invoke(main, ["-q", "-f", "tsv", "-m", "SP@4", "--norm", "e,iub,ul2,uew", "--expectation", "paper",
                                    "--undefined", "skip", "--precision", "17", "--pool", "qrels",
                                    qrels, run])
    assert res.exit_code == 0, res.output
    rows = {tuple(x.split("\t")[1:2]) + (h,): float(v) for x in res.stdout.splitlines()[1:]
            for h, v in zip(res.stdout.splitlines()[0].split("\t")[2:], x.split("\t")[2:])}
    assert rows[("q2", "E(SP@4)")] == 0.0 and rows[("q2", "IUB(SP@4)")] == 4.0
    for v in ("UL2(SP@4)", "UEW(SP@4)"):
        assert rows[("q1", v)] == pytest.approx(2 / 9, rel=1e-15)
        assert rows[("q2", v)] == 0.0
        assert rows[("all", v)] == pytest.approx(1 / 9, rel=1e-15)  # both queries, not 2/9 over q1 alone
    assert "undefined" not in res.stderr
    # EB = A/E is undefined at E = 0 even though I > E there: q2 is left out of its mean (5/3 over q1)
    res = CliRunner().invoke(main, ["-q", "-f", "tsv", "-m", "SP@4", "--norm", "eb", "--expectation", "paper",
                                    "--undefined", "skip", "--precision", "17", "--pool", "qrels",
                                    qrels, run])
    assert res.exit_code == 0, res.output
    eb = {x.split("\t")[1]: float(x.split("\t")[3]) for x in res.stdout.splitlines()[1:]}
    assert eb["q1"] == pytest.approx(5 / 3, rel=1e-15) and np.isnan(eb["q2"]) and eb["all"] == pytest.approx(5 / 3)
    assert "undefined values: EB of SP@4 for 1 query (left out per query and of the 'all' row: --undefined skip)" in res.stderr
    val, und = normalise.eb(*arr(0.0, 4.0, 0.0, 0.0))
    assert und[0] and np.isnan(val[0])
    # the array functions at A = E: 0 whenever I > E, including E = 0
    for f in (normalise.ul2, normalise.uew):
        val, und = f(*arr(0.0, 4.0, 0.0, 0.0))
        assert val[0] == 0.0 and not und[0]
        val, und = f(*arr(0.5, 1.0, 0.5, 0.0))
        assert val[0] == 0.0 and not und[0]


def test_every_ranking_alike_is_undefined_even_when_the_paper_e_differs(write):
    """Undefined means I = E *or* I = W (every ranking of the pool scores alike).  Under --expectation
    paper E[DCG@k] is summed to k past the pool's end, so on a pool of 2 documents of grade 1 and k = 4,
    I = W = 1 + 1/log2(3) while E = 1 + 1/log2(3) + 1/2 + 1/log2(5): I != E, yet no ranking can be told
    from another, and UL2 must be undefined (not (A - E)/E < 0)."""
    from click.testing import CliRunner

    from ulnorm_eval.cli.main import main

    qrels = write("qrels", "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 0\nq2 0 e1 1\nq2 0 e2 1\n")
    run = write("run", "q1 Q0 d1 1 3 r\nq1 Q0 d2 2 2 r\nq1 Q0 d3 3 1 r\nq2 Q0 e1 1 2 r\nq2 Q0 e2 2 1 r\n")
    res = CliRunner().invoke(main, ["-q", "-f", "tsv", "-m", "DCG@4", "--norm", "e,iub,wlb,ul2", "--expectation", "paper",
                                    "--undefined", "skip", "--precision", "17", "--pool", "qrels", qrels, run])
    assert res.exit_code == 0, res.output
    head = res.stdout.splitlines()[0].split("\t")
    rows = {x.split("\t")[1]: dict(zip(head[2:], map(float, x.split("\t")[2:]))) for x in res.stdout.splitlines()[1:]}
    d2 = 1 + 1 / np.log2(3)
    q2 = rows["q2"]
    assert q2["IUB(DCG@4)"] == pytest.approx(d2) and q2["WLB(DCG@4)"] == pytest.approx(d2)
    assert q2["E(DCG@4)"] == pytest.approx(d2 + 1 / 2 + 1 / np.log2(5))
    assert np.isnan(q2["UL2(DCG@4)"])
    assert "undefined values: UL2 of DCG@4 for 1 query (left out per query and of the 'all' row: --undefined skip)" in res.stderr
    assert rows["all"]["UL2(DCG@4)"] == rows["q1"]["UL2(DCG@4)"]  # the means of q1 alone: the same
    # the mean of per-query values leaves q2 out too
    res = CliRunner().invoke(main, ["-q", "-f", "tsv", "-m", "DCG@4", "--norm", "ul2", "--expectation", "paper",
                                    "--undefined", "skip", "--pool", "qrels", qrels, run])
    assert res.stdout.splitlines()[-1].split("\t")[-1] == res.stdout.splitlines()[1].split("\t")[-1]


# --------------------------------------------------------------------------- properties on bounds

@st.composite
def bounded(draw):
    """W <= E <= I and W <= A <= I, with genuine gaps (I > E unless all equal)."""
    vals = sorted(draw(st.lists(st.floats(0, 100, allow_nan=False), min_size=3, max_size=3)))
    W, E, I = vals
    assume(I - E > 1e-6 and E - W > 1e-6)
    A = draw(st.floats(W, I))
    return arr(A, I, E, W)


@given(bounded())
@settings(max_examples=300, deadline=None)
def test_ranges(abc):
    A, I, E, W = abc
    ul1, und = normalise.ul1(A, I, E, W)
    assert not und[0] and -EPS <= ul1[0] <= 1 + EPS
    assert -1 - EPS <= normalise.ul2(A, I, E, W)[0][0] <= 1 + EPS
    assert -1 - EPS <= normalise.uew(A, I, E, W)[0][0] <= 1 + EPS
    assert -EPS <= normalise.mm(A, I, E, W)[0][0] <= 1 + EPS
    assert normalise.em(A, I, E, W)[0][0] <= 1 + EPS
    assert normalise.eb(A, I, E, W)[0][0] >= 0


@given(bounded())
@settings(max_examples=100, deadline=None)
def test_fixed_points(abc):
    _, I, E, W = abc
    for f in (normalise.ul2, normalise.mm, normalise.em, normalise.uew):
        assert f(I, I, E, W)[0][0] == pytest.approx(1.0, abs=1e-9)
    assert normalise.ul2(E, I, E, W)[0][0] == 0 and normalise.em(E, I, E, W)[0][0] == 0
    assert normalise.uew(E, I, E, W)[0][0] == 0
    assert normalise.uew(W, I, E, W)[0][0] == pytest.approx(-1.0, abs=1e-9)
    assert normalise.mm(W, I, E, W)[0][0] == pytest.approx(0.0, abs=1e-9)
    assert normalise.ul2(np.zeros(1), I, E, W)[0][0] == pytest.approx(-1.0)


# --------------------------------------------------------------------------- properties on real rankings

MEASURES = ["nDCG@3", "nDCG", "AP", "AP@2", "SP@4", "RR", "P@3", "R@2", "Rprec", "RBP(p=0.8)", "DCG(dcg='exp-log2')@5"]


def one_query(grades):
    g = np.sort(np.asarray(grades, dtype=np.float64))[::-1]
    J = Judgements(["q"], np.zeros(len(g), np.int64), g, float(max(g.max(), 0)))
    return J, bounds.make_pool("qrels", None, J)


def score(J, perms, meas):
    perms = np.asarray(perms, dtype=np.float64).reshape(len(perms), -1)
    rk = Ranking(np.repeat(np.arange(len(perms)), perms.shape[1]), perms.ravel(), len(perms),
                 np.zeros(len(perms), np.int64))
    return compute(rk, J, meas, 1)


@given(st.lists(st.integers(0, 3), min_size=1, max_size=6), st.sampled_from(MEASURES), st.randoms())
@settings(max_examples=150, deadline=None)
def test_variants_of_rankings_of_the_pool(grades, name, rnd):
    J, pool = one_query(grades)
    meas = registry.parse(name).measure
    E, I, W = (f(pool, J, meas, 1) for f in (bounds.expectation, bounds.ideal, bounds.worst))
    perm = list(grades)
    rnd.shuffle(perm)
    A = score(J, [perm], meas)
    if normalise.undefined_mask(I, E, W)[0]:
        assert I[0] == pytest.approx(W[0], abs=1e-12)  # uninformative means every ranking ties
        return
    assert -EPS <= normalise.ul1(A, I, E, W)[0][0] <= 1 + EPS
    assert -1 - EPS <= normalise.ul2(A, I, E, W)[0][0] <= 1 + EPS
    assert -1 - EPS <= normalise.uew(A, I, E, W)[0][0] <= 1 + EPS
    assert -EPS <= normalise.mm(A, I, E, W)[0][0] <= 1 + EPS
    # the ideal ranking of the pool scores 1; the worst -1 on UEW and 0 on MM
    ideal = sorted(grades, reverse=True)
    worst = sorted(grades)
    for f in (normalise.ul2, normalise.mm, normalise.em, normalise.uew):
        assert f(score(J, [ideal], meas), I, E, W)[0][0] == pytest.approx(1.0, abs=1e-9), f.__name__
    assert normalise.uew(score(J, [worst], meas), I, E, W)[0][0] == pytest.approx(-1.0, abs=1e-9)
    assert normalise.mm(score(J, [worst], meas), I, E, W)[0][0] == pytest.approx(0.0, abs=1e-9)
    # random average: over all permutations the mean of A - E (UL2's numerator) and of EM is 0
    every = score(J, list(itertools.permutations(grades)), meas)
    assert np.mean(every - E[0]) == pytest.approx(0.0, abs=1e-12)
    ems, _ = normalise.em(every, np.full_like(every, I[0]), np.full_like(every, E[0]))
    assert np.mean(ems) == pytest.approx(0.0, abs=1e-12)


# --------------------------------------------------------------------------- scale invariance

@pytest.fixture(scope="module")
def dlhard_frame():
    from ulnorm_eval import evaluate

    res = evaluate(str(EXAMPLES / "qrels" / "dlhard-passage.qrels.txt"),
                   [str(EXAMPLES / "runs" / "bm25.run.gz"), str(EXAMPLES / "runs" / "bm25_bert_zs.run.gz")],
                   measures=["SP@10", "AP@10", "DCG@10", "nDCG@10", "SP", "AP"],
                   variants=["UL1", "UL2", "EM", "MM", "UEW", "DB"], undefined="skip", permutations=500)
    return res.frame


@pytest.mark.parametrize("variant", ["UL1", "UL2", "EM", "MM", "UEW", "DB"])
@pytest.mark.parametrize("pair", [("SP@10", "AP@10"), ("DCG@10", "nDCG@10"), ("SP", "AP")])
def test_scale_invariance_on_real_runs(dlhard_frame, variant, pair):
    """AP@k = SP@k / R and nDCG@k = DCG@k / IDCG@k: a per-query factor the variants cancel, so
    UL2(SP@k) = UL2(AP@k) and UL2(DCG@k) = UL2(nDCG@k) (Karmaker & Feng 2022 §4.5, MSP^UL = AP^UL)."""
    a = dlhard_frame[f"{variant}({pair[0]})"].to_numpy()
    b = dlhard_frame[f"{variant}({pair[1]})"].to_numpy()
    assert np.array_equal(np.isnan(a), np.isnan(b))
    ok = ~np.isnan(a)
    assert ok.sum() > 60
    assert a[ok] == pytest.approx(b[ok], rel=1e-9, abs=1e-12)
    if variant != "DB":
        assert np.std(a[ok]) > 0.05  # real, varied values, not a degenerate constant


def test_eb_scale_invariance():
    """EB = A/E is scale-invariant as well: EB(DCG@10) = EB(nDCG@10)."""
    from ulnorm_eval import evaluate

    res = evaluate(str(EXAMPLES / "qrels" / "dlhard-passage.qrels.txt"), str(EXAMPLES / "runs" / "bm25.run.gz"),
                   measures=["DCG@10", "nDCG@10"], variants=["EB"], undefined="skip")
    f = res.frame
    a, b = f["EB(DCG@10)"].to_numpy(), f["EB(nDCG@10)"].to_numpy()
    ok = ~np.isnan(a)
    assert a[ok] == pytest.approx(b[ok], rel=1e-9)
