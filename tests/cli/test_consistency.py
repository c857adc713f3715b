"""One definition of each command-line constant and option, and one escaping path: the -f choices of
every command are the names of the formatter table that renders them; click's context settings are
defined once; every command's stderr escapes control characters the same way; summ's variants are the
records'.  One private name is used: summ_eval's ``_Cells``/``_variant_values``, the one place that
turns chosen A, I, E into a variant's values without reading a SummEval file and running ROUGE."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import click
import pytest

from conftest import ROOT, invoke
from ulnorm_eval.cli.main import main
from ulnorm_eval.render import format_names
from ulnorm_eval.render.formats import FORMATS
from ulnorm_eval.render.frames import FRAME_FORMATS

COMMANDS = main.all_commands()


def _choices(command: click.Command, name: str):
    for p in command.params:
        if p.name == name:
            return tuple(p.type.choices)
    return None


def test_format_names_are_the_formatter_tables():
    assert format_names.RESULT_FORMATS == tuple(FORMATS)
    assert format_names.FRAME_FORMATS == tuple(FRAME_FORMATS)
    assert set(format_names.DATA_FRAME_FORMATS) <= set(FRAME_FORMATS)


# the formatter table each command renders with (stability writes its rows itself: render's tsv/csv/json)
RENDERED_BY = {"eval": FORMATS, "nrg": FORMATS, "summ": FORMATS, "compare": FRAME_FORMATS}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_format_choice_is_rendered(name):
    choices = _choices(COMMANDS[name], "fmt")
    if choices is None:
        assert name == "measures"
        return
    table = RENDERED_BY.get(name, FRAME_FORMATS)
    assert set(choices) <= set(table), f"{name} -f offers {set(choices) - set(table)}, which nothing renders"
    assert choices in (format_names.RESULT_FORMATS, format_names.FRAME_FORMATS, format_names.DATA_FRAME_FORMATS)


def _assignments(name: str) -> list:
    """Modules of ulnorm_eval that assign ``name`` at module level."""
    out = []
    for path in sorted((ROOT / "ulnorm_eval").rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                out.append(path.relative_to(ROOT).as_posix())
    return out


@pytest.mark.parametrize("name", ["CONTEXT", "MAX_DRAWS", "MAX_TRIALS", "EXTENSIONS"])
def test_cli_constants_defined_once(name):
    assert len(_assignments(name)) == 1, _assignments(name)


def test_every_command_uses_the_one_context():
    from ulnorm_eval.cli.support import CONTEXT

    for name, command in COMMANDS.items():
        assert command.context_settings == CONTEXT, name


# each command's arguments, enough to build its request (the inputs need not exist: the request is built
# before anything is read); measures and swaps name their parameters, which Python refuses to lose
REQUEST_ARGS = {"eval": ["q.txt", "r"], "compare": ["q.txt", "r1", "r2"], "queries": ["q.txt", "r"], "nrg": ["q.txt", "r",
                "--prior", "p"], "stability": ["q.txt", "r1", "r2"], "summ": ["d.jsonl"], "repro": ["q.txt", "a", "b"]}


@pytest.mark.parametrize("name", sorted(REQUEST_ARGS))
def test_an_option_that_reaches_no_record_is_refused(name):
    """cli.options.record: every option of a command reaches its request, its Options or View, or is named
    as handled by the command; one added and forgotten fails every run of the command."""
    from click.testing import CliRunner

    assert set(REQUEST_ARGS) | {"measures", "swaps"} == set(COMMANDS)
    command = COMMANDS[name]
    lost = click.Command(name, params=[*command.params, click.Option(["--never-used"], default=1)],
                         callback=command.callback, context_settings=command.context_settings)
    fine, refused = (CliRunner().invoke(cmd, REQUEST_ARGS[name]) for cmd in (command, lost))
    assert fine.exit_code == 2 and "no such file" in fine.output, fine.output
    assert isinstance(refused.exception, TypeError) and "options never_used" in str(refused.exception)


def test_allow_disjoint_is_one_option_everywhere():
    helps = {name: [p.help for p in c.params if p.name == "allow_disjoint"] for name, c in COMMANDS.items()}
    texts = {h[0] for h in helps.values() if h}
    assert len(texts) == 1 and {n for n, h in helps.items() if h} >= {"eval", "compare", "queries", "nrg"}


def test_stability_escapes_control_characters(tmp_path):
    """A file named with ESC reaches the terminal escaped through stability, as through eval (it was
    printed raw: stability had its own error path)."""
    runs = [tmp_path / "a\x1bb.run", tmp_path / "b.run"]
    for r in runs:
        r.write_text("q1 Q0 d1 1 1.0 x\n")
    qrels = tmp_path / "q\x1b.txt"
    for args in (["stability", "-k", "10", str(qrels), *map(str, runs)], ["-m", "AP", str(qrels), str(runs[0])]):
        proc = subprocess.run([sys.executable, "-m", "ulnorm_eval", *args], capture_output=True, cwd=tmp_path)
        assert proc.returncode == 2
        assert b"\x1b" not in proc.stderr and b"q\\x1b.txt" in proc.stderr, proc.stderr


def test_summarisation_measures_are_records_listed_by_measures():
    """ROUGE-1/2/L and BERTScore are records (core/text_families.py): `measures` lists each with its E,
    variants and citation, summ's names are the records', and summ reads every variant a record lists."""
    from click.testing import CliRunner

    from ulnorm_eval.core.records import TEXT_FAMILIES
    from ulnorm_eval.core.registry import VARIANTS
    from ulnorm_eval.pipeline import summ_eval

    assert list(TEXT_FAMILIES) == ["ROUGE-1", "ROUGE-2", "ROUGE-L", "BERTScore"]
    assert summ_eval.BASES == tuple(TEXT_FAMILIES)
    assert summ_eval.DEFAULT_MEASURES == ("ROUGE-1", "ROUGE-2", "ROUGE-L")
    listing = CliRunner().invoke(main, ["measures", "*"]).output
    for name, f in TEXT_FAMILIES.items():
        assert f"\n  {name}(score=f|precision|recall)" in listing
        assert f"    E: {f.expectation_formula}" in listing and f.cite in listing
        for v in f.variants:
            shown = next((a for a in VARIANTS[v].aliases if a.startswith("UE")), v)
            parsed = summ_eval.parse_text_metric(f"{shown}({name})")
            assert (parsed.measure.base, parsed.variant) == (name, shown)


def test_a_variant_record_reaches_summ_help_parser_and_values():
    """summ has no variant table of its own: a variant record registered and named by a summarisation
    family shows in summ's -m/--norm help, is read by its parser, and its values are the record's
    normaliser of (A, I, E); the registry is restored afterwards."""
    import numpy as np

    from ulnorm_eval.core import registry
    from ulnorm_eval.core.records import TextFamily, Variant, register_text, register_variant
    from ulnorm_eval.core.text_families import summ_help, summ_variants
    from ulnorm_eval.pipeline import summ_eval

    def half_gap(A, I, E, W):  # a toy ratio: (A - E) / 2, undefined where A is 0
        return (np.asarray(A) - np.asarray(E)) / 2, np.asarray(A) == 0

    before = summ_help()
    with registry.temporary_records():
        register_variant(Variant(name="HG", aliases=(), formula="(A-E)/2", cite="a toy", rng="[-1, 1]", kind="ratio", normalise=half_gap))
        register_text(TextFamily(name="TOY-1", formula="a toy overlap", expectation_formula="a toy E", cite="a toy", variants=("E", "UL2", "HG")))
        assert list(summ_variants())[-1] == "HG"
        helps = summ_help()
        assert "TOY-1" in helps["measure"] and ", HG, Hetero(BERTScore)" in helps["measure"]
        assert ", hg; ul1/ul2 are aliases" in helps["norm"]
        parsed = summ_eval.parse_text_metric("hg(toy-1)")
        assert (parsed.measure.base, parsed.variant) == ("TOY-1", "HG")
        assert summ_eval.resolve_text_metrics(["TOY-1"], ["hg"])[1].variant == "HG"
        # private: a toy variant's values on hand-made cells (no summarisation data gives these values)
        cells = summ_eval._Cells(A=np.array([[0.5, 0.0]]), E=np.array([[0.1, 0.2]]), SE=np.full((1, 2), np.nan),
                                 I=np.ones((1, 2)))
        values, undefined = summ_eval._variant_values(cells, "HG")
        assert values.tolist() == [[0.2, -0.1]] and undefined.tolist() == [[False, True]]
        ue2, _ = summ_eval._variant_values(cells, "UE2")  # UL2's record: (A-E)/(I-E) above E, (A-E)/E below
        assert ue2[0].tolist() == pytest.approx([0.4 / 0.9, -1.0])
    assert summ_help() == before and "HG" not in summ_variants()
    with pytest.raises(summ_eval.UnknownTextMeasure, match="unknown variant 'hg'"):
        summ_eval.resolve_text_metrics(["ROUGE-1"], ["hg"])


def test_queries_and_swaps_infer_only_their_own_formats_from_o(tmp_path):
    """-o x.md implies markdown only for a command whose -f offers it: queries and swaps write tsv with
    a note (they inferred markdown from compare's table), compare writes its paper table."""
    from conftest import invoke

    qrels, run = ROOT / "examples/qrels/dlhard-passage.qrels.txt", ROOT / "examples/runs/bm25.run.gz"
    out = tmp_path / "x.md"
    res = invoke("queries", "-m", "P@5", "-o", out, qrels, run)
    assert res.exit_code == 0, res.output
    assert "this command has no markdown format; writing tsv" in res.output
    head = out.read_text().splitlines()[0].split("\t")
    assert head[:4] == ["query", "measure", "pool", "relevant"]
    both = tmp_path / "s.tsv"
    assert invoke("compare", "-m", "P@5", "--table", "systems", "-f", "tsv", "-o", both, qrels, run,
                  ROOT / "examples/runs/bm25_rm3.run.gz").exit_code == 0
    swaps = tmp_path / "w.md"
    res = invoke("swaps", "-o", swaps, both, both)
    assert res.exit_code == 0 and "writing tsv" in res.output
    assert swaps.read_text().splitlines()[0].split("\t") == ["metric", "runs", "pairs", "swaps", "swap_rate"]
    paper = tmp_path / "p.md"
    assert invoke("compare", "-m", "P@5", "-o", paper, qrels, run, ROOT / "examples/runs/bm25_rm3.run.gz").exit_code == 0
    assert paper.read_text().lstrip().startswith("|")


def test_help_texts_print_no_doubled_percent_sign():
    """click prints help text as given (no %-formatting): a '%%' written for a formatter that never runs
    reached summ --help as '95%%'."""
    from ulnorm_eval.cli.main import main

    for name in [None, *main.all_commands()]:
        brief = name and getattr(main.all_commands()[name], "brief", None)
        res = invoke(*([name] if name else []), "--help-all" if brief else "--help")
        assert res.exit_code == 0, (name, res.output)
        assert "%%" not in res.output, (name, [ln for ln in res.output.splitlines() if "%%" in ln])
