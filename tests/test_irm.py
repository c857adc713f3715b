"""Our measures as ir_measures objects: through ir_measures' own API (calc_aggregate, iter_calc, calc,
evaluator) the values equal the command line's ``-f tsv -q`` output to the last digit, on the shared
DL-HARD and Robust 2003 data; and PyTerrier's ``pt.Experiment`` reports them."""
from __future__ import annotations

import io
import warnings

import ir_measures
import pandas as pd
import pytest
from click.testing import CliRunner

from ulnorm_eval.cli.main import main
from ulnorm_eval.irm import AP, E, IUB, P, RBP, UL1, UL2, WLB, measure, nDCG

NAMES = ["nDCG@10", "UL2(nDCG@10)", "UL1(nDCG@10)", "E(AP)", "IUB(AP)", "WLB(AP)", "UL2(AP)", "P@10",
         "UL2(RBP(p=0.9))"]


def objects():
    return [nDCG@10, UL2(nDCG@10), UL1(nDCG)@10, E(AP), IUB(AP), WLB(AP), UL2(AP), P@10, UL2(RBP(p=0.9))]


def cli_values(qrels, run, names, *extra) -> pd.DataFrame:
    args = ["-f", "tsv", "-q", "--norm", "none", *extra] + [x for n in names for x in ("-m", n)] + [str(qrels), str(run)]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    return pd.read_csv(io.StringIO(res.stdout), sep="\t", dtype={"query": str}).set_index("query")


def frames(qrels, run):
    q = pd.DataFrame(ir_measures.read_trec_qrels(str(qrels)))
    r = pd.DataFrame(ir_measures.read_trec_run(str(run)))
    return q, r


def test_str_is_the_canonical_name():
    assert [str(m) for m in objects()] == NAMES
    assert str(nDCG(dcg="exp-log2")@10) == "nDCG(dcg='exp-log2')@10"
    assert str(UL2(ir_measures.ERR@10)) == "UL2(ERR@10)"
    assert measure("ndcg_cut.10") == nDCG@10 and measure("UL2(AP)") == UL2(AP) and measure("map") == AP
    assert UL2(nDCG)@10 == UL2(nDCG@10) and hash(UL2(nDCG)@10) == hash(UL2(nDCG@10))


@pytest.mark.parametrize("run", ["bm25.run.gz", "bm25_rm3_t5_zs.run.gz"])
def test_dlhard_calc_aggregate_and_iter_calc_equal_the_cli(shared, run):
    d = shared / "dlhard-passage"
    expected = cli_values(d / "qrels.txt", d / "runs" / run, NAMES)
    q, r = frames(d / "qrels.txt", d / "runs" / run)
    agg = ir_measures.calc_aggregate(objects(), q, r)
    per = list(ir_measures.iter_calc(objects(), q, r))
    assert {str(m): v for m, v in agg.items()} == expected.loc["all"].drop("run").to_dict()
    got = pd.DataFrame([(m.query_id, str(m.measure), m.value) for m in per], columns=["query", "measure", "value"])
    got = got.pivot(index="query", columns="measure", values="value")
    want = expected.drop(index="all").drop(columns="run")
    assert len(want) == 50
    pd.testing.assert_frame_equal(got.loc[want.index, NAMES], want[NAMES], check_exact=True, check_names=False)


def test_robust03_runs_equal_the_cli(shared):
    d = shared / "robust03"
    names = ["AP", "UL2(AP)", "E(AP)", "nDCG@10", "UL2(nDCG@10)"]
    objs = [AP, UL2(AP), E(AP), nDCG@10, UL2(nDCG@10)]
    q = pd.DataFrame(ir_measures.read_trec_qrels(str(d / "qrels.txt")))
    ev = ir_measures.evaluator(objs, q)  # one evaluator, many runs: ir_measures' way
    runs = sorted((d / "runs").iterdir())[:4]
    for run in runs:
        expected = cli_values(d / "qrels.txt", run, names)
        r = pd.DataFrame(ir_measures.read_trec_run(str(run)))
        agg = ev.calc_aggregate(r)
        assert {str(m): v for m, v in agg.items()} == expected.loc["all"].drop("run").to_dict(), run.name
    # per query, for the last run: ir_measures' iter_calc on the same evaluator
    per = pd.DataFrame([(m.query_id, str(m.measure), m.value) for m in ev.iter_calc(r)],
                           columns=["query", "measure", "value"]).pivot(index="query", columns="measure", values="value")
    want = expected.drop(index="all").drop(columns="run")
    assert len(want) == 100
    pd.testing.assert_frame_equal(per.loc[want.index, names], want[names], check_exact=True, check_names=False)


def test_a_query_the_run_missed_is_scored_like_the_cli(caplog):
    """qrels query 2 is absent from the run: scored 0 (UL2 of it from its E and IUB), not ir_measures' default."""
    q = pd.DataFrame({"query_id": ["1", "1", "1", "2", "2"], "doc_id": ["a", "b", "c", "a", "d"],
                      "relevance": [1, 0, 2, 1, 0]})
    r = pd.DataFrame({"query_id": ["1", "1", "1", "3"], "doc_id": ["b", "a", "c", "x"], "score": [3.0, 2.0, 2.0, 1.0]})
    import logging
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning at all: the notes are log records
        with caplog.at_level(logging.WARNING, logger="ulnorm_eval"):
            per = {(m.query_id, str(m.measure)): m.value for m in ir_measures.iter_calc([AP, E(AP)], q, r)}
    # each note once, not once per measure (2 measures here)
    assert [rec.getMessage() for rec in caplog.records if rec.name == "ulnorm_eval"] == [
        "run: 1 of 2 qrels queries have no ranked documents and score 0 (--run-queries-only leaves them out)",
        "run: 1 run queries are not in the qrels and were ignored"]
    # query 1: ranking b(0), c(2), a(1) (the tie a/c broken by docid descending): AP = (1/2 + 2/3) / 2
    assert per[("1", "AP")] == (1 / 2 + 2 / 3) / 2
    assert per[("2", "AP")] == 0.0
    # the default pool is the judged documents and 1,000 unjudged ones, whatever the run retrieved: query 2,
    # which the run did not answer, keeps its E, a relevant document among 1,002: E[AP] = H_1002 / 1002
    assert per[("2", "E(AP)")] == pytest.approx(sum(1 / i for i in range(1, 1003)) / 1002, rel=1e-12)
    assert set(per) == {(qid, m) for qid in "12" for m in ("AP", "E(AP)")}


def test_incomplete_objects_are_refused_clearly():
    with pytest.raises(ValueError, match="needs a cutoff"):
        ir_measures.calc_aggregate([P], pd.DataFrame({"query_id": ["1"], "doc_id": ["a"], "relevance": [1]}),
                                   pd.DataFrame({"query_id": ["1"], "doc_id": ["a"], "score": [1.0]}))
    with pytest.raises(TypeError, match="wrap a measure first"):
        UL2 @ 10
    with pytest.raises(ValueError, match="prior runs"):
        measure("NRG(nDCG@10)")


def test_pyterrier_experiment_reports_them(shared):
    """pt.Experiment on result DataFrames (no Java is started): its means and per-query values are ours."""
    import pyterrier as pt
    d = shared / "dlhard-passage"
    q, _ = frames(d / "qrels.txt", d / "runs" / "bm25.run.gz")
    qrels = q.rename(columns={"query_id": "qid", "doc_id": "docno", "relevance": "label"})
    names = ["bm25.run.gz", "bm25_rm3.run.gz"]
    runs = [frames(d / "qrels.txt", d / "runs" / n)[1].rename(columns={"query_id": "qid", "doc_id": "docno"})
            for n in names]
    topics = pd.DataFrame({"qid": sorted(qrels["qid"].unique()), "query": "unused"})
    metrics = [nDCG@10, UL2(nDCG@10), E(AP)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = pt.Experiment(runs, topics, qrels, eval_metrics=metrics, names=names, baseline=0)
        perq = pt.Experiment(runs, topics, qrels, eval_metrics=metrics, names=names, perquery=True)
    for n in names:
        expected = cli_values(d / "qrels.txt", d / "runs" / n, [str(m) for m in metrics])
        row = table.set_index("name").loc[n]
        # pt.Experiment averages the per-query values itself: the command line's 'all' row, every variant's
        # the mean of its per-query values
        assert {str(m): row[str(m)] for m in metrics} == expected.loc["all"].drop("run").to_dict()
        got = perq[perq["name"] == n].pivot(index="qid", columns="measure", values="value")
        want = expected.drop(index="all").drop(columns="run")
        pd.testing.assert_frame_equal(got.loc[want.index, want.columns], want, check_exact=True, check_names=False)
    # the baseline comparison pt.Experiment adds (paired t-test on our per-query values) is there
    assert "UL2(nDCG@10) p-value" in table.columns
    assert not pt.java.started()


def test_pytrec_eval_dicts_through_ir_measures(caplog):
    """The default pool, each query's judged documents and 1,000 unjudged ones: q1: d1 (relevant) first: AP 1;
    one relevant document among 1,002: E[AP] = H_1002/1002, IUB 1: UL2 = 1.  q2: d3 second: AP 1/2 above
    E = H_1001/1001: UL2 = (1/2 - E)/(1 - E).  The aggregate is the command line's 'all' row, the mean of the
    two.  A run ranking d3 alone for q2: AP 1, UL2 1, whatever else the run retrieved (no undefined query:
    the pool is not the run's)."""
    import logging

    qrels = {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}}
    run = {"q1": {"d1": 1.2, "d2": 0.4}, "q2": {"d4": 0.9, "d3": 0.1}}
    agg = ir_measures.calc_aggregate([AP, UL2(AP)], qrels, run)
    e2 = sum(1 / i for i in range(1, 1002)) / 1001
    assert agg == {AP: 0.75, UL2(AP): pytest.approx((1 + (0.5 - e2) / (1 - e2)) / 2, rel=1e-12)}
    per = {m.query_id: m.value for m in ir_measures.iter_calc([UL2(AP)], qrels, run)}
    assert per == {"q1": 1.0, "q2": pytest.approx((0.5 - e2) / (1 - e2), rel=1e-12)}
    alone = {"q1": {"d1": 1.2, "d2": 0.4}, "q2": {"d3": 0.1}}
    with caplog.at_level(logging.WARNING, logger="ulnorm_eval"):
        agg = ir_measures.calc_aggregate([AP, UL2(AP)], qrels, alone)
    assert not any("undefined" in rec.getMessage() for rec in caplog.records)
    assert agg == {AP: 1.0, UL2(AP): 1.0}


def test_our_AP_equals_ir_measures_AP_as_documented():
    """ir_measures compares measures by name and parameters: ulnorm_eval.irm.AP == ir_measures.AP, so a dict
    holding both keeps one key (the module's docstring and docs/python.md say so: pass one of them)."""
    import ulnorm_eval.irm as irm

    assert AP == ir_measures.AP and hash(AP) == hash(ir_measures.AP)
    assert len({AP: 1, ir_measures.AP: 2}) == 1
    doc = " ".join(irm.__doc__.split())
    assert "``ulnorm_eval.irm.AP`` is our AP and ``ir_measures.AP`` is" in doc and "compare equal" in doc
