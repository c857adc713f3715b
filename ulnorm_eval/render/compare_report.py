"""How `ulnorm-eval compare` shows an :class:`~ulnorm_eval.analysis.compare.Comparison`: the tables
chosen (or, for -f latex/markdown, the systems x metrics table for a paper), the pairs against
--baseline, and the --plot picture, written together (docs/comparing.md)."""
from __future__ import annotations

from .frames import render
from .files import Output, View

__all__ = ["compare_outputs"]


def compare_outputs(cmp, request, view: View) -> list:
    """render.files.Output items: the tables in ``view.fmt`` (stdout or -o), and the picture."""
    frames, chosen, baseline = dict(cmp.tables), list(view.tables), cmp.meta.get("baseline")
    meta = {**{key: value for key, value in cmp.meta.items() if key != "baseline"}, "qrels": str(request.qrels),
            "run_files": list(request.runs), **({"baseline": baseline} if baseline is not None else {})}
    if view.paper:
        chosen = ["systems", "pairs", *(["baseline_pairs"] if baseline is not None else [])]
        meta["metric_queries"] = {metric: len(qids) for metric, qids in cmp.queries.items()}
    elif baseline is not None:  # the pairs against the baseline, corrected over them (analysis.marks)
        frames["pairs"] = frames["baseline_pairs"]
        chosen = chosen + ["pairs"] if "pairs" not in chosen else chosen
    outputs = [Output(view.output, render({name: frames[name] for name in chosen}, view.fmt, view.precision, meta))]
    if view.plot:  # drawn in memory, written with the table in one step (render/files.py)
        from .plots import plot_compare

        outputs.append(plot_compare(cmp, view.plot))
    return outputs
