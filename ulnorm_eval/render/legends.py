"""One line per column of compare's tables, the one definition: printed under each table (-f table), in
``compare --table``'s help and in docs/comparing.md (tests/analysis/test_compare.py checks that every column a
table can have has its line).  Imports nothing: ``--help`` stays instant."""
from __future__ import annotations


def correction_words(correction: str) -> str:
    """How a table's title names ``--correction``: 'holm correction', or for a test that adjusts its own
    p-values (Tukey HSD: 'inherent') what it did."""
    return "p-values adjusted by the test" if correction == "inherent" else f"{correction} correction"


def percent(level) -> str:
    """A confidence level as a percentage: '95%' at 0.95."""
    return f"{round(100 * float(level), 6):g}%"


def interval_percent(alpha) -> str:
    """The level of compare's pair intervals, (1 - alpha) as a percentage: '95%' at alpha 0.05."""
    return percent(1 - float(alpha))


COLUMNS = {
    "pairs": {
        "metric": "the measure or variant compared",
        "run_a": "the first run of the pair (with --baseline: the run tested)",
        "run_b": "the second run (with --baseline: the baseline)",
        "diff": "mean of run_a minus mean of run_b over the queries",
        "effect": "d_z: diff divided by the standard deviation of the per-query differences",
        "ci_low": "lower end of the (1 - alpha) interval of diff, uncorrected (bootstrap: percentile interval)",
        "ci_high": "upper end of that interval",
        "statistic": "the test's statistic: t for the t-test and the bootstrap, the smaller signed-rank sum for "
                     "Wilcoxon, the mean difference for randomization and Tukey HSD",
        "p": "two-sided p-value of the paired test (--test; Tukey HSD's is adjusted for every pair of the runs)",
        "p_adj": "p after the multiple-comparison correction over the metric's pairs (--correction; Tukey HSD: p, "
                 "adjusted by the test itself)",
        "significant": "p_adj < alpha",
        "holes_overlap": "1 if the two runs' mean [LB, UB] intervals (--holes) overlap, so the unjudged documents "
                         "might reverse the pair; 0 if disjoint: no grades of them can",
        "holes_bootstrap_overlap": "1 if the runs' bootstrap [BSLO, BSHI] intervals (--holes-samples) overlap; none "
                                   "for AP, GMAP, Rprec (docs/holes.md)",
    },
    "systems": {
        "run": "the run (its file name)",
        "metric": "the measure or variant",
        "mean": "the run's mean of the per-query values, eval's 'all' row (for a normalisation such as EM, "
                "mean EM), whose per-query values the tests pair",
        "rank": "the run's rank under the metric (1 = best: the highest mean, the lowest where lower is better)",
    },
    "summary": {
        "metric": "the measure or variant",
        "measure": "the plain measure it is a variant of",
        "variant": "the variant (empty: the plain measure)",
        "queries": "queries compared (defined for every run)",
        "tau": "Kendall's tau between the runs' ranking under the metric and under the plain measure",
        "tau_low": "lower end of tau's (1 - alpha) percentile bootstrap interval over the queries (1,000 resamples, --seed)",
        "tau_high": "upper end of that interval",
        "tau_ap": "AP correlation tau_AP of the metric's ranking against the plain measure's (Yilmaz, Aslam & Robertson "
                  "2008): disagreements at the top weigh more",
        "significant": "pairs significant after --correction (discriminative power)",
        "pairs": "pairs of runs compared",
        "conflicts": "pairs significant under one of the plain measure and the metric, not under the other",
        "pad": "mean percentage absolute difference of two runs' means (Karmaker & Feng 2022 eq. 8)",
        "pad_k": "pad of the means averaged over the measure's cutoffs (Karmaker & Feng 2022 §4.4.3)",
        "cutoffs_k": "the cutoffs pad_k averages over",
        "split_half_swap_rate": "how often two random halves of the queries order a pair of runs oppositely "
                                "(--swap-trials splits)",
        "var_system": "variance component of the runs (Kanoulas & Aslam 2009, G-theory)",
        "var_topic": "variance component of the queries",
        "var_residual": "residual variance (run x query interaction and error)",
        "erho2": "generalisability coefficient Eρ² of the runs' ranking on these queries",
        "phi": "dependability Φ on these queries",
        "topics_needed": "queries needed for Φ to reach --phi-target",
        "swap_between": "share of run pairs ordered oppositely on the two --swap-between query sets",
        "swaps_between": "run pairs ordered oppositely on the two --swap-between query sets",
        "queries_a": "queries in the first --swap-between set",
        "queries_b": "queries in the second --swap-between set",
    },
}

# `repro`'s tables (analysis/repro.py; Breuer et al. 2020)
COLUMNS["measures"] = {
    "measure": "the measure",
    "original": "ORIGINAL's mean over the topics",
    "reproduced": "REPRODUCED's mean over the topics",
    "rmse": "root mean square of original - reproduced over the topics (Breuer et al. 2020 eq. 2)",
    "baseline_original": "B_ORIG's mean (--baseline-pair)",
    "baseline_reproduced": "B_REPR's mean",
    "baseline_rmse": "RMSE of the baseline pair",
    "er": "effect ratio: mean(REPRODUCED - B_REPR) / mean(ORIGINAL - B_ORIG) over the topics (eq. 4); 1 = the "
          "improvement reproduced whole",
    "delta_ri": "ΔRI: relative improvement over the baseline, original minus reproduced (eq. 5); 0 = the same",
}
COLUMNS["rankings"] = {
    "pair": "advanced (ORIGINAL, REPRODUCED) or baseline (--baseline-pair)",
    "original": "the original run", "reproduced": "the reproduced run",
    "topics": "topics both runs ranked documents for",
    "ktu": "Kendall's tau Union of each topic's two rankings, averaged (Breuer et al. 2020 §3.1; 1 = the same order)",
    "rbo": "rank-biased overlap of each topic's two rankings, averaged (Webber et al. 2010; 1 = the same documents "
           "in the same order)",
}

SYSTEMS_CELL = ("each cell: the run's mean of the per-query values, eval's 'all' row (its rank among the runs, 1 = "
                "best); for a normalisation such as EM, mean EM, whose per-query values the pairs' tests pair")


def legend_lines(table: str, columns) -> list:
    """``column: meaning`` for each of ``columns`` (in order) of compare's ``table``."""
    known = COLUMNS.get(table, {})
    return [f"{column}: {known[column]}" for column in columns if column in known]
