"""The CI gate: evaluated means into pass/fail checks, exit code 1 when any fails (docs/gate.md: the rules).

``--fail-below 'UL2(nDCG@10)=0.30'`` fails a mean below the value; ``--baseline RUN --max-drop D [--alpha A]``
fails mean(run) - mean(baseline) < -D (with ``--alpha``: and p < A, the paired one-sided test of "the run is
worse"); a measure whose family says ``better='lower'`` is gated the other way round.  A check with nothing
to compare (a NaN mean, an undefined p-value) fails, its ``undefined`` field saying why.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..core.variants import BOUND_VARIANTS, HOLE_VARIANTS

__all__ = ["Threshold", "Check", "parse_threshold", "check_thresholds", "check_baseline", "gated", "orientation",
           "check_holes", "hole_metrics", "HolesOutlook", "holes_outlook", "decimal4", "signed4"]


@dataclass(frozen=True, kw_only=True)
class Threshold:
    metric: object  # registry.Metric
    value: float


@dataclass(kw_only=True)
class Check:
    """One gate comparison for one run and metric."""

    kind: str  # 'fail-below' or 'baseline'
    run: str
    metric: object
    mean: float
    reference: float  # the threshold, or the baseline's mean
    failed: bool
    p: float | None = None  # baseline checks: one-sided p-value of "run worse than baseline"
    n: int = 0  # the queries the mean is over (baseline checks: paired queries)
    test: str = ""
    holes: str = ""  # --holes: how the unjudged documents could move the decision (empty: they cannot)
    undefined: str = ""  # why the check could not be decided (it then fails), else ''
    zscore: bool = False  # -Z: the means are of z-scores (value - mean) / sd, not of the measure's values
    sign: float = 1.0  # -1.0: a lower value is better (the family's ``better``); the checks compare sign * value
    total: int = 0  # the qrels queries, said beside n ("n of N queries"); 0: not known (summ's documents)

    @property
    def difference(self) -> float:
        return self.mean - self.reference


def parse_threshold(text: str) -> Threshold:
    """``'UL2(nDCG@10)=0.30'`` -> Threshold.  The last ``=`` splits, since names hold ``=`` (``RBP(p=0.9)``).

    Raises ValueError for a malformed value and registry.UnknownMeasure for an unknown name.
    """
    from ..core.registry import parse

    name, sep, value = text.rpartition("=")
    if not sep or not name.strip():
        raise ValueError(f"--fail-below {text!r}: expected MEASURE=VALUE, e.g. 'UL2(nDCG@10)=0.30'")
    try:
        if "_" in value:  # Python reads 1_0 as 10
            raise ValueError
        number = float(value)
    except ValueError:
        raise ValueError(f"--fail-below {text!r}: {value!r} is not a number") from None
    if math.isnan(number):
        raise ValueError(f"--fail-below {text!r}: the threshold must be a number")
    metric = parse(name.strip())
    if _text(metric):
        raise ValueError(f"--fail-below {text!r}: {metric} is text (trec_eval's {metric.trec_name()}), not a "
                         "number to gate on")
    return Threshold(metric=metric, value=number)


def _text(metric) -> bool:
    """A text measure (runid, relstring): printed, never compared with a number."""
    rec = metric.measure.record
    return rec is not None and rec.value == "text"


NO_MEAN = "the run's mean is undefined (no query has a defined value)"
NO_BASE = "the baseline's mean is undefined (no query has a defined value)"
NO_P = "the drop's p-value is undefined (fewer than two queries with defined values in both runs)"


def check_thresholds(result, thresholds, total: int = 0) -> list[Check]:
    """A check per (run, threshold): fails when the run's mean is below the value, or undefined (NaN).
    ``total``: the qrels queries, said beside the queries the mean is over ("n of N queries")."""
    import numpy as np

    out = []
    for run in result.runs:
        for threshold in thresholds:
            sign = orientation(threshold.metric)
            mean, value = sign * run.mean[threshold.metric], sign * threshold.value
            why = NO_MEAN if math.isnan(mean) else ""
            n_queries = int(np.count_nonzero(np.isfinite(np.asarray(run.values[threshold.metric], dtype=np.float64))))
            out.append(Check(kind="fail-below", run=run.name, metric=threshold.metric, mean=sign * mean,
                             reference=threshold.value, failed=bool(why) or mean < value, n=n_queries, total=total,
                             undefined=why, zscore=_zscored(result, threshold.metric), sign=sign))
    return out


def orientation(metric) -> float:
    """1.0 when a higher value of ``metric`` is better, -1.0 when a lower one is (its family's record:
    ``better='lower'``, RBP_resid, Unjudged; its variants other than the bounds grow with the value):
    the gate compares ``sign * value``, so "below the threshold" and "a drop" mean worse either way."""
    return -1.0 if getattr(metric.measure, "lower_better", False) else 1.0


def require_complete(checks, result, unit: str = "queries", what: str = "no value") -> None:
    """A check of a run with missing ``unit`` (a summary system without a summary for some
    documents) fails, saying so: its mean is over the others only, and would pass where the complete
    input fails.  eval needs none of this: a query a run lacks scores 0 (trec_eval's -c)."""
    runs = {run.name: run for run in result.runs}
    for check in checks:
        run = runs.get(check.run)
        missing = getattr(run, "missing", 0) if run is not None else 0
        if missing and not check.undefined:
            total = len(set(run.qids) | set(getattr(run, "missing_qids", None) or ()))
            check.undefined = (f"{missing} of {total} {unit} have {what} from this run, so its mean is over the "
                           "others only")
            check.failed = True


def _zscored(result, metric) -> bool:
    return bool(getattr(result.options, "zscore", None)) and metric.zscored


def gated(metrics) -> list:
    """The metrics a baseline comparison gates: all but the pool's bounds and the hole bounds."""
    return [metric for metric in metrics if metric.variant not in BOUND_VARIANTS + HOLE_VARIANTS and not _text(metric)]


def hole_metrics(metrics, ends: tuple = ("LB", "UB"), warn=None) -> list:
    """The interval ends ``ends`` (LB, UB; BSLO, BSHI) of every plain measure among ``metrics`` that has
    hole bounds, but no bootstrap for a family of core.holes.BOOT_WITHHELD (``warn`` hears which)."""
    if not ends:
        return []
    from ..core.holes import BOOT_WITHHELD, holes_reason, withheld_note
    from ..core.registry import Metric

    bounded = [metric.measure for metric in metrics if not metric.variant and holes_reason(metric.measure) is None]
    withheld = dict.fromkeys(m.family for m in bounded if m.family in BOOT_WITHHELD and "BSLO" in ends)
    if withheld and warn:
        warn(withheld_note(withheld, "their holes_bootstrap_overlap is empty"))
    return [Metric(m, end) for m in bounded for end in ends if end in ("LB", "UB") or m.family not in withheld]


def check_holes(result, checks, baseline=None, max_drop: float = 0.0, action: str = "warn") -> None:
    """Mark every check whose decision the unjudged documents could flip (docs/holes.md): fail-below when
    the threshold lies within [mean LB, mean UB] on the other side of the mean; baseline when
    [LB(run) - UB(baseline), UB(run) - LB(baseline)] holds -max_drop on the other side (the test is not
    redone).  LB and UB range over every grade of every run's holes, one shared assignment, so "holds" is
    exact (tests/core/test_holes_worlds.py enumerates them) and "could flip" may be wider than reachable.
    Every line names its assumption (:meth:`World.words`); ``action='fail'`` fails a passing check that
    could flip; a metric without hole bounds says so on its check."""
    from ..core.holes import World
    from ..core.registry import Metric

    runs = {run.name: run for run in result.runs}
    n_runs = len(runs) + (1 if baseline is not None and all(run is not baseline for run in result.runs) else 0)
    world = World.parse(getattr(result.options, "holes", "closed"))
    assumption = world.words(n_runs)
    for check in checks:
        metric = check.metric
        lower, upper = Metric(metric.measure, "LB"), Metric(metric.measure, "UB")
        run = runs.get(check.run)
        if metric.variant or run is None or lower not in run.mean:
            check.holes = "no hole bounds for this metric: the unjudged documents' effect is unknown"
            continue
        sign = check.sign  # oriented values: the worst of a lower-is-better measure is its UB
        low, high = sorted((sign * run.mean[lower], sign * run.mean[upper]))
        if check.kind == "fail-below":
            reference = sign * check.reference
            flip = (not check.failed and low < reference) or (check.failed and high >= reference)
            span = f"mean within [{decimal4(run.mean[lower])}, {decimal4(run.mean[upper])}]"
        else:
            if baseline is None or lower not in baseline.mean:
                check.holes = "no hole bounds for the baseline"
                continue
            base_low, base_high = sorted((sign * baseline.mean[lower], sign * baseline.mean[upper]))
            dlo, dhi = low - base_high, high - base_low
            limit = 0.0 - max_drop
            flip = (not check.failed and dlo < limit) or (check.failed and dhi >= limit)
            span = f"difference within [{signed4(min(sign * dlo, sign * dhi))}, {signed4(max(sign * dlo, sign * dhi))}]"
        if flip:
            check.holes = f"could flip ({span} {assumption})"
            if action == "fail" and not check.failed:
                check.failed = True
                check.holes += "; failed by --holes fail"
        else:
            check.holes = f"holds {assumption} ({span})"


@dataclass(frozen=True, kw_only=True)
class HolesOutlook:
    """What the unjudged documents leave open after a --holes evaluation: the largest mean share of a
    measure's top k unjudged (``share`` of ``cutoff`` in ``run``; None without a cutoff), how many of the
    gate's ``checks`` could flip, --holes-list's N (``asked``) and documents (``options.holes_listed``)."""
    share: float | None
    cutoff: int | None
    run: str | None
    flips: int
    checks: int
    asked: int
    listed: tuple


def holes_outlook(result, checks) -> HolesOutlook:
    """The :class:`HolesOutlook` of ``result`` (each LB measure's cutoff k read from Unjudged@k's mean)."""
    from ..core.registry import Metric, parse

    shares = [(run.mean[share], k, run.name)
              for k in sorted({int(m.measure.cutoff) for m in result.metrics if m.variant == "LB" and m.measure.cutoff})
              for share in [Metric(parse(f"Unjudged@{k}").measure)] for run in result.runs if share in run.mean]
    share, cutoff, run = max(shares, key=lambda share: share[0]) if shares else (None, None, None)
    flips = sum(check.holes.startswith("could flip") for check in checks)
    return HolesOutlook(share=share, cutoff=cutoff, run=run, flips=flips, checks=len(checks),
                        asked=getattr(result.options, "holes_list", 0),
                        listed=tuple(getattr(result.options, "holes_listed", ())))


def check_baseline(result, baseline, max_drop: float, alpha: float | None = None, test: str = "t",
                   seed: int = 0, total: int = 0) -> list[Check]:
    """A check per (run, gated metric) against ``baseline`` (an api.RunResult of the same metrics).

    The paired test runs over the queries both were evaluated on (all qrels queries by default);
    ``test`` is 't' (paired t-test), 'randomization' (paired sign-flip test, seeded by ``seed``) or
    'bootstrap' (Sakai's, seeded by ``seed``): :func:`.stats.worse`.
    """
    import numpy as np

    from .stats import GATE_TESTS, worse

    if test not in GATE_TESTS:
        raise ValueError(f"unknown test {test!r} (t, randomization or bootstrap)")
    out = []
    bpos = {qid: index for index, qid in enumerate(baseline.qids)}
    for run in result.runs:
        common = [qid for qid in run.qids if qid in bpos]
        rpos = {qid: index for index, qid in enumerate(run.qids)}
        run_index = np.array([rpos[qid] for qid in common], dtype=np.int64)
        base_index = np.array([bpos[qid] for qid in common], dtype=np.int64)
        for metric in gated(result.metrics):
            sign = orientation(metric)  # oriented: a drop is worse whatever the measure's direction
            run_values, base_values = sign * run.values[metric][run_index], sign * baseline.values[metric][base_index]
            p_value = worse(test, run_values, base_values, seed)
            mean, ref = sign * run.mean[metric], sign * baseline.mean[metric]
            dropped = mean - ref < -max_drop
            why = NO_MEAN if math.isnan(mean) else NO_BASE if math.isnan(ref) else ""
            if not why and dropped and alpha is not None and math.isnan(p_value):
                why = NO_P  # a drop whose significance cannot be judged: not a pass
            significant = alpha is None or (not math.isnan(p_value) and p_value < alpha)
            n_pairs = int((~(np.isnan(run_values) | np.isnan(base_values))).sum())
            out.append(Check(kind="baseline", run=run.name, metric=metric, mean=sign * mean, reference=sign * ref,
                             failed=bool(why) or (dropped and significant), p=p_value, n=n_pairs, test=test,
                             undefined=why, zscore=_zscored(result, metric), sign=sign, total=total))
    return out


def decimal4(value: float) -> str:
    """A mean as the gate's lines print it: 4 decimals, ``nan`` when undefined."""
    return "nan" if value is None or math.isnan(value) else f"{value:.4f}"


def signed4(value: float) -> str:
    """A difference or margin as the gate's lines print it: signed, 4 decimals, ``nan`` when undefined."""
    return "nan" if value is None or math.isnan(value) else f"{value:+.4f}"

