"""The 'all' row of a variant whose values are the measure's own (LB, UB, BS, BSLO, BSHI, CL) follows
the measure's summary rule: GMAP's bounds are geometric means, CL(num_ret) and CL(num_q) sums (as
trec_eval -J prints them); text measures take no variant."""
from __future__ import annotations

import math

import pytest

from ulnorm_eval import evaluate
from ulnorm_eval.core.registry import UnknownMeasure

from conftest import command

QRELS = "1 0 a 1\n1 0 b 1\n2 0 c 1\n2 0 d 0\n"
RUN = "1 Q0 a 1 3 r\n1 Q0 x 2 2 r\n2 Q0 d 1 3 r\n2 Q0 y 2 2 r\n"


def gmean(*v):
    return math.exp(sum(math.log(max(x, 1e-5)) for x in v) / len(v))


def test_gmap_bounds_are_geometric_means(write):
    # q1: a relevant at 1, hole x at 2, b unretrieved: AP 1/2; x relevant: (1 + 2/2)/3 = 2/3.
    # q2: d non-relevant at 1, hole y at 2, c unretrieved: AP 0; y relevant: (1/2)/2 = 1/4.
    ev = evaluate(write("q", QRELS), write("r", RUN), ["GMAP"], variants=["LB", "UB", "BS", "BSLO", "BSHI"],
                  holes_samples=50, holes="closed")
    mean = ev.runs[0].mean
    by = {str(m): v for m, v in mean.items()}
    assert by["GMAP"] == pytest.approx(gmean(0.5, 0.0))
    assert by["LB(GMAP)"] == pytest.approx(gmean(0.5, 0.0))
    assert by["UB(GMAP)"] == pytest.approx(gmean(2 / 3, 0.25))
    assert by["LB(GMAP)"] <= by["GMAP"] <= by["UB(GMAP)"]
    for v in ("BS", "BSLO", "BSHI"):  # geometric means of per-query values within [LB, UB]
        vals = ev.runs[0].values[[m for m in mean if str(m) == f"{v}(GMAP)"][0]]
        assert by[f"{v}(GMAP)"] == pytest.approx(gmean(*vals))
        assert by["LB(GMAP)"] - 1e-12 <= by[f"{v}(GMAP)"] <= by["UB(GMAP)"] + 1e-12


def test_condensed_counts_are_sums(write):
    ev = evaluate(write("q", QRELS), write("r", RUN), ["num_ret", "CL(num_ret)", "CL(num_q)", "CL(GMAP)"],
                  variants=[])
    by = {str(m): v for m, v in ev.runs[0].mean.items()}
    assert by["NumRet"] == 4
    assert by["CL(NumRet)"] == 2  # x and y removed, summed over the 2 queries (trec_eval -J num_ret)
    assert by["CL(NumQ)"] == 2
    assert by["CL(GMAP)"] == pytest.approx(gmean(0.5, 0.0))  # the judged ranks: AP 1/2 and 0


def test_condensed_count_prints_as_an_integer(write):
    out = command(["-f", "trec", "--norm", "none", "-m", "CL(num_ret)", write("q", QRELS),
                   write("r", RUN)])
    assert out.returncode == 0, out.stderr
    assert out.stdout == "CL(NumRet)\tall\t2\n"


def test_gmap_takes_condensed_and_hole_variants_from_norm(write):
    ev = evaluate(write("q", QRELS), write("r", RUN), ["GMAP"], variants=["CL", "LB", "UL2"], warn=lambda s: None)
    assert [str(m) for m in ev.metrics] == ["GMAP", "CL(GMAP)", "LB(GMAP)"]


@pytest.mark.parametrize("name", ["CL(runid)", "CL(relstring)"])
def test_text_measures_take_no_variant(write, name):
    with pytest.raises(UnknownMeasure, match="text"):
        evaluate(write("q", QRELS), write("r", RUN), [name], variants=[])


def test_text_measures_skip_norm_variants(write):
    out = command(["-q", "-f", "trec", "--norm", "cl", "-m", "relstring", "-m", "runid",
                   write("q", QRELS), write("r", RUN)])
    assert out.returncode == 0, out.stderr
    assert "CL(" not in out.stdout and "relstring\t1\t'1-'" in out.stdout
