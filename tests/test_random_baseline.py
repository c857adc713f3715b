"""What "UL2 < 0" says on real runs under the defaults (docs/bounds.md, "Which pool" and "Which 'all' row").

On Robust 2003 and DL-HARD: a run's reversal is below 0; a seeded shuffle of a run has a mean value
within 0.01 of its mean E under the default pool (--pool run: E is the expectation of exactly that
shuffle), and the 'all' row the table leads with (UL2 of the means) reads about 0 for shuffles: it is
a monotone function of the mean value, 0 at E, so half of the shuffles land on each side and the
median is 0, while the mean of per-query UL2 calls every shuffle far worse than random.  Also: the
'all' row is the formula on the 'all' row of the value, E and IUB; --norm-all per-query is the mean
of per-query values; the stderr note when E is above the value on most queries, and only then;
LETOR (every candidate judged and ranked) reads the same under every pool.
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


def test_runs_above_reversals_below(collection):
    """The defaults call these published runs better than random and their reversals worse, on
    both aggregates of UL2."""
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


def test_shuffles_score_e_and_read_about_zero(collection):
    """12 seeded shuffles of one run.  E: each shuffle's mean value within 3.5 standard errors (of
    the per-query differences A - E) of its mean E, and within 0.01 for AP; averaged over the 12, within
    0.01 for nDCG@10 too (one shuffle's mean nDCG@10 strays up to 0.015 from E on these runs).  The
    'all' row the table leads with, UL2 of the means, is 0 at mean A = mean E and moves with mean A:
    each shuffle's lies within its sampling error of 0 (3.5 standard errors of mean A - mean E, divided
    by mean E below it and mean I - mean E above), while the mean of per-query UL2 is below -0.5 (nDCG@10)
    or -0.1 (AP) for every shuffle: the seeds' average calls a random ranking far worse than random."""
    qrels, runs = collection
    name, run = next(iter(runs.items()))
    shuffles = {f"s{i}": shuffled(run, 100 + i) for i in range(12)}
    ev = ue.evaluate(qrels, shuffles, MEASURES, variants=["E", "IUB", "UL2"])
    pq = ue.evaluate(qrels, shuffles, MEASURES, variants=["UL2"], norm_all="per-query")
    for m in MEASURES:
        gaps = []
        for s in shuffles:
            A, E = ev.per_query[s][m], ev.per_query[s][f"E({m})"]
            d = A - E
            se = d.std(ddof=1) / np.sqrt(len(d))
            gaps.append(d.mean())
            assert abs(d.mean()) <= 3.5 * se, (s, m)
            if m == "AP":
                assert abs(ev.means[s][m] - ev.means[s][f"E({m})"]) < 0.01, (s, m)
            mE, mI = ev.means[s][f"E({m})"], ev.means[s][f"IUB({m})"]
            assert -3.5 * se / mE <= ev.means[s][f"UL2({m})"] <= 3.5 * se / (mI - mE), (s, m)
            assert pq.means[s][f"UL2({m})"] < (-0.5 if m == "nDCG@10" else -0.1), (s, m)
        assert abs(np.mean(gaps)) < 0.01, m


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
    from ulnorm_eval.pipeline.evaluate import evaluate_path, load_qrels, resolve_metrics

    d = shared / "dlhard-passage"
    q = load_qrels(str(d / "qrels.txt"))
    metrics = resolve_metrics(MEASURES, ["UL2", "MM"])
    a = evaluate_path(q, str(d / "runs" / "bm25_rm3.run.gz"), metrics, Options(), stream=True)
    b = evaluate_path(q, str(d / "runs" / "bm25_rm3.run.gz"), metrics, Options(), stream=False)
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
    note = _note([0.1, 0.2, 0.3], [0.5, 0.5, 0.1])
    assert note.startswith("r: E is above the value on most queries (AP on 2 of 3): there a shuffle of the run's own "
                           "ranked documents (--pool run) scores better than the run, so per-query UL2 is negative "
                           "there; over all queries (the 95% interval of mean value - mean E): AP not "
                           "distinguishable from random, [")
    assert note.endswith("]; --pool qrels compares with a shuffle of the judged documents instead "
                         "(docs/bounds.md, \"Which pool\")")
    assert "--pool run compares with a shuffle of the run's own" in _note([0.1, 0.2, 0.3], [0.5, 0.5, 0.1], "qrels")
    assert _note([0.1, 0.2, 0.3, 0.4], [0.5, 0.5, 0.1, 0.1]) is None  # half
    assert _note([0.1, 0.2, 0.3], [0.1, 0.2, 0.1]) is None  # equal is not above
    assert _note([0.6, 0.6, 0.3], [0.5, 0.5, 0.1]) is None


def test_below_random_note_on_real_runs(shared, capsys):
    """A reversed DL-HARD run gets the note on stderr, the run itself does not (the command line)."""
    from ulnorm_eval.cli.main import main

    d = shared / "dlhard-passage"
    run = d / "runs" / "bm25.run.gz"
    ev = ue.evaluate(str(d / "qrels.txt"), {"fwd": read_run(run), "rev": reversal(read_run(run))}, MEASURES,
                     variants=["UL2"])
    hints = [n for n in ev.notes if "E is above the value on most queries" in n]
    assert len(hints) == 1 and hints[0].startswith("rev: E is above the value on most queries (nDCG@10 on ")
    with pytest.raises(SystemExit) as ex:
        main(["eval", "-m", "nDCG@10", str(d / "qrels.txt"), str(run)], standalone_mode=True)
    assert ex.value.code == 0
    assert "E is above the value" not in capsys.readouterr().err


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
    from click.testing import CliRunner

    from ulnorm_eval.cli.main import main

    res = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return res.stdout


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
