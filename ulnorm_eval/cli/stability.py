"""`ulnorm-eval stability`: stability-optimal gains and discounts for nDCG (Kanoulas & Aslam 2009).

A thin click layer: reading and joining the files (:func:`load_design`), then
:mod:`ulnorm_eval.analysis.stability` for the numbers.  Only click is imported at module level.
"""
from __future__ import annotations

import sys

import click

from ..render.format_names import DATA_FRAME_FORMATS
from .common import CONTEXT, fail, flush, safe
from .options import SEED
_MAX_BYTES = 4_000_000_000  # the precomputed S x T x J x k counts are float64

EPILOG = """\b
Examples:
  ulnorm-eval stability qrels runs/*                        nDCG@100: named and optimal functions
  ulnorm-eval stability --topics 601-650 -k 100 --phi 0.9 qrels runs/*
  ulnorm-eval stability -k 3,10,20,100,200 --unconstrained=gains -m nDCG -m 'UL2(nDCG)' qrels runs/*
  ulnorm-eval stability -f json -o stability.json --plot stability.png qrels runs/*

Rows: the discount functions (Zipfian, linear, log, optimal) with the --gain gains; the gain functions
(linear, exponential, optimal) with the --discount discount; the joint optimum of both.  Φ and Eρ²
are projected to --at-topics topics (default: the topics evaluated); 'topics Φ>=P' is the fewest
topics giving Φ >= P for each --phi target P.  See docs/stability.md.
Exit codes: 0 ok, 2 usage or input error.
"""


class _OneLineErrors(click.Command):
    """Usage errors as one line `ulnorm-eval: reason` with exit code 2 (no usage banner)."""

    def parse_args(self, ctx, args):
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as exc:
            click.echo(f"ulnorm-eval: stability: {safe(exc.format_message())}", err=True)
            ctx.exit(2)


def _cutoffs(text: str) -> list:
    out = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if not part.isdigit() or int(part) < 1:
            raise ValueError(f"-k: cutoff {part!r} is not a positive integer")
        out.append(int(part))
    if not out:
        raise ValueError("-k: no cutoff given")
    return list(dict.fromkeys(out))


def _targets(text: str) -> list:
    out = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        try:
            p = float(part)
        except ValueError:
            raise ValueError(f"--phi: {part!r} is not a number") from None
        if not 0 < p < 1:
            raise ValueError(f"--phi: {part} must lie strictly between 0 and 1")
        out.append(p)
    if not out:
        raise ValueError("--phi: no target given")
    return list(dict.fromkeys(out))


def load_design(qrels_path, run_paths, k: int, topics: str | None = None, *, ties: str = "score",
                warn=None):
    """Read QRELS and RUNS into a :class:`~ulnorm_eval.analysis.stability.Design` at depth ``k``.

    Runs are ordered as trec_eval orders them (:func:`~ulnorm_eval.pipeline.ordering.rank_run`); the
    topics are the qrels' (natural order), filtered by ``topics``.  A topic a run retrieved nothing
    for scores 0 for that run (counted on stderr, as in ``eval``).
    """
    import numpy as np

    from ..analysis import stability as st
    from ..inputs.trec import read_qrels, read_run
    from ..pipeline.ordering import judgements, natural_order, qrels_queries, rank_run

    warn = warn or (lambda msg: None)
    q = read_qrels(qrels_path)
    if q.skipped:
        warn(f"{qrels_path}: skipped {q.skipped} comment or blank lines")
    all_topics = natural_order(qrels_queries(q))
    qids = st.parse_topics(topics, all_topics) if topics else all_topics
    if topics:
        warn(f"--topics {topics}: {len(qids)} of {len(all_topics)} qrels topics kept, "
             f"{len(all_topics) - len(qids)} left out")
    J = judgements(q, qids)
    levels = np.unique(J.grade[J.grade > 0])
    if len(levels) == 0:
        raise ValueError(f"{qrels_path}: no relevant document in the topics evaluated")
    T = len(qids)
    pool = np.bincount(J.row, minlength=T)[:T].astype(np.float64)
    counts = np.stack([np.bincount(J.row, weights=(J.grade == lv), minlength=T)[:T] for lv in levels], axis=1)
    size = len(run_paths) * T * len(levels) * k * 8
    if size > _MAX_BYTES:
        raise ValueError(f"{len(run_paths)} runs x {T} topics x {len(levels)} grades x {k} ranks need "
                         f"{size / 1e9:.1f} GB of counts: select topics (--topics) or lower -k")
    idx, names = [], []
    for path in run_paths:
        run = read_run(path)
        rr = rank_run(run, q, qids, ties=ties, depth=k)
        rk = rr.ranking
        missing = int((~rr.present).sum())
        if missing:
            warn(f"{run.name}: {missing} of {T} topics have no ranked documents and score 0")
        if rr.ignored_queries and not topics:
            warn(f"{run.name}: {rr.ignored_queries} run topics absent from the qrels ignored")
        if run.skipped:
            warn(f"{path}: skipped {run.skipped} comment or blank lines")
        idx.append(st.level_index(rk.row, rk.grade, rk.judged, rk.pos, T, k, levels))
        names.append(run.name)
    return st.Design.from_levels(np.stack(idx), counts, pool, levels, names, qids)


@click.command("stability", cls=_OneLineErrors, context_settings=CONTEXT, epilog=EPILOG)
@click.argument("qrels", type=click.Path(dir_okay=False))
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("-k", "--cutoff", "cutoff", default="100", show_default=True, metavar="K[,K...]",
              help="Cutoff rank(s) of nDCG@k; the paper's Tables 1 and 3 use 100, Table 2 3,10,20,100,200.")
@click.option("-m", "--measure", "measures", multiple=True, metavar="NAME",
              help="nDCG (default), DCG, or a variant of them: UL1, UL2 (alias UE1, UE2), EM, EB, MM, UEW, "
                   "e.g. 'UL2(nDCG)'. Repeatable.")
@click.option("--phi", "phi_target", default="0.95", show_default=True, metavar="P[,P...]",
              help="Target Φ of the 'topics' columns, one column per P (Table 1's caption says 0.95, its text 0.9).")
@click.option("--at-topics", type=int, metavar="N",
              help="Topics Φ and Eρ² are projected to (default: the topics evaluated).")
@click.option("--topics", metavar="LIST", help="Evaluate only these qrels topics: ids and ranges, e.g. 601-650.")
@click.option("--gain", type=click.Choice(["linear", "exponential"]), default="linear", show_default=True,
              help="Gains of the discount rows (the paper: linear).")
@click.option("--discount", type=click.Choice(["log", "zipf", "linear"]), default="log", show_default=True,
              help="Discount of the gain rows (the paper: log).")
@click.option("--unconstrained", type=click.Choice(["none", "gains", "discount", "both"]), default="none",
              is_flag=False, flag_value="both", show_default=True,
              help="Also optimise without monotonicity: --unconstrained=gains (Table 2's first column), "
                   "=discount (Figure 3; slow for large k) or =both (the bare flag).")
@click.option("--restarts", type=int, default=3, show_default=True,
              help="Seeded random starts of every optimiser, besides the named functions.")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed of the random starts.")
@click.option("--ties", type=click.Choice(["score", "rank", "file"]), default="score", show_default=True,
              help="Run order: score desc then docid desc (trec_eval); the rank column; or file order.")
@click.option("-f", "--format", "fmt", type=click.Choice(DATA_FRAME_FORMATS),
              help="Output format. Default: table on a terminal, tsv when piped.")
@click.option("--precision", type=int, help="Decimals (default 4 for table; full precision otherwise).")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write to FILE (atomically) instead of stdout.")
@click.option("--plot", type=click.Path(dir_okay=False), metavar="FILE.png",
              help="Draw discount curves (Figure 2 style) and Φ against topics (Figure 4 style), and the ASL "
                   "curves (Figure 9) with --table asl; needs matplotlib.")
@click.option("--table", "tables", default="functions", show_default=True, metavar="LIST",
              help="Tables to print, comma-separated: functions (Φ, topics needed, the optima), tau (Kendall's τ "
                   "between the system rankings under every two functions, Table 4), asl (Sakai's bootstrap ASL of "
                   "every pair of runs under four functions, Figure 9), paired (topics needed by every function "
                   "over the log discount's, and by every variant over the first measure's, with paired "
                   "--topic-bootstrap intervals), or all.")
@click.option("--reps", type=int, default=1000, show_default=True,
              help="Bootstrap resamples of the ASL table (Sakai 2006; the paper: 1000).")
@click.option("--topic-bootstrap", type=int, default=0, show_default=True, metavar="N",
              help="Resample the topics N times (seeded by --seed, the same for every function): adds the 2.5 "
                   "and 97.5 percentiles of each 'topics Φ>=P' column; --table paired compares functions and "
                   "measures on these resamples.")
@click.option("--holdout", type=int, default=0, show_default=True, metavar="N",
              help="N seeded random half splits of the topics: fit every function on one half, and report Φ "
                   "(at --at-topics) on that half and on the other, the held-out one: mean and 2.5/97.5 "
                   "percentiles over the splits.")
def stability_cmd(qrels, runs, cutoff, measures, phi_target, at_topics, topics, gain, discount, unconstrained,
                  restarts, seed, ties, fmt, precision, output, plot, tables, reps, topic_bootstrap, holdout):
    """Stability-optimal gains and discounts of nDCG@k (Kanoulas & Aslam 2009): Φ, Eρ² and topics needed
    for the named functions and for the SLSQP optima, which are printed as pasteable measures."""
    from ..render.files import check_outputs
    check_outputs(click.get_current_context().params)  # -o/--plot never an input; before reading
    warnings = []
    try:
        ks = _cutoffs(cutoff)
        targets = _targets(phi_target)
        if at_topics is not None and at_topics < 1:
            raise ValueError("--at-topics must be at least 1")
        if restarts < 0:
            raise ValueError("--restarts must be at least 0")
        if precision is not None and not 0 <= precision <= 17:
            raise ValueError("--precision must lie in 0..17")
        if len(runs) < 2:
            raise ValueError("stability needs at least two runs (systems)")
        chosen = _tables(tables)
        if reps < 10:
            raise ValueError("--reps must be at least 10")
        from .options import MAX_DRAWS, MAX_TRIALS

        if reps > MAX_DRAWS:
            raise ValueError(f"--reps must be at most {MAX_DRAWS:,} (memory grows with it)")
        if topic_bootstrap < 0:
            raise ValueError("--topic-bootstrap must be at least 0")
        if topic_bootstrap > MAX_TRIALS:
            raise ValueError(f"--topic-bootstrap must be at most {MAX_TRIALS:,} (time and memory grow with it)")
        if "paired" in chosen and not topic_bootstrap:
            if "paired" in tables.lower():
                raise ValueError("--table paired needs --topic-bootstrap N (the paired resamples)")
            chosen.remove("paired")  # 'all' without resamples: the tables that need none
        if holdout < 0:
            raise ValueError("--holdout must be at least 0")
        if holdout > MAX_TRIALS:
            raise ValueError(f"--holdout must be at most {MAX_TRIALS:,} (time grows with it)")
        if restarts > 1000:
            raise ValueError("--restarts must be at most 1,000 (time grows with it)")
        if plot:
            import importlib.util
            if importlib.util.find_spec("matplotlib") is None:
                from ..extras import missing_message

                raise ValueError(missing_message("plot"))
        from ..analysis import stability as st
        from ..inputs.trec import InputError

        specs = list(dict.fromkeys(st.parse_measure(m) for m in (measures or ("nDCG",))))
        try:
            design = load_design(qrels, runs, max(ks), topics, ties=ties, warn=warnings.append)
        except InputError as exc:
            raise ValueError(str(exc)) from None
        if len(design.topics) < (4 if holdout else 2):
            raise ValueError("stability needs at least two topics" + (" in each half (--holdout)" if holdout else ""))
        paired = [] if "paired" in chosen else None
        rows, curves = st.study(design, specs, ks, gain=gain, discount=discount, unconstrained=unconstrained,
                             restarts=restarts, seed=seed, at_topics=at_topics, phi_targets=targets,
                             topic_bootstrap=topic_bootstrap, holdout=holdout, paired=paired)
        extra = {} if paired is None else {"paired": paired}
        if "tau" in chosen:
            extra["tau"] = st.tau_table(design, specs, rows)
        if "asl" in chosen:
            extra["asl"] = st.asl_table(design, specs, rows, reps=reps, seed=seed)
    except ValueError as exc:
        flush(warnings)
        fail(str(exc))
    flush(warnings)
    meta = {"qrels": str(qrels), "run_files": list(runs), "runs": len(runs), "topics": len(design.topics),
            "at_topics": at_topics or len(design.topics), "phi_targets": targets, "restarts": restarts,
            "seed": seed, "levels": [float(x) for x in design.levels]}
    if "asl" in chosen:
        meta["asl_reps"] = reps
    if topic_bootstrap:
        meta["topic_bootstrap"] = topic_bootstrap
    if holdout:
        meta["holdout"] = holdout
    tabs = {"functions": rows, **extra} if "functions" in chosen else extra
    fmt = fmt or ("table" if (sys.stdout.isatty() and not output) else "tsv")
    text = render_tables({k: tabs[k] for k in chosen}, fmt, precision, meta)
    if not text.endswith("\n"):
        text += "\n"
    from ..render.outputs import Output, write_all

    outputs = [Output(output, text)]
    if plot:  # drawn in memory, written with the table in one step (render/outputs.py)
        from ..render.plots import PictureBuffer
        picture = PictureBuffer(plot)
        plot_stability(curves, picture, meta, extra.get("asl"))
        outputs.append(Output(plot, picture.data))
    write_all(outputs)


TABLES = ("functions", "tau", "asl", "paired")


def _tables(text: str) -> list:
    from .common import table_list

    return table_list(text, TABLES)


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
    from ..render.values import terminal_styles

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
        table.add_column({"phi": "Φ", "erho2": "Eρ²"}.get(c, c), justify="left" if c in ("measure", "gain",
                                                                                          "discount") else "right")

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
    from ..render.plots import save_figure
    save_figure(fig, path)
