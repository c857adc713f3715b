"""Output formats, atomic writing, the table, `measures` and the progress bar.

The small case (values by hand):

    qrels  q1: d1 R, d2 N, d3 R     q2: d4 R, d5 N     q10: d6 R, d7 N
    run A  q1: d1 d2 d3             q2: d5 d4          q10: nothing      (q9: not in the qrels)

    AP     q1 (1/1 + 2/3)/2 = 5/6   q2 1/2             q10 0
    E[AP]  q1: the N document at rank 1, 2 or 3: (7/12 + 5/6 + 1)/3 = 29/36;  q2, q10: (1 + 1/2)/2 = 3/4
    UL2    q1 (5/6 - 29/36)/(1 - 29/36) = 1/7;  q2 (1/2 - 3/4)/(3/4) = -1/3;  q10 -1
    P@2    q1 1/2, q2 1/2, q10 0;  E[P@2] = (R/n) min(2, n)/2: 2/3, 1/2, 1/2;  IUB(P@2): 1, 1/2, 1/2
    UL2(P@2): q1 (1/2 - 2/3)/(2/3) = -1/4; q2 and q10 have IUB = E: undefined

These are values on the judged pool (--pool qrels) with the 'all' row of UL2 the mean of its per-query
values (every variant's, the mean of its per-query values); the defaults (qrels+1000, EM) are
tests/core/test_random_baseline.py's and tests/analysis/test_gate.py's.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
from fractions import Fraction as F

import pytest

from conftest import invoke

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 1\nq2 0 d4 1\nq2 0 d5 0\nq10 0 d6 1\nq10 0 d7 0\n"
RUN_A = ("q1 Q0 d1 1 3.0 A\nq1 Q0 d2 2 2.0 A\nq1 Q0 d3 3 1.0 A\n"
         "q2 Q0 d5 1 2.0 A\nq2 Q0 d4 2 1.0 A\nq9 Q0 d8 1 1.0 A\n")
RUN_B = ("q1 Q0 d3 1 3.0 B\nq1 Q0 d1 2 2.0 B\nq1 Q0 d2 3 1.0 B\n"
         "q2 Q0 d4 1 2.0 B\nq2 Q0 d5 2 1.0 B\nq10 Q0 d7 1 2.0 B\nq10 Q0 d6 2 1.0 B\n")

NAN = float("nan")
# run A, by hand (see the module docstring); query order q1, q2, q10
HAND = {
    "AP": [F(5, 6), F(1, 2), 0],
    "E(AP)": [F(29, 36), F(3, 4), F(3, 4)],
    "IUB(AP)": [1, 1, 1],
    "UL2(AP)": [F(1, 7), F(-1, 3), -1],
    "P@2": [F(1, 2), F(1, 2), 0],
    "E(P@2)": [F(2, 3), F(1, 2), F(1, 2)],
    "IUB(P@2)": [1, F(1, 2), F(1, 2)],
    "UL2(P@2)": [F(-1, 4), 0, 0],  # undefined twice, scored 0 (the default)
}
POOLED = ["--pool", "qrels"]  # the hand values' pool (module docstring)
ARGS = ["-m", "AP", "-m", "P@2", "--norm", "e,iub,ul2", *POOLED]


@pytest.fixture
def case(write):
    return {"qrels": write("qrels.txt", QRELS), "a": write("a.run", RUN_A), "b": write("b.run", RUN_B)}


def run_cli(*args, ok=(0,)):
    res = invoke(*args)
    assert res.exit_code in ok, (res.exit_code, res.output, res.exception)
    return res


def mean(xs):
    return sum(F(x) for x in xs) / len(xs)


def parse_trec(text):
    """{(run, measure, query): value}; run is None for one run, else the name on its block's runid line."""
    out, run = {}, None
    for line in text.splitlines():
        m, q, v = line.split("\t")  # always trec_eval's three columns
        if m.strip() == "runid":
            run = v
            continue
        out[(run, m.strip(), q)] = v
    return out


# --------------------------------------------------------------------------- trec

def test_trec_rows_match_hand_values(case):
    res = run_cli("-q", *ARGS, case["qrels"], case["a"])
    rows = parse_trec(res.stdout)
    assert [k[2] for k in rows][::8] == ["q1", "q2", "q10", "all"]  # natural order, 'all' last
    for m, vals in HAND.items():
        for q, v in zip(["q1", "q2", "q10"], vals):
            assert rows[(None, m, q)] == f"{float(v):.4f}", (m, q)
        assert rows[(None, m, "all")] == f"{float(mean(vals)):.4f}", m
    assert "UL2 of P@2 for 2 queries" in res.stderr
    assert "1 of 3 qrels queries have no ranked documents" in res.stderr
    assert res.stderr.count("no ranked documents") == 1  # once, with a count


def test_trec_several_runs_and_precision(case):
    # one shape whatever the number of runs: three columns, a runid line opening each run's block
    res = run_cli("-m", "AP", "--norm", "none", "--precision", "2", case["qrels"], case["a"], case["b"])
    # each block opened by trec_eval's runid line: the run's tag (A, B), as trec_eval prints it
    assert res.stdout == "runid\tall\tA\nAP\tall\t0.44\nrunid\tall\tB\nAP\tall\t0.83\n"
    one = run_cli("-m", "AP", "--norm", "none", "--precision", "2", case["qrels"], case["a"]).stdout
    assert one == "AP\tall\t0.44\n"  # one run: trec_eval's lines exactly
    for text in (one, res.stdout):  # `awk '$1 == "AP"'` keeps matching
        assert all(len(line.split("\t")) == 3 for line in text.splitlines())
        assert [line.split("\t")[2] for line in text.splitlines() if line.split("\t")[0] == "AP"][0] == "0.44"


@pytest.mark.parametrize("fmt, sep", [("tsv", "\t"), ("csv", ",")])
def test_precision_is_fixed_decimals_in_every_command(case, fmt, sep):
    """--precision N means N fixed decimals (%.Nf) in every command, as eval prints them: 1.00 and 0.00,
    never numpy's shortest 1.0 or 0.0 (compare, queries and repro printed those before)."""
    eval_rows = run_cli("-m", "AP", "--norm", "none", *POOLED, "--precision", "2", "-f", fmt, case["qrels"],
                        case["a"], case["b"]).stdout
    assert f"b.run{sep}q1{sep}1.00\n" in eval_rows and f"a.run{sep}q10{sep}0.00\n" in eval_rows
    pairs = run_cli("compare", "-m", "AP", "--norm", "none", *POOLED, "--precision", "2", "-f", fmt,
                    case["qrels"], case["a"], case["b"]).stdout
    # AP: a 4/9, b 5/6 (module docstring); the diff -7/18
    assert f"AP{sep}a.run{sep}b.run{sep}-0.39{sep}" in pairs and f"b.run{sep}AP{sep}0.83{sep}1\n" in pairs
    assert f"{sep}1.00{sep}1.00{sep}1.00{sep}1.00{sep}" in pairs  # tau and its interval, one pair
    queries = run_cli("queries", "-m", "AP", *POOLED, "--precision", "2", "-f", fmt, case["qrels"], case["a"],
                      case["b"]).stdout.splitlines()
    # q2: E[AP] 3/4, IUB 1, WLB 1/2, the runs' mean (1/2 + 1)/2, the gap 0
    assert f"q2{sep}AP{sep}2{sep}1{sep}0.75{sep}1.00{sep}0.50{sep}0.75{sep}0.00{sep}easy" in queries


def test_trec_several_runs_per_query_with_trec_names(case):
    res = run_cli("-q", "--names", "trec", "-m", "map", "--norm", "none", case["qrels"], case["a"], case["b"])
    lines = res.stdout.splitlines()
    pad = lambda n: f"{n:<22s}"  # noqa: E731 - trec_eval's %-22s
    assert lines[0] == f"{pad('runid')}\tall\tA"
    assert lines[1:5] == [f"{pad('map')}\t{q}\t{v}" for q, v in
                          (("q1", "0.8333"), ("q10", "0.0000"), ("q2", "0.5000"), ("all", "0.4444"))]
    assert lines[5] == f"{pad('runid')}\tall\tB" and len(lines) == 10
    # -m runid: the same line, once (not a second runid line with the file name)
    res = run_cli("--names", "trec", "-m", "runid", "-m", "map", "--norm", "none", case["qrels"], case["a"], case["b"])
    assert res.stdout.splitlines() == [f"{pad('runid')}\tall\tA", f"{pad('map')}\tall\t0.4444",
                                       f"{pad('runid')}\tall\tB", f"{pad('map')}\tall\t0.8333"]


def test_trec_names(case):
    res = run_cli("--names", "trec", *ARGS, case["qrels"], case["a"])
    names = [line.split("\t")[0] for line in res.stdout.splitlines()]
    assert names == [f"{n:<22s}" for n in ["map", "e_map", "iub_map", "ul2_map", "P_2", "e_P_2", "iub_P_2", "ul2_P_2"]]


# --------------------------------------------------------------------------- tsv / csv

@pytest.mark.parametrize("fmt,sep", [("tsv", "\t"), ("csv", ",")])
def test_delimited_round_trips_through_pandas(case, fmt, sep):
    import pandas as pd

    text = run_cli("-f", fmt, *ARGS, case["qrels"], case["a"], case["b"]).stdout
    df = pd.read_csv(io.StringIO(text), sep=sep, dtype={"query": str})
    assert list(df.columns) == ["run", "query", *HAND]
    assert list(df["query"]) == ["q1", "q2", "q10", "all"] * 2
    a = df[df.run == "a.run"].set_index("query")
    for m, vals in HAND.items():
        for q, v in zip(["q1", "q2", "q10"], vals):
            assert a.loc[q, m] == pytest.approx(float(v), abs=1e-12)
        assert a.loc["all", m] == pytest.approx(float(mean(vals)), abs=1e-12)
    # the same numbers as the trec rows, every one of them
    trec = parse_trec(run_cli("-q", "--precision", "6", *ARGS, case["qrels"], case["a"], case["b"]).stdout)
    for (run, m, q), v in trec.items():
        got = df[(df.run == {"A": "a.run", "B": "b.run"}[run]) & (df["query"] == q)][m].item()  # runid: the tag
        assert f"{got:.6f}" == v, (run, m, q)
    assert len(trec) == df.shape[0] * len(HAND)


def test_tsv_full_precision_and_nan(case):
    import pandas as pd

    text = run_cli("-f", "tsv", "-m", "P@2", "--norm", "ul2", "--undefined", "skip", *POOLED, case["qrels"],
                   case["a"]).stdout
    assert "\tNaN" in text
    df = pd.read_csv(io.StringIO(text), sep="\t").set_index("query")
    assert df.loc["q1", "UL2(P@2)"] == pytest.approx(-0.25, abs=1e-15)
    assert pd.isna(df.loc["q2", "UL2(P@2)"]) and pd.isna(df.loc["q10", "UL2(P@2)"])
    assert df.loc["all", "UL2(P@2)"] == pytest.approx(-0.25, abs=1e-15)  # the defined query only
    # shortest round-trip text of the double, not 4 decimals
    assert "0.3333333333333333" in text


# --------------------------------------------------------------------------- json / jsonl

def test_json_validates_and_carries_meta(case):
    import jsonschema

    from ulnorm_eval.render.json_out import JSON_SCHEMA

    res = run_cli("-f", "json", *ARGS, "--undefined", "skip", case["qrels"], case["a"], case["b"])
    doc = json.loads(res.stdout)
    jsonschema.validate(doc, JSON_SCHEMA)
    meta = doc["meta"]
    assert meta["inputs"]["qrels"]["sha256"] == hashlib.sha256(QRELS.encode()).hexdigest()
    assert [r["sha256"] for r in meta["inputs"]["runs"]] == [hashlib.sha256(t.encode()).hexdigest()
                                                            for t in (RUN_A, RUN_B)]
    assert meta["options"]["undefined"] == "skip" and meta["options"]["ties"] == "score"
    assert meta["measures"] == list(HAND)
    qa, qb = meta["queries"]
    assert qa == {"run": "a.run", "evaluated": 3, "no_ranking": ["q10"], "not_in_qrels": ["q9"],
                  "undefined": {"UL2(P@2)": 2}, "left_out": {"UL2(P@2)": ["q2", "q10"]}}
    assert qb["no_ranking"] == [] and qb["not_in_qrels"] == []
    a = doc["runs"][0]
    assert [q["query"] for q in a["queries"]] == ["q1", "q2", "q10"]
    assert a["queries"][1]["values"]["UL2(P@2)"] is None
    assert a["summary"]["UL2(P@2)"] == pytest.approx(-0.25, abs=1e-15)
    for m in ["AP", "E(AP)", "UL2(AP)", "P@2"]:
        assert a["summary"][m] == pytest.approx(float(mean(HAND[m])), abs=1e-12)
        for q, v in zip(a["queries"], HAND[m]):
            assert q["values"][m] == pytest.approx(float(v), abs=1e-12)
    assert a["stderr"] == {}  # nothing here is Monte Carlo


def test_json_schema_rejects_a_broken_document(case):
    import jsonschema

    from ulnorm_eval.render.json_out import JSON_SCHEMA

    doc = json.loads(run_cli("-f", "json", *ARGS, case["qrels"], case["a"]).stdout)
    doc["runs"][0]["summary"]["AP"] = "0.44"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, JSON_SCHEMA)


def test_json_monte_carlo_standard_errors(case):
    import jsonschema
    import numpy as np

    from ulnorm_eval.render.json_out import JSON_SCHEMA

    res = run_cli("-f", "json", "-m", "AP", "--norm", "db", "--permutations", "200", case["qrels"], case["b"])
    doc = json.loads(res.stdout)
    jsonschema.validate(doc, JSON_SCHEMA)
    run = doc["runs"][0]
    se = [q["stderr"]["DB(AP)"] for q in run["queries"]]
    assert all(s is not None and s >= 0 for s in se)
    assert "AP" not in run["stderr"]  # exact values carry no standard error
    assert run["stderr"]["DB(AP)"] == pytest.approx(np.sqrt(np.sum(np.square(se))) / len(se))


def test_json_precision(case):
    doc = json.loads(run_cli("-f", "json", "--precision", "3", *ARGS, case["qrels"], case["a"]).stdout)
    assert doc["runs"][0]["summary"]["AP"] == 0.444
    assert doc["runs"][0]["queries"][0]["values"]["UL2(AP)"] == 0.143


def test_jsonl_one_object_per_run_query_measure(case):
    text = run_cli("-f", "jsonl", *ARGS, case["qrels"], case["a"], case["b"]).stdout
    objs = [json.loads(line) for line in text.splitlines()]
    assert len(objs) == 2 * 4 * len(HAND)
    assert all(set(o) == {"run", "query", "measure", "value"} for o in objs)
    assert [o["query"] for o in objs[: 4 * len(HAND): len(HAND)]] == ["q1", "q2", "q10", "all"]
    got = {(o["run"], o["query"], o["measure"]): o["value"] for o in objs}
    assert got[("a.run", "all", "UL2(AP)")] == pytest.approx(float(mean(HAND["UL2(AP)"])), abs=1e-12)
    assert got[("b.run", "q10", "AP")] == 0.5


# --------------------------------------------------------------------------- table

def _result(case, runs=("a",), variants=("E", "IUB", "UL2")):
    from ulnorm_eval import evaluate

    return evaluate(case["qrels"], [case[r] for r in runs], ["AP", "P@2"], variants=list(variants), pool="qrels",)


def test_table_cells_and_styles_on_a_recorded_console(case):
    from rich.console import Console

    from ulnorm_eval.render.table import make_table

    table = make_table(_result(case), color=True)
    assert [c.header for c in table.columns] == ["measure", "value", "E", "IUB", "UL2"]
    cells = [[str(t) for t in c.cells] for c in table.columns]
    assert cells == [["AP", "P@2"], ["0.4444", "0.3333"], ["0.7685", "0.5556"], ["1.0000", "0.6667"],
                     ["-0.3968", "-0.0833†"]]  # † a mean over undefined queries too (scored 0)
    styles = [[t.style for t in c.cells] for c in table.columns]
    # worse than random: the plain values (below E) and UL2 < 0; the bounds are never flagged
    assert styles[1] == ["bold red", "bold red"] and styles[4] == ["bold red", "bold red"]
    assert styles[2] == ["", ""] and styles[3] == ["", ""]
    console = Console(record=True, width=120, file=io.StringIO())
    console.print(table)
    text = console.export_text()
    assert "0.7685" in text and "-0.3968" in text and "a.run" in text


def test_table_reads_its_result_without_setting_anything_on_it(case):
    """make_table and the plain-rows fallback keep what they show beside the result: a result that
    refuses new attributes renders the same (make_table set and later deleted two on it)."""
    from ulnorm_eval.render.table import format_table, make_table

    res = _result(case, runs=("a", "b"))
    want = [[str(t) for t in c.cells] for c in make_table(res).columns]
    narrow = format_table(res, width=20)  # too narrow for any table: the plain rows

    class Sealed(type(res)):
        def __setattr__(self, name, value):
            raise AttributeError(f"the renderer set {name} on its input")

    res.__class__ = Sealed
    assert [[str(t) for t in c.cells] for c in make_table(res).columns] == want
    assert format_table(res, width=20) == narrow and "a.run" in narrow


def test_table_column_groups_per_run(case):
    from ulnorm_eval.render.table import make_table

    table = make_table(_result(case, runs=("a", "b"), variants=("UL2",)), color=False)
    assert [c.header for c in table.columns] == ["measure", "a.run\nvalue", "\nUL2", "b.run\nvalue", "\nUL2"]
    assert [str(t) for t in table.columns[3].cells] == ["0.8333", "0.6667"]
    assert all(t.style == "" for c in table.columns for t in c.cells)  # no colour off a terminal


def test_table_only_variant_leaves_value_blank(case):
    from ulnorm_eval import evaluate
    from ulnorm_eval.render.table import make_table

    res = evaluate(case["qrels"], case["a"], ["UL2(AP)", "P@2"], variants=[], pool="qrels")
    table = make_table(res)
    assert [c.header for c in table.columns] == ["measure", "value", "UL2"]
    assert [[str(t) for t in c.cells] for c in table.columns] == [["AP", "P@2"], ["", "0.3333"], ["-0.3968", ""]]


def test_table_cli_caption(case):
    out = run_cli("-f", "table", *ARGS, case["qrels"], case["a"]).stdout
    assert "\x1b[" not in out  # not a terminal: plain text
    caption, rule, interval, legend = out.strip().splitlines()[-4:]
    assert legend == ("A = the value; E = the expected value of a random ranking; I = IUB, the best ordering's "
                      "value; UL2 = (A-E)/(I-E) if A >= E else (A-E)/E")
    assert rule.startswith("'all' row of UL2: the mean of the per-query values over 3 queries (mean UL2), as Karmaker & Feng "
                           "2022 average")
    assert interval.startswith("UL2 vs random: the 95% randomisation interval of the 'all' row minus a random ordering's")
    assert caption == ("3 queries; random = a shuffle of the judged documents (--pool qrels); ties score desc, "
                       "docid desc (trec_eval); scores float64; "
                       "2 undefined cases (scored 0 by --undefined zero: undef per query, † marks a mean that "
                       "includes them; --undefined skip leaves them out)")
    # mean UL2(AP) = (1/7 - 1/3 - 1)/3 = -25/63; a random ordering's mean is at most 1 (every query ideal) and
    # at least (-8/29 - 1/3 - 1/3)/3 = -82/261, each with chance 1/12 (83 of 999 orderings, more than the 25
    # the 2.5% tails take): the interval is [-25/63 - 1, -25/63 + 82/261]
    lo, hi = -25 / 63 - 1, -25 / 63 + 82 / 261
    assert f"\nAP        0.4444   0.7685   1.0000    -0.3968       [{lo:.4f}, {hi:.4f}]\n" in out


def test_per_query_table_sorted_and_cut(case):
    out = run_cli("-f", "table", "-m", "AP", "--norm", "ul2", "--sort", "AP", "--head", "2",
                  case["qrels"], case["a"]).stdout
    firsts = [line.split()[0] for line in out.splitlines() if line.split()[:1] in (["q1"], ["q2"], ["q10"], ["all"])]
    assert firsts == ["q10", "q2", "all"]  # AP ascending: 0, 1/2; q1 cut by --head
    out = run_cli("-f", "trec", "-m", "AP", "--norm", "none", "--sort=-AP", case["qrels"], case["a"]).stdout
    assert [line.split("\t")[1] for line in out.splitlines()] == ["q1", "q2", "q10", "all"]
    out = run_cli("-m", "AP", "--norm", "none", "--sort", "-AP", "--head", "1", case["qrels"], case["a"]).stdout
    assert out == "AP\tq1\t0.8333\nAP\tall\t0.4444\n"


def test_sort_by_unknown_measure_is_a_usage_error(case):
    res = run_cli("--sort", "nDGC@10", case["qrels"], case["a"], ok=(2,))
    assert "did you mean" in res.stderr


# --------------------------------------------------------------------------- atomic output

def test_output_file_equals_stdout(case, tmp_path):
    out = tmp_path / "eval.tsv"
    run_cli("-f", "tsv", "-o", out, *ARGS, case["qrels"], case["a"])
    assert out.read_text() == run_cli("-f", "tsv", *ARGS, case["qrels"], case["a"]).stdout


def test_output_file_permissions_are_ordinary(case, tmp_path):
    umask = os.umask(0o022)
    try:
        out = tmp_path / "new.txt"
        run_cli("-o", out, case["qrels"], case["a"])
        assert out.stat().st_mode & 0o777 == 0o644  # not mkstemp's 0600
        old = tmp_path / "old.txt"
        old.write_text("x")
        old.chmod(0o640)
        run_cli("-o", old, case["qrels"], case["a"])
        assert old.stat().st_mode & 0o777 == 0o640 and old.read_text() != "x"
    finally:
        os.umask(umask)


def test_output_to_a_special_file_is_written_not_replaced(case, tmp_path):
    """-o /dev/null or a FIFO: writing through a temporary file and a rename would replace the node."""
    import stat
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()), daemon=True)
    reader.start()
    run_cli("-m", "AP", "--norm", "none", "-o", fifo, case["qrels"], case["a"])
    reader.join(timeout=30)
    assert got == ["AP\tall\t0.4444\n"]
    assert stat.S_ISFIFO(fifo.stat().st_mode) and _leftovers(tmp_path) == []


def test_output_through_a_symlink_keeps_the_link(case, tmp_path):
    target = tmp_path / "target.txt"
    target.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    run_cli("-m", "AP", "--norm", "none", "-o", link, case["qrels"], case["a"])
    assert link.is_symlink() and target.read_text() == "AP\tall\t0.4444\n"


def _leftovers(d):
    return sorted(p.name for p in d.iterdir() if p.name.startswith(".ulnorm-"))


def test_failure_while_writing_leaves_no_file(case, tmp_path, monkeypatch):
    from ulnorm_eval.render import files as output

    real = open

    class HalfWriter:
        def __init__(self, fh):
            self.fh = fh

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()

        def write(self, text):
            self.fh.write(text[: len(text) // 2])
            self.fh.flush()
            raise OSError(28, "No space left on device")

    # output.py's own `open` (a module global shadows the builtin there): the disk fills mid-write
    def failing_open(*a, **k):
        fh = real(*a, **k)
        return HalfWriter(fh) if "w" in (a[1] if len(a) > 1 else k.get("mode", "r")) else fh

    monkeypatch.setattr(output, "open", failing_open, raising=False)
    out = tmp_path / "eval.json"
    res = invoke("-f", "json", "-o", str(out), case["qrels"], case["a"])
    assert res.exit_code == 2  # an error writing is an error (2), never the gate's 1
    assert res.stderr.splitlines()[-1] == f"ulnorm-eval: {out}: cannot write: no space left on device"
    assert not out.exists() and _leftovers(tmp_path) == []


def test_failure_before_rename_keeps_the_old_file(case, tmp_path, monkeypatch):
    from ulnorm_eval.render import files as output

    out = tmp_path / "eval.txt"
    out.write_text("previous results\n")

    def boom(src, dst):
        raise OSError("rename failed")

    monkeypatch.setattr(output.os, "replace", boom)
    res = invoke("-o", str(out), case["qrels"], case["a"])
    assert res.exit_code == 2
    assert out.read_text() == "previous results\n" and _leftovers(tmp_path) == []


def test_input_error_writes_nothing(write, tmp_path):
    qrels = write("q.txt", QRELS)
    bad = write("bad.run", "q1 Q0 d1 1 notanumber A\n")
    out = tmp_path / "eval.txt"
    res = run_cli("-o", out, qrels, bad, ok=(2,))
    assert res.stderr.startswith("ulnorm-eval: ") and "bad.run:1" in res.stderr
    assert not out.exists() and _leftovers(tmp_path) == []


# --------------------------------------------------------------------------- comforts

def test_unknown_measure_suggests_and_exits_2(case):
    res = run_cli("-m", "nDGC@10", case["qrels"], case["a"], ok=(2,))
    assert res.stdout == ""
    assert res.stderr.strip().splitlines()[-1].startswith("ulnorm-eval: unknown measure 'nDGC@10'; did you mean nDCG")


def test_measures_lists_every_registered_name():
    from ulnorm_eval.core.registry import FAMILIES, VARIANTS

    out = run_cli("measures", "*").stdout
    for f in FAMILIES.values():
        assert f"\n  {f.name}" in out, f.name
        assert f.formula in out and f.expectation_formula in out
        for p in f.params:
            assert f"{p.name} (default {p.default!r})" in out
    for v in VARIANTS.values():
        assert f"\n  {v.name}" in out and v.formula in out and v.cite in out
        for a in v.aliases:
            assert a in out
    assert "Monte Carlo (--permutations, --seed)" in out  # DB
    assert "bounds: exact" in out


def test_help_imports_no_heavy_library():
    code = ("import sys\nfrom ulnorm_eval.cli.main import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in ('numpy', 'pandas', 'pyarrow', 'rich', 'scipy', 'ir_measures') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_help_shows_examples():
    out = run_cli("eval", "--help").stdout
    assert "Examples:" in out and "--fail-below 'UL2(nDCG@10)=0.30'" in out and "Exit codes" in out


def test_progress_only_for_large_inputs(tmp_path, monkeypatch, capsys):
    from ulnorm_eval.render import progress as output

    small = tmp_path / "small"
    small.write_bytes(b"x" * 1000)
    steps = []
    for enabled in (False, True):
        with output.progress([str(small)], enabled) as step:
            steps.append(step("reading small", str(small)))
    assert steps == [None, None] and capsys.readouterr().err == ""
    # over the threshold, the bar runs (on a non-terminal stderr it stays silent)
    monkeypatch.setattr(output, "PROGRESS_MIN_BYTES", 10)
    with output.progress([str(small), "-"], True) as step:
        step("reading small", str(small))
        step("reading stdin", "-")
    with output.progress([str(small)], False) as step:
        assert step("x", str(small)) is None


def test_no_progress_flag_is_accepted(case):
    assert run_cli("--no-progress", "-m", "AP", "--norm", "none", case["qrels"], case["a"]).stdout == "AP\tall\t0.4444\n"
