"""The command line's core evaluation: options that change numbers, output layout, defaults.

Every expected number is computed by hand in the comment beside it.
"""
from __future__ import annotations

import math
import re

import pytest

from ulnorm_eval.pipeline.evaluate import resolve_metrics
from conftest import invoke


def run_cli(*args, stdin=None):
    return invoke(*args, input=stdin)


def values(result) -> dict:
    """trec rows -> {(run?, measure, qid): float}; several runs: the run named by its block's runid line."""
    assert result.exit_code == 0, result.output
    out, run = {}, ()
    for line in result.stdout.splitlines():
        m, q, v = [x.strip() for x in line.split("\t")]  # always three columns
        if m == "runid":
            run = (v,)
            continue
        out[(*run, m, q)] = float(v)
    return out


@pytest.fixture
def graded(write):
    # q: a grade 2, b grade 1; run r1 ranks b then a, r2 ranks a then b
    q = write("q.txt", "q 0 a 2\nq 0 b 1\n")
    r1 = write("r1.txt", "q Q0 b 1 2 t\nq Q0 a 2 1 t\n")
    r2 = write("r2.txt", "q Q0 a 1 2 u\nq Q0 b 2 1 u\n")
    return q, r1, r2


def test_default_measures_carry_the_default_variants(graded):
    q, r1, _ = graded
    got = values(run_cli(q, r1))
    assert [k[0] for k in got] == [str(m) for m in resolve_metrics(None, None)]
    assert {k[0] for k in got} >= {"nDCG@10", "AP", "RBP(p=0.8)", "E(nDCG@10)", "E(AP)", "EM(AP)",
                                    "EM(RBP(p=0.8))"}
    assert not {k[0] for k in got} & {"IUB(AP)", "UL2(AP)"}  # one answer per measure: value, E, EM
    plain = values(run_cli("--norm", "none", q, r1))
    assert list(plain) == [("nDCG@10", "all"), ("AP", "all"), ("RBP(p=0.8)", "all")]
    # nDCG@10 = (1 + 2/log2 3) / (2 + 1/log2 3); AP = 1 (both relevant); RBP = 0.2 (1/2 + 0.8 * 2/2)
    assert plain[("nDCG@10", "all")] == pytest.approx((1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3)), abs=5e-5)
    assert plain[("AP", "all")] == 1.0
    assert plain[("RBP(p=0.8)", "all")] == pytest.approx(0.26, abs=5e-5)


def test_parameterised_measures(graded):
    q, r1, _ = graded
    got = values(run_cli("--norm", "none", "-m", "nDCG(dcg='exp-log2')@10", "-m", "RBP(rel=2,p=0.9)",
                         "-m", "nDCG(gains={0:0,1:1,2:3})@10", q, r1))
    exp_ndcg = (1 + 3 / math.log2(3)) / (3 + 1 / math.log2(3))  # gains 2^g - 1: b=1, a=3
    assert got[("nDCG(dcg='exp-log2')@10", "all")] == pytest.approx(exp_ndcg, abs=5e-5)
    assert got[("RBP(p=0.9,rel=2)", "all")] == pytest.approx(0.1 * 0.9, abs=5e-5)  # a (grade 2) at rank 2
    assert got[("nDCG(gains={0:0.0,1:1.0,2:3.0})@10", "all")] == pytest.approx(exp_ndcg, abs=5e-5)


def test_several_runs_get_a_run_column(graded):
    q, r1, r2 = graded
    got = values(run_cli("--norm", "none", "-m", "RR", q, r1, r2))
    assert got == {("t", "RR", "all"): 1.0, ("u", "RR", "all"): 1.0}  # runid: the run's tag
    got = values(run_cli("--norm", "none", "-m", "RR", "-l", "2", q, r1, r2))
    assert got == {("t", "RR", "all"): 0.5, ("u", "RR", "all"): 1.0}


def test_trec_names_and_layout(graded):
    q, r1, _ = graded
    res = run_cli("--norm", "none", "--names", "trec", "-q", "-m", "ndcg_cut.10", "-m", "map", "-m", "P.1", q, r1)
    assert res.exit_code == 0
    lines = res.stdout.splitlines()
    # trec_eval's own measure order, not the -m order
    assert [line.split("\t")[0] for line in lines] == ["map                   ", "P_1                   ",
                                                       "ndcg_cut_10           "] * 2
    for line in lines:
        assert re.fullmatch(r"[^\t]{22}\t(q|all)\t\d\.\d{4}", line)
    assert lines[1] == "P_1                   \tq\t1.0000"  # b (grade 1) is relevant at -l 1


def test_per_query_rows_in_natural_query_order(write):
    q = write("q", "10 0 a 1\n2 0 a 1\n1 0 a 1\n")
    r = write("r", "10 Q0 a 1 1 t\n2 Q0 b 1 1 t\n1 Q0 a 1 1 t\n")
    res = run_cli("--norm", "none", "-q", "-m", "RR", q, r)
    assert res.stdout.splitlines() == ["RR\t1\t1.0000", "RR\t2\t0.0000", "RR\t10\t1.0000", "RR\tall\t0.6667"]


@pytest.fixture
def ordering(write):
    # only a is relevant; scores c 2 > a = b 1; ranks a 1, b 2, c 3; file order b, a, c
    q = write("q", "q 0 a 1\nq 0 b 0\nq 0 c 0\n")
    r = write("r", "q Q0 b 2 1.0 t\nq Q0 a 1 1.0 t\nq Q0 c 3 2.0 t\n")
    return q, r


@pytest.mark.parametrize("ties,rr", [
    ("score", 1 / 3),  # c, then the a/b tie by docid descending: c, b, a
    ("rank", 1.0),  # a, b, c
    ("file", 0.5),  # b, a, c
])
def test_ties(ordering, ties, rr):
    q, r = ordering
    got = values(run_cli("--norm", "none", "-m", "RR", "--ties", ties, q, r))
    assert got[("RR", "all")] == pytest.approx(rr, abs=5e-5)


def test_a_tie_rule_that_moves_documents_says_how_many(ordering, write):
    """trec_eval's order of the fixture is c, b, a.  --ties rank gives a, b, c (a and c move: 2), --ties
    file b, a, c (all 3 move); within -M 1 one place each, within -M 2 1 and 2.  Said once, on stderr,
    whatever the rule; a run written in trec_eval's order, or --ties score, gets no note."""
    q, r = ordering
    note = "ranked documents are at another place than in trec_eval's order (score descending, then docid descending)"
    for ties, depth, n in (("rank", [], 2), ("file", [], 3), ("rank", ["-M", "1"], 1), ("file", ["-M", "1"], 1),
                           ("rank", ["-M", "2"], 1), ("file", ["-M", "2"], 2)):
        res = run_cli("--norm", "none", "-m", "RR", "--ties", ties, *depth, q, r)
        assert res.exit_code == 0, res.output
        assert res.stderr.count(f": {n} {note} under --ties {ties}") == 1, (ties, depth, res.stderr)
    assert "trec_eval's order" not in run_cli("--norm", "none", "-m", "RR", q, r).stderr
    same = write("same", "q Q0 c 1 2.0 t\nq Q0 b 2 1.0 t\nq Q0 a 3 1.0 t\n")
    for ties in ("rank", "file"):
        assert "trec_eval's order" not in run_cli("--norm", "none", "-m", "RR", "--ties", ties, q, same).stderr


def test_score_precision(write):
    """float32(2^24 + 1) == float32(2^24): the tie goes to the larger docid, z_non."""
    q = write("q", "q 0 a_rel 1\nq 0 z_non 0\n")
    r = write("r", "q Q0 a_rel 1 16777217 t\nq Q0 z_non 2 16777216 t\n")
    res64 = run_cli("--norm", "none", "-m", "RR", q, r)
    assert values(res64)[("RR", "all")] == 1.0
    res = run_cli("--norm", "none", "-m", "RR", "--score-precision", "float32", q, r)
    assert values(res)[("RR", "all")] == 0.5
    # the two documents swap: said once, whatever the precision chosen (the default float64 too)
    for out in (res, res64):
        assert out.stderr.count("2 ranked documents change place between float32 and float64 scores") == 1
    # -M 1 keeps one of them: one place changes; a tie beyond -M changes nothing shown, and no note
    assert "1 ranked documents change place" in run_cli("--norm", "none", "-M", "1", "-m", "RR", q, r).stderr
    r3 = write("r3", "q Q0 top 1 99999999 t\nq Q0 a_rel 2 16777217 t\nq Q0 z_non 3 16777216 t\n")
    assert "change place" not in run_cli("--norm", "none", "-M", "1", "-m", "RR", q, r3).stderr
    # scores that differ as floats too: no note
    r2 = write("r2", "q Q0 a_rel 1 2.5 t\nq Q0 z_non 2 1.5 t\n")
    assert "change place" not in run_cli("--norm", "none", "-m", "RR", q, r2).stderr


def test_query_set(write):
    # q1 is answered perfectly; q2 is judged but not retrieved; q3 is retrieved but not judged
    q = write("q", "q1 0 a 1\nq2 0 b 1\n")
    r = write("r", "q1 Q0 a 1 1 t\nq3 Q0 c 1 1 t\n")
    default = run_cli("--norm", "none", "-q", "-m", "AP", q, r)
    assert values(default) == {("AP", "q1"): 1.0, ("AP", "q2"): 0.0, ("AP", "all"): 0.5}
    assert "1 of 2 qrels queries have no ranked documents" in default.stderr
    assert "1 run queries are not in the qrels" in default.stderr
    assert values(run_cli("--norm", "none", "-q", "-c", "-m", "AP", q, r)) == values(default)  # -c is the default
    only = run_cli("--norm", "none", "-q", "--run-queries-only", "-m", "AP", q, r)
    assert values(only) == {("AP", "q1"): 1.0, ("AP", "all"): 1.0}


def test_rel_level_and_depth(write):
    q = write("q", "q 0 a 1\nq 0 b 2\n")
    r = write("r", "q Q0 a 1 2 t\nq Q0 b 2 1 t\n")
    got = values(run_cli("--norm", "none", "-m", "AP", "-m", "nDCG", q, r))
    assert got[("AP", "all")] == 1.0
    assert got[("nDCG", "all")] == pytest.approx((1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3)), abs=5e-5)
    got = values(run_cli("--norm", "none", "-m", "AP", "-m", "nDCG", "-l", "2", q, r))
    assert got[("AP", "all")] == 0.5  # only b is relevant, at rank 2
    # nDCG ignores -l, as trec_eval's ndcg does
    assert got[("nDCG", "all")] == pytest.approx((1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3)), abs=5e-5)
    got = values(run_cli("--norm", "none", "-m", "AP", "-m", "P@2", "-M", "1", q, r))
    assert got[("AP", "all")] == 0.5 and got[("P@2", "all")] == 0.5  # b cut off: 1/R, 1/2
    got = values(run_cli("--norm", "none", "-m", "AP", "-l", "0", q, write("r0", "q Q0 x 1 2 t\nq Q0 a 2 1 t\n")))
    assert got[("AP", "all")] == 0.25  # at -l 0 the unjudged x is still not relevant: (1/2) / R=2


def test_unknown_measure_suggests(graded):
    q, r1, _ = graded
    res = run_cli("-m", "nDGC@10", q, r1)
    assert res.exit_code == 2
    assert res.stderr.strip() == "ulnorm-eval: unknown measure 'nDGC@10'; did you mean nDCG or DCG or NDCG?"


def test_output_file_is_written_atomically(graded, tmp_path):
    q, r1, _ = graded
    out = tmp_path / "res.tsv"
    res = run_cli("--norm", "none", "-m", "AP", "-f", "trec", "-o", out, q, r1)
    assert res.exit_code == 0 and res.stdout == ""
    assert out.read_text() == "AP\tall\t1.0000\n"


def test_measures_command_lists_the_registry():
    res = run_cli("measures", "*")
    assert res.exit_code == 0
    for name in ("nDCG", "AP", "P", "R", "RR", "Rprec", "RBP", "UL2", "IUB"):
        assert re.search(rf"^\s+{name}\b", res.stdout, re.M), name


def test_measures_groups_the_families_and_a_pattern_filters():
    """`measures`: each family once, in the group of its bounds, and how to see parameters; `measures PATTERN`:
    the records whose names contain it (any case; a trec_eval name counts); none: exit 2."""
    from ulnorm_eval.core.registry import FAMILIES
    from ulnorm_eval.render.registry_tables import GROUPS

    res = run_cli("measures")
    assert res.exit_code == 0 and len(res.stdout.splitlines()) < 30 and "ulnorm-eval measures PATTERN" in res.stdout
    lines = dict(line.strip().split(": ", 1) for line in res.stdout.replace("\n    ", " ").splitlines()[1:4])
    for bounds, head in GROUPS.items():
        names = [name.split("@")[0].split("[")[0] for name in lines[head].split(", ")]
        assert names == [f.name for f in FAMILIES.values() if f.bounds == bounds], bounds
    shown = re.findall(r"^  (\w+)[(@\[ :]", run_cli("measures", "NDCG").stdout, re.M)
    assert shown == ["nDCG", "nDCG_rel", "Rndcg"]
    assert re.findall(r"^  (\w+)[(@\[ :]", run_cli("measures", "map").stdout, re.M) == ["AP", "GMAP", "SetAP"]
    assert re.findall(r"^  (\w+)", run_cli("measures", "ul?").stdout, re.M) == ["UL1", "UL2"]
    res = run_cli("measures", "xyz")
    assert res.exit_code == 2 and res.stdout == "" and "measures xyz: no measure or variant" in res.stderr
