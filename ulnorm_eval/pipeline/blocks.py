"""The one evaluation pipeline: a block of queries in, per-query values out (:func:`score_block`: order,
join, measures, bounds and variants), a run finished by :func:`finish_run` ('all' row, notes).  A query's
values do not depend on its block (Monte Carlo draws are keyed by seed and query id): any blocking gives
the same numbers to the last bit."""
from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field, replace

import numpy as np

from ..core.holes import World, hole_values
from ..core.intervals import (ORDERINGS, aggregate_intervals, means_interval, min_queries, prepare_counts,
                              randomisation_interval)
from ..core.kernels import Judgements, Level, Ranking
from ..core.measures import compute
from ..core.measures.trec import codes, judged_only
from ..core.pools import judged_only_pool, make_pool, placeholders
from ..core.registry import PRIOR_VARIANTS, VARIANTS, Metric, UnknownMeasure, paper_measure
from ..core.variants import CONDENSED_VARIANTS, DEFAULT_WORLD, HOLE_VARIANTS
from ..core.summary import GMEAN_FLOOR, summarise
from ..inputs.trec import BOM_KEPT, InputError, Qrels, Run, read_bytes, read_run
from .ordering import RankedRun, judgements, natural_order, prepare_join, qrels_queries, rank_run, run_queries

__all__ = ["Options", "RunResult", "Block", "query_set", "plain_values", "metric_values", "score_block",
           "finish_run", "summary_row", "condensed", "input_notes", "undefined_note", "refuse_prior_variants",
           "summary_parts", "plain_intervals", "random_intervals", "below_random_note", "prepare",
           "Note", "pool_words", "candidates", "candidates_note", "shared_pool", "letor_pool"]


@dataclass(kw_only=True)
class Options:
    """Every knob that changes a number; stored in the output's meta."""

    rel_level: float = 1
    depth: int | None = None
    ties: str = "score"
    score_precision: str = "float64"
    run_queries_only: bool = False
    pool: str = "qrels+1000"  # docs/bounds.md, "The decision": qrels+N, qrels, run, union, or a candidate file's path
    pool_depth: int = 100  # --pool FILE: each query's top pool_depth documents of the file are its candidates
    expectation: str = "exact"
    undefined: str = "zero"
    permutations: int = 1000
    seed: int = 0
    judged_only: bool = False  # trec_eval -J: unjudged documents removed from every ranking (and pool)
    num_docs: int = 0  # trec_eval -N: documents in the collection (utility)
    complete: bool = False  # trec_eval -c given: its -c-only rule for num_rel's 'all' row applies
    trec_version: str = "10"  # '9': trec_eval <= 9's (long)(x R + 0.9) recall counts (iprec_at_recall, 11pt_avg)
    holes: str = DEFAULT_WORLD  # LB/UB's world (core.holes.World, DEFAULT_WORLD): closed, open, open=N, open=P%, open=est
    # the closed world over the runs given: (qid, n) per query, n the distinct documents the command's runs
    # retrieved that the qrels lack (their shared holes); empty: the run's own holes only.  Not in the meta
    holes_pool: tuple = ()
    holes_ceiling: tuple = ()  # --holes open=est: (qid, ceiling) per query (core.holes.yield_ceiling); not in the meta
    holes_list: int = 0  # --holes-list N: name the N unjudged documents whose grades move the most bounds; not in the meta
    holes_listed: tuple = ()  # their (qid, docid, weight, runs, best rank) (core.holes.judge_next); not in the meta
    holes_samples: int = 1000  # BS/BSLO/BSHI: bootstrap samples of the holes' grades (seeded by seed)
    holes_prior: str = "pool"  # BS: the holes' grades drawn from the query's judged grades (pool), the run's, or their mix
    trec_nan: bool = False  # trec_eval's -nan values and -c placeholder leaks reproduced (docs/trec_eval.md)
    zscore: str | None = None  # trec_eval's -Z file: per-query values become (value - mean) / sd
    ci: float | None = None  # eval --ci: the level of every 'all' row's interval over the topics (None: none)
    # the normalisations' randomisation intervals (random_intervals): drawn only when an output prints them.  Not in the meta
    random_intervals: bool = False

    def __post_init__(self):
        """The command line's checks, for the library (which builds Options from keywords)."""
        level = float(self.rel_level)
        if not level >= 0 or level == float("inf"):  # NaN too
            raise ValueError(f"rel_level={self.rel_level!r}: " + (LEVEL_BELOW_ZERO if level < 0 else
                                                                  "not a finite number"))
        if self.pool not in ("run", "qrels", "union") and placeholders(self.pool) is None and not (
                isinstance(self.pool, str) and os.path.isfile(self.pool)):
            raise ValueError(f"pool={self.pool!r}: expected 'run', 'qrels', 'union', 'qrels+N' (N unjudged placeholders "
                             "beside the judged documents) or the path of a candidate file")
        for name, (fits, expected) in _CHECKS.items():
            if not fits(getattr(self, name)):
                raise ValueError(f"{name}={getattr(self, name)!r}: {expected}")
        World.parse(self.holes)  # ValueError naming the worlds


# The random draws are keyed by a 64-bit seed (core/draws.py): a larger or negative seed would wrap onto
# another one (2**64 gave the bytes of 0) and is refused, by the command line (--seed) and the library
MAX_SEED = 2 ** 64 - 1
SEED_RANGE = "a seed is a whole number from 0 to 2**64 - 1 (18446744073709551615)"


def _whole(low: int, high: float = float("inf"), none: bool = False):
    """A check that a value is a whole number from ``low`` to ``high`` (``none``: or None)."""
    return lambda value: (none and value is None) or (isinstance(value, int) and low <= value <= high)


# each Options field's check and what it expects (the command line's choices and ranges), in order
_CHOICES = {"ties": ("score", "rank", "file"), "score_precision": ("float64", "float32"), "expectation": ("exact", "paper"),
            "undefined": ("zero", "skip"), "trec_version": ("10", "9"), "holes_prior": ("run", "pool", "mix")}
_CHECKS = {
    "pool_depth": (_whole(1), "expected a positive integer (--pool-depth)"),
    **{name: (allowed.__contains__, f"expected one of {', '.join(map(repr, allowed))}") for name, allowed in _CHOICES.items()},
    "depth": (_whole(1, none=True), "expected None or a positive integer (-M)"),
    "permutations": (_whole(10, 1_000_000), "expected 10 to 1,000,000 (memory grows with them)"),
    "holes_samples": (_whole(1, 1_000_000), "expected 1 to 1,000,000 (memory grows with them)"),
    "seed": (lambda value: not isinstance(value, bool) and isinstance(value, (int, np.integer)) and 0 <= value <= MAX_SEED,
             SEED_RANGE),
    "ci": (lambda value: value is None or (isinstance(value, float) and 0 < value < 1),
           "expected None or the interval's level, strictly between 0 and 1 (0.95)"),
}


LEVEL_BELOW_ZERO = ("a relevance level below 0 is refused: trec_eval's codes would count unjudged documents "
                    "(code -1) as relevant in some measures and not in others (num_rel_ret above num_rel, bpref "
                    "above 1); -l 0 counts every judged document of grade 0 or more")


@dataclass(kw_only=True)
class RunResult:
    """One run's results: per-query values in ``qids``' order, the 'all' row, and what it counted."""

    name: str
    qids: list
    values: dict  # Metric -> per-query np.ndarray (NaN = undefined and skipped)
    mean: dict  # Metric -> float (the family's summary rule: mean, sum or geometric mean)
    stderr: dict = field(default_factory=dict)  # Metric -> per-query Monte Carlo standard error
    undefined: dict = field(default_factory=dict)  # Metric -> count of undefined queries
    float32_ties: int = 0
    missing_qids: list = field(default_factory=list)  # query-set queries the run has nothing for, in query order
    ignored_qids: list = field(default_factory=list)  # run queries absent from the qrels, in natural order
    notes: list = field(default_factory=list)  # one-line notes for stderr, in order
    tag: str | None = None  # the run's tag (its last line's, trec_eval's runid); None when not a TREC run
    interval: dict = field(default_factory=dict)  # Metric -> (lo, hi): a normalisation's 'all' row minus a random ordering's, 95%
    ci: dict = field(default_factory=dict)  # eval --ci: Metric -> (lo, hi), the 'all' row's bootstrap interval over the topics
    # asked of the orchestrator (pipeline/orchestrator.py): per-query values under other options where they
    # move the run's documents (None: they move none, the values above hold), and the ranked run
    again: dict | None = None
    ranked: RankedRun | None = None
    # Metric -> per query (in qids' order), True where the variant is undefined (the table marks them)
    undefined_queries: dict = field(default_factory=dict)

    @property
    def missing(self) -> int:
        return len(self.missing_qids)

    @property
    def mean_stderr(self) -> dict:
        """Metric -> the standard error of the 'all' row of a Monte Carlo measure, from independent
        per-query estimates: sqrt(sum se_i^2) / n over the n defined queries (NaN when none is)."""
        out = {}
        for metric, stderr in self.stderr.items():
            defined = ~np.isnan(self.values[metric])
            count = int(defined.sum())
            out[metric] = float(np.sqrt(np.sum(np.square(stderr[defined]))) / count) if count else float("nan")
        return out

    @property
    def ignored(self) -> int:
        return len(self.ignored_qids)


@dataclass(kw_only=True)
class Block:
    """A block of a run's queries scored (a query block of its file, the whole run, or its blocks merged):
    values and counts; picklable (pipeline.parallel), lines relative to the block's first line."""

    name: str | None = None  # the run's name (None: a block of comments only)
    qids: list = field(default_factory=list)  # the scored queries
    values: dict = field(default_factory=dict)
    stderr: dict = field(default_factory=dict)
    undefined: dict = field(default_factory=dict)
    again: dict | None = None  # values under the other options asked for, when they move a document
    ranked: RankedRun | None = None
    float32_ties: int = 0
    judged: tuple = (0, 0)  # (ranked documents within -M, of which in the qrels)
    run_qids: list = field(default_factory=list)  # the block's run queries, in order of first appearance ...
    first_lines: list = field(default_factory=list)  # ... and the block-relative line of each one's first line
    lines: int = 0  # newlines in the block
    skipped: int = 0
    extra: int = 0
    tag: str | None = None  # the block's last line's tag (trec_eval's runid is the file's last)
    regrouped: tuple | None = None  # (qid, block-relative line) of a query back after other queries
    error: tuple | None = None  # (reason, block-relative line) of an error met after parsing


def refuse_prior_variants(metrics) -> None:
    """NRG/UC score a run against other runs (analysis.nrg), which a one-run evaluation cannot supply."""
    prior = [m for m in metrics if m.variant in PRIOR_VARIANTS]
    if prior:
        raise UnknownMeasure(f"{prior[0]} needs prior runs: use 'ulnorm-eval nrg QRELS RUN --prior RUN'")


def query_set(qrels: Qrels, run: Run, options: Options) -> list:
    """The queries a run is evaluated on: every qrels query, or (--run-queries-only) those it ranked."""
    qids = qrels_queries(qrels)
    if options.run_queries_only:
        have = set(run_queries(run)[0].to_pylist())
        qids = [q for q in qids if q in have]
    return natural_order(qids)


def plain_values(rr: RankedRun, J: Judgements, m, qrels: Qrels, options: Options) -> np.ndarray:
    """Per-query values of one measure: its family's kernel, or ir_measures for other measures."""
    if m.native:
        return compute(rr.ranking, J, m, Level.of(options, rr.present))
    from . import irm_adapter
    return irm_adapter.foreign_values(rr, J, m, qrels, options)


def condensed(rr: RankedRun) -> RankedRun:
    """The ranked run without its unjudged documents (not in the qrels, or graded below 0), ranks closed
    up: trec_eval's -J, Sakai 2007's condensed list."""
    keep = codes(rr.ranking) >= 0
    return replace(rr, ranking=judged_only(rr.ranking), _take=None if rr._take is None else rr._take[keep])


def per_row(rk, J: Judgements, pairs: tuple, default: float = np.inf):
    """Per row of a ranking, the value of its query in ``pairs`` ((qid, value); None without pairs)."""
    if not pairs:
        return None
    values = dict(pairs)
    return np.array([values.get(J.qids[b], default) for b in rk.base], dtype=np.float64)


def others_holes(rk, J: Judgements, pool: tuple):
    """Per row of a run's ranking, the holes of the other runs of the command it did not retrieve: the
    pool's count for the row's query less the run's own holes (None without a pool)."""
    if not pool:
        return None
    U = per_row(rk, J, pool, 0.0)
    own = rk.rowsum(np.zeros(len(rk.row)) if rk.judged is None else (~np.asarray(rk.judged, bool)).astype(np.float64))
    return np.maximum(U - own, 0.0)


def metric_values(rr: RankedRun, J: Judgements, metrics: list, qrels: Qrels, options: Options, whole):
    """Per-query values of every metric for a ranked run: (values, standard errors, undefined masks).
    ``whole``: the ranking before -J, which the hole bounds read (a hole given a grade is judged).  Under
    ``--expectation paper`` a measure is scored as ``registry.paper_measure`` makes it, under its name."""
    refuse_prior_variants(metrics)
    metrics = list(metrics) + summary_parts(metrics)  # the 'all' rows and a note read them (finish_run)
    if options.expectation != "paper":
        return _metric_values(rr, J, metrics, qrels, options, whole)
    scored = {m: Metric(paper_measure(m.measure), m.variant) for m in metrics}
    v, se, und = _metric_values(rr, J, list(dict.fromkeys(scored.values())), qrels, options, whole)
    return ({m: v[s] for m, s in scored.items()}, {m: se[s] for m, s in scored.items() if s in se},
            {m: und[s] for m, s in scored.items() if s in und})


def _metric_values(rr: RankedRun, J: Judgements, metrics: list, qrels: Qrels, options: Options, whole):
    values, stderr, undefined = {}, {}, {}
    plain = {measure: plain_values(rr, J, measure, qrels, options) for measure in dict.fromkeys(m.measure for m in metrics)}
    cond = [m for m in metrics if m.variant in CONDENSED_VARIANTS]
    if cond:  # Sakai 2007's condensed list: the plain measure on the ranking without its unjudged documents
        rc = condensed(rr)
        done = {measure: plain_values(rc, J, measure, qrels, options) for measure in dict.fromkeys(m.measure for m in cond)}
        values.update({m: done[m.measure] for m in cond})
    holes = [m for m in metrics if m.variant in HOLE_VARIANTS]
    if holes:
        values.update(hole_values(whole, J, holes, Level.of(options, rr.present), options, stderr,
                                  others_holes(whole, J, options.holes_pool), per_row(whole, J, options.holes_ceiling)))
    pooled = [m for m in metrics if m.variant and m.variant not in HOLE_VARIANTS + CONDENSED_VARIANTS]
    if pooled:
        from ..core.expectations import variant_values

        from . import irm_adapter

        shared = (lambda: candidates(qrels, options, J.qids)) if _file_pool(options) else None
        vv, se, und = variant_values(rr, J, pooled,
                                     plain, options, irm_adapter,
                                     cache=qrels.cache.setdefault("bounds", {}), candidates=shared)
        values.update(vv)
        stderr.update(se)
        undefined.update(und)
    for m in metrics:
        if not m.variant:
            values[m] = plain[m.measure]
    return values, stderr, undefined


def score_block(qrels: Qrels, run: Run, qids: list, metrics: list, options: Options, again=None) -> Block:
    """Order and join ``run`` on ``qids``, then every metric's per-query values.  ``again`` = (changes
    to ``options``, metrics): those metrics' values under the changed options, computed only when the
    run's documents change place under them (``float32_ties``); otherwise the values computed here."""
    if options.trec_nan and run.meta.get("bom"):
        raise InputError(run.path, 1, BOM_KEPT)
    rr = rank_run(run, qrels, qids, ties=options.ties, score_precision=options.score_precision,
                  depth=options.depth)
    whole = rr.ranking
    if options.judged_only:  # -J after -M, as trec_eval; `present` keeps what the run retrieved
        rr = condensed(rr)
    J = judgements(qrels, qids)
    values, stderr, undefined = metric_values(rr, J, metrics, qrels, options, whole)
    other = None
    if again is not None and rr.float32_ties:
        changes, wanted = again
        other = score_block(qrels, run, qids, wanted, replace(options, **changes)).values
    return Block(name=run.name, qids=qids, values=values, stderr=stderr, undefined=undefined, again=other, ranked=rr,
                 float32_ties=rr.float32_ties, judged=rr.judged)


def prepare(qrels: Qrels, metrics: list, options: Options) -> None:
    """Build now what the first run of a track builds for the qrels' query set: the join's tables, the
    judgements and the plain measures' per-query tables (on an empty ranking), the bootstrap's count
    matrix, the randomisation null, the lazy imports.  A local pool calls this before it forks, so that
    no worker builds them again (docs/performance.md)."""
    if qrels.letor:
        return
    qids = natural_order(qrels_queries(qrels))
    if not qids:
        return
    prepare_join(qrels, qids)
    J = judgements(qrels, qids)
    empty = Ranking(np.zeros(0, np.int64), np.zeros(0), len(qids), np.arange(len(qids)), np.zeros(0, bool))
    level = Level.of(options, np.zeros(len(qids), bool))
    measures = dict.fromkeys(paper_measure(m.measure) if options.expectation == "paper" else m.measure
                             for m in list(metrics) + summary_parts(metrics))
    with warnings.catch_warnings(), np.errstate(all="ignore"):  # values thrown away: nothing to say about them
        warnings.simplefilter("ignore")
        for measure in measures:
            if measure.native:
                compute(empty, J, measure, level)
    if any(_pooled(m) for m in metrics):
        from ..core import expectations  # noqa: F401 - imported once here, not in every worker
    if options.ci is not None:
        prepare_counts(len(qids), seed=options.seed)
    if options.random_intervals:  # the randomisation null of the query set, drawn once before the workers fork
        _null_values(qrels, options, qids, [m.measure for m in _normalised(metrics)])


MISSING_ZSCORE = -1000000.0  # trec_eval.h MISSING_ZSCORE_VALUE
_ZSCORES: dict = {}  # path -> its table, read once per process


def zscore_values(metrics: list, values: dict, qids: list, path: str) -> dict:
    """trec_eval's -Z (convert_zscores.c): each plain measure's per-query value v becomes (v - mean) / sd
    with its query's and trec_eval name's mean and sd in the file; -1000000 where the file has no line
    (or sd = 0 and v differs from the mean; 0 where it equals it).  A geometric mean's v is
    log(max(v, 1e-5)), as gm_map holds per query; num_q is left as it is."""
    from ..inputs.tables import read_zscores

    table = _ZSCORES.get(path)
    if table is None:
        table = _ZSCORES[path] = read_zscores(path)
    out = dict(values)
    for m in metrics:
        rec = m.measure.record
        if m.variant or (rec is not None and (rec.value == "text" or (rec.summary == "sum" and not rec.per_query))):
            continue
        name = m.measure.trec_name()
        v = np.asarray(values[m], dtype=np.float64)
        if m.summary == "gmean":
            v = np.log(np.maximum(v, GMEAN_FLOOR))
        mu, sd = np.array([table.get((str(q), name), (np.nan, np.nan)) for q in qids], np.float64).reshape(-1, 2).T
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.where(sd != 0, (v - mu) / sd, np.where(v == mu, 0.0, MISSING_ZSCORE))
        out[m] = np.where(np.isnan(mu), MISSING_ZSCORE, z)
    return out


def _pooled(m) -> bool:
    """Whether ``m`` is a variant built on the random-ranking bounds (E, IUB, WLB, a normalisation, DB)."""
    return bool(m.variant) and VARIANTS[m.variant].kind in ("bound", "ratio", "distribution")


def summary_parts(metrics: list) -> list:
    """What the 'all' rows and :func:`below_random_note` read besides ``metrics``: A and E of every measure
    with a variant on the random-ranking bounds, IUB and WLB of every normalised one (computed anyway)."""
    have, out = set(metrics), []
    for m in metrics:
        if not _pooled(m):
            continue
        need = [None, "E"] + (["IUB", "WLB"] if VARIANTS[m.variant].kind == "ratio" else [])
        for v in need:
            x = Metric(m.measure, v)
            if x not in have:
                have.add(x)
                out.append(x)
    return out


def plain_intervals(metrics: list, values: dict, qids: list, options) -> dict:
    """{Metric: (lo, hi)} under ``eval --ci`` (the level): the percentile bootstrap interval over the
    queries of every 'all' row that is a mean (core.intervals.aggregate_intervals, seeded by ``--seed``)."""
    shown = [m for m in metrics if options.ci is not None and m.summary == "mean" and getattr(m.measure.record, "value",
             "float") != "text" and (m.variant is None or VARIANTS.get(m.variant) and VARIANTS[m.variant].kind == "ratio")]
    if not shown:
        return {}
    order = np.argsort(np.asarray(qids, dtype=object), kind="stable")  # as the 'all' row: blocking-independent
    columns = [np.asarray(values[m], dtype=np.float64)[order] for m in shown]
    return dict(zip(shown, aggregate_intervals(columns, options.ci, options.seed)))


def _normalised(metrics: list) -> list:
    """The normalisations among ``metrics`` (UL1, UL2, MM, EB, EM, UEW) of native measures: those with a
    randomisation interval."""
    return [m for m in metrics if m.variant in VARIANTS and VARIANTS[m.variant].kind == "ratio" and m.measure.native]


def _null_values(qrels: Qrels, options: Options, qids: list, measures: list) -> dict:
    """{measure: K x queries}: each measure's values on K = 999 random orderings of each query's pool (a
    pool the same for every run), kept per query on the qrels: drawn once per command and query set."""
    from ..core.draws import Keys
    from ..core.expectations import bounds_key, random_orderings

    J = judgements(qrels, qids)
    scored = {m: paper_measure(m) if options.expectation == "paper" else m for m in dict.fromkeys(measures)}
    store = {m: qrels.cache.setdefault(("null",) + bounds_key(s, options), {}) for m, s in scored.items()}
    todo = [m for m in scored if any(q not in store[m] for q in qids)]
    if todo:
        pool = shared_pool(qrels, options, J)
        level = Level.of(options, trec_nan=False)
        for judged_only in (False, True):  # -J (or a measure's judged_only): a random ordering of what -J keeps
            group = [m for m in todo if bool(options.judged_only or scored[m].get("judged_only")) == judged_only]
            if group:
                drawn = random_orderings(judged_only_pool(pool) if judged_only else pool, J, [scored[m] for m in group],
                                         level, ORDERINGS, Keys(options.seed, J.qids))
                for m, values in zip(group, drawn):
                    store[m].update(zip(qids, values.T))
    return {m: np.column_stack([store[m][q] for q in qids]) if qids else np.zeros((ORDERINGS, 0)) for m in scored}


def random_intervals(metrics: list, values: dict, mean: dict, qids: list, options: Options, qrels=None) -> dict:
    """{Metric: (lo, hi)}: for every normalisation under a pool the same for every run, the 95%
    randomisation interval of its 'all' row minus a random ordering's (core.intervals.randomisation_interval,
    on 999 orderings of each query's pool, undefined queries as ``--undefined`` scores them).  Empty under
    ``--pool run`` or ``union``, whose pool is each run's own."""
    shown = _normalised(metrics)
    if not shown or qrels is None or options.pool in ("run", "union") or not qids:
        return {}
    null = _null_values(qrels, options, qids, [m.measure for m in shown])
    out = {}
    for m in shown:
        I, E, W = (np.asarray(values[Metric(m.measure, v)], dtype=np.float64) for v in ("IUB", "E", "WLB"))
        with np.errstate(invalid="ignore", divide="ignore"):
            per, undefined = VARIANTS[m.variant].normalise(null[m.measure], I, E, W)
        per = np.where(undefined | np.isnan(per), 0.0 if options.undefined == "zero" else np.nan, per)
        with np.errstate(invalid="ignore"):
            out[m] = randomisation_interval(mean[m], np.nanmean(per, axis=1) if per.size else per[:, 0])
    return out


def summary_row(metrics: list, values: dict, qids: list, options: Options, *, tag=None, qrels=None) -> dict:
    """The 'all' row: each metric's summary rule, summed in trec_eval's query order (qid byte order);
    'run' rows are the run's tag, 'none' rows NaN; ``complete_summary`` (num_rel) under trec_eval's -c.
    A variant's is the mean of its per-query values (``core.records.VARIANT_AGGREGATE``)."""
    byte_order = np.argsort(np.asarray(qids, dtype=object), kind="stable")  # str order = UTF-8 byte order
    mean = {}
    for m in metrics:
        rec = m.measure.record
        if m.summary == "run":
            mean[m] = tag
        elif m.summary == "none":
            mean[m] = float("nan")
        elif rec is not None and rec.complete_summary and options.complete and qrels is not None:
            mean[m] = rec.complete_summary(judgements(qrels, qids), Level.of(options))
        elif m.summary == "gmean" and options.zscore:  # the values are z-scores of log(v)
            mean[m] = float(np.exp(summarise(values[m], byte_order)))
        elif options.trec_nan and not m.variant and np.isnan(values[m]).any():
            mean[m] = float("nan")  # --trec-nan: trec_eval's mean of a -nan is -nan
        else:
            mean[m] = summarise(values[m], byte_order, m.summary)
    return mean


def finish_run(qrels: Qrels, path: str, metrics: list, options: Options, run: Block) -> RunResult:
    """A run's result from its blocks merged into one (``run``: its queries in natural order, the values
    of every metric and part, an undefined mask per query, every query it ranked in ``run_qids``): the
    'all' row (:func:`summary_row`) and its notes."""
    name, qids, values, stderr, seen = run.name, run.qids, run.values, run.stderr, set(run.run_qids)
    missing, ignored = [q for q in qids if q not in seen], natural_order(seen.difference(qrels_queries(qrels)))
    stale = [m for m in metrics if options.trec_nan and not m.variant and getattr(m.measure.record, "trec_stale", None)]
    if stale:  # trec_eval's leaks of an earlier query's state (the record's), before -Z as in trec_eval
        J = judgements(qrels, qids)
        values = {**values, **{m: m.measure.record.trec_stale(values[m], J) for m in stale}}
    if options.zscore:
        values = zscore_values(metrics, values, qids, options.zscore)
    mean = summary_row(metrics, values, qids, options, tag=run.tag, qrels=qrels)
    notes = input_notes(path, run, len(missing), len(ignored), len(qids), options.ties)
    if any(map(_pooled, metrics)):
        notes += candidates_note(qrels, options, qids, name)
    shown = set(metrics)  # a withheld bound of a part (summary_parts) is counted where it is shown, not here
    masks = {m: np.asarray(mask, bool) for m, mask in run.undefined.items() if m in shown}
    undefined = {m: int(np.count_nonzero(mask)) for m, mask in masks.items()}
    interval = random_intervals(metrics, values, mean, qids, options, qrels) if options.random_intervals else {}
    ci = plain_intervals(metrics, values, qids, options)
    notes += [note for note in (undefined_note(name, undefined, options),
                                below_random_note(name, metrics, values, options, interval),
                                withheld_note(name, values, options, ci)) if note]
    values = {m: values[m] for m in metrics}  # the parts (summary_parts) served the 'all' row and the note
    stderr = {m: v for m, v in stderr.items() if m in values}
    return RunResult(name=name, qids=qids, values=values, mean=mean, stderr=stderr, undefined=undefined,
                     float32_ties=run.float32_ties, missing_qids=missing, ignored_qids=ignored, notes=notes, tag=run.tag,
                     interval=interval, ci=ci, again=run.again,
                     undefined_queries={m: mask for m, mask in masks.items() if mask.any()})


POOL_QUESTION = {  # what a random ranking is under each --pool, in words (captions, notes, docs)
    "run": "a shuffle of the run's own ranked documents",
    "qrels": "a shuffle of the judged documents",
    "union": "a shuffle of the judged documents and the run's unjudged ones",
}


def pool_words(options) -> str:
    """What a random ranking is under ``options.pool``, in words, and the option that says it."""
    pool, extra = options.pool, placeholders(options.pool)
    if pool in POOL_QUESTION:
        return f"{POOL_QUESTION[pool]} (--pool {pool})"
    if extra is not None:  # where it departs from the papers, said where the number is printed
        return (f"a shuffle of the judged documents and {extra:,} unjudged ones (--pool {pool}; Karmaker & Feng 2022 "
                "shuffle a query's candidates, --pool FILE, which an ad hoc run has none of)")
    return (f"a shuffle of each query's top {options.pool_depth} documents of {os.path.basename(pool)}, the candidates "
            f"(--pool FILE --pool-depth {options.pool_depth})")


def candidates(qrels: Qrels, options: Options, qids: list):
    """``--pool FILE``: the Ranking of each query's top ``options.pool_depth`` documents of the file, as a
    run's are taken, joined with the qrels: the pool every run shares (read once, kept on the qrels)."""
    key = ("candidates", options.pool)
    if key not in qrels.cache:
        qrels.cache[key] = read_run(options.pool, data=read_bytes(options.pool))
    return rank_run(qrels.cache[key], qrels, qids, ties=options.ties, score_precision=options.score_precision,
                    depth=options.pool_depth).ranking


def letor_pool(options: Options, qrels: Qrels) -> Options:
    """On LETOR data every candidate is judged and a score file ranks every one: the pool is the
    candidates, the judged documents, so 'qrels+N' adds no placeholder there (--pool qrels)."""
    if qrels.letor and placeholders(options.pool) is not None:
        return replace(options, pool="qrels")
    return options


def _file_pool(options: Options) -> bool:
    """Whether ``--pool`` names a candidate file (not run, qrels, union nor qrels+N)."""
    return options.pool not in POOL_QUESTION and placeholders(options.pool) is None


def shared_pool(qrels: Qrels, options: Options, J: Judgements):
    """The pool of ``J``'s queries under a ``--pool`` that is the same for every run (qrels, qrels+N,
    a candidate file; ``--pool run`` or ``union`` without a run: the judged documents)."""
    if not _file_pool(options):
        return make_pool(options.pool if options.pool not in ("run", "union") else "qrels", None, J)
    return make_pool("run", candidates(qrels, options, J.qids), J)


def candidates_note(qrels: Qrels, options: Options, qids: list, name: str) -> list:
    """A note when ``--pool FILE`` has no candidates for some of ``qids``: their pool is empty."""
    lacking = len(qids) - len(np.unique(candidates(qrels, options, qids).row)) if _file_pool(options) and qids else 0
    return [Note.said(name, f"no candidates for {lacking} of {len(qids)} queries: their pool is empty (E = IUB = WLB = 0), "
                            "so every normalisation is undefined there", who=options.pool)] if lacking else []


def below_random_note(name: str, metrics: list, values: dict, options: Options, intervals=None) -> str | None:
    """One line when E is better than the run's value (in the measure's direction) on more than half of
    the queries: what that means under this pool, whether over all queries the run can be told from a
    random ranking (:func:`_told_apart`, ``intervals``: :func:`random_intervals`'s when drawn), and which
    ``--pool`` asks the other question.  None otherwise."""
    hits, beaten_by = [], []
    for meas in dict.fromkeys(m.measure for m in metrics if _pooled(m)):
        a, e = Metric(meas), Metric(meas, "E")
        if a not in values or e not in values:
            continue
        A, E = np.asarray(values[a], dtype=np.float64), np.asarray(values[e], dtype=np.float64)
        sign = -1.0 if meas.lower_better else 1.0
        beaten = int(np.sum(sign * (E - A) > 1e-12 * np.maximum(1.0, np.abs(A))))
        if len(A) and 2 * beaten > len(A):
            hits.append(f"{meas} on {beaten} of {len(A)}" + (", lower is better" if meas.lower_better else ""))
            beaten_by.append((meas, A, E))
    if not hits:
        return None
    verdicts = [_told_apart(meas, metrics, A, E, intervals or {}, options) for meas, A, E in beaten_by]
    pool = options.pool if options.pool in POOL_QUESTION else "qrels+N" if "+" in options.pool else "FILE"
    other = "qrels" if options.pool == "run" else "run"
    lead = next((str(m.variant) for m in _normalised(metrics)), "a normalisation")
    whats = " or ".join(dict.fromkeys(w for w, _ in verdicts))
    words = [word for _, (_, word) in verdicts]
    brief = f"E beats the value on most queries of {{0:measure|measures}} (--pool {pool}); all queries vs random: {{tally}}"
    return Note(f"{name}: E beats the value on most queries ({'; '.join(hits)}): there {pool_words(options)} "
                f"scores better than the run, so per-query {lead} reads worse than random there; over all "
                f"queries (the 95% interval of {whats}): {'; '.join(v for _, (v, _) in verdicts)}; --pool {other} compares "
                f"with {POOL_QUESTION[other]} instead (docs/bounds.md, \"Which pool\")", name, brief, (len(hits),),
                [(word.removesuffix(" than random").replace("not distinguishable from random", "n.s."), words.count(word))
                 for word in dict.fromkeys(words)])


def withheld_note(name: str, values: dict, options, intervals: dict) -> str | None:
    """One line naming the intervals withheld for too few queries (core.intervals.min_queries): a
    percentile interval from fewer is the sample's extremes ([x, x] from one query), and so is no claim."""
    if not intervals:
        return None
    counts = {m: int(np.count_nonzero(np.isfinite(values[m]))) for m, (lo, _) in intervals.items() if not np.isfinite(lo)}
    counts = {m: count for m, count in counts.items() if count < min_queries(options.ci)}
    few = [f"{m} from {count} {'query' if count == 1 else 'queries'}" for m, count in counts.items()]
    if not few:
        return None
    brief = (f"no interval of {{0:measure|measures}}, from {{1:query|queries}}: a percentile bootstrap needs "
             f"{min_queries()} at 95%")
    return Note(f"{name}: no interval of {', '.join(few)}: a percentile bootstrap needs n queries with n**-n below its "
                f"tail ({min_queries()} at 95%), else its ends are the sample's extremes", name, brief,
                (len(few), (min(counts.values()), max(counts.values()))))


def _told_apart(meas, metrics: list, A, E, intervals: dict, options) -> tuple:
    """(what the interval is of, (the verdict on ``meas`` over all queries in words, its word)): by the
    randomisation interval of its first normalisation, else the bootstrap interval of mean A - mean E."""
    at = next((m for m in metrics if m.measure == meas and m in intervals), None)
    if at is not None:
        (lo, hi), what = intervals[at], f"{at.variant}'s 'all' row minus a random ordering's"
    else:
        lo, hi = means_interval([A, E], lambda a, e: a - e, np.isfinite(A) & np.isfinite(E), seed=options.seed)
        what = "mean value - mean E over the topics"
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return what, (f"{meas} undefined, or from too few queries (no claim)", "undefined")
    below, above = ("better", "worse") if meas.lower_better else ("worse", "better")
    word = f"{below} than random" if hi < 0 else f"{above} than random" if lo > 0 else "not distinguishable from random"
    return what, (f"{meas} {word}, [{lo:.4f}, {hi:.4f}]", word)


class Note(str):
    """A stderr note about run ``run`` that other runs may share: ``brief`` says it once of them all (a
    format string whose {0}, {1}, ... are ``spans``, each (lo, hi), said as the smallest lo to the largest
    hi, and whose {tally} sums ``tally``'s (word, count) pairs); cli.support.flush says it (``--notes``)."""

    def __new__(cls, text: str, run: str = "", brief: str = "", spans=(), tally=()):
        note = super().__new__(cls, text)
        note.run, note.brief = run, brief
        note.spans = tuple((n, n) if isinstance(n, int) else tuple(n) for n in spans)
        note.tally = tuple(tally)
        return note

    @classmethod
    def said(cls, run: str, brief: str, *spans, who: str = ""):
        """The note of ``run`` in its ``brief``'s words, with the numbers ``spans``, said of ``who`` (the run)."""
        return cls(f"{who or run}: " + brief.format(*spans), run, brief, spans)


PRECISION_NOTE = "ranked documents change place between float32 and float64 scores"
TIE_RULE_NOTE = "ranked documents are at another place than in trec_eval's order"  # --ties rank|file's


def input_notes(path: str, run: Block, missing: int, ignored: int, nq: int, ties: str = "score") -> list:
    """The one-line notes about a run's input (``run``: its blocks merged; ``missing`` of the ``nq``
    queries it has no line for, ``ignored`` queries not in the qrels; ``ties``: the tie rule): nothing is
    dropped without a count."""
    name, (ranked, judged), swaps = run.name, run.judged, run.float32_ties
    out = []
    if missing:
        out.append(Note.said(name, "{0} of {1} qrels queries have no ranked documents and score 0 "
                                   "(--run-queries-only leaves them out)", missing, nq))
    if ignored:
        out.append(Note.said(name, "{0} run queries are not in the qrels and were ignored", ignored))
    if ranked and not judged:  # as a run sharing no query with the qrels is refused: the wrong docids?
        brief = ("none of its {0} ranked documents is in the qrels, so every measure is 0: docids written otherwise "
                 "than the qrels' (a prefix, a suffix, an invisible character)?")
        out.append(Note(f"{name}: " + brief.format(ranked), name, brief.replace("its {0}", "their {0}"), (ranked,)))
    if swaps and ties != "score":
        brief = f"{{0}} {TIE_RULE_NOTE} under --ties {ties}: a measure that reaches them can differ from trec_eval's"
        out.append(Note(f"{name}: {swaps} {TIE_RULE_NOTE} (score descending, then docid descending) under --ties "
                        f"{ties}: a measure that reaches them can differ from trec_eval's", name, brief, (swaps,)))
    elif swaps:
        brief = f"{{0}} {PRECISION_NOTE} (--score-precision: float64 is trec_eval 10's, float32 pytrec_eval's)"
        out.append(Note(f"{name}: {swaps} {PRECISION_NOTE} (equal as floats, then ordered by docid): a measure "
                        "that reaches them can differ with --score-precision (float64: trec_eval 10; float32: trec_eval "
                        "<= 9.0.8, pytrec_eval, ir_measures)", name, brief, (swaps,)))
    if run.skipped:
        out.append(Note.said(name, "skipped {0} comment or blank lines", run.skipped, who=path))
    if run.extra:
        out.append(Note.said(name, "ignored the fields after the 6th on {0} lines (as trec_eval does)", run.extra, who=path))
    return out


def _and(words: list) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


_SINGULAR = {"queries": "query", "documents": "document"}


def undefined_note(name: str, undefined: dict, options: Options, unit: str = "queries") -> str | None:
    """One line per run: which variants were undefined for how many queries (``unit``), by measure, and
    what ``--undefined`` did with them: under ``zero`` each is printed as 0 per query and counted as 0 in
    the 'all' row, the mean of per-query values; under ``skip`` they are left out of both."""
    undefined, one = {m: n for m, n in undefined.items() if n}, _SINGULAR.get(unit, unit)
    if not undefined:
        return None
    by_measure: dict = {}
    for m, n in undefined.items():
        by_measure.setdefault(str(m.measure), {}).setdefault(n, []).append(m.variant)
    parts = [f"{_and(vs)} of {meas} for {n} {one if n == 1 else unit}"
             for meas, counts in by_measure.items() for n, vs in counts.items()]
    how = (f"left out per {one} and of the 'all' row: --undefined skip" if options.undefined != "zero" else
           f"scored 0 per {one} by --undefined zero, and as 0 in the 'all' row, a mean of per-{one} values; "
           f"--undefined skip leaves such {unit} out")
    # bounds no sorting is proven to give: enumerated on small pools, withheld beyond (summ's measures have no record)
    modes = {m: m.record.extremes_of(m) if getattr(m, "record", None) is not None else "sorted"
             for m in dict.fromkeys(m.measure for m in undefined)}
    why = [f"{'WLB' if mode == 'ideal' else 'IUB and WLB'} of {m}" for m, mode in modes.items() if mode != "sorted"]
    from ..core.permutations import ENUMERATE_LIMIT  # the Monte Carlo module: only for this note

    tail = (f"; these count {_and(why)}, which are withheld (no ordering is proven extreme) where a pool has "
            f"more than {ENUMERATE_LIMIT} arrangements: see docs/bounds.md") if why else ""
    brief = (f"{_and(list(dict.fromkeys(str(m.variant) for m in undefined)))} undefined for {{0:{one}|{unit}}} of "
             "{1:measure|measures} (" + ("left out, --undefined skip" if options.undefined != "zero" else
                                         f"0 per {one} and in the 'all' row, --undefined")
             + ("; withheld bounds: docs/bounds.md)" if why else ")"))
    return Note(f"{name}: undefined values: {'; '.join(parts)} ({how}){tail}", name, brief,
                ((min(undefined.values()), max(undefined.values())), len(by_measure)))
