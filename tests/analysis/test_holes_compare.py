"""compare --holes: the pairs whose order the unjudged documents could reverse (the runs' mean [LB, UB]
intervals overlap), in the pairs table of every format and as a mark in the paper tables."""
from __future__ import annotations

import dataclasses
import json

from ulnorm_eval.analysis.compare import compare_files
from ulnorm_eval.analysis.marks import against_baseline
from ulnorm_eval.pipeline.blocks import Options
from ulnorm_eval.render import paper

from conftest import command


def _files(tmp_path):
    qrels = tmp_path / "qrels"
    qrels.write_text("q1 0 a 1\nq1 0 b 1\nq1 0 c 0\nq2 0 d 1\nq2 0 e 0\n")
    runs = {
        # A: no holes.  P@2: q1 1, q2 1/2 -> mean 0.75, [LB, UB] = [0.75, 0.75]
        "A": "q1 Q0 a 1 3 A\nq1 Q0 b 2 2 A\nq2 Q0 d 1 3 A\nq2 Q0 e 2 2 A\n",
        # B: q1 c, x (hole) -> [0, 1/2]; q2 e, y (hole) -> [0, 1/2]: mean [0, 0.5], no overlap with A
        "B": "q1 Q0 c 1 3 B\nq1 Q0 x 2 2 B\nq2 Q0 e 1 3 B\nq2 Q0 y 2 2 B\n",
        # C: q1 a, x (hole) -> [1/2, 1]; q2 e, d -> 1/2: mean [0.5, 0.75]: touches A's 0.75, overlaps B's
        "C": "q1 Q0 a 1 3 C\nq1 Q0 x 2 2 C\nq2 Q0 e 1 3 C\nq2 Q0 d 2 2 C\n",
    }
    paths = []
    for name, text in runs.items():
        p = tmp_path / name
        p.write_text(text)
        paths.append(str(p))
    return str(qrels), paths


def test_pairs_say_whether_holes_could_reverse_them(tmp_path):
    qrels, paths = _files(tmp_path)
    cmp = compare_files(qrels, paths, ["P@2"], ["UL2"], Options(), holes=True)
    pairs = cmp.tables["pairs"]
    got = {(m, a, b): h for m, a, b, h in zip(pairs["metric"], pairs["run_a"], pairs["run_b"], pairs["holes_overlap"])}
    assert got[("P@2", "A", "B")] == 0 and got[("P@2", "A", "C")] == 1 and got[("P@2", "B", "C")] == 1
    assert all(got[k] is None for k in got if k[0] == "UL2(P@2)")  # a variant has no hole interval
    assert "holes_bootstrap_overlap" not in pairs.columns
    assert {str(m) for m in cmp.metrics} == {"P@2", "UL2(P@2)"}  # LB/UB are not compared as scores
    assert cmp.meta["holes"] == ["holes_overlap"]
    # without --holes: no column
    plain = compare_files(qrels, paths, ["P@2"], [], Options())
    assert "holes_overlap" not in plain.tables["pairs"].columns and "holes" not in plain.meta


def test_paper_marks(tmp_path):
    """A significance mark gets '*' when that pair's intervals overlap, not otherwise."""
    qrels, paths = _files(tmp_path)
    cmp = compare_files(qrels, paths, ["P@2"], [], Options(), holes=True)
    frames = dict(cmp.tables)
    # every pair marked significant (two queries give no power; the marks are what is tested here)
    pairs = frames["pairs"]
    cols = {c: list(pairs[c]) for c in pairs.columns}
    cols["significant"] = [True] * len(cols["significant"])
    cols["p"] = [1e-9] * len(cols["p"])  # the baseline marks correct the raw p over the baseline's pairs
    frames["pairs"] = type(pairs)(cols, pairs.kinds)
    md = paper.format_markdown(frames, 4, {**cmp.meta, "metric_queries": {"P@2": 2}})
    rows = {line.split("|")[2].strip(): line for line in md.splitlines() if line.startswith("| ") and "Run" not in line}
    # A (0.75) beats B (0.25): no overlap, no star; A ties C? C's mean: (1/2 + 1/2)/2 = 0.5 < 0.75: A beats C, overlap
    assert "<sup>b" in rows["A"] and "<sup>bc*</sup>" in rows["A"]
    assert "<sup>b*</sup>" in rows["C"]  # C (0.5) beats B (0.25), intervals overlap
    assert "* after a mark" in md
    with_pairs = dataclasses.replace(cmp, tables=frames)
    against = against_baseline(with_pairs, "A")  # the pairs against A, corrected over them (analysis)
    base = paper.format_markdown(dict(against.tables), 4, {**against.meta, "metric_queries": {"P@2": 2}})
    rows = {line.split("|")[1].strip(): line for line in base.splitlines() if line.startswith("| ") and "Run" not in line}
    assert f"<sup>{paper.WORSE}*</sup>" in rows["C"]  # worse than the baseline A, the holes could reverse it
    assert f"<sup>{paper.WORSE}</sup>" in rows["B"]  # worse than A, beyond the holes' reach


def test_cli_compare_holes(tmp_path):
    qrels, paths = _files(tmp_path)
    out = command(["compare", "--holes", qrels, *paths, "-m", "P@2", "--norm", "none",
                   "--table", "pairs", "-f", "json"])
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)["pairs"]
    assert [(r["run_a"], r["run_b"], r["holes_overlap"]) for r in rows] == [("A", "B", 0), ("A", "C", 1), ("B", "C", 1)]
    tsv = command(["compare", "--holes", "--holes-samples", "50", qrels, *paths, "-m", "P@2",
                   "--norm", "none", "--table", "pairs", "-f", "tsv"])
    assert tsv.returncode == 0, tsv.stderr
    head = tsv.stdout.splitlines()[0].split("\t")
    assert head[-2:] == ["holes_overlap", "holes_bootstrap_overlap"]


def test_cli_queries_holes(tmp_path):
    """queries --holes: LB and UB columns, the runs' mean hole bounds per query (NaN without them)."""
    qrels, paths = _files(tmp_path)
    out = command(["queries", "--holes", qrels, paths[1], paths[2], "-m", "P@2", "-m", "Bpref",
                   "-f", "json"])
    assert out.returncode == 0, out.stderr
    assert "no hole bounds for Bpref" in out.stderr
    rows = {(r["query"], r["measure"]): r for r in json.loads(out.stdout)["queries"]}
    # P@2 of B and C: q1 [0, 1/2] and [1/2, 1] -> mean LB 1/4, UB 3/4; q2 [0, 1/2] and 1/2 -> LB 1/4, UB 1/2
    assert (rows[("q1", "P@2")]["LB"], rows[("q1", "P@2")]["UB"]) == (0.25, 0.75)
    assert (rows[("q2", "P@2")]["LB"], rows[("q2", "P@2")]["UB"]) == (0.25, 0.5)
    assert rows[("q1", "Bpref")]["LB"] is None
    plain = command(["queries", qrels, paths[1], "-m", "P@2", "-f", "json"])
    assert "LB" not in json.loads(plain.stdout)["queries"][0]


def test_compare_refuses_a_gate_action(tmp_path):
    """compare has no gate: --holes fail (or warn) was accepted and ignored; now refused, exit 2."""
    qrels, paths = _files(tmp_path)
    for value in ("fail", "open,warn"):
        out = command(["compare", "--holes", value, "-m", "P@2", qrels, *paths])
        assert out.returncode == 2 and "compare has no gate" in out.stderr and not out.stdout, out.stderr
    out = command(["compare", "--holes", "open=3", "-m", "P@2", "--table", "pairs", qrels, *paths])
    assert out.returncode == 0 and "holes_overlap" in out.stdout, out.stderr


def test_overlap_is_over_the_shared_holes(tmp_path):
    """AP: A has no holes of its own, but B's holes x (q1) and y (q2) are outside A's ranking: relevant,
    they raise A's R, so A's LB is below its value; the intervals range over every run's holes."""
    qrels, paths = _files(tmp_path)
    cmp = compare_files(qrels, paths, ["AP"], [], Options(holes="closed"), holes=True)
    res = cmp.tables["pairs"]
    got = {(a, b): h for a, b, h in zip(res["run_a"], res["run_b"], res["holes_overlap"])}
    from ulnorm_eval import evaluate

    ev = evaluate(qrels, paths, ["AP"], variants=["LB", "UB"], holes="closed")
    lbA = [v for m, v in ev.runs[0].mean.items() if str(m) == "LB(AP)"][0]
    # q1: R = 2 + x -> AP(A) = 2/3 with x relevant; q2: R = 1 + y -> 1/2: mean LB (2/3 + 1/2)/2
    assert abs(lbA - (2 / 3 + 1 / 2) / 2) < 1e-12
    assert got[("A", "B")] == 0


def test_overlap_of_a_variant_prints_as_documented(tmp_path):
    """docs/holes.md: holes_overlap is nan in tsv (null in JSON) for a variant, which has no hole interval."""
    qrels, paths = _files(tmp_path)
    out = command(["compare", "--holes", "-m", "P@2", "--norm", "ul2", "--table", "pairs",
                   qrels, *paths])
    assert out.returncode == 0, out.stderr
    rows = [ln.split("\t") for ln in out.stdout.splitlines()]
    col = rows[0].index("holes_overlap")
    assert {r[col] for r in rows[1:] if r[0] == "UL2(P@2)"} == {"nan"}
    assert {r[col] for r in rows[1:] if r[0] == "P@2"} <= {"0", "1"}
    js = command(["compare", "--holes", "-m", "P@2", "--norm", "ul2", "--table", "pairs", "-f",
                  "json", qrels, *paths])
    pairs = json.loads(js.stdout)["pairs"]
    assert {p["holes_overlap"] for p in pairs if p["metric"] == "UL2(P@2)"} == {None}


def test_queries_bounds_range_over_every_runs_holes(tmp_path):
    """queries --holes on the issue's counterexample (A = d1, x; B = y, d1; d1 relevant): A's LB(AP) is
    1/2 (y relevant), B's 1/4 (x relevant, y not): the mean LB 0.375 (each run's own holes gave 0.75)."""
    q, a, b = tmp_path / "q", tmp_path / "A", tmp_path / "B"
    q.write_text("1 0 d1 1\n")
    a.write_text("1 Q0 d1 1 2 A\n1 Q0 x 2 1 A\n")
    b.write_text("1 Q0 y 1 2 B\n1 Q0 d1 2 1 B\n")
    out = command(["queries", "--holes", "closed", "-m", "AP", "-f", "tsv", str(q), str(a), str(b)])
    assert out.returncode == 0, out.stderr
    head, row = [ln.split("\t") for ln in out.stdout.splitlines()[:2]]
    got = dict(zip(head, row))
    assert (got["mean"], got["LB"], got["UB"]) == ("0.75", "0.375", "1.0")


def test_library_compare_takes_hole_bounds(tmp_path):
    """ulnorm_eval.compare(..., hole_bounds=True) as compare --holes (``holes=`` is the Options world)."""
    import ulnorm_eval

    qrels, paths = _files(tmp_path)
    cmp = ulnorm_eval.compare(qrels, paths, ["P@2"], [], hole_bounds=True, holes="open")
    got = {(a, b): h for a, b, h in zip(cmp.pairs["run_a"], cmp.pairs["run_b"], cmp.pairs["holes_overlap"])}
    assert got[("A", "B")] == 0 and got[("A", "C")] == 1
    assert "holes_overlap" not in ulnorm_eval.compare(qrels, paths, ["P@2"], []).pairs.columns
