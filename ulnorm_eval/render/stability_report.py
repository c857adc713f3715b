"""How `ulnorm-eval stability` shows its study (docs/stability.md): the functions table and the tau,
ASL and paired tables in table, tsv, csv or json, and the discount, Φ and ASL curves (--plot)."""
from __future__ import annotations

import sys

__all__ = ["render_tables", "render", "plot_stability", "stability_outputs"]

# the functions table's column titles
_HEADERS = {"phi": "Φ", "erho2": "Eρ²", "phi fit-half": "Φ fit-half", "phi held-out": "Φ held-out",
            "phi held-out - log": "Φ held-out − log"}


def render_tables(tabs: dict, fmt: str, precision=None, meta=None) -> str:
    """The chosen tables: json {meta, rows, tau, asl}; tsv/csv each after a '# name' line when there are
    several; table: the functions table, τ as a matrix per measure, the ASL summary."""
    if fmt == "json":
        import json

        doc = json.loads(render(tabs.get("functions", []), "json", precision, meta))
        if "functions" not in tabs:
            del doc["rows"]
        for name in ("tau", "asl", "paired"):
            if name in tabs:
                doc[name] = json.loads(render(tabs[name], "json", precision))["rows"]
        return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"
    if fmt in ("tsv", "csv"):
        parts = [(f"# {name}\n" if len(tabs) > 1 else "") + render(rows, fmt, precision, meta)
                 for name, rows in tabs.items()]
        return "\n".join(parts)
    parts = []
    if "functions" in tabs:
        parts.append(render(tabs["functions"], fmt, precision, meta))
    if "tau" in tabs:
        parts.append(_tau_text(tabs["tau"], 4 if precision is None else precision))
    if "asl" in tabs:
        parts.append(_asl_text(tabs["asl"], meta or {}))
    if "paired" in tabs:
        parts.append(_paired_text(tabs["paired"], meta or {}))
    return "\n".join(parts)


def _paired_text(rows, meta) -> str:
    out = [f"Topics needed by a over those needed by b, paired over {meta.get('topic_bootstrap')} topic "
           "resamples: the ratio on the topics evaluated and its 95% interval; 'more' or 'fewer' only when the "
           "interval excludes 1 (optima are not re-fitted on a resample: see --holdout)"]
    out += [f"  {r['claim']}" for r in rows]
    return "\n".join(out) + "\n"


def _tau_text(rows, precision: int) -> str:
    out = []
    for name in dict.fromkeys(r["measure"] for r in rows):
        mine = [r for r in rows if r["measure"] == name]
        labels = list(dict.fromkeys(r["function_a"] for r in mine))
        tau = {(r["function_a"], r["function_b"]): r["tau"] for r in mine}
        w = max(len(x) for x in labels) + 2
        out.append(f"Kendall's τ between the system rankings, {name} (Kanoulas & Aslam 2009 Table 4)")
        out.append(" " * w + "".join(f"{x:>{w}}" for x in labels))
        for a in labels:
            out.append(f"{a:<{w}}" + "".join(f"{tau[a, b]:>{w}.{precision}f}" for b in labels))
        out.append("")
    return "\n".join(out)


def _asl_text(rows, meta) -> str:
    out = [f"Sakai's bootstrap ASL of every pair of runs ({meta.get('asl_reps', 1000)} resamples; Kanoulas & "
           "Aslam 2009 Figure 9): pairs with ASL < 0.05 and < 0.01, median ASL"]
    for name in dict.fromkeys(r["measure"] for r in rows):
        for f in dict.fromkeys(r["function"] for r in rows if r["measure"] == name):
            a = sorted(r["asl"] for r in rows if r["measure"] == name and r["function"] == f)
            mid = (a[(len(a) - 1) // 2] + a[len(a) // 2]) / 2
            out.append(f"  {name:<24} {f:<16} {sum(x < 0.05 for x in a):>4} {sum(x < 0.01 for x in a):>4} "
                       f"of {len(a)}   median {mid:.4f}")
    return "\n".join(out) + "\n"


def render(rows, fmt: str, precision=None, meta=None) -> str:
    """tsv/csv: one row per function, vectors as JSON lists; json: {meta, rows}; table: the numbers,
    then the optimal measures as pasteable strings."""
    import json
    import math

    if fmt == "json":
        def clean(v):
            if hasattr(v, "item") and not isinstance(v, list):
                v = v.item()  # numpy scalars
            if isinstance(v, float):
                if not math.isfinite(v):
                    return None
                return round(v, precision) if precision is not None else v
            if isinstance(v, list):
                return [clean(x) for x in v]
            return v
        return json.dumps({"meta": meta or {}, "rows": [{k: clean(v) for k, v in r.items()} for r in rows]},
                          indent=1, ensure_ascii=False) + "\n"
    cols = list(dict.fromkeys(c for r in rows for c in r))
    if fmt in ("tsv", "csv"):
        import csv
        import io

        def cell(v):
            if isinstance(v, list):
                return json.dumps(v)
            if v is None:
                return ""
            if isinstance(v, float) and precision is not None and math.isfinite(v):
                return f"{v:.{precision}f}"
            return str(v)
        buf = io.StringIO()
        w = csv.writer(buf, delimiter="\t" if fmt == "tsv" else ",", lineterminator="\n",
                       quoting=csv.QUOTE_MINIMAL)
        w.writerow(cols)
        for r in rows:
            w.writerow([cell(r.get(c)) for c in cols])
        return buf.getvalue()
    return _table(rows, 4 if precision is None else precision, meta or {})


def _table(rows, precision, meta) -> str:
    import io
    import math
    import shutil

    from rich.console import Console
    from rich.table import Table

    buf = io.StringIO()
    width = shutil.get_terminal_size((160, 24)).columns if sys.stdout.isatty() else 200
    from .values import terminal_styles

    styles = terminal_styles()  # a terminal, not under NO_COLOR or TERM=dumb
    console = Console(file=buf, width=width, color_system="auto" if styles else None, force_terminal=styles)
    ratio_cols = list(dict.fromkeys(c for r in rows for c in r if c.startswith("gain ")))
    topic_cols = list(dict.fromkeys(c for r in rows for c in r if c.startswith("topics Φ")))
    held = [c for c in ("phi fit-half", "phi held-out", "phi held-out - log") if any(c in r for r in rows)]
    shown = ["measure", "gain", "discount", "phi", "erho2", *held, *topic_cols, *ratio_cols, "residual", "converged"]
    title = (f"Stability on {meta.get('runs')} runs x {meta.get('topics')} topics (Kanoulas & Aslam 2009): "
             f"Φ and Eρ² at {meta.get('at_topics')} topics; topics needed for a target Φ")
    table = Table(title=title, title_justify="left", header_style="bold")
    for c in shown:
        table.add_column(_HEADERS.get(c, c), justify="left" if c in ("measure", "gain", "discount") else "right")

    def fmt(v, c):
        if c in held:  # mean [2.5%, 97.5%] over the --holdout splits
            return f"{v:.{precision}f} [{r[c + ' 2.5%']:.{precision}f}, {r[c + ' 97.5%']:.{precision}f}]"
        if v is None:
            return ""
        if isinstance(v, bool):
            return "yes" if v else "NO"
        if isinstance(v, float):
            if math.isinf(v):
                return "∞"
            if c == "residual":
                return f"{v:.1e}"
            return f"{v:.{precision}f}"
        return str(v)
    for r in rows:
        table.add_row(*(fmt(r.get(c), c) for c in shown))
    console.print(table)
    best = [r for r in rows if r["optimised"] != "—"]
    for r in best:
        buf.write(f"\n# {r['measure']}: gain {r['gain']}, discount {r['discount']}\n{r['string']}\n")
    return buf.getvalue()


def plot_stability(curves, path: str, meta, asl=None) -> None:
    """Discount factor per rank (Kanoulas & Aslam 2009 Figure 2) and Φ against the number of topics
    (Figure 4), one row of panels per measure; with ``asl`` (the ASL table) a third panel: each
    function's ASLs sorted increasingly (Figure 9)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from ..analysis import stats

    groups = list(dict.fromkeys(r["measure"] for r, _ in curves))
    cols = 3 if asl else 2
    fig, axes = plt.subplots(len(groups), cols, figsize=(5.5 * cols, 3.6 * len(groups)), squeeze=False)
    nmax = max(100, meta.get("topics", 50) * 2)
    n = np.arange(1, nmax + 1)
    for ax, name in zip(axes, groups):
        mine = [(r, vc) for r, vc in curves if r["measure"] == name]
        for r, vc in mine:
            if r["optimised"] in ("—", "discount", "gains+discount") and (r["gain"] == mine[0][0]["gain"]
                                                                          or r["optimised"] == "gains+discount"):
                d = r["discount_factors"]
                label = r["discount"] if r["optimised"] != "gains+discount" else "joint optimum"
                ax[0].plot(np.arange(1, len(d) + 1), d, marker="o" if "optimal" in label or "joint" in label
                           else None, ms=2.5, label=label)
                ax[1].plot(n, [stats.phi(vc, int(x)) for x in n], label=label)
        ax[0].set_title(f"{name}: discount factors (gain {mine[0][0]['gain']})")
        ax[0].set_xlabel("rank")
        ax[0].set_ylabel("discount (sums to 1)")
        ax[1].set_title(f"{name}: Φ against the number of topics")
        ax[1].set_xlabel("topics")
        ax[1].set_ylabel("Φ")
        for p in meta.get("phi_targets", [0.95]):
            ax[1].axhline(p, color="grey", lw=0.7, ls="--")
        if asl:
            for f in dict.fromkeys(r["function"] for r in asl if r["measure"] == name):
                a = sorted(r["asl"] for r in asl if r["measure"] == name and r["function"] == f)
                ax[2].plot(np.arange(1, len(a) + 1), a, label=f)
            ax[2].axhline(0.05, color="grey", lw=0.7, ls="--")
            ax[2].set_title(f"{name}: ASL of the pairs of runs, sorted")
            ax[2].set_xlabel("pairs of runs, by ASL")
            ax[2].set_ylabel("ASL (bootstrap)")
        for a in ax:
            a.legend(fontsize=8)
            a.grid(alpha=0.3)
    fig.tight_layout()
    from .plots import save_figure
    save_figure(fig, path)


def stability_outputs(outcome, request, options: dict) -> list:
    """render.outputs.Output items: the tables chosen in the format asked for (table on a terminal,
    else tsv), and the picture (--plot)."""
    from .outputs import Output

    o, design, extra = options, outcome.design, outcome.extra
    at_topics, holdout = request.study.get("at_topics"), request.study.get("holdout")
    meta = {"qrels": str(request.qrels), "run_files": list(request.runs), "runs": len(request.runs),
            "topics": len(design.topics), "at_topics": at_topics or len(design.topics),
            "phi_targets": request.phi_targets, "restarts": request.study.get("restarts"),
            "seed": request.study.get("seed"), "levels": [float(x) for x in design.levels]}
    if "asl" in request.tables:
        meta["asl_reps"] = request.reps
    if request.study.get("topic_bootstrap"):
        meta["topic_bootstrap"] = request.study["topic_bootstrap"]
    if holdout:
        meta["holdout"] = holdout
    tabs = {"functions": outcome.rows, **extra} if "functions" in request.tables else extra
    fmt = o["fmt"] or ("table" if (sys.stdout.isatty() and not o["output"]) else "tsv")
    text = render_tables({k: tabs[k] for k in request.tables}, fmt, o["precision"], meta)
    if not text.endswith("\n"):
        text += "\n"
    outputs = [Output(o["output"], text)]
    if o["plot"]:  # drawn in memory, written with the table in one step (render/outputs.py)
        from .plots import PictureBuffer

        picture = PictureBuffer(o["plot"])
        plot_stability(outcome.curves, picture, meta, extra.get("asl"))
        outputs.append(Output(o["plot"], picture.data))
    return outputs
