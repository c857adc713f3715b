"""The analyses of Karmaker & Feng 2022 as the paper runs them: swap rates between two experiments,
the uninformative-vs-ideal partition, PAD over k = 5..30, the uncorrected t-test, AP@k = SP@k/k.

Oracles: hand-worked cases, brute force over every ordering, the query subsets computed separately
(``subset=``) with the discordant pairs counted by hand, and scipy's paired t-test.
"""
from __future__ import annotations

import ulnorm_eval
import glob
import itertools
import json

import numpy as np
import pytest
import scipy.stats as sps
from click.testing import CliRunner

from ulnorm_eval.analysis import stats
from ulnorm_eval.analysis.compare import compare_files, swap_between_comparisons
from ulnorm_eval.cli.main import main
from ulnorm_eval.pipeline import evaluate as api

from conftest import ROOT

QRELS = str(ROOT / "examples/qrels/dlhard-passage.qrels.txt")
RUNS = [str(ROOT / "examples/runs" / f) for f in ("bm25.run.gz", "bm25_bert_zs.run.gz", "bm25_rm3.run.gz")]


# --------------------------------------------------------------------------- swap rate between two experiments

def test_swap_rate_between_by_hand():
    a = [0.30, 0.20, 0.10, 0.40]
    b = [0.10, 0.20, 0.30, 0.40]  # pairs (0,1), (0,2), (1,2) reversed; the three with system 3 kept
    assert stats.swap_rate_between(a, b) == (0.5, 3, 6)
    assert stats.swap_rate_between(a, a) == (0.0, 0, 6)
    # a tie in either experiment is not a swap
    assert stats.swap_rate_between([0.1, 0.1, 0.3], [0.3, 0.2, 0.1]) == (2 / 3, 2, 3)
    with pytest.raises(ValueError):
        stats.swap_rate_between([0.1, 0.2], [0.1])


def test_swap_rate_between_is_the_discordant_share_brute_force():
    """Over every ordering of 5 systems against a fixed one: swaps = discordant pairs = (1 - tau)/2 * 10."""
    base = np.arange(5, dtype=float)
    for perm in itertools.permutations(range(5)):
        other = base[list(perm)]
        rate, swaps, pairs = stats.swap_rate_between(base, other)
        disc = sum((base[i] - base[j]) * (other[i] - other[j]) < 0 for i, j in itertools.combinations(range(5), 2))
        assert swaps == disc and pairs == 10 and rate == disc / 10
        assert rate == pytest.approx((1 - sps.kendalltau(base, other).statistic) / 2)


def test_karmaker_feng_swap_rates_are_shares_of_28_pairs():
    """Every swap rate printed in Tables 10, 11, 20 and 21 (8 methods: 28 pairs) is s/28 for some s,
    truncated to the printed digits: the quantity is the share of pairs two experiments order oppositely."""
    printed = [0.107, 0.42, 0.35, 0.21, 0.25, 0.5, 0.357, 0.2857, 0.321, 0.178, 0.1428, 0.3928, 0.1071]
    for value in printed:
        digits = len(str(value).split(".")[1])
        hits = [s for s in range(29) if int(s / 28 * 10 ** digits + 1e-9) == round(value * 10 ** digits)]
        assert hits, value
        s = hits[0]
        # an 8-system pair of rankings with exactly s swaps gives s/28
        a = np.arange(8.0)
        order = list(range(8))
        swaps = 0
        while swaps < s:  # bubble adjacent transpositions: each adds one inversion
            for i in range(7):
                if swaps < s and order[i] < order[i + 1]:
                    order[i], order[i + 1] = order[i + 1], order[i]
                    swaps += 1
        rate, swaps, pairs = stats.swap_rate_between(a, a[order])
        assert (swaps, pairs) == (s, 28) and int(rate * 10 ** digits + 1e-9) == round(value * 10 ** digits)


@pytest.fixture(scope="module")
def robust17(shared):
    d = shared / "robust03"
    return str(d / "qrels.txt"), sorted(glob.glob(str(d / "runs" / "*")))


def test_swap_between_uninformative_and_ideal_on_robust03(robust17):
    """The uninformative and the ideal half of the 100 Robust 2003 topics: the pairs of the 17 runs the
    two order oppositely, against the two subsets compared separately (docs/robust03-analysis.md)."""
    qrels, runs = robust17
    # the judged pool, as docs/robust03-analysis.md's commands (--pool qrels)
    kw = dict(measures=["nDCG@10", "AP"], variants=["UL1", "UL2"], subset_size=50, correction="none",
              options=api.Options(pool="qrels"))
    both = compare_files(qrels, runs, swap_between=("uninformative", "ideal"), **kw)
    u = compare_files(qrels, runs, subset="uninformative", **kw).systems
    i = compare_files(qrels, runs, subset="ideal", **kw).systems
    s = both.summary.set_index("metric")
    want = {}
    for m in u.metric.unique():
        a, b = u[u.metric == m]["mean"].to_numpy(), i[i.metric == m]["mean"].to_numpy()
        x, y = np.triu_indices(len(a), 1)
        want[m] = int(np.sum((a[x] - a[y]) * (b[x] - b[y]) < 0))
        assert s.loc[m, "swaps_between"] == want[m]
        assert s.loc[m, "swap_between"] == want[m] / 136
        assert s.loc[m, "queries_a"] == 50 and s.loc[m, "queries_b"] == 50
    assert want == {"nDCG@10": 43, "UL1(nDCG@10)": 43, "UL2(nDCG@10)": 42, "AP": 19, "UL1(AP)": 19, "UL2(AP)": 21}
    # the same swaps through query-id files (the ideal subset listed by id), on the command line
    assert both.meta["swap_between"] == ["uninformative", "ideal"]


def test_swap_between_listed_query_sets_equal_named_ones(tmp_path):
    kw = dict(measures=["nDCG@10"], variants=["UL2"], subset_size=20)
    ideal = compare_files(QRELS, RUNS, subset="ideal", **kw)
    unin = compare_files(QRELS, RUNS, subset="uninformative", **kw)
    qi, qu = ideal.queries["nDCG@10"], unin.queries["nDCG@10"]
    named = compare_files(QRELS, RUNS, swap_between=("uninformative", "ideal"), **kw).summary
    listed = compare_files(QRELS, RUNS, swap_between=(qu, qi), **kw).summary
    assert list(named["swap_between"]) == list(listed["swap_between"])
    fa, fb = tmp_path / "u.txt", tmp_path / "i.txt"
    fa.write_text("\n".join(map(str, qu)) + "\n\n")
    fb.write_text("\n".join(map(str, qi)) + "\n" + str(qi[0]) + "\n")  # one repeat: counted once, noted
    r = CliRunner().invoke(main, ["compare", "-f", "json", "-m", "nDCG@10", "--norm", "ul2", "--subset-size", "20",
                                  "--table", "summary", "--swap-between", str(fa), str(fb), QRELS, *RUNS])
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)["summary"]
    assert [x["swap_between"] for x in rows] == list(named["swap_between"])
    assert "1 repeated query ids counted once" in r.stderr
    bad = tmp_path / "bad.txt"
    bad.write_text("q1\nq2 0 doc 1\n")
    r = CliRunner().invoke(main, ["compare", "-m", "nDCG@10", "--swap-between", str(bad), "ideal", QRELS, *RUNS])
    assert r.exit_code == 2 and f"{bad}:2: expected one query id per line" in r.stderr
    unknown = tmp_path / "unknown.txt"
    unknown.write_text("no-such-query\n")
    r = CliRunner().invoke(main, ["compare", "-m", "nDCG@10", "--swap-between", str(unknown), "all", QRELS, *RUNS])
    assert r.exit_code == 2 and "not among the 50 compared (first: no-such-query)" in r.stderr


def test_swaps_command_between_two_systems_tables(tmp_path):
    """Two datasets' systems tables (here: two query halves written by compare) -> the swap rate per metric,
    equal to swap_between_comparisons on the two Comparisons; tsv and json read alike."""
    kw = dict(measures=["nDCG@10", "AP"], variants=["UL2"], subset_size=25)
    a = compare_files(QRELS, RUNS, subset="uninformative", **kw)
    b = compare_files(QRELS, RUNS, subset="ideal", **kw)
    want = swap_between_comparisons(a, b)
    ta, tb = tmp_path / "a.tsv", tmp_path / "b.json"
    for path, sub, fmt in ((ta, "uninformative", "tsv"), (tb, "ideal", "json")):
        r = CliRunner().invoke(main, ["compare", "-f", fmt, "-m", "nDCG@10", "-m", "AP", "--norm", "ul2", "--subset",
                                      sub, "--subset-size", "25", "--table", "systems", "-o", str(path), QRELS, *RUNS])
        assert r.exit_code == 0, r.output
    r = CliRunner().invoke(main, ["swaps", "-f", "json", str(ta), str(tb)])
    assert r.exit_code == 0, r.output
    got = json.loads(r.stdout)["swaps"]
    assert [x["metric"] for x in got] == list(want["metric"])
    assert [x["swaps"] for x in got] == list(want["swaps"]) and all(x["pairs"] == 3 for x in got)
    # by hand from the two systems tables
    for x in got:
        sa = a.systems[a.systems.metric == x["metric"]].set_index("run")["mean"]
        sb = b.systems[b.systems.metric == x["metric"]].set_index("run")["mean"]
        runs = sorted(sa.index)
        disc = sum((sa[p] - sa[q]) * (sb[p] - sb[q]) < 0 for p, q in itertools.combinations(runs, 2))
        assert x["swaps"] == disc and x["swap_rate"] == disc / 3
    bad = tmp_path / "bad.tsv"
    bad.write_text("run\tmetric\tmean\trank\nr1\tnDCG@10\tabc\t1\n")
    r = CliRunner().invoke(main, ["swaps", str(bad), str(ta)])
    assert r.exit_code == 2 and f"{bad}:2: mean 'abc' is not a number" in r.stderr and r.stdout == ""
    other = tmp_path / "other.tsv"
    other.write_text("run\tmetric\tmean\trank\nx\tnDCG@10\t0.1\t1\ny\tnDCG@10\t0.2\t2\nz\tnDCG@10\t0.3\t3\n")
    r = CliRunner().invoke(main, ["swaps", str(other), str(ta)])
    assert r.exit_code == 2 and "compare different runs" in r.stderr


# --------------------------------------------------------------------------- PAD over k, significance

def test_pad_over_cutoffs_averages_each_runs_means_first():
    cmp = compare_files(QRELS, RUNS, measures=["nDCG@5", "nDCG@10", "nDCG@15", "nDCG@20", "nDCG@30", "AP"],
                        variants=["UL2"])
    s = cmp.summary.set_index("metric")
    sysm = cmp.systems
    for variant in ("", "UL2"):
        names = [f"{variant}(nDCG@{k})" if variant else f"nDCG@{k}" for k in (5, 10, 15, 20, 30)]
        avg = np.mean([sysm[sysm.metric == n]["mean"].to_numpy() for n in names], axis=0)
        i, j = np.triu_indices(3, 1)
        want = np.mean(np.abs(avg[i] - avg[j]) / np.maximum(np.abs(avg[i]), np.abs(avg[j]))) * 100
        for n in names:
            assert s.loc[n, "pad_k"] == pytest.approx(want, rel=1e-12)
            assert s.loc[n, "cutoffs_k"] == "5,10,15,20,30"
    assert np.isnan(s.loc["AP", "pad_k"]) and s.loc["AP", "cutoffs_k"] == ""
    # one cutoff per measure: no pad_k column at all
    assert "pad_k" not in compare_files(QRELS, RUNS, measures=["nDCG@10"], variants=["UL2"]).summary


def test_papers_significance_setting_is_correction_none():
    """Student's paired t-test at 0.05 without correction: significant iff scipy's p < 0.05; the table
    says which correction it used."""
    cmp = compare_files(QRELS, RUNS, measures=["nDCG@10"], variants=[], correction="none")
    res = ulnorm_eval.evaluate(QRELS, RUNS, ["nDCG@10"])
    vals = [np.asarray(rr.values[res.metrics[0]]) for rr in res.runs]
    pairs = cmp.pairs
    for (x, y), row in zip(itertools.combinations(range(3), 2), pairs.itertuples()):
        p = sps.ttest_rel(vals[x], vals[y]).pvalue
        assert row.p == pytest.approx(p, rel=1e-9) and row.p_adj == row.p and row.significant == (p < 0.05)
    r = CliRunner().invoke(main, ["compare", "-f", "markdown", "-m", "nDCG@10", "--norm", "ul2",
                                  "--correction", "none", QRELS, *RUNS])
    assert r.exit_code == 0 and "no correction for multiple comparisons" in r.stdout
    r = CliRunner().invoke(main, ["compare", "-f", "markdown", "-m", "nDCG@10", "--norm", "ul2", QRELS, *RUNS])
    assert "Holm correction" in r.stdout


# --------------------------------------------------------------------------- AP@k = SP@k / k

def test_ap_norm_k_by_hand_and_variants_unchanged():
    """Relevant at ranks 1 and 3 of the top 4: SP@4 = 1 + 2/3; AP(norm='k')@4 = (5/3)/4, AP@4 = (5/3)/R."""
    from ulnorm_eval.inputs.in_memory import qrels_from_object, run_from_object

    qrels = qrels_from_object({"q": {"a": 1, "b": 0, "c": 1, "d": 0, "e": 1}})
    run = run_from_object({"q": {"a": 5, "b": 4, "c": 3, "d": 2, "e": 1}})
    res = ulnorm_eval.evaluate(qrels, [run], ["AP(norm='k')@4", "AP@4", "E(AP(norm='k')@4)", "IUB(AP(norm='k')@4)"],
                               pool="qrels")  # the pool: the 5 judged documents, the run's
    v = {str(m): res.runs[0].values[m][0] for m in res.metrics}
    assert v["AP(norm='k')@4"] == pytest.approx((1 + 2 / 3) / 4, abs=1e-15)
    assert v["AP@4"] == pytest.approx((1 + 2 / 3) / 3, abs=1e-15)
    # E by brute force over the 5!/(3!2!) = 10 relevance patterns of the pool; IUB: relevant at 1..3
    sps_ = []
    for pos in itertools.combinations(range(5), 3):
        rel = [i in pos for i in range(5)][:4]
        hits, sp = 0, 0.0
        for i, r in enumerate(rel, 1):
            if r:
                hits += 1
                sp += hits / i
        sps_.append(sp)
    assert v["E(AP(norm='k')@4)"] == pytest.approx(np.mean(sps_) / 4, abs=1e-15)
    assert v["IUB(AP(norm='k')@4)"] == pytest.approx(3 / 4, abs=1e-15)
    # UL1, UL2 (ratios of differences against one per-query factor) agree under both denominators
    res = ulnorm_eval.evaluate(QRELS, RUNS[:1], ["UL1(AP(norm='k')@10)", "UL1(AP@10)", "UL2(AP(norm='k')@10)", "UL2(AP@10)"])
    x = [np.asarray(res.runs[0].values[m]) for m in res.metrics]
    np.testing.assert_allclose(x[0], x[1], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(x[2], x[3], rtol=1e-12, atol=1e-15)
    r = CliRunner().invoke(main, ["-m", "AP(norm='k')", QRELS, RUNS[0]])
    assert r.exit_code == 2 and "give a cutoff" in r.stderr
