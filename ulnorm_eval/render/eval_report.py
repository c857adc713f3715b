"""How `ulnorm-eval eval` shows an :class:`~ulnorm_eval.analysis.eval_request.EvalOutcome`: the output in
the chosen format, the gate's Markdown summary and its verdict on stderr (docs/output.md, docs/gate.md)."""
from __future__ import annotations

import dataclasses

from .formats import FORMATS, query_order
from .gate_md import gate_markdown, verdict
from .files import Output, View
from .rows import shared_tags, shared_tags_note
from .values import safe_text

__all__ = ["eval_text", "eval_outputs", "eval_verdict"]


def eval_text(outcome, request, view: View) -> str:
    """The evaluation in ``view.fmt`` (rows sorted and cut by --sort and --head)."""
    result, plan = outcome.result, outcome.plan
    order = None
    if request.sort or request.head:
        order = query_order(result, plan.sort_metric, plan.descending, request.head)
    table_options = {"per_query": view.per_query or order is not None, "names": view.names, "precision": view.precision,
          "query_order": order, "summary": not view.nosummary}
    if view.fmt == "table":
        table_options.update(view.layout)
    if view.fmt == "trec" and view.names != "trec":  # trec_eval's names keep trec_eval's runid lines
        result = _tags_told_apart(result)
    return FORMATS[view.fmt](result, **table_options)


def _tags_told_apart(result):
    """``result`` whose runs sharing a tag have none: the trec format's runid line opening each run's block
    then names the run (its file, made unique), so that the blocks can be told apart."""
    shared = shared_tags(result.runs)
    if not shared:
        return result
    runs = [dataclasses.replace(run, tag=None) if run.tag in shared else run for run in result.runs]
    return dataclasses.replace(result, runs=runs)


def eval_outputs(outcome, request, view: View, notes: list) -> list:
    """render.files.Output items: the evaluation (stdout or -o), and the gate's Markdown summary
    appended to --summary-md FILE.  The trec format's note on runs sharing a tag joins ``notes``."""
    outputs = [Output(view.output, eval_text(outcome, request, view))]
    if view.fmt == "trec":
        notes.extend(shared_tags_note(outcome.result.runs, told_apart=view.names != "trec"))
    if view.summary_md:
        base = outcome.base
        outputs.append(Output(view.summary_md, gate_markdown(
            outcome.result, outcome.checks, view.names, base.name if base is not None else None,
            (request.max_drop or 0.0) if base is not None else None, request.alpha), append=True))
    return outputs


def holes_next(outlook) -> list:
    """After a --holes evaluation, one line: the share of the measures' top k that is unjudged, whether
    the bounds are too wide to decide the gate, and the cheapest way to narrow them; then the documents
    --holes-list named, one a line (``outlook``: analysis.gate.HolesOutlook)."""
    line = (f"holes: {100 * outlook.share:.0f}% of the top {outlook.cutoff} unjudged ({safe_text(outlook.run)}, mean "
            "over queries; the most of any run and cutoff)" if outlook.cutoff else
            "holes: no measure with a cutoff whose top k's unjudged share to count (-m Unjudged@K counts it)")
    line += ("; no gate to decide" if not outlook.checks else f"; the bounds are too wide to decide {outlook.flips} of "
             f"{outlook.checks} gate checks" if outlook.flips else "; the bounds decide every gate check")
    line += ("; to narrow them, judge first the documents below, which move the most bounds (--holes-list)"
             if outlook.listed else "; the runs retrieved no unjudged document to judge (--holes-list)" if outlook.asked
             else "; to narrow them, judge first the documents --holes-list N names (the unjudged ones the runs rank "
             "highest within the measures' cutoffs)")
    return [line] + [f"  judge next: {safe_text(qid)} {safe_text(docid)} (weight {weight:.3f}: {runs} run"
                     f"{'s' if runs > 1 else ''}, best rank {best})" for qid, docid, weight, runs, best in outlook.listed]


def eval_verdict(outcome, request, view: View, notes: bool = True):
    """What stderr says after the output, ``(lines, failed)``, or None: with --holes what the unjudged
    documents leave open (:func:`holes_next`; its first line a note, left out when not ``notes``), then the
    gate's verdict."""
    lines = holes_next(outcome.holes)[0 if notes else 1:] if outcome.holes is not None else []
    if not outcome.checks:
        return (lines, False) if lines else None
    drop = (request.max_drop or 0.0) if outcome.base is not None else None
    return lines + verdict(outcome.checks, view.names, drop, request.alpha), any(check.failed for check in outcome.checks)
