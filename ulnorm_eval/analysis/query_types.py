"""Queries as the papers see them: pool, bounds, how far real runs get above random, and the type.

Karmaker & Feng 2022 §3.3 (= Feng 2023 §3.5) compares the mean of the runs A with the score of a
uniformly random ranking E, here both divided by the query's IUB (a = A/IUB, e = E/IUB in [0, 1]),
with the thresholds of :class:`Thresholds` (the paper gives no numbers):

    ideal          a - e >= ideal_gap                     (default 0.5)
    informative    a - e >= informative_gap               (default 0.2)
    hard           otherwise, if max(a, e) <= hard_below  (default 0.1)
    easy           otherwise, if min(a, e) >= easy_above  (default 0.5)
    uninformative  otherwise (including runs below random; IUB = 0 is hard)

The subsets of §4.4 are :func:`select_subset`: *uninformative* = the N queries with the smallest
|a - e|, *ideal* = the N with the largest a - e (signed: the paper does not state the sign).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .eval_request import RequestBase

__all__ = ["Thresholds", "TYPES", "SUBSETS", "normalised", "classify", "select_subset", "query_table",
           "query_points", "QueriesRequest", "queries_for_request"]

TYPES = ("ideal", "informative", "uninformative", "hard", "easy")
SUBSETS = ("all", "uninformative", "ideal")


@dataclass(frozen=True, kw_only=True)
class Thresholds:
    """Query-type thresholds on the IUB-normalised scale (see the module docstring)."""

    informative_gap: float = 0.2
    ideal_gap: float = 0.5
    hard_below: float = 0.1
    easy_above: float = 0.5

    def __post_init__(self):
        if not 0 <= self.informative_gap <= self.ideal_gap:
            raise ValueError("need 0 <= informative_gap <= ideal_gap")
        if not 0 <= self.hard_below < self.easy_above:
            raise ValueError("need 0 <= hard_below < easy_above")


def normalised(actual, expected, ideal):
    """(a, e) = (A/IUB, E/IUB), both 0 where IUB = 0."""
    actual, expected, ideal = (np.asarray(x, dtype=np.float64) for x in (actual, expected, ideal))
    ok = ideal > 0
    a = np.divide(actual, ideal, out=np.zeros_like(actual), where=ok)
    e = np.divide(expected, ideal, out=np.zeros_like(expected), where=ok)
    a[np.isnan(actual)] = np.nan
    return a, e


def classify(actual, expected, ideal, thresholds: Thresholds | None = None) -> np.ndarray:
    """Query type of Karmaker & Feng 2022 §3.3 for each query (object array of str; '' where A is NaN)."""
    t = thresholds or Thresholds()
    a, e = normalised(actual, expected, ideal)
    gap = a - e
    out = np.full(len(a), "uninformative", dtype=object)
    out[np.maximum(a, e) <= t.hard_below] = "hard"
    out[np.minimum(a, e) >= t.easy_above] = "easy"
    out[gap >= t.informative_gap] = "informative"
    out[gap >= t.ideal_gap] = "ideal"
    out[np.isnan(a)] = ""
    return out


def select_subset(actual, expected, ideal, kind: str = "all", size: int | None = None) -> np.ndarray:
    """Sorted indices of a Karmaker & Feng 2022 §4.4 query set of the runs' mean plain scores ``actual``, E
    and IUB per query: 'all'; 'uninformative', the ``size`` (default half) with the smallest |a - e|;
    'ideal', those with the largest a - e (ties: the earlier query; a NaN score never chosen)."""
    a, e = normalised(actual, expected, ideal)
    n = len(a)
    if kind == "all":
        return np.arange(n)
    if kind not in SUBSETS:
        raise ValueError(f"unknown subset {kind!r} ({', '.join(SUBSETS)})")
    size = n // 2 if size is None else int(size)
    valid = int((~np.isnan(a)).sum())
    if not 1 <= size <= valid:
        raise ValueError(f"subset size (--subset-size) must lie in 1..{valid} (queries with a score), got {size}")
    gap = a - e
    key = np.abs(gap) if kind == "uninformative" else -gap
    key = np.where(np.isnan(key), np.inf, key)
    return np.sort(np.argsort(key, kind="stable")[:size])


@dataclass(frozen=True, kw_only=True)
class TableInputs:
    """How :func:`query_table` evaluates: with the runs' hole bounds; a run sharing no query with the qrels refused."""

    holes: bool = False
    refuse_disjoint: bool = False


def query_table(qrels, runs=(), measures=None, options=None, thresholds: Thresholds | None = None,
                warn=None, executor=None, **kw):
    """One row per (query, measure): pool size, relevant, E, IUB, WLB, mean over runs, gap, type (a
    pandas DataFrame in query order; no mean or type without runs).  Under ``--pool run`` or ``union``
    the bounds are averaged over the runs; ``holes``: also the runs' mean ``LB`` and ``UB`` over the holes
    of all the runs.  Notes in ``attrs['notes']`` (and told to ``warn``); ``executor``: a parallel.py
    executor holding the same qrels; ``refuse_disjoint``: as :class:`TableInputs`."""
    import dataclasses

    import pandas as pd
    import pyarrow as pa

    from ..core.pools import make_pool
    from ..pipeline import evaluate as api
    from ..pipeline.blocks import shared_pool
    from ..pipeline.orchestrator import evaluate_runs
    from ..pipeline.ordering import judgements, natural_order, qrels_queries
    from ..core.keywords import split_keywords
    from ..inputs.trec import Run

    (given,) = split_keywords(kw, TableInputs, where="query_table")
    holes = given.holes
    options = options or api.Options()
    qrels = api.load_qrels(qrels)
    runs = list(runs)
    if not runs and options.pool == "run":
        raise ValueError("--pool run needs at least one run")
    plain, metrics = _query_metrics(measures, bool(holes and runs))
    qids = natural_order(qrels_queries(qrels))
    J = judgements(qrels, qids)
    pooled = bool(runs) and options.pool in ("run", "union")  # each run's own pool: its ranking is kept
    empty = pa.array([], pa.string())
    no_run = Run(qid=empty, docid=empty, score=np.zeros(0), rank=np.zeros(0), name="(none)")
    results = list(evaluate_runs(qrels, runs or [no_run], metrics, dataclasses.replace(options, run_queries_only=False),
                                 executor, warn=warn if runs else None, ranked=pooled,
                                 refuse_disjoint=given.refuse_disjoint))
    pool_n = (np.mean([make_pool(options.pool, rr.ranked.ranking, J).n for rr in results], axis=0) if pooled
              else shared_pool(qrels, options, J).n)
    if np.all(pool_n == np.round(pool_n)):
        pool_n = pool_n.astype(np.int64)
    cols = {"query": qids, "pool": pool_n}
    how = (J, options, thresholds, bool(holes and runs))
    parts = [pd.DataFrame(_measure_columns(m, (results, bool(runs)), metrics, cols, how)) for m in plain]
    out = pd.concat(parts, ignore_index=True)
    order = {q: i for i, q in enumerate(qids)}
    out = out.sort_values("query", key=lambda s: s.map(order), kind="stable").reset_index(drop=True)
    out.attrs["notes"] = [n for res in results[: len(runs)] for n in res.notes]
    return out


def query_points(table) -> dict:
    """What ``queries --plot`` draws of :func:`query_table`'s ``table``: measure -> (e, a, types), e = E/IUB
    and a = A/IUB per query (a NaN without runs) and the query types (Karmaker & Feng 2022 Fig. 1, 2)."""
    out = {}
    for meas in dict.fromkeys(table["measure"]):
        sub = table[table["measure"] == meas]
        a, e = normalised(sub["mean"].to_numpy(), sub["E"].to_numpy(), sub["IUB"].to_numpy())
        out[meas] = (e, a, sub["type"].to_numpy())
    return out


def _query_metrics(measures, holes: bool) -> tuple:
    """The plain measures of ``measures`` and the metrics evaluated for them: each with E, IUB and
    WLB (``holes``: LB and UB too, for the measures that have them)."""
    from ..core.registry import Metric
    from ..pipeline import evaluate as api

    plain = [m for m in api.resolve_metrics(measures, [], numeric_only=True) if not m.variant]
    metrics = [x for m in plain for x in (m, Metric(m.measure, "E"), Metric(m.measure, "IUB"),
                                          Metric(m.measure, "WLB"))]
    if holes:
        from .gate import hole_metrics
        metrics += hole_metrics(plain)
    return plain, metrics


def _measure_columns(m, evaluated: tuple, metrics: list, cols: dict, how: tuple) -> dict:
    """The columns of plain measure ``m``'s rows: ``evaluated`` = (the RunResults, whether there are
    runs), ``cols`` the query and pool columns, ``how`` = (judgements, options, thresholds,
    whether the hole bounds are shown)."""
    from ..core.registry import Metric

    results, any_runs = evaluated
    J, options, thresholds, with_holes = how
    qids = cols["query"]

    def avg(metric):
        return np.mean([res.values[metric] for res in results], axis=0)

    rel = m.measure.get("rel")
    rel = options.rel_level if rel is None else rel
    E, I, W = (avg(Metric(m.measure, v)) for v in ("E", "IUB", "WLB"))
    A = (np.nanmean(np.vstack([res.values[m] for res in results]), axis=0) if any_runs
         else np.full(len(qids), np.nan))
    a, e = normalised(A, E, I)
    out = {"query": qids, "measure": str(m), "pool": cols["pool"], "relevant": J.n_relevant(rel).astype(np.int64),
           "E": E, "IUB": I, "WLB": W, "mean": A}
    if with_holes:  # the runs' mean hole bounds beside their mean (NaN: no hole bounds)
        have = Metric(m.measure, "LB") in metrics
        for v in ("LB", "UB"):
            out[v] = avg(Metric(m.measure, v)) if have else np.full(len(qids), np.nan)
    return {**out, "gap": a - e, "type": classify(A, E, I, thresholds)}


@dataclass(frozen=True, kw_only=True)
class QueriesRequest(RequestBase):
    """What `ulnorm-eval queries` asks for: :class:`RequestBase`'s fields and the query-type thresholds."""

    thresholds: Thresholds = field(default_factory=Thresholds)
    holes: bool = False


def queries_for_request(request: QueriesRequest, notes: list):
    """Read the qrels and runs of ``request`` (a run sharing no query with the qrels refused, gains that
    overflow refused) and build :func:`query_table`; notes for stderr are appended to ``notes``."""
    from ..pipeline import evaluate as api
    from ..pipeline.parallel import executor
    from ..pipeline.run_checks import refuse_non_finite_frame, require_finite_gains

    if request.holes and api.holes_note(request.measures):
        notes.append(api.holes_note(request.measures))
    q = api.load_qrels(request.qrels, groups=request.groups)
    require_finite_gains(q, request.measures, request.qrels, request.options.rel_level)
    # -j auto: sequential (each run's ranking comes back from its worker: more CPU than the workers save)
    with executor(q, request.jobs, request.scheduler, request.scheduler_timeout, len(request.runs), False) as ex:
        table = query_table(q, request.runs, request.measures, request.options, request.thresholds, notes.append, ex,
                            holes=request.holes, refuse_disjoint=not request.allow_disjoint)
    refuse_non_finite_frame(table, ("E", "IUB", "WLB", "mean"), request.qrels)
    return table
