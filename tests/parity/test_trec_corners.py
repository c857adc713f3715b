"""trec_eval 10's corners: negative gains in nDCG, -nan, -c's placeholder document, dcg, ideal_dcg,
yaap, -R/-T/-D/-Z, ir_measures' keyword syntax.

Parity: every case of tests/data/trec_eval_corners/cases.tsv must print exactly the lines trec_eval
10 printed (its outputs are committed there, with the command that made them).  The rest are
hand-computed values.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import ulnorm_eval as ue
from conftest import ROOT, invoke

DATA = ROOT / "tests" / "data" / "trec_eval_corners"


def cases():
    out = []
    for line in (DATA / "cases.tsv").read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        cid, args, *extra = line.split("\t")
        out.append((cid, args.split(), extra[0].split() if extra else []))
    return out


def run_cli(args, cwd=DATA):
    import os

    old = os.getcwd()
    os.chdir(cwd)
    try:
        return invoke(*args, catch_exceptions=False)
    finally:
        os.chdir(old)


@pytest.mark.parametrize("cid,args,extra", cases(), ids=[c[0] for c in cases()])
def test_trec_eval_lines(cid, args, extra):
    res = run_cli(["eval", "-f", "trec", "--names", "trec", "--norm", "none", *extra, *args])
    assert res.exit_code == 0, res.output
    want = (DATA / f"{cid}.out").read_text()
    assert res.stdout == want, cid


def test_cases_cover_every_corner():
    ids = {c[0] for c in cases()}
    assert {"ndcg_neg0", "ndcg_neg1", "ndcg_neg2", "nan_cJ_iprec", "nan_J_11pt", "nan_l0_Rndcg", "leak_utility",
            "leak_relstring", "leak_rbp_resid", "leak_cJ_rbp_resid", "c_rbp_resid", "rnd_dcg", "rnd_idcg", "rnd_yaap", "zscore"} <= ids
    assert any("-nan" in (DATA / f"{c}.out").read_text() for c in ids)


def test_ndcg_negative_gains_by_hand():
    """qrels a=2, b=1, c=0; run a > b > c.  The ideal DCG sums only positive gains (m_ndcg.c)."""
    qrels = {"1": {"a": 2, "b": 1, "c": 0}}
    run = {"1": {"a": 3.0, "b": 2.0, "c": 1.0}}
    l3 = 1 / math.log2(3)
    res = ue.evaluate(qrels, run, ["nDCG(gains={0:-1})", "nDCG(gains={1:-1})", "nDCG(gains={2:-2})"], variants=[])
    got = [res.runs[0].values[m][0] for m in res.metrics]
    assert got == pytest.approx([(2 + l3 - 0.5) / (2 + l3), (2 - l3) / 2.0, (-2 + l3) / 1.0], abs=1e-15)
    assert [f"{v:.4f}" for v in got] == ["0.8100", "0.6845", "-1.3691"]


def _values(qrels, run, names, **kw):
    res = ue.evaluate(qrels, run, names, variants=[], **kw)
    rr = res.runs[0]
    return {str(m): (rr.values[m], rr.mean[m]) for m in res.metrics}, res


NAN_QRELS = {"1": {"a": 1, "b": 0, "c": -1}, "2": {"x": 1, "y": 2}, "3": {"p": 0, "q": 0}}
NAN_RUN = {"1": {"c": 3.0, "z": 2.0}, "3": {"p": 1.0, "q": 0.5}}


def test_nan_is_zero_by_default_and_nan_under_the_flag():
    names = ["IPrec@0.0", "IPrec@0.5", "Avg11pt"]
    plain, _ = _values(NAN_QRELS, NAN_RUN, names, judged_only=True)
    assert all(np.all(v == 0) and m == 0 for v, m in plain.values())  # qids 1, 2, 3 in natural order
    nan, _ = _values(NAN_QRELS, NAN_RUN, names, judged_only=True, trec_nan=True)
    # query 1: nothing left after -J; query 2: -c's placeholder, dropped by -J; query 3: two documents
    assert np.isnan(nan["IPrec@0"][0][:2]).all() and nan["IPrec@0"][0][2] == 0 and math.isnan(nan["IPrec@0"][1])
    assert np.all(nan["IPrec@0.5"][0] == 0)  # lround(0.5 * 1) = 1 > 0 relevant retrieved: 0, not -nan
    assert np.isnan(nan["Avg11pt"][0][:2]).all() and math.isnan(nan["Avg11pt"][1])
    # without -J the placeholder document makes query 2 0/1 = 0, and query 1 has documents
    nj, _ = _values(NAN_QRELS, NAN_RUN, names, trec_nan=True)
    assert all(np.all(v == 0) for v, _ in nj.values())


def test_rndcg_nan_when_relevant_documents_have_no_positive_gain():
    qrels = {"3": {"p": 0, "q": 0}, "4": {"a": 2, "b": 1}}
    run = {"3": {"p": 1.0, "q": 0.5}, "4": {"a": 1.0, "b": 0.5}}
    off, _ = _values(qrels, run, ["Rndcg"], rel_level=0)
    on, _ = _values(qrels, run, ["Rndcg"], rel_level=0, trec_nan=True)
    assert off["Rndcg"][0][0] == 0 and np.isnan(on["Rndcg"][0][0]) and math.isnan(on["Rndcg"][1])
    assert on["Rndcg"][0][1] == off["Rndcg"][0][1] > 0


def test_c_placeholder_leak_only_under_the_flag_and_only_with_parameters():
    qrels = {"1": {"a": 1, "b": 0}, "2": {"x": 1, "y": 2}}
    run = {"1": {"b": 2.0, "a": 1.0}}
    names = ["utility(coef='1,-2,0,0')", "utility", "relstring(length=3)", "relstring"]
    off, _ = _values(qrels, run, names)
    on, _ = _values(qrels, run, names, trec_nan=True)
    u = "utility(coef='1,-2,0,0')"
    assert off[u][0][1] == 0 and on[u][0][1] == -2.0  # the placeholder: one nonrelevant retrieved, p2 = -2
    assert on["utility"][0][1] == 0  # trec_eval zeroes a measure named exactly 'utility'
    assert off["relstring(length=3)"][0][1] == "''" and on["relstring(length=3)"][0][1] == "'-'"
    assert on["relstring"][0][1] == "''"
    jo, _ = _values(qrels, run, names, trec_nan=True, judged_only=True)  # -J drops the placeholder
    assert jo[u][0][1] == 0 and jo["relstring(length=3)"][0][1] == "''"
    # rbp_resid.p=0.5: the placeholder is one unjudged document at rank 1, p + (1 - p) = 1; the bare name is cleared
    resid = ["RBP_resid(p=0.5)", "RBP_resid"]
    off, _ = _values(qrels, run, resid)
    on, _ = _values(qrels, run, resid, trec_nan=True)
    jo, _ = _values(qrels, run, resid, trec_nan=True, judged_only=True)
    assert off["RBP_resid(p=0.5)"][0][1] == 0 and on["RBP_resid(p=0.5)"][0][1] == 1.0
    assert on["RBP_resid(p=0.9)"][0][1] == 0 and jo["RBP_resid(p=0.5)"][0][1] == 0


def test_ideal_dcg_of_a_query_judged_only_negative_is_the_earlier_querys_only_under_the_flag():
    """stale.qrels (README): 100 and 2 are judged only with negative grades and follow 10 in trec_eval's
    byte order (10's ideal DCG 2/log2(2) + 1/log2(3)); 30 follows 3 (grade 0: 0); 5 follows 4 (one
    grade-1 document: 1).  Without the flag each prints its own ideal DCG, 0."""
    import math

    base = ["eval", "-f", "trec", "--names", "trec", "--norm", "none", "-q", "-c", "-m", "ideal_dcg",
            "stale.qrels", "stale.run"]
    idcg10 = 2 + 1 / math.log2(3)
    want = {"1": 1.0, "10": idcg10, "100": idcg10, "2": idcg10, "3": 0.0, "30": 0.0, "4": 1.0, "5": 1.0}
    for flag, expect in (([], {**want, "100": 0.0, "2": 0.0, "5": 0.0}), (["--trec-nan"], want)):
        res = run_cli(base[:1] + flag + base[1:])
        assert res.exit_code == 0, res.output
        rows = [ln.split() for ln in res.stdout.splitlines()]
        got = {q: float(v) for _, q, v in rows if q != "all"}
        assert got == pytest.approx({q: round(v, 4) for q, v in expect.items()}, abs=1e-9)
        assert float(rows[-1][2]) == pytest.approx(round(sum(expect.values()) / 8, 4), abs=1e-9)


def test_dcg_ideal_dcg_yaap_by_hand():
    qrels = {"1": {"a": 2, "b": 1, "c": 0, "d": 3}}
    run = {"1": {"a": 4.0, "b": 3.0, "c": 2.0, "e": 1.0}}
    v, _ = _values(qrels, run, ["dcg", "ideal_dcg", "yaap"])
    l3, l4 = 1 / math.log2(3), 1 / math.log2(4)
    assert v["DCG"][0][0] == pytest.approx(2 + l3, abs=1e-15)
    assert v["IDCG"][0][0] == pytest.approx(3 + 2 * l3 + l4, abs=1e-15)
    S = 1 + 2 / 2  # relevant at ranks 1 and 2; R = 3 (a, b, d)
    assert v["yaap"][0][0] == pytest.approx(math.log((1 + S) / (1 + 3 - S)), abs=1e-15)


@pytest.mark.parametrize("flags,ok", [
    (["-R", "qrels"], True), (["-T", "trec_results"], True), (["-D", "0"], True),
    (["-R", "prefs"], False), (["-R", "qrels_jg"], False), (["-T", "other"], False), (["-D", "2"], False)])
def test_trec_eval_format_flags(flags, ok):
    res = run_cli(["eval", "--norm", "none", "-m", "map", *flags, "abc.qrels", "abc.run"])
    if ok:
        assert res.exit_code == 0 and res.stdout == "AP\tall\t1.0000\n"
    else:
        assert res.exit_code == 2 and res.stdout == "" and flags[0] in res.output


def test_zscores_by_hand(tmp_path):
    """-Z: (v - mean)/sd; sd = 0 gives 0 when v equals the mean, else -1000000, as a missing pair."""
    z = tmp_path / "z.txt"
    z.write_text("1 map 0.5 0.25\n3 map 0.2 0\n4 map 0.5 0\n")
    res = run_cli(["eval", "--norm", "none", "-q", "-Z", str(z), "-m", "map", "nan_noq2.qrels", "nan.run"])
    assert res.exit_code == 0, res.output
    # map: query 1 retrieves no relevant document (0), 3 has none (0), 4 finds s at rank 2 (0.5)
    assert res.stdout.splitlines() == ["ZAP\t1\t-2.0000", "ZAP\t3\t-1000000.0000", "ZAP\t4\t0.0000",
                                       f"ZAP\tall\t{(-2 - 1000000 + 0) / 3:.4f}"]
    bad = tmp_path / "bad.txt"
    bad.write_text("1 map 0.5 0.25\n1 map x 1\n")
    res = run_cli(["eval", "--norm", "none", "-Z", str(bad), "-m", "map", "nan_noq2.qrels", "nan.run"])
    assert res.exit_code == 2 and res.stdout == "" and f"{bad}:2:" in res.output
    res = run_cli(["eval", "-Z", str(z), "-m", "map", "nan_noq2.qrels", "nan.run"])
    assert res.exit_code == 2 and "--norm none" in res.output


def test_ir_measures_keyword_syntax_matches_ir_measures():
    import ir_measures

    qrels = {"q1": {"a": 2, "b": 1, "c": 0, "d": 2}, "q2": {"x": 1, "y": 3}}
    run = {"q1": {"a": 3.0, "b": 2.0, "c": 1.0, "e": 0.5}, "q2": {"y": 1.0, "z": 2.0}}
    names = ["SetP(rel=2)", "SetR(rel=2)", "NumRet(rel=1)", "NumRet(rel=2)", "NumRet", "P(cutoff=2)",
             "nDCG(cutoff=2)"]
    res = ue.evaluate(qrels, run, names, variants=[])
    want = ir_measures.calc_aggregate([ir_measures.parse_measure(n) for n in names], qrels, run)
    want = {str(k): v for k, v in want.items()}
    got = {str(m): res.runs[0].mean[m] for m in res.metrics}
    assert got == pytest.approx(want, abs=1e-12)
    assert got["NumRet(rel=2)"] == 2 and got["SetP(rel=2)"] == pytest.approx((1 / 4 + 1 / 2) / 2)
    judged = ["P(judged_only=True)@3", "AP(judged_only=True)", "RR(judged_only=True)", "Rprec(judged_only=True)",
              "nDCG(judged_only=True)@3", "R(judged_only=True)@2", "SetP(judged_only=True)", "SetF(judged_only=True)",
              "SetAP(judged_only=True)", "Success(judged_only=True)@1", "IPrec(judged_only=True)@0.5"]
    q2 = {"q1": {"a": 2, "b": 1, "c": 0, "d": 2, "n": -1}, "q2": {"x": 1, "y": 3, "w": 0}}
    r2 = {"q1": {"u1": 5.0, "a": 3.0, "n": 2.5, "b": 2.0, "u2": 1.5, "c": 1.0, "e": 0.5},
          "q2": {"u": 3.0, "y": 1.0, "z": 2.0, "w": 0.2}}
    res = ue.evaluate(q2, r2, judged, variants=[])
    want = ir_measures.calc_aggregate([ir_measures.parse_measure(n) for n in judged], q2, r2)
    want = {str(k).replace("True", "1"): v for k, v in want.items()}
    got = {str(m): res.runs[0].mean[m] for m in res.metrics}
    assert got == pytest.approx(want, abs=1e-12)
    assert got["P(judged_only=1)@3"] == pytest.approx((2 / 3 + 1 / 3) / 2)  # a, b, c; then y, w, (none)
    # the bounds of a measure with its own -J permute what -J keeps: q1's judged documents of grade >= 0
    import itertools

    def ap(rels):
        hits, s = 0, 0.0
        for i, r in enumerate(rels, 1):
            hits += r
            s += hits / i if r else 0.0
        return s / 3

    vals = [ap(p) for p in set(itertools.permutations([1, 1, 1, 0]))]
    b = ue.evaluate(q2, r2, ["AP(judged_only=True)"], variants=["E", "IUB", "WLB"], pool="qrels")
    bv = {str(m): b.runs[0].values[m][0] for m in b.metrics}
    assert bv["E(AP(judged_only=1))"] == pytest.approx(np.mean(vals), abs=1e-12)
    assert bv["IUB(AP(judged_only=1))"] == 1.0 and bv["WLB(AP(judged_only=1))"] == pytest.approx(min(vals))
    # the run's documents: -J keeps a, b, c of q1 (R stays 3)
    vals = [ap(p) for p in set(itertools.permutations([1, 1, 0]))]
    b = ue.evaluate(q2, r2, ["AP(judged_only=True)"], variants=["E", "IUB", "WLB"], pool="run")
    bv = {str(m): b.runs[0].values[m][0] for m in b.metrics}
    assert bv["E(AP(judged_only=1))"] == pytest.approx(np.mean(vals), abs=1e-12)
    assert bv["IUB(AP(judged_only=1))"] == pytest.approx(2 / 3) and bv["WLB(AP(judged_only=1))"] == pytest.approx(min(vals))
    with pytest.raises(Exception, match="judged_only"):
        ue.evaluate(q2, r2, ["P(judged_only=2)@3"], variants=[])
    _, r2 = _values(qrels, run, ["NumRelRet(rel=2)"])
    assert r2.runs[0].mean[r2.metrics[0]] == 2
    with pytest.raises(Exception, match="cutoff given twice"):
        ue.evaluate(qrels, run, ["P(cutoff=2)@3"], variants=[])
