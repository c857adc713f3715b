"""What "UL2 < 0" says on real runs under the defaults (docs/bounds.md, "Which pool", "Which 'all' row" and
"How far from random: the interval").

On Robust 2003 and DL-HARD: a run's reversal is below 0 and the runs above, with their 95% intervals; a
seeded shuffle of a run has a mean value equal to its mean E up to a standard error (--pool run: E is the
expectation of exactly that shuffle): within 0.01 for AP, for most shuffles on nDCG@10; the 'all' row the
table leads with (UL2 of the means) has an interval that contains 0 for about 95% of shuffles, while the
mean of per-query UL2 calls every shuffle far worse than random.  Also: the 'all' row is the formula on
the 'all' row of the value, E and IUB; --norm-all per-query is the mean of per-query values; the stderr
note when E beats the value on most queries, and only then, agreeing with the interval; LETOR (every
candidate judged and ranked) reads the same under every pool; the table, JSON and --summary-md carry the
interval and the trec/tsv formats do not.
"""
from __future__ import annotations

import gzip

import numpy as np
import pandas as pd
import pytest

import ulnorm_eval as ue
from ulnorm_eval.core.normalise import ul2
from ulnorm_eval.core.registry import Metric, parse
from ulnorm_eval.pipeline.blocks import Options, below_random_note

MEASURES = ["nDCG@10", "AP"]


def read_run(path) -> pd.DataFrame:
    with gzip.open(path, "rt") as f:
        r = pd.read_csv(f, sep=r"\s+", header=None, names=["qid", "Q0", "docno", "rank", "score", "tag"],
                        dtype={"qid": str, "docno": str})
    return r[["qid", "docno", "score"]]


def reversal(run: pd.DataFrame) -> pd.DataFrame:
    """trec_eval's order (score desc, docno desc) read bottom-up, as unique scores."""
    r = run.sort_values(["qid", "score", "docno"], ascending=[True, False, False], kind="stable").copy()
    r["score"] = r.groupby("qid").cumcount().astype(float)
    return r


def shuffled(run: pd.DataFrame, seed: int) -> pd.DataFrame:
    r = run.copy()
    r["score"] = np.random.default_rng(seed).permutation(len(r)).astype(float)
    return r


@pytest.fixture(scope="module", params=["robust03", "dlhard"])
def collection(request, shared):
    if request.param == "robust03":
        d = shared / "robust03"
        runs = {p.name: read_run(p) for p in sorted((d / "runs").glob("input.*.gz"))
                if p.name in ("input.THUIRr0301.gz", "input.SABIR03BASE.gz", "input.MU03rob01.gz")}
    else:
        d = shared / "dlhard-passage"
        runs = {p.name: read_run(p) for p in sorted((d / "runs").glob("*.run.gz"))
                if p.name in ("bm25.run.gz", "bm25_bert_zs.run.gz", "bm25_rm3_t5_zs.run.gz")}
    assert len(runs) == 3
    return str(d / "qrels.txt"), runs


def _ci(result, name, label):
    """The 95% interval of the 'all' row of ``label`` (e.g. 'UL2(AP)') for run ``name``."""
    rr = next(r for r in result.runs if r.name == name)
    return next(ci for m, ci in rr.interval.items() if str(m) == label)


def test_runs_above_reversals_below(collection):
    """The defaults call these published runs better than random and their reversals worse, on
    both aggregates of UL2, and the 95% interval of the 'all' row the table leads with (UL2 of the
    means) says so: above 0 for the runs, below 0 for their reversals."""
    qrels, runs = collection
    ev = ue.evaluate(qrels, runs, MEASURES, variants=["UL2"])
    rev = ue.evaluate(qrels, {n: reversal(r) for n, r in runs.items()}, MEASURES, variants=["UL2"])
    per_q = ue.evaluate(qrels, {n: reversal(r) for n, r in runs.items()}, MEASURES, variants=["UL2"],
                        norm_all="per-query")
    for n in runs:
        for m in MEASURES:
            assert ev.means[n][f"UL2({m})"] > 0.2, (n, m)
            assert rev.means[n][f"UL2({m})"] < -0.3, (n, m)
            assert per_q.means[n][f"UL2({m})"] < -0.3, (n, m)
            lo, hi = _ci(ev, n, f"UL2({m})")
            assert 0 < lo < ev.means[n][f"UL2({m})"] < hi, (n, m, lo, hi)
            lo, hi = _ci(rev, n, f"UL2({m})")
            assert lo <= rev.means[n][f"UL2({m})"] <= hi < 0, (n, m, lo, hi)  # -1 = A 0 on every query
    assert not per_q.runs[0].interval  # a mean of per-query values has none: it is not 0 for a random ranking


def test_robust_best_runs_by_published_map_are_above_random(shared):
    """The three best of the shared runs by the track's published MAP (published_scores.tsv lists more
    runs than the shared data holds: pircRBa2 leads it; of ours pircRBa1, aplrob03a, uwmtCR0): the 95%
    interval of UL2 of the means lies above 0 on both measures."""
    d = shared / "robust03"
    pub = pd.read_csv(d / "published_scores.tsv", sep="\t")
    have = {p.name[len("input."):-len(".gz")] for p in (d / "runs").glob("input.*.gz")}
    ranked = pub[pub.measure == "map"].sort_values("value", ascending=False).run.tolist()
    # published names are cut to 10 characters (oce03noXbm): matched by prefix, as benchmarks/pool_study.py
    top = list(dict.fromkeys(h for r in ranked for h in sorted(have) if h.startswith(r) or r.startswith(h)))[:3]
    assert top == ["pircRBa1", "aplrob03a", "uwmtCR0"]
    ev = ue.evaluate(str(d / "qrels.txt"), {n: read_run(d / "runs" / f"input.{n}.gz") for n in top}, MEASURES,
                     variants=["UL2"])
    for n in top:
        for m in MEASURES:
            assert _ci(ev, n, f"UL2({m})")[0] > 0, (n, m)


SHUFFLES = 40  # seeds 100..139


@pytest.fixture(scope="module")
def shuffles(collection):
    """40 seeded shuffles of the collection's first run (Robust 2003: MU03rob01; DL-HARD: bm25), evaluated
    with the defaults (E, UL2) and IUB; and with --norm-all per-query."""
    qrels, runs = collection
    name, run = next(iter(runs.items()))
    sh = {f"s{i}": shuffled(run, 100 + i) for i in range(SHUFFLES)}
    return (ue.evaluate(qrels, sh, MEASURES, variants=["E", "IUB", "UL2"]),
            ue.evaluate(qrels, sh, MEASURES, variants=["UL2"], norm_all="per-query"))


def test_shuffles_mean_value_is_their_mean_e_up_to_its_standard_error(shuffles):
    """Under the default pool E is the expectation of exactly a shuffle of the run, so per query A - E
    has mean 0, and mean A - mean E over the queries is a zero-mean random variable with standard error
    se = sd(A - E) / sqrt(n) (n queries), about 0.005 on nDCG@10 and 0.001-0.002 on AP here.  Over 40
    seeded shuffles: their average difference is within 0.002 of 0 (the standard error of that average
    is se / sqrt(40), under 0.001); at least 85% of them lie within 0.01 (for nDCG@10, 0.01 is about 2
    se: 95% expected; measured 39/40 on Robust 2003, 37/40 on DL-HARD); every AP shuffle within 0.01
    (0.01 is over 5 se); and their spread (the sd of the 40 differences) is the predicted se (root
    mean square over the shuffles) within a factor 0.7-1.4 (the sd of 40 draws has a relative
    standard error of 1/sqrt(78) = 0.11: the band is -2.7 and +3.5 of those; measured 0.93-1.05)."""
    ev, _ = shuffles
    for m in MEASURES:
        gaps, ses = [], []
        for s in ev.per_query:
            d = ev.per_query[s][m] - ev.per_query[s][f"E({m})"]
            gaps.append(d.mean())
            ses.append(d.std(ddof=1) / np.sqrt(len(d)))
            assert ev.means[s][m] - ev.means[s][f"E({m})"] == pytest.approx(d.mean(), abs=1e-12)
        gaps, se = np.array(gaps), np.sqrt(np.mean(np.square(ses)))
        assert len(gaps) == SHUFFLES
        assert abs(gaps.mean()) < 0.002, (m, gaps.mean())
        assert np.mean(np.abs(gaps) <= 0.01) >= 0.85, (m, np.abs(gaps).max())
        if m == "AP":
            assert np.abs(gaps).max() <= 0.01, m
        assert 0.7 <= gaps.std(ddof=1) / se <= 1.4, (m, gaps.std(ddof=1), se)


def test_shuffles_are_not_distinguishable_from_random(shuffles):
    """The 'all' row the table leads with, UL2 of the means, with its 95% interval over the queries:
    for the first 20 shuffles (seeds 100..119) the interval contains 0 for at least 18 (90%).  Were its
    coverage exactly 0.95 the count would be binomial(20, 0.95): P(at least 18) = 0.925 (at 0.90, a
    percentile interval's undercoverage on 50 skewed queries, 0.68).  Measured with these seeds: Robust
    2003 20/20 (nDCG@10) and 19/20 (AP); DL-HARD 19/20 and 18/20 (over all 40: 35/40 on both measures,
    P(at most 35 | 0.95) = 0.14).  UL2 of the means is each shuffle's value, inside its interval; the
    mean of per-query UL2 (the seeds' average) stays far below 0 for every shuffle: -0.5 (nDCG@10) or
    -0.1 (AP) or lower."""
    ev, pq = shuffles
    for m in MEASURES:
        inside = 0
        for k, s in enumerate(ev.per_query):
            lo, hi = _ci(ev, s, f"UL2({m})")
            assert lo <= ev.means[s][f"UL2({m})"] <= hi, (s, m)
            inside += k < 20 and lo <= 0 <= hi
            assert pq.means[s][f"UL2({m})"] < (-0.5 if m == "nDCG@10" else -0.1), (s, m)
        assert inside >= 18, (m, inside)


def test_the_hint_on_a_shuffle_says_it_is_not_distinguishable(shuffles):
    """A shuffle has E above its value on most queries (most of its queries score below their mean): the
    stderr hint says so, and adds for each measure whether over all queries the run can be told from
    random, agreeing with the interval: 'not distinguishable from random' when it contains 0."""
    ev, _ = shuffles
    told = 0
    for rr in ev.runs:
        hint = next((n for n in rr.notes if "E beats the value on most queries" in n), None)
        for m in MEASURES:
            lo, hi = _ci(ev, rr.name, f"UL2({m})")
            if hint is None or f"{m} on " not in hint.split("):")[0]:
                continue
            word = "not distinguishable from random" if lo <= 0 <= hi else "worse than random" if hi < 0 else \
                "better than random"
            assert f"{m} {word}, [{lo:.4f}, {hi:.4f}]" in hint, (rr.name, m, hint)
            told += 1
    assert told >= SHUFFLES  # the hint is there for most shuffles on at least one measure


def test_all_row_is_the_formula_on_the_all_row(shared):
    """UL2's 'all' row = UL2(mean A, mean IUB, mean E) by hand over the queries where UL2 is defined
    (on this run every undefined query has A = E = I: it changes no sum of the upper branch, so the
    formula on the printed 'all' row gives the same); --norm-all per-query = the plain mean of the
    per-query values (undefined ones scored 0); --norm-all changes nothing else."""
    d = shared / "dlhard-passage"
    run = str(d / "runs" / "bm25.run.gz")
    ev = ue.evaluate(str(d / "qrels.txt"), run, MEASURES, variants=["E", "IUB", "UL1", "UL2"])
    pq = ue.evaluate(str(d / "qrels.txt"), run, MEASURES, variants=["E", "IUB", "UL1", "UL2"], norm_all="per-query")
    n = "bm25.run"
    for m in MEASURES:
        A, E, I = (ev.per_query[n][k] for k in (m, f"E({m})", f"IUB({m})"))
        und = np.isclose(I, E, rtol=1e-12, atol=1e-12)
        assert 0 < und.sum() < len(und) and np.allclose(A[und], E[und])
        for d in (~und, np.ones_like(und)):
            a, e, i = A[d].mean(), E[d].mean(), I[d].mean()
            want = (a - e) / (i - e) if a >= e else (a - e) / e
            assert ev.means[n][f"UL2({m})"] == pytest.approx(want, rel=1e-12)
        a, e, i = A[~und].mean(), E[~und].mean(), I[~und].mean()
        assert ev.means[n][f"UL1({m})"] == pytest.approx((a / i) * (a / (a + e)), rel=1e-12)
        assert pq.means[n][f"UL2({m})"] == pytest.approx(ev.per_query[n][f"UL2({m})"].mean(), rel=1e-12)
        assert pq.means[n][f"UL2({m})"] != pytest.approx(ev.means[n][f"UL2({m})"], abs=0.01)
        assert pq.means[n][f"E({m})"] == ev.means[n][f"E({m})"]
        assert pq.per_query[n][f"UL2({m})"].tolist() == ev.per_query[n][f"UL2({m})"].tolist()


def test_streamed_and_whole_give_the_same_all_row(shared, tmp_path):
    """The 'all' row of a normalisation needs A, E, IUB and WLB of every query: streamed in blocks of
    queries (the default for a file) or read whole, the same numbers to the last bit."""
    from ulnorm_eval.pipeline.evaluate import load_qrels, resolve_metrics
    from ulnorm_eval.pipeline.orchestrator import evaluate_runs

    d = shared / "dlhard-passage"
    q = load_qrels(str(d / "qrels.txt"))
    metrics = resolve_metrics(MEASURES, ["UL2", "MM"])
    (a,) = evaluate_runs(q, [str(d / "runs" / "bm25_rm3.run.gz")], metrics, Options(), stream=True)
    (b,) = evaluate_runs(q, [str(d / "runs" / "bm25_rm3.run.gz")], metrics, Options(), stream=False)
    assert set(a.values) == set(metrics) == set(b.values)  # the parts are not in the result
    for m in metrics:
        assert a.mean[m] == b.mean[m]
        assert np.array_equal(a.values[m], b.values[m], equal_nan=True)


def _note(A, E, pool="run"):
    m = parse("AP")
    values = {m: np.asarray(A, float), Metric(m.measure, "E"): np.asarray(E, float)}
    return below_random_note("r", [Metric(m.measure, "UL2")], values, Options(pool=pool))


def test_below_random_note_only_when_most_queries_have_e_above():
    """More than half of the queries with E > A: one line naming the count, the pool's question and
    the other --pool; exactly half, or E = A (a tie is not 'above'), or fewer: nothing."""
    note = _note([0.1, 0.2, 0.3, 0.2], [0.5, 0.5, 0.1, 0.4])  # 4 queries: the fewest a 95% interval is taken from
    assert note.startswith("r: E beats the value on most queries (AP on 3 of 4): there a shuffle of the run's own "
                           "ranked documents (--pool run) scores better than the run, so per-query UL2 reads worse "
                           "than random there; over all queries (the 95% interval of mean value - mean E): AP not "
                           "distinguishable from random, [")
    assert note.endswith("]; --pool qrels compares with a shuffle of the judged documents instead "
                         "(docs/bounds.md, \"Which pool\")")
    assert "--pool run compares with a shuffle of the run's own" in _note([0.1, 0.2, 0.3], [0.5, 0.5, 0.1], "qrels")
    assert _note([0.1, 0.2, 0.3, 0.4], [0.5, 0.5, 0.1, 0.1]) is None  # half
    assert _note([0.1, 0.2, 0.3], [0.1, 0.2, 0.1]) is None  # equal is not above
    assert _note([0.6, 0.6, 0.3], [0.5, 0.5, 0.1]) is None


def test_a_lower_is_better_measure_reads_its_direction_from_its_record():
    """RBP_resid (lower is better, its record says): E above its value on most queries is the run beating
    random (no note, as with trec_eval's RBP residual of 30/30 queries under -m all_trec); E below on most
    is random beating the run, and an interval of mean A - mean E wholly above 0 is worse than random."""
    m = parse("RBP_resid")
    assert m.measure.lower_better and not parse("AP").measure.lower_better
    metrics = [Metric(m.measure, "UL2")]

    def note(A, E):
        values = {m: np.asarray(A, float), Metric(m.measure, "E"): np.asarray(E, float)}
        return below_random_note("r", metrics, values, Options())

    assert note([0.1, 0.2, 0.3], [0.5, 0.5, 0.1]) is None  # less residual than random on 2 of 3: better
    text = note([0.5, 0.5, 0.5, 0.5], [0.1, 0.1, 0.2, 0.1])
    assert text.startswith("r: E beats the value on most queries (RBP_resid(p=0.9) on 4 of 4, lower is better)")
    assert "RBP_resid(p=0.9) worse than random, [" in text
    # the same values for AP (higher is better): better than random, no note
    ap = parse("AP")
    assert below_random_note("r", [Metric(ap.measure, "UL2")], {ap: np.asarray([0.5] * 4), Metric(ap.measure, "E"):
                             np.asarray([0.1, 0.1, 0.2, 0.1])}, Options()) is None


def test_below_random_note_on_real_runs(shared, capsys):
    """A reversed DL-HARD run gets the note on stderr, the run itself does not (the command line)."""
    from ulnorm_eval.cli.main import main

    d = shared / "dlhard-passage"
    run = d / "runs" / "bm25.run.gz"
    ev = ue.evaluate(str(d / "qrels.txt"), {"fwd": read_run(run), "rev": reversal(read_run(run))}, MEASURES,
                     variants=["UL2"])
    hints = [n for n in ev.notes if "E beats the value on most queries" in n]
    assert len(hints) == 1 and hints[0].startswith("rev: E beats the value on most queries (nDCG@10 on ")
    with pytest.raises(SystemExit) as ex:
        main(["eval", "-m", "nDCG@10", str(d / "qrels.txt"), str(run)], standalone_mode=True)
    assert ex.value.code == 0
    assert "E beats the value" not in capsys.readouterr().err


def test_letor_reads_the_same_under_every_pool(shared, tmp_path):
    """LETOR: the score file ranks every candidate, all of them judged, so the run's documents are
    the judged ones and --pool run (the default), qrels and union give the same numbers."""
    d = shared / "letor" / "lightgbm_lambdarank"
    from sklearn.datasets import load_svmlight_file

    X, _ = load_svmlight_file(str(d / "rank.test"))
    scores = np.asarray(X[:, 0].todense()).ravel() + np.arange(X.shape[0]) * 1e-6
    f = str(tmp_path / "scores.txt")
    np.savetxt(f, scores)
    got = [ue.evaluate(str(d / "rank.test"), f, MEASURES, variants=["E", "IUB", "UL2"], pool=p)
           for p in ("run", "qrels", "union")]
    assert got[0].runs[0].mean[got[0].metrics[2]] > 0
    for g in got[1:]:
        for m in got[0].metrics:
            assert np.array_equal(got[0].runs[0].values[m], g.runs[0].values[m], equal_nan=True), m
            assert got[0].runs[0].mean[m] == g.runs[0].mean[m]


QRELS = "examples/qrels/dlhard-passage.qrels.txt"
RUN = "examples/runs/bm25_rm3.run.gz"


def _cli(*args):
    from conftest import cli

    return cli(*args).stdout


def test_caption_names_the_pool_in_words_and_the_all_row():
    """The table's caption: what "random" is, in words; what the 'all' row of UL2 is (the formula on
    the means, and that it is not the mean of per-query values), and under --norm-all per-query
    that it is the mean of per-query values."""
    text = _cli("eval", "-f", "table", "-m", "AP", QRELS, RUN)
    assert "random = a shuffle of the run's own ranked documents (--pool run)" in text
    assert ("'all' row of UL2: the formula applied to the means of A, E and I over the queries where it is "
            "defined: 0 = a random ranking; not the mean of per-query values, Karmaker & Feng 2022's average "
            "(--norm-all per-query)") in text
    text = _cli("eval", "-f", "table", "-m", "AP", "--pool", "qrels", "--norm-all", "per-query", QRELS, RUN)
    assert "random = a shuffle of the judged documents (--pool qrels)" in text
    assert "'all' row of UL2: the mean of per-query values (Karmaker & Feng 2022's average" in text
    assert "pool qrels;" not in text


def test_legend_defines_only_what_is_on_screen_once():
    """--norm e,ul2: A, E, I defined once each (I is used by UL2's formula), no W or WLB; E's
    definition is not repeated as a variant formula; nrg shows none of the bounds' definitions nor
    a pool; a plain table has no legend at all."""
    text = _cli("eval", "-f", "table", "-m", "AP", "--norm", "e,ul2", QRELS, RUN)
    legend = text.strip().split("\n")[-1]
    assert legend == ("A = the value; E = the expected value of a random ranking; I = IUB, the best ordering's "
                      "value; UL2 = (A-E)/(I-E) if A >= E else (A-E)/E")
    assert "W =" not in text and "WLB" not in text and text.count("expected value") == 1
    text = _cli("eval", "-f", "table", "-m", "AP", "--norm", "iub,wlb,mm", QRELS, RUN)
    legend = text.strip().split("\n")[-1]
    assert legend == ("A = the value; I = IUB, the best ordering's value; W = WLB, the worst ordering's value; "
                      "MM = (A-W)/(I-W) (min-max with the worst ranking)")
    text = _cli("nrg", "-f", "table", "-m", "nDCG@10", "--prior", "examples/runs/bm25.run.gz", QRELS, RUN)
    assert not any(s in text for s in ("A = ", "E = ", "I = ", "W = ", "random =", "'all' row"))
    assert "NRG = " in text
    text = _cli("eval", "-f", "table", "-m", "AP", "--norm", "none", QRELS, RUN)
    assert text.strip().split("\n")[-1].startswith("50 queries; ties")


def test_summary_md_says_what_the_means_are(tmp_path):
    """--summary-md: the pool in words and the 'all' row rule, as the caption; --norm-all per-query
    says "mean of per-query"."""
    md = tmp_path / "s.md"
    _cli("eval", "-m", "AP", "--norm", "ul2", "--summary-md", str(md), QRELS, RUN)
    text = md.read_text()
    assert "- random = a shuffle of the run's own ranked documents (--pool run)" in text
    assert "not the mean of per-query values" in text
    _cli("eval", "-m", "AP", "--norm", "ul2", "--norm-all", "per-query", "--summary-md", str(md), QRELS, RUN)
    assert "UL2\\: the mean of per-query values" in md.read_text()


def test_table_json_and_summary_carry_the_interval(tmp_path):
    """--pool qrels on bm25_bert_zs (README's second table): the table's 'UL2 95% CI' column holds the
    API's interval, 'n.s.' where it contains 0 (RBP) and not where it lies below (AP); the caption
    says what the interval is; with colour only the UL2 whose interval lies below 0 is bold red; JSON
    carries [lo, hi] per measure; --summary-md puts it beside the mean; tsv and trec output are unchanged
    (no interval rows or columns: awk users' pipes)."""
    import json

    from ulnorm_eval.render.table import format_table

    run = "examples/runs/bm25_bert_zs.run.gz"
    ms = ["AP", "RBP(p=0.8)"]
    ev = ue.evaluate(QRELS, run, ms, pool="qrels")
    name = ev.runs[0].name
    ap, rbp = _ci(ev, name, "UL2(AP)"), _ci(ev, name, "UL2(RBP(p=0.8))")
    assert ap[1] < 0 and rbp[0] < 0 < rbp[1]
    text = _cli("eval", "-f", "table", "--pool", "qrels", "-m", "AP", "-m", "RBP(p=0.8)", QRELS, run)
    rows = {line.split()[0]: line for line in text.splitlines() if line.split()[:1] in (["AP"], ["RBP(p=0.8)"])}
    assert "UL2 95% CI" in text.splitlines()[1]
    assert rows["AP"].endswith(f"[{ap[0]:.4f}, {ap[1]:.4f}]")
    assert rows["RBP(p=0.8)"].endswith(f"[{rbp[0]:.4f}, {rbp[1]:.4f}] n.s.")
    assert ("UL2 95% CI: the 'all' row's 95% percentile bootstrap interval over the queries (1,000 resamples of "
            "the queries, each with its A, E and I, --seed 0; Efron & Tibshirani 1993); one that contains 0 "
            "(n.s.): the run is not significantly different from a random ranking on these queries (however wide "
            "the interval); one wholly below 0: worse than random\n") in text
    colored = format_table(ev, color=True)
    red = "\x1b[1;31m"
    assert f"{red}{ev.means[name]['UL2(AP)']:.4f}" in colored
    assert f"{red}{ev.means[name]['UL2(RBP(p=0.8))']:.4f}" not in colored  # below 0, but not told from random
    doc = json.loads(_cli("eval", "-f", "json", "--pool", "qrels", "-m", "AP", "-m", "RBP(p=0.8)", QRELS, run))
    assert doc["runs"][0]["interval"] == {"UL2(AP)": list(ap), "UL2(RBP(p=0.8))": list(rbp)}
    md = tmp_path / "s.md"
    _cli("eval", "--pool", "qrels", "-m", "AP", "--summary-md", str(md), QRELS, run)
    assert f"| {ev.means[name]['UL2(AP)']:.4f} [{ap[0]:.4f}, {ap[1]:.4f}] |" in md.read_text()
    assert "- UL2 95% CI\\: the 'all' row's 95% percentile bootstrap interval" in md.read_text()
    tsv = _cli("eval", "-f", "tsv", "-q", "--pool", "qrels", "-m", "AP", QRELS, run)
    assert tsv.splitlines()[0] == "run\tquery\tAP\tE(AP)\tUL2(AP)" and len(tsv.splitlines()) == 1 + 51
    trec = _cli("eval", "--pool", "qrels", "-m", "AP", QRELS, run)
    assert trec == (f"AP\tall\t{ev.means[name]['AP']:.4f}\nE(AP)\tall\t{ev.means[name]['E(AP)']:.4f}\n"
                    f"UL2(AP)\tall\t{ev.means[name]['UL2(AP)']:.4f}\n")


def test_the_table_reads_a_measure_s_direction_and_an_interval_holding_0_is_not_called_random():
    """-f table: UL2 of RBP_resid (lower is better) below 0 is the run beating random: not bold red, while
    the same sign on AP is; the caption says which side is worse for it.  An interval that holds 0 is
    marked 'n.s.' (not significantly different), never '≈ random': [-1.0000, 0.0009] is not about random."""
    from ulnorm_eval.render.table import NEAR_RANDOM, format_table

    ev = ue.evaluate(QRELS, RUN, ["RBP_resid", "AP"], variants=["UL2"])
    name, red = ev.runs[0].name, "\x1b[1;31m"
    resid, ap = _ci(ev, name, "UL2(RBP_resid(p=0.9))"), _ci(ev, name, "UL2(AP)")
    assert resid[1] < 0 < ap[0]  # less residual than random: wholly below 0
    colored = format_table(ev, color=True)
    assert f"{red}{ev.means[name]['UL2(RBP_resid(p=0.9))']:.4f}" not in colored
    assert "one wholly below 0: worse than random (above 0 for RBP_resid(p=0.9), where lower is better)" in colored
    rev = ue.evaluate(QRELS, {"rev": reversal(read_run(RUN))}, ["AP"], variants=["UL2"])
    assert _ci(rev, "rev", "UL2(AP)")[1] < 0 and f"{red}{rev.means['rev']['UL2(AP)']:.4f}" in format_table(rev, color=True)
    assert NEAR_RANDOM == "n.s." and "random" not in NEAR_RANDOM


# --------------------------------------------------------------------------- pools the same for every run

EX_QRELS, EX_RUNS = "examples/qrels/dlhard-passage.qrels.txt", ["examples/runs/bm25.run.gz", "examples/runs/bm25_bert_zs.run.gz"]


def _bounds(ev, run: str, measures) -> np.ndarray:
    return np.array([ev.per_query[run][f"{v}({m})"] for m in measures for v in ("E", "IUB", "WLB")])


def test_qrels_plus_n_is_the_union_pool_of_a_run_of_n_unjudged_documents():
    """--pool qrels+N: the judged documents and N placeholders, whatever the run retrieved: the bounds of
    every run are those of a run of N unjudged documents under --pool union (to 1e-12), and differ from
    --pool qrels's."""
    measures = ["nDCG@10", "AP", "RBP(p=0.8)", "P@5", "RR", "Rprec", "R@20", "Bpref", "Rndcg", "ERR@10"]
    qids = sorted(pd.read_csv(EX_QRELS, sep=r"\s+", header=None, dtype=str)[0].unique())
    blank = pd.DataFrame({"qid": np.repeat(qids, 40), "docno": [f"u{i}" for i in range(40)] * len(qids),
                          "score": np.tile(np.arange(40.0), len(qids))})
    union = ue.evaluate(EX_QRELS, {"blank": blank}, measures, ["E", "IUB", "WLB"], pool="union")
    plus = ue.evaluate(EX_QRELS, EX_RUNS, measures, ["E", "IUB", "WLB"], pool="qrels+40")
    judged = ue.evaluate(EX_QRELS, EX_RUNS[:1], measures, ["E", "IUB", "WLB"], pool="qrels")
    want = _bounds(union, "blank", measures)
    for run in ("bm25.run", "bm25_bert_zs.run"):
        assert np.allclose(_bounds(plus, run, measures), want, rtol=1e-12, atol=1e-12), run
    E = lambda ev, run: np.array([ev.per_query[run][f"E({m})"] for m in measures])  # noqa: E731
    assert np.all(E(plus, "bm25.run") < E(judged, "bm25.run") + 1e-15) and not np.allclose(E(plus, "bm25.run"),
                                                                                          E(judged, "bm25.run"))


def test_a_candidate_file_is_every_run_s_pool(tmp_path, capsys):
    """--pool FILE --pool-depth D: each query's top D documents of FILE, for every run: bm25_bert_zs's
    bounds are bm25's own under --pool run (its top 100, the whole file); a query FILE lacks gets an
    empty pool and one note; a --pool that is neither a kind nor a file is refused (exit 2)."""
    from conftest import invoke

    measures = ["nDCG@10", "AP"]
    own = ue.evaluate(EX_QRELS, EX_RUNS[:1], measures, ["E", "IUB", "WLB"], pool="run")
    cand = ue.evaluate(EX_QRELS, EX_RUNS, measures, ["E", "IUB", "WLB"], pool=EX_RUNS[0], pool_depth=100)
    for run in ("bm25.run", "bm25_bert_zs.run"):
        assert np.array_equal(_bounds(cand, run, measures), _bounds(own, "bm25.run", measures)), run
    top5 = ue.evaluate(EX_QRELS, EX_RUNS[1:], ["P@10"], ["E"], pool=EX_RUNS[0], pool_depth=5)
    assert np.all(np.asarray(top5.per_query["bm25_bert_zs.run"]["E(P@10)"]) <= 0.5 + 1e-15)  # 5 candidates of 10 ranks
    run = read_run(EX_RUNS[0])
    lacking = tmp_path / "some.run"
    kept = run[~run.qid.isin(sorted(run.qid.unique())[:3])]
    lacking.write_text("".join(f"{q} Q0 {d} 1 {s} t\n" for q, d, s in kept.itertuples(index=False)))
    notes = []
    ev = ue.evaluate(EX_QRELS, EX_RUNS[1:], ["AP"], ["E", "EM"], pool=str(lacking), warn=notes.append)
    assert sum(f"{lacking}: no candidates for 3 of 50 queries" in n for n in notes) == 1, notes
    first = sorted(run.qid.unique())[:3]
    queries = ev.queries["bm25_bert_zs.run"]
    assert all(ev.per_query["bm25_bert_zs.run"]["E(AP)"][queries.index(q)] == 0 for q in first)
    bad = invoke("--pool", "qrelz", EX_QRELS, EX_RUNS[0])
    assert bad.exit_code == 2 and "'qrelz' is no file: give run, qrels, union, qrels+N" in bad.output
