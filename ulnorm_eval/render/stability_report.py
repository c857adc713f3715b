"""How `ulnorm-eval stability` shows its study (docs/stability.md): the functions table and the tau,
ASL and paired tables in table, tsv, csv or json, and the discount, Φ and ASL curves (--plot)."""
from __future__ import annotations

import csv
import io
import json
import math
import statistics
import sys

from .files import Output
from .values import json_cell, num_text, terminal_styles

__all__ = ["render_tables", "plot_stability", "stability_outputs"]

# the functions table's column titles
_HEADERS = {"phi": "Φ", "erho2": "Eρ²", "phi fit-half": "Φ fit-half", "phi held-out": "Φ held-out",
            "phi held-out - log": "Φ held-out − log"}


def render_tables(tabs: dict, fmt: str, precision=None, meta=None) -> str:
    """The chosen tables: json {meta, rows, tau, asl, paired}; tsv/csv each after a '# name' line when there are
    several; table: the functions table, τ as a matrix per measure, the ASL summary."""
    meta = meta or {}
    if fmt == "json":
        doc = {"meta": meta, **{"rows" if name == "functions" else name: [
            {key: json_cell(value, precision) for key, value in row.items()} for row in tabs[name]]
            for name in ("functions", "tau", "asl", "paired") if name in tabs}}
        return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"
    if fmt in ("tsv", "csv"):
        return "\n".join((f"# {name}\n" if len(tabs) > 1 else "") + _delimited(rows, fmt, precision)
                         for name, rows in tabs.items())
    precision = 4 if precision is None else precision
    text = {"functions": lambda rows: _table(rows, precision, meta), "tau": lambda rows: _tau_text(rows, precision),
            "asl": lambda rows: _asl_text(rows, meta), "paired": lambda rows: _paired_text(rows, meta)}
    return "\n".join(made(tabs[name]) for name, made in text.items() if name in tabs)


def _paired_text(rows, meta) -> str:
    out = [f"Topics needed by a over those needed by b, paired over {meta.get('topic_bootstrap')} topic "
           "resamples: the ratio on the topics evaluated and its 95% interval; 'more' or 'fewer' only when the "
           "interval excludes 1 (optima are not re-fitted on a resample: see --holdout)"]
    out += [f"  {row['claim']}" for row in rows]
    return "\n".join(out) + "\n"


def _tau_text(rows, precision: int) -> str:
    out = []
    for name in dict.fromkeys(row["measure"] for row in rows):
        mine = [row for row in rows if row["measure"] == name]
        labels = list(dict.fromkeys(row["function_a"] for row in mine))
        tau = {(row["function_a"], row["function_b"]): row["tau"] for row in mine}
        width = max(len(label) for label in labels) + 2
        out.append(f"Kendall's τ between the system rankings, {name} (Kanoulas & Aslam 2009 Table 4)")
        out.append(" " * width + "".join(f"{label:>{width}}" for label in labels))
        for label_a in labels:
            out.append(f"{label_a:<{width}}" + "".join(f"{tau[label_a, label_b]:>{width}.{precision}f}" for label_b in labels))
        out.append("")
    return "\n".join(out)


def _asl_text(rows, meta) -> str:
    out = [f"Sakai's bootstrap ASL of every pair of runs ({meta.get('asl_reps', 1000)} resamples; Kanoulas & "
           "Aslam 2009 Figure 9): pairs with ASL < 0.05 and < 0.01, median ASL"]
    for name in dict.fromkeys(row["measure"] for row in rows):
        for function in dict.fromkeys(row["function"] for row in rows if row["measure"] == name):
            asl_values = [row["asl"] for row in rows if row["measure"] == name and row["function"] == function]
            out.append(f"  {name:<24} {function:<16} {sum(asl < 0.05 for asl in asl_values):>4} "
                       f"{sum(asl < 0.01 for asl in asl_values):>4} of {len(asl_values)}   "
                       f"median {statistics.median(asl_values):.4f}")
    return "\n".join(out) + "\n"


def _delimited(rows, fmt: str, precision) -> str:
    """tsv/csv: one row per function, vectors as JSON lists, floats as :func:`.values.num_text`."""
    def cell(value):
        if isinstance(value, list):
            return json.dumps(value)
        if isinstance(value, float):
            return num_text(value, precision)
        return "" if value is None else str(value)

    buf = io.StringIO()
    writer = csv.writer(buf, delimiter="\t" if fmt == "tsv" else ",", lineterminator="\n")
    cols = list(dict.fromkeys(column for row in rows for column in row))
    writer.writerows([cols] + [[cell(row.get(column)) for column in cols] for row in rows])
    return buf.getvalue()


def _table(rows, precision, meta) -> str:
    """The functions table at its natural width (as compare's: a number is never cut or wrapped), then the
    optimised functions' strings."""
    from rich.table import Table

    from .table import rich_text, span

    columns = list(dict.fromkeys(column for row in rows for column in row))
    held = [column for column in ("phi fit-half", "phi held-out", "phi held-out - log") if column in columns]
    topics, ratios = ([name for name in columns if name.startswith(head)] for head in ("topics Φ", "gain "))
    shown = ["measure", "gain", "discount", "phi", "erho2", *held, *topics, *ratios, "residual", "converged"]
    title = (f"Stability on {meta.get('runs')} runs x {meta.get('topics')} topics (Kanoulas & Aslam 2009): "
             f"Φ and Eρ² at {meta.get('at_topics')} topics; topics needed for a target Φ")
    table = Table(title=title, title_justify="left", header_style="bold")
    for column in shown:
        table.add_column(_HEADERS.get(column, column),
                         justify="left" if column in ("measure", "gain", "discount") else "right")

    def fmt(row, column):
        value = row.get(column)
        if column in held:  # mean [2.5%, 97.5%] over the --holdout splits
            return f"{value:.{precision}f} {span(row[column + ' 2.5%'], row[column + ' 97.5%'], precision)}"
        if isinstance(value, bool):
            return "yes" if value else "NO"
        if isinstance(value, float):
            return "∞" if math.isinf(value) else f"{value:.1e}" if column == "residual" else f"{value:.{precision}f}"
        return "" if value is None else str(value)

    for row in rows:
        table.add_row(*(fmt(row, column) for column in shown))
    return rich_text(table, terminal_styles()) + "".join(
        f"\n# {row['measure']}: gain {row['gain']}, discount {row['discount']}\n{row['string']}\n"
        for row in rows if row["optimised"] != "—")


def plot_stability(curves, path: str, meta, asl=None):
    """Discount factor per rank (Kanoulas & Aslam 2009 Figure 2) and Φ against the number of topics
    (Figure 4), one row of panels per measure; with ``asl`` (the ASL table) a third panel: each
    function's ASLs sorted increasingly (Figure 9)."""
    import numpy as np

    from .plots import require_matplotlib, save_figure

    plt = require_matplotlib()

    groups = list(dict.fromkeys(row["measure"] for row, _ in curves))
    cols = 3 if asl else 2
    fig, axes = plt.subplots(len(groups), cols, figsize=(5.5 * cols, 3.6 * len(groups)), squeeze=False)
    for axis, name in zip(axes, groups):
        mine = [(row, phis) for row, phis in curves if row["measure"] == name]
        for row, phis in mine:
            if row["optimised"] in ("—", "discount", "gains+discount") and (row["gain"] == mine[0][0]["gain"]
                                                                          or row["optimised"] == "gains+discount"):
                discount = row["discount_factors"]
                label = row["discount"] if row["optimised"] != "gains+discount" else "joint optimum"
                axis[0].plot(np.arange(1, len(discount) + 1), discount,
                             marker="o" if "optimal" in label or "joint" in label
                           else None, ms=2.5, label=label)
                axis[1].plot(np.arange(1, len(phis) + 1), phis, label=label)
        axis[0].set(title=f"{name}: discount factors (gain {mine[0][0]['gain']})", xlabel="rank",
                    ylabel="discount (sums to 1)")
        axis[1].set(title=f"{name}: Φ against the number of topics", xlabel="topics", ylabel="Φ")
        for target in meta.get("phi_targets", [0.95]):
            axis[1].axhline(target, color="grey", lw=0.7, ls="--")
        if asl:
            for function in dict.fromkeys(row["function"] for row in asl if row["measure"] == name):
                panel = sorted(row["asl"] for row in asl if row["measure"] == name and row["function"] == function)
                axis[2].plot(np.arange(1, len(panel) + 1), panel, label=function)
            axis[2].axhline(0.05, color="grey", lw=0.7, ls="--")
            axis[2].set(title=f"{name}: ASL of the pairs of runs, sorted", xlabel="pairs of runs, by ASL",
                        ylabel="ASL (bootstrap)")
        for panel in axis:
            panel.legend(fontsize=8)
            panel.grid(alpha=0.3)
    fig.tight_layout()
    return save_figure(fig, path)


def stability_outputs(outcome, request, options: dict) -> list:
    """render.files.Output items: the tables (table on a terminal, else tsv) and the picture (--plot)."""
    opts, design, extra = options, outcome.design, outcome.extra
    at_topics, holdout = request.study.get("at_topics"), request.study.get("holdout")
    meta = {"qrels": str(request.qrels), "run_files": list(request.runs), "runs": len(request.runs),
            "topics": len(design.topics), "at_topics": at_topics or len(design.topics),
            "phi_targets": request.phi_targets, "restarts": request.study.get("restarts"),
            "seed": request.study.get("seed"), "levels": [float(level) for level in design.levels]}
    meta.update((key, value) for key, value in (("asl_reps", "asl" in request.tables and request.reps),
                                                ("topic_bootstrap", request.study.get("topic_bootstrap")),
                                                ("holdout", holdout)) if value)
    tabs = {"functions": outcome.rows, **extra} if "functions" in request.tables else extra
    fmt = opts["fmt"] or ("table" if (sys.stdout.isatty() and not opts["output"]) else "tsv")
    text = render_tables({key: tabs[key] for key in request.tables}, fmt, opts["precision"], meta)
    if not text.endswith("\n"):
        text += "\n"
    # the picture drawn in memory, written with the table in one step (render/files.py)
    return [Output(opts["output"], text),
            plot_stability(outcome.curves, opts["plot"], meta, extra.get("asl")) if opts["plot"] else None]
