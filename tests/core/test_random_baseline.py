"""What EM's 'all' row and its "EM vs random" interval say on real runs under the defaults (--pool
qrels+1000, E and EM, the 'all' row mean EM: docs/bounds.md, "The decision", "Which 'all' row" and "How
far from random: the interval").

On Robust 2003 and DL-HARD: the runs are above 0 and the reversals of runs of 1,000 documents below,
with their randomisation intervals; random rankings of the pool (uniformly random orderings, seeded
apart from the null) hold 0 in their interval in at least 93% of 400 draws per measure (95% exactly,
by construction: the reduced version of benchmarks/random_intervals.py); the pipeline gives a random
ranking written as a run the interval computed directly; the stderr note agrees with the interval.
Also: every 'all' row is the mean of its per-query column; the note when E beats the value on most
queries, and only then; LETOR reads the same under every pool; the table, JSON and --summary-md carry
the interval and the trec/tsv formats do not; --pool qrels+N and --pool FILE.
"""
from __future__ import annotations

import gzip

import numpy as np
import pandas as pd
import pytest

import ulnorm_eval as ue
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


class RandomRankings:
    """Random rankings of a collection's default pool (qrels+1000) and their "EM vs random" intervals,
    computed through the pipeline's functions on the values a random ordering would have
    (pipeline.blocks.random_intervals; the draws: core.expectations.random_orderings, seeded apart from
    the null's): benchmarks/random_intervals.py and the tests below."""

    def __init__(self, qrels_path: str, measures):
        from ulnorm_eval.api import to_qrels
        from ulnorm_eval.core import expectations as ex
        from ulnorm_eval.core.kernels import Level
        from ulnorm_eval.pipeline.blocks import shared_pool
        from ulnorm_eval.pipeline.ordering import judgements, natural_order, qrels_queries

        self.qrels_path, self.measures = qrels_path, list(measures)
        self.qrels = to_qrels(qrels_path)
        self.qids = natural_order(qrels_queries(self.qrels))
        self.J = judgements(self.qrels, self.qids)
        self.options = Options(random_intervals=True)
        self.level = Level.of(self.options, trec_nan=False)
        self.pool = shared_pool(self.qrels, self.options, self.J)
        self.bounds = {m: [f(self.pool, self.J, parse(m).measure, self.level) for f in (ex.ideal, ex.expectation, ex.worst)]
                       for m in self.measures}

    def values(self, m: str, A) -> tuple:
        """(values, mean) of EM(m) for a run whose per-query values of m are ``A``."""
        from ulnorm_eval.core.normalise import em

        meas = parse(m).measure
        I, E, W = self.bounds[m]
        per, undefined = em(A, I, E, W)
        per = np.where(undefined, 0.0, per)
        values = {Metric(meas): A, Metric(meas, "IUB"): I, Metric(meas, "E"): E, Metric(meas, "WLB"): W,
                  Metric(meas, "EM"): per}
        return values, {Metric(meas, "EM"): float(np.mean(per))}

    def interval(self, m: str, A) -> tuple:
        from ulnorm_eval.pipeline.blocks import random_intervals

        values, mean = self.values(m, A)
        (got,) = random_intervals(list(mean), values, mean, self.qids, self.options, self.qrels).values()
        return got

    def null(self) -> None:
        """Draw the null of every measure (kept on the qrels: what a command draws once)."""
        for m in self.measures:
            self.interval(m, self.bounds[m][1])

    def intervals(self, m: str, trials: int, seed: int) -> list:
        """The intervals of ``trials`` random orderings of every query's pool, drawn with ``seed``."""
        from ulnorm_eval.core.draws import Keys
        from ulnorm_eval.core.expectations import random_orderings

        (A,) = random_orderings(self.pool, self.J, [parse(m).measure], self.level, trials, Keys(seed, self.J.qids))
        return [self.interval(m, row) for row in A]

    def runs(self, count: int, seed: int) -> dict:
        """``count`` random rankings as runs: each query's judged documents and 1,000 unjudged ones in a
        uniformly random order (numpy, seeded)."""
        rng = np.random.default_rng(seed)
        judged = pd.read_csv(self.qrels_path, sep=r"\s+", header=None, dtype=str, usecols=[0, 2])
        out = {}
        for k in range(count):
            parts = []
            for qid, docs in judged.groupby(0)[2]:
                names = np.concatenate([docs.to_numpy(), [f"~u{j}" for j in range(1000)]])
                parts.append(pd.DataFrame({"qid": qid, "docno": names, "score": rng.permutation(len(names)).astype(float)}))
            out[f"random{k}"] = pd.concat(parts, ignore_index=True)
        return out

    def check_pipeline(self, count: int, seed: int) -> float:
        """The largest difference between ulnorm_eval.evaluate's interval of ``count`` random rankings
        written as runs and the one computed here from their values."""
        ev = ue.evaluate(self.qrels_path, self.runs(count, seed), self.measures, ["E", "EM"], random_intervals=True)
        worst = 0.0
        for rr in ev.runs:
            for m in self.measures:
                em = next(x for x in ev.metrics if str(x) == f"EM({m})")
                want = self.interval(m, np.asarray(rr.values[Metric(parse(m).measure)]))
                worst = max(worst, *(abs(a - b) for a, b in zip(rr.interval[em], want)))
        return worst


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
    assert len(runs) == 3 and all(r.groupby("qid").size().min() == 1000 for r in runs.values())
    return str(d / "qrels.txt"), runs


def _ci(result, name, label):
    """The "vs random" interval of the 'all' row of ``label`` (e.g. 'EM(AP)') for run ``name``."""
    rr = next(r for r in result.runs if r.name == name)
    return next(ci for m, ci in rr.interval.items() if str(m) == label)


def test_runs_above_reversals_below(collection):
    """The defaults call these published runs (1,000 documents a query) better than random and their
    reversals worse: mean EM above 0.1 and its interval wholly above 0 for the runs, mean EM below 0
    and its interval wholly below 0 for their reversals; each interval holds its own 'all' row
    minus at most the spread of a random ordering's (|mean EM of random| <= 0.05 here)."""
    qrels, runs = collection
    ev = ue.evaluate(qrels, runs, MEASURES + ["RBP(p=0.8)"], variants=["EM"], random_intervals=True)
    rev = ue.evaluate(qrels, {n: reversal(r) for n, r in runs.items()}, MEASURES + ["RBP(p=0.8)"], variants=["EM"],
                      random_intervals=True)
    for n in runs:
        for m in MEASURES + ["RBP(p=0.8)"]:
            mean, lo, hi = ev.means[n][f"EM({m})"], *_ci(ev, n, f"EM({m})")
            assert mean > 0.1 and 0 < lo < mean + 0.05 and mean - 0.05 < hi, (n, m, mean, lo, hi)
            mean, lo, hi = rev.means[n][f"EM({m})"], *_ci(rev, n, f"EM({m})")
            assert mean < 0 and hi < 0 and mean - 0.05 < hi and lo < mean + 0.05, (n, m, mean, lo, hi)


def test_robust_best_runs_by_published_map_are_above_random(shared):
    """The three best of the shared runs by the track's published MAP (published_scores.tsv lists more
    runs than the shared data holds: pircRBa2 leads it; of ours pircRBa1, aplrob03a, uwmtCR0): their
    "EM vs random" interval lies above 0 on both measures."""
    d = shared / "robust03"
    pub = pd.read_csv(d / "published_scores.tsv", sep="\t")
    have = {p.name[len("input."):-len(".gz")] for p in (d / "runs").glob("input.*.gz")}
    ranked = pub[pub.measure == "map"].sort_values("value", ascending=False).run.tolist()
    # published names are cut to 10 characters (oce03noXbm): matched by prefix, as benchmarks/pool_study.py
    top = list(dict.fromkeys(h for r in ranked for h in sorted(have) if h.startswith(r) or r.startswith(h)))[:3]
    assert top == ["pircRBa1", "aplrob03a", "uwmtCR0"]
    ev = ue.evaluate(str(d / "qrels.txt"), {n: read_run(d / "runs" / f"input.{n}.gz") for n in top}, MEASURES,
                     random_intervals=True)
    for n in top:
        for m in MEASURES:
            assert _ci(ev, n, f"EM({m})")[0] > 0, (n, m)


@pytest.fixture(scope="module", params=["robust03", "dlhard"])
def random_rankings(request, shared):
    path = {"robust03": "robust03/qrels.txt", "dlhard": "dlhard-passage/qrels.txt"}[request.param]
    return RandomRankings(str(shared / path), ["nDCG@10", "AP", "RBP(p=0.8)"])


def test_random_rankings_are_not_told_from_random(random_rankings):
    """400 random orderings of the pool per measure (seed 47; the null: seed 0, 999 orderings): the
    interval holds 0 for at least 372 (93%) of them.  A random ranking is exchangeable with the null's
    orderings, so the share is 95% exactly in expectation, whatever the measure's skew (binomial: 380 of
    400, sd 4.4); the topic bootstrap it replaced held 0 for 83% of DL-HARD's AP rankings (docs/bounds.md).
    The interval's width is the spread of a random ordering's mean EM: under 0.1 here."""
    rr = random_rankings
    for m in rr.measures:
        spans = rr.intervals(m, 400, seed=47)
        held = sum(lo <= 0 <= hi for lo, hi in spans)
        assert held >= 372, (m, held)
        assert all(0 < hi - lo < 0.1 for lo, hi in spans), m


def test_a_random_ranking_written_as_a_run_gets_the_same_interval_and_note(shared):
    """Random rankings of DL-HARD's pool written as runs (its judged passages and 1,000 unjudged ones,
    shuffled): ulnorm_eval.evaluate's interval is the one computed from their values (to 1e-12); E beats
    their value on most queries, and the stderr note's verdict per measure agrees with the interval."""
    rr = RandomRankings(str(shared / "dlhard-passage" / "qrels.txt"), MEASURES)
    assert rr.check_pipeline(3, seed=48) < 1e-12
    ev = ue.evaluate(rr.qrels_path, rr.runs(3, seed=49), MEASURES, random_intervals=True)
    for run in ev.runs:
        (note,) = [n for n in run.notes if "E beats the value on most queries" in n]
        for m in MEASURES:
            lo, hi = rr.interval(m, np.asarray(run.values[Metric(parse(m).measure)]))
            word = "not distinguishable from random" if lo <= 0 <= hi else "worse than random" if hi < 0 else \
                "better than random"
            assert f"{m} {word}, [{lo:.4f}, {hi:.4f}]" in note, (run.name, m, note)
        assert "the 95% interval of EM's 'all' row minus a random ordering's" in note
    # an output that prints no interval (trec, tsv; the library by default) draws no null: the note's
    # verdict is then the topics' bootstrap of mean A - mean E, and says so
    plain = ue.evaluate(rr.qrels_path, rr.runs(1, seed=49), MEASURES)
    assert "(the 95% interval of mean value - mean E over the topics)" in next(
        n for n in plain.runs[0].notes if "E beats the value on most queries" in n)


def test_every_all_row_is_the_mean_of_its_per_query_column(shared):
    """The 'all' row of every variant is the mean of its per-query values (undefined ones 0 under
    --undefined zero; left out under skip), the number compare averages and tests (docs/bounds.md,
    "Which 'all' row"); a random ordering averages 0 on EM, not on UL2 (below: the mean of per-query UL2 of
    a random ranking is below 0)."""
    d = shared / "dlhard-passage"
    run = str(d / "runs" / "bm25.run.gz")
    variants = ["E", "IUB", "WLB", "UL1", "UL2", "MM", "EB", "EM", "UEW"]
    for undefined in ("zero", "skip"):
        ev = ue.evaluate(str(d / "qrels.txt"), run, MEASURES, variants=variants, undefined=undefined, pool="qrels")
        for m in ev.metrics:
            column = np.asarray(ev.runs[0].values[m], dtype=np.float64)
            assert ev.runs[0].mean[m] == pytest.approx(np.nanmean(column), rel=1e-12, abs=1e-15), (undefined, m)
        assert any(ev.runs[0].undefined.values())
    rr = RandomRankings(str(d / "qrels.txt"), ["AP"])
    from ulnorm_eval.core.draws import Keys
    from ulnorm_eval.core.expectations import random_orderings
    from ulnorm_eval.core.normalise import em, ul2

    (A,) = random_orderings(rr.pool, rr.J, [parse("AP").measure], rr.level, 200, Keys(5, rr.J.qids))
    I, E, W = rr.bounds["AP"]
    means = {f.__name__: np.nanmean(np.where(f(A, I, E, W)[1], 0.0, f(A, I, E, W)[0]), axis=1) for f in (em, ul2)}
    assert abs(means["em"].mean()) < 4 * means["em"].std(ddof=1) / np.sqrt(200)
    assert means["ul2"].max() < 0


def test_streamed_and_whole_give_the_same_all_row(shared, tmp_path):
    """The 'all' row of a normalisation needs A, E, IUB and WLB of every query: streamed in blocks of
    queries (the default for a file) or read whole, the same numbers and intervals to the last bit."""
    from ulnorm_eval.pipeline.evaluate import load_qrels, resolve_metrics
    from ulnorm_eval.pipeline.orchestrator import evaluate_runs

    d = shared / "dlhard-passage"
    q = load_qrels(str(d / "qrels.txt"))
    metrics = resolve_metrics(MEASURES, ["EM", "MM"])
    opts = Options(random_intervals=True)
    (a,) = evaluate_runs(q, [str(d / "runs" / "bm25_rm3.run.gz")], metrics, opts, stream=True, block_bytes=20_000)
    (b,) = evaluate_runs(q, [str(d / "runs" / "bm25_rm3.run.gz")], metrics, opts, stream=False)
    assert set(a.values) == set(metrics) == set(b.values)  # the parts are not in the result
    assert a.interval == b.interval and len(a.interval) == 4
    for m in metrics:
        assert a.mean[m] == b.mean[m]
        assert np.array_equal(a.values[m], b.values[m], equal_nan=True)


def _note(A, E, pool="run"):
    m = parse("AP")
    values = {m: np.asarray(A, float), Metric(m.measure, "E"): np.asarray(E, float)}
    return below_random_note("r", [Metric(m.measure, "EM")], values, Options(pool=pool))


def test_below_random_note_only_when_most_queries_have_e_above():
    """More than half of the queries with E > A: one line naming the count, the pool's question and
    the other --pool; exactly half, or E = A (a tie is not 'above'), or fewer: nothing."""
    note = _note([0.1, 0.2, 0.3, 0.2], [0.5, 0.5, 0.1, 0.4])  # 4 queries: the fewest a 95% interval is taken from
    assert note.startswith("r: E beats the value on most queries (AP on 3 of 4): there a shuffle of the run's own "
                           "ranked documents (--pool run) scores better than the run, so per-query EM reads worse "
                           "than random there; over all queries (the 95% interval of mean value - mean E over the "
                           "topics): AP not distinguishable from random, [")
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
    metrics = [Metric(m.measure, "EM")]

    def note(A, E):
        values = {m: np.asarray(A, float), Metric(m.measure, "E"): np.asarray(E, float)}
        return below_random_note("r", metrics, values, Options(pool="run"))

    assert note([0.1, 0.2, 0.3], [0.5, 0.5, 0.1]) is None  # less residual than random on 2 of 3: better
    text = note([0.5, 0.5, 0.5, 0.5], [0.1, 0.1, 0.2, 0.1])
    assert text.startswith("r: E beats the value on most queries (RBP_resid(p=0.9) on 4 of 4, lower is better)")
    assert "RBP_resid(p=0.9) worse than random, [" in text
    # the same values for AP (higher is better): better than random, no note
    ap = parse("AP")
    assert below_random_note("r", [Metric(ap.measure, "EM")], {ap: np.asarray([0.5] * 4), Metric(ap.measure, "E"):
                             np.asarray([0.1, 0.1, 0.2, 0.1])}, Options()) is None


def test_below_random_note_on_real_runs(shared, capsys):
    """A reversed DL-HARD run gets the note on stderr, the run itself does not (the command line)."""
    from ulnorm_eval.cli.main import main

    d = shared / "dlhard-passage"
    run = d / "runs" / "bm25.run.gz"
    ev = ue.evaluate(str(d / "qrels.txt"), {"fwd": read_run(run), "rev": reversal(read_run(run))}, MEASURES)
    hints = [n for n in ev.notes if "E beats the value on most queries" in n]
    assert len(hints) == 1 and hints[0].startswith("rev: E beats the value on most queries (nDCG@10 on ")
    assert "nDCG@10 worse than random, [" in hints[0] and "AP worse than random, [" in hints[0]
    with pytest.raises(SystemExit) as ex:
        main(["eval", "-m", "nDCG@10", str(d / "qrels.txt"), str(run)], standalone_mode=True)
    assert ex.value.code == 0
    assert "E beats the value" not in capsys.readouterr().err


def test_letor_reads_the_same_under_every_pool(shared, tmp_path):
    """LETOR: the score file ranks every candidate, all of them judged, so the run's documents are
    the judged ones: the default (qrels+1000, which adds no placeholder on LETOR data: the candidates),
    --pool run, qrels and union give the same numbers, and the caption says --pool qrels."""
    d = shared / "letor" / "lightgbm_lambdarank"
    from sklearn.datasets import load_svmlight_file

    X, _ = load_svmlight_file(str(d / "rank.test"))
    scores = np.asarray(X[:, 0].todense()).ravel() + np.arange(X.shape[0]) * 1e-6
    f = str(tmp_path / "scores.txt")
    np.savetxt(f, scores)
    got = [ue.evaluate(str(d / "rank.test"), f, MEASURES, variants=["E", "IUB", "EM"], **kw)
           for kw in ({}, {"pool": "run"}, {"pool": "qrels"}, {"pool": "union"})]
    assert got[0].options.pool == "qrels" and got[0].runs[0].mean[got[0].metrics[2]] > 0
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
    """The table's caption: what "random" is, in words, and where the default departs from the papers
    (their random ranking shuffles a query's candidates; their average is UL2's); what the 'all' row
    is: the mean of per-query values (mean EM), 0 for a random ordering on EM, not on UL2."""
    text = _cli("eval", "-f", "table", "-m", "AP", QRELS, RUN)
    assert ("random = a shuffle of the judged documents and 1,000 unjudged ones (--pool qrels+1000; Karmaker & Feng "
            "2022 shuffle a query's candidates, --pool FILE, which an ad hoc run has none of)") in text
    assert ("'all' row of EM: the mean of the per-query values over 50 queries (mean EM), as Karmaker & Feng 2022 "
            "average UL2; a random ordering of the pool averages 0 on EM, query by query (EM = UL2 at and above E; "
            "below E, (A-E)/(I-E) where UL2 divides by E) (docs/bounds.md, \"Which 'all' row\")") in text
    text = _cli("eval", "-f", "table", "-m", "AP", "--pool", "qrels", "--norm", "ul2", QRELS, RUN)
    assert "random = a shuffle of the judged documents (--pool qrels)" in text
    assert ("'all' row of UL2: the mean of the per-query values over 50 queries (mean UL2), as Karmaker & Feng 2022 "
            "average UL2; not on UL2, whose per-query map bends at E: a random ordering's many small losses "
            "outweigh its few large gains") in text


def test_legend_defines_only_what_is_on_screen_once():
    """The defaults: A, E, I defined once each (I is used by EM's formula), no W or WLB; E's
    definition is not repeated as a variant formula; nrg shows none of the bounds' definitions nor
    a pool; a plain table has no legend at all."""
    text = _cli("eval", "-f", "table", "-m", "AP", QRELS, RUN)
    legend = text.strip().split("\n")[-1]
    assert legend == ("A = the value; E = the expected value of a random ranking; I = IUB, the best ordering's "
                      "value; EM = (A-E)/(I-E) (expectation-max; UL2 at and above E)")
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
    """--summary-md: the pool in words and the 'all' row rule, as the caption."""
    md = tmp_path / "s.md"
    _cli("eval", "-m", "AP", "--summary-md", str(md), QRELS, RUN)
    text = md.read_text()
    assert "- random = a shuffle of the judged documents and 1,000 unjudged ones (--pool qrels+1000;" in text
    assert "the mean of the per-query values over 50 queries (mean EM)" in text


def test_table_json_and_summary_carry_the_interval(tmp_path):
    """The README's table (bm25_bert_zs): the table's 'EM vs random' column holds the API's interval;
    --pool qrels on it: 'n.s.' where the interval holds 0 and not where it lies below; the caption says
    what the interval is; with colour only the EM whose interval lies below 0 is bold red; JSON carries
    [lo, hi] per measure; --summary-md puts it beside the mean; tsv and trec output are unchanged (no
    interval rows or columns: awk users' pipes)."""
    import json

    from ulnorm_eval.render.table import format_table

    run = "examples/runs/bm25_bert_zs.run.gz"
    ms = ["AP", "RBP(p=0.8)"]
    ev = ue.evaluate(QRELS, run, ms, variants=["UL2"], pool="qrels", random_intervals=True)
    name = ev.runs[0].name
    ap, rbp = _ci(ev, name, "UL2(AP)"), _ci(ev, name, "UL2(RBP(p=0.8))")
    assert ap[1] < 0 and rbp[1] < 0
    text = _cli("eval", "-f", "table", "--pool", "qrels", "--norm", "ul2", "-m", "AP", "-m", "RBP(p=0.8)", QRELS, run)
    rows = {line.split()[0]: line for line in text.splitlines() if line.split()[:1] in (["AP"], ["RBP(p=0.8)"])}
    assert "UL2 vs random" in text.splitlines()[1]
    assert rows["AP"].endswith(f"[{ap[0]:.4f}, {ap[1]:.4f}]")
    assert ("UL2 vs random: the 95% randomisation interval of the 'all' row minus a random ordering's (999 random "
            "orderings of each query's pool, the same for every run, --seed 0; Davison & Hinkley 1997); one that "
            "contains 0 (n.s.): the run is not significantly different from a random ordering of the pool on these "
            "queries; one wholly below 0: worse than random\n") in text
    colored = format_table(ev, color=True)
    red = "\x1b[1;31m"
    assert f"{red}{ev.means[name]['UL2(AP)']:.4f}" in colored
    default = ue.evaluate(QRELS, run, ms, random_intervals=True)
    em = _ci(default, name, "EM(AP)")
    assert 0 < em[0] < default.means[name]["EM(AP)"] < em[1]
    assert f"{red}{default.means[name]['EM(AP)']:.4f}" not in format_table(default, color=True)
    doc = json.loads(_cli("eval", "-f", "json", "-m", "AP", "-m", "RBP(p=0.8)", QRELS, run))
    assert doc["runs"][0]["interval"] == {"EM(AP)": list(em), "EM(RBP(p=0.8))": list(_ci(default, name, "EM(RBP(p=0.8))"))}
    md = tmp_path / "s.md"
    _cli("eval", "-m", "AP", "--summary-md", str(md), QRELS, run)
    assert f"| {default.means[name]['EM(AP)']:.4f} [{em[0]:.4f}, {em[1]:.4f}] |" in md.read_text()
    assert "- EM vs random\\: the 95% randomisation interval" in md.read_text()
    tsv = _cli("eval", "-f", "tsv", "-q", "-m", "AP", QRELS, run)
    assert tsv.splitlines()[0] == "run\tquery\tAP\tE(AP)\tEM(AP)" and len(tsv.splitlines()) == 1 + 51
    trec = _cli("eval", "-m", "AP", QRELS, run)
    assert trec == (f"AP\tall\t{default.means[name]['AP']:.4f}\nE(AP)\tall\t{default.means[name]['E(AP)']:.4f}\n"
                    f"EM(AP)\tall\t{default.means[name]['EM(AP)']:.4f}\n")


def test_the_table_reads_a_measure_s_direction_and_an_interval_holding_0_is_not_called_random():
    """-f table: EM of RBP_resid (lower is better) below 0 is the run beating random: not bold red, while
    the same sign on AP is; the caption says which side is worse for it.  An interval that holds 0 is
    marked 'n.s.' (not significantly different), never '≈ random'."""
    from ulnorm_eval.render.table import NEAR_RANDOM, format_table

    ev = ue.evaluate(QRELS, RUN, ["RBP_resid", "AP"], variants=["EM"], random_intervals=True)
    name, red = ev.runs[0].name, "\x1b[1;31m"
    resid, ap = _ci(ev, name, "EM(RBP_resid(p=0.9))"), _ci(ev, name, "EM(AP)")
    assert resid[1] < 0 < ap[0]  # less residual than random: wholly below 0
    colored = format_table(ev, color=True)
    assert f"{red}{ev.means[name]['EM(RBP_resid(p=0.9))']:.4f}" not in colored
    assert "one wholly below 0: worse than random (above 0 for RBP_resid(p=0.9), where lower is better)" in colored
    # worse than random: every query's 1,000 unjudged documents first, its judged ones after them (the bundled
    # run's own reversal, of 100 passages, still ranks relevant ones in the top 100 of 1,000 and more)
    judged = pd.read_csv(QRELS, sep=r"\s+", header=None, dtype=str, usecols=[0, 2], names=["qid", "docno"])
    worst = pd.concat([pd.DataFrame({"qid": q, "docno": [f"~u{j}" for j in range(1000)] + list(g.docno),
                                     "score": -np.arange(1000 + len(g), dtype=float)}) for q, g in judged.groupby("qid")])
    rev = ue.evaluate(QRELS, {"rev": worst}, ["AP"], variants=["EM"], random_intervals=True)
    assert _ci(rev, "rev", "EM(AP)")[1] < 0 and f"{red}{rev.means['rev']['EM(AP)']:.4f}" in format_table(rev, color=True)
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
    assert bad.exit_code == 2 and "Invalid value for '--pool': pool='qrelz': expected 'run', 'qrels'" in bad.output
