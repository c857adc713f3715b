"""Parity with trec_eval's own conformance files (usnistgov/trec_eval ``test/``).

Every value of map, P_k, recip_rank, Rprec, ndcg, ndcg_cut_k, map_cut_k and recall_k in the expected
outputs must be reproduced to the 4 printed decimals, per query and ``all``, through the library and
(as text lines) through the command line with ``--names trec -q``.  The expected files were made by
trec_eval 10.0 with the commands listed in ../shared/data/SOURCES.md.
"""
from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from conftest import read_trec_eval_output
from ulnorm_eval import evaluate
from ulnorm_eval.cli.main import main

NATIVE = re.compile(r"^(map|P_\d+|recip_rank|Rprec|ndcg|ndcg_cut_\d+|map_cut_\d+|recall_\d+|ndcg_1=3,2=9,4=4\.5)$")
# trec_eval's order of these measures in -m all_trec / official output
ALL_TREC = ["map", "Rprec", "recip_rank", "P", "recall", "ndcg", "ndcg_cut", "map_cut"]
OFFICIAL = ["map", "Rprec", "recip_rank", "P"]

# id: (expected output, qrels, run, -m names, library options, trec_eval-style CLI flags)
CASES = {
    "out.test": ("out.test", "qrels.test", "results.test", OFFICIAL, {}, []),
    "with-comments": ("out.test", "qrels.test.with-comments", "results.test", OFFICIAL, {}, []),
    "comment": ("out.comment.test", "qrels.comment.test", "results.comment.test", OFFICIAL, {}, []),
    "aq": ("out.test.aq", "qrels.test", "results.test", ALL_TREC, {}, ["-q"]),
    # results.trunc lacks topic 302 (-c: scored 0, printed, averaged in) and has junk after field 6
    "aqc": ("out.test.aqc", "qrels.test", "results.trunc", ALL_TREC, {}, ["-q", "-c"]),
    "aqcM": ("out.test.aqcM", "qrels.test", "results.trunc", ALL_TREC, {"depth": 100}, ["-q", "-c", "-M100"]),
    # -l2: binary measures at grade >= 2; ndcg/ndcg_cut ignore -l (linear raw grade)
    "aql": ("out.test.aql", "qrels.rel_level", "results.test", ALL_TREC, {"rel_level": 2}, ["-q", "-l2"]),
    "meas_params": ("out.test.meas_params", "qrels.test", "results.test",
                    ["P.5,7,3", "recall.20,2000", "ndcg.1=3,2=9,4=4.5", "ndcg_cut.10,20,23.4"], {}, ["-q"]),
}


def _expected(shared, name: str) -> dict:
    got = read_trec_eval_output(shared / "trec_eval_test" / name)
    return {k: v for k, v in got.items() if NATIVE.match(k[0])}


@pytest.mark.parametrize("case", list(CASES))
def test_library_matches_trec_eval(shared, case):
    exp_file, qrels, run, names, options, _ = CASES[case]
    d = shared / "trec_eval_test"
    expected = _expected(shared, exp_file)
    res = evaluate(str(d / qrels), [str(d / run)], names, variants=[], **options)
    rr = res.runs[0]
    by_name = {m.trec_name(): m for m in res.metrics}
    assert len(by_name) == len(res.metrics)
    # every measure we computed is in the expected file and vice versa
    assert set(by_name) == {name for name, _ in expected}
    mismatches = []
    for (name, qid), text in expected.items():
        m = by_name[name]
        value = rr.mean[m] if qid == "all" else rr.values[m][rr.qids.index(qid)]
        if f"{value:.4f}" != text:
            mismatches.append((name, qid, text, value))
    assert not mismatches
    assert len(expected) >= 12


@pytest.mark.parametrize("case", list(CASES))
def test_cli_prints_trec_eval_lines(shared, case, monkeypatch):
    """``--names trec`` output is byte-identical to trec_eval's lines for the same measures."""
    exp_file, qrels, run, names, _, flags = CASES[case]
    d = shared / "trec_eval_test"
    monkeypatch.chdir(d)
    expected = [line for line in (d / exp_file).read_text().splitlines()
                if NATIVE.match(line.split("\t")[0].strip())]
    args = ["--norm", "none", "--names", "trec", "-f", "trec", *flags]
    for n in names:
        args += ["-m", n]
    result = CliRunner().invoke(main, [*args, qrels, run])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == expected


def test_cli_default_measures_on_out_test(shared, monkeypatch):
    """trec_eval's default run; our default measures differ, so ask for trec_eval's by name."""
    d = shared / "trec_eval_test"
    monkeypatch.chdir(d)
    result = CliRunner().invoke(main, ["--norm", "none", "--names", "trec", "-f", "trec", "-m", "map",
                                       "-m", "P.5,10", "qrels.test", "results.test"])
    assert result.exit_code == 0
    assert result.stdout == ("map                   \tall\t0.1785\n"
                             "P_5                   \tall\t0.2667\n"
                             "P_10                  \tall\t0.3000\n")


@pytest.mark.parametrize("case", ["aq", "aqc", "aqcM"])
def test_bpref_infap_success_match_trec_eval(shared, case):
    """bpref, infAP and Success@10 (ir_measures' names) are native since issue 11 (they were computed
    through ir_measures before), with our ordering, -c and -M."""
    exp_file, qrels, run, _, options, _ = CASES[case]
    d = shared / "trec_eval_test"
    expected = read_trec_eval_output(d / exp_file)
    res = evaluate(str(d / qrels), [str(d / run)], ["Bpref", "infAP", "Success@10"], variants=[], **options)
    rr = res.runs[0]
    for m, name in zip(res.metrics, ["bpref", "infAP", "success_10"]):
        assert m.measure.native
        for i, q in enumerate(rr.qids):
            assert f"{rr.values[m][i]:.4f}" == expected[(name, q)], (name, q)
        assert f"{rr.mean[m]:.4f}" == expected[(name, "all")]


SUPPORTED = re.compile(r"^(map|Rprec|recip_rank|ndcg|P_\d+|recall_\d+|ndcg_cut_\d+|map_cut_\d+)\s")


@pytest.mark.parametrize("expected, flags, qrels, results", [
    ("out.test.aq", ["-q"], "qrels.test", "results.test"),
    ("out.test.aqc", ["-q", "-c"], "qrels.test", "results.trunc"),
    ("out.test.aqcM", ["-q", "-c", "-M100"], "qrels.test", "results.trunc"),
    ("out.test.aql", ["-q", "-l2"], "qrels.rel_level", "results.test"),
])
def test_names_trec_is_line_for_line_trec_eval(shared, expected, flags, qrels, results):
    """With --names trec, the trec rows are trec_eval's own, in its order (queries in byte order,
    measures in its table's order): the expected file's lines for our measures, one for one."""
    d = shared / "trec_eval_test"
    want = [line for line in (d / expected).read_text().splitlines() if SUPPORTED.match(line)]
    args = ["--names", "trec", "--norm", "none", *flags, "-m", "map", "-m", "Rprec", "-m", "recip_rank", "-m", "P",
            "-m", "recall", "-m", "ndcg", "-m", "ndcg_cut", "-m", "map_cut", str(d / qrels), str(d / results)]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines() == want
