"""The papers' worked examples, through the public API (qrels and a run in, bounds out).

Westerborg 2022 (a thesis on bounding listwise LTR losses): Tables 2.2-2.4 (ideal and worst rankings of
X(9, 3)), Table 3.3 (E[AP] by enumeration) and Bestgen's E[AP] for 2 relevant among 5; Karmaker & Feng 2022
(Karmaker & Feng 2022) §4.5.1: E[SP@k] = k (P/n)^2, kept under ``expectation='paper'``; eq. 7
summed to k.  Printed values are compared at the precision the papers print them; the exact
values come from the definitions, written out here.
"""
from __future__ import annotations

from fractions import Fraction
from math import log2

import pandas as pd
import pytest

from ulnorm_eval import evaluate
from ulnorm_eval.inputs.in_memory import qrels_from_object, run_from_object


def bounds_of(labels, measures, variants=("E", "IUB", "WLB"), **kw):
    """E/IUB/WLB of one query whose judged documents carry ``labels``; the run ranks them in order.  The
    papers' random ranking orders the query's candidates (Karmaker & Feng 2022): ``--pool run``, here the
    judged documents, not the default qrels+1000 with its unjudged placeholders."""
    kw.setdefault("pool", "run")
    docs = [f"d{i}" for i in range(len(labels))]
    qrels = qrels_from_object(pd.DataFrame({"query_id": "x", "doc_id": docs, "relevance": labels}))
    run = run_from_object(pd.DataFrame({"query_id": "x", "doc_id": docs,
                                       "score": [float(len(labels) - i) for i in range(len(labels))]}))
    res = evaluate(qrels, run, measures=list(measures), variants=list(variants), **kw)
    row = res.frame.loc[(run.name, "x")]
    return {k: float(v) for k, v in row.items()}


X93 = [1, 1, 1, 0, 0, 0, 0, 0, 0]  # X(9, 3): 9 items, 3 relevant


def test_table_2_2_dcg_ideal_and_worst():
    # gain 2^x - 1, discount log2(i+1): ideal ranks 1-3, worst ranks 7-9
    v = bounds_of(X93, ["DCG(dcg='exp-log2')"])
    assert round(v["IUB(DCG(dcg='exp-log2'))"], 2) == 2.13
    assert round(v["WLB(DCG(dcg='exp-log2'))"], 2) == 0.95
    assert v["IUB(DCG(dcg='exp-log2'))"] == pytest.approx(1 + 1 / log2(3) + 1 / 2, rel=1e-12)
    assert v["WLB(DCG(dcg='exp-log2'))"] == pytest.approx(1 / log2(8) + 1 / log2(9) + 1 / log2(10), rel=1e-12)
    # Westerborg 2022 eq. 3.2 gives DCG_min; nDCG_min divides by the ideal
    n = bounds_of(X93, ["nDCG(dcg='exp-log2')"])
    assert n["IUB(nDCG(dcg='exp-log2'))"] == pytest.approx(1.0)
    assert round(n["WLB(nDCG(dcg='exp-log2'))"], 4) == 0.4457


def test_table_2_3_rbp_ideal_and_worst():
    v = bounds_of(X93, ["RBP(p=0.7)"])
    assert round(v["IUB(RBP(p=0.7))"], 2) == 0.66
    assert round(v["WLB(RBP(p=0.7))"], 2) == 0.08
    assert v["IUB(RBP(p=0.7))"] == pytest.approx(0.3 * (1 + 0.7 + 0.49), rel=1e-12)
    assert v["WLB(RBP(p=0.7))"] == pytest.approx(0.3 * (0.7 ** 6 + 0.7 ** 7 + 0.7 ** 8), rel=1e-12)


def test_table_2_4_ap_ideal_and_worst():
    v = bounds_of(X93, ["AP"])
    assert round(v["IUB(AP)"], 2) == 1.00
    assert round(v["WLB(AP)"], 2) == 0.24
    assert v["WLB(AP)"] == pytest.approx(float(Fraction(61, 252)), rel=1e-12)  # (1/7 + 2/8 + 3/9) / 3


@pytest.mark.parametrize("labels, expected", [
    ([1, 0], Fraction(3, 4)),                  # Westerborg 2022 Table 3.3(a): X(2, 1)
    ([1, 1, 0], Fraction(29, 36)),             # Westerborg 2022 Table 3.3(b): X(3, 2)
    ([1, 1, 0, 0, 0], Fraction(237, 400)),     # Bestgen: 2 relevant among 5 -> 0.5925
])
def test_table_3_3_and_bestgen_expected_ap(labels, expected):
    v = bounds_of(labels, ["AP"])
    assert v["E(AP)"] == pytest.approx(float(expected), rel=1e-12)
    if len(labels) == 5:
        assert round(v["E(AP)"], 4) == 0.5925


def test_table_3_1_expected_dcg():
    # Westerborg 2022 eq. 3.8: E[DCG(X(N,P))] = sum_r (P/N) / log2(r+1)
    assert bounds_of([1, 0], ["DCG"])["E(DCG)"] == pytest.approx((1 + 1 / log2(3)) / 2, rel=1e-12)
    v = bounds_of([1, 1, 0], ["nDCG"])
    assert round(v["E(nDCG)"], 4) == 0.8710


def test_paper_expectation_of_sum_of_precision():
    """Karmaker & Feng 2022 §4.5.1: E[SP@k] = k (P/n)^2 (independence assumption); exact (P/n) H_m + ..."""
    labels = [1] + [0] * 9  # 1 relevant among 10, k = 5
    paper = bounds_of(labels, ["SP@5"], expectation="paper")
    exact = bounds_of(labels, ["SP@5"])
    assert paper["E(SP@5)"] == pytest.approx(0.05, rel=1e-12)
    assert exact["E(SP@5)"] == pytest.approx((1 + 1 / 2 + 1 / 3 + 1 / 4 + 1 / 5) / 10, rel=1e-12)
    assert round(exact["E(SP@5)"], 3) == 0.228
    # IUB[SP@k] = k (Karmaker & Feng 2022 §3.2), although one relevant document can only reach 1
    assert paper["IUB(SP@5)"] == 5 and exact["IUB(SP@5)"] == 1
    # AP@k = SP@k / R carries the same factor, so UL2(SP@k) = UL2(AP@k) in both modes
    for mode in ("paper", "exact"):
        v = bounds_of([1, 0, 1, 0, 0, 1, 0, 0], ["SP@5", "AP@5"], ["UL1", "UL2", "EM"], expectation=mode)
        for var in ("UL1", "UL2", "EM"):
            assert v[f"{var}(SP@5)"] == pytest.approx(v[f"{var}(AP@5)"], rel=1e-12), (mode, var)


def test_paper_expectation_of_dcg_sums_to_k():
    """Karmaker & Feng 2022 eq. 7 sums the discount to k; past the pool's end there is nothing to rank."""
    labels = [0, 0, 1, 2, 0, 3, 1]
    mean_gain = sum(2 ** r - 1 for r in labels) / len(labels)
    paper = bounds_of(labels, ["DCG(dcg='exp-log2')@10"], ["E"], expectation="paper")
    exact = bounds_of(labels, ["DCG(dcg='exp-log2')@10"], ["E"])
    assert paper["E(DCG(dcg='exp-log2')@10)"] == pytest.approx(mean_gain * sum(1 / log2(i + 1) for i in range(1, 11)))
    assert exact["E(DCG(dcg='exp-log2')@10)"] == pytest.approx(mean_gain * sum(1 / log2(i + 1) for i in range(1, 8)))
    assert round(paper["E(DCG(dcg='exp-log2')@10)"], 4) == 7.7890
    assert round(exact["E(DCG(dcg='exp-log2')@10)"], 4) == 6.2366
    # for k <= n the two agree (Karmaker & Feng 2022's check: 4.391325 at k = 4)
    p4 = bounds_of(labels, ["DCG(dcg='exp-log2')@4"], ["E"], expectation="paper")
    e4 = bounds_of(labels, ["DCG(dcg='exp-log2')@4"], ["E"])
    assert p4["E(DCG(dcg='exp-log2')@4)"] == pytest.approx(e4["E(DCG(dcg='exp-log2')@4)"], rel=1e-12)
    assert round(e4["E(DCG(dcg='exp-log2')@4)"], 6) == 4.391325


def test_paper_mode_scores_dcg_with_the_papers_exponential_gains():
    """Karmaker & Feng 2022 eq. 1 (Feng 2023 eq. 3.1): DCG@k = sum (2^R_i - 1) / log2(i + 1), and eq. 7:
    E[DCG@k] = E[2^R - 1] sum_{i<=k} 1/log2(i + 1).  --expectation paper scores nDCG and DCG so; the
    default (exact) keeps trec_eval's linear gains.  One query, its judged documents ranked in order."""
    labels = [0, 0, 1, 2, 0, 3, 1]
    d = [1 / log2(i + 1) for i in range(1, 5)]
    dcg = sum((2 ** r - 1) * x for r, x in zip(labels, d))  # 0 + 0 + 1/2 + 3/log2(5)
    ideal = sum((2 ** r - 1) * x for r, x in zip(sorted(labels, reverse=True), d))  # 7 + 3/log2(3) + 1/2 + 1/log2(5)
    e = sum(2 ** r - 1 for r in labels) / len(labels) * sum(d)  # 12/7 x 2.5616
    paper = bounds_of(labels, ["DCG@4", "nDCG@4"], ["E", "IUB", "UL2"], expectation="paper")
    assert paper["DCG@4"] == pytest.approx(dcg, rel=1e-12)
    assert round(paper["DCG@4"], 4) == 1.7920
    assert paper["E(DCG@4)"] == pytest.approx(e, rel=1e-12)
    assert round(paper["E(DCG@4)"], 6) == 4.391325
    assert paper["IUB(DCG@4)"] == pytest.approx(ideal, rel=1e-12)
    assert paper["nDCG@4"] == pytest.approx(dcg / ideal, rel=1e-12)
    assert paper["E(nDCG@4)"] == pytest.approx(e / ideal, rel=1e-12)
    assert paper["UL2(nDCG@4)"] == pytest.approx((dcg - e) / e, rel=1e-12)  # A < E: the lower branch
    # the default: linear gains (trec_eval's), 0 + 0 + 1/2 + 2/log2(5)
    exact = bounds_of(labels, ["DCG@4"], ["E"])
    assert exact["DCG@4"] == pytest.approx(0.5 + 2 / log2(5), rel=1e-12)
    assert exact["E(DCG@4)"] == pytest.approx(sum(labels) / len(labels) * sum(d), rel=1e-12)  # mean gain 1
    # an explicit gains= map keeps its gains in paper mode
    mapped = bounds_of(labels, ["DCG(gains={1:1,2:2,3:3})@4"], ["E"], expectation="paper")
    assert mapped["DCG(gains={1:1.0,2:2.0,3:3.0})@4"] == pytest.approx(exact["DCG@4"], rel=1e-12)
