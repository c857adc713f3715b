#!/usr/bin/env python3
"""Regenerate the generated parts of README.md and docs/ from the code, so the docs cannot drift.

    python scripts/gen_docs.py           # rewrite README.md, docs/cli.md and blocks in docs/*.md in place
    python scripts/gen_docs.py --check   # exit 1 if any of them is out of date

README.md blocks (each between ``<!-- BEGIN name -->`` and ``<!-- END name -->``):

- ``measures-table``, ``variants-table``: the registry (ulnorm_eval.render.registry_tables.measures_markdown/variants_markdown)
- ``example-table``, ``qrels-table``: ``-f table`` output on the bundled examples, the defaults and ``--pool qrels``
- ``gate-example``: a failing ``--baseline`` gate on the bundled examples (exit code 1)
- ``compare-example``: ``compare`` on the three bundled runs
- ``paper-table-example``: ``compare -f markdown`` (a table for a paper) on the three bundled runs

The pages of docs/ may hold any of these blocks as well; they are regenerated alike.
docs/cli.md is generated whole: ``--help`` of the program and of every subcommand, at a fixed width of 100.

tests/docs/test_cli_docs.py runs the same functions and fails when any of them disagrees.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # document this checkout's package, not whichever one is installed
README = ROOT / "README.md"
CLI_MD = ROOT / "docs" / "cli.md"
WIDTH = 100
QRELS = "examples/qrels/dlhard-passage.qrels.txt"
RUNS = ["examples/runs/bm25.run.gz", "examples/runs/bm25_bert_zs.run.gz", "examples/runs/bm25_rm3.run.gz"]
EXAMPLE_ARGS = ["-f", "table", QRELS, RUNS[0], RUNS[1]]
QRELS_POOL_ARGS = ["-f", "table", "--pool", "qrels", QRELS, RUNS[0], RUNS[1]]
GATE_ARGS = ["-m", "nDCG@10", "--norm", "em", "--baseline", RUNS[0], "--max-drop", "0.01",
             "--alpha", "0.05", QRELS, RUNS[2]]
COMPARE_ARGS = ["compare", "-f", "table", "-m", "nDCG@10", "--norm", "em", "--table", "pairs", QRELS, *RUNS]
DOCS_ONLY = {"paper-table-example"}  # blocks shown on a page of docs/ only, not in the README
PAPER_ARGS = ["compare", "-f", "markdown", "-m", "nDCG@10", "-m", "AP", "--norm", "em", QRELS, *RUNS]
# How the command line is shown: a shell glob instead of the three run files it expands to.
SHOWN = {" ".join(RUNS): "examples/runs/*.run.gz"}


def help_text(name: str | None = None) -> str:
    """``ulnorm-eval [name] --help-all`` (or ``--help`` for a command without --help-all) exactly as click
    prints it at WIDTH columns."""
    import click

    from ulnorm_eval.cli.main import main

    def settings(c):  # the command's own context_settings (-h), at a fixed width
        return {**c.context_settings, "terminal_width": WIDTH, "max_content_width": WIDTH}

    cmd = main if name is None else main.all_commands()[name]
    parent = click.Context(main, info_name="ulnorm-eval", **settings(main))
    ctx = parent if name is None else click.Context(cmd, info_name=name, parent=parent, **settings(cmd))
    ctx.meta["help_all"] = True
    return cmd.get_help(ctx)


def help_flag(name: str | None) -> str:
    """The flag whose text docs/cli.md shows: --help-all where the command has it."""
    from ulnorm_eval.cli.main import main

    cmd = main if name is None else main.all_commands()[name]
    return "--help-all" if getattr(cmd, "brief", None) else "--help"


def command_names() -> list[str]:
    """``eval`` first, then the other subcommands alphabetically."""
    from ulnorm_eval.cli.main import main

    return sorted(main.all_commands(), key=lambda n: (n != "eval", n))


def cli_md() -> str:
    """The whole of docs/cli.md."""
    names = ", ".join(f"[`{n}`](#ulnorm-eval-{n})" for n in command_names())
    sections = [f"## ulnorm-eval\n\n```text\n$ ulnorm-eval --help\n{help_text().rstrip()}\n```"]
    for name in command_names():
        sections.append(f"## ulnorm-eval {name}\n\n```text\n$ ulnorm-eval {name} {help_flag(name)}\n"
                        f"{help_text(name).rstrip()}\n```")
    return ("# Command-line reference\n\n"
            "[Documentation index](index.md)\n\n"
            "Generated from `--help-all` (`--help` shows the options a first-time user needs) by `scripts/gen_docs.py`; `tests/docs/test_cli_docs.py` fails when this page "
            "is out of date. Commands: " + names + ".\n\n" + "\n\n".join(sections) + "\n")


def run_example(args: list, expect: int = 0, stderr: bool = True) -> str:
    """``$ ulnorm-eval ARGS`` and what it prints (stderr after stdout), run in the checkout.

    Trailing spaces are dropped from every line (rich pads table titles to the table's width)."""
    import os

    from click.testing import CliRunner

    from ulnorm_eval.cli.main import main

    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        res = CliRunner().invoke(main, args)
    finally:
        os.chdir(cwd)
    if res.exit_code != expect:
        raise RuntimeError(f"example exited {res.exit_code}, expected {expect}: {res.output}")
    shown = " ".join(a if re.fullmatch(r"[\w./,@=-]+", a) else f"'{a}'" for a in args)
    for full, short in SHOWN.items():
        shown = shown.replace(full, short)
    text = res.stdout.strip("\n")
    if stderr and res.stderr.strip():
        text += "\n" + res.stderr.strip("\n")
    text = "\n".join(line.rstrip() for line in text.splitlines())
    return f"```text\n$ ulnorm-eval {shown}\n{text}\n```"


def example_table() -> str:
    """The README's first example: two bundled runs with the defaults (value, E, EM)."""
    return run_example(EXAMPLE_ARGS, stderr=False)


def qrels_table() -> str:
    """The same with ``--pool qrels``: the other question (a shuffle of the judged documents), with its stderr."""
    return run_example(QRELS_POOL_ARGS)


def gate_example() -> str:
    """A failing baseline gate on the bundled examples (exit code 1)."""
    return run_example(GATE_ARGS, expect=1)


def compare_example() -> str:
    """``compare`` on the three bundled runs: the systems and pairs tables."""
    return run_example(COMPARE_ARGS, stderr=False)


def paper_table_example() -> str:
    """``compare -f markdown`` on the three bundled runs: the table for a paper."""
    return run_example(PAPER_ARGS, stderr=False)


def blocks_light() -> dict:
    """The README blocks generated without evaluating anything."""
    from ulnorm_eval.render.registry_tables import measures_markdown, variants_markdown

    return {"measures-table": measures_markdown(), "variants-table": variants_markdown()}


def blocks() -> dict:
    return {**blocks_light(), "example-table": example_table(), "qrels-table": qrels_table(),
            "gate-example": gate_example(), "compare-example": compare_example(),
            "paper-table-example": paper_table_example()}


def block(text: str, name: str) -> str | None:
    """The current content of block ``name`` in ``text`` (None when its markers are missing)."""
    m = re.search(rf"<!-- BEGIN {re.escape(name)} -->\n(.*?)\n?<!-- END {re.escape(name)} -->", text, re.S)
    return None if m is None else m.group(1)


def render(text: str, new: dict, required: bool = True) -> str:
    """``text`` with every block of ``new`` replaced; a missing block is an error when ``required``."""
    for name, content in new.items():
        pattern = re.compile(rf"(<!-- BEGIN {re.escape(name)} -->\n).*?(<!-- END {re.escape(name)} -->)", re.S)
        if not pattern.search(text):
            if required:
                raise SystemExit(f"README.md has no <!-- BEGIN {name} --> ... <!-- END {name} --> block")
            continue
        text = pattern.sub(lambda m: m.group(1) + content + "\n" + m.group(2), text)
    return text


def doc_pages() -> list[Path]:
    """The hand-written pages of docs/, which may hold any of the README's blocks too."""
    return sorted(p for p in (ROOT / "docs").glob("*.md") if p != CLI_MD)


def targets() -> list[tuple[Path, str]]:
    """Every generated file with its up-to-date text."""
    new = blocks()
    readme = {k: v for k, v in new.items() if k not in DOCS_ONLY}
    out = [(README, render(README.read_text(encoding="utf-8"), readme)), (CLI_MD, cli_md())]
    for page in doc_pages():
        out.append((page, render(page.read_text(encoding="utf-8"), new, required=False)))
    return out


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    todo = targets()
    stale = [p for p, new in todo if not p.exists() or p.read_text(encoding="utf-8") != new]
    if "--check" in argv:
        for p in stale:
            print(f"{p.relative_to(ROOT)} is out of date: run python scripts/gen_docs.py", file=sys.stderr)
        return 1 if stale else 0
    for p, new in todo:
        if p in stale:
            p.write_text(new, encoding="utf-8")
            print(f"{p.relative_to(ROOT)} updated")
    return 0


if __name__ == "__main__":
    sys.exit(main())
