"""What every command shares: click's context settings, the one-line error exit, notes on stderr, the
output's format, and writing the output (stdout or an atomic -o FILE).  Only click is imported."""
from __future__ import annotations

import contextlib
import sys

import click

__all__ = ["CONTEXT", "fail", "flush", "said_once", "write_output", "write_outputs_then", "output_format", "safe",
           "output_view",
           "EXTENSIONS", "refusals", "progress_bar", "outputs_checked", "table_layout", "table_list"]

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}

def safe(msg) -> str:
    """``msg`` with control characters escaped visibly (a file name with ESC, BEL or a newline must
    neither drive the terminal nor forge a second line of a one-line message)."""
    from ..render.values import message_text

    return message_text(msg)


def fail(msg: str, code: int = 2):
    """``ulnorm-eval: msg`` on stderr and exit (2: usage or input error)."""
    click.echo(f"ulnorm-eval: {safe(msg)}", err=True)
    sys.exit(code)


def flush(notes) -> None:
    """The notes on stderr, in order, as --notes asks: 'short' (the default) each once, a note several runs
    share (the same ``brief`` of pipeline.blocks.Note) said once of them all; 'all' every run's whole note;
    'none' none (errors and the gate's verdict are no notes)."""
    context = click.get_current_context(silent=True)
    mode = context.meta.get("notes", "short") if context is not None else "short"
    for note in () if mode == "none" else dict.fromkeys(notes) if mode == "all" else said_once(notes):
        click.echo(f"ulnorm-eval: {safe(note)}", err=True)


class _Span(tuple):
    """(lo, hi) as a note says it: '4' or '1-9'; a spec 'query|queries' adds the noun, singular for 1."""

    def __format__(self, spec: str) -> str:
        lo, hi = self
        text = f"{lo:,}" if lo == hi else f"{lo:,}-{hi:,}"
        one, _, many = spec.partition("|")
        return f"{text} {one if hi == 1 else many}" if spec else text


def said_once(notes) -> list:
    """``notes`` with the notes that share a brief (pipeline.blocks.Note) said once: a run's own note when it
    is the only one and short; else the brief, its spans from the smallest to the largest of the runs',
    its tally summed, after the runs named compactly (three, then how many more: --notes all lists them)."""
    groups: dict = {}
    for note in dict.fromkeys(notes):
        groups.setdefault(getattr(note, "brief", "") or note, []).append(note)
    out = []
    for key, group in groups.items():
        if key is group[0] or (len(group) == 1 and len(group[0]) <= 200 + len(group[0].run)):
            out.append(group[0])
            continue
        spans = [_Span((min(lo for lo, _ in column), max(hi for _, hi in column))) for column in zip(*(n.spans for n in group))]
        tally: dict = {}
        for note in group:
            for word, count in note.tally:
                tally[word] = tally.get(word, 0) + count
        runs = list(dict.fromkeys(note.run for note in group))
        named = runs[0] if len(runs) == 1 else f"{len(runs)} runs ({', '.join(runs[:3])}" + (
            f", {len(runs) - 3} more: --notes all)" if len(runs) > 3 else ")")
        out.append(f"{named}: " + key.format(*spans, tally=", ".join(f"{count:,} {word}" for word, count in tally.items())))
    return out


@contextlib.contextmanager
def refusals(*errors, usage=()):
    """A list for the library's notes, said (:func:`flush`) when the block ends; its refusals, exit 2:
    contradicting options (``usage``, OptionError) as click's usage error, bad input (and ``errors``) as one
    line alone, without the notes of output never written."""
    from ..core.registry import UnknownMeasure
    from ..inputs.trec import InputError
    from ..inputs.errors import OptionError, RefusedAlone
    from ..pipeline.parallel import ParallelError

    notes = []
    try:
        yield notes
    except (OptionError, *((usage,) if isinstance(usage, type) else usage)) as exc:
        raise click.UsageError(str(exc)) from exc
    except (RefusedAlone, InputError, UnknownMeasure, ParallelError, *errors) as exc:
        fail(str(exc))
    flush(notes)


def outputs_checked(**more) -> None:
    """Refuse, before any input is read, what cannot be written or run: an output (-o, --plot, --summary-md)
    that names an input or another output (render.files.check_outputs over the running command's parameters
    and ``more``), --plot without matplotlib (the 'plot' extra), --scheduler without an address or Dask."""
    import importlib.util

    from ..extras import missing_message
    from ..render.files import check_outputs

    context = click.get_current_context()
    params = {**context.params, **more}
    check_outputs(params)
    if params.get("plot") and importlib.util.find_spec("matplotlib") is None:
        raise click.UsageError(missing_message("plot"))
    scheduler = params.get("scheduler")
    if scheduler is not None and not scheduler.strip():  # would silently run here: the option asks for a cluster
        fail(f"--scheduler {scheduler!r}: no address; give the Dask scheduler's (tcp://HOST:8786), or leave the option "
             "out to run on this machine")
    if scheduler and context.get_parameter_source("jobs") not in (None, click.core.ParameterSource.DEFAULT):
        fail("-j/--jobs and --scheduler exclude each other (the cluster's workers do the work)")
    if scheduler and importlib.util.find_spec("distributed") is None:
        fail(missing_message("dask", "distributed", "--scheduler"))


def progress_bar(wanted: bool):
    """render.progress.progress as the library's ``progress(inputs, monte_carlo_total)``: shown when
    ``wanted`` (no --no-progress) and stderr is a terminal (render.progress.shown)."""
    from ..render.progress import progress, shown

    return lambda inputs, monte_carlo: progress(inputs, shown(wanted), monte_carlo)


# -o FILE's extension -> the format written when -f is not given (docs/output.md)
EXTENSIONS = {".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl", ".tsv": "tsv", ".tab": "tsv",
              ".csv": "csv", ".txt": "trec", ".trec": "trec", ".md": "markdown", ".tex": "latex"}


def output_format(fmt, output, formats, piped: str) -> str:
    """``-f`` (with a note when -o's extension says otherwise), else -o's extension (:data:`EXTENSIONS`)
    among the command's ``formats``, else table on a terminal and ``piped`` otherwise."""
    import os

    ext = os.path.splitext(output or "")[1].lower()
    implied = EXTENSIONS.get(ext)
    if implied == "trec" and "trec" not in formats:
        implied = piped  # .txt for commands without trec rows: their text default
    if fmt is not None:
        if implied is not None and implied in formats and implied != fmt:
            flush([f"{output}: writing {fmt} (-f {fmt}), not the {implied} its extension suggests"])
        return fmt
    if implied is not None and implied in formats:
        return implied
    if output:
        if implied is not None:
            flush([f"{output}: this command has no {implied} format; writing {piped}"])
        return piped
    return "table" if sys.stdout.isatty() else piped


def output_view(options: dict, formats, piped: str, **fields):
    """The command's output options as a render.files.View, its format by :func:`output_format`."""
    from ..render.files import View
    from .options import record

    fmt = output_format(options["fmt"], options["output"], formats, piped)
    return record(View, options, fmt=fmt, layout=table_layout(options["output"]) if fmt == "table" else {}, **fields)


def write_output(text: str, output: str | None, *more) -> None:
    """The whole text to ``output`` (atomically) or stdout, with ``more`` Output items, in one step."""
    from ..render.files import Output, write_all

    write_all([Output(output, text), *more])


def write_outputs_then(outputs, verdict=None) -> None:
    """Write ``outputs`` in one step, then the gate's ``verdict`` (``(lines, failed)`` or None) whatever
    happened to them; exit 1 when the gate failed (never hidden), else 2 after an output error."""
    from ..render.files import OutputError, write_all

    lines, failed = verdict or ((), False)
    code = 1 if failed else 0
    try:
        write_all(outputs)
    except OutputError as exc:
        lines, code = [str(exc), *lines], code or 2
    for line in lines:  # run names are file names: escaped like every other message
        click.echo(f"ulnorm-eval: {safe(line)}", err=True)
    if code:
        sys.exit(code)


def table_layout(output: str | None) -> dict:
    """-f table's keywords: on a terminal its width and colours; piped, $COLUMNS if set; else (and for -o)
    the natural width."""
    import os
    import shutil

    if output:
        return {}
    if sys.stdout.isatty():
        from ..render.values import terminal_styles

        return {"color": terminal_styles(), "width": shutil.get_terminal_size().columns}
    cols = os.environ.get("COLUMNS", "").strip()
    return {"width": int(cols)} if cols.isdigit() and int(cols) > 0 else {}


def table_list(text: str, tables) -> list:
    """--table's comma-separated names (or 'all') -> the chosen ``tables`` in the order given, once each;
    click's usage error naming the choices for anything else."""
    parts = [part.strip().lower() for part in text.split(",") if part.strip()]
    if "all" in parts:
        return list(tables)
    bad = [part for part in parts if part not in tables]
    if bad or not parts:
        raise click.UsageError(f"--table takes {', '.join(tables)} or all (got {text!r})")
    return list(dict.fromkeys(parts))
