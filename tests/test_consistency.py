"""One definition of each command-line constant and option, and one escaping path: the -f choices of
every command are the names of the formatter table that renders them; click's context settings are
defined once; every command's stderr escapes control characters the same way."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import click
import pytest

from conftest import ROOT
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
    from ulnorm_eval.cli.common import CONTEXT

    for name, command in COMMANDS.items():
        assert command.context_settings == CONTEXT, name


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


def test_private_pyarrow_import_is_bounded():
    """inputs/compute.py imports pyarrow._compute, a private module: the dependency names the last
    major version it is known to work with, and the installed pyarrow is within it."""
    import re
    import tomllib

    import pyarrow

    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    spec = next(d for d in deps if d.startswith("pyarrow"))
    upper = re.search(r"<\s*(\d+)", spec)
    assert upper, f"{spec}: no upper bound on pyarrow, whose private pyarrow._compute inputs/compute.py imports"
    assert int(pyarrow.__version__.split(".")[0]) < int(upper.group(1))
    assert "pyarrow._compute" in (ROOT / "ulnorm_eval" / "inputs" / "compute.py").read_text()


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
    out = CliRunner().invoke(main, ["measures"]).output
    listing = out.split("Summarisation measures", 1)[1]
    for name, f in TEXT_FAMILIES.items():
        assert f"\n  {name}(score=f|precision|recall)" in listing
        assert f"    E: {f.expectation_formula}" in listing and f.cite in listing
        for v in f.variants:
            shown = next((a for a in VARIANTS[v].aliases if a.startswith("UE")), v)
            parsed = summ_eval.parse_text_metric(f"{shown}({name})")
            assert (parsed.measure.base, parsed.variant) == (name, shown)
