"""What is shown never hides or misleads (issue 12): the format of -o FILE, spreadsheet formulas in
csv, control characters and newlines in names, the table never cutting a number or a name, the
undefined marks, and the refusals every command shares (disjoint runs, overflowing gains).

The small case is tests/render/test_formats.py's (values by hand there): run A's AP per query (q1, q2,
q10) = (5/6, 1/2, 0), mean 4/9; UL2(P@2) is undefined for q2 and q10.
"""
from __future__ import annotations

import csv
import io
import json
import re

import pytest

from conftest import ROOT, cli

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 1\nq2 0 d4 1\nq2 0 d5 0\nq10 0 d6 1\nq10 0 d7 0\n"
RUN_A = ("q1 Q0 d1 1 3.0 A\nq1 Q0 d2 2 2.0 A\nq1 Q0 d3 3 1.0 A\n"
         "q2 Q0 d5 1 2.0 A\nq2 Q0 d4 2 1.0 A\nq9 Q0 d8 1 1.0 A\n")
RUN_B = ("q1 Q0 d3 1 3.0 B\nq1 Q0 d1 2 2.0 B\nq1 Q0 d2 3 1.0 B\n"
         "q2 Q0 d4 1 2.0 B\nq2 Q0 d5 2 1.0 B\nq10 Q0 d7 1 2.0 B\nq10 Q0 d6 2 1.0 B\n")


@pytest.fixture
def case(write):
    return {"qrels": write("qrels.txt", QRELS), "a": write("a.run", RUN_A), "b": write("b.run", RUN_B)}


# --------------------------------------------------------------------------- -o FILE's format

@pytest.mark.parametrize("name, check", [
    ("eval.json", lambda t: json.loads(t)["runs"][0]["summary"]["AP"] == pytest.approx(4 / 9)),
    ("eval.jsonl", lambda t: json.loads(t.splitlines()[0])["run"] == "a.run"),
    ("eval.tsv", lambda t: t.splitlines()[0] == "run\tquery\tAP"),
    ("eval.csv", lambda t: t.splitlines()[0] == "run,query,AP"),
    ("eval.txt", lambda t: t == "AP\tall\t0.4444\n"),
    ("eval.trec", lambda t: t == "AP\tall\t0.4444\n"),
    ("eval.out", lambda t: t == "AP\tall\t0.4444\n"),  # unknown extension: the piped default
])
def test_output_format_follows_the_extension(case, tmp_path, name, check):
    out = tmp_path / name
    res = cli("-m", "AP", "--norm", "none", "-o", out, case["qrels"], case["a"])
    assert res.stdout == "" and "writing" not in res.stderr
    assert check(out.read_text())


def test_explicit_format_wins_over_the_extension_with_a_note(case, tmp_path):
    out = tmp_path / "eval.json"
    res = cli("-m", "AP", "--norm", "none", "-f", "csv", "-o", out, case["qrels"], case["a"])
    assert out.read_text().splitlines()[0] == "run,query,AP"
    assert f"ulnorm-eval: {out}: writing csv (-f csv), not the json its extension suggests\n" in res.stderr


def test_compare_and_nrg_infer_the_format_too(case, tmp_path):
    out = tmp_path / "cmp.json"
    cli("compare", "-m", "AP", "--norm", "ul2", "-o", out, case["qrels"], case["a"], case["b"])
    assert set(json.loads(out.read_text())) >= {"meta", "systems", "summary"}
    out = tmp_path / "cmp.csv"
    cli("compare", "-m", "AP", "--norm", "ul2", "--table", "systems", "-o", out, case["qrels"], case["a"], case["b"])
    assert out.read_text().startswith("run,")
    out = tmp_path / "nrg.json"
    cli("nrg", "--leave-one-out", "-o", out, case["qrels"], case["a"], case["b"])
    assert len(json.loads(out.read_text())["runs"]) == 2


# --------------------------------------------------------------------------- csv formulas, names

def test_csv_neutralises_formula_cells_and_keeps_numbers(write):
    qrels = write("qrels.txt", "=cmd 0 d1 1\n=cmd 0 d2 0\n@q 0 d1 1\n")
    run = write("+evil.run", "=cmd Q0 d1 1 2.0 A\n=cmd Q0 d2 2 1.0 A\n@q Q0 d1 1 1.0 A\n")
    text = cli("-f", "csv", "-m", "AP", "--norm", "ul2", "--undefined", "skip", qrels, run).stdout
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["run", "query", "AP", "UL2(AP)"]
    assert [r[:2] for r in rows[1:]] == [["'+evil.run", "'=cmd"], ["'+evil.run", "'@q"], ["'+evil.run", "all"]]
    # numbers stay numbers, negative ones included
    assert rows[1][2] == "1.0" and float(rows[3][3]) == float(rows[3][3])
    tsv = cli("-f", "tsv", "-m", "AP", "--norm", "none", qrels, run).stdout
    assert tsv.splitlines()[1].split("\t")[:2] == ["+evil.run", "=cmd"]  # tsv is raw


def test_negative_numbers_are_not_neutralised(case):
    text = cli("-f", "csv", "-m", "UL2(AP)", "--norm", "none", "--pool", "run", case["qrels"], case["a"]).stdout
    vals = [r[2] for r in csv.reader(io.StringIO(text))][1:]
    assert vals[1] == "-0.3333333333333333" and not any(v.startswith("'") for v in vals)


def test_control_characters_and_newlines_in_a_run_name_never_forge_lines(write, tmp_path):
    qrels = write("qrels.txt", QRELS)
    evil = "x\tAP\tall\t1.0000\n\x1b[31mred\x07"
    (tmp_path / evil).write_text(RUN_A)
    path = str(tmp_path / evil)
    b = write("b.run", RUN_B)
    shown = "x\\tAP\\tall\\t1.0000\\n\\x1b[31mred\\x07"
    trec = cli("-m", "AP", "--norm", "none", qrels, path, b).stdout
    assert trec.splitlines() == ["runid\tall\tA", "AP\tall\t0.4444", "runid\tall\tB", "AP\tall\t0.8333"]  # tags
    tagged = write("t.run", RUN_B.replace(" B\n", " \x1b[31mB\x07\n"))  # runid prints the tag: escaped too
    res = cli("-m", "AP", "--norm", "none", qrels, path, tagged)
    assert res.stdout.splitlines()[2] == "runid\tall\t\\x1b[31mB\\x07"
    same = cli("-m", "AP", "--norm", "none", qrels, b, write("b2.run", RUN_B))
    assert "runs b.run, b2.run share the tag 'B'" in same.stderr
    # the blocks of runs sharing a tag open with the run's name; trec_eval's names keep trec_eval's lines
    assert [ln for ln in same.stdout.splitlines() if ln.startswith("runid")] == ["runid\tall\tb.run", "runid\tall\tb2.run"]
    for flags in (["--names", "trec", "-m", "map", "--norm", "none"], ["--trec", "-c", "-m", "map"]):
        res = cli(*flags, qrels, b, write("b2.run", RUN_B), path)
        assert [ln.split("\t")[2] for ln in res.stdout.splitlines() if ln.startswith("runid")] == ["B", "B", "A"]
        assert res.stderr.count("share the tag 'B': their blocks' runid lines are the same") == 1
    for fmt, sep in (("tsv", "\t"), ("csv", ",")):
        lines = cli("-f", fmt, "-m", "AP", "--norm", "none", qrels, path).stdout.splitlines()
        assert len(lines) == 5 and all(len(next(csv.reader([ln], delimiter=sep))) == 3 for ln in lines)
        assert lines[1].startswith(shown + sep) or lines[1].startswith(f'"{shown}"')
    table = cli("-f", "table", "-m", "AP", "--norm", "none", qrels, path).stdout
    assert "\x1b" not in table and "\x07" not in table and shown in table
    doc = json.loads(cli("-f", "json", "-m", "AP", "--norm", "none", qrels, path).stdout)
    assert doc["meta"]["queries"][0]["run"] == evil  # JSON escapes it: kept exactly


def test_error_messages_escape_control_characters(write, tmp_path):
    qrels = write("qrels.txt", QRELS)
    res = cli(qrels, str(tmp_path / "no\x1b[2Jsuch\nfile"), code=2)
    assert "\x1b" not in res.stderr and res.stderr.count("\n") == 1
    assert "no\\x1b[2Jsuch\\nfile" in res.stderr


# --------------------------------------------------------------------------- the table never cuts

WIDTHS = (40, 80, 120, 160, 250)
MANY = ["nDCG@10", "nDCG@100", "AP", "RBP(p=0.8)"]
VARIANTS = ["E", "IUB", "WLB", "UL1", "UL2", "MM", "EB"]


def _wide_result(case, write, per_query=False):
    from ulnorm_eval import evaluate

    long_name = write("a-run-with-a-rather-long-file-name.run", RUN_A)
    return evaluate(case["qrels"], [case["a"], case["b"], long_name], MANY, variants=VARIANTS, pool="qrels",
                    random_intervals=True)


def _expected_cells(res, per_query):
    """Every number the table must show whole: 4 decimals, † after a mean of per-query values with
    undefined queries."""
    out = []
    for rr in res.runs:
        for m in res.metrics:
            mark = "†" if m.variant and rr.undefined.get(m) else ""
            out.append(f"{rr.mean[m]:.4f}{mark}")
            if per_query:
                out += [f"{v:.4f}" for v in rr.values[m]]
    return out


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("per_query", [False, True])
def test_table_never_cuts_a_number_or_a_name(case, write, width, per_query):
    from rich.console import Console

    from ulnorm_eval.render.table import format_table

    res = _wide_result(case, write)
    text = format_table(res, per_query=per_query, width=width)
    console = Console(record=True, width=width, file=io.StringIO(), color_system=None)
    console.print(text, markup=False, highlight=False, soft_wrap=False, overflow="ignore", crop=False)
    shown = console.export_text()
    assert "…" not in shown
    lines = shown.splitlines()
    assert max(len(line) for line in lines) <= width, width  # nothing needed cropping
    tokens = [t for line in lines for t in line.split()]
    for cell in _expected_cells(res, per_query):  # whole tokens: 0.4444, never 0.44… or 0.4
        assert cell in tokens, (width, cell)
    for name in MANY + [f"{v}" for v in VARIANTS] + ["a.run", "b.run", "a-run-with-a-rather-long-file-name.run"]:
        assert name in tokens or re.search(rf"(^|\s){re.escape(name)}(\s|$)", shown), (width, name)
    assert "nDCG@1…" not in shown and "nDCG@100" in tokens


def test_table_layouts_chosen_by_width(case, write):
    from ulnorm_eval.render.table import format_table

    res = _wide_result(case, write)
    wide = format_table(res, width=300)  # the shared layout fits (UL2 vs random: one column per run)
    assert "all runs" in wide  # E, IUB, WLB are equal for every run under --pool qrels: one column each
    header = next(line for line in wide.splitlines() if line.startswith("measure"))
    assert header.split().count("E") == 1 and header.split().count("UL2") == 3 + 3  # UL2 and "UL2 vs random"
    stacked = format_table(res, width=160)
    assert stacked.splitlines()[0].split()[:3] == ["run", "measure", "value"]
    long = format_table(res, width=120)
    assert long.splitlines()[0].split() == ["run", "measure", "variant", "value"]
    plain = format_table(res, width=40)
    assert "\n  nDCG@100  value " in plain and "a-run-with-a-rather-long-file-name.run\n" in plain
    natural = format_table(res)  # a file or a pipe: the wide table, each run's bounds its own
    assert "all runs" not in natural and "\na.run" not in natural


def test_undefined_values_are_marked_in_the_table(case):
    from ulnorm_eval import evaluate
    from ulnorm_eval.render.table import format_table

    res = evaluate(case["qrels"], case["a"], ["P@2"], variants=["UL2"], undefined="skip", pool="qrels",)
    text = format_table(res, per_query=True)
    rows = {line.split()[0]: line.split() for line in text.splitlines() if line.split()[:1] in (["q1"], ["q2"],
                                                                                                ["q10"], ["all"])}
    assert rows["q1"][-1] == "-0.2500" and rows["q2"][-1] == "undef" and rows["q10"][-1] == "undef"
    assert rows["all"][-1] == "-0.2500†"  # the mean of the defined query only
    assert "left out by --undefined skip: undef per query, † marks a mean over the defined queries only" in \
        " ".join(text.split())
    res = evaluate(case["qrels"], case["a"], ["P@2"], variants=["UL2"], pool="qrels")
    text = format_table(res, per_query=True)
    assert "-0.0833†" in text
    assert "scored 0 by --undefined zero: undef per query, † marks a mean that includes them" in " ".join(text.split())
    # the command marks the undefined queries of --undefined zero too (scored 0, shown as undef)
    out = cli("-f", "table", "-q", "-m", "P@2", "--norm", "ul2", "--pool", "qrels",
              case["qrels"], case["a"]).stdout
    rows = {line.split()[0]: line.split() for line in out.splitlines() if line.split()[:1] in (["q1"], ["q2"],
                                                                                              ["q10"], ["all"])}
    assert rows["q1"][-1] == "-0.2500" and rows["q2"][-1] == "undef" and rows["q10"][-1] == "undef"
    assert rows["all"][-4:] == ["-0.0833†", "[-0.4167,", "0.0000]", "n.s."]  # (-1/4 + 0 + 0) / 3, vs random
    header = next(line for line in out.splitlines() if line.split()[:2] == ["query", "measure"])
    assert "E" not in header.split()  # the bounds evaluated to find them are not shown
    # machine formats keep the number: 0 (and the count on stderr / in json)
    tsv = cli("-f", "tsv", "-m", "P@2", "--norm", "ul2", "--pool", "qrels", case["qrels"], case["a"]).stdout
    vals = [float(line.split("\t")[-1]) for line in tsv.splitlines()[1:]]
    # q1 -1/4; q2 and q10 undefined (scored 0); the 'all' row is their mean (docs/bounds.md, "Which 'all' row")
    assert vals[1:3] == [0.0, 0.0] and vals == pytest.approx([-0.25, 0, 0, -0.25 / 3], abs=1e-15)


def test_undefined_masks_equal_the_queries_left_out_by_skip(shared):
    """DL-HARD, every ratio variant: the queries a run's result marks undefined (undefined_queries,
    the table's undef cells under --undefined zero) are exactly those --undefined skip leaves out (NaN)."""
    import numpy as np

    from ulnorm_eval import evaluate
    from ulnorm_eval.pipeline.evaluate import resolve_metrics

    d = shared / "dlhard-passage"
    qrels = next(d.glob("*qrels*"))
    runs = [str(r) for r in sorted((d / "runs").glob("*.run.gz"))[:2]]
    metrics = resolve_metrics(["nDCG@10", "AP", "P@5"], ["UL1", "UL2", "MM", "EB", "EM", "UEW"])
    shown = [str(m) for m in metrics]
    skip = evaluate(str(qrels), runs, shown, variants=[], undefined="skip", pool="run")
    zero = evaluate(str(qrels), runs, shown, variants=[], pool="run")
    masks = {(k, m): mask for k, rr in enumerate(zero.runs) for m, mask in rr.undefined_queries.items()}
    n = 0
    for k, rr in enumerate(skip.runs):
        for m in skip.metrics:
            if m.variant:
                expected = np.isnan(rr.values[m])
                if expected.any():
                    assert np.array_equal(masks[(k, m)], expected), (rr.name, m)
                    n += 1
                else:
                    assert (k, m) not in masks
    assert n >= 10


@pytest.mark.parametrize("width", WIDTHS)
def test_compare_tables_never_cut_a_number_or_a_metric_name(case, write, width):
    from ulnorm_eval.analysis.compare import compare_files
    from ulnorm_eval.pipeline import evaluate as api
    from ulnorm_eval.pipeline.blocks import Options
    from ulnorm_eval.render.frames import format_frames_table

    long_name = write("a-run-with-a-rather-long-file-name.run", RUN_A)
    q = api.load_qrels(case["qrels"])
    cmp = compare_files(q, [case["a"], case["b"], long_name], ["nDCG@1", "nDCG@10", "nDCG@100", "AP"],
                        ["UL1", "UL2"], Options(), lambda note: None)
    frames = {"systems": cmp.systems, "summary": cmp.summary, "pairs": cmp.pairs}
    text = format_frames_table(frames, None, cmp.meta, width=width)
    assert "…" not in text
    # only a lone name wider than the terminal may overflow (it is never cut)
    assert all(len(line) <= width or len(line.split()) == 1 for line in text.splitlines()), width
    tokens = set(text.split())
    for m in ("nDCG@1", "nDCG@10", "nDCG@100", "UL1(nDCG@1)", "UL1(nDCG@10)", "UL1(nDCG@100)", "UL2(AP)"):
        assert m in tokens, (width, m)
    for v in cmp.systems["mean"]:
        assert f"{v:.4f}" in tokens, (width, v)
    assert "a-run-with-a-rather-long-file-name.run" in tokens


# --------------------------------------------------------------------------- the same refusals everywhere

def _disjoint(write):
    return write("other.run", "x1 Q0 d1 1 1.0 X\nx2 Q0 d2 1 1.0 X\n")


@pytest.mark.parametrize("command", [["compare"], ["queries"], ["nrg", "--leave-one-out"]])
def test_disjoint_runs_are_refused_in_every_command(case, write, command):
    other = _disjoint(write)
    res = cli(*command, "-m", "P@2", case["qrels"], case["a"], other, code=2)
    assert res.stdout == ""
    assert res.stderr.splitlines()[-1] == (
        f"ulnorm-eval: {other}: shares no query with {case['qrels']} (the run has 'x1', 'x2'): "
        "the wrong qrels? (--allow-disjoint evaluates it anyway, scoring 0)")
    ok = cli(*command, "--allow-disjoint", "-f", "csv", "-m", "P@2", case["qrels"], case["a"], other)
    assert "other.run" in ok.stdout or command == ["queries"]


@pytest.mark.parametrize("command", [["compare", "--norm", "ul2"], ["queries"], ["nrg", "--leave-one-out"]])
def test_exponential_gain_overflow_is_refused_in_every_command(write, command):
    q = write("q", "q1 0 d1 2000\nq1 0 d2 1\nq2 0 d1 1\nq2 0 d2 0\n")
    r1 = write("r1", "q1 Q0 d2 1 3 A\nq1 Q0 d1 2 2 A\nq2 Q0 d1 1 3 A\n")
    r2 = write("r2", "q1 Q0 d1 1 3 A\nq1 Q0 d2 2 2 A\nq2 Q0 d2 1 3 A\n")
    res = cli(*command, "-f", "json", "-m", 'nDCG(dcg="exp-log2")@10', q, r1, r2, code=2)
    assert res.stdout == ""
    last = res.stderr.splitlines()[-1]
    assert last.startswith(f"ulnorm-eval: {q}: ") and "nDCG(dcg='exp-log2')@10" in last
    assert last.endswith("overflows (grades too large for its gain or bounds; the limits are in docs/errors.md)")


def test_nrg_names_repeated_run_names_uniquely(case, tmp_path):
    (tmp_path / "x").mkdir()
    (tmp_path / "y").mkdir()
    (tmp_path / "x" / "run.txt").write_text(RUN_A)
    (tmp_path / "y" / "run.txt").write_text(RUN_B)
    res = cli("nrg", "--leave-one-out", "-f", "tsv", case["qrels"], tmp_path / "x" / "run.txt",
              tmp_path / "y" / "run.txt")
    runs = {line.split("\t")[0] for line in res.stdout.splitlines()[1:]}
    assert runs == {"run.txt#1", "run.txt#2"}


def test_queries_refuses_no_runs(case):
    res = cli("queries", case["qrels"], code=2)
    assert res.stdout == "" and len(res.stderr.splitlines()) == 1
    assert "queries needs at least one RUN" in res.stderr


# --------------------------------------------------------------------------- plots

def _capture_figures(monkeypatch):
    from ulnorm_eval.render import plots

    import io

    figs = []

    def keep(fig, path):
        fig.canvas.draw()  # lay out ticks and legends as saved
        figs.append(fig)
        buf = io.BytesIO()  # a command draws in memory, written with its other outputs
        fig.savefig(buf, format=plots.picture_format(path), dpi=60, bbox_inches="tight")
        return plots.Output(path, buf.getvalue())

    monkeypatch.setattr(plots, "save_figure", keep)
    return figs


def test_compare_rank_plot_has_whole_number_ticks(case, write, tmp_path, monkeypatch):
    import matplotlib  # noqa: F401 - the test extra installs it
    figs = _capture_figures(monkeypatch)
    c = write("c.run", RUN_A.replace("d1 1 3.0", "d1 1 0.5"))
    cli("compare", "-m", "AP", "-m", "P@2", "-o", tmp_path / "c.tsv", "--plot", tmp_path / "c.png",
        case["qrels"], case["a"], case["b"], c)
    ax = figs[0].axes[0]
    for ticks, lim in ((ax.get_xticks(), ax.get_xlim()), (ax.get_yticks(), ax.get_ylim())):
        lo, hi = sorted(lim)
        shown = [t for t in ticks if lo <= t <= hi]
        assert shown and all(float(t).is_integer() for t in shown), ticks


def test_queries_plot_legend_is_outside_the_points(case, tmp_path, monkeypatch):
    import matplotlib  # noqa: F401 - the test extra installs it
    figs = _capture_figures(monkeypatch)
    cli("queries", "-m", "AP", "-o", tmp_path / "q.tsv", "--plot", tmp_path / "q.png", case["qrels"], case["a"],
        case["b"])
    fig = figs[0]
    scatter = fig.axes[1]
    legend = scatter.get_legend()
    renderer = fig.canvas.get_renderer()
    box, axes_box = legend.get_window_extent(renderer), scatter.get_window_extent(renderer)
    assert box.x0 >= axes_box.x1  # entirely to the right of the plotting area: it covers no point


def test_compare_csv_neutralises_run_names_and_tsv_escapes_them(case, write, tmp_path):
    evil = tmp_path / "=HYPERLINK(x)\tz"
    evil.write_text(RUN_A)
    csv_text = cli("compare", "-f", "csv", "-m", "AP", "--norm", "ul2", "--pool", "run", "--table", "systems", case["qrels"], str(evil),
                   case["b"]).stdout
    rows = list(csv.reader(io.StringIO(csv_text)))
    assert rows[0] == ["run", "metric", "mean", "rank"]
    assert {r[0] for r in rows[1:]} == {"'=HYPERLINK(x)\\tz", "b.run"}
    assert all(len(r) == 4 for r in rows) and any(r[2].startswith("-") for r in rows[1:])  # UL2 < 0 stays a number
    tsv_text = cli("compare", "-f", "tsv", "-m", "AP", "--norm", "ul2", "--table", "systems", case["qrels"], str(evil),
                   case["b"]).stdout
    assert {line.split("\t")[0] for line in tsv_text.splitlines()[1:]} == {"=HYPERLINK(x)\\tz", "b.run"}


def test_table_caption_explains_the_variants_and_piped_width_follows_columns():
    """-f table: one caption line says what each variant column is; piped, $COLUMNS sets the width
    (a terminal's own width is used on a terminal; -o FILE keeps the natural width)."""
    from click.testing import CliRunner

    from ulnorm_eval.cli.main import main as cli_main

    ex = ROOT / "examples"
    args = ["-f", "table", "--norm", "e,iub,ul2", str(ex / "qrels" / "dlhard-passage.qrels.txt"),
            str(ex / "runs" / "bm25.run.gz")]
    wide = CliRunner().invoke(cli_main, args, env={"COLUMNS": ""}).stdout
    legend = wide.rstrip("\n").splitlines()[-1]
    from ulnorm_eval.core.records import VARIANTS

    assert VARIANTS["E"].kind == "bound"  # defined once, as a letter, not again as a variant's formula
    assert legend == ("A = the value; E = the expected value of a random ranking; I = IUB, the best ordering's "
                      "value; UL2 = (A-E)/(I-E) if A >= E else (A-E)/E")
    narrow = CliRunner().invoke(cli_main, args, env={"COLUMNS": "60"}).stdout
    assert max(len(line) for line in narrow.splitlines()) <= 60 < max(len(line) for line in wide.splitlines())
    assert " ".join(narrow.split()).endswith(" ".join(legend.split()))
