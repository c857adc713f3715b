"""trec_eval 10's measures through the command line, against trec_eval's own expected outputs, whole
files, line for line, and DL-HARD's published ``*.run.eval`` files; plus the kernels on hand-computed
cases and ir_measures parity on real runs.

The expected files were made by trec_eval 10.0 with the arguments in ../shared/data/SOURCES.md;
DL-HARD's by trec_eval 9.0.4 (``-l 2 -c -M 1000 -q -m all_trec``, scores read as float32), which
turned recall fractions into counts as (long)(x R + 0.9) (``--trec-version 9``).

Known trec_eval 10 defect: ``rbp`` reads its gain bounds uninitialised (m_rbp.c), so its value
depends on stack garbage; the expected files hold the values of a build whose garbage left binary
gains unscaled.  We initialise the bounds (see core/measures/trec.py's module docstring); every
``rbp`` line of the expected files is reproduced by that reading (checked like any other line).
"""
from __future__ import annotations

import gzip

import numpy as np
import pytest
from click.testing import CliRunner

from ulnorm_eval.cli.main import main
from ulnorm_eval.core import registry
from ulnorm_eval.core.kernels import Judgements, Level, Ranking
from ulnorm_eval.core.measures import compute
from ulnorm_eval.core.measures import trec as tm
from ulnorm_eval.inputs.trec import read_qrels, read_run
from ulnorm_eval.pipeline.ordering import judgements, qrels_queries, rank_run


def cli_lines(*args):
    """``ulnorm-eval --norm none --names trec ARGS`` as (name, qid, value) lines."""
    res = CliRunner().invoke(main, ["eval", "--norm", "none", "--names", "trec", "-f", "trec", *map(str, args)])
    assert res.exit_code == 0, res.output
    return [(a.strip(), b, c) for a, b, c in (ln.split("\t") for ln in res.stdout.splitlines())]


def read_lines(path):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as fh:
        return [(a.strip(), b, c) for a, b, c in (ln.rstrip("\n").split("\t") for ln in fh)]


def assert_same(got, expected):
    bad = [(i, g, e) for i, (g, e) in enumerate(zip(got, expected)) if g != e]
    assert len(got) == len(expected), (len(got), len(expected))
    assert not bad, f"{len(bad)} lines differ, e.g. {bad[:8]}"


# --------------------------------------------------------------------------- trec_eval's own files

MEAS_PARAMS = ["iprec_at_recall..10,.20,.25,.75,.50", "P.5,7,3", "recall.20,2000", "Rprec_mult.5.0,0.2,0.35",
               "utility.2,-1,0,0", "11pt_avg..25,.5,.75", "ndcg.1=3,2=9,4=4.5", "ndcg_cut.10,20,23.4",
               "success.2,5,20"]
CASES = {  # expected file: qrels, run, trec_eval's arguments
    "out.test": ("qrels.test", "results.test", ["-m", "official"]),
    "out.test:with-comments": ("qrels.test.with-comments", "results.test", ["-m", "official"]),
    "out.comment.test": ("qrels.comment.test", "results.comment.test", ["-m", "official"]),
    "out.test.a": ("qrels.test", "results.test", ["-m", "all_trec"]),
    "out.test.aq": ("qrels.test", "results.test", ["-q", "-m", "all_trec"]),
    "out.test.aqc": ("qrels.test", "results.trunc", ["-q", "-c", "-m", "all_trec"]),
    "out.test.aqcM": ("qrels.test", "results.trunc", ["-q", "-c", "-M", "100", "-m", "all_trec"]),
    "out.test.aql": ("qrels.rel_level", "results.test", ["-q", "-l", "2", "-m", "all_trec", "-m", "relstring.20"]),
    "out.test.meas_params": ("qrels.test", "results.test", ["-q"] + [x for m in MEAS_PARAMS for x in ("-m", m)]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_trec_eval_expected_output_whole_file(shared, case):
    qrels, run, args = CASES[case]
    d = shared / "trec_eval_test"
    assert_same(cli_lines(*args, d / qrels, d / run), read_lines(d / case.split(":")[0]))


def test_nosummary_prints_per_query_lines_only(shared):
    d = shared / "trec_eval_test"
    got = cli_lines("-q", "-n", "-m", "all_trec", d / "qrels.test", d / "results.test")
    assert_same(got, [ln for ln in read_lines(d / "out.test.aq") if ln[1] != "all"])


# --------------------------------------------------------------------------- DL-HARD

DLHARD = ["bm25", "bm25_bert_zs", "bm25_rm3", "bm25_rm3_bert_zs", "bm25_rm3_t5_zs", "bm25_t5_zs"]
# bm25_bert_zs.run.eval says runid T5-P, while all 50,000 lines of bm25_bert_zs.run are tagged BERT-P
RUNID_MISLABELLED = {"bm25_bert_zs": "BERT-P"}


@pytest.mark.parametrize("run", DLHARD)
def test_dlhard_published_eval(shared, run):
    d = shared / "dlhard-passage"
    expected = read_lines(d / "runs" / f"{run}.run.eval.gz")
    got = cli_lines("-q", "-l", "2", "-c", "-M", "1000", "--score-precision", "float32", "--trec-version", "9",
                    "-m", "all_trec", d / "qrels.txt", d / "runs" / f"{run}.run.gz")
    # --trec-version 9: trec_eval 9.0.4's all_trec, which had no unj, rbp, rbp_resid (every line compared)
    # trec_eval 9 prints queries in qrels order; compare block by block, every line
    exp_q, got_q = {}, {}
    for ln in expected:
        exp_q.setdefault(ln[1], []).append(ln)
    for ln in got:
        got_q.setdefault(ln[1], []).append(ln)
    assert set(exp_q) == set(got_q)
    if run in RUNID_MISLABELLED:
        exp_q["all"] = [ln if ln[0] != "runid" else ("runid", "all", RUNID_MISLABELLED[run]) for ln in exp_q["all"]]
    for q in exp_q:
        assert_same(got_q[q], exp_q[q])


def test_issue_example_bpref_at_rel_level_2(shared):
    """The issue's number: -l 2 -m Bpref on DL-HARD prints trec_eval's 0.3782 (the published file's)."""
    d = shared / "dlhard-passage"
    got = cli_lines("-l", "2", "-c", "-M", "1000", "--score-precision", "float32", "-m", "Bpref",
                    d / "qrels.txt", d / "runs" / "bm25.run.gz")
    assert got == [("bpref", "all", "0.3782")]
    # the issue's own command: our defaults (every qrels query, double scores, no depth) give the same
    assert cli_lines("-l", "2", "-m", "Bpref", d / "qrels.txt", d / "runs" / "bm25.run.gz") == [("bpref", "all", "0.3782")]


# --------------------------------------------------------------------------- hand-computed cases

def _tiny():
    """qrels: a 2, b 0, c 1, d -1 (pooled, unjudged), e 0, f 1; ranking x a b d c y (x, y not in the qrels)."""
    J = Judgements(["q"], np.zeros(6, np.int64), np.array([2.0, 1.0, 1.0, 0.0, 0.0, -1.0]), 2.0)
    grade = np.array([0.0, 2.0, 0.0, -1.0, 1.0, 0.0])
    judged = np.array([False, True, True, True, True, False])
    return Ranking(np.zeros(6, np.int64), grade, 1, np.arange(1), judged), J


def v(name, rk, J, rel_level=1, num_docs=0, rounding="round", present=None):
    """The first row's value of a measure named in either syntax, through the registry's kernel."""
    m = registry.parse(name).measure
    return float(compute(rk, J, m, Level(rel_level, num_docs, rounding, present))[0])


def test_hand_computed_incomplete_judgements():
    rk, J = _tiny()
    assert tm.relstring(rk, 10) == ["-20.1-"]
    assert v("num_ret", rk, J) == 6 and v("num_rel", rk, J) == 3 and v("num_rel_ret", rk, J) == 2
    assert v("num_nonrel_judged_ret", rk, J) == 1
    assert v("map", rk, J) == pytest.approx((1 / 2 + 2 / 5) / 3, abs=1e-15)
    # bpref: a has no judged nonrelevant above (1); c has b above: 1 - min(1,3)/min(2,3)
    assert v("bpref", rk, J) == pytest.approx((1 + 0.5) / 3, abs=1e-15)
    # infAP: a at j=1 with nothing judged above: 1/2; c at j=4 with r=1, n=1, u=1:
    # 1/5 + (4/5)(3/4)(1+eps)/(2+2eps) = 1/2
    assert v("infAP", rk, J) == pytest.approx((0.5 + 0.5) / 3, abs=1e-15)
    assert v("unj.5", rk, J) == pytest.approx(2 / 5) and v("unj.20", rk, J) == pytest.approx(3 / 20)
    assert v("rbp_resid", rk, J) == pytest.approx(0.9 ** 6 + 0.1 * (1 + 0.9 ** 3 + 0.9 ** 5), abs=1e-15)
    # rbp: grades 0..2 exceed [0, 1], so gain = grade / 2
    assert v("rbp", rk, J) == pytest.approx(0.1 * (0.9 * 1.0 + 0.9 ** 4 * 0.5), abs=1e-15)
    assert v("rbp.p=0.5", rk, J) == pytest.approx(0.5 * (0.5 * 1.0 + 0.5 ** 4 * 0.5), abs=1e-15)
    # utility.1,-1,0,0.5 with -N 100: a=2, b=4, c=1, d=100+2-6-3
    assert v("utility.1,-1,0,0.5", rk, J, num_docs=100) == pytest.approx(2 - 4 + 0.5 * 93)
    assert v("utility.1,-1,0,0.5", rk, J, num_docs=100, present=np.array([False])) == 0.0
    # -l 0: judged grade-0 documents are relevant, unjudged ones never
    assert v("num_rel", rk, J, rel_level=0) == 5 and v("num_rel_ret", rk, J, rel_level=0) == 3
    assert v("P.5", rk, J, rel_level=0) == pytest.approx(3 / 5)


def test_hand_computed_judged_only():
    rk, J = _tiny()
    jo = tm.judged_only(rk)  # a b c
    assert tm.relstring(jo, 10) == ["201"]
    assert v("num_ret", jo, J) == 3 and v("num_nonrel_judged_ret", jo, J) == 1
    assert v("map", jo, J) == pytest.approx((1 + 2 / 3) / 3, abs=1e-15)
    # infAP: a at j=0 scores 1; c at j=2 with r=1, n=1: 1/3 + (2/3)(2/2)(1/2)
    assert v("infAP", jo, J) == pytest.approx((1 + 2 / 3) / 3, abs=1e-12)
    assert v("unj.5", jo, J) == 0.0 and v("rbp_resid", jo, J) == 0.0


def test_iprec_rounding_rules():
    """lround(x R) (trec_eval 10) against (long)(x R + 0.9) (trec_eval 9): R = 3 relevant, x = 0.1
    gives c = 0 (value at the first relevant document) or c = 1; x = 0.5 gives c = 2 either way."""
    J = Judgements(["q"], np.zeros(4, np.int64), np.array([1.0, 1.0, 1.0, 0.0]), 1.0)
    rk = Ranking(np.zeros(4, np.int64), np.array([0.0, 1.0, 1.0, 0.0]), 1, np.arange(1), np.ones(4, bool))
    # precision at the relevant documents: 1/2, 2/3; interpolated: 2/3, 2/3
    assert v("iprec_at_recall.0.1", rk, J) == pytest.approx(2 / 3)
    assert v("iprec_at_recall.0.5", rk, J) == pytest.approx(2 / 3)
    assert v("iprec_at_recall.0.8", rk, J) == pytest.approx(2 / 3)  # lround(2.4) = 2 <= 2 retrieved
    assert v("iprec_at_recall.0.8", rk, J, rounding="legacy") == 0.0  # (long)(3.3) = 3 > 2 retrieved
    assert v("iprec_at_recall.0.0", rk, J) == pytest.approx(2 / 3)
    assert v("11pt_avg.0.0,0.8,1.0", rk, J) == pytest.approx((2 / 3 + 2 / 3 + 0) / 3)
    assert v("11pt_avg.0.0,0.8,1.0", rk, J, rounding="legacy") == pytest.approx((2 / 3) / 3)


# --------------------------------------------------------------------------- ir_measures parity

def ours(name, rk, J, rel_level=1):
    """Per-query values of a measure named in ir_measures' syntax, computed natively."""
    m = registry.parse(name).measure
    assert m.native, name
    return compute(rk, J, m, Level(rel_level))


def _ranked(qrels_path, run_path, float32=False):
    qrels = read_qrels(str(qrels_path))
    run = read_run(str(run_path))
    run_q = set(run.qid.to_pylist())
    qids = [q for q in sorted(qrels_queries(qrels)) if q in run_q]
    rr = rank_run(run, qrels, qids, score_precision="float32" if float32 else "float64")
    return qrels, qids, judgements(qrels, qids), rr


def _irm(measure, qrels, qids, rr):
    """ir_measures' per-query values for our ordering, handed over as positive, strictly decreasing scores."""
    return _irm_many([measure], qrels, qids, rr)[measure]


def _irm_many(measures, qrels, qids, rr):
    """:func:`_irm` of several measures in one ir_measures call (it builds each provider's index once)."""
    import ir_measures
    import pandas as pd

    rk = rr.ranking
    qdf = pd.DataFrame({"query_id": qrels.qid.to_pylist(), "doc_id": qrels.docid.to_pylist(),
                        "relevance": qrels.grade.astype(int)})
    rdf = pd.DataFrame({"query_id": np.asarray(qids, dtype=object)[rk.row], "doc_id": rr.docid.to_pylist(),
                        "score": (rk.length[rk.row] - rk.pos).astype(np.float64)})
    parsed = {ir_measures.parse_measure(name): name for name in measures}
    out = {name: np.zeros(len(qids)) for name in measures}
    index = {q: i for i, q in enumerate(qids)}
    for m in ir_measures.iter_calc(list(parsed), qdf, rdf):
        out[parsed[m.measure]][index[m.query_id]] = m.value
    return out


REAL = [("dlhard-passage/qrels.txt", "dlhard-passage/runs/bm25.run.gz"),
        ("dlhard-passage/qrels.txt", "dlhard-passage/runs/bm25_rm3_t5_zs.run.gz"),
        ("robust03/qrels.txt", "robust03/runs/input.InexpC2.gz")]


@pytest.mark.parametrize("pair", REAL, ids=lambda p: p[1].split("/")[-1])
def test_ir_measures_parity_on_real_runs(shared, pair):
    qrels, qids, J, rr = _ranked(shared / pair[0], shared / pair[1])
    rk = rr.ranking
    exact = ["Judged@10", "Judged@100", "Compat", "Compat(p=0.8)", "Success@5", "SetP", "SetR", "SetF",
             "NumRelRet", "NumRet", "NumRel", "Bpref", "infAP", "Rprec"]
    theirs = _irm_many(["ERR@10", "ERR@20", *exact], qrels, qids, rr)
    assert all(values.any() for values in theirs.values())  # every measure came back
    # gdeval prints ERR with 5 decimals
    for k in (10, 20):
        np.testing.assert_allclose(ours(f"ERR@{k}", rk, J), theirs[f"ERR@{k}"], atol=5.01e-6, rtol=0)
    for name in exact:
        np.testing.assert_allclose(ours(name, rk, J), theirs[name], atol=1e-12, rtol=1e-12, err_msg=name)


def test_compat_issue_example():
    """The issue's case: ir_measures gives 0.8945...; handing it score = -rank gave 0.3774."""
    J = Judgements(["q"], np.zeros(3, np.int64), np.array([1.0, 1.0, 1.0]), 1.0)
    rk = Ranking(np.zeros(2, np.int64), np.array([1.0, 1.0]), 1, np.arange(1), np.array([True, True]))
    import ir_measures
    import pandas as pd
    want = ir_measures.calc_aggregate([ir_measures.Compat], pd.DataFrame(
        {"query_id": ["q"] * 3, "doc_id": ["a", "b", "d"], "relevance": [1, 1, 1]}), pd.DataFrame(
        {"query_id": ["q"] * 2, "doc_id": ["b", "d"], "score": [2.0, 1.0]}))[ir_measures.Compat]
    assert want == pytest.approx(0.8945369558866492, abs=1e-15)
    assert ours("Compat", rk, J)[0] == pytest.approx(want, abs=1e-15)


def test_compat_below_level_zero_keeps_each_code_apart():
    """-l -1 counts a document not in the qrels relevant: qrels a 1, b 0; run x (not in the qrels), b, a.
    Ideal ranks: a 0, then b and x 1 each (one grade-1 document above; of different codes, neither is
    above the other), so x and b add S3 - S1, a adds S3 - S2, S_i = sum_{t<i} p^t/(t+1); the ideal's
    two documents 2 S3 - S1 (the norm (1 - p^3)/(1 - p) divides both)."""
    J = Judgements(["q"], np.zeros(2, np.int64), np.array([1.0, 0.0]), 1.0)
    rk = Ranking(np.zeros(3, np.int64), np.array([0.0, 0.0, 1.0]), 1, np.arange(1), np.array([False, True, True]))
    S = [sum(0.95 ** t / (t + 1) for t in range(i)) for i in range(4)]
    assert ours("Compat", rk, J, -1)[0] == pytest.approx((3 * S[3] - 2 * S[1] - S[2]) / (2 * S[3] - S[1]), abs=1e-15)


def test_rel_level_honoured_like_ir_measures_rel(shared):
    """-l 2 on DL-HARD (grades 0-3): Bpref, infAP, Success, SetP, Rprec as ir_measures' rel=2, and
    Compat as ir_measures' Compat on the qrels with grades below 2 set to 0 (its relevant: grade > 0)."""
    import ir_measures
    import pandas as pd

    qrels, qids, J, rr = _ranked(shared / "dlhard-passage/qrels.txt", shared / "dlhard-passage/runs/bm25.run.gz",
                                 float32=True)
    rk = rr.ranking
    for name in ["Bpref", "infAP", "Success@10", "SetP", "Rprec"]:
        irm_name = name.replace("@", "(rel=2)@") if "@" in name else f"{name}(rel=2)"
        np.testing.assert_allclose(ours(name, rk, J, 2), _irm(irm_name, qrels, qids, rr),
                                   atol=1e-12, rtol=1e-12, err_msg=name)
    low = qrels.grade < 2
    qrels2 = type(qrels)(qid=qrels.qid, docid=qrels.docid, grade=np.where(low, 0.0, qrels.grade))
    np.testing.assert_allclose(ours("Compat", rk, J, 2), _irm("Compat", qrels2, qids, rr), atol=1e-12)


def test_nicknames_and_syntax():
    names = registry.NICKNAME_MEASURES
    assert names["official"] == ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec",
                                 "bpref", "recip_rank", "iprec_at_recall", "P"]
    assert set(names["set"]) == {"runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P",
                                 "set_recall", "set_relative_P", "set_map", "set_F"}
    assert len(names["all_trec"]) == 37

    def out(text):
        return [m.trec_name() for m in registry.parse_many(text)]

    assert out("P.5,7,3") == ["P_3", "P_5", "P_7"]
    assert out("ndcg_cut.10,23.4") == ["ndcg_cut_10", "ndcg_cut_23"]
    assert out("Rprec_mult.5.0,0.2") == ["Rprec_mult_0.20", "Rprec_mult_5.00"]
    assert out("ndcg.1=3,2=9") == ["ndcg_1=3,2=9"]
    assert str(registry.parse("rbp.p=0.8")) == "RBP_trec(p=0.8)"
    assert out("utility") == ["utility"] and out("utility.1,-1,0,0") == ["utility_1,-1,0,0"]
    assert out("11pt_avg..25,.5") == ["11pt_avg_.25,.5"] and out("relstring.20") == ["relstring_20"]
    assert out("success.1,5") == ["success_1", "success_5"] and out("set_F.0.5") == ["set_F_0.5"]
    for bad in ("P.0", "P.5,5", "P.x", "utility.1,2", "ndcg.1:3", "rbp.p=1.5", "map.3", "nosuch"):
        with pytest.raises(registry.UnknownMeasure):
            registry.parse_many(bad)


def test_err_hand_computed():
    """gdeval ERR: R = (2^g - 1)/16; grades 2, 0, 1 -> 3/16 + (1/16)(1/3)(13/16); ERR@2 -> 3/16."""
    J = Judgements(["q", "r"], np.array([0, 0, 1]), np.array([2.0, 1.0, 1.0]), 2.0)
    rk = Ranking(np.array([0, 0, 0, 1]), np.array([2.0, 0.0, 1.0, 1.0]), 2, np.arange(2),
                 np.array([True, False, True, True]))
    np.testing.assert_allclose(ours("ERR", rk, J), [3 / 16 + (1 / 16) / 3 * (13 / 16), 1 / 16], rtol=1e-15)
    np.testing.assert_allclose(ours("ERR@2", rk, J), [3 / 16, 1 / 16], rtol=1e-15)
    with pytest.raises(registry.UnknownMeasure):
        ours("ERR@10", Ranking(np.array([0]), np.array([5.0]), 1, np.arange(1), np.array([True])), J)
