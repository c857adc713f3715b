"""How `ulnorm-eval summ` shows its results: the scores table (a row per system and measure, a
column per variant, with a line per column shown) and the correlations with human ratings in every
format, with their picture (--correlate --plot)."""
from __future__ import annotations

import json

from ..analysis.human_correlation import COLUMNS
from .table import layout
from .values import isnan, num_text, safe_text  # names echoed to a terminal: no ESC, no forged lines

__all__ = ["SUMM_LEGEND", "summ_table", "correlation_text", "correlation_table"]

# One line per column of summ's table that is not a measure (the variants' formulas, for summaries).
SUMM_LEGEND = {
    "value": "the measure (a document's; on 'all' rows and without -q the mean over the documents)",
    "E": "the measure of the document's expected (random) summary from its source (Feng 2023 §9.1; --length, --k)",
    "SE": "the Monte Carlo standard error of E, when E is estimated by sampling",
    "IUB": "I, the upper bound the measure can reach on the document (--upper)",
    "UE1": "(A/I) (A/(A+E)), A the value, I = IUB (Feng 2023 eq. 5.1)",
    "UE2": "(A-E)/(I-E) if A >= E else (A-E)/E: 0 random, 1 ideal (Feng 2023 eq. 5.2)",
    "EB": "A/E (Westerborg 2022 eq. 3.6)",
    "EM": "(A-E)/(I-E) (Westerborg 2022 eq. 3.11)",
    "Hetero": "Algorithm 2's heterogeneity of the document (Feng 2023)",
}


def summ_table(result, per_query: bool, precision) -> str:
    """One table: a row per system and measure (and document with -q), a column per variant; the
    documents, missing summaries and undefined cases once under it, then a line per column shown."""
    p = 4 if precision is None else precision
    rows, slots = layout(result.metrics)
    head = ["system"] + (["document"] if per_query else []) + ["measure"] + [s or "value" for s in slots]
    body = [row for rr in result.runs for row in _system_rows(result, rr, rows, slots, per_query, p)]
    return "\n".join(_aligned(head, body, 3 if per_query else 2) + _footer(result, slots)) + "\n"


def _aligned(head: list, body: list, left: int) -> list:
    """``head``, a rule under it and ``body`` in columns two spaces apart: the first ``left`` columns
    left-aligned (names), the others right-aligned (numbers)."""
    widths = [max(len(r[c]) for r in [head] + body) for c in range(len(head))]

    def line(r):
        return "  ".join(x.ljust(w) if c < left else x.rjust(w) for c, (x, w) in enumerate(zip(r, widths))).rstrip()

    return [line(head), "-" * len(line(head))] + [line(r) for r in body]


def _footer(result, slots: list) -> list:
    """The documents, missing summaries, undefined cases and 'all' rows, then a line per column shown."""
    docs = max((len(rr.qids) for rr in result.runs), default=0)
    missing = [f"{safe_text(rr.name)} {rr.missing}" for rr in result.runs if rr.missing]
    und = sum(int(n) for rr in result.runs for n in rr.undefined.values())
    out = [f"{len(result.runs)} systems, {docs} documents; without a summary: "
           f"{', '.join(missing) if missing else 'none'}; {und} undefined cases; 'all' rows: the mean over the "
           "documents, of every measure and variant"]
    return out + [f"{s or 'value'}: {SUMM_LEGEND[s or 'value']}" for s in slots if (s or "value") in SUMM_LEGEND]


def _system_rows(result, rr, rows: list, slots: list, per_query: bool, p: int) -> list:
    """A system's rows: per document (with -q), then 'all'; a row per measure, a cell per variant slot."""
    have = {(m.measure, m.variant): m for m in result.metrics}
    groups = ([(q, i) for i, q in enumerate(rr.qids)] if per_query else []) + [("all", None)]
    body = []
    for q, i in groups:
        for meas in rows:
            cells = []
            for s in slots:
                m = have.get((meas, s))
                v = None if m is None else (rr.mean[m] if i is None else rr.values[m][i])
                cells.append("" if isnan(v) else num_text(v, p))
            body.append([safe_text(rr.name)] + ([safe_text(q)] if per_query else []) + [str(meas)] + cells)
    return body


def correlation_text(corr, fmt: str | None, precision: int | None, plot: str | None) -> tuple:
    """(text, picture or None): the rows of ``corr`` (analysis.human_correlation.Correlations) in
    ``fmt``, and their picture when ``plot`` names one."""
    if fmt in ("tsv", "csv"):
        sep = "\t" if fmt == "tsv" else ","
        lines = [sep.join(COLUMNS)]
        lines += [sep.join(str(x) if isinstance(x, int) else num_text(x, precision) for x in r) for r in corr.rows]
        text = "\n".join(lines) + "\n"
    elif fmt in ("json", "jsonl"):
        text = _correlation_json(corr.rows, fmt)
    else:
        text = correlation_table(corr, 3 if precision is None else precision)
    return text, _plot(corr.rows, plot) if plot else None


def _correlation_json(full: list, fmt: str) -> str:
    import numpy as np

    objs = [{k.lower(): (None if isinstance(v, float) and not np.isfinite(v) else v)
             for k, v in zip(COLUMNS, (*r[:4], float(r[4]), float(r[5]), r[6], *map(float, r[7:])))} for r in full]
    return (json.dumps(objs, indent=1) + "\n") if fmt == "json" else "".join(json.dumps(o) + "\n" for o in objs)


def correlation_table(corr, p: int) -> str:
    """The terminal table of the correlations: a block per level and method, a row per metric (then
    its PAI), a column per rating dimension."""
    rows, reps, repeats = corr.rows, corr.reps, corr.repeats
    dims = list(dict.fromkeys(r[3] for r in rows))
    out = []
    note = []
    if reps:
        note.append(f"[95% interval over {reps} bootstrap resamples of the documents]")
    if repeats:
        note.append(f"{{min, max over {repeats + 1} Monte Carlo seeds}}")
    for level in dict.fromkeys(r[0] for r in rows):
        for method in dict.fromkeys(r[1] for r in rows):
            sub = [r for r in rows if r[0] == level and r[1] == method]
            out.append(f"{method} at {level} level, {corr.ratings} ratings, {corr.documents} documents, "
                       f"{corr.systems} systems"
                       + (" " + "; ".join(note) if note else ""))
            out += _correlation_block(sub, dims, p) + [""]
    return "\n".join(out)


def _correlation_block(sub: list, dims: list, p: int) -> list:
    """One level and method: the header, a row per metric, then a PAI row per metric that has one."""
    import numpy as np

    def iv(lo, hi, digits):
        return f" [{lo:.{digits}f}, {hi:.{digits}f}]" if np.isfinite(lo) and np.isfinite(hi) else ""

    def seeds(r):
        return f" {{{r[11]:.{p}f}, {r[12]:.{p}f}}}" if np.isfinite(r[11]) else ""

    head = ["metric"] + [d.capitalize() for d in dims]
    names = list(dict.fromkeys(r[2] for r in sub))
    cell = {(r[2], r[3]): r for r in sub}
    body = [[name] + [f"{cell[(name, d)][4]:.{p}f}" + iv(*cell[(name, d)][7:9], p) + seeds(cell[(name, d)])
                      for d in dims] for name in names]
    body += [[f"PAI {name}"] + [f"{cell[(name, d)][5]:.1f}" + iv(*cell[(name, d)][9:11], 1) for d in dims]
             for name in names if any(np.isfinite(cell[(name, d)][5]) for d in dims)]
    return _aligned(head, body, 1)


def _plot(rows, path):
    """Kendall's tau of each metric per rating dimension, a panel per level."""
    from .plots import require_matplotlib, save_figure

    plt = require_matplotlib()
    sub = [r for r in rows if r[1] == "kendall"]
    levels = list(dict.fromkeys(r[0] for r in sub))
    fig, axes = plt.subplots(1, len(levels), figsize=(6 * len(levels), 4), squeeze=False)
    for ax, level in zip(axes[0], levels):
        rr = [r for r in sub if r[0] == level]
        names = list(dict.fromkeys(r[2] for r in rr))
        dims = list(dict.fromkeys(r[3] for r in rr))
        w = 0.8 / max(len(names), 1)
        for i, n in enumerate(names):
            ax.bar([j + i * w for j in range(len(dims))], [next(r[4] for r in rr if r[2] == n and r[3] == d)
                                                          for d in dims], w, label=n)
        ax.set_xticks([j + 0.4 - w / 2 for j in range(len(dims))], dims)
        ax.set_title(f"Kendall tau, {level} level")
        ax.axhline(0, color="black", lw=0.5)
    axes[0][-1].legend(fontsize=6)
    fig.tight_layout()
    return save_figure(fig, path)
