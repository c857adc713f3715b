"""What every command shares: click's context settings, the one-line error exit, notes on stderr,
list-valued options, and writing the output (stdout or an atomic -o FILE).  Only click is imported."""
from __future__ import annotations

import sys

import click

__all__ = ["CONTEXT", "fail", "flush", "split_names", "split_variants", "base_name", "write_output"]

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def fail(msg: str, code: int = 2):
    """``ulnorm-eval: msg`` on stderr and exit (2: usage or input error)."""
    click.echo(f"ulnorm-eval: {msg}", err=True)
    sys.exit(code)


def flush(notes) -> None:
    """Each distinct note once, in order, on stderr."""
    for w in dict.fromkeys(notes):
        click.echo(f"ulnorm-eval: {w}", err=True)


def split_names(values) -> list:
    """-m values, each possibly several whitespace-separated names; whitespace inside parentheses,
    brackets or braces belongs to the name (``RBP(p=0.5, rel=1)``)."""
    out = []
    for v in values:
        depth, cur = 0, []
        for ch in v:
            depth += (ch in "([{") - (ch in ")]}")
            if ch.isspace() and depth <= 0:
                if cur:
                    out.append("".join(cur))
                cur = []
                continue
            cur.append(ch)
        if cur:
            out.append("".join(cur))
    return out


def split_variants(value: str | None):
    """--norm LIST: None (the default variants), [] for 'none'/'plain', else the names."""
    if value is None:
        return None
    parts = [x.strip() for x in value.split(",") if x.strip()]
    if parts in (["none"], ["plain"]):
        return []
    return parts


def base_name(path: str) -> str:
    import os

    return os.path.basename(path) or path


def write_output(text: str, output: str | None) -> None:
    """The whole text to ``output`` (atomically) or stdout."""
    if output:
        from ..render.formats import write_atomic
        write_atomic(output, text)
    else:
        sys.stdout.write(text)
