"""Comparing systems: how a measure and its variants rank, separate and agree on a set of runs
(docs/comparing.md).

For each metric over the same queries, the analyses of Karmaker & Feng 2022 §4.4-4.5: each run's mean
and rank; Kendall's tau between the plain measure's ranking and each variant's (Tables 6, 16) with its
bootstrap interval, and tau_AP (Yilmaz, Aslam & Robertson 2008); a paired test of every pair of runs
(analysis/stats.py), corrected over the pairs of one metric; discriminative power (Tables 8, 18) and
conflicts (Tables 7, 17); PAD, eq. 8 (Tables 9, 19; ``pad_k`` over the metric's cutoffs); the
split-half swap rate (Voorhees & Buckley 2002; Sakai 2006) and the swap rate between two query sets
(Tables 10-11, 20-21); stability (Kanoulas & Aslam 2009: Eρ², eq. 1, Φ, eq. 2).  A query subset of
§4.4 (:func:`queries.select_subset`) is chosen per plain measure and used by its variants too.
"""
from __future__ import annotations

import contextlib
import dataclasses
from dataclasses import dataclass, field

import numpy as np

from ..core.variants import BOUND_VARIANTS  # bounds are properties of the query, not scores of a run
from ..core.variants import DEFAULT_VARIANTS as _DEFAULTS
from . import stats
from .eval_request import RequestBase
from .query_types import SUBSETS as SUBSET_SETS  # the named query sets of a subset and of swap_between
from .query_types import select_subset

# the ends of the holes' intervals (LB/UB, the bootstrap's BSLO/BSHI) are not compared as scores: they
# mark the pairs whose order the unjudged documents could reverse (docs/holes.md)
HOLE_ENDS = ("LB", "UB", "BSLO", "BSHI")

__all__ = ["Comparison", "compare", "compare_files", "swap_between_comparisons", "swap_between_tables",
           "BOUND_VARIANTS", "HOLE_ENDS", "DEFAULT_VARIANTS", "SUBSET_SETS"]

# eval's default variants that are scores of a run (E, a property of the query, is not compared): EM
DEFAULT_VARIANTS = tuple(v for v in _DEFAULTS if v not in BOUND_VARIANTS)
DEFAULT_REPS = {"t": 0, "wilcoxon": 0, "randomization": 10_000, "bootstrap": 1_000, "tukey": 10_000}


def _table(name: str, doc: str) -> property:
    """A table of a Comparison as a pandas DataFrame."""
    return property(lambda self: self._frame(name), doc=doc)


@dataclass(kw_only=True)
class Comparison:
    """The tables of a comparison (name -> :class:`~ulnorm_eval.analysis.columns.Table`, built and printed
    without pandas; ``systems``, ``summary`` and ``pairs`` as DataFrames) and the settings that produced
    them; ``queries``: the query ids used per metric (the subset, less those undefined for some run)."""

    tables: dict
    metrics: list
    runs: list
    queries: dict = field(default_factory=dict)
    meta: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)  # one-line notes (the runs' input notes, then the comparison's)

    systems = _table("systems", "run, metric, mean, rank (1 = best): a pandas DataFrame.")
    summary = _table("summary", "One row per metric (tau, significant pairs, conflicts, PAD, swap rate, stability).")
    pairs = _table("pairs", "One row per (metric, pair of runs): difference, effect, interval, p-values.")

    def _frame(self, name: str):
        if name not in self.tables:
            raise KeyError(f"this comparison kept no {name} table (compare(..., {name}=True) keeps it)")
        return self.tables[name].to_frame()


@dataclass(frozen=True, kw_only=True)
class CompareSettings:
    """How :func:`compare` compares (its keywords, :func:`compare_files`' and ``api.compare``'s): ``test`` a
    paired test of ``stats.PAIRWISE`` (``reps`` resamples, default ``DEFAULT_REPS``); ``correction`` over the
    pairs of one metric (``stats.CORRECTIONS``; 'inherent' for Tukey HSD, which adjusts its p-values itself),
    significance below ``alpha``; the others as :func:`compare` says."""

    test: str = "t"
    reps: int | None = None
    seed: int = 0
    correction: str = "holm"
    alpha: float = 0.05
    subset: str = "all"
    subset_size: int | None = None
    swap_trials: int = 1000
    phi_target: float = 0.95
    swap_between: object = None
    pairs: bool = True

    def checked(self) -> "CompareSettings":
        """The settings with ``reps`` filled in, refused outside the command line's ranges (memory
        grows with reps and swap_trials; alpha outside (0, 1) would make every pair significant or none)."""
        if self.test not in stats.PAIRWISE:
            raise ValueError(f"unknown test {self.test!r} ({', '.join(stats.PAIRWISE)})")
        if self.correction not in stats.CORRECTIONS:
            raise ValueError(f"unknown correction {self.correction!r} ({', '.join(stats.CORRECTIONS)})")
        reps = DEFAULT_REPS[self.test] if self.reps is None else int(self.reps)
        if not 0 < self.alpha < 1:
            raise ValueError(f"alpha={self.alpha!r}: expected a number strictly between 0 and 1")
        if DEFAULT_REPS[self.test] and not 10 <= reps <= 1_000_000:
            raise ValueError(f"reps={reps!r}: expected 10 to 1,000,000 (memory grows with them)")
        if not 1 <= int(self.swap_trials) <= 100_000:
            raise ValueError(f"swap_trials={self.swap_trials!r}: expected 1 to 100,000 (memory grows with them)")
        if not 0 < self.phi_target < 1:
            raise ValueError(f"phi_target={self.phi_target!r}: expected a number strictly between 0 and 1")
        inherent = "inherent" if self.test in stats.FAMILYWISE else self.correction
        return dataclasses.replace(self, reps=reps, correction=inherent)


def compare(result, settings: CompareSettings | None = None, *, warn=None, progress=None, marks_only: bool = False,
            **kw) -> Comparison:
    """Compare the runs of an evaluation :class:`~ulnorm_eval.pipeline.evaluate.Result`.

    ``settings`` (or keywords naming its fields, :class:`CompareSettings`): the paired ``test`` and its
    ``correction`` over the pairs of one metric (a pair is significant below ``alpha``), a query ``subset``
    of Karmaker & Feng 2022 §4.4 (needs each measure's E in ``result``), ``swap_between`` two query sets,
    ``seed``.  Bound variants (E, IUB, WLB) are not compared; a query undefined for some run (NaN) is left
    out of that metric's analysis, with a note.  ``progress(units, total=None)``: one unit per metric.
    ``pairs=False``: no pairs table (memory grows with the runs, not their pairs; the summary's counts
    still come from every pair).  ``marks_only``: no summary rows (:func:`tie_marks_note` reads none)."""
    from ..core.keywords import split_keywords
    from ..inputs.checks import unique_names
    from ..pipeline.evaluate import both_notes

    if settings is None:
        (settings,) = split_keywords(kw, CompareSettings, where="compare")
    notes = []
    note = both_notes(notes.append, warn)  # collected on the Comparison; warn hears each as it arises

    if len(result.runs) < 2:
        raise ValueError("comparing needs at least two runs")
    if settings.test in stats.FAMILYWISE and settings.correction not in ("holm", "inherent"):  # holm: the default
        note(f"--correction {settings.correction} does not apply to --test {settings.test}: its p-values are adjusted "
             "for every pair of the runs by the test itself")
    settings = settings.checked()
    names = unique_names([rr.name for rr in result.runs])
    have = [set(rr.qids) for rr in result.runs[1:]]
    qids = [q for q in result.runs[0].qids if all(q in run_qids for run_qids in have)]
    if any(len(rr.qids) != len(qids) for rr in result.runs):
        note(f"comparing on the {len(qids)} queries every run was evaluated on")
    metrics = [m for m in result.metrics if m.variant not in BOUND_VARIANTS + HOLE_ENDS]
    if not metrics:
        raise ValueError("nothing to compare: only bounds (E, IUB, WLB) were requested")
    work = _Comparing(result, qids, names, settings, metrics, marks_only)
    tick = progress or _no_progress
    tick(0, total=len(metrics))
    for m in metrics:
        work.add(m, note, tick)
    if not marks_only:
        work.taus()
        _pad_over_cutoffs(work.rows_sum, metrics, work.mean_of)
    return work.comparison(notes)


class _Comparing:
    """One :func:`compare` call: the queries compared, the query subset of each measure (chosen from
    its plain mean and E), and the rows and pair columns gathered metric by metric."""

    def __init__(self, result, qids: list, names: list, settings: CompareSettings, metrics: list,
                 marks_only: bool = False):
        self.result, self.qids, self.names, self.s, self.metrics = result, qids, names, settings, metrics
        self.marks_only = marks_only  # the pairs' significance alone: no summary rows
        self.have = set(result.metrics)
        self.kind = type(metrics[0])  # Metric for rankings, TextMetric for summaries: same (measure, variant) shape
        self.chosen = {meas: self.pick(meas, settings.subset) for meas in dict.fromkeys(m.measure for m in metrics)}
        self.between = self._between() if settings.swap_between is not None else {}
        # with hole bounds: per pair, whether the runs' mean [LB, UB] (and [BSLO, BSHI]) intervals overlap
        self.hole_cols = [(col, lo, hi) for col, lo, hi in (("holes_overlap", "LB", "UB"),
                                                            ("holes_bootstrap_overlap", "BSLO", "BSHI"))
                          if any(self.kind(m.measure, lo) in self.have and self.kind(m.measure, hi) in self.have
                                 for m in metrics)]
        self.ii, self.jj = np.triu_indices(len(names), 1)
        self.rows_sys, self.rows_sum, self.pair_tables, self.used = [], [], [], {}
        self.sig_of, self.mean_of, self.kept_of = {}, {}, {}

    def matrix(self, metric) -> np.ndarray:
        """Runs x queries values of ``metric`` on the queries compared (NaN where a run lacks the query)."""
        out = np.full((len(self.result.runs), len(self.qids)), np.nan)
        col = {q: i for i, q in enumerate(self.qids)}
        for r, rr in enumerate(self.result.runs):
            idx = np.asarray([col.get(q, -1) for q in rr.qids])
            out[r, idx[idx >= 0]] = np.asarray(rr.values[metric])[idx >= 0]
        return out

    def pick(self, meas, which):
        """The indices (among qids) of the query set ``which`` of measure ``meas``; None for a list of ids."""
        if not isinstance(which, str):
            return None
        if which == "all":
            return np.arange(len(self.qids))
        need = [self.kind(meas), self.kind(meas, "E"), self.kind(meas, "IUB")]
        if not all(x in self.have for x in need):
            raise ValueError(f"the {which} subset of {meas} needs its plain, E and IUB values in the result")
        A, E, I = (np.nanmean(self.matrix(x), axis=0) for x in need)
        return select_subset(A, E, I, which, self.s.subset_size)

    def _between(self) -> dict:
        """measure -> (indices of set A, indices of set B) among qids, for ``swap_between``."""
        spec_sets = self.s.swap_between
        if len(spec_sets) != 2:
            raise ValueError("swap_between needs two query sets")
        listed = [_listed_set(spec, self.qids) for spec in spec_sets]
        return {meas: tuple(lst if lst is not None else self.pick(meas, spec) for lst, spec in zip(listed, spec_sets))
                for meas in self.chosen}

    def add(self, m, note, tick) -> None:
        """The system rows, pair columns and summary row of metric ``m``; ``tick`` (a progress bar's
        advance) hears its paired tests block by block, then its swap trials, each by its share of the
        metric's estimated work (the pairs x resamples against the trials x runs)."""
        chosen = self.chosen[m.measure]
        Y = full = self.matrix(m)[:, chosen]
        q = np.asarray(self.qids, dtype=object)[chosen]
        bad = np.isnan(Y).any(axis=0)
        if bad.any():
            n = int(bad.sum())
            note(f"{m}: {n} {'query' if n == 1 else 'queries'} undefined for some run left out of the comparison")
            Y, q = Y[:, ~bad], q[~bad]
        if Y.shape[1] < 2:
            raise ValueError(f"{m}: fewer than two queries left to compare on")
        self.used[str(m)] = list(q)
        self.kept_of[m] = (full, ~bad)
        means = Y.mean(axis=1)
        best_first = means if getattr(m.measure, "lower_better", False) else -means  # rank 1 = best (Family.better)
        ranks = np.searchsorted(np.sort(best_first), best_first, side="left") + 1  # scipy's rankdata(method="min")
        self.rows_sys += [(n, str(m), mu, rk) for n, mu, rk in zip(self.names, means, ranks)]

        s, ii, jj = self.s, self.ii, self.jj
        tests_work = len(ii) * max(s.reps, 1) if s.test != "t" else len(ii)
        share = tests_work / (tests_work + int(s.swap_trials) * len(self.names))
        res = _paired_tests(Y, (ii, jj), s, advance=lambda done: tick(done * share))
        p_adj = stats.adjust(res.p, s.correction)
        sig = p_adj < s.alpha
        self.sig_of[m], self.mean_of[m] = sig, means
        if s.pairs:
            self.pair_tables.append({
                "metric": np.full(len(ii), str(m), dtype=object), "run_a": ii, "run_b": jj,
                "diff": res.diff, "effect": res.effect, "ci_low": res.ci_low, "ci_high": res.ci_high,
                "statistic": res.statistic, "p": res.p, "p_adj": p_adj, "significant": sig,
                **{col: self._overlap(m, lo, hi, chosen[~bad]) for col, lo, hi in self.hole_cols}})
        if self.marks_only:
            return
        self.rows_sum.append(self._summary_row(m, Y, sig, means))
        tick(1 - share)
        if self.between:
            self.rows_sum[-1].update(self._swap_between(m))

    def _summary_row(self, m, Y, sig, means) -> dict:
        vc = stats.variance_components(Y)
        return {
            "metric": str(m), "measure": str(m.measure), "variant": m.variant or "", "queries": Y.shape[1],
            **dict.fromkeys(("tau", "tau_low", "tau_high", "tau_ap"), np.nan),  # filled by taus()
            "significant": int(sig.sum()), "pairs": len(sig), "conflicts": np.nan,
            "pad": stats.pad(means), "split_half_swap_rate": stats.split_half_swap_rate(Y, self.s.swap_trials,
                                                                                        self.s.seed),
            "var_system": vc.system, "var_topic": vc.topic, "var_residual": vc.residual,
            "erho2": stats.erho2(vc), "phi": stats.phi(vc),
            "topics_needed": stats.topics_needed(vc, self.s.phi_target),
        }

    def _swap_between(self, m) -> dict:
        full = self.matrix(m)
        sets = []
        for idx in self.between[m.measure]:
            Z = full[:, idx]
            Z = Z[:, ~np.isnan(Z).any(axis=0)]  # queries undefined for some run: left out, as above
            if Z.shape[1] == 0:
                raise ValueError(f"{m}: a query set of swap_between has no query defined for every run")
            sets.append(Z)
        rate, swaps, npairs = stats.swap_rate_between(sets[0].mean(axis=1), sets[1].mean(axis=1))
        return {"swap_between": rate, "swaps_between": swaps, "queries_a": sets[0].shape[1],
                "queries_b": sets[1].shape[1]}

    def _overlap(self, m, lo: str, hi: str, used) -> np.ndarray:
        """Per pair (ii, jj): 1 when the two runs' intervals [mean lo, mean hi] of a plain measure overlap
        (the unjudged documents could reverse their order), 0 when not, NaN without the interval (a
        variant, or a measure without hole bounds).  Means over the queries ``used`` (indices among qids)."""
        a, b = self.kind(m.measure, lo), self.kind(m.measure, hi)
        if m.variant or a not in self.have or b not in self.have:
            return np.full(len(self.ii), np.nan)
        L, U = (self.matrix(x)[:, used].mean(axis=1) for x in (a, b))
        return (np.maximum(L[self.ii], L[self.jj]) <= np.minimum(U[self.ii], U[self.jj])).astype(np.float64)

    def taus(self) -> None:
        """Each summary row's Kendall's tau between the runs' orders under its plain measure and under its
        metric, its (1 - alpha) bootstrap interval over the queries (each metric's means over its own
        queries, as the point estimate's), tau_AP of the metric's order against the plain measure's and the
        pairs whose significance differs (conflicts); NaN where the plain measure is not compared."""
        for row, m in zip(self.rows_sum, self.metrics):
            base = type(m)(m.measure)
            if base not in self.mean_of:
                continue
            tau = stats.kendall_tau(self.mean_of[base], self.mean_of[m])
            (first, kept_first), (second, kept_second) = self.kept_of[base], self.kept_of[m]
            low, high = (tau, tau) if base == m else stats.tau_interval(
                first, second, (kept_first, kept_second), seed=self.s.seed, alpha=self.s.alpha)
            row.update(tau=tau, tau_low=low, tau_high=high, tau_ap=stats.tau_ap(self.mean_of[base], self.mean_of[m]),
                       conflicts=int((self.sig_of[base] != self.sig_of[m]).sum()))

    def comparison(self, notes: list) -> Comparison:
        from .columns import Table

        s = self.s
        systems = Table.from_rows(self.rows_sys, ["run", "metric", "mean", "rank"],
                                  {"run": "str", "metric": "str", "mean": "float", "rank": "int"})
        summary = Table.from_rows(self.rows_sum, list(self.rows_sum[0]) if self.rows_sum else [], {"conflicts": "Int64"})
        meta = {"test": s.test, "reps": s.reps, "seed": s.seed, "correction": s.correction, "alpha": s.alpha,
                "subset": s.subset,
                "subset_size": None if s.subset == "all" else len(next(iter(self.chosen.values()))),
                "swap_trials": s.swap_trials, "phi_target": s.phi_target, "runs": len(self.names),
                "queries": len(self.qids)}
        lower = [str(m) for m in self.metrics if getattr(m.measure, "lower_better", False)]
        if lower:  # the metrics whose lower means are better (Family.better): their ranks, bold and marks turn
            meta["lower_better"] = lower
        if s.swap_between is not None:
            meta["swap_between"] = [x if isinstance(x, str) else f"{len(x)} listed queries" for x in s.swap_between]
        if self.hole_cols:  # the pairs' columns saying whether the holes could reverse their order
            meta["holes"] = [c for c, _, _ in self.hole_cols]
        tables = {"systems": systems, "summary": summary}
        if s.pairs:
            tables["pairs"] = _pairs_table(self.pair_tables, self.names)
        return Comparison(tables=tables, metrics=self.metrics, runs=self.names, queries=self.used, meta=meta,
                          notes=notes)


def _listed_set(spec, qids: list):
    """A query set of ``swap_between``: None for a named set (chosen per measure), else the indices
    among ``qids`` of the listed query ids (refusing ids not compared, and an empty list)."""
    if isinstance(spec, str):
        if spec not in SUBSET_SETS:
            raise ValueError(f"unknown query set {spec!r} ({', '.join(SUBSET_SETS)}, or a list of query ids)")
        return None
    pos = {str(q): i for i, q in enumerate(qids)}
    ids = [str(q) for q in spec]
    missing = [q for q in ids if q not in pos]
    if missing:
        raise ValueError(f"query set: {len(missing)} listed queries are not among the {len(qids)} compared "
                         f"(first: {missing[0]})")
    if not ids:
        raise ValueError("query set: no queries listed")
    return np.unique([pos[q] for q in ids])


# differences held at once by a paired test: pairs x queries doubles (32 MB)
PAIR_BLOCK_ELEMENTS = 4 << 20


def _no_progress(*args, **kw) -> None:
    """A bar's ``advance(units, total)`` or a reading ``step(description, path)`` that shows nothing."""
    return None


def _paired_tests(Y, pairs: tuple, settings: CompareSettings, advance=_no_progress):
    """``stats.PAIRWISE[settings.test]`` on the pairs (ii, jj) = ``pairs`` of Y's rows, a block at a time
    (each test draws its resamples once from ``settings.seed``, so the blocks give one call's values);
    (1 - alpha) intervals, uncorrected; ``advance(share)`` hears each block's share of the pairs;
    ``settings.pairs=False`` keeps only ``p``."""
    (ii, jj), test, alpha, keep = pairs, settings.test, settings.alpha, settings.pairs
    resampling = {"reps": settings.reps, "seed": settings.seed} if test in ("randomization", "bootstrap") else {}
    if test == "tukey":  # one permutation distribution of the largest difference, over all the runs
        resampling = {"null": stats.tukey_null(Y, settings.reps, settings.seed)}
    per = max(1, PAIR_BLOCK_ELEMENTS // max(1, Y.shape[1]))
    fields = ("diff", "statistic", "p", "effect", "ci_low", "ci_high") if keep else ("p",)
    out = {f: [] for f in fields}
    for a in range(0, len(ii), per):
        res = stats.PAIRWISE[test](Y[ii[a:a + per]] - Y[jj[a:a + per]], alpha=alpha, **resampling)
        for f in fields:
            out[f].append(np.asarray(getattr(res, f), dtype=np.float64))
        advance(len(ii[a:a + per]) / len(ii))
    empty = np.zeros(0)
    return stats.PairedTest(**{f: np.concatenate(out[f]) if f in out and out[f] else empty
                               for f in ("diff", "statistic", "p", "effect", "ci_low", "ci_high")})


def _pairs_table(blocks: list, names: list):
    """One Table from the metrics' pair columns (numpy arrays; run indices turned into names)."""
    from .columns import Table

    cols = {k: np.concatenate([b[k] for b in blocks]) for k in blocks[0]}
    named = np.asarray(names, dtype=object)
    cols["run_a"], cols["run_b"] = named[cols["run_a"]], named[cols["run_b"]]
    return Table(cols, {"metric": "str", "run_a": "str", "run_b": "str", "diff": "float", "effect": "float",
                        "ci_low": "float", "ci_high": "float", "statistic": "float", "p": "float", "p_adj": "float",
                        "significant": "bool", "holes_overlap": "Int64", "holes_bootstrap_overlap": "Int64"})


def _pad_over_cutoffs(rows_sum, metrics, mean_of) -> None:
    """``pad_k`` on every metric given at two or more cutoffs: PAD of each run's mean averaged over
    the cutoffs (Karmaker & Feng 2022 §4.4.3: "we first calculated the average value of both nDCG
    and DCG^UL with varying k (k = {5, 10, 15, 20, 30}) for each LETOR method")."""
    groups: dict = {}
    for m in metrics:
        if getattr(m.measure, "cutoff", None) is not None and getattr(m.measure, "native", False):
            groups.setdefault((dataclasses.replace(m.measure, cutoff=None), m.variant), []).append(m)
    multi = {g: ms for g, ms in groups.items() if len(ms) > 1}
    if not multi:
        return
    for row in rows_sum:
        row["pad_k"] = np.nan
        row["cutoffs_k"] = ""
    at = {row["metric"]: row for row in rows_sum}
    for ms in multi.values():
        value = stats.pad(np.mean([mean_of[m] for m in ms], axis=0))
        cuts = ",".join(str(m.measure.cutoff) for m in sorted(ms, key=lambda x: x.measure.cutoff))
        for m in ms:
            at[str(m)]["pad_k"] = value
            at[str(m)]["cutoffs_k"] = cuts


def swap_between_comparisons(a: Comparison, b: Comparison) -> "object":
    """The swap rate between two comparisons of the same runs (two datasets, or two query sets):
    per metric present in both, the share of run pairs the two order oppositely (Karmaker & Feng
    2022 Tables 10, 20).  Runs are matched by name; a run missing from either side is an error.
    Returns a :class:`~ulnorm_eval.analysis.columns.Table` (metric, runs, pairs, swaps, swap_rate)."""
    return swap_between_tables(_system_means(a.tables["systems"]), _system_means(b.tables["systems"]))


def _system_means(table) -> dict:
    out: dict = {}
    for run, metric, mean in zip(table["run"], table["metric"], table["mean"]):
        out.setdefault(str(metric), {})[str(run)] = float(mean)
    return out


def swap_between_tables(a: dict, b: dict):
    """metric -> {run: mean} for experiments A and B -> the swap-rate Table (see swap_between_comparisons)."""
    from .columns import Table

    rows = []
    for metric in a:
        if metric not in b:
            continue
        ra, rb = a[metric], b[metric]
        if set(ra) != set(rb):
            only = sorted(set(ra) ^ set(rb))
            raise ValueError(f"{metric}: the two experiments compare different runs (e.g. {only[0]!r})")
        runs = sorted(ra)
        rate, swaps, pairs = stats.swap_rate_between([ra[r] for r in runs], [rb[r] for r in runs])
        rows.append({"metric": metric, "runs": len(runs), "pairs": pairs, "swaps": swaps, "swap_rate": rate})
    if not rows:
        raise ValueError("the two experiments share no metric")
    return Table.from_rows(rows, ["metric", "runs", "pairs", "swaps", "swap_rate"],
                           {"metric": "str", "runs": "int", "pairs": "int", "swaps": "int", "swap_rate": "float"})


@dataclass(frozen=True, kw_only=True)
class CompareInputs:
    """How :func:`compare_files` evaluates the runs: with the hole bounds LB, UB (``holes_bootstrap``: BSLO,
    BSHI too), whose overlaps mark the pairs the unjudged documents could reverse; ``refuse_disjoint``: a run
    sharing no query with the qrels refused; ``tie_check``: :func:`tie_marks_note` told to ``warn`` last."""

    holes: bool = False
    holes_bootstrap: bool = False
    progress: object = None  # a progress bar's advance for compare's paired tests and swap trials
    evaluated: object = None  # a progress bar's advance, called once per run evaluated
    refuse_disjoint: bool = False
    tie_check: bool = False


def compare_files(qrels, runs, measures=None, variants=None, options=None, warn=None, executor=None, **kw):
    """Evaluate ``runs`` (paths, Runs, or an iterable of either) against ``qrels`` (pipeline/orchestrator.py)
    and :func:`compare` them; keywords: the fields of :class:`CompareInputs` and :class:`CompareSettings`.
    Each plain measure is evaluated beside its variants (tau and conflicts are against it), E and IUB for
    a query subset; ``executor``: a pipeline/parallel.py executor holding the same qrels (same values).
    ``tie_check``: a run the other tie rule reorders is scored that way too, in the same pass."""
    from ..core.keywords import split_keywords
    from ..pipeline import evaluate as api
    from ..pipeline.orchestrator import evaluate_runs

    inputs, settings = split_keywords(kw, CompareInputs, CompareSettings, where="compare_files")
    options = options or api.Options()
    setup: list = []
    metrics, extra = _metrics_to_evaluate(measures, variants, settings, inputs, api.both_notes(setup.append, warn))
    q = api.load_qrels(qrels)
    again = None
    if inputs.tie_check and settings.pairs:  # only the significance marks are compared again: no hole interval ends
        again = (_other_tie_rule(options)[0], [m for m in metrics + extra if m.variant not in HOLE_ENDS])
    done = evaluate_runs(q, runs, metrics + extra, options, executor, warn=warn, again=again,
                         refuse_disjoint=inputs.refuse_disjoint)
    results = []
    for result in done:
        results.append(result)
        (inputs.evaluated or _no_progress)()
    res = api.Result(metrics=metrics + extra, runs=results, options=done.options, qrels_path=getattr(q, "path", str(qrels)),
                     run_paths=[source.path for source in done.sources], setup_notes=setup)
    cmp = compare(res, settings, warn=warn, progress=inputs.progress)
    cmp.notes[:0] = res.notes
    note = tie_marks_note(res, cmp, settings) if inputs.tie_check else None
    if note and warn:
        warn(note)
    return cmp


def _metrics_to_evaluate(measures, variants, settings: CompareSettings, inputs: CompareInputs, warn) -> tuple:
    """The metrics compared (each plain measure next to its variants) and the extra ones the subsets
    (E, IUB) and the hole bounds (LB, UB; BSLO, BSHI) need."""
    from ..core.registry import Metric
    from ..pipeline import evaluate as api
    from .gate import hole_metrics

    # variants=None: UL2 (eval's), not added to measures whose E is a Monte Carlo estimate (a note says so)
    given = None if variants is None else [v for v in variants if v.upper() not in BOUND_VARIANTS]
    wanted = [m for m in api.resolve_metrics(measures, given, numeric_only=True, warn=warn,
                                             default_variants=DEFAULT_VARIANTS)
              if m.variant not in BOUND_VARIANTS]
    metrics = []
    for m in wanted:
        for x in (Metric(m.measure), m):
            if x not in metrics:
                metrics.append(x)
    extra = []
    named = [settings.subset, *(x for x in settings.swap_between or () if isinstance(x, str))]
    if any(x != "all" for x in named):  # the uninformative and ideal sets are chosen from E and IUB
        extra = [Metric(m.measure, v) for m in metrics if not m.variant for v in ("E", "IUB")]
    ends = (("LB", "UB") if inputs.holes else ()) + (("BSLO", "BSHI") if inputs.holes_bootstrap else ())
    extra += [x for x in hole_metrics(metrics, ends, warn) if x not in metrics and x not in extra]
    return metrics, extra


# --------------------------------------------------------------------------- the command's request


@dataclass(frozen=True, kw_only=True)
class CompareRequest(RequestBase):
    """What `ulnorm-eval compare` asks for (docs/comparing.md): :class:`RequestBase`'s fields, the
    variants (None: the defaults) and the keywords of :func:`compare`."""

    variants: list | None = None
    holes: bool = False
    holes_bootstrap: bool = False
    swap_between: tuple | None = None  # two sets: all, uninformative, ideal, or a file of query ids
    pairs: bool = True  # the pairs table (memory ~ runs^2)
    compare: dict = field(default_factory=dict)  # test, reps, seed, correction, alpha, subset, ...
    baseline: str | None = None  # --baseline RUN (a path or run name): the pairs against it (analysis.marks)
    progress: object = None  # the command line's bars (render.progress: shown, progress, work_bar, base_name); None: none


def baseline_run_name(baseline: str, paths, names) -> str:
    """--baseline given as one of the RUN paths or as a run name -> the run's name in the comparison."""
    if baseline in paths:
        return names[list(paths).index(baseline)]
    if baseline in names:
        return baseline
    raise ValueError(f"--baseline {baseline}: not one of the RUNS (give its path or run name: {', '.join(names)})")


def query_sets(specs, notes: list) -> tuple:
    """--swap-between's two sets: a named set (all, uninformative, ideal) or a file of query ids."""
    from ..inputs.tables import read_query_ids

    out = []
    for spec in specs:
        if spec in SUBSET_SETS:
            out.append(spec)
            continue
        ids, repeated = read_query_ids(spec)
        if repeated:
            notes.append(f"{spec}: {repeated} repeated query ids counted once")
        out.append(ids)
    return tuple(out)


def _other_tie_rule(options) -> tuple:
    """(changes to ``options``, the flag that makes them, why) of the check of the significance marks:
    the other score precision under ``--ties score``, else trec_eval's order (``--ties score``)."""
    if options.ties != "score":
        return {"ties": "score"}, "--ties score", "trec_eval's order: score descending, then docid descending"
    other = "float32" if options.score_precision == "float64" else "float64"
    return {"score_precision": other}, f"--score-precision {other}", "scores equal as floats are ordered by docid"


def tie_marks_note(res, cmp: Comparison, settings: CompareSettings) -> str | None:
    """Which significance marks of the pairs table the tie rule decides, in one line (None: none): the pairs
    compared again with the values of the runs whose documents change place under the other score precision
    (trec_eval 10 reads doubles; trec_eval <= 9.0.8, pytrec_eval and ir_measures floats) or, under ``--ties
    rank|file``, trec_eval's order (``RunResult.again``, scored in :func:`compare_files`' pass)."""
    if "pairs" not in cmp.tables or all(rr.again is None for rr in res.runs):
        return None
    changes, flag, why = _other_tie_rule(res.options)
    runs = [rr if rr.again is None else dataclasses.replace(rr, values={**rr.values, **rr.again}) for rr in res.runs]
    alt = compare(dataclasses.replace(res, metrics=[m for m in res.metrics if m.variant not in HOLE_ENDS], runs=runs,
                                      options=dataclasses.replace(res.options, **changes)), settings, marks_only=True)
    a, b = cmp.tables["pairs"], alt.tables["pairs"]
    flips = [f"{m} {x} vs {y}" for m, x, y, s, t in zip(a["metric"], a["run_a"], a["run_b"], a["significant"],
                                                         b["significant"]) if bool(s) != bool(t)]
    if not flips:
        return None
    return (f"the tie rule decides {len(flips)} significance marks: {'; '.join(flips[:3])}"
            + (f" and {len(flips) - 3} more" if len(flips) > 3 else "")
            + f" would be marked otherwise with {flag} ({why})")


def compare_for_request(request: CompareRequest, notes: list) -> Comparison:
    """Read the qrels of ``request``, refuse what its sizes or gains cannot answer, evaluate the runs
    (a run sharing no query with the qrels refused) and :func:`compare` them; notes for stderr are
    appended to ``notes``, the note of the marks the tie rule decides (:func:`tie_marks_note`) last."""
    from ..pipeline import evaluate as api
    from ..pipeline.parallel import executor
    from ..pipeline.run_checks import refuse_non_finite_means, require_finite_gains

    q = api.load_qrels(request.qrels, groups=request.groups)
    size = request.compare.get("subset_size")
    if size is not None and size > len(set(q.qid.to_pylist())):
        raise ValueError(f"--subset-size {size}: {request.qrels} has only {len(set(q.qid.to_pylist()))} queries")
    require_finite_gains(q, request.measures, request.qrels, request.options.rel_level)
    if request.holes and api.holes_note(request.measures):
        notes.append(api.holes_note(request.measures))
    sets = query_sets(request.swap_between, notes) if request.swap_between else None
    # the runs' bytes on one bar with the time left (shown on a terminal for inputs over a few MB), then
    # the paired tests and swap trials on another; with hole bounds every run is read first (the holes
    # are shared by the runs) and evaluated after: a bar of runs then shows the evaluation
    maker, paths = request.progress, list(request.runs)  # maker None (a library call's): no bars
    bars, base_name = bool(maker) and maker.shown(True), maker.base_name if maker else str

    def bar(shown, label, total=None):
        return maker.work_bar(shown, label, total=total) if maker else contextlib.nullcontext(_no_progress)

    holes = request.holes or request.holes_bootstrap
    doing = "reading" if holes else "evaluating"
    with (maker.progress(paths, bars) if maker else contextlib.nullcontext(_no_progress)) as step, \
            bar(bars and holes, "evaluating the runs with their hole bounds (runs)", total=len(paths)) as evaluated, \
            bar(bars, "comparing: paired tests and swap trials (metrics)") as tick, \
            executor(q, request.jobs, request.scheduler, request.scheduler_timeout, len(paths)) as ex:
        done = [0]

        def next_run():  # after each run: the bytes bar moves to the next one, the runs bar by one
            done[0] += 1
            if done[0] < len(paths):
                step(f"{doing} {base_name(paths[done[0]])} ({done[0] + 1}/{len(paths)})", paths[done[0]])
            else:
                step(f"{'read' if holes else 'evaluated'} {len(paths)} runs")  # the last run's bytes
            if holes:
                evaluated()

        step(f"{doing} {base_name(paths[0])} (1/{len(paths)})", paths[0])
        cmp = compare_files(q, paths, request.measures, request.variants, request.options, notes.append, ex,
                            holes=request.holes, holes_bootstrap=request.holes_bootstrap, progress=tick,
                            evaluated=next_run, refuse_disjoint=not request.allow_disjoint, tie_check=True,
                            swap_between=sets, pairs=request.pairs, **request.compare)
    refuse_non_finite_means(cmp, request.qrels)
    if request.baseline is not None:
        from .marks import against_baseline

        cmp = against_baseline(cmp, baseline_run_name(request.baseline, request.runs, cmp.runs))
    return cmp
