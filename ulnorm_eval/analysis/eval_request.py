"""`ulnorm-eval eval` as a library call: an :class:`EvalRequest` (what the options ask for), then
:func:`plan_eval` (the metrics, gate thresholds and sort key, before any input is read) and
:func:`run_eval` (read, evaluate, check the inputs, gate) returning an :class:`EvalOutcome`.  The
command line only builds the request and renders the outcome (render/eval_report.py); a notebook
makes the same calls (:func:`evaluate_request` makes both).  Nothing here imports click or prints."""
from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field

from ..inputs.errors import OptionError, RefusedAlone
from ..pipeline.blocks import Options

__all__ = ["EvalRequest", "EvalPlan", "EvalOutcome", "StoppedAtQuery", "plan_eval", "run_eval", "evaluate_request",
           "RequestBase"]


@dataclass(frozen=True, kw_only=True)
class RequestBase:
    """The fields the requests of `eval`, `compare`, `queries` and `nrg` share: the qrels and runs
    (paths), the measures (names; None: the command's defaults), the evaluation options
    (pipeline.blocks.Options; None: the defaults), whether a run sharing no query with the qrels is
    allowed, --groups and the workers."""

    qrels: str
    runs: tuple
    measures: list | None = None
    options: object = None
    allow_disjoint: bool = False
    groups: str | None = None  # --groups: a LETOR group-size file
    jobs: int = 1  # -j: worker processes; 0 (parallel.AUTO): the usable cores, at most one per run
    scheduler: str | None = None  # --scheduler: a Dask cluster's address
    scheduler_timeout: float = 10.0


class StoppedAtQuery(RefusedAlone):
    """--trec without -c: a run has no results for a qrels query, where trec_eval 10 stops (exit 4).
    ``result``: the runs up to that one; ``qid``: the query (its -q lines stop before it)."""

    def __init__(self, message: str, result, qid: str):
        super().__init__(message)
        self.result, self.qid = result, qid


@dataclass(frozen=True, kw_only=True)
class EvalRequest(RequestBase):
    """What an evaluation asks for (the options of `ulnorm-eval eval`, docs/cli.md), checked for
    contradictions by the command line that built it: :class:`RequestBase`'s fields and eval's own."""

    measures: tuple = ()  # names; empty: the default measures
    variants: tuple | None = None  # --norm: None for the default variants, () for none
    options: Options = field(default_factory=Options)
    holes: tuple | None = None  # (closed|open, warn|fail) with --holes
    holes_samples: int | None = None  # --holes-samples as given (None: no bootstrap variants)
    thresholds: tuple = ()  # --fail-below texts, METRIC=VALUE
    sort: str | None = None  # --sort METRIC, or -METRIC for descending
    head: int | None = None
    baseline: str | None = None
    max_drop: float | None = None
    alpha: float | None = None
    test: str | None = None
    stream: bool | None = None
    strict_queries: bool = False  # --trec without -c: a qrels query a run has no results for is refused

    @property
    def extra_runs(self) -> list:
        """The baseline, when it is not also one of the runs (evaluated, not printed)."""
        return [self.baseline] if self.baseline and self.baseline not in self.runs else []


@dataclass(kw_only=True)
class EvalPlan:
    """The metrics to evaluate (those asked for, then those a gate or --sort names), the gate's
    thresholds, the sort key, and notes on the request said once the evaluation succeeded."""

    metrics: list
    thresholds: list
    sort_metric: object = None
    descending: bool = False
    setup: list = field(default_factory=list)


@dataclass(kw_only=True)
class EvalOutcome:
    """What an evaluation produced: the result (the runs, in order), the baseline's run result (or
    None), the gate's checks, and the plan it followed."""

    result: object
    base: object
    checks: list
    plan: EvalPlan
    holes: object = None  # with --holes: analysis.gate.HolesOutlook, what the unjudged documents leave open


def _variants(request: EvalRequest):
    """(variants, default variants): --holes adds LB and UB (and BS.. with --holes-samples) to the
    variants listed, or to the default ones."""
    from ..core.variants import BOOTSTRAP_VARIANTS, DEFAULT_VARIANTS

    variants = None if request.variants is None else list(request.variants)
    if not request.holes:
        return variants, None
    more = ["LB", "UB"] + (list(BOOTSTRAP_VARIANTS) if request.holes_samples else [])
    if variants is None:
        return None, [*DEFAULT_VARIANTS, *more]
    return [*variants, *more], None


def _sort_key(text: str | None):
    """--sort METRIC (ascending) or -METRIC (descending) -> (metric, descending)."""
    from ..core.registry import UnknownMeasure, parse

    if not text:
        return None, False
    descending = text.startswith("-")
    try:
        metric = parse(text[1:] if descending else text)
    except UnknownMeasure as exc:
        raise RefusedAlone(str(exc)) from exc
    rec = metric.measure.record
    if rec is not None and rec.value == "text":
        raise RefusedAlone(f"--sort {text}: {metric} is text (trec_eval's {metric.measure.trec_name()}), not a "
                           "number to sort by; sort by a numeric measure")
    return metric, descending


def plan_eval(request: EvalRequest, notes: list) -> EvalPlan:
    """The metrics, thresholds and sort key of ``request``, before any input is read; notes for stderr
    are appended to ``notes`` (the --holes note), those said only on success to the plan's ``setup``."""
    from ..core.registry import UnknownMeasure
    from ..pipeline import evaluate as api

    variants, defaults = _variants(request)
    measures = list(request.measures) or None
    if request.holes:
        note = api.holes_note(measures)
        if note:
            notes.append(note)
    setup = []
    metrics = api.resolve_metrics(measures, variants, warn=setup.append, default_variants=defaults,
                                  trec_version=request.options.trec_version)
    metrics = _withheld(request, metrics, notes)
    if request.options.zscore is not None and any(metric.variant for metric in metrics):
        raise OptionError("-Z converts trec_eval's measures, not the variants: add --norm none")
    if request.thresholds or request.holes:  # the gate's module only when a gate or --holes needs it
        from . import gate
    try:
        thresholds = [gate.parse_threshold(threshold) for threshold in request.thresholds]
    except UnknownMeasure:
        raise
    except ValueError as exc:
        raise RefusedAlone(str(exc)) from exc
    sort_metric, descending = _sort_key(request.sort)
    # measures named only by a gate or --sort are evaluated (and printed) too
    for metric in [threshold.metric for threshold in thresholds] + ([sort_metric] if sort_metric else []):
        if metric not in metrics:
            metrics.append(metric)
    if request.holes:  # the gate's own metrics get their hole bounds too
        metrics += [metric for metric in gate.hole_metrics([threshold.metric for threshold in thresholds]) if metric not in metrics]
    return EvalPlan(metrics=metrics, thresholds=thresholds, sort_metric=sort_metric, descending=descending,
                    setup=setup)


def _withheld(request: EvalRequest, metrics: list, notes: list) -> list:
    """The metrics without the bootstrap variants --holes-samples added to a family of
    core.holes.BOOT_WITHHELD (those asked for by name or by --norm are kept); a note names them."""
    from ..core.holes import BOOT_WITHHELD, withheld_note
    from ..core.registry import parse_many
    from ..core.variants import BOOTSTRAP_VARIANTS

    if not request.holes_samples:
        return metrics
    asked = {name.upper() for name in request.variants or ()}
    named = {metric for name in request.measures for metric in parse_many(name) if metric.variant}
    drop = [metric for metric in metrics if metric.variant in BOOTSTRAP_VARIANTS and metric.variant not in asked
            and metric not in named and metric.measure.family in BOOT_WITHHELD]
    if drop:
        notes.append(withheld_note(dict.fromkeys(metric.measure.family for metric in drop)))
    return [metric for metric in metrics if metric not in drop]


def _no_progress(inputs, monte_carlo_total):
    """A progress display that shows nothing: ``step(label, path)`` does nothing."""
    return contextlib.nullcontext(lambda label, path: None)


def _label(path: str) -> str:
    """A progress label's name of ``path``: its last component (the path itself when that is empty)."""
    return os.path.basename(path) or path


def unjudged_shares(metrics) -> list:
    """Unjudged@k for every cutoff k of a measure with hole bounds (LB) in ``metrics``, not already there:
    the share of the top k that is unjudged, evaluated beside [LB, UB] (the table prints it after them)."""
    from ..core.registry import Metric, parse

    have, out = set(metrics), []
    for metric in metrics:
        if metric.variant == "LB" and metric.measure.cutoff is not None:
            share = Metric(parse(f"Unjudged@{int(metric.measure.cutoff)}").measure)
            if share not in have:
                have.add(share)
                out.append(share)
    return out


def run_eval(request: EvalRequest, plan: EvalPlan, notes: list, progress=_no_progress) -> EvalOutcome:
    """Read the qrels and runs of ``request``, evaluate ``plan.metrics`` (--holes: and :func:`unjudged_shares`,
    not printed), check the inputs (docs/errors.md) and the gate; notes for stderr appended to ``notes`` as
    they come.  ``progress(inputs, monte_carlo_total)``: a context manager giving ``step(label, path)``."""
    from ..inputs import checks as input_checks
    from ..pipeline import evaluate as api
    from ..pipeline import parallel
    from ..pipeline.orchestrator import DisjointRun, evaluate_runs
    from ..pipeline.ordering import qrels_queries

    runs, metrics, opts = list(request.runs), plan.metrics, request.options
    sources = [*runs, *request.extra_runs]
    loaded = []  # the qrels, once read: the Monte Carlo bar's total counts its queries

    units = 0  # Monte Carlo units per query: only variants have them (no need to import the bounds' module without)
    if any(metric.variant for metric in metrics):
        from ..core.expectations import monte_carlo_units

        units = monte_carlo_units(metrics)

    def mc_total():  # units: query x metric x run (the last run's may be fewer: --run-queries-only)
        return units * len(set(loaded[0].qid.to_pylist())) * (len(sources))

    # -j auto: one worker per run at most; an explicit -j N may split a large run into query blocks
    jobs = parallel.resolve_jobs(request.jobs, len(sources) if request.jobs == parallel.AUTO else None)
    mc_bar = mc_total if units and jobs == 1 and not request.scheduler else 0
    with progress([request.qrels, *sources], mc_bar) as step:
        step(f"reading {_label(request.qrels)}", request.qrels)
        qrels = api.load_qrels(request.qrels, groups=request.groups, trec_eval=opts.trec_nan)
        loaded.append(qrels)
        if qrels.skipped:
            notes.append(f"{request.qrels}: skipped {qrels.skipped} comment or blank lines")
        if qrels.truncated:
            notes.append(f"{request.qrels}: {qrels.truncated} grades read as trec_eval reads them, the integer of "
                         "their leading digits (C's atol: 1.5 -> 1, 1e1 -> 1)")
        results = []
        with parallel.executor(qrels, jobs, request.scheduler, request.scheduler_timeout) as executor:
            # hole bounds over several runs range over their shared holes (docs/holes.md, "Worlds")
            # --trec without -c stops at a run's first query without results, disjoint or not (StoppedAtQuery)
            done = evaluate_runs(qrels, sources, metrics + (unjudged_shares(metrics) if request.holes else []), opts,
                                 executor, warn=notes.append, stream=request.stream,
                                 refuse_disjoint=not (request.allow_disjoint or request.strict_queries))
            opts = done.options
            try:
                for index, path in enumerate(runs):
                    step(f"evaluating {_label(path)} ({index + 1}/{len(runs)})", path)
                    results.append(next(done))
                base = results[runs.index(request.baseline)] if request.baseline in runs else None
                if request.baseline and base is None:
                    step(f"evaluating baseline {_label(request.baseline)}", request.baseline)
                    base = next(done)
            except DisjointRun as exc:  # alone: the notes of an evaluation against the wrong qrels mislead
                raise RefusedAlone(str(exc)) from exc
    stop = input_checks.missing_query(results, runs) if request.strict_queries else None
    if stop:
        index, qid, error = stop
        raise StoppedAtQuery(error, api.Result(metrics=metrics, runs=results[: index + 1], options=opts,
                                               qrels_path=request.qrels, run_paths=runs[: index + 1]), qid)
    input_checks.rename_runs(results)
    result = api.Result(metrics=metrics, runs=results, options=opts, qrels_path=request.qrels, run_paths=runs)
    input_checks.require_finite(result)
    checks = _gate(request, plan, result, base, len(qrels_queries(qrels)))
    if request.holes:
        from .gate import holes_outlook

        return EvalOutcome(result=result, base=base, checks=checks, plan=plan, holes=holes_outlook(result, checks))
    return EvalOutcome(result=result, base=base, checks=checks, plan=plan)


def _gate(request: EvalRequest, plan: EvalPlan, result, base, total: int) -> list:
    """The gate's checks: --fail-below thresholds, then --baseline, then what the holes could flip;
    ``total``: the qrels queries, which every check line names beside the queries its mean is over."""
    if not plan.thresholds and base is None:  # no gate: no checks (nor the gate's module to import)
        return []
    from . import gate

    max_drop = request.max_drop or 0.0
    checks = gate.check_thresholds(result, plan.thresholds, total)
    if base is not None:
        checks += gate.check_baseline(result, base, max_drop, request.alpha, request.test or "t",
                                      request.options.seed, total)
    if request.holes and checks:
        gate.check_holes(result, checks, base, max_drop, request.holes[1] or "warn")
    return checks


def evaluate_request(request: EvalRequest, notes: list | None = None) -> EvalOutcome:
    """The evaluation ``request`` asks for (what `ulnorm-eval eval` computes), notes appended to
    ``notes`` (the request's setup notes are in ``outcome.plan.setup``)."""
    notes = [] if notes is None else notes
    return run_eval(request, plan_eval(request, notes), notes)
