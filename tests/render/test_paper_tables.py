"""compare -f latex / -f markdown: the exact table on a hand-checked case, and the significance marks
on DL-HARD against p-values computed without the code under test (scipy's paired t-test, statsmodels'
corrections)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from click.testing import CliRunner

from ulnorm_eval.cli.main import main
from conftest import invoke, cli

QUERIES = [f"q{i}" for i in range(1, 7)]


@pytest.fixture
def case(write):
    """6 queries, each d1 relevant and d2, d3 not.  d1's rank per query: A 1 everywhere; B 1 on q1-q3,
    2 on q4-q6; C 3 on q1-q5, 1 on q6.

    Hand-checked means: P@1: A 1, B 1/2, C 1/6.  RR: A 1, B (3 + 3/2)/6 = 0.75, C (5/3 + 1)/6 = 0.4444.
    UL2 (E[P@1] = 1/3, E[RR] = (1 + 1/2 + 1/3)/3 = 11/18, IUB = 1): a value above E maps to
    (A-E)/(1-E), below to (A-E)/E: P@1 1 -> 1, 0 -> -1; RR 1/2 -> -2/11, 1/3 -> -5/11; so
    UL2(P@1): A 1, B 0, C -4/6; UL2(RR): A 1, B (3 - 6/11)/6 = 0.4091, C (-25/11 + 1)/6 = -0.2121.
    """
    qrels = "".join(f"{q} 0 {d} {int(d == 'd1')}\n" for q in QUERIES for d in ("d1", "d2", "d3"))
    ranks = {"A": [1] * 6, "B": [1, 1, 1, 2, 2, 2], "C": [3, 3, 3, 3, 3, 1]}
    paths = {"qrels": write("qrels", qrels)}
    for name, pos in ranks.items():
        lines = []
        for q, p in zip(QUERIES, pos):
            order = ["d2", "d3"]
            order.insert(p - 1, "d1")
            lines += [f"{q} Q0 {d} {k + 1} {3 - k} {name}\n" for k, d in enumerate(order)]
        paths[name] = write(name, "".join(lines))
    return paths


def run_cli(args):
    return cli(*args).stdout


LATEX = r"""\begin{table}[t]
\centering
\caption{Mean over 6 queries; the best of each column in \textbf{bold}. Superscripts: the runs (by letter) a run is significantly better than (paired t-test, Holm correction over the 3 pairs of each measure, $\alpha = 0.05$).}
\label{tab:results}
\begin{tabular}{llrrrr}
\toprule
\# & Run & P@1 & UL2(P@1) & RR & UL2(RR) \\
\midrule
a & A & \textbf{1.0000}\textsuperscript{c} & \textbf{1.0000}\textsuperscript{c} & \textbf{1.0000}\textsuperscript{c} & \textbf{1.0000}\textsuperscript{c} \\
b & B & 0.5000 & 0.0000 & 0.7500 & 0.4091 \\
c & C & 0.1667 & $-$0.6667 & 0.4444 & $-$0.2121 \\
\bottomrule
\end{tabular}
\end{table}
"""

MARKDOWN_BASELINE = """| Run | P@1 | UL2(P@1) | RR | UL2(RR) |
|:-|-:|-:|-:|-:|
| A | **1.0000**<sup>†</sup> | **1.0000**<sup>†</sup> | **1.0000**<sup>†</sup> | **1.0000**<sup>†</sup> |
| B | 0.5000 | 0.0000 | 0.7500 | 0.4091 |
| C (baseline) | 0.1667 | -0.6667 | 0.4444 | -0.2121 |

Mean over 6 queries; the best of each column in **bold**. †/‡: significantly better/worse than the baseline C (paired t-test, Holm correction over the 2 comparisons with the baseline of each measure, α = 0.05).
"""

MARKDOWN_LOOSE = """| # | Run | P@1 |
|:-|:-|-:|
| a | A | **1.0000**<sup>bc</sup> |
| b | B | 0.5000 |
| c | C | 0.1667 |

Mean over 6 queries; the best of each column in **bold**. Superscripts: the runs (by letter) a run is significantly better than (paired t-test, no correction for multiple comparisons, α = 0.2).
"""


def test_latex_pairwise_exact(case):
    """A - C: differences (1,1,1,1,1,0) on P@1, t = 5, p = 0.0041, Holm x3 = 0.0123 < 0.05: A gets 'c';
    A - B: (0,0,0,1,1,1), t = 2.236, p = 0.0756: not significant; B - C: t = 1, p = 0.363."""
    out = run_cli(["compare", "-f", "latex", "-m", "P@1", "-m", "RR", "--norm", "ul2", "--pool", "run", case["qrels"], case["A"], case["B"],
                   case["C"]])
    assert out == LATEX


def test_markdown_baseline_exact(case):
    """Against C only: A - C p = 0.0041 and B - C p = 0.363, Holm over the two: 0.0082, 0.363: A gets †."""
    out = run_cli(["compare", "-f", "markdown", "-m", "P@1", "-m", "RR", "--norm", "ul2", "--pool", "run", "--baseline", case["C"],
                   case["qrels"], case["A"], case["B"], case["C"]])
    assert out == MARKDOWN_BASELINE
    # the run's name works as well as its path
    assert run_cli(["compare", "-f", "markdown", "-m", "P@1", "-m", "RR", "--norm", "ul2", "--pool", "run", "--baseline", "C",
                    case["qrels"], case["A"], case["B"], case["C"]]) == MARKDOWN_BASELINE


def test_markdown_uncorrected_loose_alpha(case):
    """alpha 0.2, no correction: A beats B (p = 0.0756) and C (p = 0.0041); B - C (p = 0.363) does not."""
    out = run_cli(["compare", "-f", "markdown", "-m", "P@1", "--norm", "none", "--alpha", "0.2", "--correction", "none",
                   case["qrels"], case["A"], case["B"], case["C"]])
    assert out == MARKDOWN_LOOSE


def test_latex_escapes_names(write, case):
    out = run_cli(["compare", "-f", "latex", "-m", "P@1", "--norm", "none", case["qrels"], case["A"],
                   write("my_run&1", open(case["B"]).read())])
    assert r"my\_run\&1" in out


def test_baseline_needs_a_known_run(case):
    res = invoke("compare", "-f", "latex", "--baseline", "Z", case["qrels"], case["A"], case["B"])
    assert res.exit_code == 2 and "--baseline Z: not one of the RUNS" in res.output


def _table_marks(text: str, runs: list, metrics: list) -> dict:
    """(run, metric) -> superscript text, read back from a markdown table."""
    out = {}
    rows = [line for line in text.splitlines() if line.startswith("| ")][1:]
    for line in rows:
        cells = [c.strip().replace(" (baseline)", "") for c in line.strip("|").split("|")]
        run = cells[0] if cells[0] in runs else cells[1]
        assert run in runs
        vals = cells[-len(metrics):]
        for m, v in zip(metrics, vals):
            out[(run, m)] = v.split("<sup>")[1].split("</sup>")[0] if "<sup>" in v else ""
    return out


def _adjusted(p, correction):
    """statsmodels' corrections (independent of analysis.stats.adjust)."""
    from statsmodels.stats.multitest import multipletests

    method = {"bonferroni": "bonferroni", "holm": "holm", "bh": "fdr_bh"}.get(correction)
    return np.asarray(p) if method is None else multipletests(p, method=method)[1]


def _p_t(x, y):
    from scipy.stats import ttest_rel

    return ttest_rel(x, y).pvalue


@pytest.mark.parametrize("correction", ["holm", "bh", "bonferroni", "none"])
def test_marks_follow_independent_p_values_on_dlhard(shared, correction):
    """Every superscript of the pairwise and the baseline tables, recomputed from the per-query values
    with scipy.stats.ttest_rel and statsmodels' multipletests over the pairs of the metric."""
    from ulnorm_eval import evaluate

    d = shared / "dlhard-passage"
    names = ["bm25", "bm25_rm3", "bm25_bert_zs", "bm25_t5_zs"]
    paths = [str(d / "runs" / f"{n}.run.gz") for n in names]
    metrics = ["nDCG@10", "UL2(nDCG@10)", "AP", "UL2(AP)"]
    res = evaluate(str(d / "qrels.txt"), paths, ["nDCG@10", "AP"], variants=["UL2"])
    runs = [rr.name for rr in res.runs]
    vals = {rr.name: {str(m): rr.values[m] for m in res.metrics} for rr in res.runs}
    args = ["compare", "-f", "markdown", "-m", "nDCG@10", "-m", "AP", "--norm", "ul2", "--correction", correction,
            str(d / "qrels.txt"), *paths]
    shown = _table_marks(run_cli(args), runs, metrics)
    letters = dict(zip(runs, "abcd"))
    seen = 0
    for m in metrics:
        pairs = list(itertools.combinations(runs, 2))
        p = _adjusted(np.array([_p_t(vals[a][m], vals[b][m]) for a, b in pairs]), correction)
        expect = {r: "" for r in runs}
        for (a, b), pv in zip(pairs, p):
            if pv < 0.05:
                win, lose = (a, b) if vals[a][m].mean() > vals[b][m].mean() else (b, a)
                expect[win] += letters[lose]
        for r in runs:
            assert shown[(r, m)] == "".join(sorted(expect[r])), (r, m)
            seen += len(expect[r])
    assert seen > 0  # the data does separate some runs

    base, marked = runs[0], 0
    shown = _table_marks(run_cli(args[:1] + ["--baseline", base] + args[1:]), runs, metrics)
    for m in metrics:
        others = [r for r in runs if r != base]
        p = _adjusted(np.array([_p_t(vals[r][m], vals[base][m]) for r in others]), correction)
        for r, pv in zip(others, p):
            d_ = vals[r][m].mean() - vals[base][m].mean()
            assert shown[(r, m)] == ("" if pv >= 0.05 else ("†" if d_ > 0 else "‡")), (r, m)
            marked += pv < 0.05
    assert marked > 0


def test_api_paper_table_is_the_cli_table(case):
    from ulnorm_eval import compare, paper_table

    cmp = compare(case["qrels"], [case["A"], case["B"], case["C"]], ["P@1", "RR"], variants=["UL2"], pool="run")
    assert paper_table(cmp, "latex") == LATEX
    assert paper_table(cmp, "markdown", baseline="C") == MARKDOWN_BASELINE


def test_caption_names_the_query_set(case, shared):
    out = run_cli(["compare", "-f", "markdown", "-m", "P@1", "--norm", "none", "--subset", "uninformative", "--subset-size",
                   "4", case["qrels"], case["A"], case["B"], case["C"]])
    assert out.splitlines()[-1].startswith("Mean over 4 queries of the uninformative subset (Karmaker & Feng 2022 §4.4);")
    d = shared / "dlhard-passage"
    out = run_cli(["compare", "-f", "markdown", "-m", "AP", "--norm", "ul2", "--undefined", "skip", "--pool", "qrels",
                   str(d / "qrels.txt"),
                   str(d / "runs" / "bm25.run.gz"), str(d / "runs" / "bm25_rm3.run.gz")])
    # on the judged pool UL2(AP) is undefined (E = IUB) on 9 of the 50 queries, which --undefined skip leaves out
    assert out.splitlines()[-1].startswith("Mean over 41–50 queries, queries undefined for some run left out per "
                                           "measure;")


def test_output_extension_picks_the_paper_table(case, tmp_path):
    """`-o table.tex` without -f writes the latex table (as -f latex does), and .md the markdown one."""
    for ext, fmt in ((".tex", "latex"), (".md", "markdown")):
        out = tmp_path / f"t{ext}"
        res = CliRunner().invoke(main, ["compare", "-m", "P@1", "--norm", "none", "-o", str(out), case["qrels"],
                                        case["A"], case["B"], case["C"]])
        assert res.exit_code == 0, res.output
        want = run_cli(["compare", "-f", fmt, "-m", "P@1", "--norm", "none", case["qrels"], case["A"], case["B"],
                        case["C"]])
        assert out.read_text() == want


def test_control_characters_in_run_names_do_not_break_paper_rows(write, case):
    name = write("run\nwith\x1bnewline", open(case["B"]).read())
    for fmt in ("latex", "markdown"):
        out = run_cli(["compare", "-f", fmt, "-m", "P@1", "--norm", "none", case["qrels"], case["A"], name])
        assert "\x1b" not in out
        rows = [line for line in out.splitlines() if "with" in line]
        assert len(rows) >= 1 and all("run" in line for line in rows)  # the name stayed on its row
