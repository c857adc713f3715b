"""`compare` and `queries`: tables checked against independent computations.

Oracles: scipy (ttest_rel, kendalltau), brute-force sign-flip enumeration, hand-worked subsets and
query types, and E[nDCG@10] recomputed from the Robust 2003 qrels with pandas (Karmaker & Feng 2022 eq. 7
with trec_eval's linear gain).
"""
from __future__ import annotations

import ulnorm_eval
import itertools
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.stats as sps
from click.testing import CliRunner

from ulnorm_eval.pipeline.blocks import Options

from ulnorm_eval.pipeline import evaluate as api

from ulnorm_eval.analysis import stats
from ulnorm_eval.cli.main import main
from ulnorm_eval.analysis.compare import compare, compare_files
from ulnorm_eval.analysis.query_types import Thresholds, classify, query_table, select_subset

from conftest import ROOT

ROBUST_RUNS = ["input.pircRBa1", "input.THUIRr0301", "input.NLPR03vb10", "input.humR03dc", "input.SABIR03BASE"]


# --------------------------------------------------------------------------- hand-worked

def test_select_subset_by_hand():
    A = np.array([0.5, 0.1, 0.9, 0.3, np.nan])
    E = np.array([0.1, 0.1, 0.1, 0.3, 0.2])
    Ii = np.ones(5)
    # gaps 0.4, 0.0, 0.8, 0.0, (none)
    assert list(select_subset(A, E, Ii, "uninformative", 2)) == [1, 3]
    assert list(select_subset(A, E, Ii, "ideal", 2)) == [0, 2]
    assert list(select_subset(A, E, Ii, "ideal", 1)) == [2]
    assert list(select_subset(A, E, Ii, "all")) == [0, 1, 2, 3, 4]
    # the gap is measured relative to IUB: 0.5 of 2.0 is a gap of 0.2
    assert list(select_subset(A, E, np.array([2.0, 1, 1, 1, 1]), "uninformative", 3)) == [0, 1, 3]
    with pytest.raises(ValueError):
        select_subset(A, E, Ii, "ideal", 5)  # only 4 queries have a score


def test_classify_by_hand():
    t = Thresholds(informative_gap=0.2, ideal_gap=0.5, hard_below=0.1, easy_above=0.5)
    A = np.array([0.9, 0.45, 0.05, 0.7, 0.3, 0.0, 0.02, np.nan, 4.0])
    E = np.array([0.1, 0.1, 0.04, 0.6, 0.25, 0.0, 0.3, 0.1, 1.0])
    Ii = np.array([1, 1, 1, 1, 1, 0, 1, 1, 5.0])
    assert list(classify(A, E, Ii, t)) == [
        "ideal", "informative", "hard", "easy", "uninformative",
        "hard",  # nothing relevant in the pool: IUB = 0
        "uninformative",  # the runs do worse than random
        "",  # no runs
        "ideal",  # 4/5 - 1/5 = 0.6 on the IUB scale
    ]
    with pytest.raises(ValueError):
        Thresholds(informative_gap=0.6, ideal_gap=0.5)


# --------------------------------------------------------------------------- tiny synthetic data

QRELS = "".join(f"q{q} 0 d{d} {g}\n" for q, grades in enumerate(
    [[2, 1, 0, 0], [1, 0, 0, 1], [0, 2, 1, 0], [1, 1, 0, 0], [2, 0, 0, 0], [0, 0, 1, 1]]) for d, g in enumerate(grades))


def _run(order_per_query, tag):
    return "".join(f"q{q} Q0 d{d} {r + 1} {10 - r} {tag}\n" for q, order in enumerate(order_per_query)
                   for r, d in enumerate(order))


RUNS = {
    "good": _run([[0, 1, 2, 3], [0, 3, 1, 2], [1, 2, 0, 3], [0, 1, 2, 3], [0, 1, 2, 3], [2, 3, 0, 1]], "good"),
    "mid": _run([[1, 0, 2, 3], [1, 0, 3, 2], [0, 1, 2, 3], [2, 0, 1, 3], [1, 0, 2, 3], [0, 2, 3, 1]], "mid"),
    "bad": _run([[3, 2, 1, 0], [1, 2, 0, 3], [3, 0, 2, 1], [3, 2, 1, 0], [3, 2, 1, 0], [0, 1, 2, 3]], "bad"),
}


@pytest.fixture
def tiny(write):
    q = write("qrels.txt", QRELS)
    return q, [write(f"{k}.run", v) for k, v in RUNS.items()]


def test_randomization_in_compare_is_exact_on_six_queries(tiny):
    qrels, runs = tiny
    cmp = compare_files(qrels, runs, ["nDCG@10"], [], test="randomization", correction="none")
    res = ulnorm_eval.evaluate(qrels, runs, ["nDCG@10"], [])
    Y = np.vstack([r.values[res.metrics[0]] for r in res.runs])
    for _, row in cmp.pairs.iterrows():
        a, b = cmp.runs.index(row["run_a"]), cmp.runs.index(row["run_b"])
        d = Y[a] - Y[b]
        flips = [abs(np.mean(np.array(s) * d)) for s in itertools.product((1, -1), repeat=6)]
        assert row["p"] == sum(f >= abs(d.mean()) - 1e-12 for f in flips) / 64


def test_tukey_and_wilcoxon_p_values_feed_pairs_marks_and_paper(tiny):
    """--test tukey: one permutation distribution over the three runs (every labelling: 6^5 <= reps), its
    p-values adjusted by the test (p_adj = p, correction 'inherent', also against a baseline) and named in
    the paper table's caption; --test wilcoxon: each pair's p is scipy's."""
    from ulnorm_eval.analysis.marks import baseline_pairs
    from ulnorm_eval.render.paper import caption_text

    qrels, runs = tiny
    res = ulnorm_eval.evaluate(qrels, runs, ["nDCG@10"], [])
    Y = np.vstack([r.values[res.metrics[0]] for r in res.runs])
    i, j = np.triu_indices(3, 1)
    cmp = compare_files(qrels, runs, ["nDCG@10"], [], test="tukey", reps=10_000, correction="bonferroni")
    assert "--correction bonferroni does not apply to --test tukey" in " ".join(cmp.notes)
    want = stats.pairwise_tukey(Y[i] - Y[j], stats.tukey_null(Y, 10_000)).p
    assert cmp.pairs["p"].tolist() == pytest.approx(list(want), abs=1e-15)
    assert cmp.pairs["p_adj"].tolist() == cmp.pairs["p"].tolist() and cmp.meta["correction"] == "inherent"
    against = baseline_pairs(cmp.tables["pairs"], "good.run", cmp.meta["correction"], 0.05)
    assert list(against["p_adj"]) == list(against["p"])
    caption = caption_text(cmp.meta, cmp.runs, None, False)
    assert "randomised Tukey HSD test (Carterette 2012), 10,000 permutations, p-values adjusted by the test itself over the 3 pairs" in caption
    from ulnorm_eval.render.frames import render
    from ulnorm_eval.render.plots import forest_caption

    assert "tukey test, p-values adjusted by the test, α = 0.05" in render(cmp.tables, "table", None, cmp.meta)
    assert "filled: significant, p-values adjusted by the test" in forest_caption(cmp.meta)
    wil = compare_files(qrels, runs, ["nDCG@10"], [], test="wilcoxon", correction="none")
    assert wil.pairs["p"].tolist() == pytest.approx([sps.wilcoxon(Y[a] - Y[b]).pvalue for a, b in zip(i, j)], rel=1e-12)


def test_bootstrap_and_swap_rate_reproducible_with_seed(tiny):
    qrels, runs = tiny
    kw = dict(test="bootstrap", reps=300, swap_trials=200)
    a = compare_files(qrels, runs, ["nDCG@10"], ["UL2"], seed=5, **kw)
    b = compare_files(qrels, runs, ["nDCG@10"], ["UL2"], seed=5, **kw)
    c = compare_files(qrels, runs, ["nDCG@10"], ["UL2"], seed=6, **kw)
    pd.testing.assert_frame_equal(a.pairs, b.pairs)
    pd.testing.assert_frame_equal(a.summary, b.summary)
    assert not a.pairs["p"].equals(c.pairs["p"]) or not a.summary["split_half_swap_rate"].equals(c.summary["split_half_swap_rate"])


def test_compare_needs_two_runs_and_comparable_metrics(tiny):
    qrels, runs = tiny
    res = ulnorm_eval.evaluate(qrels, runs[:1], ["AP"], [])
    with pytest.raises(ValueError, match="two runs"):
        compare(res)
    res = ulnorm_eval.evaluate(qrels, runs, ["AP"], ["E"])
    with pytest.raises(ValueError, match="only bounds"):
        compare(api.Result(metrics=[m for m in res.metrics if m.variant], runs=res.runs, options=res.options))


# --------------------------------------------------------------------------- command line

def test_cli_compare_formats(tiny):
    qrels, runs = tiny
    cli = CliRunner()
    out = cli.invoke(main, ["compare", "-m", "nDCG@10", "-m", "AP", "-f", "tsv", "--table", "pairs", qrels, *runs])
    assert out.exit_code == 0, out.output
    from io import StringIO
    pairs = pd.read_csv(StringIO(out.stdout), sep="\t")
    assert len(pairs) == 3 * 4  # 3 pairs under nDCG@10, AP and UL2 of each (eval's default variant)
    assert set(pairs.columns) >= {"metric", "run_a", "run_b", "diff", "ci_low", "ci_high", "p", "p_adj", "significant"}
    out = cli.invoke(main, ["compare", "-f", "json", "--table", "all", "--norm", "ul2", qrels, *runs])
    doc = json.loads(out.stdout)
    assert set(doc) == {"meta", "systems", "summary", "pairs"}
    assert doc["meta"]["correction"] == "holm" and len(doc["systems"]) == 3 * 6
    out = cli.invoke(main, ["compare", "-f", "table", qrels, *runs])
    heads = "".join(ln for ln in out.stdout.splitlines() if ln.startswith("┃"))
    assert out.exit_code == 0 and "Kendall" not in heads and "EM(nDCG@10)" in out.stdout
    assert "\ntau: Kendall's tau" in out.stdout  # the column's name in the table, its meaning under it
    out = cli.invoke(main, ["compare", "-f", "table", "--table", "systems", qrels, *runs])
    assert ("each cell: the run's mean of the per-query values, eval's 'all' row (its rank among the runs, 1 = "
            "best); for a normalisation such as EM, mean EM") in " ".join(out.stdout.split())


def test_cli_compare_usage_errors(tiny, write):
    qrels, runs = tiny
    cli = CliRunner()
    assert cli.invoke(main, ["compare", qrels, runs[0]]).exit_code == 2
    assert cli.invoke(main, ["compare", "--table", "nope", qrels, *runs]).exit_code == 2
    bad = write("bad.run", "q1 Q0 d1 1\n")
    out = cli.invoke(main, ["compare", qrels, runs[0], bad])
    assert out.exit_code == 2 and "bad.run" in out.stderr and out.stdout == ""


def test_cli_plot_without_matplotlib_says_how_to_install(tiny, monkeypatch, tmp_path):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else real(name, *a))
    qrels, runs = tiny
    out = CliRunner().invoke(main, ["compare", "--plot", str(tmp_path / "c.png"), qrels, *runs])
    assert out.exit_code == 2 and "pip install '.[plot]' in a checkout of ulnorm-eval" in out.stderr
    assert not (tmp_path / "c.png").exists()


def test_cli_plots_are_written(tiny, tmp_path):
    import matplotlib  # noqa: F401 - the test extra installs it
    qrels, runs = tiny
    cli = CliRunner()
    for cmd in ("compare", "queries"):
        png = tmp_path / f"{cmd}.png"
        out = cli.invoke(main, [cmd, "-m", "nDCG@10", "--plot", str(png), "-o", str(tmp_path / f"{cmd}.tsv"),
                                qrels, *runs])
        assert out.exit_code == 0, out.output
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_labels_keep_a_prefix_the_runs_share_but_trec_s_input(write, tmp_path, monkeypatch):
    """compare --plot labels a pair by its runs' names: a prefix they share (a team's, BIT.) stays; only
    TREC's archive prefix input., on every run, is dropped (the labels read from the picture's text)."""
    import matplotlib

    monkeypatch.setitem(matplotlib.rcParams, "svg.fonttype", "none")  # text as text in the SVG
    q = write("qrels.txt", QRELS)
    for prefix, shown in (("BIT.", "BIT."), ("input.", "")):
        runs = [write(f"{prefix}{k}", v) for k, v in RUNS.items()]
        svg = tmp_path / "c.svg"
        out = CliRunner().invoke(main, ["compare", "-m", "nDCG@10", "--norm", "none", "--plot", str(svg),
                                        "-o", str(tmp_path / "c.tsv"), q, *runs])
        assert out.exit_code == 0, out.output
        text = svg.read_text()
        first, second = list(RUNS)[:2]
        assert f"{shown}{first} − {shown}{second}" in text and ("input." not in text)


def test_cli_queries_without_runs(tiny):
    qrels, _ = tiny
    # the command refuses (a mean, gap and type of nan would be printed); the library gives the bounds
    out = CliRunner().invoke(main, ["queries", "-m", "AP", "-f", "csv", qrels])
    assert out.exit_code == 2 and out.stdout == ""
    assert out.stderr.strip().splitlines() == [
        "ulnorm-eval: queries needs at least one RUN: the mean, gap and query type come from the runs' scores "
        "(see 'ulnorm-eval queries --help')"]
    from ulnorm_eval.analysis.query_types import query_table

    with pytest.raises(ValueError, match="--pool run needs at least one run"):  # a run's own pool
        query_table(qrels, [], ["AP"], Options(pool="run"))
    df = query_table(qrels, [], ["AP"], Options(pool="qrels"))
    assert list(df["query"]) == [f"q{i}" for i in range(6)]
    assert list(df["pool"]) == [4] * 6 and list(df["relevant"]) == [2, 2, 2, 2, 1, 2]
    assert df["mean"].isna().all() and (df["type"].fillna("") == "").all()
    # E[AP] of 1 relevant among 4 = H_4 / 4 (Westerborg 2022 closed form with P = 1)
    assert df.loc[4, "E"] == pytest.approx((1 + 1 / 2 + 1 / 3 + 1 / 4) / 4)


# --------------------------------------------------------------------------- Robust 2003

@pytest.fixture(scope="module")
def robust(request):
    shared = request.getfixturevalue("shared")
    base = shared / "robust03"
    return str(base / "qrels.txt"), [str(base / "runs" / f"{r}.gz") for r in ROBUST_RUNS]


@pytest.fixture(scope="module")
def robust_cmp(robust):
    qrels, runs = robust
    # each run's own pool (--pool run): UL2 orders the runs otherwise than the plain measure, which the
    # summary's taus and conflicts measure
    return compare_files(qrels, runs, ["nDCG@10", "AP"], ["UL1", "UL2"], Options(pool="run"), correction="holm",
                         swap_trials=300)


@pytest.fixture(scope="module")
def robust_values(robust):
    qrels, runs = robust
    res = ulnorm_eval.evaluate(qrels, runs, ["nDCG@10", "AP"], ["UL1", "UL2"], pool="run")
    return {str(m): np.vstack([r.values[m] for r in res.runs]) for m in res.metrics}


def test_robust_system_table_and_pairs(robust_cmp, robust_values):
    cmp = robust_cmp
    assert cmp.runs == ROBUST_RUNS
    i, j = np.triu_indices(5, 1)
    for metric, Y in robust_values.items():
        sys_ = cmp.systems[cmp.systems["metric"] == metric]
        assert np.allclose(sys_["mean"], Y.mean(axis=1))
        assert list(sys_["rank"]) == list(sps.rankdata(-Y.mean(axis=1), method="min").astype(int))
        pt = cmp.pairs[cmp.pairs["metric"] == metric]
        ref = [sps.ttest_rel(Y[a], Y[b]) for a, b in zip(i, j)]
        assert np.allclose(pt["p"], [r.pvalue for r in ref], rtol=1e-12, atol=0)
        assert np.allclose(pt["diff"], (Y[i] - Y[j]).mean(axis=1))
        assert np.allclose(pt["ci_low"], [r.confidence_interval().low for r in ref])
        assert list(pt["significant"]) == list(pt["p_adj"] < 0.05)


def test_robust_summary_against_independent_formulas(robust_cmp, robust_values):
    s = robust_cmp.summary.set_index("metric")
    sig = {m: robust_cmp.pairs[robust_cmp.pairs["metric"] == m]["significant"].to_numpy() for m in robust_values}
    for metric, Y in robust_values.items():
        plain = metric[4:-1] if metric.startswith("UL") else metric
        means = Y.mean(axis=1)
        assert s.loc[metric, "tau"] == pytest.approx(sps.kendalltau(robust_values[plain].mean(axis=1), means).statistic)
        assert s.loc[metric, "tau_ap"] == pytest.approx(stats.tau_ap(robust_values[plain].mean(axis=1), means))
        assert s.loc[metric, "tau_low"] <= s.loc[metric, "tau"] + 1e-12 <= s.loc[metric, "tau_high"] + 2e-12
        assert s.loc[metric, "significant"] == sig[metric].sum()
        assert s.loc[metric, "conflicts"] == (sig[metric] != sig[plain]).sum()
        pads = [abs(a - b) / max(abs(a), abs(b)) for a, b in itertools.combinations(means, 2)]
        assert s.loc[metric, "pad"] == pytest.approx(100 * np.mean(pads))
        # Kanoulas & Aslam 2009 eq. 2 from a plain two-way ANOVA
        ns, nt = Y.shape
        res = Y - Y.mean(1, keepdims=True) - Y.mean(0, keepdims=True) + Y.mean()
        ms_st = (res ** 2).sum() / ((ns - 1) * (nt - 1))
        s2s = max(nt * Y.mean(1).var(ddof=1) - ms_st, 0) / nt
        s2t = max(ns * Y.mean(0).var(ddof=1) - ms_st, 0) / ns
        assert s.loc[metric, "phi"] == pytest.approx(s2s / (s2s + (s2t + ms_st) / nt))
        assert s.loc[metric, "erho2"] == pytest.approx(s2s / (s2s + ms_st / nt))
        assert 0 <= s.loc[metric, "split_half_swap_rate"] <= 1
    assert s.loc["nDCG@10", "tau"] == pytest.approx(1.0) and s.loc["AP", "conflicts"] == 0


def _expected_ndcg10(qrels_path):
    """E[nDCG@10] per query: mean grade * sum_{i<=min(10,n)} 1/log2(i+1) / IDCG@10 (Karmaker & Feng 2022 eq. 7)."""
    q = pd.read_csv(qrels_path, sep=r"\s+", header=None, names=["qid", "it", "doc", "grade"], dtype={"qid": str})
    disc = 1 / np.log2(np.arange(2, 12))
    out = {}
    for qid, g in q.groupby("qid"):
        grades = np.sort(g["grade"].clip(lower=0).to_numpy())[::-1]
        idcg = (grades[:10] * disc[: min(10, len(grades))]).sum()
        out[qid] = grades.mean() * disc[: min(10, len(grades))].sum() / idcg
    return pd.Series(out)


def test_robust_queries_table_and_subset(robust, robust_values):
    qrels, runs = robust
    judged = Options(pool="qrels")  # E by hand from the judged documents (_expected_ndcg10)
    table = query_table(qrels, runs, ["nDCG@10"], judged)
    E = _expected_ndcg10(qrels)
    assert np.allclose(table["E"], E[table["query"]].to_numpy(), rtol=1e-12)
    assert (table["IUB"] == 1).all() and (table["WLB"] == 0).all()
    mean = robust_values["nDCG@10"].mean(axis=0)
    assert np.allclose(table["mean"], mean)
    assert list(table["type"]) == list(classify(mean, table["E"], table["IUB"]))

    for kind, key in (("uninformative", np.abs(mean - table["E"])), ("ideal", -(mean - table["E"]))):
        cmp = compare_files(qrels, runs, ["nDCG@10"], ["UL2"], judged, subset=kind, subset_size=20, swap_trials=50)
        chosen = set(table["query"].to_numpy()[np.argsort(key.to_numpy(), kind="stable")[:20]])
        assert set(cmp.queries["nDCG@10"]) == chosen == set(cmp.queries["UL2(nDCG@10)"])
        assert (cmp.summary["queries"] == 20).all()
        Y = robust_values["nDCG@10"][:, np.isin(table["query"], list(chosen))]
        assert np.allclose(cmp.systems[cmp.systems["metric"] == "nDCG@10"]["mean"], Y.mean(axis=1))


def test_robust_correction_changes_only_p_adj(robust):
    qrels, runs = robust
    a = compare_files(qrels, runs, ["AP"], [], correction="none", swap_trials=10)
    b = compare_files(qrels, runs, ["AP"], [], correction="bonferroni", swap_trials=10)
    assert np.allclose(a.pairs["p"], b.pairs["p"])
    assert np.allclose(b.pairs["p_adj"], np.minimum(1, a.pairs["p"] * 10))
    assert a.summary["significant"].iloc[0] >= b.summary["significant"].iloc[0]
    assert math.isclose(a.summary["phi"].iloc[0], b.summary["phi"].iloc[0])
    assert stats.kendall_tau([1, 2], [1, 2]) == 1.0


def test_cli_output_to_a_fifo_is_written_not_replaced(tiny, tmp_path):
    """-o on a special file (a FIFO here; /dev/null in practice) must write into it, not rename over it."""
    import os
    import stat
    import threading

    qrels, runs = tiny
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()), daemon=True)
    reader.start()
    out = CliRunner().invoke(main, ["compare", "-m", "AP", "--norm", "none", "-f", "csv", "--table", "summary",
                                    "-o", str(fifo), qrels, *runs])
    reader.join(timeout=30)
    assert out.exit_code == 0, out.output
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert got and got[0].startswith("metric,measure,variant,queries,tau")


# --------------------------------------------------------------------------- machine formats, --baseline


def _cmp(*args):
    from ulnorm_eval.cli.main import main as cli_main
    ex = ROOT / "examples"
    runs = [str(p) for p in sorted((ex / "runs").glob("*.run.gz"))]
    res = CliRunner().invoke(cli_main, ["compare", "-m", "nDCG@10", "--norm", "ul2", "--swap-trials", "20", *args,
                                        str(ex / "qrels" / "dlhard-passage.qrels.txt"), *runs])
    assert res.exit_code == 0, res.output
    return res


@pytest.mark.parametrize("fmt,sep", [("tsv", "\t"), ("csv", ",")])
def test_machine_formats_are_one_table_per_choice(fmt, sep):
    """tsv/csv: each --table choice a whole table with its own header and columns (no sparse union), in the
    order asked, separated by a blank line; each is what --table NAME alone prints."""
    import io

    import pandas as pd

    res = _cmp("-f", fmt, "--table", "systems,pairs,summary")
    blocks = res.stdout.split("\n\n")
    assert len(blocks) == 3 and all(block.strip() for block in blocks)
    for name, block in zip(("systems", "pairs", "summary"), blocks):
        assert block.rstrip("\n") + "\n" == _cmp("-f", fmt, "--table", name).stdout
    systems, pairs, summary = (pd.read_csv(io.StringIO(block), sep=sep) for block in blocks)
    assert list(systems.columns) == ["run", "metric", "mean", "rank"] and len(systems) == 6
    assert list(pairs.columns[:3]) == ["metric", "run_a", "run_b"] and len(pairs) == 6
    assert {"diff", "p_adj", "significant"} <= set(pairs.columns) and "tau" not in pairs.columns
    assert len(summary) == 2 and "run_a" not in summary.columns


@pytest.mark.parametrize("fmt", ["tsv", "json", "table"])
def test_baseline_in_every_format(fmt):
    """--baseline: the pairs (run, baseline), oriented run - baseline, corrected over those two pairs."""
    import io
    import json

    import pandas as pd

    full = pd.read_csv(io.StringIO(_cmp("-f", "tsv", "--table", "pairs").stdout), sep="\t")
    res = _cmp("-f", fmt, "--table", "systems", "--baseline", "bm25.run")
    if fmt == "table":
        assert "Pairs of runs" in res.stdout and "bm25_rm3.run" in res.stdout
        return
    if fmt == "json":
        pairs = pd.DataFrame(json.loads(res.stdout)["pairs"])
        assert json.loads(res.stdout)["meta"]["baseline"] == "bm25.run"
    else:
        pairs = pd.read_csv(io.StringIO(res.stdout.split("\n\n")[1]), sep="\t")  # after the systems table
    assert set(pairs["run_b"]) == {"bm25.run"} and len(pairs) == 4
    for m in ("nDCG@10", "UL2(nDCG@10)"):
        mine = pairs[pairs["metric"] == m].set_index("run_a")
        orig = full[full["metric"] == m]
        # the full table has bm25.run as run_a against both others: negated here
        for other in ("bm25_bert_zs.run", "bm25_rm3.run"):
            row = orig[(orig["run_a"] == "bm25.run") & (orig["run_b"] == other)].iloc[0]
            assert mine.loc[other, "diff"] == pytest.approx(-row["diff"], abs=1e-15)
            assert mine.loc[other, "ci_low"] == pytest.approx(-row["ci_high"], abs=1e-15)
            assert mine.loc[other, "p"] == row["p"]
        # Holm over the two baseline pairs: the smaller p doubled, the larger kept (monotone)
        ps = sorted(mine["p"])
        want = sorted([min(1.0, 2 * ps[0]), max(min(1.0, 2 * ps[0]), ps[1])])
        assert sorted(mine["p_adj"]) == pytest.approx(want, abs=1e-15)
        assert (mine["significant"] == (mine["p_adj"] < 0.05)).all()


def test_forest_plot_says_which_intervals():
    from ulnorm_eval.render.plots import forest_caption

    cap = forest_caption({"test": "t", "correction": "holm", "alpha": 0.05, "subset": "all"})
    assert cap == "t test; 95% intervals, uncorrected; filled: significant after holm correction (α = 0.05); query set: all"


def test_pair_intervals_are_one_minus_alpha_and_their_titles_say_so(tiny):
    """The pairs' interval is the (1 - alpha) t-interval mean(d) +- t_{1-alpha/2, n-1} sd(d)/sqrt(n) at the
    --alpha the pairs are marked at (it was 95% whatever alpha), and the table's and the forest plot's
    titles print that level."""
    from ulnorm_eval.render.plots import forest_caption

    qrels, runs = tiny
    res = ulnorm_eval.evaluate(qrels, runs, ["nDCG@10"], [])
    Y = np.vstack([r.values[res.metrics[0]] for r in res.runs])
    for alpha in (0.05, 0.2):
        cmp = compare_files(qrels, runs, ["nDCG@10"], [], correction="none", alpha=alpha)
        for _, row in cmp.pairs.iterrows():
            d = Y[cmp.runs.index(row["run_a"])] - Y[cmp.runs.index(row["run_b"])]
            half = sps.t.ppf(1 - alpha / 2, len(d) - 1) * d.std(ddof=1) / math.sqrt(len(d))
            assert row["ci_low"] == pytest.approx(d.mean() - half, abs=1e-12)
            assert row["ci_high"] == pytest.approx(d.mean() + half, abs=1e-12)
    out = CliRunner().invoke(main, ["compare", "-f", "table", "--alpha", "0.2", "-m", "nDCG@10", "--norm", "none",
                                    qrels, *runs]).stdout
    assert "80% interval (1 − α)" in out and "95%" not in out
    assert forest_caption({"alpha": 0.1}).startswith("t test; 90% intervals, uncorrected;")


def test_compare_help_explains_the_summary_columns():
    from ulnorm_eval.cli.main import main as cli_main

    out = CliRunner().invoke(cli_main, ["compare", "--help-all"], terminal_width=200).stdout
    for col in ("tau", "significant", "conflicts", "pad", "swap_rate", "var_system", "erho2", "phi",
                "topics_needed", "p_adj"):
        assert col in out, col


def test_every_column_has_a_legend_line_and_pairs_lead():
    """Every column compare can print (all tables, --holes with bootstrap, --swap-between, a measure at two
    cutoffs) has its one line, printed under its table by -f table; the default leads with the pairs."""
    from ulnorm_eval.render.legends import COLUMNS

    ex = ROOT / "examples"
    base = [str(ex / "qrels" / "dlhard-passage.qrels.txt"), *map(str, sorted((ex / "runs").glob("*.run.gz")))]
    tsv = CliRunner().invoke(main, ["compare", "-f", "tsv", "--table", "all", "-m", "nDCG@5", "-m", "nDCG@10",
                                    "--norm", "ul2", "--holes", "--holes-samples", "20", "--swap-between", "all",
                                    "uninformative", "--swap-trials", "10", *base])
    assert tsv.exit_code == 0, tsv.output
    header = tsv.stdout.splitlines()[0].split("\t")
    known = {c for t in COLUMNS.values() for c in t} | {"table"}
    assert set(header) <= known, set(header) - known
    table = CliRunner().invoke(main, ["compare", "-f", "table", "-m", "nDCG@10", "--norm", "ul2", "--holes", *base])
    assert table.exit_code == 0, table.output
    out = table.stdout
    assert out.index("Pairs of runs") < out.index("Systems:") < out.index("Metrics on")  # the pairs first
    heads = [[c.strip() for c in ln.strip("┃").split("┃")] for ln in out.splitlines() if ln.startswith("┃")]
    assert len(heads) == 3
    for name, cols in zip(("pairs", "summary"), (heads[0], heads[2])):
        assert {"p_adj", "tau"} & set(cols)
        for col in cols:
            assert f"\n{col}: {COLUMNS[name][col]}\n" in out, col
    assert "\nholes_overlap: 1 if the two runs' mean [LB, UB] intervals" in out


def test_compare_steps_one_progress_bar_through_the_runs(monkeypatch):
    """compare advances one bar (render.progress.progress, the bytes of the runs with the time left) once
    per run, before the run is read."""
    import contextlib

    from ulnorm_eval.render import progress as pr

    steps, opened = [], []

    @contextlib.contextmanager
    def spy(paths, enabled, monte_carlo=0):
        opened.append(list(paths))
        yield lambda description, path=None: steps.append((description, path))

    monkeypatch.setattr(pr, "progress", spy)
    ex = ROOT / "examples"
    runs = [str(p) for p in sorted((ex / "runs").glob("*.run.gz"))]
    res = CliRunner().invoke(main, ["compare", "-f", "tsv", "-m", "P@5", "--norm", "none",
                                    str(ex / "qrels" / "dlhard-passage.qrels.txt"), *runs])
    assert res.exit_code == 0, res.output
    assert opened == [runs]
    # and once after the last, which takes the bar past the last run's bytes to 100%
    assert steps == [(f"evaluating {Path(r).name} ({i + 1}/3)", r) for i, r in enumerate(runs)] + [
        ("evaluated 3 runs", None)]


def test_compare_says_when_the_tie_rule_decides_a_significance_mark(write):
    """10 queries; run A ranks the relevant document a (score 16777217) above z (16777216): equal as floats,
    where docid descending puts z first.  Under float64 A's P@1 is 1 on every query, B's 1 on 3: diff 0.7,
    t = 4.58, significant; under float32 A's is 0: diff -0.3, t = -1.96, p = 0.08, not.  Said once."""
    qrels = write("q", "".join(f"q{i} 0 a 1\nq{i} 0 z 0\n" for i in range(10)))
    a = write("a.run", "".join(f"q{i} Q0 a 1 16777217 A\nq{i} Q0 z 2 16777216 A\n" for i in range(10)))
    b = write("b.run", "".join(f"q{i} Q0 {'a' if i < 3 else 'z'} 1 2 B\nq{i} Q0 {'z' if i < 3 else 'a'} 2 1 B\n"
                               for i in range(10)))
    for precision, mark in (("float64", "True"), ("float32", "False")):
        res = CliRunner().invoke(main, ["compare", "-f", "tsv", "--table", "pairs", "-m", "P@1", "--norm", "none",
                                        "--score-precision", precision, qrels, a, b])
        assert res.exit_code == 0, res.output
        rows = [ln.split("\t") for ln in res.stdout.splitlines()]
        assert rows[1][rows[0].index("significant")] == mark
        other = "float32" if precision == "float64" else "float64"
        assert res.stderr.count(f"the tie rule decides 1 significance marks: P@1 a.run vs b.run would be marked "
                                f"otherwise with --score-precision {other}") == 1
    # --ties file: A's file order puts a first (P@1 1 on every query, significant), its scores z (0, not)
    a_file = write("af.run", "".join(f"q{i} Q0 a 1 1 A\nq{i} Q0 z 2 2 A\n" for i in range(10)))
    marks = {}
    for ties in ("file", "score"):
        res = CliRunner().invoke(main, ["compare", "-f", "tsv", "--table", "pairs", "-m", "P@1", "--norm", "none",
                                        "--ties", ties, qrels, a_file, b])
        assert res.exit_code == 0, res.output
        rows = [ln.split("\t") for ln in res.stdout.splitlines()]
        marks[ties] = rows[1][rows[0].index("significant")]
        said = res.stderr.count("the tie rule decides 1 significance marks: P@1 af.run vs b.run would be marked "
                                "otherwise with --ties score (trec_eval's order")
        assert said == (ties == "file"), res.stderr
    assert marks == {"file": "True", "score": "False"}
    plain = write("c.run", "".join(f"q{i} Q0 a 1 3 C\nq{i} Q0 z 2 1 C\n" for i in range(10)))
    res = CliRunner().invoke(main, ["compare", "-f", "tsv", "--table", "pairs", "-m", "P@1", "--norm", "none", qrels,
                                    plain, b])
    assert "tie rule" not in res.stderr  # no run whose order depends on the precision: no second comparison
