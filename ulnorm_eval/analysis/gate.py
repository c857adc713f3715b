"""The CI gate: turn evaluated means into pass/fail checks (exit code 1 when any fails).

Two kinds of check, both on the means printed in the ``all`` rows:

- ``--fail-below 'UL2(nDCG@10)=0.30'``: fails when a run's mean is below the threshold
  (``mean < value``; equal passes).
- ``--baseline RUN --max-drop D [--alpha A] [--test t|randomization]``: for every gated metric,
  ``difference = mean(run) - mean(baseline)`` (an absolute difference of means, in the measure's
  own units, not a ratio); fails when ``difference < -D``, and, when ``--alpha`` is given, also the
  paired one-sided test of "the run is worse" over the queries both runs were evaluated on has
  ``p < A``.  The p-value is reported either way.  Gated metrics are every computed metric except
  the bounds E, IUB and WLB, which describe the pool rather than the run.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..core.variants import BOUND_VARIANTS

__all__ = ["Threshold", "Check", "parse_threshold", "check_thresholds", "check_baseline", "gated",
           "verdict"]

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
        v = float(value)
    except ValueError:
        raise ValueError(f"--fail-below {text!r}: {value!r} is not a number") from None
    if math.isnan(v):
        raise ValueError(f"--fail-below {text!r}: the threshold must be a number")
    return Threshold(parse(name.strip()), v)


def check_thresholds(result, thresholds) -> list[Check]:
    """A check per (run, threshold): fails when the run's mean is below the value (NaN fails too)."""
    out = []
    for rr in result.runs:
        for t in thresholds:
            mean = rr.mean[t.metric]
            failed = math.isnan(mean) or mean < t.value
            out.append(Check("fail-below", rr.name, t.metric, mean, t.value, failed))
    return out


def gated(metrics) -> list:
    """The metrics a baseline comparison gates: all but the pool's bounds."""
    return [m for m in metrics if m.variant not in BOUNDS]


def check_baseline(result, baseline, max_drop: float, alpha: float | None = None, test: str = "t",
                   seed: int = 0) -> list[Check]:
    """A check per (run, gated metric) against ``baseline`` (an api.RunResult of the same metrics).

    The paired test runs over the queries both were evaluated on (all qrels queries by default);
    ``test`` is 't' (paired t-test) or 'randomization' (paired sign-flip test, seeded by ``seed``).
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
            else:
                raise ValueError(f"unknown test {test!r} (t or randomization)")
            mean, ref = rr.mean[m], baseline.mean[m]
            dropped = math.isnan(mean) or mean - ref < -max_drop
            significant = alpha is None or (not math.isnan(p) and p < alpha)
            n = int((~(np.isnan(x) | np.isnan(y))).sum())
            out.append(Check("baseline", rr.name, m, mean, ref, dropped and significant, p, n, test))
    return out


def _f(v: float) -> str:
    return "nan" if v is None or math.isnan(v) else f"{v:.4f}"


def describe(c: Check, names: str = "canonical", max_drop: float | None = None,
             alpha: float | None = None) -> str:
    """One line: run, metric, both means, the difference and (baseline checks) the p-value."""
    label = c.metric.trec_name() if names == "trec" else str(c.metric)
    if c.kind == "fail-below":
        rel = "<" if c.failed else ">="
        return (f"{c.run} {label}: mean {_f(c.mean)} {rel} {_f(c.reference)} (--fail-below), "
                f"difference {c.difference:+.4f}")
    test = {"t": "paired t", "randomization": "paired randomization"}[c.test]
    p = "nan" if c.p is None or math.isnan(c.p) else f"{c.p:.3g}"
    s = (f"{c.run} {label}: mean {_f(c.mean)} vs baseline {_f(c.reference)}, difference "
         f"{c.difference:+.4f}")
    if max_drop is not None:
        s += f" ({'<' if c.difference < -max_drop else '>='} -{max_drop:g}, --max-drop)"
    s += f", p = {p} ({test}, one-sided, n = {c.n}"
    if alpha is not None:
        s += f", alpha = {alpha:g}"
    return s + ")"


def verdict(checks, names: str = "canonical", max_drop: float | None = None,
            alpha: float | None = None) -> list[str]:
    """The short stderr verdict: a summary line, then one line per failing check."""
    failed = [c for c in checks if c.failed]
    if not failed:
        return [f"gate passed: {len(checks)} {'check' if len(checks) == 1 else 'checks'}"]
    lines = [f"gate FAILED: {len(failed)} of {len(checks)} {'check' if len(checks) == 1 else 'checks'}"]
    lines += ["  " + describe(c, names, max_drop, alpha) for c in failed]
    return lines
