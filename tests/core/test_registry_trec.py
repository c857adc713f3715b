"""trec_eval's names, flags and summaries through the one registry and the command line (issue 11):
measure syntax and its one-line errors, -n/-J/-N/-c, summed counts, text measures, the ir_measures
adapter's -l and scores, and which families have bounds."""
from __future__ import annotations

import numpy as np
import pytest

from ulnorm_eval.core import registry
from ulnorm_eval.core.registry import UnknownMeasure, parse, parse_many
from ulnorm_eval.pipeline.evaluate import resolve_metrics
from conftest import invoke


def run_cli(*args):
    return invoke("eval", "-f", "trec", *args)


@pytest.fixture
def tiny(tmp_path):
    """qrels: a 1, b 0, c 1, u -1 (pooled, unjudged); run: x (not in the qrels), a, u, b."""
    q = tmp_path / "qrels"
    q.write_text("q 0 a 1\nq 0 b 0\nq 0 c 1\nq 0 u -1\nr 0 a 1\n")
    r = tmp_path / "run"
    r.write_text("q Q0 x 1 4 t1\nq Q0 a 2 3 t1\nq Q0 u 3 2 t1\nq Q0 b 4 1 t2\n")
    return q, r


def lines(res):
    assert res.exit_code == 0, res.output
    return [tuple(x.strip() for x in ln.split("\t")) for ln in res.stdout.splitlines()]


# --------------------------------------------------------------------------- syntax

def test_whitespace_inside_parentheses_is_accepted(tiny):
    assert str(parse("RBP(p=0.5, rel=1)")) == "RBP(p=0.5,rel=1)"
    assert parse("nDCG(dcg='log2', gains=None)@10") == parse("nDCG@10")
    q, r = tiny
    got = lines(run_cli("--norm", "none", "-m", "RBP(p=0.5, rel=1)", "-m", "nDCG(dcg='log2', gains=None)@10", q, r))
    assert [x[0] for x in got] == ["RBP(p=0.5,rel=1)", "nDCG@10"]


@pytest.mark.parametrize("name, message", [
    ("ERR(gains={0:0,1:1})@20", "ERR has no parameter 'gains'"),
    ("RBP(p=2)", "p must lie strictly between 0 and 1"),
    ("RBP(p='x')", "bad value 'x' for p"),
    ("nDCG(dcg='cubic')", "dcg must be 'log2' or 'exp-log2'"),
    ("P@0", "the cutoff must be a positive integer"),
    ("utility.1,2", "coef takes 4 numbers"),
    ("P.5,5", "a value is given twice"),
    ("set_F.-1", "beta must be positive"),
    ("iprec_at_recall.1.5", "recall must lie in [0, 1]"),
])
def test_bad_parameters_are_one_line_errors_exit_2(tiny, name, message):
    with pytest.raises(UnknownMeasure, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_many(name)
    q, r = tiny
    res = run_cli("-m", name, q, r)
    assert res.exit_code == 2
    assert res.stderr.count("\n") == 1 and res.stderr.startswith("ulnorm-eval: ") and message in res.stderr
    assert "Traceback" not in res.output


def test_suggestions_are_case_insensitive():
    with pytest.raises(UnknownMeasure, match=r"did you mean Bpref or GMBpref or gm_bpref\?"):
        parse("BPREFF")


# --------------------------------------------------------------------------- flags

def test_nosummary_and_per_query(tiny):
    q, r = tiny
    got = lines(run_cli("--norm", "none", "--names", "trec", "-q", "-n", "-m", "P.1", q, r))
    assert got == [("P_1", "q", "0.0000"), ("P_1", "r", "0.0000")]


def test_judged_only(tiny):
    """-J drops x (not in the qrels) and u (negative grade): a, b remain, AP = 1/2 (R = 2)."""
    q, r = tiny
    plain = dict(((a, b), c) for a, b, c in lines(run_cli("--norm", "none", "--names", "trec", "-q", "-m", "map",
                                                          "-m", "P.1", "-m", "num_ret", "-m", "relstring", q, r)))
    judged = dict(((a, b), c) for a, b, c in lines(run_cli("--norm", "none", "--names", "trec", "-q", "-J", "-m", "map",
                                                           "-m", "P.1", "-m", "num_ret", "-m", "relstring", q, r)))
    assert plain[("map", "q")] == "0.2500" and judged[("map", "q")] == "0.5000"
    assert plain[("P_1", "q")] == "0.0000" and judged[("P_1", "q")] == "1.0000"
    assert plain[("num_ret", "q")] == "4" and judged[("num_ret", "q")] == "2"
    assert plain[("relstring", "q")] == "'-1.0'" and judged[("relstring", "q")] == "'10'"
    # bounds under -J, judged pool: the pool without u (a, b, c): E[AP] = E[SP]/R over 3 documents with 2 relevant
    got = dict(((a, b), c) for a, b, c in lines(run_cli("--norm", "e", "--pool", "qrels", "-q", "-J", "--precision", "12",
                                                        "-m", "AP",
                                                        q, r)))
    e_sp = (2 / 3) * (1 + 1 / 2 + 1 / 3) + (2 * 1) / (3 * 2) * (3 - (1 + 1 / 2 + 1 / 3))
    assert float(got[("E(AP)", "q")]) == pytest.approx(e_sp / 2, abs=1e-12)


def test_num_docs_and_counts_are_summed(tiny):
    """utility.1,-1,0,1 with -N 100: d = N + a - num_ret - R; counts print as integers and sum in 'all'."""
    q, r = tiny
    got = dict(((a, b), c) for a, b, c in lines(run_cli(
        "--norm", "none", "--names", "trec", "-q", "-N", "100", "-m", "utility.1,-1,0,1", "-m", "num_ret",
        "-m", "num_rel", "-m", "num_q", "-m", "runid", q, r)))
    # q: a = 1 relevant retrieved, 3 others retrieved, R = 2: 1 - 3 + (100 + 1 - 4 - 2) = 93
    assert got[("utility_1,-1,0,1", "q")] == "93.0000"
    assert got[("num_ret", "all")] == "4" and got[("num_rel", "all")] == "3" and got[("num_q", "all")] == "2"
    assert ("num_q", "q") not in got  # num_q has no per-query line
    assert got[("runid", "all")] == "t2"  # the last line's tag, as trec_eval
    canon = dict(((a, b), c) for a, b, c in lines(run_cli("--norm", "none", "-m", "NumRet", "-m", "NumRel", q, r)))
    assert canon[("NumRet", "all")] == "4" and canon[("NumRel", "all")] == "3"


def test_complete_flag_num_rel_rule(tiny):
    """trec_eval -c: num_rel's 'all' row counts every qrels line with grade > 0, whatever -l."""
    q, r = tiny
    got = dict(((a, b), c) for a, b, c in lines(run_cli("--norm", "none", "--names", "trec", "-l", "2", "-m",
                                                        "num_rel", q, r)))
    assert got[("num_rel", "all")] == "0"
    got = dict(((a, b), c) for a, b, c in lines(run_cli("--norm", "none", "--names", "trec", "-l", "2", "-c", "-m",
                                                        "num_rel", q, r)))
    assert got[("num_rel", "all")] == "3"


# --------------------------------------------------------------------------- bounds per record

def test_default_variants_skip_families_without_bounds():
    names = [str(m) for m in resolve_metrics(["Judged@10", "NumRet", "SetP", "unj.5", "relstring", "runid",
                                              "ERR@20", "bpref"])]
    # ERR's E is a Monte Carlo estimate: no default variants (tests/pipeline/test_default_variants.py), only asked ones
    assert names == ["Judged@10", "NumRet", "SetP", "Unjudged@5", "relstring", "runid", "ERR@20", "Bpref",
                     "E(Bpref)", "EM(Bpref)"]  # the default variants: E and EM
    names = [str(m) for m in resolve_metrics(["Judged@10", "ERR@20"], ["E", "UL2"])]
    assert names == ["Judged@10", "ERR@20", "E(ERR@20)", "UL2(ERR@20)"]
    with pytest.raises(UnknownMeasure, match="no random-ranking bounds"):
        resolve_metrics(["UL2(Judged@10)"])
    assert {f.name for f in registry.FAMILIES.values() if f.bounds == "none"} >= {
        "NumQ", "NumRet", "NumRel", "NumRelRet", "SetP", "SetR", "SetF", "Judged", "Unjudged", "relstring", "runid"}


# --------------------------------------------------------------------------- ir_measures

def test_compat_issue_example_through_the_cli(tmp_path):
    """qrels q a 1 / q b 1 / q d 1, run b 2.0, d 1.0: ir_measures' own Compat is 0.8945."""
    q = tmp_path / "qrels"
    q.write_text("q 0 a 1\nq 0 b 1\nq 0 d 1\n")
    r = tmp_path / "run"
    r.write_text("q Q0 b 1 2.0 t\nq Q0 d 2 1.0 t\n")
    assert lines(run_cli("--norm", "none", "--precision", "4", "-m", "Compat", q, r)) == [("Compat", "all", "0.8945")]


def test_adapter_honours_rel_level_or_refuses(tiny):
    import ir_measures

    from ulnorm_eval.pipeline.irm_adapter import decreasing_scores, honour_rel_level
    from ulnorm_eval.core.kernels import Ranking

    m = ir_measures.parse_measure("alpha_nDCG@10")
    assert honour_rel_level(m, 2).params["rel"] == 2 and honour_rel_level(m, 1) is m
    assert honour_rel_level(ir_measures.parse_measure("alpha_nDCG(rel=3)@10"), 2).params["rel"] == 3
    with pytest.raises(UnknownMeasure, match="cannot honour -l 2"):
        honour_rel_level(ir_measures.parse_measure("SDCG@10"), 2)
    rk = Ranking(np.array([0, 0, 0, 1]), np.zeros(4), 2, np.arange(2))
    assert decreasing_scores(rk).tolist() == [3.0, 2.0, 1.0, 1.0]
    q, r = tiny
    res = run_cli("-l", "2", "-m", "SDCG@10", q, r)
    assert res.exit_code == 2 and res.stderr.count("\n") == 1 and "cannot honour -l 2" in res.stderr


def test_bounds_cached_per_qrels_equal_fresh_ones(shared):
    """Bounds on the qrels pool are computed once per qrels and query (the second run reuses the
    first's, Monte Carlo E of ERR included) and equal those of an evaluation of that run alone."""
    from ulnorm_eval import evaluate, load_qrels

    d = shared / "dlhard-passage"
    runs = [str(d / "runs" / f"{r}.run.gz") for r in ("bm25", "bm25_rm3")]
    qrels = load_qrels(str(d / "qrels.txt"))
    both = evaluate(qrels, runs, ["ERR@10", "Bpref"], variants=["E", "IUB", "UL2"], permutations=200, pool="qrels")
    cached = qrels.cache["bounds"]
    assert cached and all(len(v) == len(both.runs[0].qids) for v in cached.values())
    alone = evaluate(str(d / "qrels.txt"), runs[1:], ["ERR@10", "Bpref"], variants=["E", "IUB", "UL2"],
                     permutations=200, pool="qrels")
    for m in both.metrics:
        np.testing.assert_array_equal(both.runs[1].values[m], alone.runs[0].values[m], err_msg=str(m))
    se = [m for m in both.metrics if str(m) == "E(ERR@10)"][0]
    np.testing.assert_array_equal(both.runs[1].stderr[se], alone.runs[0].stderr[se])


def test_iprec_in_ir_measures_syntax():
    """ir_measures writes the recall level after @ (IPrec@0.2): the same native measure as trec_eval's
    iprec_at_recall.0.2, printed once when named both ways."""
    assert parse("IPrec@0.2") == parse("iprec_at_recall.0.2") == parse("IPrec(recall=0.2)")
    assert str(parse("IPrec@0.2")) == "IPrec@0.2" and parse("IPrec@0.2").trec_name() == "iprec_at_recall_0.20"
    assert len(resolve_metrics(["IPrec@0.2", "iprec_at_recall.0.2"], [])) == 1
    with pytest.raises(UnknownMeasure, match="recall given twice"):
        parse("IPrec(recall=0.1)@0.2")
