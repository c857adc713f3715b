"""The notebook API: evaluate, compare and NRG on paths, pandas DataFrames or pytrec_eval-style dicts
(docs/python.md).

>>> import ulnorm_eval as ue
>>> res = ue.evaluate(qrels_df, {"bm25": bm25_df, "dense": dense_df}, ["nDCG@10", "AP"], variants=["UL2"])
>>> res.tidy()          # run, query, measure, value
>>> res.bounds          # run, query, measure, E, IUB, WLB

``qrels``: a path, ``'irds:DATASET_ID'``, a DataFrame (``query_id, doc_id, relevance`` or ``qid, docno,
label``) or ``{qid: {docid: relevance}}``; ``runs``: a run, a list, or a dict ``name -> run``, each a
path, a DataFrame (``query_id, doc_id, score`` or ``qid, docno, score``) or ``{qid: {docid: score}}``.
The same pipeline as the command line scores them, to the last digit; keyword options are the command
line's (:class:`~ulnorm_eval.pipeline.blocks.Options`).
"""
from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Union

from .analysis.compare import CompareSettings, Comparison, compare_files
from .analysis.nrg import NO_PRIOR, NRGError, NRGResult, NRGSettings, evaluate_nrg
from .core.keywords import split_keywords
from .core.registry import Metric
from .inputs.checks import rename_runs
from .inputs.in_memory import is_frame, is_nested_dict, qrels_from_object, run_from_object
from .inputs.trec import Qrels, Run
from .pipeline.blocks import Options
from .pipeline.evaluate import Result, both_notes, load_qrels, load_run, resolve_metrics
from .pipeline.orchestrator import evaluate_runs

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["evaluate", "compare", "nrg", "paper_table", "Evaluation", "NRGEvaluation", "to_qrels",
           "to_runs", "QrelsLike", "RunLike", "RunsLike"]

QrelsLike = Union[str, os.PathLike, "pd.DataFrame", Mapping[str, Mapping[str, float]], Qrels]
RunLike = Union[str, os.PathLike, "pd.DataFrame", Mapping[str, Mapping[str, float]], Run]
RunsLike = Union[RunLike, Sequence[RunLike], Mapping[str, RunLike]]

_BOUNDS = ("E", "IUB", "WLB")


# --------------------------------------------------------------------------- inputs

def to_qrels(qrels: QrelsLike, groups: str | None = None) -> Qrels:
    """Typed :class:`Qrels` from any accepted qrels input."""
    if isinstance(qrels, Qrels):
        return qrels
    if isinstance(qrels, (str, os.PathLike)):
        return load_qrels(os.fspath(qrels), groups=groups)
    if is_frame(qrels) or isinstance(qrels, Mapping):
        return qrels_from_object(dict(qrels) if isinstance(qrels, Mapping) else qrels)
    raise TypeError(f"qrels: expected a path, a DataFrame or {{qid: {{docid: relevance}}}}, got {type(qrels).__name__}")


def _one_run(obj, qrels: Qrels, name: str | None) -> Run:
    if isinstance(obj, Run):
        return dataclasses.replace(obj, name=name) if name else obj
    if isinstance(obj, (str, os.PathLike)):
        return load_run(os.fspath(obj), qrels, name=name)
    if is_frame(obj) or isinstance(obj, Mapping):
        return run_from_object(obj, name=name or "run")
    raise TypeError(f"run: expected a path, a DataFrame or {{qid: {{docid: score}}}}, got {type(obj).__name__}")


def _sources(runs: RunsLike, qrels: Qrels) -> list:
    """Each run as a :class:`Run`, or as a path string when it is an unnamed file (evaluated as the
    command line does: streamed block by block)."""
    if isinstance(runs, (str, os.PathLike, Run)) or is_frame(runs) or is_nested_dict(runs):
        runs = [runs]
    if isinstance(runs, Mapping):
        if not runs:
            raise ValueError("runs: an empty dict")
        return [_one_run(r, qrels, str(name)) for name, r in runs.items()]
    if not isinstance(runs, Iterable):
        raise TypeError(f"runs: expected a run (a path, a DataFrame or {{qid: {{docid: score}}}}), a list of runs or "
                        f"a dict name -> run, got {type(runs).__name__}")
    runs = list(runs)
    if not runs:
        raise ValueError("runs: no run given")
    memory = sum(not isinstance(r, (str, os.PathLike, Run)) for r in runs)
    names = iter([f"run{i}" for i in range(1, memory + 1)] if memory > 1 else ["run"])
    return [os.fspath(r) if isinstance(r, (str, os.PathLike)) else r if isinstance(r, Run)
            else _one_run(r, qrels, next(names)) for r in runs]


def to_runs(runs: RunsLike, qrels: Qrels) -> list[Run]:
    """Typed :class:`Run` objects from one run, a list of runs, or a dict ``name -> run`` (named by its
    keys); unnamed in-memory runs are ``run``, or ``run1``, ``run2``, ...; files keep the file's name."""
    return [r if isinstance(r, Run) else load_run(r, qrels) for r in _sources(runs, qrels)]


@dataclass(frozen=True, kw_only=True)
class ReadOptions:
    """How :func:`evaluate` and :func:`compare` read their inputs (keywords of both): ``groups``, the
    query-group file of LETOR qrels (``QRELS.query`` by default); ``allow_disjoint``, a run sharing no
    query with the qrels is evaluated (scoring 0) instead of refused."""

    groups: str | None = None
    allow_disjoint: bool = False


def _keywords(kw: dict, where: str, *records: type) -> tuple:
    """One instance of each record from the keywords naming its fields (core.keywords.split_keywords);
    keywords naming no field: one TypeError naming them all."""
    known = {f.name for r in records for f in dataclasses.fields(r)}
    extra = sorted(k for k in kw if k not in known)
    if extra:
        raise TypeError(f"{where}() got unexpected keyword arguments {extra}")
    return split_keywords(kw, *records, where=where)


# --------------------------------------------------------------------------- evaluate

# what nrg() returns: an NRGResult (``priors``, ``notes``, every output format, the Result's views)
NRGEvaluation = NRGResult


@dataclass(kw_only=True)
class Evaluation(Result):
    """What :func:`evaluate` returns: a :class:`~ulnorm_eval.pipeline.evaluate.Result` (``frame``,
    ``wide()``, ``tidy()``, ``per_query``, ``means``, ``summary()``, ``notes``, ``runs``; every output
    format of the command line) with its inputs, so that the bounds can be read too."""

    qrels: Qrels | None = None
    # each run as the evaluation read it, in run order: a Run, or an orchestrator.RunFile (read again, for
    # the bounds, only while it is the file first read)
    inputs: list = field(default_factory=list)

    @functools.cached_property
    def bounds(self) -> "pd.DataFrame":
        """Per run, query and measure: E, IUB and WLB, the random-ranking bounds every variant is built
        from (Karmaker & Feng 2022 §3); measures without bounds are left out (computed once)."""
        import numpy as np
        import pandas as pd

        measures = [m for m in dict.fromkeys(x.measure for x in self.metrics) if m.bounds != "none"]
        wanted = [Metric(m, v) for m in measures for v in _BOUNDS]
        lacking = [i for i, rr in enumerate(self.runs) if not all(w in rr.values for w in wanted)]
        again = dict(zip(lacking, evaluate_runs(self.qrels, [self.inputs[i] for i in lacking], wanted, self.options)))
        parts = []
        for i, rr in enumerate(self.runs):
            have = again.get(i, rr)
            for m in measures:
                parts.append(pd.DataFrame({"run": rr.name, "query": list(have.qids), "measure": str(m),
                                           **{v: np.asarray(have.values[Metric(m, v)]) for v in _BOUNDS}}))
        cols = ["run", "query", "measure", *_BOUNDS]
        return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=cols)


def _variant_list(variants):
    """``variants`` as a list: a string is the command line's ``--norm`` (``'UL2'``, ``'E,UL2'``,
    ``'none'``), never iterated character by character."""
    if isinstance(variants, str):
        parts = [x.strip() for x in variants.split(",") if x.strip()]
        if not parts:
            raise ValueError(f"variants={variants!r}: no variant named (give e.g. 'UL2', 'E,UL2', 'none' or [])")
        return [] if parts in (["none"], ["plain"]) else parts
    return variants


def _measure_list(measures):
    """``measures`` as the command line's -m takes them: None for the defaults, a name, or names; an
    empty list or anything but a non-empty name is refused (``[]`` silently meant the defaults)."""
    if measures is None:
        return None
    if isinstance(measures, str):
        measures = [measures]
    if not isinstance(measures, Iterable):
        raise TypeError(f"measures: expected None, a name or a list of names, got {type(measures).__name__}")
    measures = list(measures)
    if not measures:
        raise ValueError("measures=[]: an empty value; give a name (see 'ulnorm-eval measures'), or None for the "
                         "defaults")
    for m in measures:
        if not isinstance(m, str) or not m.strip():
            raise ValueError(f"measures: {m!r} is not a measure name; give a name (see 'ulnorm-eval measures')")
    return measures


def evaluate(qrels: QrelsLike, runs: RunsLike, measures: Sequence[str] | str | None = None,
             variants: Sequence[str] | str | None = None, options: Options | None = None, *,
             warn: Callable[[str], None] | None = None, **kw: Any) -> Evaluation:
    """Evaluate runs against qrels: per-query values and means of every measure and variant.

    ``measures``: names (``'nDCG@10'``, ``'UL2(AP)'``, trec_eval's ``'map'``; default nDCG@10, AP,
    RBP(p=0.8)); ``variants``: added to every measure (default E and UL2; ``[]`` or ``'none'``: plain
    values; a string as ``--norm``).  Keywords set :class:`Options` and :class:`ReadOptions` fields.  A
    run sharing no query with the qrels (ids compared as text) raises
    :class:`~ulnorm_eval.inputs.errors.InputError` unless ``allow_disjoint``; notes are on ``.notes``
    and told to ``warn(msg)``."""
    opts, reading = _keywords(kw, "evaluate", Options, ReadOptions)
    opts = options or opts
    setup: list = []
    metrics = resolve_metrics(_measure_list(measures), _variant_list(variants),
                              warn=both_notes(setup.append, warn))
    if opts.holes_list and not any(metric.variant in ("LB", "UB") for metric in metrics):
        raise ValueError("holes_list: it names the holes whose grades move the hole bounds; ask for them (variants LB, UB)")
    q = to_qrels(qrels, reading.groups)
    done = evaluate_runs(q, _sources(runs, q), metrics, opts, warn=warn, refuse_disjoint=not reading.allow_disjoint)
    results = list(done)
    rename_runs(results)  # two runs of one name (the same file twice) would collapse in .means: #1, #2
    return Evaluation(metrics=metrics, runs=results, options=done.options, qrels_path=q.path,
                      run_paths=[source.path for source in done.sources], qrels=q, inputs=done.sources, setup_notes=setup)


# --------------------------------------------------------------------------- compare, nrg, tables

def compare(qrels: QrelsLike, runs: RunsLike, measures: Sequence[str] | str | None = None,
            variants: Sequence[str] | str | None = None, *, warn: Callable[[str], None] | None = None,
            hole_bounds: bool = False, **kw: Any) -> Comparison:
    """Compare runs (at least two) as ``ulnorm-eval compare`` does: ``.systems``, ``.summary``, ``.pairs``
    and ``.notes``.  ``variants``: default UL2 for the measures with a closed-form E; ``hole_bounds``: as
    ``compare --holes``.  Keywords are :class:`Options`, :class:`ReadOptions` and
    :func:`ulnorm_eval.analysis.compare.compare`'s (one ``seed`` for all, as on the command line)."""
    opts, reading, settings = _keywords(kw, "compare", Options, ReadOptions, CompareSettings)
    q = to_qrels(qrels, reading.groups)
    variants = _variant_list(variants)
    return compare_files(q, _sources(runs, q), _measure_list(measures), None if variants is None else list(variants), opts,
                         warn, holes=hole_bounds, refuse_disjoint=not reading.allow_disjoint, **vars(settings))


def nrg(qrels: QrelsLike, runs: RunsLike, priors: RunsLike = (), measures: Sequence[str] | str | None = None, *,
        warn: Callable[[str], None] | None = None, allow_disjoint: bool = False, **options: Any) -> NRGEvaluation:
    """Normalized Residual Gain (SIGIR-AP 2024) as ``ulnorm-eval nrg``: each measure and NRG(measure).
    ``priors`` join every prior set and are not scored.  Keywords are the fields of
    :class:`~ulnorm_eval.analysis.nrg.NRGSettings` (``protocol``: 'fixed', 'leave-one-out',
    'chronological' or 'group' with ``group_by`` and ``best_by``; ``unique``) and of :class:`Options`."""
    settings, opts = _keywords(options, "nrg", NRGSettings, Options)
    q = to_qrels(qrels)
    prior = [] if isinstance(priors, (list, tuple)) and not priors else _sources(priors, q)
    if settings.protocol == "fixed" and not prior:  # as the command line: NRG against nothing is the measure itself
        raise NRGError(NO_PRIOR)
    # runs and priors named apart together (#1, #2), as `ulnorm-eval nrg`
    return evaluate_nrg(q, _sources(runs, q), prior, _measure_list(measures), options=opts, warn=warn,
                        refuse_disjoint=not allow_disjoint, rename=True, **vars(settings))


def paper_table(comparison: Comparison, fmt: str = "latex", baseline: str | None = None,
                precision: int = 4, caption: str | None = None, label: str = "tab:results") -> str:
    """A systems x metrics table for a paper (``'latex'`` or ``'markdown'``), as ``compare -f latex``:
    best per column in bold, significance marked with superscripts (see :mod:`ulnorm_eval.render.paper`)."""
    from .analysis.marks import against_baseline
    from .render.paper import paper_table as render

    if isinstance(precision, bool) or not isinstance(precision, int) or not 0 <= precision <= 17:
        raise ValueError(f"precision={precision!r}: is not in the range 0<=x<=17 (as --precision)")
    if baseline is not None:
        comparison = against_baseline(comparison, baseline)
    return render(comparison, fmt, precision=precision, caption=caption, label=label)
