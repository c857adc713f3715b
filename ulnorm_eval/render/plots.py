"""Pictures for ``queries --plot`` (Karmaker & Feng 2022 Fig. 1 and 2 for the given data) and ``compare
--plot`` (ranks under each variant, forest plots of pairwise differences); matplotlib, the extra ``plot``."""
from __future__ import annotations

import io

import numpy as np

from ..analysis.query_types import Thresholds
from ..core.registry import Metric
from .files import PICTURE_FORMATS, Output, picture_format
from .legends import interval_percent

__all__ = ["run_labels", "save_figure", "MissingMatplotlib", "require_matplotlib", "plot_queries", "plot_compare",
           "PICTURE_FORMATS", "picture_format", "forest_caption"]

TYPE_COLOURS = {"ideal": "#1b7837", "informative": "#7fbf7b", "uninformative": "#878787",
                "hard": "#d6604d", "easy": "#4393c3"}


class MissingMatplotlib(ImportError):
    """--plot was asked for but matplotlib is not installed."""


def require_matplotlib():
    """pyplot on the non-interactive Agg backend, or MissingMatplotlib with the install hint."""
    try:
        import matplotlib
    except ImportError:
        from ..extras import missing_message

        raise MissingMatplotlib(missing_message("plot")) from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def save_figure(fig, path) -> Output:
    """``fig`` drawn in memory as the picture for ``path``, in its format (:func:`picture_format`): an
    Output, written with the command's other outputs in one step (render/files.py)."""
    plt = require_matplotlib()
    try:
        buf = io.BytesIO()
        fig.savefig(buf, format=picture_format(path), dpi=120, bbox_inches="tight")
        return Output(path, buf.getvalue())
    finally:
        plt.close(fig)


TREC_PREFIX = "input."  # what TREC's archives put before every submitted run's name (input.aplrob03a)


def run_labels(names: list) -> list:
    """The runs' labels in a picture: their names without TREC's ``input.`` when every name has it; any
    other prefix the names share is theirs (a team's: BIT.run1, BIT.run2) and stays."""
    out = [name.removeprefix(TREC_PREFIX) for name in names]
    return out if all(name.startswith(TREC_PREFIX) for name in names) and all(out) and len(set(out)) == len(out) \
        else list(names)


def plot_queries(points: dict, path: str, thresholds=None) -> Output:
    """Histogram of E/IUB per query and mean-vs-expected scatter with query-type regions; ``points``: measure
    -> (E/IUB, A/IUB, query types) per query (analysis.query_types.query_points); without runs (A/IUB all NaN)
    the histograms only."""
    plt = require_matplotlib()
    limits = thresholds or Thresholds()
    has_runs = any(np.isfinite(a).any() for _, a, _ in points.values())
    ncol = 2 if has_runs else 1
    # the scatter's legend sits outside it, to the right (it covered points inside): wider figure
    fig, axes = plt.subplots(len(points), ncol, figsize=(5.2 * ncol + (1.6 if has_runs else 0), 4.2 * len(points)),
                             squeeze=False)
    for row, (meas, (expected, normalised_values, types)) in enumerate(points.items()):
        axis = axes[row, 0]
        axis.hist(expected, bins=30, color="#4d4d4d")
        axis.set(xlabel=f"E / IUB: {meas} of a random ranking", ylabel="queries",
                 title=f"{meas}: expected score per query (n = {len(expected)})")
        if not has_runs:
            continue
        axis = axes[row, 1]
        xmax = float(min(1.0, max(0.05, np.nanmax(expected) * 1.15)))
        grid = np.linspace(0, 1, 200)
        axis.fill_between(grid, grid + limits.ideal_gap, 1.0, color=TYPE_COLOURS["ideal"], alpha=0.12, lw=0)
        axis.fill_between(grid, grid + limits.informative_gap, np.minimum(grid + limits.ideal_gap, 1.0),
                        color=TYPE_COLOURS["informative"], alpha=0.12, lw=0)
        axis.add_patch(plt.Rectangle((0, 0), limits.hard_below, limits.hard_below,
                                     color=TYPE_COLOURS["hard"], alpha=0.12, lw=0))
        axis.add_patch(plt.Rectangle((limits.easy_above, limits.easy_above),
                                     1 - limits.easy_above, 1 - limits.easy_above,
                                   color=TYPE_COLOURS["easy"], alpha=0.12, lw=0))
        axis.plot([0, 1], [0, 1], color="black", lw=0.8, ls="--", label="A = E (random)")
        for query_type, col in TYPE_COLOURS.items():
            sel = types == query_type
            if sel.any():
                axis.scatter(expected[sel], normalised_values[sel], s=16, color=col,
                             label=f"{query_type} ({int(sel.sum())})", zorder=3)
        axis.set(xlim=(0, xmax), ylim=(0, 1), xlabel="E / IUB (random ranking)", ylabel="A / IUB (mean of the runs)",
                 title=f"{meas}: actual vs expected, by query type")
        axis.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
    fig.tight_layout()
    return save_figure(fig, path)


def _forest_pairs(cmp, plain: str, max_pairs: int):
    """(pairs to draw, which): all when few, else the runs adjacent in the plain measure's ranking;
    (run_a, run_b) with run_a ranked above run_b by the plain measure."""
    sys_ = cmp.systems[cmp.systems["metric"] == plain].sort_values(["rank", "run"])
    order = list(sys_["run"])
    pairs = [(order[first], order[second]) for first in range(len(order)) for second in range(first + 1, len(order))]
    if len(pairs) <= max_pairs:
        return pairs, "all pairs"
    return [(order[first], order[first + 1]) for first in range(len(order) - 1)], "runs adjacent in the ranking"


def forest_caption(meta: dict) -> str:
    """The forest plot's title: which intervals are drawn and which test marks a pair.  The intervals
    are the pairs table's ((1 - alpha), not corrected for multiple comparisons); the filled markers are the
    pairs significant after the correction, so an interval that excludes 0 may belong to a pair that
    is not significant after it (and is drawn hollow)."""
    corr = meta.get("correction", "none")
    marks = "filled: significant" + {"none": "", "inherent": ", p-values adjusted by the test"}.get(
        corr, f" after {corr} correction")

    level = interval_percent(meta.get("alpha", 0.05))
    return (f"{meta.get('test', 't')} test; {level} intervals, uncorrected; {marks} "
            f"(α = {meta.get('alpha', 0.05)}); query set: {meta.get('subset', 'all')}")


def plot_compare(cmp, path: str, max_pairs: int = 30) -> Output:
    """Rank-vs-rank plots and forest plots of pairwise differences, one row per measure: each run's rank
    under the plain measure (x) against its rank under each variant (y), with Kendall's tau; then a forest
    panel per metric, each pair's mean difference with its (1 - alpha) interval, uncorrected (filled:
    significant after the correction; :func:`forest_caption`): all pairs when there are at most
    ``max_pairs``, else the pairs of runs adjacent in the plain measure's ranking."""
    plt = require_matplotlib()
    from matplotlib.ticker import MaxNLocator

    by_measure = {}
    for metric in cmp.metrics:
        by_measure.setdefault(metric.measure, []).append(metric)
    ncol = 1 + max(len(group) for group in by_measure.values())
    nrun = len(cmp.runs)
    label = dict(zip(cmp.runs, run_labels(cmp.runs)))
    height = max(4.0, 0.22 * min(max_pairs, nrun * (nrun - 1) // 2) + 1.5)
    widths = [1.0, 1.45] + [1.0] * (ncol - 2)  # the first forest panel carries the pair labels
    fig, axes = plt.subplots(len(by_measure), ncol, figsize=(4.6 * ncol, height * len(by_measure)), squeeze=False,
                             gridspec_kw={"width_ratios": widths[:ncol]})
    alpha = cmp.meta.get("alpha", 0.05)
    summary = cmp.summary.set_index("metric")
    for panel_row, (meas, mets) in enumerate(by_measure.items()):
        plain = str(Metric(meas))
        ranks = cmp.systems.pivot(index="run", columns="metric", values="rank")
        axis = axes[panel_row, 0]
        axis.plot([1, nrun], [1, nrun], color="black", lw=0.8, ls="--")
        markers = "os^DvP*X"
        variants = [metric for metric in mets if metric.variant] if plain in ranks else []
        for column, metric in enumerate(variants):
            tau = summary.loc[str(metric), "tau"]
            shift = 0.18 * (column - (len(variants) - 1) / 2)  # side by side where variants agree
            axis.scatter(ranks[plain] + shift, ranks[str(metric)],
                         marker=markers[column % len(markers)], s=30, alpha=0.8,
                       label=f"{metric.variant}: τ = {tau:.3f}")
        axis.set(xlabel=f"rank by {plain}", ylabel="rank by the variant", title=f"{plain}: ranks of {nrun} runs")
        axis.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))  # ranks: whole numbers only
        axis.yaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))
        axis.invert_xaxis()
        axis.invert_yaxis()
        if variants:
            axis.legend(fontsize=8, loc="best")

        pairs, how = _forest_pairs(cmp, plain if plain in ranks else str(mets[0]), max_pairs)
        ylab = [f"{label[run_a]} − {label[run_b]}" for run_a, run_b in pairs]
        ypos = np.arange(len(pairs))[::-1]
        for column_index, metric in enumerate(mets, start=1):
            axis = axes[panel_row, column_index]
            pair_rows = cmp.pairs[cmp.pairs["metric"] == str(metric)]
            ahead = {(run_a, run_b): (diff, low, high, sig) for run_a, run_b, diff, low, high, sig in zip(
                *(pair_rows[column] for column in ("run_a", "run_b", "diff", "ci_low", "ci_high", "significant")))}
            # a pair drawn the other way round (run_b above run_a): its difference and interval negated
            both = {**{(run_b, run_a): (-diff, *sorted((-low, -high)), sig)
                       for (run_a, run_b), (diff, low, high, sig) in ahead.items()}, **ahead}
            diff, low, high, sig = np.array([both[pair] for pair in pairs], dtype=float).reshape(-1, 4).T
            sig = sig.astype(bool)
            axis.errorbar(diff, ypos, xerr=[diff - low, high - diff], fmt="none", ecolor="#4d4d4d", elinewidth=1)
            axis.scatter(diff[sig], ypos[sig], color="black", s=18, zorder=3, label=f"significant (α = {alpha})")
            axis.scatter(diff[~sig], ypos[~sig], facecolors="white", edgecolors="black", s=18, zorder=3,
                       label="not significant")
            axis.axvline(0, color="black", lw=0.8)
            axis.xaxis.set_major_locator(MaxNLocator(5))
            axis.set_yticks(ypos)
            axis.set_yticklabels(ylab if column_index == 1 else [], fontsize=7)
            axis.set_xlabel(f"difference in mean {metric}")
            axis.set_title(f"{metric} ({how})", fontsize=9)
            if column_index == 1:
                axis.legend(fontsize=7, loc="lower right")
        for column_index in range(len(mets) + 1, ncol):
            axes[panel_row, column_index].set_visible(False)
    fig.suptitle(forest_caption(cmp.meta), fontsize=10)
    fig.tight_layout()
    return save_figure(fig, path)
