"""Tables for papers (``compare -f latex`` / ``-f markdown``, docs/comparing.md): systems x metrics, the
best per column in bold, significance as superscripts (the letters of the runs a mean beats, as ranx's
report; with a baseline † better and ‡ worse than it), the test and correction named in the caption."""
from __future__ import annotations

import itertools
import math
import string

from ..analysis.marks import baseline_marks, pairwise_marks
from .values import isnan, latex_text, markdown_text

__all__ = ["format_latex", "format_markdown", "paper_table", "caption_text", "TEST_NAMES", "CORRECTION_NAMES"]

TEST_NAMES = {"t": "paired t-test", "wilcoxon": "Wilcoxon signed-rank test", "randomization": "paired randomization test",
              "bootstrap": "paired bootstrap test (Sakai 2006)", "tukey": "randomised Tukey HSD test (Carterette 2012)"}
CORRECTION_NAMES = {"none": "no correction for multiple comparisons", "bonferroni": "Bonferroni correction",
                    "holm": "Holm correction", "bh": "Benjamini-Hochberg correction",
                    "inherent": "p-values adjusted by the test itself"}
REPS_NAMES = {"randomization": "sign flips", "bootstrap": "resamples", "tukey": "permutations"}
BETTER, WORSE = "†", "‡"


def _letters(count: int) -> list:
    """The runs' letters: a, b, ..., z, aa, ab, ..."""
    words = (map("".join, itertools.product(string.ascii_lowercase, repeat=n)) for n in itertools.count(1))
    return list(itertools.islice(itertools.chain.from_iterable(words), count))


def caption_text(meta: dict, runs: list, baseline: str | None, tex: bool) -> str:
    """What the table shows: queries, bold, superscripts, the test with its repetitions, correction and alpha."""
    test = TEST_NAMES[meta["test"]]
    if meta["test"] in REPS_NAMES:
        test += f", {meta['reps']:,} {REPS_NAMES[meta['test']]}"
    alpha = f"$\\alpha = {meta['alpha']:g}$" if tex else f"α = {meta['alpha']:g}"
    corr = CORRECTION_NAMES[meta["correction"]]
    n_runs = len(runs)
    bold = "\\textbf{bold}" if tex else "**bold**"
    counts = sorted(set((meta.get("metric_queries") or {}).values())) or [meta["queries"]]
    n_queries = str(counts[0]) if len(counts) == 1 else f"{counts[0]}–{counts[-1]}"
    where = ""
    if meta.get("subset", "all") != "all":
        where = f" of the {meta['subset']} subset (Karmaker & Feng 2022 §4.4)"
    if len(counts) > 1:
        where += ", queries undefined for some run left out per measure"
    head = f"Mean over {n_queries} queries{where}; the best of each column in {bold}. "
    if meta.get("holes"):
        head += (f"{HOLES_MARK} after a mark: the unjudged documents could reverse that order (the two runs' "
                 "mean [LB, UB] intervals over the grades of their unjudged documents overlap). ")
    every = f" over the {n_runs * (n_runs - 1) // 2} pairs of each measure"
    if baseline is None:
        over = "" if meta["correction"] == "none" else every
        return (head + "Superscripts: the runs (by letter) a run is significantly better than "
                f"({test}, {corr}{over}, {alpha}).")
    baseline_text = _escape(baseline) if tex else markdown_text(baseline)
    dag, ddag = ("\\dag", "\\ddag") if tex else (BETTER, WORSE)
    over = {"none": "", "inherent": every}.get(meta["correction"], f" over the {n_runs - 1} comparisons with the baseline "
                                                                   "of each measure")
    return (head + f"{dag}/{ddag}: significantly better/worse than the baseline {baseline_text} ({test}, {corr}{over}, "
            f"{alpha}).")


_escape = latex_text  # names in LaTeX (values.latex_text: control characters, TeX's specials, < > |)


HOLES_MARK = "*"  # after a significance mark: the unjudged documents could reverse the order


def _reversible(pairs) -> set:
    """{(metric, run, run)} of the pairs whose order the holes could reverse (both orders)."""
    if "holes_overlap" not in pairs.columns:
        return set()
    out = set()
    for metric, run_a, run_b, holds in zip(pairs["metric"], pairs["run_a"], pairs["run_b"], pairs["holes_overlap"]):
        if not isnan(holds) and int(holds) == 1:
            out |= {(metric, run_a, run_b), (metric, run_b, run_a)}
    return out


def _cell(value: float, best: float, mark: str, precision: int, tex: bool) -> str:
    if math.isnan(value):
        return "--" if tex else "–"
    text = f"{value:.{precision}f}"
    if tex and text.startswith("-"):
        text = "$-$" + text[1:]
    if value == best:
        text = f"\\textbf{{{text}}}" if tex else f"**{text}**"
    if mark:
        text += f"\\textsuperscript{{{mark}}}" if tex else f"<sup>{mark}</sup>"
    return text


def _mark(marks, run, metric, letter, baseline, tex) -> str:
    rev, marks = marks["holes"], marks["runs"]
    star = (lambda other: HOLES_MARK if (metric, run, other) in rev else "")  # noqa: E731
    if baseline is None:
        return "".join(letter[mark] + star(mark) for mark in marks[(run, metric)])
    if run == baseline:
        return ""
    kind = marks[(run, metric)][2]
    if not kind:
        return ""
    return {"better": ("\\dag" if tex else BETTER), "worse": ("\\ddag" if tex else WORSE)}[kind] + star(baseline)


def _rows(frames: dict, precision, meta: dict, tex: bool):
    """(header, a row per run: [its letter,] its name and its cells, runs, metrics, baseline)."""
    precision, baseline = 4 if precision is None else precision, meta.get("baseline")
    systems, pairs = frames["systems"], frames["pairs"]
    runs, metrics = list(dict.fromkeys(systems["run"])), list(dict.fromkeys(systems["metric"]))
    mean = {(run, metric): value for run, metric, value in zip(systems["run"], systems["metric"], systems["mean"])}
    lower = meta.get("lower_better", ())  # metrics whose best mean is the lowest (Family.better)
    best = {}
    for metric in metrics:
        vals = [mean[(run, metric)] for run in runs if not math.isnan(mean[(run, metric)])]
        best[metric] = (min if metric in lower else max)(vals) if vals else math.nan
    # with a baseline, the pairs against it (analysis.marks.against_baseline: corrected over them)
    marks = {"runs": pairwise_marks(pairs, runs, metrics, lower) if baseline is None
             else baseline_marks(frames["baseline_pairs"], lower), "holes": _reversible(pairs)}
    letter = dict(zip(runs, _letters(len(runs))))
    esc = _escape if tex else markdown_text  # a run named `**x**`, [x](url) or <img> must not format the table
    head = (["\\#" if tex else "#"] if baseline is None else []) + ["Run"] + [esc(metric) for metric in metrics]
    rows = [([letter[run]] if baseline is None else []) + [esc(run) + (" (baseline)" if run == baseline else "")]
            + [_cell(mean[(run, metric)], best[metric], _mark(marks, run, metric, letter, baseline, tex), precision, tex)
               for metric in metrics] for run in runs]
    return head, rows, runs, metrics, baseline


def format_latex(frames: dict, precision, meta: dict) -> str:
    """A booktabs ``table`` environment (needs ``\\usepackage{booktabs}``)."""
    head, rows, runs, metrics, baseline = _rows(frames, precision, meta, True)
    cols = ("l" if baseline is None else "") + "l" + "r" * len(metrics)
    lines = ["\\begin{table}[t]", "\\centering",
             f"\\caption{{{meta.get('caption') or caption_text(meta, runs, baseline, True)}}}",
             f"\\label{{{meta.get('label') or 'tab:results'}}}",
             f"\\begin{{tabular}}{{{cols}}}", "\\toprule", " & ".join(head) + " \\\\", "\\midrule"]
    lines += [" & ".join(row) + " \\\\" for row in rows]
    lines += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
    return "\n".join(lines) + "\n"


def format_markdown(frames: dict, precision, meta: dict) -> str:
    """A GitHub-flavoured Markdown table and its caption (a paragraph below it)."""
    head, rows, runs, metrics, baseline = _rows(frames, precision, meta, False)
    align = [":-"] * (len(head) - len(metrics)) + ["-:"] * len(metrics)
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    lines += ["", meta.get("caption") or caption_text(meta, runs, baseline, False)]
    return "\n".join(lines) + "\n"


def paper_table(comparison, fmt: str = "latex", precision: int = 4, caption: str | None = None,
                label: str = "tab:results") -> str:
    """The table of a :class:`~ulnorm_eval.analysis.compare.Comparison` in ``'latex'`` or ``'markdown'``;
    its marks are against its baseline when it has one (analysis.marks.against_baseline)."""
    formatter = {"latex": format_latex, "markdown": format_markdown}.get(fmt)
    if formatter is None:
        raise ValueError(f"unknown table format {fmt!r} (latex or markdown)")
    meta = {"baseline": None, **comparison.meta, "caption": caption, "label": label,
            "metric_queries": {metric: len(qids) for metric, qids in comparison.queries.items()}}
    # the comparison's own tables, as compare -f latex renders them: its DataFrames (.systems, .pairs) would
    # import pandas only to be read here; an assigned DataFrame replaces its table
    tables = comparison.tables
    names = ("systems", "pairs", *(("baseline_pairs",) if meta["baseline"] is not None else ()))
    return formatter({name: tables[name] if name in tables else getattr(comparison, name) for name in names},
                     precision, meta)
