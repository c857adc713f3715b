"""Agreement with ir_measures (pytrec_eval, i.e. trec_eval 9.x inside) on random qrels and runs.

pytrec_eval stores scores as float32 and breaks ties by docid descending, so under
``score_precision='float32'`` every per-query value must agree to 1e-9: heavy score ties, ties that
exist only in float32, queries without relevant documents, queries missing from the run (ir_measures
scores them 0) and run queries missing from the qrels (ignored by both).
"""
from __future__ import annotations

import ir_measures
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ulnorm_eval import evaluate
from ulnorm_eval.inputs.in_memory import qrels_from_object, run_from_object

MEASURES = [
    "nDCG@1", "nDCG@3", "nDCG@5", "nDCG@10", "nDCG", "AP", "AP@3", "AP@5", "P@1", "P@3", "P@5", "P@10",
    "RR", "R@3", "R@10", "Rprec",
    "nDCG(gains={0:0,1:2,2:5,3:9})@5", "nDCG(gains={1:3})", "nDCG(gains={0:1,1:3})@5",
    "AP(rel=2)", "P(rel=2)@3", "RR(rel=2)", "Rprec(rel=2)", "R(rel=3)@5",
]

# byte order matters for ties: 'B' < 'Z' < 'a' < 'b' < 'd1' < 'd10' < 'd2' < 'z' < 'é'
DOCS = ["a", "b", "B", "Z", "z", "d1", "d10", "d2", "é", "x"]
QIDS = ["1", "2", "10", "q"]
# few distinct values (heavy ties), and pairs that differ in float64 but tie in float32
F32_EXACT = st.one_of(st.sampled_from([0.0, 1.0, 2.0, -1.0, 0.5, 16777216.0]),
                      st.floats(-5, 5, allow_nan=False, allow_infinity=False, width=32))
SCORES = st.one_of(F32_EXACT, st.sampled_from([1.0 + 1e-9, 1.0 + 2e-8, 16777217.0]))
GRADES = st.sampled_from([-1, 0, 0, 1, 1, 2, 3])


@st.composite
def cases(draw, scores=SCORES):
    """{qid: (qrels {doc: grade}, run {doc: score})}; query '1' is judged and retrieved, the others
    may be judged only (missing from the run), retrieved only (ignored) or have no relevant doc.

    A judged query has at least one grade >= 0: pytrec_eval 0.5.11 loops forever on 'ndcg' for a
    query judged only negatively once any earlier 'ndcg' ran in the process (trec_eval 10 exits 4
    on it); test_only_negative_grades covers that case by hand.
    """
    out = {}
    for i, q in enumerate(QIDS):
        qr = draw(st.dictionaries(st.sampled_from(DOCS), GRADES, min_size=1 if i == 0 else 0, max_size=8)
                  .filter(lambda d: not d or max(d.values()) >= 0))
        run = draw(st.dictionaries(st.sampled_from(DOCS), scores, min_size=1 if i == 0 else 0, max_size=9))
        out[q] = (qr, run)
    return out


def _frames(case):
    qrels = [(q, d, g) for q, (qr, _) in case.items() for d, g in qr.items()]
    run = [(q, d, s) for q, (_, r) in case.items() for d, s in r.items()]
    return (pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"]),
            pd.DataFrame(run, columns=["query_id", "doc_id", "score"]))


def _ir_measures(names, qdf, rdf) -> dict:
    out = {}
    for n in names:
        ev = ir_measures.pytrec_eval.evaluator([ir_measures.parse_measure(n)], qdf)
        out.update({(str(m.measure), m.query_id): m.value for m in ev.iter_calc(rdf)})
    return out


def _ours(names, qdf, rdf, **kw):
    res = evaluate(qrels_from_object(qdf), run_from_object(rdf, "r"), names, variants=[], **kw)
    return res.runs[0], res.metrics


def _compare(case, precision="float32"):
    qdf, rdf = _frames(case)
    theirs = _ir_measures(MEASURES, qdf, rdf)
    rr, metrics = _ours(MEASURES, qdf, rdf, score_precision=precision)
    assert sorted(rr.qids) == sorted(set(qdf.query_id))
    compared = 0
    for name, m in zip(MEASURES, metrics):
        irm = str(ir_measures.parse_measure(name))
        for i, q in enumerate(rr.qids):
            expected = theirs[(irm, q)]
            assert abs(rr.values[m][i] - expected) <= 1e-9, (name, q, rr.values[m][i], expected, case)
            compared += 1
    return compared


@settings(max_examples=80, deadline=None)
@given(cases())
def test_per_query_agreement_float32(case):
    assert _compare(case) > 0


@settings(max_examples=30, deadline=None)
@given(cases(scores=F32_EXACT))
def test_float64_equals_float32_on_float32_scores(case):
    """Scores that float32 represents exactly create no new tie: both precisions agree."""
    assert _compare(case, "float64") > 0


def test_float32_ties_change_the_order_as_in_pytrec_eval():
    """2^24 + 1 and 2^24 tie in float32; the tie goes to the larger docid ('z_non' first)."""
    qdf = pd.DataFrame([("q", "a_rel", 1), ("q", "z_non", 0)], columns=["query_id", "doc_id", "relevance"])
    rdf = pd.DataFrame([("q", "a_rel", 16777217.0), ("q", "z_non", 16777216.0)],
                       columns=["query_id", "doc_id", "score"])
    theirs = _ir_measures(["RR"], qdf, rdf)[("RR", "q")]
    rr32, m = _ours(["RR"], qdf, rdf, score_precision="float32")
    rr64, _ = _ours(["RR"], qdf, rdf, score_precision="float64")
    assert theirs == 0.5
    assert rr32.values[m[0]][0] == 0.5
    assert rr64.values[m[0]][0] == 1.0  # trec_eval 10 reads doubles
    assert rr32.float32_ties == rr64.float32_ties == 2  # both documents change place


@pytest.mark.parametrize("name,expected", [
    # qrels a:1 b:0 c:1(unretrieved) n:-1; run a(3) x(2, unjudged) b(2) n(1)
    # order: a, x, b, n (x > b on the tie: docid descending)
    ("P@2", 0.5), ("RR", 1.0), ("AP", 0.5), ("R@4", 0.5), ("Rprec", 0.5),
    # DCG = 1; IDCG = 1 + 1/log2(3)
    ("nDCG", 1 / (1 + 1 / np.log2(3))),
    # grade 0 gains 1 but the unjudged x does not: DCG = 3 + 1/log2(4); IDCG = 3 + 3/log2(3) + 1/log2(4)
    ("nDCG(gains={0:1,1:3})", (3 + 0.5) / (3 + 3 / np.log2(3) + 0.5)),
])
def test_hand_computed(name, expected):
    qdf = pd.DataFrame([("q", "a", 1), ("q", "b", 0), ("q", "c", 1), ("q", "n", -1)],
                       columns=["query_id", "doc_id", "relevance"])
    rdf = pd.DataFrame([("q", "a", 3.0), ("q", "x", 2.0), ("q", "b", 2.0), ("q", "n", 1.0)],
                       columns=["query_id", "doc_id", "score"])
    rr, m = _ours([name], qdf, rdf)
    assert rr.values[m[0]][0] == pytest.approx(expected, abs=1e-12)
    assert _ir_measures([name], qdf, rdf)[(str(ir_measures.parse_measure(name)), "q")] == \
        pytest.approx(expected, abs=1e-12)


def test_only_negative_grades():
    """A query judged only negatively has no relevant document: every measure is 0 (trec_eval 10
    refuses its ndcg with exit 4), and it still counts in the mean."""
    qdf = pd.DataFrame([("1", "a", -1), ("1", "b", -2), ("2", "c", 1)],
                       columns=["query_id", "doc_id", "relevance"])
    rdf = pd.DataFrame([("1", "a", 2.0), ("1", "b", 1.0), ("2", "c", 1.0)],
                       columns=["query_id", "doc_id", "score"])
    rr, metrics = _ours(MEASURES, qdf, rdf)
    assert rr.qids == ["1", "2"]
    for name, m in zip(MEASURES, metrics):
        assert rr.values[m][0] == 0.0, name
        assert rr.mean[m] == pytest.approx(rr.values[m][1] / 2), name
