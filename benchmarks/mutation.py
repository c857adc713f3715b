"""Mutation benchmark: does the test suite notice deliberate bugs?

Each mutant is one source-text substitution (file, old text, new text) in a COPY of the package,
with the few test files that should notice it.  For every mutant the script copies ``ulnorm_eval/``
to a fresh temporary folder, applies the substitution (the old text must occur exactly once), and
runs ``python -m pytest -x`` on its test files with that copy first on the import path
(``ULNORM_EVAL_CODE``, honoured by tests/conftest.py for the tests and for every child process
they start).  A mutant is *killed* when a test fails, *survives* when all pass.  A surviving
mutant is a missing test, unless it is listed as equivalent (it cannot change any output; the
reason is given here and in docs/testing.md).

    python benchmarks/mutation.py                  # every mutant, 2 at a time, nice'd
    python benchmarks/mutation.py -k gate -j 1     # the mutants whose id contains 'gate'
    python benchmarks/mutation.py --list           # the list, nothing run
    python benchmarks/mutation.py --json out.json  # also write the outcomes as JSON

Run it before resolving an issue that touches measures, bounds, statistics or the gate, and add a
mutant for the bug the issue was about.  Nothing here touches the checkout: copies live in the
system's temporary folder and are removed afterwards.  Exit code 0 when every mutant that is not
listed as equivalent is killed, 1 otherwise, 2 on a stale list (an old text not found exactly once)
or when the unmutated copy fails its own tests.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "ulnorm_eval"


@dataclass(frozen=True)
class Mutant:
    id: str
    file: str  # relative to ulnorm_eval/
    old: str
    new: str
    description: str
    tests: tuple  # test files or node ids, relative to the repository root
    equivalent: str = ""  # why no output can change (then it is expected to survive)


# Test groups (a mutant names the fastest files that should notice it).
PARITY = ("tests/parity/test_trec_eval_conformance.py",)
SMALL = ("tests/parity/test_trec_eval_small.py",)
BRUTE = ("tests/core/test_bounds_bruteforce.py",)
NORM = ("tests/core/test_normalise.py",)
STATS = ("tests/analysis/test_stats.py", "tests/analysis/test_corrections.py")
GATE = ("tests/analysis/test_gate.py",)
F32 = ("tests/parity/test_float32.py", "tests/cli/test_eval.py")

MUTANTS = [
    # ------------------------------------------------------------------ measures
    Mutant("P@k-off-by-one", "core/measures/precision.py",
           '"k": lambda measure, R, ret: measure.cutoff,', '"k": lambda measure, R, ret: measure.cutoff + 1,',
           "P@k counts the document at rank k+1", PARITY),
    Mutant("AP-precision-rank", "core/measures/precision.py",
           '[row]) / (ranking.pos[idx] + 1.0)', '[row]) / (ranking.pos[idx] + 2.0)',
           "precision at a relevant document divides by rank + 1", PARITY),
    Mutant("RR-rank", "core/measures/precision.py",
           'out[rows] = 1.0 / (ranking.pos[idx[first]] + 1.0)', 'out[rows] = 1.0 / (ranking.pos[idx[first]] + 2.0)',
           "RR of the first relevant document off by one", PARITY),
    Mutant("Rprec-cutoff", "core/measures/precision.py",
           'count = ranking.count_within(idx, SIZES[depth](measure, R, ret))',
           'count = ranking.count_within(idx, SIZES[depth](measure, R, ret) + 1)',
           "Rprec (and every count of relevant documents) looks one document deeper", PARITY),
    Mutant("count-within-inclusive", "core/kernels.py",
           'keep = positions < (k if', 'keep = positions <= (k if',
           "a cutoff k counts the document at rank k+1 (P, R, Rprec, success, relative_P)", PARITY),
    Mutant("sum-within-inclusive", "core/kernels.py",
           "keep = self.pos[idx] < (k if", "keep = self.pos[idx] <= (k if",
           "AP@k and nDCG@k add the document at rank k+1", PARITY),
    Mutant("G-cost-past-ideal", "core/measures/trec_gains.py",
           'cost = last[query] + (position - n_positive + 1)', 'cost = last[query] + (position - n_positive)',
           "G's running cost past the ideal's positive gains misses one rank", PARITY + ("tests/core/test_sparse_kernels.py",)),
    Mutant("relstring-code-table", "core/measures/trec.py",
           'np.where(code > 9, 12, code + 2)', 'np.where(code > 9, 12, code + 1)',
           "relstring prints each code's neighbour in the table", PARITY + ("tests/core/test_sparse_kernels.py",)),
    Mutant("iprec-relevant-number", "core/measures/trec_precision.py",
           'rank_among_rel = np.arange(1, len(idx) + 1) - np.searchsorted(row, np.arange(ranking.nrows))[row]',
           'rank_among_rel = np.arange(len(idx)) - np.searchsorted(row, np.arange(ranking.nrows))[row] + 2',
           "interpolated precision numbers the relevant documents from 2", ("tests/parity/test_trec_measures.py",)),
    Mutant("E[Rndcg]-depth", "core/measures/trec_gains.py",
           'take = np.minimum(bpos, n[boundary_query]).astype(np.int64)', 'take = np.minimum(bpos + 1, n[boundary_query]).astype(np.int64)',
           "E[Rndcg] sums each DCG@b one rank too deep", ("tests/core/test_trec_bounds.py",)),
    Mutant("E[ndcg_rel]-above", "core/measures/trec_gains.py",
           'term = safe(mean[query] * discount(position) + pair[query] * D[position], ideal)', 'term = safe(mean[query] * discount(position) + pair[query] * D[position + 1], ideal)',
           "E[ndcg_rel] counts the document at rank p among those above it", ("tests/core/test_trec_bounds.py",)),
    Mutant("E[ndcg_rel]-pairs", "core/measures/trec_gains.py",
           'pair = safe(S, n), safe((n_positive - 1.0) * S, n * (n - 1.0))', 'pair = safe(S, n), safe(n_positive * S, n * (n - 1.0))',
           "E[ndcg_rel] pairs a positive-gain document with itself", ("tests/core/test_bounds_bruteforce.py",)),
    Mutant("E[ndcg_rel]-condition", "core/measures/trec.py",
           'return _nonneg_gains(measure) and all(float(level) >= 0 or float(value) == 0', 'return _nonneg_gains(measure) and all(True or float(value) == 0',
           "E[ndcg_rel]'s closed form used with a gain given to unpooled documents", ("tests/core/test_trec_bounds.py",)),
    Mutant("placed-ranks", "core/permutations.py",
           "None if judged.all() else judged, at=rank[keep]", "None if judged.all() else judged, at=None",
           "a placed ranking's documents ranked 1..s instead of at their drawn ranks", ("tests/core/test_placed.py",)),
    Mutant("placements-skewed", "core/permutations.py",
           '    uniforms *= high\n', '    uniforms *= uniforms\n    uniforms *= high\n',
           "placed documents' first ranks drawn skewed towards the top", ("tests/core/test_placed.py",)),
    Mutant("placed-judged-only", "core/pools.py",
           'if measure.get("judged_only") and ((codes < 0).any() or pool.extra is not None):',
           'if False and ((codes < 0).any() or pool.extra is not None):',
           "a -J measure placed on a pool with unjudged documents (its ranks close up)", ("tests/core/test_placed.py",)),
    Mutant("placed-shared-reads", "core/expectations.py",
           'key = (None, reads.tobytes()) if reads is not None else (measure.cutoff, None)', 'key = (measure.cutoff, None)',
           "measures reading different documents share one placement", ("tests/core/test_placed.py",)),
    Mutant("montecarlo-shared-depth", "core/expectations.py",
           "union, depth, reads)", "union, None, reads)",
           "measures with a cutoff drawn on whole shuffles when they share them", ("tests/core/test_sparse_kernels.py",)),
    Mutant("discount-log2", "core/kernels.py",
           "return 1.0 / np.log2(pos + 2.0)", "return 1.0 / np.log2(pos + 3.0)",
           "DCG discount 1/log2(i+2) instead of 1/log2(i+1)", PARITY),
    Mutant("relevant-strict", "core/kernels.py",
           'hit = ranking.grade >= rel', 'hit = ranking.grade > rel',
           "relevance level: grade > l instead of grade >= l", PARITY),
    Mutant("dcg-exp-gain", "core/measures/cumulative.py",
           "return np.exp2(g) - 1.0 if", "return np.exp2(g) if",
           "exp-log2 gain 2^g instead of 2^g - 1", ("tests/core/test_paper_examples.py",) + BRUTE),
    Mutant("rbp-scale", "core/measures/rbp.py",
           'return (1.0 - p) * ranking.rowsum(weights)', 'return ranking.rowsum(weights)',
           "RBP without its (1 - p) factor", ("tests/core/test_paper_examples.py", "tests/parity/test_ir_measures.py")),
    Mutant("gmean-floor", "core/summary.py",
           "GMEAN_FLOOR = 1e-5", "GMEAN_FLOOR = 1e-6",
           "gm_map's floor 1e-6 instead of trec_eval's 1e-5", PARITY + SMALL),
    # ------------------------------------------------------------------ expectations and bounds
    Mutant("E[SP]-pair-term", "core/measures/common.py",
           'pair_share = safe(P * (P - 1.0), n * (n - 1.0))', 'pair_share = safe(P * P, n * n)',
           "E[SP]: two ranks both relevant with probability (P/n)^2 (independence)", BRUTE),
    Mutant("E[SP]-harmonic", "core/measures/common.py",
           'return rel_share * H + pair_share * (m - H)', 'return rel_share * H + pair_share * m',
           "E[SP]: the pair term over m ranks instead of m - H_m", BRUTE),
    Mutant("E[SP]-paper", "core/measures/common.py",
           'return cutoff_or_n * rel_share ** 2', 'return cutoff_or_n * rel_share',
           "--expectation paper: E[SP@k] = k P/n instead of k (P/n)^2",
           ("tests/core/test_paper_examples.py", "tests/core/test_normalise.py", "tests/cli/test_variants.py")),
    Mutant("E[AP]-by-P", "core/measures/precision.py",
           'return float(random_pool.k) if random_pool.measure.get("norm") == "k" else random_pool.R',
           'return float(random_pool.k) if random_pool.measure.get("norm") == "k" else random_pool.P',
           "E[AP] divides by the pool's relevant documents P instead of the query's R",
           BRUTE + ("tests/core/test_trec_bounds.py", "tests/cli/test_variants.py")),
    Mutant("E[RR]-survival", "core/measures/common.py",
           'nonrel = np.where(inside, (left - P_block) / left, 1.0)', 'nonrel = np.where(inside, (left - P_block + 1.0) / left, 1.0)',
           "E[RR]: wrong probability that a rank is non-relevant", BRUTE),
    Mutant("E[DCG]-prefix", "core/measures/cumulative.py",
           'prefix = np.concatenate(([0.0], np.cumsum(rank_discount(random_pool.measure, np.arange(top)))))',
           'prefix = np.cumsum(rank_discount(random_pool.measure, np.arange(top + 1)))',
           "E[DCG@k] sums one discount too many", BRUTE),
    Mutant("E[P]-min-k-n", "core/measures/precision.py",
           'random_pool.mean_gain * np.minimum(n, SIZES[depth](measure, R, n))', 'random_pool.mean_gain * SIZES[depth](measure, R, n)',
           "E[P@k] = P/n, forgetting that a pool smaller than k fills only n ranks", BRUTE),
    Mutant("E[RBP]-depth", "core/measures/rbp.py",
           '(1.0 - np.power(random_pool.measure.get("p"), random_pool.m))', '(1.0 - np.power(random_pool.measure.get("p"), random_pool.m + 1))',
           "E[RBP@k] sums one rank too many", BRUTE),
    Mutant("m-is-max", "core/measures/common.py",
           "np.minimum(self.n, float(self.k))", "np.maximum(self.n, float(self.k))",
           "m = max(k, n) instead of min(k, n)", BRUTE),
    Mutant("IUB-is-WLB", "core/expectations.py",
           '    return compute(pool.ordered(pool_keys(pool, judgements, measure, rel_level), True), judgements, measure, rel_level)',
           '    return compute(pool.ordered(pool_keys(pool, judgements, measure, rel_level), False), judgements, measure, rel_level)',
           "IUB sorts the pool ascending (the worst ranking)", BRUTE + NORM),
    Mutant("WLB-is-IUB", "core/expectations.py",
           '    return compute(pool.ordered(pool_keys(pool, judgements, measure, rel_level), False), judgements, measure, rel_level)',
           '    return compute(pool.ordered(pool_keys(pool, judgements, measure, rel_level), True), judgements, measure, rel_level)',
           "WLB sorts the pool descending (the ideal ranking)", BRUTE + NORM),
    Mutant("IUB[SP]-paper", "core/measures/precision.py",
           'return np.full(random_pool.pool.nq, float(random_pool.k))', 'return np.full(random_pool.pool.nq, float(random_pool.k) - 1.0)',
           "--expectation paper: IUB[SP@k] = k - 1", ("tests/core/test_normalise.py", "tests/core/test_paper_examples.py",
                                                     "tests/cli/test_variants.py")),
    # ------------------------------------------------------------------ normalisation
    Mutant("UL2-branch-at-E", "core/normalise.py",
           'above = A >= E\n    den = np.where(above, I - E, E)', 'above = A > E\n    den = np.where(above, I - E, E)',
           "UL2 takes its lower branch at A = E (differs only at A = E = 0)", NORM),
    Mutant("UL2-lower-denominator", "core/normalise.py",
           'den = np.where(above, I - E, E)\n', 'den = np.where(above, I - E, I - E)\n',
           "UL2 below E divides by I - E (that is EM)", NORM),
    Mutant("UL1-without-A/I", "core/normalise.py",
           'out[defined] = (A[defined] / I[defined]) * (A[defined] / (A[defined] + E[defined]))', 'out[defined] = A[defined] / (A[defined] + E[defined])',
           "UL1 without its A/I factor", NORM),
    Mutant("UEW-lower-denominator", "core/normalise.py",
           'den = np.where(above, I - E, E - W)', 'den = np.where(above, I - E, E)',
           "UEW below E divides by E (that is UL2)", NORM),
    Mutant("UEW-branch-at-E", "core/normalise.py",
           'above = A >= E\n    den = np.where(above, I - E, E - W)', 'above = A > E\n    den = np.where(above, I - E, E - W)',
           "UEW takes its lower branch at A = E (differs only at A = E = W)", NORM),
    Mutant("undefined-no-tolerance", "core/normalise.py",
           "_TOL = 1e-12", "_TOL = 0.0",
           "I = E compared exactly: float noise makes an uninformative query look informative", NORM),
    Mutant("undefined-ignores-W", "core/normalise.py",
           "        und = und | _eq(I, np.asarray(W, dtype=np.float64))\n", "        und = und\n",
           "a query is undefined only when I = E, not also when I = W (differs under --expectation paper, "
           "whose E[DCG@k] sums past the pool's end)", NORM),
    Mutant("EB-E-zero", "core/normalise.py",
           "return _div(A, E, undefined_mask(I, E, W) | _eq(E, 0))", "return _div(A, E, undefined_mask(I, E, W))",
           "EB not undefined when E = 0 (A/0)", NORM),
    Mutant("undefined-zero-vs-skip", "core/expectations.py",
           "values[metric] = np.where(und, 0.0 if options.undefined == \"zero\" else np.nan, val)",
           "values[metric] = np.where(und, 0.0 if options.undefined == \"skip\" else np.nan, val)",
           "--undefined zero and skip swapped", NORM + ("tests/cli/test_variants.py",)),
    # ------------------------------------------------------------------ statistics
    Mutant("t-interval-one-tail", "analysis/stats.py",
           "half = stats.t.ppf(1 - alpha / 2, n - 1)", "half = stats.t.ppf(1 - alpha, n - 1)",
           "compare's t interval with the one-sided quantile", STATS),
    Mutant("t-interval-df", "analysis/stats.py",
           "half = stats.t.ppf(1 - alpha / 2, n - 1)", "half = stats.t.ppf(1 - alpha / 2, n)",
           "compare's t interval with n degrees of freedom instead of n - 1", STATS),
    Mutant("wilcoxon-pratt", "analysis/stats.py",
           "stats.wilcoxon(rows, axis=-1))",
           'stats.wilcoxon(rows, axis=-1, zero_method="pratt"))',
           "Wilcoxon ranks the zero differences (Pratt) instead of dropping them (scipy's default)", STATS),
    Mutant("tukey-exact-p", "analysis/stats.py",
           "p_value = count / len(ranges) if exact else (1.0 + count) / (1.0 + len(ranges))",
           "p_value = (1.0 + count) / (1.0 + len(ranges))",
           "enumerated Tukey HSD p-value with the sampled test's +1 correction", STATS),
    Mutant("tukey-shared-shuffle", "analysis/stats.py",
           "means = rng.permuted(np.broadcast_to(topics, (min(per, reps - start), n, m)), axis=2).mean(axis=1)",
           "means = rng.permuted(np.broadcast_to(topics, (min(per, reps - start), n, m)), axis=1).mean(axis=1)",
           "Tukey HSD shuffles each system's topics instead of each topic's systems", STATS),
    Mutant("tau-ap-reference-ties", "analysis/stats.py",
           "0.5 * (ref[:, None] == ref[None, :])", "1.0 * (ref[:, None] == ref[None, :])",
           "tau_AP counts a pair the reference ties as concordant", STATS),
    Mutant("ci-level-ignored", "pipeline/blocks.py",
           "return dict(zip(shown, aggregate_intervals(columns, options.ci, options.seed)))",
           "return dict(zip(shown, aggregate_intervals(columns, 0.95, options.seed)))",
           "eval --ci's interval at 95% whatever --alpha", ("tests/core/test_intervals.py",)),
    Mutant("ci-query-order", "pipeline/blocks.py",
           "    columns = [np.asarray(values[m], dtype=np.float64)[order] for m in shown]\n",
           "    columns = [np.asarray(values[m], dtype=np.float64) for m in shown]\n",
           "eval --ci resamples the queries in the run's order, not the 'all' row's (blocking-dependent)",
           ("tests/core/test_intervals.py",)),
    Mutant("rbo-joins-at-first-rank", "analysis/repro.py",
           "np.bincount(np.maximum(at_original, at_reproduced), minlength=depth)",
           "np.bincount(np.minimum(at_original, at_reproduced), minlength=depth)",
           "RBO counts a common document at the higher of its two ranks", ("tests/analysis/test_repro.py",)),
    Mutant("delta-ri-reversed", "analysis/repro.py",
           "return float(relative(advanced, baseline) - relative(advanced_rep, baseline_rep))",
           "return float(relative(advanced_rep, baseline_rep) - relative(advanced, baseline))",
           "DeltaRI as reproduced minus original", ("tests/analysis/test_repro.py",)),
    Mutant("ktu-longer-list", "analysis/repro.py",
           "length = min(len(original), len(reproduced))", "length = max(len(original), len(reproduced))",
           "KTU of lists of unequal length not cut to the shorter", ("tests/analysis/test_repro.py",)),
    Mutant("holm-is-bonferroni", "analysis/stats.py",
           'np.minimum(1.0, valid_p[order] * (n_tests - np.arange(n_tests)))', 'np.minimum(1.0, valid_p[order] * n_tests)',
           "Holm's step-down factor replaced by Bonferroni's", STATS),
    Mutant("holm-off-by-one", "analysis/stats.py",
           'np.minimum(1.0, valid_p[order] * (n_tests - np.arange(n_tests)))', 'np.minimum(1.0, valid_p[order] * (n_tests - np.arange(n_tests) - 1))',
           "Holm's factor m - i instead of m - i + 1", STATS),
    Mutant("holm-no-running-max", "analysis/stats.py",
           'stepped = np.maximum.accumulate(np.minimum(1.0, valid_p[order] * (n_tests - np.arange(n_tests))))',
           'stepped = np.minimum(1.0, valid_p[order] * (n_tests - np.arange(n_tests)))',
           "Holm without the running maximum (adjusted p-values not monotone)", STATS),
    Mutant("bonferroni-factor", "analysis/stats.py",
           'out[valid] = np.minimum(1.0, valid_p * n_tests)', 'out[valid] = np.minimum(1.0, valid_p * (n_tests - 1))',
           "Bonferroni multiplies by m - 1", STATS),
    Mutant("bh-is-by", "analysis/stats.py",
           'stats.false_discovery_control(valid_p, method="bh")', 'stats.false_discovery_control(valid_p, method="by")',
           "Benjamini-Hochberg replaced by Benjamini-Yekutieli", STATS),
    Mutant("correction-counts-nan", "analysis/stats.py",
           '    valid_p = p_values[valid]\n    n_tests = len(valid_p)\n', '    valid_p = p_values[valid]\n    n_tests = len(p_values)\n',
           "NaN p-values counted in the family size", STATS),
    Mutant("randomization-exact-p", "analysis/stats.py",
           'p_value = count / len(signs) if exact else (1.0 + count) / (1.0 + len(signs))',
           'p_value = (1.0 + count) / (1.0 + len(signs))',
           "exact randomization p-value with the sampled test's +1 correction",
           STATS + ("tests/analysis/test_compare.py",)),
    Mutant("bootstrap-not-centred", "analysis/stats.py",
           '    centred = flat - means[:, None]\n', '    centred = flat\n',
           "compare's bootstrap resamples the raw differences (H0 not imposed)", STATS + ("tests/analysis/test_compare.py",)),
    Mutant("bootstrap-one-sided", "analysis/stats.py",
           'side = np.abs if alternative == "two-sided" else np.negative',
           'side = np.positive if alternative == "two-sided" else np.negative',
           "compare's bootstrap compares signed t with |t0|", STATS + ("tests/analysis/test_compare.py",)),
    Mutant("gate-test-direction", "analysis/stats.py",
           'PAIRWISE[test](run - base, alternative="less"', 'PAIRWISE[test](base - run, alternative="less"',
           "the gate's t-test and bootstrap ask whether the run is better", GATE),
    # ------------------------------------------------------------------ the gate
    Mutant("gate-fail-below-boundary", "analysis/gate.py",
           'bool(why) or mean < value', 'bool(why) or mean <= value',
           "a mean equal to the --fail-below threshold fails", GATE),
    Mutant("gate-max-drop-boundary", "analysis/gate.py",
           "mean - ref < -max_drop", "mean - ref <= -max_drop",
           "a drop equal to --max-drop fails", GATE),
    Mutant("gate-max-drop-sign", "analysis/gate.py",
           "mean - ref < -max_drop", "mean - ref < max_drop",
           "--max-drop allows a rise instead of a drop", GATE),
    Mutant("gate-alpha-boundary", "analysis/gate.py",
           'not math.isnan(p_value) and p_value < alpha', 'not math.isnan(p_value) and p_value <= alpha',
           "p equal to --alpha counts as significant", GATE),
    Mutant("gate-alpha-ignored", "analysis/gate.py",
           "significant = alpha is None or", "significant = True or",
           "--alpha never stops a drop from failing", GATE),
    # ------------------------------------------------------------------ judgment holes (docs/holes.md)
    Mutant("holes-ceiling-median", "core/holes.py",
           "EST_LEVEL = 0.95  #", "EST_LEVEL = 0.5  #",
           "open=est's ceiling the median, not the 95% quantile, of the relevant holes",
           ("tests/core/test_holes_worlds.py", "tests/analysis/test_holes_shallow_pool.py")),
    Mutant("holes-list-order", "core/holes.py",
           "np.lexsort((unique, -runs, -weight))", "np.lexsort((unique, runs, weight))",
           "--holes-list names the holes that move the bounds least", ("tests/analysis/test_holes_shallow_pool.py",)),
    Mutant("holes-bootstrap-offered", "core/holes.py",
           'BOOT_WITHHELD = ("AP", "GMAP", "Rprec")', 'BOOT_WITHHELD = ("GMAP", "Rprec")',
           "--holes-samples adds AP's bootstrap, whose spread never held half the later values",
           ("tests/core/test_holes_options.py",)),
    # ------------------------------------------------------------------ float32 rounding and ordering
    Mutant("float32-not-rounded", "pipeline/ordering.py",
           "score = score.astype(np.float32).astype(np.float64)", "score = score.astype(np.float64)",
           "--score-precision float32 does not round the scores", F32 + ("tests/parity/test_published_outputs.py",)),
    Mutant("float32-ties-miscounted", "pipeline/ordering.py",
           "(s64[1:] != s64[:-1])", "(s64[1:] == s64[:-1])",
           "the note counts ties that exist in float64 too", F32),
    Mutant("ties-docid-ascending", "pipeline/ordering.py",
           "(\"d\", \"descending\")", "(\"d\", \"ascending\")",
           "score ties broken by docid ascending (trec_eval: descending)", PARITY + F32),
    Mutant("swap-between-counts-ties", "analysis/stats.py",
           'swaps = int(np.sum((first[left] - first[right]) * (second[left] - second[right]) < 0))', 'swaps = int(np.sum((first[left] - first[right]) * (second[left] - second[right]) <= 0))',
           "the swap rate between two experiments counts a tied pair as a swap", ("tests/analysis/test_paper_analyses.py",)),
    Mutant("pad-k-last-cutoff-only", "analysis/compare.py",
           "value = stats.pad(np.mean([mean_of[m] for m in ms], axis=0))", "value = stats.pad(mean_of[ms[-1]])",
           "PAD over k takes one cutoff's means instead of their average", ("tests/analysis/test_paper_analyses.py",)),
    Mutant("bootstrap-corr-90-percent", "analysis/human_correlation.py",
           "lo_q, hi_q = 100 * alpha / 2, 100 * (1 - alpha / 2)", "lo_q, hi_q = 100 * alpha, 100 * (1 - alpha)",
           "--correlate's 95% interval computed as a 90% one", ("tests/analysis/test_human_correlation.py",)),
    Mutant("algorithm-1-order-reversed", "core/bertscore.py",
           "idx = np.argsort(sim if order == \"increasing\" else -sim, kind=\"stable\")",
           "idx = np.argsort(-sim if order == \"increasing\" else sim, kind=\"stable\")",
           "Algorithm 1 sorts the wrong way", ("tests/core/test_bertscore.py::test_expected_summary_is_the_listing",)),
    Mutant("nrg-rr-prior-sees-everything", "analysis/nrg.py",
           "            seen = seen_until_gain(row, pos, model.gain(grade), seen > 0)\n",
           "            seen = seen * 1.0\n",
           "NRG(RR): a prior run counts as seen down to K, not to its first relevant item", ("tests/analysis/test_nrg_rr.py",)),
    Mutant("depth-M-off-by-one", "pipeline/ordering.py",
           'keep = (np.arange(len(query)) - starts[query]) < depth', 'keep = (np.arange(len(query)) - starts[query]) <= depth',
           "-M keeps one document too many", PARITY + SMALL),
    # ------------------------------------------------------------------ parsing
    Mutant("run-score-is-rank", "inputs/trec.py",
           "score=to_float(cols[4], path, lines, \"score\")", "score=-to_float(cols[3], path, lines, \"score\")",
           "the run's order taken from the rank column instead of the score", PARITY + SMALL),
]


@dataclass
class Outcome:
    mutant: Mutant
    status: str  # killed, survived, equivalent, error, stale
    seconds: float
    detail: str = ""
    failed: list = field(default_factory=list)


def _copy_package(dest: Path) -> None:
    shutil.copytree(PKG, dest / "ulnorm_eval", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))


def check(mutant: Mutant) -> str:
    """'' when the mutant applies (its old text occurs exactly once and differs from the new), else why not."""
    path = PKG / mutant.file
    if not path.is_file():
        return f"{mutant.file}: no such file"
    n = path.read_text(encoding="utf-8").count(mutant.old)
    if n != 1:
        return f"{mutant.file}: the old text occurs {n} times (expected once)"
    if mutant.old == mutant.new:
        return "old and new are the same"
    for t in mutant.tests:
        if not (ROOT / t.split("::")[0]).is_file():
            return f"{t}: no such test file"
    return ""


def _pytest(code: Path, tests, timeout: float) -> tuple[int, str, float]:
    env = dict(os.environ, ULNORM_EVAL_CODE=str(code), PYTHONPATH=str(code), PYTHONDONTWRITEBYTECODE="1")
    # -n 0: one process per mutant (the benchmark runs two mutants at a time itself)
    argv = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "--no-header", "-rf", "-n", "0",
            *(str(ROOT / t) for t in tests)]
    if shutil.which("nice"):
        argv = ["nice", "-n", "10", *argv]
    t0 = time.monotonic()
    try:
        # cwd = the copy: `python -m` puts it first on sys.path too
        p = subprocess.run(argv, cwd=code, env=env, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout + p.stderr, time.monotonic() - t0
    except subprocess.TimeoutExpired:
        return -1, "timeout", time.monotonic() - t0


def run_mutant(mutant: Mutant, timeout: float) -> Outcome:
    why = check(mutant)
    if why:
        return Outcome(mutant, "stale", 0.0, why)
    with tempfile.TemporaryDirectory(prefix="ulnorm-mutant-") as tmp:
        code = Path(tmp)
        _copy_package(code)
        target = code / "ulnorm_eval" / mutant.file
        target.write_text(target.read_text(encoding="utf-8").replace(mutant.old, mutant.new), encoding="utf-8")
        rc, out, secs = _pytest(code, mutant.tests, timeout)
    failed = [ln.split(" ", 1)[1].split(" - ")[0] for ln in out.splitlines() if ln.startswith("FAILED ")]
    failed = [f[f.find("tests/"):] if "tests/" in f else f for f in failed]  # pytest names them from the copy
    if rc == 0:
        status = "equivalent" if mutant.equivalent else "survived"
        return Outcome(mutant, status, secs)
    if rc == 1:
        return Outcome(mutant, "killed", secs, failed=failed)
    if rc == -1:
        return Outcome(mutant, "killed", secs, "timeout")
    return Outcome(mutant, "error", secs, f"pytest exit {rc}: " + " | ".join(out.strip().splitlines()[-3:]))


def baseline(groups, timeout: float) -> list:
    """Run each distinct test set once on an unmutated copy: all must pass, or no kill means anything."""
    bad = []
    with tempfile.TemporaryDirectory(prefix="ulnorm-mutant-base-") as tmp:
        code = Path(tmp)
        _copy_package(code)
        for tests in groups:
            rc, out, _ = _pytest(code, tests, timeout)
            if rc != 0:
                bad.append((tests, " | ".join(out.strip().splitlines()[-3:])))
    return bad


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-k", dest="select", action="append", default=[],
                    help="run only the mutants whose id contains this text (repeatable)")
    ap.add_argument("-j", "--jobs", type=int, default=2, help="mutants tested at once (default 2)")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per mutant (default 600)")
    ap.add_argument("--list", action="store_true", help="print the mutants and exit")
    ap.add_argument("--no-baseline", action="store_true", help="skip the unmutated run of each test set")
    ap.add_argument("--json", metavar="PATH", help="also write the outcomes as JSON")
    args = ap.parse_args(argv)

    chosen = [m for m in MUTANTS if not args.select or any(s in m.id for s in args.select)]
    if args.list:
        for m in chosen:
            print(f"{m.id}\t{m.file}\t{m.description}\t{' '.join(m.tests)}" + (f"\t(equivalent: {m.equivalent})"
                                                                               if m.equivalent else ""))
        return 0
    if not chosen:
        print("no mutant matches", file=sys.stderr)
        return 2
    stale = [(m, check(m)) for m in chosen if check(m)]
    for m, why in stale:
        print(f"stale mutant {m.id}: {why}", file=sys.stderr)
    if stale:
        return 2
    if not args.no_baseline:
        groups = list(dict.fromkeys(m.tests for m in chosen))
        bad = baseline(groups, args.timeout)
        for tests, why in bad:
            print(f"the unmutated copy fails {' '.join(tests)}: {why}", file=sys.stderr)
        if bad:
            return 2
    t0 = time.monotonic()
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as ex:
        outcomes = []
        for o in ex.map(lambda m: run_mutant(m, args.timeout), chosen):
            outcomes.append(o)
            note = o.detail or (o.failed[0] if o.failed else "")
            print(f"{o.status:<10} {o.seconds:6.1f}s  {o.mutant.id:<28} {o.mutant.description}"
                  + (f"  [{note}]" if note else ""), flush=True)
    counts = {s: sum(o.status == s for o in outcomes) for s in ("killed", "survived", "equivalent", "error")}
    print(f"\n{len(outcomes)} mutants: {counts['killed']} killed, {counts['survived']} survived, "
          f"{counts['equivalent']} equivalent (survived, explained), {counts['error']} errors; "
          f"{time.monotonic() - t0:.0f} s")
    for o in outcomes:
        if o.status == "survived":
            print(f"  SURVIVED {o.mutant.id}: {o.mutant.file}: {o.mutant.old!r} -> {o.mutant.new!r}")
    if args.json:
        Path(args.json).write_text(json.dumps([{"id": o.mutant.id, "file": o.mutant.file, "status": o.status,
                                                 "seconds": round(o.seconds, 1), "detail": o.detail,
                                                 "failed": o.failed, "tests": list(o.mutant.tests)}
                                                for o in outcomes], indent=1) + "\n", encoding="utf-8")
    return 0 if counts["survived"] == 0 and counts["error"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
