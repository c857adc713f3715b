"""Formatters of named tables (compare's, queries', swaps', repro's), one per format in FRAME_FORMATS, each
returning the whole text.  Tables are :class:`~ulnorm_eval.analysis.columns.Table` objects (DataFrames
are converted), written without pandas as pandas' ``to_csv`` would write them."""
from __future__ import annotations

import csv
import io
import json
import math
import shutil
import sys
import textwrap

from ..analysis.columns import NUMERIC, Table
from .legends import SYSTEMS_CELL, correction_words, interval_percent, legend_lines
from .values import csv_cell, isnan, json_cell, num_text, safe_text, terminal_styles

__all__ = ["render", "FRAME_FORMATS", "format_frames_delimited", "format_frames_json", "format_frames_table"]


def _tables(frames: dict) -> dict:
    return {name: table if isinstance(table, Table) else Table.from_frame(table) for name, table in frames.items()}


def render(frames: dict, fmt: str, precision=None, meta=None) -> str:
    """Text of named tables (Tables or DataFrames) in format ``fmt`` (a key of FRAME_FORMATS)."""
    return FRAME_FORMATS[fmt](_tables(frames), precision, meta or {})


def format_frames_delimited(frames: dict, precision, meta, sep: str = "\t") -> str:
    """tsv (or csv with ``sep=','``): each table with its own header and columns; several are separated by
    a blank line, in the order asked (``awk -v RS= 'NR == 2'`` takes the second; docs/comparing.md).
    Text cells are escaped (:func:`.values.safe_text`) and, in csv, formulas neutralised
    (:func:`.values.csv_cell`); numbers as :func:`.values.num_text` writes them (NaN as ``nan``)."""
    cell = csv_cell if sep == "," else safe_text  # csv: no spreadsheet formulas; both: no forged lines
    blocks = []
    for table in _tables(frames).values():
        buf = io.StringIO()
        writer = csv.writer(buf, delimiter=sep, lineterminator="\n")
        writer.writerow([cell(str(column)) for column in table.columns])
        # column by column (11,175 pairs x 28 columns are 0.3 M cells for compare on 150 runs: a dict per row
        # costs more than the cells), then the rows the columns make
        writer.writerows(zip(*(_csv_column(table[column], table.kinds[column], cell, precision)
                               for column in table.columns)))
        blocks.append(buf.getvalue())
    return "\n".join(blocks)


def _csv_column(values: list, kind: str, cell, precision) -> list:
    """:func:`_csv_text` of every value of a column of ``kind``: a float as :func:`.values.num_text`
    (``precision`` decimals, or its repr), any other number as str; a text column (str, object: pandas
    escaped text in these) through ``cell``."""
    if kind == "float":
        return [num_text(value, precision) if type(value) is float else _csv_text(value, False, cell, precision)
                for value in values]
    if kind in ("int", "bool"):
        return [str(value) if type(value) in (int, bool) else _csv_text(value, False, cell, precision) for value in values]
    if kind == "str":  # text or None: a few distinct values (metrics, run names) repeated over the pairs
        made = {value: _csv_text(value, True, cell, precision) for value in set(values)}
        return [made[value] for value in values]
    return [_csv_text(value, kind == "object", cell, precision) for value in values]


def _csv_text(value, is_text: bool, cell, precision) -> str:
    """A cell as pandas' to_csv writes it with na_rep='nan' (a float as :func:`.values.num_text`)."""
    if value is None:
        return "nan"
    if is_text:
        return cell(value) if isinstance(value, str) else str(value)
    return num_text(value, precision) if isinstance(value, float) else str(value)


def format_frames_json(frames: dict, precision, meta) -> str:
    """{"meta": ..., name: [records]}; NaN and infinities as null, floats rounded as
    :func:`.values.json_cell` rounds them."""
    out = {"meta": {key: json_cell(value) for key, value in meta.items()}}
    for name, table in _tables(frames).items():
        out[name] = [{column: json_cell(value, precision) for column, value in zip(table.columns, row)}
                     for row in table.rows()]
    return json.dumps(out, indent=1, ensure_ascii=False) + "\n"


def _fmt(value, precision) -> str:
    if isnan(value):
        return "–"
    if isinstance(value, (bool,)) or type(value).__name__ == "bool_":
        return "yes" if value else ""
    if isinstance(value, float):
        if math.isinf(value):
            return "∞"
        return f"{value:.{precision}f}"
    return str(value)


def format_frames_table(frames: dict, precision, meta, width: int | None = None) -> str:
    """rich tables, one per frame (compare's systems table pivoted to run x metric), at their natural
    width.  On a terminal (``width``: by default when stdout is one) a table too wide is tried transposed
    (systems: a row per metric, a column per run) and then as records (a heading per row, then ``column
    value`` lines): a number or a name is never cut."""
    frames, precision = _tables(frames), 4 if precision is None else precision
    if width is None and sys.stdout.isatty():
        width = shutil.get_terminal_size((160, 24)).columns
    from .table import text_width

    color = width is not None and terminal_styles()  # not under NO_COLOR or TERM=dumb
    parts = []
    for name, table in frames.items():
        title = {"systems": "Systems: mean (rank) under each metric",
                 "summary": _summary_title(meta),
                 "pairs": "Pairs of runs: mean difference A − B, effect d_z, "
                          f"{interval_percent(meta.get('alpha', 0.05))} interval (1 − α), p-values",
                 "queries": "Queries",
                 "measures": "Reproduction per measure: the runs' means, RMSE over the topics; with a baseline pair "
                             "ER and ΔRI (Breuer et al. 2020)",
                 "rankings": f"Reproduction per pair: KTU, RBO (p = {meta.get('rbo_p')}, top {meta.get('depth')})"
                 }.get(name, name)
        if name == "systems":
            wide = _systems_wide(table, precision)
            tries = [wide, _transposed(wide)]
        elif name == "summary":
            tries = [table.drop(["measure", "variant"])]  # the metric's name says both
        else:
            tries = [table]
        for attempt in tries:
            text = _rich_one(attempt, title, precision, color)
            if width is None or text_width(text) <= width:
                break
        else:
            text = _records(tries[0], title, precision, width)
        parts.append(text + _legend(name, tries[0], width))
    return "".join(parts)


def _legend(name: str, shown: Table, width: int | None) -> str:
    """One line per column of the table shown (render/legends.py), under it; on a terminal wrapped to
    its ``width`` (continuation lines indented)."""
    lines = [f"run: the run (its file name); {SYSTEMS_CELL}"] if name == "systems" else legend_lines(name, shown.columns)
    if width:
        lines = [wrapped for line in lines for wrapped in textwrap.wrap(line, width,
                                                                        subsequent_indent="  ", break_long_words=False,
                                                           break_on_hyphens=False)]
    return "".join(f"{line}\n" for line in lines)


def _rich_one(source: Table, title, precision, color) -> str:
    from rich.table import Table as RichTable

    from .table import rich_text

    table = RichTable(title=title, title_justify="left", header_style="bold")
    for column in source.columns:
        table.add_column(safe_text(column),
                         justify="right" if source.kinds[column] in NUMERIC else "left", no_wrap=True)
    for row in source.rows():
        table.add_row(*(safe_text(_fmt(value, precision)) for value in row))
    return rich_text(table, color).rstrip("\n") + "\n"


def _records(table: Table, title, precision, width) -> str:
    """One block per row: its first cell, then ``  column  value`` per other column."""
    lines = textwrap.wrap(title, width, break_long_words=False, break_on_hyphens=False) if width else [title]
    first, *rest = [safe_text(column) for column in table.columns]
    for row in table.rows():
        cells = [safe_text(_fmt(value, precision)) for value in row]
        lines += _fit(f"{first} {cells[0]}", first, cells[0], width, "")
        for column, value in zip(rest, cells[1:]):
            lines += _fit(f"  {column}  {value}", column, value, width, "  ")
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
    metrics = [column for column in wide.columns if column != "run"]
    head = "metric"
    while head in runs:
        head += "′"
    return Table({head: metrics, **{run: [wide[metric][index] for metric in metrics] for index, run in enumerate(runs)}},
                 {head: "str", **{run: "str" for run in runs}})


def _summary_title(meta) -> str:
    sub = meta.get("subset", "all")
    sub = f"{sub} ({meta.get('subset_size')} queries)" if sub != "all" else f"all {meta.get('queries')} queries"
    return (f"Metrics on {meta.get('runs')} runs, {sub}: {meta.get('test')} test, {correction_words(meta.get('correction'))}"
            f", α = {meta.get('alpha')}; τ and conflicts against the plain measure; "
            f"topics needed for Φ ≥ {meta.get('phi_target')}")


def _systems_wide(table: Table, precision) -> Table:
    """run x metric, 'mean (rank)', best run of the first metric first."""
    metrics = list(dict.fromkeys(table["metric"]))
    runs = list(dict.fromkeys(table["run"]))
    cell = {(row, metric): f"{mean:.{precision}f} ({count})" for row, metric, mean, count in zip(table["run"], table["metric"], table["mean"], table["rank"])}
    first = {row: count for row, metric, count in zip(table["run"], table["metric"], table["rank"]) if metric == metrics[0]}
    runs.sort(key=lambda row: (first[row], row))
    return Table({"run": runs, **{metric: [cell[(row, metric)] for row in runs] for metric in metrics}},
                 {"run": "str", **{metric: "str" for metric in metrics}})


def _paper(name: str, frames, precision, meta) -> str:
    from . import paper

    return getattr(paper, name)(_tables(frames), precision, meta)


FRAME_FORMATS = {
    "table": format_frames_table, "tsv": format_frames_delimited,
    "csv": lambda frames, precision, meta: format_frames_delimited(frames, precision, meta, ","),
    "json": format_frames_json,
    # tables for papers (compare only): systems x metrics with significance marks (render/paper.py, imported
    # only for them)
    "latex": lambda frames, precision, meta: _paper("format_latex", frames, precision, meta),
    "markdown": lambda frames, precision, meta: _paper("format_markdown", frames, precision, meta),
}
