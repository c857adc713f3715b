"""--score-precision float32 against trec_eval, on real runs whose order changes with the precision.

Robust 2003 runs carry scores that differ in double precision but tie once rounded to single
precision (trec_eval <= 9.0.8, pytrec_eval and ir_measures read scores as float); a tie is then
broken by docno, which moves a relevant document past a non-relevant one (InexpC2, query 330, ranks
556/557; oce03noXbmD, queries 378 and 623).  The expected outputs in tests/data/float32 were made
by trec_eval 10.0, which reads doubles, once on the original lines and once on the same lines with
every score replaced by its float32 value (the commands head each file): relstring.1000 shows the
whole order, and the full-precision AP is recomputed here from that string.
"""
from __future__ import annotations

import gzip

import pytest
from click.testing import CliRunner

from ulnorm_eval import evaluate
from ulnorm_eval.cli.main import main

from conftest import ROOT

DATA = ROOT / "tests" / "data" / "float32"
CASES = {"InexpC2": ["330", "345", "636"], "oce03noXbmD": ["378", "623"]}


def _golden(run: str, precision: str) -> list[str]:
    path = DATA / f"{run}.q{'-'.join(CASES[run])}.{precision}.trec_eval"
    return [line for line in path.read_text().splitlines() if not line.startswith("#")]


@pytest.fixture
def subset(shared, tmp_path):
    """The qrels and run lines of the golden files' queries, cut as their header says (awk '$1 == q')."""
    def make(run: str):
        qids = set(CASES[run])
        d = shared / "robust03"
        qrels, lines = tmp_path / f"{run}.qrels", tmp_path / f"{run}.run"
        qrels.write_text("".join(x for x in open(d / "qrels.txt") if x.split()[0] in qids))
        with gzip.open(d / "runs" / f"input.{run}.gz", "rt") as fh:
            lines.write_text("".join(x for x in fh if x.split()[0] in qids))
        return str(qrels), str(lines)
    return make


@pytest.mark.parametrize("run", list(CASES))
@pytest.mark.parametrize("precision", ["float32", "float64"])
def test_relstring_map_rr_equal_trec_eval_in_both_precisions(subset, run, precision):
    qrels, lines = subset(run)
    res = CliRunner().invoke(main, ["--norm", "none", "--names", "trec", "-f", "trec", "-q", "-m", "relstring.1000",
                                    "-m", "map", "-m", "recip_rank", "--score-precision", precision, qrels, lines])
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines() == _golden(run, precision)
    # the two precisions order these runs differently: said once, under either precision
    assert res.stderr.count("ranked documents change place between float32 and float64 scores") == 1


@pytest.mark.parametrize("run", list(CASES))
def test_the_two_precisions_order_differently(run):
    g32, g64 = (dict(((x.split("\t")[0].strip(), x.split("\t")[1]), x.split("\t")[2]) for x in _golden(run, p))
                for p in ("float32", "float64"))
    rel32 = {q: v for (m, q), v in g32.items() if m == "relstring_1000"}
    rel64 = {q: v for (m, q), v in g64.items() if m == "relstring_1000"}
    differs = [q for q in rel32 if rel32[q] != rel64[q]]
    assert differs == CASES[run]
    # a relevant document changes place in at least one query (not only judged and unjudged ones)
    relevant_at = lambda s: [i for i, c in enumerate(s) if c not in "-0'"]  # noqa: E731
    assert any(relevant_at(rel32[q]) != relevant_at(rel64[q]) for q in differs)


def _ap_from_relstring(text: str, relevant: int) -> float:
    """AP = (1/R) sum over relevant ranks i of (relevant documents in the top i) / i; grade >= 1 relevant."""
    text = text.strip("'")
    hits, total = 0, 0.0
    for i, c in enumerate(text, start=1):
        if c not in "-0":
            hits += 1
            total += hits / i
    return total / relevant


@pytest.mark.parametrize("run", list(CASES))
def test_full_precision_ap_follows_trec_eval_order(subset, run):
    """trec_eval prints AP to 4 decimals, which hides the swap: AP from its relstring, to 1e-15."""
    qrels, lines = subset(run)
    R = {}
    for x in open(qrels):
        q, _, _, g = x.split()
        R[q] = R.get(q, 0) + (int(g) >= 1)
    moved = 0
    for precision in ("float32", "float64"):
        rel = {x.split("\t")[1]: x.split("\t")[2] for x in _golden(run, precision) if x.startswith("relstring")}
        res = evaluate(qrels, lines, ["AP"], variants=[], score_precision=precision)
        rr = res.runs[0]
        got = dict(zip(rr.qids, rr.values[res.metrics[0]]))
        for q in CASES[run]:
            assert got[q] == pytest.approx(_ap_from_relstring(rel[q], R[q]), rel=1e-14, abs=0), (precision, q)
        if precision == "float32":
            ap32 = got
    moved = sum(abs(ap32[q] - got[q]) > 1e-9 for q in CASES[run])
    assert moved >= 1
