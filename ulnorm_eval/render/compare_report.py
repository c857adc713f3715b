"""How `ulnorm-eval compare` shows an :class:`~ulnorm_eval.analysis.compare.Comparison`: the tables
chosen (or, for -f latex/markdown, the systems x metrics table for a paper), the pairs against
--baseline, and the --plot picture, written together (docs/comparing.md)."""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CompareView", "compare_outputs"]


@dataclass(frozen=True, kw_only=True)
class CompareView:
    """How to show a comparison: the format, the tables (--table), decimals, -o and --plot FILE."""

    fmt: str
    tables: tuple
    precision: int | None = None
    output: str | None = None
    plot: str | None = None
    baseline: str | None = None  # --baseline RUN: a path or run name

    @property
    def paper(self) -> bool:
        return self.fmt in ("latex", "markdown")


def compare_outputs(cmp, request, view: CompareView) -> list:
    """render.outputs.Output items: the tables in ``view.fmt`` (stdout or -o), and the picture."""
    from ..analysis.compare import baseline_run_name
    from .frames import render
    from .outputs import Output

    frames, chosen, baseline = dict(cmp.tables), list(view.tables), view.baseline
    meta = {**cmp.meta, "qrels": str(request.qrels), "run_files": list(request.runs)}
    if baseline is not None:
        meta["baseline"] = baseline_run_name(baseline, request.runs, cmp.runs)
    if view.paper:
        chosen = ["systems", "pairs"]
        meta["metric_queries"] = {metric: len(qids) for metric, qids in cmp.queries.items()}
    elif baseline is not None:  # the pairs against the baseline, corrected over them
        from ..analysis.marks import baseline_pairs

        frames["pairs"] = baseline_pairs(frames["pairs"], meta["baseline"], cmp.meta["correction"], cmp.meta["alpha"])
        chosen = chosen + ["pairs"] if "pairs" not in chosen else chosen
    outputs = [Output(view.output, render({name: frames[name] for name in chosen}, view.fmt, view.precision, meta))]
    if view.plot:  # drawn in memory, written with the table in one step (render/outputs.py)
        from .plots import PictureBuffer, plot_compare

        picture = PictureBuffer(view.plot)
        plot_compare(cmp, picture)
        outputs.append(Output(picture.path, picture.data))
    return outputs
