"""trec_eval 10's measures, natively (ulnorm_eval.core.trec_measures), against trec_eval's own
expected outputs, whole files, line for line, and DL-HARD's published ``*.run.eval`` files.

A small test-local renderer turns the kernels' values into trec_eval's text (its measure order,
names, number formats and ``-q``/``-c`` rules) so that the comparison is of every line, in order.
The expected files were made by trec_eval 10.0 with the arguments in ../shared/data/SOURCES.md;
DL-HARD's by trec_eval 9.0.4 (``-l 2 -c -M 1000 -q -m all_trec``, scores read as float32), which
turned recall fractions into counts as (long)(x R + 0.9) ('legacy' rounding).

Known trec_eval 10 defect: ``rbp`` reads its gain bounds uninitialised (m_rbp.c), so its value
depends on stack garbage; the expected files hold the values of a build whose garbage left binary
gains unscaled.  We initialise the bounds (see trec_measures' module docstring); every ``rbp``
line of the expected files is reproduced by that reading (the test checks them like any other).
"""
from __future__ import annotations

import gzip
import math

import numpy as np
import pytest

from ulnorm_eval.core import trec_measures as tm
from ulnorm_eval.core.kernels import Judgements, Ranking
from ulnorm_eval.inputs.trec import read_qrels, read_run
from ulnorm_eval.pipeline.ordering import judgements, qrels_queries, rank_run

ALL_TREC = tm.expand_nickname("all_trec")


# --------------------------------------------------------------------------- a test-local renderer

parse_measure = tm.parse_trec_measure


LONG = tm.INTEGER_VALUED


def fmt(base: str, v) -> str:
    return f"{int(round(v))}" if base in LONG else f"{v:.4f}"


def evaluate_text(qrels_path, run_path, measures, *, rel_level=1, complete=False, depth=None,
                  float32=False, rounding="round", absent_lines=True, judged_only=False):
    """trec_eval -q output as a list of (name, qid, text) lines, from the native kernels."""
    qrels = read_qrels(str(qrels_path))
    run = read_run(str(run_path))
    all_q = sorted(qrels_queries(qrels), key=lambda s: s.encode())
    run_q = set(run.qid.to_pylist())
    qids = all_q if complete else [q for q in all_q if q in run_q]
    J = judgements(qrels, qids)
    rr = rank_run(run, qrels, qids, depth=depth, score_precision="float32" if float32 else "float64")
    rk = rr.ranking
    if judged_only:
        rk = tm.judged_only(rk)
    ctx = tm.TrecContext(rel_level=rel_level, rounding=rounding, present=rr.present)
    J_all = judgements(qrels, all_q)
    # the requested families in trec_eval's table order, each with its columns
    req = {}
    for text in measures:
        fam, cols = parse_measure(text)
        req.setdefault(fam.trec, {}).update(dict(cols))
    order = [f for f in tm.FAMILIES if f.trec in req]
    per_q, summary = {}, {}
    for fam in order:
        for name, param in req[fam.trec].items():
            if fam.trec == "relstring":
                per_q[name] = [f"'{s}'" for s in tm.relstring(rk, param)]
                continue
            if fam.trec == "runid":
                summary[name] = run.tag
                continue
            v = tm.compute_trec(fam.trec, rk, J, param, ctx)
            per_q[name] = [fmt(fam.trec, x) for x in v] if fam.per_query else None
            summary[name] = fmt(fam.trec, tm.summarise(fam.trec, v, J_all=J_all, complete=complete))
    lines = []
    for i, q in enumerate(qids):
        if not absent_lines and not rr.present[i]:
            continue
        for fam in order:
            for name in req[fam.trec]:
                if per_q.get(name) is not None:
                    lines.append((name, q, per_q[name][i]))
    for fam in order:
        for name in req[fam.trec]:
            if name in summary:
                lines.append((name, "all", summary[name]))
    return lines


def read_lines(path):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as fh:
        out = []
        for line in fh:
            name, qid, val = line.rstrip("\n").split("\t")
            out.append((name.strip(), qid, val))
        return out


def assert_same(got, expected):
    bad = [(i, g, e) for i, (g, e) in enumerate(zip(got, expected)) if g != e]
    assert len(got) == len(expected), (len(got), len(expected))
    assert not bad, f"{len(bad)} lines differ, e.g. {bad[:8]}"


# --------------------------------------------------------------------------- trec_eval's own files

CASES = {
    "out.test": ("qrels.test", "results.test", ["official"], {}, False),
    "out.test:with-comments": ("qrels.test.with-comments", "results.test", ["official"], {}, False),
    "out.comment.test": ("qrels.comment.test", "results.comment.test", ["official"], {}, False),
    "out.test.a": ("qrels.test", "results.test", ["all_trec"], {}, False),
    "out.test.aq": ("qrels.test", "results.test", ["all_trec"], {}, True),
    "out.test.aqc": ("qrels.test", "results.trunc", ["all_trec"], {"complete": True}, True),
    "out.test.aqcM": ("qrels.test", "results.trunc", ["all_trec"], {"complete": True, "depth": 100}, True),
    "out.test.aql": ("qrels.rel_level", "results.test", ["all_trec", "relstring.20"], {"rel_level": 2}, True),
    "out.test.meas_params": ("qrels.test", "results.test",
                             ["iprec_at_recall..10,.20,.25,.75,.50", "P.5,7,3", "recall.20,2000",
                              "Rprec_mult.5.0,0.2,0.35", "utility.2,-1,0,0", "11pt_avg..25,.5,.75",
                              "ndcg.1=3,2=9,4=4.5", "ndcg_cut.10,20,23.4", "success.2,5,20"], {}, True),
}


def _expand(names):
    out = []
    for n in names:
        out += tm.expand_nickname(n)
    return out


@pytest.mark.parametrize("case", list(CASES))
def test_trec_eval_expected_output_whole_file(shared, case):
    qrels, run, names, opts, q = CASES[case]
    case = case.split(":")[0]
    d = shared / "trec_eval_test"
    measures = _expand(names)
    if "relstring.20" in measures:  # -m relstring.20 replaces all_trec's relstring
        measures.remove("relstring")
    got = evaluate_text(d / qrels, d / run, measures, **opts)
    if not q:
        got = [ln for ln in got if ln[1] == "all"]
    assert_same(got, read_lines(d / case))


# --------------------------------------------------------------------------- DL-HARD

DLHARD = ["bm25", "bm25_bert_zs", "bm25_rm3", "bm25_rm3_bert_zs", "bm25_rm3_t5_zs", "bm25_t5_zs"]
# trec_eval 9.0.4's all_trec: no unj, rbp, rbp_resid (added in 10)
# bm25_bert_zs.run.eval says runid T5-P, while all 50,000 lines of bm25_bert_zs.run are tagged BERT-P
RUNID_MISLABELLED = {"bm25_bert_zs": "BERT-P"}
ALL_TREC_9 = [m for m in ALL_TREC if m not in ("unj", "rbp", "rbp_resid")]


@pytest.mark.parametrize("run", DLHARD)
def test_dlhard_published_eval(shared, run):
    d = shared / "dlhard-passage"
    expected = read_lines(d / "runs" / f"{run}.run.eval.gz")
    got = evaluate_text(d / "qrels.txt", d / "runs" / f"{run}.run.gz", ALL_TREC_9, rel_level=2, complete=True,
                        depth=1000, float32=True, rounding="legacy", absent_lines=False)
    # trec_eval 9 prints queries in qrels order; compare block by block, every line
    exp_q = {}
    for ln in expected:
        exp_q.setdefault(ln[1], []).append(ln)
    got_q = {}
    for ln in got:
        got_q.setdefault(ln[1], []).append(ln)
    assert set(exp_q) == set(got_q)
    if run in RUNID_MISLABELLED:
        # the published file names another run: runid is the run file's tag, every other line must match
        exp_q["all"] = [ln if ln[0] != "runid" else ("runid", "all", RUNID_MISLABELLED[run]) for ln in exp_q["all"]]
    for q in exp_q:
        assert_same(got_q[q], exp_q[q])


# --------------------------------------------------------------------------- hand-computed cases

def _tiny():
    """qrels: a 2, b 0, c 1, d -1 (pooled, unjudged), e 0, f 1; ranking x a b d c y (x, y not in the qrels)."""
    J = Judgements(["q"], np.zeros(6, np.int64), np.array([2.0, 1.0, 1.0, 0.0, 0.0, -1.0]), 2.0)
    grade = np.array([0.0, 2.0, 0.0, -1.0, 1.0, 0.0])
    judged = np.array([False, True, True, True, True, False])
    return Ranking(np.zeros(6, np.int64), grade, 1, np.arange(1), judged), J


def v(trec, rk, J, param=None, **ctx):
    return float(tm.compute_trec(trec, rk, J, param, tm.TrecContext(**ctx))[0])


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
    assert v("unj", rk, J, 5) == pytest.approx(2 / 5) and v("unj", rk, J, 20) == pytest.approx(3 / 20)
    assert v("rbp_resid", rk, J) == pytest.approx(0.9 ** 6 + 0.1 * (1 + 0.9 ** 3 + 0.9 ** 5), abs=1e-15)
    # rbp: grades 0..2 exceed [0, 1], so gain = grade / 2
    assert v("rbp", rk, J) == pytest.approx(0.1 * (0.9 * 1.0 + 0.9 ** 4 * 0.5), abs=1e-15)
    assert v("rbp", rk, J, {"p": 0.5}) == pytest.approx(0.5 * (0.5 * 1.0 + 0.5 ** 4 * 0.5), abs=1e-15)
    # utility.1,-1,0,0.5 with -N 100: a=2, b=4, c=1, d=100+2-6-3
    assert v("utility", rk, J, (1, -1, 0, 0.5), num_docs=100) == pytest.approx(2 - 4 + 0.5 * 93)
    assert v("utility", rk, J, (1, -1, 0, 0.5), num_docs=100, present=np.array([False])) == 0.0
    # -l 0: judged grade-0 documents are relevant, unjudged ones never
    assert v("num_rel", rk, J, rel_level=0) == 5 and v("num_rel_ret", rk, J, rel_level=0) == 3
    assert v("P", rk, J, 5, rel_level=0) == pytest.approx(3 / 5)


def test_hand_computed_judged_only():
    rk, J = _tiny()
    jo = tm.judged_only(rk)  # a b c
    assert tm.relstring(jo, 10) == ["201"]
    assert v("num_ret", jo, J) == 3 and v("num_nonrel_judged_ret", jo, J) == 1
    assert v("map", jo, J) == pytest.approx((1 + 2 / 3) / 3, abs=1e-15)
    # infAP: a at j=0 scores 1; c at j=2 with r=1, n=1: 1/3 + (2/3)(2/2)(1/2)
    assert v("infAP", jo, J) == pytest.approx((1 + 2 / 3) / 3, abs=1e-12)
    assert v("unj", jo, J, 5) == 0.0 and v("rbp_resid", jo, J) == 0.0


def test_iprec_rounding_rules():
    """lround(x R) (trec_eval 10) against (long)(x R + 0.9) (trec_eval 9): R = 3 relevant, x = 0.1
    gives c = 0 (value at the first relevant document) or c = 1; x = 0.5 gives c = 2 either way."""
    J = Judgements(["q"], np.zeros(4, np.int64), np.array([1.0, 1.0, 1.0, 0.0]), 1.0)
    rk = Ranking(np.zeros(4, np.int64), np.array([0.0, 1.0, 1.0, 0.0]), 1, np.arange(1), np.ones(4, bool))
    # precision at the relevant documents: 1/2, 2/3; interpolated: 2/3, 2/3
    assert v("iprec_at_recall", rk, J, 0.1) == pytest.approx(2 / 3)
    assert v("iprec_at_recall", rk, J, 0.5) == pytest.approx(2 / 3)
    assert v("iprec_at_recall", rk, J, 0.8) == pytest.approx(2 / 3)  # lround(2.4) = 2 <= 2 retrieved
    assert v("iprec_at_recall", rk, J, 0.8, rounding="legacy") == 0.0  # (long)(3.3) = 3 > 2 retrieved
    assert v("iprec_at_recall", rk, J, 0.0) == pytest.approx(2 / 3)
    assert v("11pt_avg", rk, J, (0.0, 0.8, 1.0)) == pytest.approx((2 / 3 + 2 / 3 + 0) / 3)
    assert v("11pt_avg", rk, J, (0.0, 0.8, 1.0), rounding="legacy") == pytest.approx((2 / 3) / 3)


# --------------------------------------------------------------------------- ir_measures parity

def _ranked(qrels_path, run_path, float32=False):
    qrels = read_qrels(str(qrels_path))
    run = read_run(str(run_path))
    run_q = set(run.qid.to_pylist())
    qids = [q for q in sorted(qrels_queries(qrels)) if q in run_q]
    rr = rank_run(run, qrels, qids, score_precision="float32" if float32 else "float64")
    return qrels, qids, judgements(qrels, qids), rr


def _irm(measure, qrels, qids, rr):
    """ir_measures' per-query values for our ordering, handed over as positive, strictly decreasing scores."""
    import ir_measures
    import pandas as pd

    rk = rr.ranking
    qdf = pd.DataFrame({"query_id": qrels.qid.to_pylist(), "doc_id": qrels.docid.to_pylist(),
                        "relevance": qrels.grade.astype(int)})
    rdf = pd.DataFrame({"query_id": np.asarray(qids, dtype=object)[rk.row], "doc_id": rr.docid.to_pylist(),
                        "score": (rk.length[rk.row] - rk.pos).astype(np.float64)})
    out = np.zeros(len(qids))
    index = {q: i for i, q in enumerate(qids)}
    for m in ir_measures.iter_calc([ir_measures.parse_measure(measure)], qdf, rdf):
        out[index[m.query_id]] = m.value
    return out


REAL = [("dlhard-passage/qrels.txt", "dlhard-passage/runs/bm25.run.gz"),
        ("dlhard-passage/qrels.txt", "dlhard-passage/runs/bm25_rm3_t5_zs.run.gz"),
        ("robust03/qrels.txt", "robust03/runs/input.InexpC2.gz")]


@pytest.mark.parametrize("pair", REAL, ids=lambda p: p[1].split("/")[-1])
def test_ir_measures_parity_on_real_runs(shared, pair):
    qrels, qids, J, rr = _ranked(shared / pair[0], shared / pair[1])
    rk, ctx = rr.ranking, tm.TrecContext()
    # gdeval prints ERR with 5 decimals
    for k in (10, 20):
        np.testing.assert_allclose(tm.k_ERR(rk, J, k, ctx), _irm(f"ERR@{k}", qrels, qids, rr), atol=5.01e-6, rtol=0)
    for name, fam, param in [("Judged@10", "Judged", 10), ("Judged@100", "Judged", 100),
                             ("Compat", "Compat", None), ("Compat(p=0.8)", "Compat", (0.8, True)),
                             ("Success@5", "success", 5), ("SetP", "set_P", None), ("SetR", "set_recall", None),
                             ("SetF", "set_F", None), ("NumRelRet", "num_rel_ret", None),
                             ("NumRet", "num_ret", None), ("NumRel", "num_rel", None),
                             ("Bpref", "bpref", None), ("infAP", "infAP", None), ("Rprec", "Rprec", None)]:
        ours = tm.compute_trec(fam, rk, J, param, ctx)
        np.testing.assert_allclose(ours, _irm(name, qrels, qids, rr), atol=1e-12, rtol=1e-12, err_msg=name)


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
    assert tm.k_Compat(rk, J, None, tm.TrecContext())[0] == pytest.approx(want, abs=1e-15)


def test_rel_level_honoured_like_ir_measures_rel(shared):
    """-l 2 on DL-HARD (grades 0-3): Bpref, infAP, Success, SetP, Rprec as ir_measures' rel=2, and
    Compat as ir_measures' Compat on the qrels with grades below 2 set to 0 (its relevant: grade > 0)."""
    import ir_measures
    import pandas as pd

    qrels, qids, J, rr = _ranked(shared / "dlhard-passage/qrels.txt", shared / "dlhard-passage/runs/bm25.run.gz",
                                 float32=True)
    rk, ctx = rr.ranking, tm.TrecContext(rel_level=2)
    for name, fam, param in [("Bpref(rel=2)", "bpref", None), ("infAP(rel=2)", "infAP", None),
                             ("Success(rel=2)@10", "success", 10), ("SetP(rel=2)", "set_P", None),
                             ("Rprec(rel=2)", "Rprec", None)]:
        np.testing.assert_allclose(tm.compute_trec(fam, rk, J, param, ctx), _irm(name, qrels, qids, rr),
                                   atol=1e-12, rtol=1e-12, err_msg=name)
    # the issue's number: trec_eval -l 2 -c prints bpref 0.3782 on this run (published file)
    assert f"{tm.summarise('bpref', tm.k_bpref(rk, J, None, ctx)):.4f}" == "0.3782"
    low = qrels.grade < 2
    qrels2 = type(qrels)(qid=qrels.qid, docid=qrels.docid, grade=np.where(low, 0.0, qrels.grade))
    np.testing.assert_allclose(tm.k_Compat(rk, J, None, ctx), _irm("Compat", qrels2, qids, rr), atol=1e-12)


def test_nicknames_and_syntax():
    assert tm.expand_nickname("official") == ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map",
                                              "gm_map", "Rprec", "bpref", "recip_rank", "iprec_at_recall", "P"]
    assert set(tm.expand_nickname("set")) == {"runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility",
                                              "set_P", "set_recall", "set_relative_P", "set_map", "set_F"}
    assert len(tm.expand_nickname("all_trec")) == 37
    assert tm.parse_trec_measure("P.5,7,3")[1] == [("P_3", 3), ("P_5", 5), ("P_7", 7)]
    assert tm.parse_trec_measure("ndcg_cut.10,23.4")[1] == [("ndcg_cut_10", 10), ("ndcg_cut_23", 23)]
    assert tm.parse_trec_measure("Rprec_mult.5.0,0.2")[1] == [("Rprec_mult_0.20", 0.2), ("Rprec_mult_5.00", 5.0)]
    assert tm.parse_trec_measure("ndcg.1=3,2=9")[1] == [("ndcg_1=3,2=9", {1: 3.0, 2: 9.0})]
    assert tm.parse_trec_measure("rbp.p=0.8")[1] == [("rbp_p=0.8", {"p": 0.8})]
    assert tm.parse_trec_measure("utility")[1] == [("utility", (1.0, -1.0, 0.0, 0.0))]
    for bad in ("P.0", "P.5,5", "P.x", "utility.1,2", "ndcg.1:3", "rbp.p=1.5", "map.3", "nosuch"):
        with pytest.raises(tm.TrecSyntaxError):
            tm.parse_trec_measure(bad)


def test_err_hand_computed():
    """gdeval ERR: R = (2^g - 1)/16; grades 2, 0, 1 -> 3/16 + (1/16)(1/3)(13/16); ERR@2 -> 3/16."""
    J = Judgements(["q", "r"], np.array([0, 0, 1]), np.array([2.0, 1.0, 1.0]), 2.0)
    rk = Ranking(np.array([0, 0, 0, 1]), np.array([2.0, 0.0, 1.0, 1.0]), 2, np.arange(2),
                 np.array([True, False, True, True]))
    np.testing.assert_allclose(tm.k_ERR(rk, J, None, tm.TrecContext()), [3 / 16 + (1 / 16) / 3 * (13 / 16), 1 / 16],
                               rtol=1e-15)
    np.testing.assert_allclose(tm.k_ERR(rk, J, 2, tm.TrecContext()), [3 / 16, 1 / 16], rtol=1e-15)
    with pytest.raises(ValueError):
        tm.k_ERR(Ranking(np.array([0]), np.array([5.0]), 1, np.arange(1), np.array([True])), J, 10, tm.TrecContext())
