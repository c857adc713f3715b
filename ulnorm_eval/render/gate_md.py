"""The gate's checks as text: the verdict on stderr (:func:`verdict`, a line per check) and as Markdown
(``eval --summary-md FILE``: a row per check, then every run's means; thresholds and margins as
docs/gate.md defines them)."""
from __future__ import annotations

import math

from ..analysis.gate import decimal4, signed4
from ..core.records import TEXT_FAMILIES  # filled once summ has parsed its measures
from ..pipeline.blocks import pool_words
from .table import all_row_rule, interval_caption, interval_variant, pooled_shown, span
from .values import markdown_text as _md, metric_label, safe_text, zscores  # _md: inert Markdown

__all__ = ["gate_markdown", "verdict", "gate_head", "describe", "check_label"]


def check_label(check, names: str = "canonical") -> str:
    """The check's metric as printed: a z-score (-Z) is 'Z' + the measure's name, said to be one."""
    text = metric_label(check.metric, names, check.zscore)
    return f"{text} (z-score, -Z)" if check.zscore else text


TEST_NAMES = {"t": "paired t", "randomization": "paired randomization", "bootstrap": "paired bootstrap"}


def describe(check, names: str = "canonical", max_drop: float | None = None,
             alpha: float | None = None) -> str:
    """One line per check, passed or failed: the run, the metric, the value, the threshold it is held
    to and the margin (value minus threshold: negative fails), and for baseline checks the p-value."""
    # the run's name is a file's: escaped (the message line is not again)
    head = f"{'FAIL' if check.failed else 'pass'} {safe_text(check.run)} {check_label(check, names)}"
    holes = f"; holes: {check.holes}" if check.holes else ""
    tail = (f"; undefined: {check.undefined}" if check.undefined else "") + holes
    lower = check.sign < 0  # a lower value is better: above the threshold, a rise fails
    if check.kind == "fail-below":
        side = ", lower is better: above it fails" if lower else ""
        return (f"{head}: mean {decimal4(check.mean)}{_over(check)}, threshold {decimal4(check.reference)} (--fail-below{side}), "
                f"margin {signed4(check.sign * check.difference + 0.0)}{tail}")
    drop = max_drop or 0.0
    limit = drop + 0.0 if lower else 0.0 - drop  # 0.0 - 0.0 is +0.0: no "-0"
    p_text = "nan" if check.p is None or math.isnan(check.p) else f"{check.p:.3g}"
    sentence = (f"{head}: mean {decimal4(check.mean)} vs baseline {decimal4(check.reference)}, difference {signed4(check.difference)}, "
         f"limit {signed4(limit)} (--max-drop{', lower is better: a rise fails' if lower else ''}), "
         f"margin {signed4(check.sign * (check.difference - limit) + 0.0)}")
    sentence += f", p = {p_text} ({TEST_NAMES.get(check.test, check.test)}, one-sided, n = {check.n}{_of(check)}"
    if alpha is not None:
        sentence += f", alpha = {alpha:g}"
    return sentence + ")" + tail


def _of(check) -> str:
    """The queries a check's mean (or test) is over, after its n: " of 50 queries" (the qrels'), if known."""
    total = getattr(check, "total", 0)
    return f" of {total} {'query' if total == 1 else 'queries'}" if total else ""


def _over(check) -> str:
    return f" over {check.n}{_of(check)}" if _of(check) else ""


def verdict(checks, names: str = "canonical", max_drop: float | None = None,
            alpha: float | None = None) -> list[str]:
    """The stderr verdict: a summary line, then every check on its own line (passed and failed)."""
    return [gate_head(sum(bool(check.failed) for check in checks), len(checks))] + [
        "  " + describe(check, names, max_drop, alpha) for check in checks]


def gate_head(failed: int, checks: int) -> str:
    """The verdict's first line: 'gate passed: 3 checks' or 'gate FAILED: 1 of 3 checks'."""
    noun = "check" if checks == 1 else "checks"
    return f"gate FAILED: {failed} of {checks} {noun}" if failed else f"gate passed: {checks} {noun}"


def _f(value) -> str:
    if isinstance(value, str):  # a text measure's 'all' row (runid, relstring): shown as text
        return _md(value)
    return decimal4(value)


def gate_markdown(result, checks, names: str = "canonical", baseline: str | None = None,
                  max_drop: float | None = None, alpha: float | None = None) -> str:
    """The Markdown text: verdict heading, checks table, means table."""
    zscore_table = zscores(result)
    label = lambda metric: metric_label(metric, names, zscore_table)  # noqa: E731
    lines = [_heading(checks), ""]
    if checks:
        lines += _check_lines(checks, names, (baseline, max_drop, alpha))
    metrics = list(result.metrics)
    lines += ["| run | " + " | ".join(_md(label(metric)) for metric in metrics) + " |",
              "|:-|" + "-:|" * len(metrics)]
    lead = interval_variant(result)
    for run in result.runs:
        lines.append(f"| {_md(run.name)} | " + " | ".join(_f(run.mean[metric]) + _interval(run, metric, lead) for metric in metrics)
                     + " |")
    notes = _notes(result)
    if notes:
        lines += [""] + [f"- {note}" for note in notes]
    return "\n".join(lines) + "\n"


def _heading(checks) -> str:
    """'## ulnorm-eval gate: FAILED (1 of 3 checks)': :func:`gate_head` as a heading."""
    if not checks:
        return "## ulnorm-eval: no gate checks (--fail-below, --baseline)"
    verdict, counts = gate_head(sum(bool(item.failed) for item in checks), len(checks)).split(": ")
    return f"## ulnorm-eval gate: {verdict.removeprefix('gate ')} ({counts})"


def _check_lines(checks, names: str, baseline_gate: tuple) -> list:
    """The checks table (a row per check: verdict, run, metric, the check, mean, threshold, margin, p),
    then a line per check failed because its mean is undefined; ``baseline_gate`` = (--baseline,
    --max-drop, --alpha)."""
    baseline, max_drop, alpha = baseline_gate
    lines = ["| result | run | metric | check | mean | threshold | margin | p |", "|:-|:-|:-|:-|-:|-:|-:|:-|"]
    for item in checks:
        verdict = "❌ fail" if item.failed else "✅ pass"
        if getattr(item, "undefined", ""):
            verdict += " (undefined)"
        lower = item.sign < 0 and " (lower is better)"
        if item.kind == "fail-below":
            check, threshold, p_text = f"--fail-below {item.reference:g}{lower or ''}{_over(item)}", item.reference, ""
        else:
            drop = max_drop or 0.0
            threshold = item.reference - item.sign * drop
            check = f"--baseline {baseline} ({_f(item.reference)}) --max-drop {drop:g}{lower or ''}"
            p_text = "nan" if item.p is None or math.isnan(item.p) else f"{item.p:.3g}"
            p_text += f" ({TEST_NAMES[item.test]}, one-sided, n = {item.n}{_of(item)}"
            p_text += f"; fails if < {alpha:g})" if alpha is not None else "; not required)"
        margin = item.sign * (item.mean - threshold) + 0.0 if not math.isnan(item.mean) else math.nan
        lines.append(f"| {verdict} | {_md(item.run)} | {_md(check_label(item, names))} | {_md(check)} | {_f(item.mean)} | "
                     f"{_f(threshold)} | {signed4(margin)} | {p_text} |")
    lines.append("")
    undefined = [item for item in checks if getattr(item, "undefined", "")]
    lines += [f"- {_md(item.run)} {_md(check_label(item, names))}: {_md(item.undefined)}, so the check fails"
              for item in undefined]
    return lines + ([""] if undefined else [])


def _interval(run, metric, lead) -> str:
    """After the leading normalisation's mean: its 95% interval against a random ordering, n.s. if it holds 0."""
    interval = getattr(run, "interval", {}).get(metric) if metric.variant == lead else None
    return "" if interval is None or any(math.isnan(bound) for bound in interval) else " " + span(*interval, 4, True)


def caption_notes(result) -> dict:
    """What the means of the variants are, in the table caption's words: ``random``, the random ranking of
    the pool, and ``all_row``, the 'all' row of the normalisations (mean EM over N queries, ...); empty
    for summ's (no ranking pool, 'all' rows the means of per-document values) and plain measures."""
    if (any(getattr(metric.measure, "base", None) in TEXT_FAMILIES for metric in result.metrics)
            or not pooled_shown(result.metrics)):
        return {}
    counts = {len(rr.qids) for rr in result.runs}
    rule = all_row_rule(result.metrics, result.options, f"{counts.pop()} queries" if len(counts) == 1 else "")
    return {"random": pool_words(result.options), **({"all_row": rule} if rule else {})}


def _notes(result) -> list:
    """The caption's lines for --summary-md: :func:`caption_notes`, then the interval's."""
    out = [f"random = {text}" if key == "random" else text for key, text in caption_notes(result).items()]
    return [_md(note) for note in out + ([interval_caption(result)] if out else []) if note]
