"""The rich table of a Result (``-f table``): a row per measure, a column per variant, per run."""
from __future__ import annotations

import dataclasses
import io
import re
from dataclasses import dataclass

from ..core.holes import World
from ..core.intervals import ORDERINGS, RESAMPLES
from ..core.records import VARIANTS
from ..core.registry import Metric, parse
from ..pipeline.blocks import pool_words
from ..pipeline.ordering import natural_order
from .legends import percent
from .values import MEAN_MARK, UNDEFINED_MARK, isnan, metric_label, safe_text, zscores

__all__ = ["make_table", "format_table", "caption", "all_row_rule", "variants_legend", "LAYOUTS", "text_width",
           "rich_text"]


def layout(metrics):
    """Rows (measures, first-appearance order) and columns (None = the plain value, then the variants in
    first-appearance order: sorted is stable)."""
    rows = list(dict.fromkeys(m.measure for m in metrics))
    return rows, sorted(dict.fromkeys(m.variant for m in metrics), key=lambda v: v is not None)


HOLES = "[LB, UB]"  # the slot showing LB(M) and UB(M) beside the value: value [LB, UB]
NEAR_RANDOM = "n.s."  # after a 'vs random' interval that holds 0: not significantly different from random


class _Interval(str):
    """The column after ``variant``'s of its 'all' row's interval against a random ordering ("EM vs random",
    ``RunResult.interval``); with ``variant`` None, after the value, ``eval --ci``'s (``RunResult.ci``)."""

    def __new__(cls, variant, level: float = 0.95):
        obj = super().__new__(cls, f"{variant} vs random" if variant else f"{percent(level)} CI")
        obj.variant = variant
        return obj

    def of(self, rr) -> dict:
        """The run's intervals this slot shows."""
        return getattr(rr, "interval" if self.variant else "ci", {})


def _plain_level(result):
    """``--ci``'s level when some run has a plain measure's interval, else None."""
    level = getattr(result.options, "ci", None)
    have = level is not None and any(m.variant is None and m in getattr(rr, "ci", {})
                                     for rr in result.runs for m in result.metrics)
    return level if have else None


def interval_variant(result):
    """The normalisation whose randomisation interval the table shows: the first with one and a random
    value (EM, UL2, UEW: 0; EB: 1), else the first with one; None when no run has one."""
    have = [m.variant for m in result.metrics if m.variant and any(m in getattr(rr, "interval", {}) for rr in result.runs)]
    return next((v for v in have if VARIANTS[v].below_random is not None), have[0] if have else None)


def _with_interval(slots, result) -> list:
    """``slots`` with the leading normalisation's interval right after its column."""
    v, level, out = interval_variant(result), _plain_level(result), list(slots)
    if v is not None and v in slots:
        out.insert(out.index(v) + 1, _Interval(v))
    if level is not None and None in slots:
        out.insert(out.index(None) + 1, _Interval(None, level))
    return out


def _unjudged_share(rr, meas, i):
    """The share of ``meas``'s top k that is unjudged in run ``rr`` (query i, or the mean), if evaluated."""
    if meas.cutoff is None:
        return None
    u = Metric(parse(f"Unjudged@{int(meas.cutoff)}").measure)
    if u not in rr.mean:
        return None
    return rr.mean[u] if i is None else rr.values[u][i]


def _merge_holes(slots) -> list:
    """LB and UB as one column right after the value (wide and stacked layouts)."""
    if "LB" not in slots or "UB" not in slots:
        return slots
    out = [s for s in slots if s not in ("LB", "UB")]
    out.insert(1 if out and out[0] is None else 0, HOLES)
    return out


def _below_random(variant, v, e, interval=None, lower: bool = False) -> bool:
    """Worse than the expected value of a random ranking: UL2/EM/UEW < 0, EB < 1, or A < E (above them
    for a measure whose record says ``lower`` is better); for an 'all' row with a 95% ``interval``, only
    when the whole interval (of the 'all' row minus a random ordering's) is on that side of 0."""
    if isnan(v):
        return False
    sign = -1.0 if lower else 1.0
    if interval is not None and variant is not None:
        return sign * (interval[0] if lower else interval[1]) < -1e-12
    if variant is None:
        return e is not None and not isnan(e) and sign * (v - e) < -1e-12 * max(1.0, abs(e))
    at = VARIANTS[variant].below_random
    return at is not None and sign * (v - at) < -1e-12


def pooled_shown(metrics) -> list:
    """The variants on screen built on the random-ranking bounds (E, IUB, WLB, normalisations, DB)."""
    # summ's metrics carry the dissertation's names (UE1, UE2: aliases of UL1, UL2)
    named = {a: r for r in VARIANTS.values() for a in (r.name, *r.aliases)}
    return [v for v in dict.fromkeys(m.variant for m in metrics if m.variant)
            if v in named and named[v].kind in ("bound", "ratio", "distribution")]


def caption(result) -> str:
    """Query count, pool (in words), tie rule, score precision and undefined cases in one line; then
    what the 'all' row of a normalisation is, and the legend of what is on screen."""
    o = result.options
    counts = {len(rr.qids) for rr in result.runs}
    if len(counts) <= 1:
        q = f"{next(iter(counts), 0)} queries"
    else:
        q = "queries " + ", ".join(f"{safe_text(rr.name)} {len(rr.qids)}" for rr in result.runs)
    ties = {"score": "score desc, docid desc (trec_eval)", "rank": "rank column", "file": "file order"}[o.ties]
    und = sum(int(n) for rr in result.runs for n in rr.undefined.values())
    cases = f"{und} undefined {'case' if und == 1 else 'cases'}"
    if not und:
        how = "0 undefined cases"
    elif not any(m.variant and _undefined_count(rr, m) for rr in result.runs for m in result.metrics):  # no mean marked
        how = (f"{cases} ({UNDEFINED_MARK} per query: every ordering of the pool scores alike; --undefined "
               f"{'zero scores them 0' if o.undefined == 'zero' else 'skip leaves them out'} in a mean of "
               "per-query values)")
    elif o.undefined == "zero":
        how = (f"{cases} (scored 0 by --undefined zero: "
               f"{UNDEFINED_MARK} per query, {MEAN_MARK} marks a mean that includes them; --undefined skip "
               "leaves them out)")
    else:
        how = (f"{cases} (left out by --undefined skip: "
               f"{UNDEFINED_MARK} per query, {MEAN_MARK} marks a mean over the defined queries only)")
    parts = [q, "run queries only" if o.run_queries_only else "", f"depth {o.depth}" if o.depth else "",
             f"random = {pool_words(o)}" if pooled_shown(result.metrics) else "", f"ties {ties}",
             f"scores {o.score_precision}", how, _holes_caption(result)]
    lines = ["; ".join(filter(None, parts)), all_row_rule(result.metrics, o, q), interval_caption(result), variants_legend(result.metrics)]
    return "\n".join(line for line in lines if line)


def all_row_rule(metrics, options, queries: str = "") -> str:
    """One line: what the 'all' row of the normalisations on screen is (every variant's: the mean of its
    per-query values over ``queries``, core.records.VARIANT_AGGREGATE), and where it departs from the papers."""
    ratios = [v for v in dict.fromkeys(m.variant for m in metrics if m.variant) if VARIANTS[v].kind == "ratio"]
    if not ratios:
        return ""
    bent = [v for v in ratios if v != "EM" and VARIANTS[v].below_random == 0.0]
    over = f" over {queries}" if queries else ""
    return (f"'all' row of {', '.join(ratios)}: the mean of the per-query values{over} "
            f"({', '.join('mean ' + v for v in ratios)}), as Karmaker & Feng 2022 average UL2"
            + ("; a random ordering of the pool averages 0 on EM, query by query (EM = UL2 at and above E; below "
               "E, (A-E)/(I-E) where UL2 divides by E)" if "EM" in ratios else "")
            + (f"; not on {', '.join(bent)}, whose per-query map bends at E: a random ordering's many small losses outweigh its few "
               "large gains" if bent else "") + " (docs/bounds.md, \"Which 'all' row\")")


_SYMBOLS = {  # what each letter of a variant's formula is, and the bound column that shows it
    "A": (None, "A = the value"),
    "E": ("E", "E = the expected value of a random ranking"),
    "I": ("IUB", "I = IUB, the best ordering's value"),
    "W": ("WLB", "W = WLB, the worst ordering's value"),
}


def variants_legend(metrics) -> str:
    """One line defining what is on screen, each once: the letters the shown formulas use and the
    bound columns shown (E, IUB, WLB), then each other variant's formula, from the variant records."""
    shown = list(dict.fromkeys(m.variant for m in metrics if m.variant))
    if not shown:
        return ""
    formulas = [v for v in shown if VARIANTS[v].kind != "bound"]
    used = {c for v in formulas for c in re.findall(r"\b([AEIW])\b", VARIANTS[v].formula)}
    out = []
    # IUB is the largest value over the orderings, WLB the least: the best and the worst ordering's value,
    # the other way round for a measure whose lower values are better (its family's ``better``)
    lower = ", ".join(dict.fromkeys(str(m.measure) for m in metrics if getattr(m.measure, "lower_better", False)))
    turned = {"I": f" (the largest; the worst ordering's for {lower}, where lower is better)",
              "W": f" (the least; the best ordering's for {lower}, where lower is better)"} if lower else {}
    for letter, (column, text) in _SYMBOLS.items():
        if letter in used or (column is not None and column in shown):
            out.append((text if letter in used or column == "E" else
                        {"IUB": "IUB = the best ordering's value", "WLB": "WLB = the worst ordering's value"}[column])
                       + turned.get(letter, ""))
    # a pair of hole variants is one sentence, not one per variant (their records share it)
    joint = {"LB": ("UB", "[LB, UB]: the least and the largest M over every grade 0..G (the qrels' largest) of the "
                          "unjudged documents, judged ones fixed; R and IDCG change with the grades (--holes; the "
                          "caption says which documents)"),
             "BSLO": ("BSHI", "[BSLO, BSHI]: the 2.5th and 97.5th percentiles of M over the bootstrap samples of BS "
                              "(not a confidence interval: docs/holes.md gives its measured coverage)")}
    for v in formulas:
        pair = next((k for k, (other, _) in joint.items() if v in (k, other) and other in shown and k in shown), None)
        if pair is None:
            out.append(f"{v} = {VARIANTS[v].formula}")
        elif v == pair:
            out.append(joint[pair][1])
    return "; ".join(out)


def _holes_caption(result) -> str:
    """With LB/UB: how much the unjudged documents could move the means, and whether that matters."""
    have = set(result.metrics)
    lows = [m for m in result.metrics if m.variant == "LB"]
    widths = [(w, f"{safe_text(rr.name)} {m.measure}") for m in lows if Metric(m.measure, "UB") in have
              for rr in result.runs for w in [rr.mean[Metric(m.measure, "UB")] - rr.mean[m]] if w > 0]
    if not widths:
        return ""
    widest, where = max(widths, key=lambda pair: pair[0])
    shares = [(u, f"{safe_text(rr.name)} {m.measure}") for m in lows for rr in result.runs
              for u in [_unjudged_share(rr, m.measure, None)] if u is not None and not isnan(u)]
    share, at = max(shares, key=lambda pair: pair[0], default=(-1.0, ""))
    world = World.parse(getattr(result.options, "holes", "closed"))
    runs = len(result.runs) if getattr(result.options, "holes_pool", ()) else 1
    matters = ("holes matter: the unjudged documents could move a mean by up to "
               if widest >= 0.01 else "holes negligible: the unjudged documents move no mean by more than ")
    unj = (f"; the % after [LB, UB]: the share of the measure's top k that is unjudged (mean over queries), up "
           f"to {100 * share:.0f}% ({at})" if at else "")
    below = any(_unjudged_share(rr, m.measure, None) == 0 and rr.mean[m] < rr.mean[Metric(m.measure)] - 1e-12
                for m in lows if Metric(m.measure) in have for rr in result.runs)
    if unj and below:  # LB under the value while none of the top k is unjudged: not a contradiction, say why
        unj += ("; LB below the value where that share is 0%: unjudged documents below the cutoff (or retrieved "
                "only by another run) raise R and the ideal (IDCG) when relevant")
    return (f"{matters}{widest:.4f} ({where}); [LB, UB]: the least and largest mean {world.words(runs)} "
            f"(docs/holes.md){unj}")


class _Shown:
    """What a table shows of a result (kept beside it, never set on it): its runs, the metrics it holds
    and, by (id of the run, metric), the queries where a ratio variant or DB is undefined."""

    def __init__(self, result):
        self.runs = result.runs
        self.options = result.options
        self.have = frozenset(result.metrics)
        self.undef = {(id(rr), m): mask for rr in result.runs for m, mask in getattr(rr, "undefined_queries", {}).items()
                      if m.variant and VARIANTS[m.variant].kind in ("ratio", "distribution")}


def _undefined_count(rr, m) -> int:
    return int(rr.undefined.get(m, 0) or 0)


def _grid(result, per_query, query_order):
    """[(query, [index of the query in each run: None for the mean, -1 if the run lacks it])]."""
    pos = [{q: i for i, q in enumerate(rr.qids)} for rr in result.runs]
    groups = []
    if per_query:
        if query_order is None:
            query_order = natural_order({q for rr in result.runs for q in rr.qids})
        groups = [(q, [p.get(q, -1) for p in pos]) for q in query_order]
    groups.append(("all", [None] * len(result.runs)))
    return groups


def _cell(shown, rr, meas, slot, i, precision, color) -> tuple:
    """One value, never cut, and its style: ``undef`` for an undefined value left out (--undefined
    skip); a mean over queries of which some were undefined carries MEAN_MARK."""
    if slot == HOLES:
        return _holes_cell(shown, rr, meas, i, precision), ""
    if isinstance(slot, _Interval):
        return _interval_cell(slot.of(rr), Metric(meas, slot.variant), i, precision), ""
    m = Metric(meas, slot)
    if m not in shown.have or i == -1:
        return "", ""
    v = rr.mean[m] if i is None else rr.values[m][i]
    if isinstance(v, str):  # a text measure (relstring, runid), echoed from the input
        return safe_text(v), ""
    und = shown.undef.get((id(rr), m))
    if isnan(v) or (i is not None and und is not None and und[i]):
        return UNDEFINED_MARK if slot is not None else "nan", "dim" if color else ""
    e = Metric(meas, "E")
    ev = None if e not in shown.have else (rr.mean[e] if i is None else rr.values[e][i])
    ci = getattr(rr, "interval", {}).get(m) if i is None else None
    style = "bold red" if color and _below_random(slot, v, ev, ci, getattr(meas, "lower_better", False)) else ""
    mark = MEAN_MARK if (i is None and slot is not None and _undefined_count(rr, m)) else ""
    return f"{v:.{precision}f}{mark}", style


def _holes_cell(shown, rr, meas, i, precision) -> str:
    """``[LB, UB]`` of ``meas`` (a query's, or the 'all' row's), then the share of unjudged documents."""
    lo, hi = Metric(meas, "LB"), Metric(meas, "UB")
    if lo not in shown.have or hi not in shown.have or i == -1:
        return ""
    share = _unjudged_share(rr, meas, i)
    tail = "" if share is None or isnan(share) else f" {100 * share:.0f}%"
    return span(*((rr.mean[lo], rr.mean[hi]) if i is None else (rr.values[lo][i], rr.values[hi][i])), precision) + tail


def _interval_cell(intervals: dict, m, i, precision) -> str:
    """``[lo, hi]`` of ``m``'s 'all' row (empty in a query's row), then, for a normalisation's 'vs random'
    interval, NEAR_RANDOM when it holds 0."""
    ci = intervals.get(m)
    if i is not None or ci is None:
        return ""
    return UNDEFINED_MARK if isnan(ci[0]) or isnan(ci[1]) else span(*ci, precision, bool(m.variant))


def span(low, high, precision: int, near: bool = False) -> str:
    """``[low, high]`` to ``precision`` decimals; ``near``: NEAR_RANDOM after a 'vs random' interval holding 0."""
    return f"[{low:.{precision}f}, {high:.{precision}f}]" + (f" {NEAR_RANDOM}" if near and low <= 0 <= high else "")


def interval_caption(result) -> str:
    """What the interval columns are: the leading normalisation's randomisation interval ('vs random')
    and what one holding 0 means; ``--ci``'s confidence interval over the topics."""
    level, seed = _plain_level(result), getattr(result.options, "seed", 0)
    plain = (f"{percent(level)} CI: the mean's {percent(level)} percentile bootstrap interval over the queries "
             f"({RESAMPLES:,} resamples of the queries, --seed {seed}; Efron & Tibshirani 1993; --ci, its level "
             "1 - --alpha): the topics' sampling error") if level is not None else ""
    v = interval_variant(result)
    if v is None:
        return plain
    lower = ", ".join(dict.fromkeys(str(m.measure) for m in result.metrics if getattr(m.measure, "lower_better", False)))
    return "\n".join(filter(None, [plain, (
        f"{v} vs random: the 95% randomisation interval of the 'all' row minus a random ordering's ({ORDERINGS} random "
        f"orderings of each query's pool, the same for every run, --seed {seed}; Davison & Hinkley 1997); one that "
        f"contains 0 ({NEAR_RANDOM}): the run is not significantly different from a random ordering of the pool on "
        f"these queries; one wholly below 0: worse than random"
        + (f" (above 0 for {lower}, where lower is better)" if lower else ""))]))


def _shared_slots(shown, rows, slots, groups) -> list:
    """Bound slots (E, IUB, WLB) equal for every run in every row shown (e.g. under --pool qrels)."""
    def same(s) -> bool:
        for m in (Metric(meas, s) for meas in rows):
            for _, idx in groups if m in shown.have else ():
                vals = [rr.mean[m] if i is None else rr.values[m][i] for rr, i in zip(shown.runs, idx) if i != -1]
                if any(not (a == vals[0] or (isnan(a) and isnan(vals[0]))) for a in vals):
                    return False
        return True

    return [s for s in slots if s is not None and s in VARIANTS and VARIANTS[s].kind == "bound" and same(s)]


LAYOUTS = ("wide", "shared", "stacked", "long")


@dataclass(frozen=True, kw_only=True)
class TableView:
    """How ``-f table`` shows a result: per-query rows (in ``query_order`` or natural order), names, decimals,
    colours, the ``layout`` (:data:`LAYOUTS`) and whether one run's name is the table's title."""

    per_query: bool = False
    names: str = "canonical"
    precision: int | None = 4
    query_order: object = None
    color: bool = True
    layout: str = "wide"
    title: bool = True


def make_table(result, view: TableView | None = None, **kw):
    """The rich Table of ``view`` (or keywords naming its fields): by ``layout`` a row per measure and a
    column group per run (``wide``; ``shared``: bounds equal for every run in one column first), a row per
    run and measure (``stacked``) or per run, measure and variant (``long``); worse than random in bold red."""
    from rich import box
    from rich.table import Table

    view = view or TableView(**kw)
    multi = len(result.runs) > 1
    name = None if multi or not result.runs or not view.title else safe_text(result.runs[0].name)
    table = Table(box=box.SIMPLE_HEAD, title=name if view.layout in ("wide", "shared") else None,
                  title_justify="left", pad_edge=False, show_edge=False)
    grid = _TableGrid(result, view, table)
    if view.per_query:
        grid.col("query", False)
    _FILL[view.layout](grid)
    return table


class _TableGrid:
    """What the layouts fill a rich Table from: the measures (rows) and variant slots, the values
    shown, the queries' grid (each query's index in every run), the measures' labels."""

    def __init__(self, result, view: TableView, table):
        from rich.text import Text

        self.text = Text
        self.result, self.view, self.table = result, view, table
        self.precision = 4 if view.precision is None else view.precision
        self.rows, slots = layout(result.metrics)
        self.shown = _Shown(result)
        self.multi = len(result.runs) > 1
        self.groups = _grid(result, view.per_query, view.query_order)
        self.label = {meas: Text(safe_text(metric_label(Metric(meas), view.names, zscores(result))))
                      for meas in self.rows}
        if view.layout in ("wide", "shared", "stacked"):
            slots = _merge_holes(slots)
        self.slots = _with_interval(slots, result)

    def col(self, head, right=True) -> None:
        self.table.add_column(head, justify="right" if right else "left", no_wrap=True, overflow="fold")

    def cell(self, rr, meas, slot, i):
        return self.text(*_cell(self.shown, rr, meas, slot, i, self.precision, self.view.color))

    def pairs(self, rr, meas, i) -> list:
        """The long layout's ``(variant, text, style)`` of ``meas``, one per slot with a value to show: a
        value there, or (the interval slot) an 'all' row with an interval."""
        return [(s or "value", *_cell(self.shown, rr, meas, s, i, self.precision, self.view.color)) for s in self.slots
                if (i is None and Metric(meas, s.variant) in s.of(rr) if isinstance(s, _Interval)
                    else Metric(meas, s) in self.shown.have)]

    def query_cell(self, q, first: bool) -> list:
        """The query column's cell (with -q): the query on its first row, else empty."""
        return [self.text(safe_text(q) if first else "")] if self.view.per_query else []


def _fill_wide(g: _TableGrid) -> None:
    """wide and shared: a row per measure, a column group per run (shared: bounds equal for all runs first)."""
    result, multi = g.result, g.multi
    shared = _shared_slots(g.shown, g.rows, g.slots, g.groups) if g.view.layout == "shared" and multi else []
    own = [s for s in g.slots if s not in shared]
    g.col("measure", False)
    for s in shared:
        g.col(f"{'all runs' if s == shared[0] else ''}\n{s}" if multi else s)
    for rr in result.runs:
        for j, s in enumerate(own):
            head = s or "value"
            g.col(f"{safe_text(rr.name) if j == 0 else ''}\n{head}" if multi else head)
    for q, idx in g.groups:
        for r, meas in enumerate(g.rows):
            row = g.query_cell(q, r == 0) + [g.label[meas]]
            k = next((j for j, i in enumerate(idx) if i != -1), 0)  # a run that has the query
            row += [g.cell(result.runs[k], meas, s, idx[k]) for s in shared]
            for rr, i in zip(result.runs, idx):
                row += [g.cell(rr, meas, s, i) for s in own]
            g.table.add_row(*row, end_section=g.view.per_query and r == len(g.rows) - 1)


def _fill_runs(g: _TableGrid) -> None:
    """stacked: a row per (run, measure); long: a row per (run, measure, variant), four narrow columns."""
    long = g.view.layout == "long"
    for head in ("run", "measure", "variant") if long else ("run", "measure"):
        g.col(head, False)
    for s in [None] if long else g.slots:
        g.col(s or "value")
    for q, idx in g.groups:
        n = 0
        for rr, i in zip(g.result.runs, idx):
            for r, meas in enumerate(g.rows):
                cells = ([[g.text(v), g.text(*cell)] for v, *cell in g.pairs(rr, meas, i)] if long
                         else [[g.cell(rr, meas, s, i) for s in g.slots]])
                for row in cells:
                    g.table.add_row(*g.query_cell(q, n == 0), g.text(safe_text(rr.name) if long or r == 0 else ""),
                                    g.label[meas], *row,
                                    end_section=not long and r == len(g.rows) - 1 and (g.view.per_query or g.multi))
                    n += 1
            if long and g.table.rows:
                g.table.rows[-1].end_section = True


_FILL = {"wide": _fill_wide, "shared": _fill_wide, "stacked": _fill_runs, "long": _fill_runs}


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def rich_text(renderable, color: bool) -> str:
    """``renderable`` printed by rich at its natural width (never wrapped or cut), lines right-stripped."""
    from rich.console import Console

    buf = io.StringIO()
    console = Console(file=buf, width=100_000, force_terminal=color, color_system="standard" if color else None,
                      highlight=False, emoji=False, markup=False, soft_wrap=False, legacy_windows=False)
    console.print(renderable)
    return "\n".join(line.rstrip() for line in buf.getvalue().split("\n"))


def text_width(text: str) -> int:
    """Widest line of ``text`` in terminal cells (ANSI styles ignored)."""
    from rich.cells import cell_len

    return max((cell_len(_ANSI.sub("", line)) for line in text.split("\n")), default=0)


def _plain_rows(result, view: TableView, width) -> str:
    """The last resort when no table fits: per run (and query) a line per measure, ``  measure  value 0.3037
    E 0.5695 ...``, wrapped between ``variant value`` pairs onto lines indented by six spaces."""
    g = _TableGrid(result, dataclasses.replace(view, layout="long", color=False), None)  # the long layout's cells
    lines = []
    for q, idx in g.groups:
        if view.per_query:
            lines.append(f"{safe_text(q)}:")
        for rr, i in zip(result.runs, idx):
            if i == -1:
                continue
            lines.append(safe_text(rr.name))
            for meas in g.rows:
                pairs = [p for v, text, _ in g.pairs(rr, meas, i)  # NEAR_RANDOM a field of its own, wrapped apart
                         for p in re.split(f" (?={re.escape(NEAR_RANDOM)})", f"{v} {text}")]
                lines.extend(_wrap_fields(["  " + g.label[meas].plain, *pairs], width))
    return "\n".join(lines)


def _wrap_fields(fields, width) -> list:
    out, cur = [], ""
    for f in fields:
        if cur.strip() and len(cur) + 2 + len(f) > width:
            out.append(cur)
            cur = "      " + f
        else:
            cur = f"{cur}  {f}" if cur else f
    out.append(cur)
    return out


def format_table(result, width: int | None = None, **kw) -> str:
    """The table as text (ANSI styles only with ``color``), then the caption; keywords naming
    :class:`TableView` fields set it.  Nothing is ever shortened: within ``width`` (a terminal's) the first
    of :data:`LAYOUTS` that fits, else plain rows; without it, the wide table at its natural width."""
    import textwrap

    fields = {f.name for f in dataclasses.fields(TableView)}
    view = TableView(**{"color": False, **{k: v for k, v in kw.items() if k in fields}, "title": False})
    color = view.color
    text = None
    for layout in LAYOUTS if width else ("wide",):
        if layout in ("shared", "stacked") and len(result.runs) < 2:
            continue  # one run: sharing or stacking changes nothing
        cand = rich_text(make_table(result, dataclasses.replace(view, layout=layout)), color)
        if len(result.runs) == 1 and layout != "long":
            cand = f"{safe_text(result.runs[0].name)}\n{cand}"
        text = cand
        if not width or text_width(cand) <= width:
            break
    else:
        text = _plain_rows(result, view, width)
    first, *rest = caption(result).split("\n")
    if color:
        first += "; bold red: worse than a random ranking"
    lines = [first] + rest
    if width:
        lines = [w for line in lines for w in textwrap.wrap(line, width, break_long_words=False, break_on_hyphens=False)]
    note = "\n".join(lines)
    if color:
        note = f"\x1b[2m{note}\x1b[0m"
    return f"{text.rstrip()}\n\n{note}\n"
