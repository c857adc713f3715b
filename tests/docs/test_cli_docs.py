"""The README and docs/ cannot drift from the code: every flag documented, generated parts up to date,
no unresolved "seed NNN" citations, every linked page present.

When one of these fails after a change to an option, a help text, the registry or the numbers,
run ``python scripts/gen_docs.py`` and commit README.md and docs/.
"""
from __future__ import annotations

import importlib.util
import re

import click
import pytest

from ulnorm_eval.cli.main import main

from conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = ROOT / "docs"
CLI_MD = (DOCS / "cli.md").read_text(encoding="utf-8")
FIX = "README.md or docs/ is out of date: run python scripts/gen_docs.py"


def _gen():
    spec = importlib.util.spec_from_file_location("gen_docs", ROOT / "scripts" / "gen_docs.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


gen = _gen()


def commands():
    return [("ulnorm-eval", main)] + [(f"ulnorm-eval {n}", c) for n, c in sorted(main.all_commands().items())]


def test_every_command_has_help():
    for name, cmd in commands():
        assert (cmd.help or "").strip(), f"{name} has no help text"
        for p in cmd.params:
            if isinstance(p, click.Option) and not p.hidden:
                assert (p.help or "").strip(), f"{name} {p.opts[0]} has no help text"


def _section(name: str) -> str:
    """The part of docs/cli.md about one command (up to the next command's heading)."""
    start = CLI_MD.index(f"\n## {name}\n")
    end = CLI_MD.find("\n## ", start + 1)
    return CLI_MD[start:] if end < 0 else CLI_MD[start:end]


@pytest.mark.parametrize("name,cmd", commands(), ids=[n for n, _ in commands()])
def test_every_option_is_in_the_cli_reference(name, cmd):
    section = _section(name)
    missing = [o for p in cmd.params if isinstance(p, click.Option) and not p.hidden
               for o in (*p.opts, *p.secondary_opts) if not re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", section)]
    assert not missing, f"{name}: {missing} not in its section of docs/cli.md; {FIX}"


def test_cli_reference_is_current():
    assert CLI_MD == gen.cli_md(), FIX


@pytest.mark.parametrize("block", ["measures-table", "variants-table"])
def test_generated_table_is_current(block):
    assert gen.block(README, block) is not None, f"README.md lacks the {block} markers"
    assert gen.block(README, block) == gen.blocks_light()[block], FIX


def test_readme_tables_list_every_registered_name():
    from ulnorm_eval.core.registry import FAMILIES, VARIANTS

    measures = gen.block(README, "measures-table")
    variants = gen.block(README, "variants-table")
    assert [row.split("|")[1].strip() for row in measures.splitlines()[2:]] == list(FAMILIES)
    cells = [row.split("|")[1].strip().split(" (alias")[0] for row in variants.splitlines()[2:]]
    assert [n for c in cells for n in c.split(", ")] == list(VARIANTS)  # LB, UB share a row


def _numbers(block: str) -> list[str]:
    return re.findall(r"-?\d+\.\d{4}\b", block)


def test_example_table_shows_current_numbers():
    """The README's first example is real output on the bundled examples: same numbers, same caption."""
    fresh = gen.example_table()
    shown = gen.block(README, "example-table")
    assert shown is not None
    # 2 runs x 3 measures x (value, E, EM and the two ends of its 'vs random' interval)
    assert _numbers(shown) == _numbers(fresh) and len(_numbers(fresh)) == 2 * 3 * 5, FIX
    assert shown.splitlines()[-3] == fresh.splitlines()[-3], FIX  # the caption
    assert shown == fresh, FIX
    assert "(--pool qrels+1000;" in shown and "(--pool qrels)" in gen.block(README, "qrels-table")


def test_every_generated_example_in_readme_and_docs_is_current():
    """Each example block, wherever it appears (README.md or a page of docs/), is the command's real output."""
    fresh = gen.blocks()
    pages = {"README.md": README, **{f"docs/{p.name}": p.read_text(encoding="utf-8") for p in gen.doc_pages()}}
    seen = set()
    for page, text in pages.items():
        for name, content in fresh.items():
            shown = gen.block(text, name)
            if shown is not None:
                seen.add(name)
                assert shown == content, f"{page}: block {name}; {FIX}"
    assert seen == set(fresh), f"blocks shown nowhere: {set(fresh) - seen}"


def test_gate_example_fails_the_gate():
    assert "gate FAILED" in gen.block(README, "gate-example")


def test_the_gate_page_has_a_github_actions_step():
    text = (DOCS / "gate.md").read_text(encoding="utf-8")
    step = text[text.index("```yaml"):]
    step = step[: step.index("```", 3)]
    assert "pip install" in step and "--fail-below" in step and "--baseline" in step


def test_readme_is_short():
    assert len(README.splitlines()) <= 250


def test_install_commands_match_ci():
    """The README's test command is what .ci/run runs in a fresh virtual environment, and the README
    says what .ci/run does besides (torch first)."""
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "pip install '.[test]' && python -m pytest -q" in README
    assert 'python -m pip install --quiet ".[test]"' in ci and ci.rstrip().endswith("python -m pytest -q")
    pins = re.findall(r'pip install --quiet "(torch==[\d.]+)"', ci)
    assert pins and "after installing the CPU build of torch, pinned" in " ".join(README.split()), \
        "README: say what .ci/run installs besides"
    assert "runs exactly this" not in README
    assert "pip install . && ulnorm-eval examples/qrels/dlhard-passage.qrels.txt examples/runs/*.run.gz" in README


def _prose(text: str) -> str:
    """``text`` without its generated blocks (those come from the code's own help and registry)."""
    return re.sub(r"<!-- BEGIN ([\w-]+) -->.*?<!-- END \1 -->", "", text, flags=re.S)


def test_no_seed_numbers_in_the_prose():
    """Citations are author-year with a link to docs/references.md, never the team's "seed NNN"."""
    pages = {"README.md": README, **{f"docs/{p.name}": p.read_text(encoding="utf-8") for p in gen.doc_pages()}}
    bad = {page: re.findall(r".{0,30}\b[Ss]eeds? \d{3}\b.{0,30}", _prose(text)) for page, text in pages.items()}
    assert not {p: b for p, b in bad.items() if b}


def test_links_to_pages_and_references_resolve():
    pages = {ROOT / "README.md": README, **{p: p.read_text(encoding="utf-8") for p in DOCS.glob("*.md")}}
    refs = (DOCS / "references.md").read_text(encoding="utf-8")
    anchors = set(re.findall(r'<a id="([\w-]+)"></a>', refs))
    broken = []
    for page, text in pages.items():
        for target in re.findall(r"\]\(([^)#\s]+\.md)?(?:#([\w-]+))?\)", text):
            path, anchor = target
            if path:
                dest = (page.parent / path).resolve()
                # docs/architecture.md is written on another branch (the architecture work)
                if not dest.exists() and dest.name != "architecture.md":
                    broken.append(f"{page.name} -> {path}")
                if path.endswith("references.md") and anchor and anchor not in anchors:
                    broken.append(f"{page.name} -> {path}#{anchor}")
    assert not broken, broken


def ue_means(ue, names: list) -> dict:
    """The command line's 'all' rows of the bundled bm25 run for ``names`` (the defaults' pool)."""
    return ue.evaluate("examples/qrels/dlhard-passage.qrels.txt", "examples/runs/bm25.run.gz", names,
                       variants=[]).means["bm25.run"]


def test_python_page_snippets_run(monkeypatch, capsys):
    """Every ```python block of docs/python.md runs as shown, from the checkout's root, in order."""
    monkeypatch.chdir(ROOT)
    text = (DOCS / "python.md").read_text(encoding="utf-8")
    snippets = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(snippets) == 9
    ns: dict = {}
    for code in snippets:
        exec(compile(code, "docs/python.md", "exec"), ns)
    assert list(ns["res"].summary().columns) == ["nDCG@10", "NRG(nDCG@10)"]
    assert set(ns["cmp"].systems["run"]) == {"bm25.run", "bm25_bert_zs.run", "bm25_rm3.run"}
    out = capsys.readouterr().out
    assert '"title": "ulnorm-eval -f json"' in out
    # the values the page states
    ev = ns["ev"]
    assert ev.means["bm25"]["nDCG@10"] == 0.30369608260673436
    assert ns["small"].means == {"run": {"P@1": 0.5, "RR": 0.75}}
    assert {str(m): round(v, 4) for m, v in ns["agg"].items()} == {"nDCG@10": 0.3037, "EM(nDCG@10)": 0.2906,
                                                                   "E(AP)": 0.0365}
    em = ue_means(ns["ue"], ["nDCG@10", "EM(nDCG@10)"])
    assert {str(m): v for m, v in ns["agg"].items() if str(m) != "E(AP)"} == em
    assert len(ns["perq"]) == 50
    # pt.Experiment averages per-query values itself: the 'all' row, mean EM, as the command line's
    assert ns["experiment"].set_index("name").loc["bm25", "EM(nDCG@10)"] == pytest.approx(em["EM(nDCG@10)"], abs=1e-12)
    assert ns["from_irds"].frame.equals(ns["ue"].evaluate("examples/qrels/dlhard-passage.qrels.txt",
                                                          "examples/runs/bm25.run.gz", ["nDCG@10"], ["UL2"]).frame)
    assert "\\textsuperscript{\\dag}" in out and ns["table"].startswith("| # | Run |")


def test_readme_speed_sentence_is_the_benchmark_summary():
    """The README's speed figures are those of the last full benchmark run (benchmarks/run.py
    --update-docs wrote both), and docs/performance.md carries that run's report."""
    import importlib.util
    import json

    spec = importlib.util.spec_from_file_location("bench_summary", ROOT / "benchmarks" / "summary.py")
    summary = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(summary)
    data = json.loads((ROOT / "docs" / "performance-summary.json").read_text())
    assert set(data) == set(summary.KEYS)
    assert summary.block(README) == summary.readme_sentence(data)
    report = summary.block((ROOT / "docs" / "performance.md").read_text(), "<!-- BEGIN benchmark-report -->",
                           "<!-- END benchmark-report -->")
    assert "#### Targets" in report and "load average" in report
    assert summary.replace_block("a <!-- BEGIN benchmark -->old<!-- END benchmark --> b", summary.BEGIN, summary.END,
                                 "new") == "a <!-- BEGIN benchmark -->new<!-- END benchmark --> b"


def test_no_internal_issue_numbers_in_user_docs():
    """The team's issue numbers mean nothing to a reader: none in README.md or docs/ (generated
    blocks included: the benchmark report is written into docs/performance.md)."""
    pages = {"README.md": README, **{f"docs/{p.name}": p.read_text(encoding="utf-8") for p in gen.doc_pages()}}
    bad = {page: re.findall(r".{0,30}\b[Ii]ssues?[ -]#?\d+.{0,30}", text) for page, text in pages.items()}
    assert not {p: b for p, b in bad.items() if b}


@pytest.mark.parametrize("name", ["eval", "compare", "queries"])
def test_help_fits_a_screen_and_help_all_holds_every_option(name):
    """--help at 80 columns: at most 60 lines, the options a first-time user needs and how to see the others;
    --help-all: every option, each with its whole help (the text docs/cli.md holds)."""
    from click.testing import CliRunner

    cmd = main.all_commands()[name]
    brief = CliRunner().invoke(main, [name, "--help"], terminal_width=80, prog_name="ulnorm-eval").output
    full = CliRunner().invoke(main, [name, "--help-all"], terminal_width=80).output
    assert len(brief.splitlines()) <= 60 and f"more options: ulnorm-eval {name} --help-all" in brief, brief
    options = [p for p in cmd.params if isinstance(p, click.Option) and not p.hidden]
    shown = [p for p in options if re.search(rf"^  (?:-\w, )?{re.escape(p.opts[-1])}\b", brief, re.M)]
    assert {p.name for p in shown} == set(cmd.brief) | {"help_all"}
    assert f"\n{len(options) - len(shown)} more options" in brief  # click's -h/--help: shown, not in cmd.params
    flat = "".join(full.split())  # click wraps at spaces and after hyphens
    for p in options:  # each option's whole help, as written
        assert "".join(p.help.split()) in flat, p.name


def test_help_word_and_a_mistyped_command(tmp_path, monkeypatch):
    """`help` and `help COMMAND` print --help; a first word of letters that is neither a command nor a path, and is
    close to a command's name, is a mistyped command (exit 2, one line naming the commands), while an existing
    file of that name, or a word no command is close to, is eval's QRELS."""
    from click.testing import CliRunner

    runner = CliRunner()
    assert runner.invoke(main, ["help"]).output == runner.invoke(main, ["--help"]).output
    assert runner.invoke(main, ["help", "compare"]).output == runner.invoke(main, ["compare", "--help"]).output
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(main, ["evaluate", "x", "y"])
    assert res.exit_code == 2 and res.stdout == "" and len(res.stderr.splitlines()) == 1
    assert res.stderr.startswith("ulnorm-eval: evaluate: no such command (did you mean eval?); commands are "
                                 "compare, eval, measures, ")
    res = runner.invoke(main, ["qrels", "x"])  # a word no command is close to: eval's missing qrels
    assert res.exit_code == 2 and "qrels: no such file" in res.stderr and "command" not in res.stderr
    res = runner.invoke(main, ["help", "evaluate"])
    assert res.exit_code == 2 and "evaluate: no such command" in res.stderr
    res = runner.invoke(main, ["qrels.txt", "x"])  # a file name (a dot): eval's missing qrels
    assert res.exit_code == 2 and "qrels.txt: no such file" in res.stderr and "command" not in res.stderr
    (tmp_path / "evaluate").write_text("q 0 d 1\n")
    res = runner.invoke(main, ["evaluate", "x"])  # an existing path is eval's QRELS
    assert res.exit_code == 2 and "x: no such file" in res.stderr and "command" not in res.stderr
