"""The README cannot drift from the code: every flag documented, generated blocks up to date.

When one of these fails after a change to an option, a help text, the registry or the numbers,
run ``python scripts/gen_readme_tables.py`` and commit README.md.
"""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import click
import pytest

from ulnorm_eval.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
FIX = "README.md is out of date: run python scripts/gen_readme_tables.py"


def _gen():
    spec = importlib.util.spec_from_file_location("gen_readme_tables", ROOT / "scripts" / "gen_readme_tables.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


gen = _gen()


def commands():
    return [("ulnorm-eval", main)] + [(f"ulnorm-eval {n}", c) for n, c in sorted(main.commands.items())]


def test_every_command_has_help():
    for name, cmd in commands():
        assert (cmd.help or "").strip(), f"{name} has no help text"
        for p in cmd.params:
            if isinstance(p, click.Option) and not p.hidden:
                assert (p.help or "").strip(), f"{name} {p.opts[0]} has no help text"


@pytest.mark.parametrize("name,cmd", commands(), ids=[n for n, _ in commands()])
def test_every_option_is_in_the_readme(name, cmd):
    missing = [o for p in cmd.params if isinstance(p, click.Option) and not p.hidden
               for o in (*p.opts, *p.secondary_opts) if not re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", README)]
    assert not missing, f"{name}: {missing} not in README.md; {FIX}"


@pytest.mark.parametrize("block", ["measures-table", "variants-table", "command-line"])
def test_generated_block_is_current(block):
    assert gen.block(README, block) is not None, f"README.md lacks the {block} markers"
    assert gen.block(README, block) == gen.blocks_light()[block], FIX


def test_readme_tables_list_every_registered_name():
    from ulnorm_eval.core.registry import FAMILIES, VARIANTS

    measures = gen.block(README, "measures-table")
    variants = gen.block(README, "variants-table")
    assert [row.split("|")[1].strip() for row in measures.splitlines()[2:]] == list(FAMILIES)
    assert [row.split("|")[1].strip().split(" ")[0] for row in variants.splitlines()[2:]] == list(VARIANTS)


def _numbers(block: str) -> list[str]:
    return re.findall(r"-?\d+\.\d{4}\b", block)


def test_example_table_shows_current_numbers():
    """The README's table is real output on the bundled examples: same numbers, same caption."""
    fresh = gen.example_table()
    shown = gen.block(README, "example-table")
    assert shown is not None
    assert _numbers(shown) == _numbers(fresh) and len(_numbers(fresh)) == 2 * 3 * 4, FIX
    assert shown.splitlines()[-2] == fresh.splitlines()[-2], FIX  # the caption
    assert shown == fresh, FIX


def test_gate_example_is_current():
    shown = gen.block(README, "gate-example")
    assert shown == gen.gate_example(), FIX
    assert "gate FAILED" in shown


def test_readme_has_a_github_actions_gate_step():
    step = README[README.index("```yaml"):]
    step = step[: step.index("```", 3)]
    assert "pip install" in step and "--fail-below" in step and "--baseline" in step
