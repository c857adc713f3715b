"""The CI gate: turn evaluated means into pass/fail checks (exit code 1 when any fails).

Two kinds of check, both on the means printed in the ``all`` rows:

- ``--fail-below 'UL2(nDCG@10)=0.30'``: fails when a run's mean is below the threshold
  (``mean < value``; equal passes).
- ``--baseline RUN --max-drop D [--alpha A] [--test t|randomization|bootstrap]``: for every gated metric,
  ``difference = mean(run) - mean(baseline)`` (an absolute difference of means, in the measure's
  own units, not a ratio); fails when ``difference < -D``, and, when ``--alpha`` is given, also the
  paired one-sided test of "the run is worse" over the queries both runs were evaluated on has
  ``p < A``.  The p-value is reported either way.  Gated metrics are every computed metric except
  the bounds E, IUB and WLB, which describe the pool rather than the run.

A check with nothing to compare fails, on every path: a NaN mean (no query has a defined value,
e.g. ``--undefined skip`` on qrels where the variant is undefined for every query), a NaN baseline
mean, and with ``--alpha`` a drop whose p-value is undefined (fewer than two paired queries with
defined values).  Its ``undefined`` field says which value was missing; the verdict prints it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..core.variants import BOUND_VARIANTS, HOLE_VARIANTS

__all__ = ["Threshold", "Check", "parse_threshold", "check_thresholds", "check_baseline", "gated",
           "verdict", "describe", "bootstrap_less", "check_holes", "hole_metrics"]

BOUNDS = BOUND_VARIANTS  # bounds are properties of the query: never gated


@dataclass(frozen=True)
class Threshold:
    metric: object  # registry.Metric
    value: float


@dataclass
class Check:
    """One gate comparison for one run and metric."""

    kind: str  # 'fail-below' or 'baseline'
    run: str
    metric: object
    mean: float
    reference: float  # the threshold, or the baseline's mean
    failed: bool
    p: float | None = None  # baseline checks: one-sided p-value of "run worse than baseline"
    n: int = 0  # baseline checks: paired queries
    test: str = ""
    holes: str = ""  # --holes: how the unjudged documents could move the decision (empty: they cannot)
    undefined: str = ""  # why the check could not be decided (it then fails), else ''
    zscore: bool = False  # -Z: the means are of z-scores (value - mean) / sd, not of the measure's values
    of_means: bool = False  # the means are a normalisation's formula on the means (--norm-all means), the test pairs per-query values

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
        v = float(value)
    except ValueError:
        raise ValueError(f"--fail-below {text!r}: {value!r} is not a number") from None
    if math.isnan(v):
        raise ValueError(f"--fail-below {text!r}: the threshold must be a number")
    metric = parse(name.strip())
    if _text(metric):
        raise ValueError(f"--fail-below {text!r}: {metric} is text (trec_eval's {metric.trec_name()}), not a "
                         "number to gate on")
    return Threshold(metric, v)


def _text(metric) -> bool:
    """A text measure (runid, relstring): printed, never compared with a number."""
    rec = metric.measure.record
    return rec is not None and rec.value == "text"


NO_MEAN = "the run's mean is undefined (no query has a defined value)"
NO_BASE = "the baseline's mean is undefined (no query has a defined value)"
NO_P = "the drop's p-value is undefined (fewer than two queries with defined values in both runs)"


def check_thresholds(result, thresholds) -> list[Check]:
    """A check per (run, threshold): fails when the run's mean is below the value, or undefined (NaN)."""
    out = []
    for rr in result.runs:
        for t in thresholds:
            mean = rr.mean[t.metric]
            why = NO_MEAN if math.isnan(mean) else ""
            out.append(Check("fail-below", rr.name, t.metric, mean, t.value, bool(why) or mean < t.value,
                             undefined=why, zscore=_zscored(result, t.metric)))
    return out


def require_complete(checks, result, unit: str = "queries", what: str = "no value") -> None:
    """A check of a run with missing ``unit`` (a summary system without a summary for some
    documents) fails, saying so: its mean is over the others only, and would pass where the complete
    input fails.  eval needs none of this: a query a run lacks scores 0 (trec_eval's -c)."""
    runs = {rr.name: rr for rr in result.runs}
    for c in checks:
        rr = runs.get(c.run)
        missing = getattr(rr, "missing", 0) if rr is not None else 0
        if missing and not c.undefined:
            total = len(set(rr.qids) | set(getattr(rr, "missing_qids", None) or ()))
            c.undefined = (f"{missing} of {total} {unit} have {what} from this run, so its mean is over the "
                           "others only")
            c.failed = True


def _zscored(result, metric) -> bool:
    from ..render.values import zscored, zscores

    return zscores(result) and zscored(metric)


def label(c: Check, names: str = "canonical") -> str:
    """The check's metric as printed: a z-score (-Z) is 'Z' + the measure's name, said to be one."""
    from ..render.values import metric_label

    text = metric_label(c.metric, names, c.zscore)
    return f"{text} (z-score, -Z)" if c.zscore else text


def gated(metrics) -> list:
    """The metrics a baseline comparison gates: all but the pool's bounds and the hole bounds."""
    return [m for m in metrics if m.variant not in BOUNDS + HOLE_VARIANTS and not _text(m)]


def hole_metrics(metrics) -> list:
    """LB(M) and UB(M) of every plain measure among ``metrics`` that has hole bounds."""
    from ..core.holes import holes_reason
    from ..core.registry import with_variant

    return [with_variant(m, v) for m in metrics if not m.variant and holes_reason(m.measure) is None
            for v in ("LB", "UB")]


def check_holes(result, checks, baseline=None, max_drop: float = 0.0, action: str = "warn") -> None:
    """Mark every check whose decision the unjudged documents could flip (docs/holes.md).

    fail-below: the threshold lies within [mean LB(M), mean UB(M)] on the other side of the mean.
    baseline: the difference of means lies within [LB(run) - UB(baseline), UB(run) - LB(baseline)]
    and that range holds -max_drop on the other side (the significance test, if any, is not redone).
    Each run's LB and UB range over every grade of every run's holes (the closed world over the runs
    given, ``options.holes_pool``: another run's hole moves this run's R and ideal), so under one shared
    assignment both values lie within their bounds and the difference within that range: "holds"
    is exact (never contradicted by an assignment; tests/test_holes_worlds.py enumerates them), "could
    flip" a range that may be wider than the reachable one.  Every line names its assumption
    (:meth:`World.words`).  ``action='fail'`` fails a passing check that could flip.  A metric without
    hole bounds (a variant, or a family without them) says so on its check.
    """
    from ..core.holes import World
    from ..core.registry import Metric

    runs = {rr.name: rr for rr in result.runs}
    n = len(runs) + (1 if baseline is not None and all(rr is not baseline for rr in result.runs) else 0)
    world = World.parse(getattr(result.options, "holes", "closed"))
    assumption = world.words(n)
    for c in checks:
        m = c.metric
        lb, ub = Metric(m.measure, "LB"), Metric(m.measure, "UB")
        rr = runs.get(c.run)
        if m.variant or rr is None or lb not in rr.mean:
            c.holes = "no hole bounds for this metric: the unjudged documents' effect is unknown"
            continue
        lo, hi = rr.mean[lb], rr.mean[ub]
        if c.kind == "fail-below":
            t = c.reference
            flip = (not c.failed and lo < t) or (c.failed and hi >= t)
            span = f"mean within [{_f(lo)}, {_f(hi)}]"
        else:
            if baseline is None or lb not in baseline.mean:
                c.holes = "no hole bounds for the baseline"
                continue
            dlo, dhi = lo - baseline.mean[ub], hi - baseline.mean[lb]
            limit = 0.0 - max_drop
            flip = (not c.failed and dlo < limit) or (c.failed and dhi >= limit)
            span = f"difference within [{_signed(dlo)}, {_signed(dhi)}]"
        if flip:
            c.holes = f"could flip ({span} {assumption})"
            if action == "fail" and not c.failed:
                c.failed = True
                c.holes += "; failed by --holes fail"
        else:
            c.holes = f"holds {assumption} ({span})"


def check_baseline(result, baseline, max_drop: float, alpha: float | None = None, test: str = "t",
                   seed: int = 0) -> list[Check]:
    """A check per (run, gated metric) against ``baseline`` (an api.RunResult of the same metrics).

    The paired test runs over the queries both were evaluated on (all qrels queries by default);
    ``test`` is 't' (paired t-test), 'randomization' (paired sign-flip test, seeded by ``seed``) or
    'bootstrap' (:func:`bootstrap_less`, seeded by ``seed``): the tests compare accepts.
    """
    import numpy as np

    from . import stats

    out = []
    bpos = {q: i for i, q in enumerate(baseline.qids)}
    for rr in result.runs:
        common = [q for q in rr.qids if q in bpos]
        rpos = {q: i for i, q in enumerate(rr.qids)}
        ri = np.array([rpos[q] for q in common], dtype=np.int64)
        bi = np.array([bpos[q] for q in common], dtype=np.int64)
        for m in gated(result.metrics):
            x, y = rr.values[m][ri], baseline.values[m][bi]
            if test == "t":
                _, p = stats.paired_t(x, y, alternative="less")
            elif test == "randomization":
                _, p = stats.randomization(x, y, alternative="less", seed=seed)
            elif test == "bootstrap":
                p = bootstrap_less(x, y, seed=seed)
            else:
                raise ValueError(f"unknown test {test!r} (t, randomization or bootstrap)")
            mean, ref = rr.mean[m], baseline.mean[m]
            dropped = mean - ref < -max_drop
            why = NO_MEAN if math.isnan(mean) else NO_BASE if math.isnan(ref) else ""
            if not why and dropped and alpha is not None and math.isnan(p):
                why = NO_P  # a drop whose significance cannot be judged: not a pass
            significant = alpha is None or (not math.isnan(p) and p < alpha)
            n = int((~(np.isnan(x) | np.isnan(y))).sum())
            out.append(Check("baseline", rr.name, m, mean, ref, bool(why) or (dropped and significant), p, n, test,
                             undefined=why, zscore=_zscored(result, m), of_means=_of_means(result, m)))
    return out


def bootstrap_less(x, y, reps: int = 1000, seed: int = 0) -> float:
    """One-sided paired bootstrap p-value of "x is worse than y" (Sakai 2006, as compare's
    ``--test bootstrap`` but one-sided): on the differences z = x - y (pairs with a NaN dropped),
    t(z) = mean(z) / (sd(z)/sqrt(n)); the centred differences w = z - mean(z) are resampled
    ``reps`` times with replacement (seeded) and p = #{b : t(w*_b) <= t(z)} / B.  0/0 counts as
    t = 0 and x/0 as infinite, as in :func:`.stats.pairwise_bootstrap`."""
    import numpy as np

    from . import stats

    x, y = stats.paired(x, y)
    z = np.asarray(x, dtype=np.float64) - np.asarray(y, dtype=np.float64)
    n = len(z)
    if n < 2:
        return math.nan

    def t_of(mean, ss):
        scale = float(np.abs(z).max(initial=0.0))
        flat = ss <= 1e-12 * n * scale ** 2  # float noise is no spread
        sd = np.where(flat, 0.0, np.sqrt(np.maximum(ss, 0.0) / (n - 1)))
        mean = np.where(flat & (np.abs(mean) <= 1e-9 * scale), 0.0, mean)
        se = sd / math.sqrt(n)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(se > 0, mean / np.where(se > 0, se, 1.0),
                            np.where(mean == 0, 0.0, np.copysign(np.inf, mean)))

    m = z.mean()
    t0 = float(t_of(np.array(m), np.array(((z - m) ** 2).sum())))
    w = z - m
    counts = np.random.default_rng(seed).multinomial(n, np.full(n, 1.0 / n), size=reps).astype(np.float64)
    mw = counts @ w / n
    tb = t_of(mw, counts @ (w ** 2) - n * mw ** 2)
    bar = t0 + 1e-12 * abs(t0) if math.isfinite(t0) else t0  # ties count as extreme
    return float(np.mean(tb <= bar))


def _f(v: float) -> str:
    return "nan" if v is None or math.isnan(v) else f"{v:.4f}"


def _signed(v: float) -> str:
    return "nan" if v is None or math.isnan(v) else f"{v:+.4f}"


def _of_means(result, m) -> bool:
    from ..pipeline.blocks import summarised_of_means

    return summarised_of_means(m, result.options)


TEST_NAMES = {"t": "paired t", "randomization": "paired randomization", "bootstrap": "paired bootstrap"}


def describe(c: Check, names: str = "canonical", max_drop: float | None = None,
             alpha: float | None = None) -> str:
    """One line per check, passed or failed: the run, the metric, the value, the threshold it is held
    to and the margin (value minus threshold: negative fails), and for baseline checks the p-value."""
    from ..render.values import safe_text  # the run's name is a file's: escaped (the message line is not again)

    head = f"{'FAIL' if c.failed else 'pass'} {safe_text(c.run)} {label(c, names)}"
    holes = f"; holes: {c.holes}" if c.holes else ""
    tail = (f"; undefined: {c.undefined}" if c.undefined else "") + holes
    if c.kind == "fail-below":
        return (f"{head}: mean {_f(c.mean)}, threshold {_f(c.reference)} (--fail-below), "
                f"margin {_signed(c.difference)}{tail}")
    drop = max_drop or 0.0
    limit = 0.0 - drop  # 0.0 - 0.0 is +0.0: no "-0"
    p = "nan" if c.p is None or math.isnan(c.p) else f"{c.p:.3g}"
    how = " (the formula on the means)" if c.of_means else ""
    s = (f"{head}: mean{how} {_f(c.mean)} vs baseline {_f(c.reference)}, difference {_signed(c.difference)}, "
         f"limit {_signed(limit)} (--max-drop), margin {_signed(c.difference - limit)}")
    s += f", p = {p} ({TEST_NAMES.get(c.test, c.test)}{' over per-query values' if c.of_means else ''}, one-sided, n = {c.n}"
    if alpha is not None:
        s += f", alpha = {alpha:g}"
    return s + ")" + tail


def verdict(checks, names: str = "canonical", max_drop: float | None = None,
            alpha: float | None = None) -> list[str]:
    """The stderr verdict: a summary line, then every check on its own line (passed and failed)."""
    failed = [c for c in checks if c.failed]
    noun = "check" if len(checks) == 1 else "checks"
    head = (f"gate passed: {len(checks)} {noun}" if not failed
            else f"gate FAILED: {len(failed)} of {len(checks)} {noun}")
    return [head] + ["  " + describe(c, names, max_drop, alpha) for c in checks]
