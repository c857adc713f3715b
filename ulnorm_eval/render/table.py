"""The rich table of a Result (``-f table``): a row per measure, a column per variant, per run."""
from __future__ import annotations

import io

from .values import isnan, metric_label, num_text

__all__ = ["make_table", "format_table", "caption"]


def _layout(metrics):
    """Rows (measures, first-appearance order) and columns (None = the plain value, then variants)."""
    rows = list(dict.fromkeys(m.measure for m in metrics))
    slots = list(dict.fromkeys(m.variant for m in metrics))
    if None in slots:
        slots.remove(None)
        slots.insert(0, None)
    return rows, slots


def _below_random(variant, v, e) -> bool:
    """Worse than the expected value of a random ranking: UL2/EM/UEW < 0, EB < 1, or A < E."""
    if isnan(v):
        return False
    if variant is None:
        return e is not None and not isnan(e) and v < e - 1e-12 * max(1.0, abs(e))
    from ..core.records import VARIANTS

    at = VARIANTS[variant].below_random
    return at is not None and v < at - 1e-12


def caption(result) -> str:
    """Query count, pool, tie rule, score precision and undefined cases, in one line."""
    o = result.options
    counts = {len(rr.qids) for rr in result.runs}
    if len(counts) <= 1:
        q = f"{next(iter(counts), 0)} queries"
    else:
        q = "queries " + ", ".join(f"{rr.name} {len(rr.qids)}" for rr in result.runs)
    ties = {"score": "score desc, docid desc (trec_eval)", "rank": "rank column", "file": "file order"}[o.ties]
    und = sum(int(n) for rr in result.runs for n in rr.undefined.values())
    how = "scored 0" if o.undefined == "zero" else "left out"
    parts = [q, f"pool {o.pool}", f"ties {ties}", f"scores {o.score_precision}",
             f"{und} undefined {'case' if und == 1 else 'cases'} ({how})"]
    if o.depth:
        parts.insert(1, f"depth {o.depth}")
    if o.run_queries_only:
        parts.insert(1, "run queries only")
    return "; ".join(parts)


def make_table(result, per_query: bool = False, names: str = "canonical", precision: int | None = 4,
               query_order=None, color: bool = True):
    """The rich Table: a row per measure, columns value, E, IUB, UL1, UL2, ... (as requested), one column
    group per run; with ``per_query`` rows are grouped by query (``query_order`` or natural order) and
    the means follow as query ``all``.  Cells worse than a random ranking are bold red."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    from ..core.registry import Metric

    precision = 4 if precision is None else precision
    rows, slots = _layout(result.metrics)
    have = set(result.metrics)
    multi = len(result.runs) > 1
    table = Table(box=box.SIMPLE_HEAD, title=None if multi or not result.runs else result.runs[0].name,
                  title_justify="left", pad_edge=False, show_edge=False)
    if per_query:
        table.add_column("query", no_wrap=True)
    table.add_column("measure", no_wrap=True)
    for rr in result.runs:
        for j, s in enumerate(slots):
            head = s or "value"
            if multi:
                head = f"{rr.name if j == 0 else ''}\n{head}"
            table.add_column(head, justify="right", no_wrap=True)

    def cells(rr, meas, i):
        """Cells of one run for one measure; i = None for the mean, -1 for a query the run lacks."""
        e = Metric(meas, "E") if Metric(meas, "E") in have else None
        out = []
        for s in slots:
            m = Metric(meas, s)
            if m not in have or i == -1:
                out.append(Text(""))
                continue
            v = rr.mean[m] if i is None else rr.values[m][i]
            ev = None if e is None else (rr.mean[e] if i is None else rr.values[e][i])
            style = "bold red" if color and _below_random(s, v, ev) else ""
            out.append(Text(num_text(v, precision, ""), style=style))  # text measures (relstring) as they are
        return out

    pos = [{q: i for i, q in enumerate(rr.qids)} for rr in result.runs]
    groups = []
    if per_query:
        if query_order is None:
            from ..pipeline.ordering import natural_order
            query_order = natural_order({q for rr in result.runs for q in rr.qids})
        groups = [(q, [p.get(q, -1) for p in pos]) for q in query_order]
    groups.append(("all", [None] * len(result.runs)))
    for q, idx in groups:
        for r, meas in enumerate(rows):
            row = ([Text(q if r == 0 else "")] if per_query else []) + [Text(metric_label(Metric(meas), names))]
            for rr, i in zip(result.runs, idx):
                row += cells(rr, meas, i)
            table.add_row(*row, end_section=per_query and r == len(rows) - 1)
    return table


def format_table(result, per_query: bool = False, names: str = "canonical", precision: int | None = 4,
                 query_order=None, color: bool = False, width: int | None = None, **_) -> str:
    """The rich table as text (ANSI styles only with ``color``) followed by the caption line.

    ``width``: the terminal's width (the table shrinks to fit); None renders at the table's natural
    width so nothing is wrapped in a file or a pipe.
    """
    from rich.console import Console

    table = make_table(result, per_query, names, precision, query_order, color)
    buf = io.StringIO()
    console = Console(file=buf, width=width or 100_000, force_terminal=color, color_system="standard" if color else None,
                      highlight=False, emoji=False, markup=False, soft_wrap=False, legacy_windows=False)
    console.print(table)
    console.print()
    note = caption(result)
    if color:
        note += "; bold red: worse than a random ranking"
    console.print(note, style="dim", soft_wrap=width is None)
    return "\n".join(line.rstrip() for line in buf.getvalue().split("\n"))
