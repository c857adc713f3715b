"""Formatters of named tables (compare's systems/summary/pairs, queries' table).

One function per format, gathered in FRAME_FORMATS: 'table' (rich), 'tsv'/'csv' (one table; several
are stacked into one with a leading ``table`` column over the union of their columns), 'json' ({meta, name:
records}), 'latex' and 'markdown' (compare's systems x metrics table for papers, :mod:`.paper`).
Each returns the whole text, so ``-o FILE`` is written atomically.  Tables are
:class:`~ulnorm_eval.analysis.table.Table` objects (pandas DataFrames are converted), printed
without pandas: cells are written as pandas' ``to_csv`` writes them (floats as Python's repr,
NaN as ``nan``), so the text is the same either way.
"""
from __future__ import annotations

import sys

from ..analysis.table import NUMERIC, Table

__all__ = ["render", "FRAME_FORMATS", "format_frames_delimited", "format_frames_json", "format_frames_table"]


def _tables(frames: dict) -> dict:
    return {name: t if isinstance(t, Table) else Table.from_frame(t) for name, t in frames.items()}


def render(frames: dict, fmt: str, precision=None, meta=None) -> str:
    """Text of named tables (Tables or DataFrames) in format ``fmt`` (a key of FRAME_FORMATS)."""
    return FRAME_FORMATS[fmt](_tables(frames), precision, meta or {})


def format_frames_delimited(frames: dict, precision, meta, sep: str = "\t") -> str:
    """tsv (or csv with ``sep=','``): one table; several are stacked into one, a leading ``table`` column
    naming each row's table, the columns the union of theirs (empty where a table has no such column).
    Text cells are escaped (:func:`.values.safe_text`) and, in csv, formulas neutralised
    (:func:`.values.csv_cell`); numbers are written as they are (Python's repr; NaN as ``nan``)."""
    import csv
    import io

    from .values import csv_cell, safe_text

    cell = csv_cell if sep == "," else safe_text  # csv: no spreadsheet formulas; both: no forged lines
    tables = {name: _rounded(t, precision) for name, t in _tables(frames).items()}
    several = len(tables) > 1
    # several tables: one table with a leading `table` column over the union of their columns (a cell
    # a table lacks is empty), so that pandas.read_csv or any csv reader takes the output whole
    columns = list(dict.fromkeys(c for t in tables.values() for c in t.columns))
    buf = io.StringIO()
    w = csv.writer(buf, delimiter=sep, lineterminator="\n")
    w.writerow((["table"] if several else []) + [cell(str(c)) for c in columns])
    for name, t in tables.items():
        text = {c: t.kinds[c] in ("str", "object") for c in t.columns}  # pandas escaped text in these
        for row in t.rows():
            got = dict(zip(t.columns, row))
            w.writerow(([cell(name)] if several else [])
                       + [_csv_text(got[c], text[c], cell) if c in got else "" for c in columns])
    return buf.getvalue()


def _csv_text(v, is_text: bool, cell) -> str:
    """A cell as pandas' to_csv writes it with na_rep='nan'."""
    if v is None:
        return "nan"
    if is_text:
        return cell(v) if isinstance(v, str) else str(v)
    if isinstance(v, float):
        return "nan" if v != v else repr(v)
    return str(v)


def format_frames_json(frames: dict, precision, meta) -> str:
    """{"meta": ..., name: [records]}; NaN and infinities as null."""
    return _json(_tables(frames), precision, meta)


def format_frames_table(frames: dict, precision, meta, width: int | None = None) -> str:
    """rich tables, one per frame (compare's systems table is pivoted to run x metric); never a cut
    number or name: see :func:`_rich` (``width``: the terminal's, by default when stdout is one)."""
    return _rich(_tables(frames), 4 if precision is None else precision, meta, width)


FRAME_FORMATS = {
    "table": format_frames_table, "tsv": format_frames_delimited,
    "csv": lambda frames, precision, meta: format_frames_delimited(frames, precision, meta, ","),
    "json": format_frames_json,
    # tables for papers (compare only): systems x metrics with significance marks (render/paper.py)
    "latex": lambda frames, precision, meta: _paper("latex", frames, precision, meta),
    "markdown": lambda frames, precision, meta: _paper("markdown", frames, precision, meta),
}


def _paper(fmt, frames, precision, meta) -> str:
    from . import paper

    return {"latex": paper.format_latex, "markdown": paper.format_markdown}[fmt](_tables(frames), precision, meta)


def _rounded(t: Table, precision) -> Table:
    """Float columns rounded to ``precision`` decimals as pandas rounds them (numpy.round), except
    that a finite number too large to scale by 10^precision stays as it is (numpy, and pandas
    before, turned it into inf)."""
    if precision is None:
        return t
    return Table({c: round_floats(t[c], precision) if t.kinds[c] == "float" else t[c] for c in t.columns}, t.kinds)


def round_floats(values, precision: int) -> list:
    """numpy.round(values, precision), keeping a finite value whose scaling overflows."""
    import numpy as np

    x = np.asarray(values, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        r = np.round(x, precision)
    return np.where(np.isinf(r) & np.isfinite(x), x, r).tolist()


def _json(frames, precision, meta) -> str:
    import json
    import math

    def clean(v):
        if isinstance(v, float) and not math.isfinite(v):
            return None
        if hasattr(v, "item"):
            return clean(v.item())
        return v

    out = {"meta": {k: clean(v) for k, v in meta.items()}}
    for name, t in frames.items():
        t = _rounded(t, precision)
        out[name] = [{c: clean(v) for c, v in zip(t.columns, row)} for row in t.rows()]
    return json.dumps(out, indent=1, ensure_ascii=False) + "\n"


def _fmt(v, precision) -> str:
    import math

    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    if isinstance(v, (bool,)) or type(v).__name__ == "bool_":
        return "yes" if v else ""
    if isinstance(v, float):
        if math.isinf(v):
            return "∞"
        return f"{v:.{precision}f}"
    return str(v)


def _rich(frames, precision, meta, width: int | None = None) -> str:
    """rich tables at their natural width, never shortened.  On a terminal (``width``) a table too
    wide is tried transposed (systems: a row per metric, a column per run) and then as records
    (a heading per row, then ``column  value`` lines): a number or a name is never cut."""
    import shutil

    if width is None and sys.stdout.isatty():
        width = shutil.get_terminal_size((160, 24)).columns
    from .legends import interval_percent
    from .values import terminal_styles

    color = width is not None and terminal_styles()  # not under NO_COLOR or TERM=dumb
    parts = []
    for name, t in frames.items():
        title = {"systems": "Systems: mean (rank) under each metric",
                 "summary": _summary_title(meta),
                 "pairs": "Pairs of runs: mean difference A − B, effect d_z, "
                          f"{interval_percent(meta.get('alpha', 0.05))} interval (1 − α), p-values",
                 "queries": "Queries"}.get(name, name)
        if name == "systems":
            wide = _systems_wide(t, precision)
            tries = [wide, _transposed(wide)]
        elif name == "summary":
            tries = [t.drop(["measure", "variant"])]  # the metric's name says both
        else:
            tries = [t]
        for x in tries:
            text = _rich_one(x, title, precision, color)
            if width is None or _width(text) <= width:
                break
        else:
            text = _records(tries[0], title, precision, width)
        parts.append(text + _legend(name, tries[0], width))
    return "".join(parts)


def _legend(name: str, shown: Table, width: int | None) -> str:
    """One line per column of the table shown (render/legends.py), under it; on a terminal wrapped to
    its ``width`` (continuation lines indented)."""
    import textwrap

    from .legends import SYSTEMS_CELL, legend_lines

    lines = [f"run: the run (its file name); {SYSTEMS_CELL}"] if name == "systems" else legend_lines(name, shown.columns)
    if width:
        lines = [w for ln in lines for w in textwrap.wrap(ln, width, subsequent_indent="  ", break_long_words=False,
                                                           break_on_hyphens=False)]
    return "".join(f"{ln}\n" for ln in lines)


def _width(text: str) -> int:
    from .table import text_width

    return text_width(text)


def _rich_one(t: Table, title, precision, color) -> str:
    import io

    from rich.console import Console
    from rich.table import Table as RichTable

    from .values import safe_text

    buf = io.StringIO()
    console = Console(file=buf, width=100_000, color_system="standard" if color else None, force_terminal=color,
                      highlight=False, emoji=False, markup=False, soft_wrap=False, legacy_windows=False)
    table = RichTable(title=title, title_justify="left", header_style="bold")
    for c in t.columns:
        table.add_column(safe_text(c), justify="right" if t.kinds[c] in NUMERIC else "left", no_wrap=True)
    for row in t.rows():
        table.add_row(*(safe_text(_fmt(v, precision)) for v in row))
    console.print(table)
    return "\n".join(line.rstrip() for line in buf.getvalue().split("\n")).rstrip("\n") + "\n"


def _records(t: Table, title, precision, width) -> str:
    """One block per row: its first cell, then ``  column  value`` per other column."""
    import textwrap

    from .values import safe_text

    lines = textwrap.wrap(title, width, break_long_words=False, break_on_hyphens=False) if width else [title]
    first, *rest = [safe_text(c) for c in t.columns]
    for row in t.rows():
        cells = [safe_text(_fmt(v, precision)) for v in row]
        lines += _fit(f"{first} {cells[0]}", first, cells[0], width, "")
        for c, v in zip(rest, cells[1:]):
            lines += _fit(f"  {c}  {v}", c, v, width, "  ")
    return "\n".join(lines) + "\n"


def _fit(line, key, value, width, indent) -> list:
    """``line``, or key and value on two lines when it is wider than ``width`` (never cut)."""
    if width is None or len(line) <= width:
        return [line]
    return [f"{indent}{key}", f"{indent}  {value}"]


def _transposed(wide: Table) -> Table:
    """compare's systems table as metric x run (rows: metrics, columns: runs; the first column's
    heading is 'metric', with primes while a run has that name)."""
    runs = wide["run"]
    metrics = [c for c in wide.columns if c != "run"]
    head = "metric"
    while head in runs:
        head += "′"
    return Table({head: metrics, **{r: [wide[m][i] for m in metrics] for i, r in enumerate(runs)}},
                 {head: "str", **{r: "str" for r in runs}})


def _summary_title(meta) -> str:
    sub = meta.get("subset", "all")
    sub = f"{sub} ({meta.get('subset_size')} queries)" if sub != "all" else f"all {meta.get('queries')} queries"
    return (f"Metrics on {meta.get('runs')} runs, {sub}: {meta.get('test')} test, {meta.get('correction')} "
            f"correction, α = {meta.get('alpha')}; τ and conflicts against the plain measure; "
            f"topics needed for Φ ≥ {meta.get('phi_target')}")


def _systems_wide(t: Table, precision) -> Table:
    """run x metric, 'mean (rank)', best run of the first metric first."""
    metrics = list(dict.fromkeys(t["metric"]))
    runs = list(dict.fromkeys(t["run"]))
    cell = {(r, m): f"{v:.{precision}f} ({k})" for r, m, v, k in zip(t["run"], t["metric"], t["mean"], t["rank"])}
    first = {r: k for r, m, k in zip(t["run"], t["metric"], t["rank"]) if m == metrics[0]}
    runs.sort(key=lambda r: (first[r], r))
    return Table({"run": runs, **{m: [cell[(r, m)] for r in runs] for m in metrics}},
                 {"run": "str", **{m: "str" for m in metrics}})
