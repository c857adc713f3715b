"""Normalized Residual Gain (Normalized Residual Gain (SIGIR-AP 2024)): Table 1, hand-computed browsing models, an independent
per-document reference on random and real data, prior-set protocols and the command line."""
from __future__ import annotations

import ulnorm_eval
import gzip
import json
import math
import re

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from ulnorm_eval.pipeline import evaluate as api
from ulnorm_eval.cli.main import main
from ulnorm_eval.inputs.in_memory import qrels_from_object, run_from_object
from ulnorm_eval.analysis.nrg import NRGError, evaluate_nrg, group_of, prior_sets, resolve_nrg_metrics
from ulnorm_eval.core.registry import Metric, UnknownMeasure, parse

L2 = math.log2


def qrels(rows):
    """rows: (qid, docid, grade)."""
    q, d, g = zip(*rows)
    return qrels_from_object(pd.DataFrame({"query_id": q, "doc_id": d, "relevance": g}))


def run(name, ranked: dict):
    """ranked: qid -> docids in rank order (scores descending, so any tie rule gives this order)."""
    q, d, s = [], [], []
    for qid, docs in ranked.items():
        for i, doc in enumerate(docs):
            q.append(qid), d.append(doc), s.append(float(len(docs) - i))
    return run_from_object(pd.DataFrame({"query_id": q, "doc_id": d, "score": s}), name)


def means(res) -> dict:
    return {(rr.name, str(m)): rr.mean[m] for rr in res.runs for m in res.metrics}


# --------------------------------------------------------------------------- Normalized Residual Gain (SIGIR-AP 2024) Table 1

TEN = "ABCDEFGHIJ"
T1_QRELS = [("q", d, 4 if d in "AEFJ" else 0) for d in TEN]
T1_RUNS = {"R1": "ABCDEFGHIJ", "R2": "EDCBAFGHIJ", "R3": "JIHGFEDCBA"}  # relevant at ranks 1, 5, 6, 10
# Normalized Residual Gain (SIGIR-AP 2024) Table 1 (App. B), as printed: NRG(nDCG@10) of the row run given the column prior set
T1_PAIRS = {("R1", "R2"): 0.7361, ("R1", "R3"): 0.8277, ("R2", "R1"): 0.7361, ("R2", "R3"): 0.7988,
            ("R3", "R1"): 0.8277, ("R3", "R2"): 0.7988}
T1_OTHER_TWO = {"R1": 0.8417, "R2": 0.8316, "R3": 0.8681}


@pytest.fixture(scope="module")
def table1():
    return qrels(T1_QRELS), {n: run(n, {"q": list(o)}) for n, o in T1_RUNS.items()}


@pytest.mark.parametrize("measure", ["nDCG@10", "nDCG(dcg='exp-log2')@10"])
def test_table1_single_priors(table1, measure):
    Q, R = table1
    for (a, b), want in T1_PAIRS.items():
        res = evaluate_nrg(Q, [R[a]], [R[b]], [measure])
        got = means(res)
        assert round(got[(a, measure.replace('"', "'"))], 4) == 0.7933  # equal nDCG@10 for all three
        assert round(got[(a, f"NRG({measure})")], 4) == want, (a, b)


def test_table1_other_two_leave_one_out(table1):
    Q, R = table1
    res = evaluate_nrg(Q, list(R.values()), protocol="leave-one-out")
    got = means(res)
    for name, want in T1_OTHER_TWO.items():
        assert round(got[(name, "nDCG@10")], 4) == 0.7933
        assert round(got[(name, "NRG(nDCG@10)")], 4) == want
    assert res.priors == {"R1": ["R2", "R3"], "R2": ["R1", "R3"], "R3": ["R1", "R2"]}


def test_table1_hand_check_and_wrong_normaliser(table1):
    """R1 | {R3} by hand (notes §3); NRG(DCG@10) / plain IDCG gives the *wrong* reading 0.4091 of R1|{R2}."""
    Q, R = table1
    a, e, f = 4 * (1 - 1 / L2(11)), 4 * (1 - 1 / L2(7)), 4 * (1 - 1 / L2(6))  # J is at rank 1 of R3: 0
    raw = a + e / L2(6) + f / L2(7)
    ideal = a + e / L2(3) + f / L2(4)
    got = means(evaluate_nrg(Q, [R["R1"]], [R["R3"]], ["nDCG@10", "DCG@10"]))
    assert got[("R1", "NRG(nDCG@10)")] == pytest.approx(raw / ideal, rel=1e-12)
    assert got[("R1", "NRG(DCG@10)")] == pytest.approx(raw, rel=1e-12)
    idcg = 4 * (1 + 1 / L2(3) + 1 / L2(4) + 1 / L2(5))
    wrong = means(evaluate_nrg(Q, [R["R1"]], [R["R2"]], ["DCG@10"]))[("R1", "NRG(DCG@10)")] / idcg
    assert round(wrong, 4) == 0.4091


@pytest.mark.parametrize("depth, want", [(1, (1, 1, 1)), (2, (1, 1, 1)), (4, (1, 1, 1)), (5, (0, 0, 2)),
                                         (6, (0, 0, 1)), (9, (0, 0, 1)), (10, (0, 0, 0))])
def test_table1_unique_contributions_by_pool_depth(table1, depth, want):
    """App. B: at depth 10 none makes a unique contribution; at other depths each contributes differently."""
    Q, R = table1
    res = evaluate_nrg(Q, list(R.values()), protocol="leave-one-out", unique=True, measures=[f"P@{depth}"])
    got = means(res)
    assert tuple(got[(n, f"UC(P@{depth})")] for n in ("R1", "R2", "R3")) == want
    nrg = means(evaluate_nrg(Q, list(R.values()), protocol="leave-one-out", measures=[f"P@{depth}"]))
    for n, w in zip(("R1", "R2", "R3"), want):  # UC(P@K) = K * NRG(P@K)
        assert nrg[(n, f"NRG(P@{depth})")] == pytest.approx(w / depth)


# --------------------------------------------------------------------------- hand-computed browsing models

@pytest.fixture(scope="module")
def small():
    """q1: a(2) b(1) c(0); q2: d(1) e(1); q3: f(1).  T ranks a b x | d y | f; P ranks a c b in q1 and f in q3."""
    Q = qrels([("q1", "a", 2), ("q1", "b", 1), ("q1", "c", 0), ("q2", "d", 1), ("q2", "e", 1), ("q3", "f", 1)])
    T = run("T", {"q1": ["a", "b", "x"], "q2": ["d", "y"], "q3": ["f"]})
    P = run("P", {"q1": ["a", "c", "b"], "q3": ["f"]})
    P2 = run("P2", {"q1": ["b"]})
    return Q, T, P, P2


def per_query(res, name, metric):
    rr = next(r for r in res.runs if r.name == name)
    return dict(zip(rr.qids, rr.values[parse(metric)]))


def test_ndcg_document_a_prior_ranks_first_loses_all_gain(small):
    Q, T, P, _ = small
    res = evaluate_nrg(Q, [T], [P], ["nDCG@3"])
    v = per_query(res, "T", "NRG(nDCG@3)")
    # q1: a is at P's rank 1, residual 2(1-1) = 0; b at P's rank 3, residual 1(1 - 1/log2 4) = 0.5;
    # T = a b x: raw = 0.5/log2 3; the residual ideal is b alone at rank 1: 0.5
    assert v["q1"] == pytest.approx((0.5 / L2(3)) / 0.5, rel=1e-12)
    # q2: no prior ranks anything: the plain nDCG@3, the unretrieved e raising the ideal
    assert v["q2"] == pytest.approx(1 / (1 + 1 / L2(3)), rel=1e-12)
    # q3: the only relevant document is at rank 1 of P: residual ideal 0 -> NRG 0 (plain nDCG is 1)
    assert v["q3"] == 0.0
    assert per_query(res, "T", "nDCG@3") == pytest.approx({"q1": 1.0, "q2": 1 / (1 + 1 / L2(3)), "q3": 1.0})


def test_dcg_p_rbp_uc_by_hand(small):
    Q, T, P, _ = small
    res = evaluate_nrg(Q, [T], [P], ["DCG@3", "P@2", "RBP(p=0.5)", "RBP(p=0.5,rel=1)@2"])
    assert per_query(res, "T", "NRG(DCG@3)")["q1"] == pytest.approx(0.5 / L2(3), rel=1e-12)
    # P@2: seen = 1 within 2: a (P rank 1) is used up; b is at P rank 3 > 2, so it keeps its gain
    assert per_query(res, "T", "NRG(P@2)") == {"q1": 0.5, "q2": 0.5, "q3": 0.0}
    # RBP(0.5), gain = grade / 2: a -> 1*(1-1) = 0; b -> 0.5*(1-0.5^2) = 0.375 at rank 2: (1-p) 0.375*0.5
    rbp = per_query(res, "T", "NRG(RBP(p=0.5))")
    assert rbp["q1"] == pytest.approx(0.5 * 0.375 * 0.5, rel=1e-12)
    assert rbp["q2"] == pytest.approx(0.5 * 0.5, rel=1e-12)  # d (gain 1/2) at rank 1, no prior
    assert per_query(res, "T", "RBP(p=0.5)")["q1"] == pytest.approx(0.5 * (1 + 0.5 * 0.5))
    # binary RBP cut at 2: P's b (rank 3) is beyond K, so b keeps gain 1: (1-p) * 1 * 0.5
    assert per_query(res, "T", "NRG(RBP(p=0.5,rel=1)@2)")["q1"] == pytest.approx(0.25, rel=1e-12)
    uc = evaluate_nrg(Q, [T], [P], ["P@2", "P@3"], unique=True)
    assert per_query(uc, "T", "UC(P@2)") == {"q1": 1.0, "q2": 1.0, "q3": 0.0}
    assert per_query(uc, "T", "UC(P@3)") == {"q1": 0.0, "q2": 1.0, "q3": 0.0}


def test_two_priors_multiply(small):
    Q, T, P, P2 = small
    # b: (1 - 1/log2 4) from P times (1 - 1) from P2 -> every relevant document of q1 is used up
    res = evaluate_nrg(Q, [T], [P, P2], ["nDCG@3", "RBP(p=0.5)"])
    assert per_query(res, "T", "NRG(nDCG@3)")["q1"] == 0.0
    assert per_query(res, "T", "NRG(RBP(p=0.5))")["q1"] == 0.0
    res = evaluate_nrg(Q, [T], [P2], ["nDCG@3"])  # P2 alone: a keeps 2, b is used up
    assert per_query(res, "T", "NRG(nDCG@3)")["q1"] == pytest.approx(1.0)


def test_run_queries_only_and_grades_as_qrels(small):
    Q, T, P, _ = small
    T2 = run("T2", {"q1": ["b", "a"]})
    res = evaluate_nrg(Q, [T2], [P], ["nDCG@3"], run_queries_only=True)
    assert res.runs[0].qids == ["q1"]
    full = evaluate_nrg(Q, [T2], [P], ["nDCG@3"])
    assert full.runs[0].qids == ["q1", "q2", "q3"] and full.runs[0].missing_qids == ["q2", "q3"]
    assert full.runs[0].mean[parse("NRG(nDCG@3)")] == pytest.approx(res.runs[0].mean[parse("NRG(nDCG@3)")] / 3)


# --------------------------------------------------------------------------- an independent reference

def _ref_order(df):
    """trec_eval's order, written independently: score descending, then docid descending (bytes)."""
    out = {}
    for qid, g in df.groupby("query_id"):
        rows = sorted(zip(g["score"], g["doc_id"]), key=lambda t: (t[0], t[1].encode()), reverse=True)
        out[qid] = [d for _, d in rows]
    return out


def ref_nrg(target, priors, judged, measure, rel=1, max_grade=None):
    """Normalized Residual Gain (SIGIR-AP 2024) eq. 3-4 document by document: target/priors are qid -> ranked docids, judged qid -> {doc: grade}."""
    fam, k, p, exp = measure
    max_grade = max_grade or max(g for d in judged.values() for g in d.values())

    def seen(i):  # 1-based; None = not ranked within K
        if i is None or (k is not None and i > k):
            return 0.0
        return p ** (i - 1) if fam == "RBP" else 1.0 if fam == "P" else 1 / L2(i + 1)

    def gain(g):
        if fam == "P":
            return float(g >= rel)
        if fam == "RBP":
            return max(g, 0) / max_grade
        return 2.0 ** max(g, 0) - 1 if exp else float(max(g, 0))

    out = {}
    for qid in judged:
        def resid(d):
            r = gain(judged[qid].get(d, 0))
            for pr in priors:
                lst = pr.get(qid, [])
                r *= 1 - seen(lst.index(d) + 1 if d in lst else None)
            return r
        raw = sum(resid(d) * seen(i + 1) for i, d in enumerate(target.get(qid, [])))
        if fam == "nDCG":
            ideal = sorted((resid(d) for d in judged[qid]), reverse=True)
            n = sum(g * seen(i + 1) for i, g in enumerate(ideal))
            out[qid] = raw / n if n > 0 else 0.0
        else:
            out[qid] = raw * {"DCG": 1, "P": 1 / k if k else 1, "RBP": 1 - (p or 0)}[fam]
    return out


REF_MEASURES = {"nDCG@5": ("nDCG", 5, None, False), "nDCG": ("nDCG", None, None, False),
                "nDCG(dcg='exp-log2')@10": ("nDCG", 10, None, True), "DCG@7": ("DCG", 7, None, False),
                "P@5": ("P", 5, None, False), "RBP(p=0.8)": ("RBP", None, 0.8, False),
                "RBP(p=0.6)@4": ("RBP", 4, 0.6, False)}


def test_matches_reference_on_random_runs_with_ties():
    rng = np.random.default_rng(7)
    docs = [f"d{i}" for i in range(25)]
    qrows = [(f"q{q}", d, int(rng.integers(-1, 4))) for q in range(6) for d in rng.choice(docs, 12, replace=False)]
    Q = qrels(qrows)
    judged = {}
    for q, d, g in qrows:
        judged.setdefault(q, {})[d] = g
    frames = []
    for r in range(4):
        rows = []
        for q in range(6 if r else 5):  # run 0 misses q5
            for d in rng.choice(docs, int(rng.integers(3, 20)), replace=False):
                rows.append((f"q{q}", d, float(rng.integers(0, 6))))  # integer scores: many ties
        frames.append(pd.DataFrame(rows, columns=["query_id", "doc_id", "score"]))
    runs = [run_from_object(f, f"r{i}") for i, f in enumerate(frames)]
    ranked = [_ref_order(f) for f in frames]
    res = evaluate_nrg(Q, runs, protocol="leave-one-out", measures=list(REF_MEASURES))
    for i, rr in enumerate(res.runs):
        others = [ranked[j] for j in range(4) if j != i]
        for name, spec in REF_MEASURES.items():
            want = ref_nrg(ranked[i], others, judged, spec)
            got = dict(zip(rr.qids, rr.values[parse(f"NRG({name})")]))
            assert got == pytest.approx(want, rel=1e-12, abs=1e-15), (rr.name, name)
            plain = ref_nrg(ranked[i], [], judged, spec)
            assert dict(zip(rr.qids, rr.values[parse(name)])) == pytest.approx(plain, rel=1e-12, abs=1e-15)


def test_empty_prior_set_is_the_plain_measure_bit_for_bit(shared):
    d = shared / "dlhard-passage"
    names = ["nDCG@10", "nDCG", "nDCG(dcg='exp-log2')@20", "DCG@10", "P@10", "P(rel=2)@20", "RBP(p=0.8)",
             "RBP(p=0.9,rel=2)@50"]
    res = evaluate_nrg(str(d / "qrels.txt"), [str(d / "runs" / "bm25_rm3.run.gz")], measures=names)
    rr = res.runs[0]
    main_ = ulnorm_eval.evaluate(str(d / "qrels.txt"), [str(d / "runs" / "bm25_rm3.run.gz")], names, variants=[])
    for n in names:
        m = parse(n)
        np.testing.assert_array_equal(rr.values[Metric(m.measure, "NRG")], rr.values[m])
        np.testing.assert_array_equal(rr.values[m], main_.runs[0].values[m])
        assert rr.mean[Metric(m.measure, "NRG")] == rr.mean[m] == main_.runs[0].mean[m]
    assert rr.values[parse("nDCG@10")].std() > 0  # a real spread, not a degenerate run


def test_dlhard_leave_one_out_matches_reference(shared):
    d = shared / "dlhard-passage"
    paths = sorted((d / "runs").glob("*.run.gz"))
    judged = {}
    for line in (d / "qrels.txt").read_text().splitlines():
        q, _, doc, g = line.split()
        judged.setdefault(q, {})[doc] = int(g)
    ranked = []
    for p in paths:
        with gzip.open(p, "rt") as fh:
            rows = [ln.split() for ln in fh]
        df = pd.DataFrame({"query_id": [r[0] for r in rows], "doc_id": [r[2] for r in rows],
                           "score": [float(r[4]) for r in rows]})
        ranked.append({q: v[:10] for q, v in _ref_order(df).items()})
    res = evaluate_nrg(str(d / "qrels.txt"), [str(p) for p in paths], protocol="leave-one-out",
                       measures=["nDCG@10", "P(rel=2)@10"])
    for i, rr in enumerate(res.runs):
        others = [ranked[j] for j in range(len(paths)) if j != i]
        want = ref_nrg(ranked[i], others, judged, ("nDCG", 10, None, False))
        assert dict(zip(rr.qids, rr.values[parse("NRG(nDCG@10)")])) == pytest.approx(want, rel=1e-12, abs=1e-15)
        want = ref_nrg(ranked[i], others, judged, ("P", 10, None, False), rel=2)
        assert dict(zip(rr.qids, rr.values[parse("NRG(P(rel=2)@10)")])) == pytest.approx(want, rel=1e-12)


# --------------------------------------------------------------------------- ordering

def test_priors_are_ordered_by_score_and_tie_rule_not_file_order():
    Q = qrels([("q", "a", 1), ("q", "b", 1)])
    T = run("T", {"q": ["a", "b"]})
    # file lists a first, but b scores higher: b is the prior's rank 1 and loses all its gain
    P = run_from_object(pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "score": [1.0, 2.0]}), "P")
    v = per_query(evaluate_nrg(Q, [T], [P], ["nDCG@2"]), "T", "NRG(nDCG@2)")["q"]
    resid_a = 1 - 1 / L2(3)
    assert v == pytest.approx(resid_a / resid_a)  # a (residual) at rank 1 of T, b (0) at rank 2
    # a score tie is broken by docid descending (trec_eval): b first again; --ties file keeps a first
    Pt = run_from_object(pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "score": [1.0, 1.0]}), "P")
    assert per_query(evaluate_nrg(Q, [T], [Pt], ["nDCG@2"]), "T", "NRG(nDCG@2)")["q"] == pytest.approx(v)
    vf = per_query(evaluate_nrg(Q, [T], [Pt], ["nDCG@2"], ties="file"), "T", "NRG(nDCG@2)")["q"]
    assert vf == pytest.approx((1 - 1 / L2(3)) / L2(3) / (1 - 1 / L2(3)))


def test_depth_cuts_priors():
    Q = qrels([("q", "a", 1), ("q", "b", 1)])
    T = run("T", {"q": ["a", "b"]})
    P = run("P", {"q": ["x", "y", "a"]})
    got = per_query(evaluate_nrg(Q, [T], [P], ["nDCG"]), "T", "NRG(nDCG)")["q"]
    assert got < 1.0  # no cutoff: P's rank-3 a still costs 1/log2 4 of its gain
    assert per_query(evaluate_nrg(Q, [T], [P], ["nDCG"], depth=2), "T", "NRG(nDCG)")["q"] == 1.0


# --------------------------------------------------------------------------- prior sets, names

def test_prior_set_protocols():
    assert prior_sets(3, "leave-one-out") == [[1, 2], [0, 2], [0, 1]]
    assert prior_sets(3, "chronological") == [[], [0], [0, 1]]
    assert prior_sets(2, "fixed", fixed=[2, 3]) == [[2, 3], [2, 3]]
    assert prior_sets(2, "chronological", fixed=[2]) == [[2], [0, 2]]
    groups = ["x", "x", "y", "z", "z"]
    best = [0.3, 0.5, 0.1, 0.4, 0.4]  # z ties: the first listed (3) wins
    assert prior_sets(5, "group", groups=groups, best=best) == [[2, 3], [2, 3], [1, 3], [1, 2], [1, 2]]


def test_group_of():
    names = ["uogTrA", "uogTrB", "idst_bert", "bm25_rm3"]
    assert group_of(names, r"^[a-z]+") == ["uog", "uog", "idst", "bm"]
    assert group_of(names, r"^(\w+?)(?:_|Tr)") == ["uog", "uog", "idst", "bm25"]
    with pytest.raises(NRGError, match="does not match"):
        group_of(names, r"^uog")


def test_group_protocol_picks_best_of_other_groups(shared):
    d = shared / "dlhard-passage"
    paths = [str(p) for p in sorted((d / "runs").glob("*.run.gz"))]
    notes = []
    res = evaluate_nrg(str(d / "qrels.txt"), paths, protocol="group", group_by=r"^bm25(?:_rm3)?", warn=notes.append)
    plain = {rr.name: rr.mean[parse("nDCG@10")] for rr in res.runs}
    bm25 = max((n for n in plain if not n.startswith("bm25_rm3")), key=plain.get)
    rm3 = max((n for n in plain if n.startswith("bm25_rm3")), key=plain.get)
    for n, prior in res.priors.items():
        assert prior == [rm3] if not n.startswith("bm25_rm3") else prior == [bm25]
    assert any(rm3 in x for x in notes)
    sel = evaluate_nrg(str(d / "qrels.txt"), paths, protocol="group", group_by=r"^bm25(?:_rm3)?",
                       best_by="RR", measures=["P@10"])
    assert set(sum(sel.priors.values(), [])) <= {p.split("/")[-1][:-3] for p in paths}


def test_metric_names_are_canonical_and_parseable():
    m = parse("NRG(nDCG@10)")
    assert m.variant == "NRG" and str(m) == "NRG(nDCG@10)" and m.trec_name() == "nrg_ndcg_cut_10"
    assert str(parse("nrg(RBP(p=0.9)@20)")) == "NRG(RBP(p=0.9)@20)"
    assert [str(x) for x in resolve_nrg_metrics(["nDCG@10", "UC(P@10)"])] == [
        "nDCG@10", "NRG(nDCG@10)", "P@10", "UC(P@10)"]
    assert [str(x) for x in resolve_nrg_metrics(None, unique=True)] == ["P@10", "UC(P@10)"]
    for bad in ("AP", "UL2(nDCG@10)", "UC(nDCG@10)", "ERR@20"):
        with pytest.raises(UnknownMeasure):
            resolve_nrg_metrics([bad])
    with pytest.raises(UnknownMeasure, match="P@K"):
        resolve_nrg_metrics(["nDCG@10"], unique=True)


def test_main_evaluation_refuses_nrg(small):
    Q, T, _, _ = small
    with pytest.raises(UnknownMeasure, match="ulnorm-eval nrg"):
        ulnorm_eval.evaluate(Q, [T], ["NRG(nDCG@10)"], variants=[])
    with pytest.raises(UnknownMeasure, match="needs prior runs"):  # -n nrg
        api.resolve_metrics(["P@5"], ["UL2", "nrg"])


def test_duplicate_run_names_are_refused(small):
    Q, T, _, _ = small
    with pytest.raises(NRGError, match="two runs are named 'T'"):
        evaluate_nrg(Q, [T], [run("T", {"q1": ["a"]})])


# --------------------------------------------------------------------------- command line

def _t1_files(write):
    q = write("qrels", "".join(f"q 0 {d} {g}\n" for _, d, g in T1_QRELS))
    paths = []
    for n, order in T1_RUNS.items():
        lines = [f"q Q0 {d} {i + 1} {10 - i} x\n" for i, d in enumerate(order)]
        paths.append(write(n, "".join(reversed(lines))))  # file order must not matter
    return q, paths


def _trec(out: str, names=tuple(T1_RUNS)) -> dict:
    """{(run, measure): mean}: each run's block opens with its runid line, the run's tag as in eval
    (trec_eval's runid; every run here is tagged x), the blocks in the order of the RUN arguments."""
    got, blocks = {}, iter(names)
    run = None
    for m, q, v in (ln.split("\t") for ln in out.splitlines()):
        if m == "runid":
            assert v == "x"
            run = next(blocks)
        elif q == "all":
            got[(run, m)] = float(v)
    return got


def test_cli_leave_one_out_chronological_and_priors(write):
    q, paths = _t1_files(write)
    cli = CliRunner()
    r = cli.invoke(main, ["nrg", "--leave-one-out", "-f", "trec", q, *paths])
    assert r.exit_code == 0, r.output
    assert r.stderr.count("runs R1, R2, R3 share the tag 'x': their blocks' runid lines are the same") == 1
    got = _trec(r.stdout)
    assert {n: got[(n, "NRG(nDCG@10)")] for n in T1_OTHER_TWO} == T1_OTHER_TWO
    r = cli.invoke(main, ["nrg", "--chronological", "-f", "trec", q, *paths])
    got = _trec(r.stdout)
    assert got[("R1", "NRG(nDCG@10)")] == 0.7933 and got[("R2", "NRG(nDCG@10)")] == 0.7361
    r = cli.invoke(main, ["nrg", "-f", "trec", "--names", "trec", q, paths[0], "--prior", paths[2]])
    assert r.stdout == "ndcg_cut_10           \tall\t0.7933\nnrg_ndcg_cut_10       \tall\t0.8277\n"


def test_cli_formats_unique_and_output_file(write, tmp_path):
    q, paths = _t1_files(write)
    cli = CliRunner()
    out = tmp_path / "o.json"
    r = cli.invoke(main, ["nrg", "--leave-one-out", "--unique", "-m", "P@5", "-f", "json", "-o", str(out), q, *paths])
    assert r.exit_code == 0, r.output
    doc = json.loads(out.read_text())
    assert [x["summary"]["UC(P@5)"] for x in doc["runs"]] == [0, 0, 2]
    r = cli.invoke(main, ["nrg", "--leave-one-out", "-f", "tsv", q, *paths])
    rows = [ln.split("\t") for ln in r.stdout.splitlines()]
    assert rows[0] == ["run", "query", "nDCG@10", "NRG(nDCG@10)"]
    assert [round(float(x[3]), 4) for x in rows[1:] if x[1] == "all"] == list(T1_OTHER_TWO.values())
    r = cli.invoke(main, ["nrg", "--leave-one-out", "-f", "table", q, *paths])
    assert r.exit_code == 0 and "0.8681" in r.stdout and "NRG" in r.stdout


def test_cli_errors(write, tmp_path):
    q, paths = _t1_files(write)
    cli = CliRunner()
    r = cli.invoke(main, ["nrg", "--leave-one-out", "--chronological", q, *paths])
    assert r.exit_code == 2 and "exclude each other" in r.stderr
    r = cli.invoke(main, ["nrg", "--leave-one-out", "-m", "AP", q, *paths])
    assert r.exit_code == 2 and "NRG is defined" in r.stderr
    # no prior run: NRG would equal the measure, refused rather than printed as if meaningful
    r = cli.invoke(main, ["nrg", q, *paths])
    assert r.exit_code == 2 and "no prior run: NRG would equal the measure" in r.stderr and r.stdout == ""
    r = cli.invoke(main, ["nrg", "--leave-one-out", q, paths[0]])
    assert r.exit_code == 2 and "--leave-one-out needs at least two RUNs" in r.stderr
    assert cli.invoke(main, ["nrg", q, paths[0], "--prior", paths[1]]).exit_code == 0
    bad = write("bad", "q Q0 A 1 1.0 x\nq Q0 B 2 notanumber x\n")
    out = tmp_path / "never.txt"
    r = cli.invoke(main, ["nrg", "-o", str(out), q, paths[0], "--prior", bad])
    assert r.exit_code == 2 and re.search(r"bad:2: score 'notanumber'", r.stderr)
    assert not out.exists()
    r = cli.invoke(main, ["nrg", "--group-by", "^Z", q, *paths])
    assert r.exit_code == 2 and "does not match --group-by" in r.stderr
    r = cli.invoke(main, ["-m", "NRG(nDCG@10)", q, paths[0]])
    assert r.exit_code == 2 and "needs prior runs" in r.stderr
