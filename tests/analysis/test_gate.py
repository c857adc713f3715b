"""The CI gate (--fail-below, --baseline) and the paired tests behind it.

Small case (tests/render/test_formats.py explains the values): per-query AP in the order q1, q2, q10 is
run A = (5/6, 1/2, 0), run B = (1, 1, 1/2); means 4/9 and 5/6; differences A - B = (-1/6, -1/2, -1/2).
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from conftest import cli
from ulnorm_eval.analysis.gate import Check, parse_threshold
from ulnorm_eval.render.gate_md import verdict
from ulnorm_eval.core.registry import UnknownMeasure, parse
from ulnorm_eval.analysis.stats import pairwise_bootstrap, pairwise_t, worse

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 1\nq2 0 d4 1\nq2 0 d5 0\nq10 0 d6 1\nq10 0 d7 0\n"
RUN_A = ("q1 Q0 d1 1 3.0 A\nq1 Q0 d2 2 2.0 A\nq1 Q0 d3 3 1.0 A\n"
         "q2 Q0 d5 1 2.0 A\nq2 Q0 d4 2 1.0 A\n")
RUN_B = ("q1 Q0 d3 1 3.0 B\nq1 Q0 d1 2 2.0 B\nq1 Q0 d2 3 1.0 B\n"
         "q2 Q0 d4 1 2.0 B\nq2 Q0 d5 2 1.0 B\nq10 Q0 d7 1 2.0 B\nq10 Q0 d6 2 1.0 B\n")
AP_A = np.array([5 / 6, 1 / 2, 0])
AP_B = np.array([1, 1, 1 / 2])


@pytest.fixture
def case(write):
    return {"qrels": write("qrels.txt", QRELS), "a": write("a.run", RUN_A), "b": write("b.run", RUN_B)}


def verdict_lines(res):
    return [line for line in res.stderr.splitlines() if "gate" in line or line.startswith("ulnorm-eval:   ")]


# --------------------------------------------------------------------------- thresholds

def test_parse_threshold():
    t = parse_threshold("UL2(nDCG@10)=0.30")
    assert str(t.metric) == "UL2(nDCG@10)" and t.value == 0.30
    t = parse_threshold(" RBP(p=0.9) = -0.5 ")  # '=' inside the name: the last one splits
    assert t.metric == parse("RBP(p=0.9)") and t.value == -0.5
    for bad in ("AP", "AP=", "=0.3", "AP=high", "AP=nan"):
        with pytest.raises(ValueError):
            parse_threshold(bad)
    with pytest.raises(UnknownMeasure, match="did you mean"):
        parse_threshold("nDGC@10=0.3")


def test_fail_below_fails_with_both_means_and_difference(case):
    res = cli("-m", "AP", "--norm", "none", "--fail-below", "AP=0.5", case["qrels"], case["a"], code=1)
    assert res.stdout == "AP\tall\t0.4444\n"  # the output is still written
    assert verdict_lines(res) == [
        "ulnorm-eval: gate FAILED: 1 of 1 check",
        "ulnorm-eval:   FAIL a.run AP: mean 0.4444 over 3 of 3 queries, threshold 0.5000 (--fail-below), margin -0.0556",
    ]


def test_fail_below_passes_and_checks_every_run(case):
    res = cli("-m", "AP", "--norm", "none", "--fail-below", "AP=0.4", case["qrels"], case["a"], case["b"])
    # every check is printed, passed ones too, with its margin (A: 4/9 - 0.4; B: 5/6 - 0.4)
    assert verdict_lines(res) == [
        "ulnorm-eval: gate passed: 2 checks",
        "ulnorm-eval:   pass a.run AP: mean 0.4444 over 3 of 3 queries, threshold 0.4000 (--fail-below), margin +0.0444",
        "ulnorm-eval:   pass b.run AP: mean 0.8333 over 3 of 3 queries, threshold 0.4000 (--fail-below), margin +0.4333",
    ]
    res = cli("-m", "AP", "--norm", "none", "--fail-below", "AP=0.5", "--fail-below", "AP@1=0.9",
              case["qrels"], case["a"], case["b"], code=1)
    lines = verdict_lines(res)
    # A fails both (AP 4/9; AP@1 = 1/3), B fails only AP@1 (mean 2/3)
    assert lines[0] == "ulnorm-eval: gate FAILED: 3 of 4 checks"
    assert len(lines) == 5
    failed = [x for x in lines[1:] if x.startswith("ulnorm-eval:   FAIL ")]
    assert sorted(x.split(":")[1].strip().split(" ", 2)[2] for x in failed) == ["AP", "AP@1", "AP@1"]
    assert [x for x in lines[1:] if x not in failed] == [
        "ulnorm-eval:   pass b.run AP: mean 0.8333 over 3 of 3 queries, threshold 0.5000 (--fail-below), margin +0.3333"]


# mean UL2(AP) under --pool run (each run's own documents), by hand.  A: q1 ranks its 3 judged documents
# d1 d2 d3 (2 relevant): AP 5/6, E[AP] = E[SP]/2 = ((2/3) H_3 + (1/3)(3 - H_3))/2 = 29/36, IUB 1, so UL2 =
# (1/36)/(7/36) = 1/7; q2 ranks d5 d4 (1 relevant): AP 1/2 < E 3/4, UL2 = (1/2 - 3/4)/(3/4) = -1/3; q10
# (nothing ranked) is undefined, 0: the mean (1/7 - 1/3 + 0)/3 = -4/63.  B: AP 1, 1, 1/2; E 29/36, 3/4,
# 3/4; UL2 1, 1, -1/3: the mean 5/9.
UL2_A, UL2_B = -4 / 63, 5 / 9


def test_gated_measure_is_evaluated_even_if_not_requested(case):
    res = cli("-m", "P@2", "--norm", "none", "--fail-below", "UL2(AP)=-0.5", "--pool", "run", case["qrels"], case["a"])
    assert res.stdout.splitlines() == ["P@2\tall\t0.3333", f"UL2(AP)\tall\t{UL2_A:.4f}"]


def test_fail_below_usage_errors(case):
    res = cli("--fail-below", "AP", case["qrels"], case["a"], code=2)
    assert res.stderr.strip() == "ulnorm-eval: --fail-below 'AP': expected MEASURE=VALUE, e.g. 'UL2(nDCG@10)=0.30'"
    res = cli("--fail-below", "nDGC@10=0.3", case["qrels"], case["a"], code=2)
    assert "did you mean nDCG" in res.stderr and res.stdout == ""


# --------------------------------------------------------------------------- baseline

def test_baseline_drop_beyond_max_drop_fails(case):
    res = cli("-m", "AP", "--norm", "none", "--baseline", case["b"], "--max-drop", "0.01",
              case["qrels"], case["a"], code=1)
    assert res.stdout == "AP\tall\t0.4444\n"  # the baseline is not printed
    p = __import__("scipy.stats", fromlist=["ttest_rel"]).ttest_rel(AP_A, AP_B, alternative="less").pvalue
    assert verdict_lines(res) == [
        "ulnorm-eval: gate FAILED: 1 of 1 check",
        f"ulnorm-eval:   FAIL a.run AP: mean 0.4444 vs baseline 0.8333, difference -0.3889, "
        f"limit -0.0100 (--max-drop), margin -0.3789, p = {p:.3g} (paired t, one-sided, n = 3 of 3 queries)",
    ]


def test_baseline_within_max_drop_passes(case):
    res = cli("-m", "AP", "--norm", "none", "--baseline", case["b"], "--max-drop", "0.4", case["qrels"], case["a"])
    lines = verdict_lines(res)
    assert lines[0] == "ulnorm-eval: gate passed: 1 check"
    assert lines[1].startswith("ulnorm-eval:   pass a.run AP: mean 0.4444 vs baseline 0.8333, difference -0.3889, "
                               "limit -0.4000 (--max-drop), margin +0.0111, p = ")
    # an improvement never fails, even with no allowed drop
    cli("-m", "AP", "--norm", "none", "--baseline", case["a"], case["qrels"], case["b"])


def test_alpha_requires_significance(case):
    from scipy.stats import ttest_rel

    p = ttest_rel(AP_A, AP_B, alternative="less").pvalue  # 0.048: three queries, all worse
    assert 0.01 < p < 0.1
    cli("-m", "AP", "--norm", "none", "--baseline", case["b"], "--alpha", "0.01", case["qrels"], case["a"])
    res = cli("-m", "AP", "--norm", "none", "--baseline", case["b"], "--alpha", "0.1", case["qrels"], case["a"], code=1)
    assert f"p = {p:.3g} (paired t, one-sided, n = 3 of 3 queries, alpha = 0.1)" in res.stderr


def test_randomization_test_is_exact_for_few_queries(case):
    # 3 queries: all 2^3 sign patterns; only the observed one (all negative) is as low: p = 1/8
    res = cli("-m", "AP", "--norm", "none", "--baseline", case["b"], "--test", "randomization", "--alpha", "0.2",
              case["qrels"], case["a"], code=1)
    assert "p = 0.125 (paired randomization, one-sided, n = 3 of 3 queries, alpha = 0.2)" in res.stderr
    cli("-m", "AP", "--norm", "none", "--baseline", case["b"], "--test", "randomization", "--alpha", "0.1",
        case["qrels"], case["a"])


def test_zero_max_drop_prints_its_limit_and_margin(case):
    res = cli("-m", "AP", "--norm", "none", "--baseline", case["b"], case["qrels"], case["a"], code=1)
    line = verdict_lines(res)[1]
    assert "difference -0.3889, limit +0.0000 (--max-drop), margin -0.3889" in line
    assert "< -0" not in res.stderr


def _bootstrap_by_hand(x, y, reps, seed):
    """Sakai's bootstrap, one-sided, one resample at a time (the same seeded multinomial draws)."""
    d = np.asarray(x, float) - np.asarray(y, float)
    n = len(d)
    t = lambda z: z.mean() / (z.std(ddof=1) / np.sqrt(n))  # noqa: E731
    t0, w = t(d), d - d.mean()
    counts = np.random.default_rng(seed).multinomial(n, np.full(n, 1 / n), size=reps)
    hits = 0
    for c in counts:
        z = np.repeat(w, c)
        sd = z.std(ddof=1)
        tb = 0.0 if sd < 1e-12 and abs(z.mean()) < 1e-12 else (z.mean() / (sd / np.sqrt(n)) if sd > 1e-12
                                                              else np.copysign(np.inf, z.mean()))
        hits += tb <= t0 + 1e-12 * abs(t0)
    return hits / reps


def test_bootstrap_gate_is_accepted_and_matches_a_direct_loop(case):
    rng = np.random.default_rng(3)
    x, y = rng.random(12), rng.random(12) + 0.1
    p = pairwise_bootstrap(x - y, reps=500, seed=4, alternative="less").p
    assert p == _bootstrap_by_hand(x, y, 500, 4)
    assert 0 < p < 0.2  # y clearly better
    assert worse("bootstrap", x, y, 4) == _bootstrap_by_hand(x, y, 1000, 4)
    assert worse("bootstrap", x, x) == 1.0  # no difference: never significant
    assert worse("bootstrap", np.array([0.1, 0.2, 0.3]), np.array([0.2, 0.3, 0.4])) == 0.0  # constant drop
    # the CLI accepts the test compare accepts, and reports it
    res = cli("-m", "AP", "--norm", "none", "--baseline", case["b"], "--test", "bootstrap", "--alpha", "0.5",
              "--seed", "1", case["qrels"], case["a"], code=1)
    p = worse("bootstrap", AP_A, AP_B, seed=1)
    assert f"p = {p:.3g} (paired bootstrap, one-sided, n = 3 of 3 queries, alpha = 0.5)" in res.stderr


def test_baseline_gates_all_but_the_bounds(case):
    res = cli("-m", "AP", "--norm", "e,iub,wlb,ul2", "--pool", "run", "--baseline", case["b"], case["qrels"], case["a"],
              code=1)
    assert "gate FAILED: 2 of 2 checks" in res.stderr  # AP and UL2(AP); E, IUB, WLB are the pool's
    # UL2's mean is the mean of its per-query values, the ones its test pairs: one quantity
    assert (f"UL2(AP): mean {UL2_A:.4f} vs baseline {UL2_B:.4f}, difference {UL2_A - UL2_B:+.4f}") in res.stderr
    assert "(paired t, one-sided, n = 3 of 3 queries)" in res.stderr


def test_baseline_summary_md_says_over_how_many_queries(case, tmp_path):
    """--summary-md: every check's p-value says over how many of the qrels' queries its test and mean are."""
    md = tmp_path / "g.md"
    cli("-m", "AP", "--norm", "ul2", "--baseline", case["b"], "--summary-md", str(md), case["qrels"], case["a"],
        code=1)
    rows = {line.split(" | ")[2]: line for line in md.read_text().splitlines() if line.startswith("| ❌")}
    assert "(paired t, one-sided, n = 3 of 3 queries; not required)" in rows["UL2(AP)"]
    assert "(paired t, one-sided, n = 3 of 3 queries; not required)" in rows["AP"]


def test_baseline_among_the_runs_is_printed_and_compared_with_itself(case):
    res = cli("-m", "AP", "--norm", "none", "--baseline", case["b"], case["qrels"], case["a"], case["b"], code=1)
    assert res.stdout == "runid\tall\tA\nAP\tall\t0.4444\nrunid\tall\tB\nAP\tall\t0.8333\n"  # runid: the tags
    assert "gate FAILED: 1 of 2 checks" in res.stderr
    assert "pass b.run AP: mean 0.8333 vs baseline 0.8333, difference +0.0000" in res.stderr


def test_baseline_usage_errors(case):
    for extra in (["--max-drop", "0.1"], ["--test", "t"]):
        res = cli(*extra, case["qrels"], case["a"], code=2)
        assert "need --baseline RUN" in res.output
    res = cli("--alpha", "0.05", case["qrels"], case["a"], code=2)  # also the level of --ci's intervals
    assert "--alpha needs --baseline RUN or --ci" in res.output
    cli("--baseline", case["b"], "--alpha", "1.5", case["qrels"], case["a"], code=2)
    cli("--baseline", "-", case["qrels"], "-", code=2)
    res = cli("--baseline", case["b"] + ".missing", case["qrels"], case["a"], code=2)
    assert "no such file" in res.stderr


def test_baseline_on_real_runs_matches_scipy(shared):
    """DL-HARD: bm25_rm3 against bm25; the p-value is scipy's on the per-query values."""
    from scipy.stats import ttest_rel

    from ulnorm_eval import evaluate

    d = shared / "dlhard-passage"
    qrels = next(d.glob("*qrels*"))
    runs = sorted((d / "runs").glob("*.run.gz"))
    base = next(r for r in runs if r.name.startswith("bm25.run"))
    new = next(r for r in runs if r.name.startswith("bm25_rm3"))
    res = evaluate(str(qrels), [str(new), str(base)], ["nDCG@10"], variants=[])
    x, y = (rr.values[res.metrics[0]] for rr in res.runs)
    assert res.runs[0].qids == res.runs[1].qids
    p = ttest_rel(x, y, alternative="less").pvalue
    out = cli("-m", "nDCG@10", "--norm", "none", "--baseline", base, "--max-drop", "0.01", qrels, new, code=1)
    assert f"difference {x.mean() - y.mean():+.4f}" in out.stderr
    assert f"p = {p:.3g} (paired t, one-sided, n = {len(x)} of {len(x)} queries)" in out.stderr


def test_verdict_wording():
    m = parse("AP")
    ok = Check(kind="fail-below", run="r", metric=m, mean=0.5, reference=0.3, failed=False)
    assert verdict([ok]) == ["gate passed: 1 check",
                             "  pass r AP: mean 0.5000, threshold 0.3000 (--fail-below), margin +0.2000"]
    bad = Check(kind="baseline", run="r", metric=m, mean=0.2, reference=0.3, failed=True, p=0.01234, n=50, test="t")
    assert verdict([ok, bad], max_drop=0.05, alpha=0.05) == [
        "gate FAILED: 1 of 2 checks",
        "  pass r AP: mean 0.5000, threshold 0.3000 (--fail-below), margin +0.2000",
        "  FAIL r AP: mean 0.2000 vs baseline 0.3000, difference -0.1000, limit -0.0500 (--max-drop), "
        "margin -0.0500, p = 0.0123 (paired t, one-sided, n = 50, alpha = 0.05)",
    ]
    assert "map: mean" in verdict([bad], names="trec")[1]
    # a zero --max-drop: the limit is +0.0000, never "< -0"
    line = verdict([bad], max_drop=0.0)[1]
    assert "limit +0.0000 (--max-drop), margin -0.1000" in line and "-0," not in line


# --------------------------------------------------------------------------- paired tests

def brute_force_sign_flip(d, alternative):
    d = np.asarray(d, float)
    obs = d.mean()
    means = np.array([np.mean(np.array(s) * d) for s in itertools.product([1, -1], repeat=len(d))])
    tol = 1e-12
    if alternative == "less":
        return np.mean(means <= obs + tol)
    if alternative == "greater":
        return np.mean(means >= obs - tol)
    return np.mean(np.abs(means) >= abs(obs) - tol)


def test_randomization_exact_matches_enumeration():
    rng = np.random.default_rng(7)
    x, y = rng.random(10), rng.random(10)  # 2^10 <= 10,000 sign patterns: every one
    assert worse("randomization", x, y) == pytest.approx(brute_force_sign_flip(x - y, "less"), abs=1e-12)


def test_randomization_sampled_is_close_to_enumeration():
    rng = np.random.default_rng(3)
    x, y = rng.random(16), rng.random(16) + 0.1
    exact = brute_force_sign_flip(x - y, "less")  # 65,536 patterns
    p = worse("randomization", x, y, seed=1)
    assert abs(p - exact) < 4 * np.sqrt(exact * (1 - exact) / 10_000) + 1e-4
    assert worse("randomization", x, y, seed=1) == p != worse("randomization", x, y, seed=2)


def test_paired_t_matches_scipy_and_drops_nan_pairs():
    from scipy.stats import ttest_rel

    rng = np.random.default_rng(5)
    x, y = rng.random(30), rng.random(30)
    for alt in ("less", "greater", "two-sided"):
        ref = ttest_rel(x, y, alternative=alt)
        res = pairwise_t(x - y, alternative=alt)
        assert (res.statistic, res.p) == (pytest.approx(ref.statistic), pytest.approx(ref.pvalue))
    assert worse("t", x, y) == pytest.approx(ttest_rel(x, y, alternative="less").pvalue)
    xn, yn = x.copy(), y.copy()
    xn[3], yn[7] = np.nan, np.nan
    keep = np.ones(30, bool)
    keep[[3, 7]] = False
    assert worse("t", xn, yn) == pytest.approx(ttest_rel(x[keep], y[keep], alternative="less").pvalue)


def test_degenerate_differences():
    x = np.array([0.25, 0.5, 0.75])  # exact in binary: the shifted differences are exactly constant
    assert worse("t", x, x) == worse("randomization", x, x) == worse("bootstrap", x, x) == 1.0
    assert worse("t", x - 0.125, x) == 0.0  # a constant drop on every query
    assert worse("t", x + 0.125, x) == 1.0
    assert np.isnan(worse("t", [0.2], [0.1])) and np.isnan(worse("bootstrap", [0.2, np.nan], [0.1, 0.3]))


# --------------------------------------------------------------------------- boundaries
# docs/gate.md: "fails when a run's mean is below the value (equal passes)"; "fails when
# mean(run) < mean(baseline) - D"; "must give p < A".  Each boundary is hit exactly (the threshold
# is the mean's own double, printed with repr) and one ulp beyond it.

def _ap_means(case):
    from ulnorm_eval import evaluate

    res = evaluate(case["qrels"], [case["a"], case["b"]], ["AP"], variants=[])
    a, b = (rr.mean[res.metrics[0]] for rr in res.runs)
    assert (a, b) == (pytest.approx(4 / 9), pytest.approx(5 / 6))
    return a, b


def test_fail_below_a_mean_equal_to_the_threshold_passes(case):
    a, _ = _ap_means(case)
    res = cli("-m", "AP", "--norm", "none", "--fail-below", f"AP={a!r}", case["qrels"], case["a"])
    assert verdict_lines(res)[0] == "ulnorm-eval: gate passed: 1 check"
    above = float(np.nextafter(a, np.inf))  # one ulp above the mean: the mean is below it
    res = cli("-m", "AP", "--norm", "none", "--fail-below", f"AP={above!r}", case["qrels"], case["a"], code=1)
    assert verdict_lines(res)[0] == "ulnorm-eval: gate FAILED: 1 of 1 check"


def test_baseline_a_drop_equal_to_max_drop_passes(case):
    a, b = _ap_means(case)
    drop = b - a  # == -(a - b) exactly: the run's difference is exactly -D
    assert a - b == -drop
    res = cli("-m", "AP", "--norm", "none", "--baseline", case["b"], "--max-drop", repr(drop), case["qrels"], case["a"])
    assert verdict_lines(res)[0] == "ulnorm-eval: gate passed: 1 check"
    less = float(np.nextafter(drop, 0))  # one ulp less allowed: the drop exceeds it
    res = cli("-m", "AP", "--norm", "none", "--baseline", case["b"], "--max-drop", repr(less), case["qrels"], case["a"],
              code=1)
    assert verdict_lines(res)[0] == "ulnorm-eval: gate FAILED: 1 of 1 check"


def test_baseline_a_p_value_equal_to_alpha_is_not_significant(case):
    # exact randomization over 3 queries: p = 1/8 = 0.125, a double exactly
    args = ("-m", "AP", "--norm", "none", "--baseline", case["b"], "--test", "randomization")
    res = cli(*args, "--alpha", "0.125", case["qrels"], case["a"])
    assert "pass a.run AP" in res.stderr and "p = 0.125 (paired randomization, one-sided, n = 3 of 3 queries, alpha = 0.125)" \
        in res.stderr
    res = cli(*args, "--alpha", repr(float(np.nextafter(0.125, 1))), case["qrels"], case["a"], code=1)
    assert "FAIL a.run AP" in res.stderr
