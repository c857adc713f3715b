#!/usr/bin/env python3
"""Regenerate the README's generated blocks from the code, so the docs cannot drift.

    python scripts/gen_readme_tables.py           # rewrite README.md in place
    python scripts/gen_readme_tables.py --check   # exit 1 if README.md is out of date

Blocks (each between ``<!-- BEGIN name -->`` and ``<!-- END name -->``):

- ``measures-table``, ``variants-table``: the registry (ulnorm_eval.render.formats.measures_markdown/variants_markdown)
- ``example-table``: ``-f table`` output on the bundled examples
- ``gate-example``: a failing ``--baseline`` gate on the bundled examples
- ``command-line``: ``--help`` of the program and of every subcommand, at a fixed width of 100

tests/test_cli_docs.py runs the same functions and fails when README.md disagrees.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # document this checkout's package, not whichever one is installed
README = ROOT / "README.md"
WIDTH = 100
EXAMPLE_ARGS = ["-f", "table", "-n", "e,iub,ul2", "examples/qrels/dlhard-passage.qrels.txt",
                "examples/runs/bm25.run.gz", "examples/runs/bm25_bert_zs.run.gz"]
GATE_ARGS = ["-m", "nDCG@10", "-n", "ul2", "--baseline", "examples/runs/bm25.run.gz", "--max-drop", "0.01",
             "--alpha", "0.05", "examples/qrels/dlhard-passage.qrels.txt", "examples/runs/bm25_rm3.run.gz"]


def help_text(name: str | None = None) -> str:
    """``ulnorm-eval [name] --help`` exactly as click prints it at WIDTH columns."""
    import click

    from ulnorm_eval.cli.main import main

    def settings(c):  # the command's own context_settings (-h), at a fixed width
        return {**c.context_settings, "terminal_width": WIDTH, "max_content_width": WIDTH}

    cmd = main if name is None else main.commands[name]
    parent = click.Context(main, info_name="ulnorm-eval", **settings(main))
    ctx = parent if name is None else click.Context(cmd, info_name=name, parent=parent, **settings(cmd))
    return cmd.get_help(ctx)


def command_names() -> list[str]:
    """``eval`` first, then the other subcommands alphabetically."""
    from ulnorm_eval.cli.main import main

    return sorted(main.commands, key=lambda n: (n != "eval", n))


def command_line() -> str:
    parts = []
    for name in [None, *command_names()]:
        shown = "ulnorm-eval --help" if name is None else f"ulnorm-eval {name} --help"
        parts.append(f"```text\n$ {shown}\n{help_text(name).rstrip()}\n```")
    return "\n\n".join(parts)


def run_example(args: list, expect: int = 0, stderr: bool = True) -> str:
    """``$ ulnorm-eval ARGS`` and what it prints (stderr after stdout), run in the checkout."""
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
    text = res.stdout.strip("\n")
    if stderr and res.stderr.strip():
        text += "\n" + res.stderr.strip("\n")
    return f"```text\n$ ulnorm-eval {shown}\n{text}\n```"


def example_table() -> str:
    """The table the README shows, produced by the command line on the bundled examples."""
    return run_example(EXAMPLE_ARGS, stderr=False)


def gate_example() -> str:
    """A failing baseline gate on the bundled examples (exit code 1)."""
    return run_example(GATE_ARGS, expect=1)


def blocks_light() -> dict:
    """The blocks generated without evaluating anything."""
    from ulnorm_eval.render.formats import measures_markdown, variants_markdown

    return {"measures-table": measures_markdown(), "variants-table": variants_markdown(),
            "command-line": command_line()}


def blocks() -> dict:
    return {**blocks_light(), "example-table": example_table(), "gate-example": gate_example()}


def block(text: str, name: str) -> str | None:
    """The current content of block ``name`` in ``text`` (None when its markers are missing)."""
    m = re.search(rf"<!-- BEGIN {re.escape(name)} -->\n(.*?)\n?<!-- END {re.escape(name)} -->", text, re.S)
    return None if m is None else m.group(1)


def render(text: str, new: dict) -> str:
    for name, content in new.items():
        pattern = re.compile(rf"(<!-- BEGIN {re.escape(name)} -->\n).*?(<!-- END {re.escape(name)} -->)", re.S)
        if not pattern.search(text):
            raise SystemExit(f"README.md has no <!-- BEGIN {name} --> ... <!-- END {name} --> block")
        text = pattern.sub(lambda m: m.group(1) + content + "\n" + m.group(2), text)
    return text


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    old = README.read_text(encoding="utf-8")
    new = render(old, blocks())
    if "--check" in argv:
        if new != old:
            print("README.md is out of date: run python scripts/gen_readme_tables.py", file=sys.stderr)
            return 1
        return 0
    if new != old:
        README.write_text(new, encoding="utf-8")
        print("README.md updated")
    return 0


if __name__ == "__main__":
    sys.exit(main())
