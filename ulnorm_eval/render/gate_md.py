"""The gate as Markdown (``eval --summary-md FILE``), for ``$GITHUB_STEP_SUMMARY`` or a merge-request note.

One heading with the verdict, one row per check (run, metric, the check, the run's mean, the
threshold, the margin and the verdict), then the means of every run ('all' rows), and with variants
on the random-ranking bounds what "random" is (the pool) and what a normalisation's 'all' row is.  For a ``--fail-below`` check
the threshold is the value given and the margin ``mean - value``; for a ``--baseline`` check the
threshold is ``mean(baseline) - max_drop`` and the margin ``mean - threshold``, and with ``--alpha``
the p-value decides whether a negative margin fails (a drop that is not significant passes).
"""
from __future__ import annotations

import math

from .values import markdown_text

__all__ = ["gate_markdown"]

_TEST = {"t": "paired t", "randomization": "paired randomization", "bootstrap": "paired bootstrap"}


def _f(v) -> str:
    if isinstance(v, str):  # a text measure's 'all' row (runid, relstring): shown as text
        return _cell(v)
    return "nan" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.4f}"


def _signed(v) -> str:
    return "nan" if v is None or math.isnan(v) else f"{v:+.4f}"


def _cell(text: str) -> str:
    """A name or reason in a cell or list item: inert Markdown (values.markdown_text)."""
    return markdown_text(text)


def gate_markdown(result, checks, names: str = "canonical", baseline: str | None = None,
                  max_drop: float | None = None, alpha: float | None = None) -> str:
    """The Markdown text: verdict heading, checks table, means table."""
    from ..analysis.gate import label as check_label
    from .values import metric_label, zscores

    z = zscores(result)
    label = lambda m: metric_label(m, names, z)  # noqa: E731
    failed = [c for c in checks if c.failed]
    n = len(checks)
    if not checks:
        head = "## ulnorm-eval: no gate checks (--fail-below, --baseline)"
    elif failed:
        head = f"## ulnorm-eval gate: FAILED ({len(failed)} of {n} {'check' if n == 1 else 'checks'})"
    else:
        head = f"## ulnorm-eval gate: passed ({n} {'check' if n == 1 else 'checks'})"
    lines = [head, ""]
    if checks:
        lines += ["| result | run | metric | check | mean | threshold | margin | p |",
                  "|:-|:-|:-|:-|-:|-:|-:|:-|"]
        for c in checks:
            verdict = "❌ fail" if c.failed else "✅ pass"
            if getattr(c, "undefined", ""):
                verdict += " (undefined)"
            if c.kind == "fail-below":
                check, threshold, p = f"--fail-below {c.reference:g}", c.reference, ""
            else:
                drop = max_drop or 0.0
                threshold = c.reference - drop
                check = f"--baseline {baseline} ({_f(c.reference)}) --max-drop {drop:g}"
                p = "nan" if c.p is None or math.isnan(c.p) else f"{c.p:.3g}"
                p += f" ({_TEST[c.test]}{' over per-query values' if getattr(c, 'of_means', False) else ''}, one-sided, n = {c.n}"
                p += f"; fails if < {alpha:g})" if alpha is not None else "; not required)"
            margin = c.mean - threshold if not math.isnan(c.mean) else math.nan
            lines.append(f"| {verdict} | {_cell(c.run)} | {_cell(check_label(c, names))} | {_cell(check)} | {_f(c.mean)} | "
                         f"{_f(threshold)} | {_signed(margin)} | {p} |")
        lines.append("")
        undefined = [c for c in checks if getattr(c, "undefined", "")]
        lines += [f"- {_cell(c.run)} {_cell(check_label(c, names))}: {_cell(c.undefined)}, so the check fails"
                  for c in undefined]
        if undefined:
            lines.append("")
    metrics = list(result.metrics)
    lines += ["| run | " + " | ".join(_cell(label(m)) for m in metrics) + " |",
              "|:-|" + "-:|" * len(metrics)]
    from .table import interval_variant

    lead = interval_variant(result)
    for rr in result.runs:
        lines.append(f"| {_cell(rr.name)} | " + " | ".join(_f(rr.mean[m]) + _interval(rr, m, lead) for m in metrics)
                     + " |")
    notes = _notes(result)
    if notes:
        lines += [""] + [f"- {n}" for n in notes]
    return "\n".join(lines) + "\n"


def _interval(rr, m, lead) -> str:
    """After the leading normalisation's mean: its 95% interval, and whether it holds the random value."""
    ci = getattr(rr, "interval", {}).get(m) if m.variant == lead else None
    if ci is None or any(math.isnan(x) for x in ci):
        return ""
    from ..core.records import VARIANTS
    from .table import NEAR_RANDOM

    at = VARIANTS[m.variant].below_random
    near = f" {NEAR_RANDOM}" if at is not None and ci[0] <= at <= ci[1] else ""
    return f" [{ci[0]:.4f}, {ci[1]:.4f}]{near}"


def _notes(result) -> list:
    """What the means of the variants are (the table caption's words): the random ranking of the pool,
    and the 'all' row of a normalisation (of the means, or the mean of per-query values)."""
    from ..pipeline.blocks import POOL_QUESTION
    from .table import pooled_shown, all_row_rule

    from ..core.records import TEXT_FAMILIES  # filled once summ has parsed its measures

    if any(getattr(m.measure, "base", None) in TEXT_FAMILIES for m in result.metrics):
        return []  # summ's: no ranking pool, and its 'all' rows are means of per-document values
    if not pooled_shown(result.metrics):
        return []
    o = result.options
    out = [f"random = {POOL_QUESTION[o.pool]} (--pool {o.pool})"]
    rule = all_row_rule(result.metrics, o)
    if rule:
        out.append(rule)
    from .table import interval_caption

    ci = interval_caption(result)
    if ci:
        out.append(ci)
    return [_cell(n) for n in out]
