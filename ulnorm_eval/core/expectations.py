"""Bounds of a measure over the permutations of a query's pool (``--pool``), and the variants built on
them, dispatched through the records (docs/bounds.md):

* IUB and WLB: the maximum and minimum over the orderings of the pool, the pool sorted by gain where
  the record's ``extremes`` proves it (Westerborg 2022 §3.1, eqs. 3.2, 3.4), else enumerated.
* E under a uniformly random permutation (Karmaker & Feng 2022 RLB, §4; Feng 2023 REB, §5.1): the
  record's ``expectation``, or a Monte Carlo mean; ``expectation='paper'``: the papers' formulas.
* DB: Pr[M(random permutation) <= A] (Westerborg 2022 eq. 3.12), exact or Monte Carlo.
"""
from __future__ import annotations

import contextlib
from functools import cached_property

import numpy as np

from .kernels import Judgements, Level, rel_of
from .measures import FAMILIES, compute
from .measures.common import RandomPool, expected_rr, expected_sp
from .normalise import undefined_mask
from .permutations import (ENUMERATE_LIMIT, Keys, db_values, enumerated_bounds, monte_carlo_unit, permutation_values,
                           permutation_values_many)
from .pools import Pool, judged_only_pool, make_pool, pool_gains, pool_keys, pool_reads, rows_for
from .records import VARIANTS

__all__ = ["Pool", "make_pool", "expectation", "ideal", "worst", "expected_sp", "expected_rr",
           "permutation_values", "db_values", "variant_values", "random_pool", "ENUMERATE_LIMIT", "bounds_key",
           "monte_carlo_units", "random_orderings"]


def random_pool(pool: Pool, judgements: Judgements, measure, rel_level, paper: bool = False) -> RandomPool:
    """The input of a family's expectation for ``measure`` on ``pool``."""
    return RandomPool(counted=pool, J=judgements, measure=measure, rel=rel_of(measure, rel_level),
                      gain=pool_gains(pool, judgements, measure, rel_level), paper=paper)


def expectation(pool: Pool, judgements: Judgements, measure, rel_level, paper: bool = False) -> np.ndarray:
    """Exact E[M] per query for a native measure with exact bounds: its family's closed form."""
    fam = FAMILIES[measure.family]
    if fam.expectation is None or fam.bounds_of(measure) != "exact":
        raise ValueError(f"{measure}: no closed-form expectation (bounds={fam.bounds_of(measure)!r})")
    return fam.expectation(random_pool(pool, judgements, measure, rel_level, paper))


def ideal(pool: Pool, judgements: Judgements, measure, rel_level, paper: bool = False) -> np.ndarray:
    """IUB: M of the pool sorted by its key (:func:`pool_keys`), descending (``paper``: the family's
    paper_ideal for a measure with a cutoff); 'search' families: the maximum over the arrangements of
    the pool's classes (NaN beyond ``ENUMERATE_LIMIT``)."""
    fam = FAMILIES[measure.family]
    if paper and fam.paper_ideal is not None and measure.cutoff is not None:
        return fam.paper_ideal(random_pool(pool, judgements, measure, rel_level, paper))
    if fam.extremes_of(measure) == "search":
        return enumerated_bounds(pool, judgements, measure, rel_level)[1]
    pool = rows_for(pool, judgements, measure, rel_level)
    return compute(pool.ordered(pool_keys(pool, judgements, measure, rel_level), True), judgements, measure, rel_level)


def worst(pool: Pool, judgements: Judgements, measure, rel_level) -> np.ndarray:
    """WLB: M of the pool sorted by its key, ascending (Westerborg 2022 §3.1, eqs. 3.2, 3.4), for
    'sorted' families; otherwise the minimum over the arrangements of the pool's classes (as IUB)."""
    if FAMILIES[measure.family].extremes_of(measure) != "sorted":
        return enumerated_bounds(pool, judgements, measure, rel_level)[2]
    pool = rows_for(pool, judgements, measure, rel_level)  # placeholders first, where they sort (gain 0)
    return compute(pool.ordered(pool_keys(pool, judgements, measure, rel_level), False), judgements, measure, rel_level)


def montecarlo_bounds(pool: Pool, judgements: Judgements, measures: list, rel_level, reps: int, rng,
                      paper: bool = False) -> list:
    """E, IUB, WLB and E's standard error of each native measure without a closed-form E: exact over the
    arrangements of a pool's classes up to ``ENUMERATE_LIMIT``, else E a Monte Carlo mean over ``reps``
    seeded shuffles shared by the measures (:func:`random_orderings`)."""
    parts = [enumerated_bounds(pool, judgements, measure, rel_level) for measure in measures]
    rests = [np.flatnonzero(~done) for *_, done in parts]
    drawn = [index for index, rest in enumerate(rests) if len(rest)]
    vals = dict(zip(drawn, random_orderings(pool, judgements, [measures[index] for index in drawn], rel_level, reps,
                                            rng, [rests[index] for index in drawn])))
    out = []
    for index, (measure, (mean, high, low, _), rest) in enumerate(zip(measures, parts, rests)):
        values = vals.get(index)
        E, std_error = mean.copy(), np.zeros(pool.nq)
        if len(rest):
            values = values[:, rest]
            E[rest] = values.mean(axis=0)
            std_error[rest] = values.std(axis=0, ddof=1) / np.sqrt(len(values)) if len(values) > 1 else np.nan
        mode = FAMILIES[measure.family].extremes_of(measure)
        I = high if mode == "search" else ideal(pool, judgements, measure, rel_level, paper)
        W = low if mode != "sorted" else worst(pool, judgements, measure, rel_level)
        out.append({"E": E, "IUB": I, "WLB": W, "se": std_error})
    return out


def random_orderings(pool: Pool, judgements: Judgements, measures: list, rel_level, reps: int, rng,
                     queries: list | None = None) -> list:
    """Each native measure's values (reps x queries) on ``reps`` uniformly random orderings of every
    query's pool (of ``queries[i]`` for measure i when given; NaN elsewhere); the measures reading the
    same documents (:func:`pool_reads`) share one placed draw, the others shuffles kept to their cutoff."""
    groups: dict = {}  # (depth, documents read) -> (their mask, measures): each group's draws are its own
    for index, measure in enumerate(measures):
        reads = pool_reads(pool, judgements, measure, rel_level)
        key = (None, reads.tobytes()) if reads is not None else (measure.cutoff, None)
        groups.setdefault(key, (reads, []))[1].append(index)
    out = [None] * len(measures)
    for (depth, _), (reads, group) in groups.items():
        union = None if queries is None else np.unique(np.concatenate([queries[index] for index in group]))
        got = permutation_values_many(pool, judgements, [measures[index] for index in group], rel_level, reps, rng,
                                      union, depth, reads)
        for index, values in zip(group, got):
            out[index] = values
    return out


# --------------------------------------------------------------------------- variants

def bounds_key(meas, options) -> tuple:
    """What a query's E, IUB and WLB on a pool that is the same for every run (``--pool qrels``,
    ``qrels+N`` or a candidate file) depend on besides the query: the pool, the measure and the
    options that change a bound (not the run)."""
    return (options.pool, meas, float(options.rel_level), getattr(options, "judged_only", False),
            getattr(options, "num_docs", 0), str(getattr(options, "trec_version", "10")), options.expectation,
            options.permutations, options.seed)


def monte_carlo_units(metrics) -> int:
    """Monte Carlo computations per query among ``metrics``: one per measure whose variants need a
    Monte Carlo E (no closed form), one per DB metric (the unit of the progress bar's work)."""
    montecarlo = {metric.measure for metric in metrics if metric.variant and metric.measure.bounds == "montecarlo"
          and VARIANTS[metric.variant].kind in ("bound", "ratio", "distribution")}
    distribution = {metric for metric in metrics if metric.variant and VARIANTS[metric.variant].kind == "distribution"}
    return len(montecarlo) + len(distribution)


class _RunBounds:
    """E, IUB and WLB of the measures of one ranked run, each computed once (and, under a pool that is
    the same for every run, kept per query in the caller's ``cache`` across runs and blocks); the
    random-ranking pool is built on first use: a run whose bounds all come from the cache needs none."""

    def __init__(self, run, judgements: Judgements, options, foreign, cache: dict | None, candidates=None):
        self.rr, self.J, self.options, self.foreign = run, judgements, options, foreign
        self.candidates = candidates
        self.rel_level = Level.of(options, trec_nan=False)  # a random ranking of a pool never reproduces trec_eval's -nan
        self.paper = options.expectation == "paper"
        self.shared = cache if options.pool not in ("run", "union") else None
        self.bounds: dict = {}

    @cached_property
    def base_pool(self):
        pool = (make_pool("run", self.candidates(), self.J) if self.candidates is not None
                else make_pool(self.options.pool, self.rr.ranking, self.J))
        return judged_only_pool(pool) if getattr(self.options, "judged_only", False) else pool  # -J: what -J keeps

    def pool_of(self, meas):
        """A measure's own judged_only: a random ranking of what its -J keeps."""
        return judged_only_pool(self.base_pool) if meas.native and meas.get("judged_only") else self.base_pool

    def store_of(self, meas):
        """The cache's per-query bounds of ``meas`` (None without a cache)."""
        return self.shared.setdefault(bounds_key(meas, self.options), {}) if self.shared is not None else None

    def cached(self, store) -> bool:
        return store is not None and self.J.qids and all(qid in store for qid in self.J.qids)

    def remember(self, meas, bounds, store):
        self.bounds[meas] = bounds
        if store is not None:  # per query: a query's bounds do not depend on the others beside it
            std_error = bounds["se"] if bounds.get("se") is not None else [None] * len(self.J.qids)
            store.update(zip(self.J.qids, zip(bounds["E"], bounds["IUB"], bounds["WLB"], std_error)))

    def draw_shared(self, measures) -> None:
        """The native measures without a closed-form E that are still to draw share their shuffles: one
        Monte Carlo for all of them on the same pool and depth (the numbers of each are unchanged)."""
        todo: dict = {}
        for meas in dict.fromkeys(measures):
            if meas.native and meas.bounds == "montecarlo":
                store = self.store_of(meas)
                if not self.cached(store):
                    todo.setdefault(bool(meas.get("judged_only")), []).append((meas, store))
        for group in todo.values():
            measures_ = [meas for meas, _ in group]
            with monte_carlo_unit(len(self.J.qids) * len(measures_)):
                got = montecarlo_bounds(self.pool_of(measures_[0]), self.J, measures_, self.rel_level,
                                        self.options.permutations, Keys(self.options.seed, self.J.qids), self.paper)
            for (meas, store), bounds in zip(group, got):
                self.remember(meas, bounds, store)

    def need(self, meas) -> dict:
        """{'E', 'IUB', 'WLB', 'se'} of ``meas``: per-query arrays (se: None for a closed form)."""
        if meas in self.bounds:
            return self.bounds[meas]
        judgements, rel_level, store = self.J, self.rel_level, self.store_of(meas)
        # a Monte Carlo measure is the progress bar's unit, cached or not
        with monte_carlo_unit(len(judgements.qids)) if meas.bounds == "montecarlo" else contextlib.nullcontext():
            if self.cached(store):  # every query seen before
                E, I, W, std_error = zip(*(store[qid] for qid in judgements.qids))
                self.bounds[meas] = {"E": np.array(E), "IUB": np.array(I), "WLB": np.array(W),
                                     "se": None if std_error[0] is None else np.array(std_error)}
            elif meas.native:  # a closed-form E (the others drew in draw_shared)
                pool = self.pool_of(meas)
                self.remember(meas, {"E": expectation(pool, judgements, meas, rel_level, self.paper),
                                     "IUB": ideal(pool, judgements, meas, rel_level, self.paper),
                                     "WLB": worst(pool, judgements, meas, rel_level), "se": None}, store)
            else:
                self.remember(meas, self.foreign.foreign_bounds(self.base_pool, judgements, meas, self.options,
                                                                Keys(self.options.seed, judgements.qids)), store)
        return self.bounds[meas]


def variant_values(run, judgements: Judgements, metrics: list, plain: dict, options, foreign=None,
                   cache: dict | None = None, candidates=None):
    """Values of every requested variant metric for one ranked run: (values, standard errors, undefined
    masks), each keyed by Metric.  ``foreign``: ``foreign_bounds`` and ``foreign_scorer`` of measures
    computed outside the core (pipeline/irm_adapter.py); ``cache``: bounds on a pool the same for every
    run (:func:`bounds_key`, then query id); ``candidates``: the Ranking of ``--pool FILE``."""
    run_bounds = _RunBounds(run, judgements, options, foreign, cache, candidates)
    run_bounds.draw_shared([wanted.measure for wanted in metrics if wanted.variant])
    values, stderr, undefined = {}, {}, {}
    rel_level = run_bounds.rel_level
    pool_of = run_bounds.pool_of
    for metric in metrics:
        meas, variant = metric.measure, VARIANTS[metric.variant]
        A = plain[meas]
        bounds = run_bounds.need(meas)
        if variant.kind == "bound":
            val = bounds[variant.bound]
            if variant.bound == "E" and bounds.get("se") is not None:
                stderr[metric] = bounds["se"]
            und = np.isnan(val)  # withheld: an extreme not proven by sorting, over too many arrangements
            if und.any():
                undefined[metric] = und
                val = np.where(und, 0.0 if options.undefined == "zero" else np.nan, val)
            values[metric] = val
            continue
        if variant.kind == "distribution":
            scorer = None
            if not meas.native:
                scorer = foreign.foreign_scorer(judgements, meas, options)
            und = undefined_mask(bounds["IUB"], bounds["E"], bounds["WLB"])
            with monte_carlo_unit(len(judgements.qids)):
                val, std_error = db_values(pool_of(meas), judgements, meas, rel_level, A, options.permutations,
                                    Keys(options.seed, judgements.qids), scorer, active=~und)
            stderr[metric] = std_error
        else:
            val, und = variant.normalise(A, bounds["IUB"], bounds["E"], bounds["WLB"])
            und = und | np.isnan(val)  # a withheld IUB or WLB (see worst()) leaves the variant undefined
        undefined[metric] = np.asarray(und, bool)
        values[metric] = np.where(und, 0.0 if options.undefined == "zero" else np.nan, val)
    return values, stderr, undefined
