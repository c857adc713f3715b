"""`stability --table tau,asl`: Kanoulas & Aslam 2009 Table 4 (Kendall's τ between the system rankings
under every two functions) and Figure 9 (Sakai's bootstrap ASL of every pair of runs), and the numbers
docs/stability.md states about the 17 Robust 2003 runs.

Oracles: the evaluation pipeline (`evaluate` with the measure written as a string, not the stability
design), scipy's kendalltau, and Sakai's bootstrap written as a plain loop over resamples.
"""
from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.stats as sps
from click.testing import CliRunner

from ulnorm_eval import evaluate
from ulnorm_eval.analysis import stability as st
from ulnorm_eval.analysis import stats
from ulnorm_eval.cli.main import main
from ulnorm_eval.analysis.stability import load_design

MEASURE_OF = {"linear/log": "nDCG@{k}", "linear/zipf": "nDCG(discount='zipf')@{k}",
              "linear/linear": "nDCG(discount='linear')@{k}", "exponential/log": "nDCG(dcg='exp-log2')@{k}"}


@pytest.fixture(scope="module")
def robust(shared):
    base = shared / "robust03"
    runs = sorted(str(p) for p in (base / "runs").iterdir())
    return str(base / "qrels.txt"), runs


def _per_topic(qrels, runs, name, topics):
    """runs x topics values of ``name`` from the evaluation pipeline, on ``topics``."""
    res = evaluate(qrels, runs, [name], variants=[])
    out = []
    for rr in res.runs:
        col = {q: j for j, q in enumerate(rr.qids)}
        out.append(np.asarray(rr.values[res.metrics[0]])[[col[q] for q in topics]])
    return np.array(out)


@pytest.fixture(scope="module")
def robust20(robust):
    qrels, runs = robust
    D = load_design(qrels, runs, 20, "601-650")
    spec = st.MeasureSpec(base="nDCG")
    rows, _ = st.study(D, [spec], [20], st.StudyOptions(restarts=0))
    return D, spec, rows


def test_tau_table_is_scipys_tau_between_evaluated_means(robust, robust20):
    qrels, runs = robust
    D, spec, rows = robust20
    tau = {(r["function_a"], r["function_b"]): r["tau"] for r in st.tau_table(D, [spec], rows)}
    labels = [st.function_label(r) for r in rows]
    assert labels == ["linear/log", "linear/zipf", "linear/linear", "linear/optimal", "exponential/log",
                      "optimal/log", "joint"]
    assert len(tau) == 49 and all(tau[a, a] == 1.0 for a in labels)
    means = {f: _per_topic(qrels, runs, m.format(k=20), D.topics).mean(axis=1) for f, m in MEASURE_OF.items()}
    joint = next(r for r in rows if r["optimised"] == "gains+discount")
    means["joint"] = _per_topic(qrels, runs, joint["string"], D.topics).mean(axis=1)
    for a in means:
        for b in means:
            want = sps.kendalltau(means[a], means[b]).statistic
            assert tau[a, b] == pytest.approx(want, abs=1e-12), (a, b)
            assert tau[a, b] == tau[b, a]


def _sakai_loop(z, counts):
    """Sakai 2006's paired bootstrap ASL, one resample at a time."""
    n = len(z)
    t0 = abs(z.mean() / (z.std(ddof=1) / np.sqrt(n)))
    w = z - z.mean()
    hits = 0
    for c in counts:
        s = np.repeat(w, c)
        sd = s.std(ddof=1)
        tb = abs(s.mean() / (sd / np.sqrt(n))) if sd > 1e-12 else (0.0 if abs(s.mean()) < 1e-12 else np.inf)
        hits += tb >= t0 * (1 - 1e-12)
    return hits / len(counts)


def test_asl_table_is_sakais_bootstrap_on_evaluated_values(robust, robust20):
    qrels, runs = robust
    D, spec, rows = robust20
    reps, seed = 200, 5
    asl = st.asl_table(D, [spec], rows, reps=reps, seed=seed)
    assert [f for f in dict.fromkeys(r["function"] for r in asl)] == list(st.ASL_FUNCTIONS)
    assert len(asl) == 4 * 136
    names = list(D.systems)
    counts = np.random.default_rng(seed).multinomial(50, np.full(50, 1 / 50), size=reps)
    for f in ("linear/log", "exponential/log", "linear/linear"):
        Y = _per_topic(qrels, runs, MEASURE_OF[f].format(k=20), D.topics)
        mine = [r for r in asl if r["function"] == f]
        for r in mine[::9]:  # every 9th pair through the slow loop
            a, b = names.index(r["run_a"]), names.index(r["run_b"])
            assert r["asl"] == _sakai_loop(Y[a] - Y[b], counts), (f, r)
        got = np.array([r["asl"] for r in mine])
        order = np.array([r["order"] for r in mine])
        assert sorted(order) == list(range(1, 137))
        assert np.all(np.diff(got[np.argsort(order)]) >= 0)  # order sorts the ASLs increasingly


def test_docs_claims_on_robust03_topics_needed(robust):
    """docs/stability.md: on these 17 runs linear needs fewer topics than log for Φ >= 0.9
    (57 vs 59 at k = 100; 41 vs 44 at k = 200), Zipfian the most."""
    qrels, runs = robust
    D = load_design(qrels, runs, 200, "601-650")
    g = st.named_gains("linear", D.levels)
    need = {}
    for k in (100, 200):
        for dn in st.DISCOUNTS:
            vc = st.components(D.at(k), g, st.named_discount(dn, k), st.MeasureSpec(base="nDCG"))
            need[k, dn] = stats.topics_needed(vc, 0.9)
    assert (need[100, "linear"], need[100, "log"], need[100, "zipf"]) == (57, 59, 88)
    assert (need[200, "linear"], need[200, "log"], need[200, "zipf"]) == (41, 44, 85)
    # ... with its uncertainty: 1,000 topic resamples (seed 0), the same for both discounts
    ix = st.topic_resamples(50, 1000, 0)
    share = {}
    for k in (100, 200):
        spec = st.MeasureSpec(base="nDCG")
        lin, log = (st.topics_needed_resampled(st.scores(D.at(k), g, st.named_discount(dn, k), spec), ix, 0.9)
                    for dn in ("linear", "log"))
        share[k] = (np.mean(lin < log), np.mean(lin == log), np.mean(lin > log))
    assert share[100] == (0.604, 0.132, 0.264)
    assert share[200] == (0.81, 0.106, 0.084)


def test_topic_bootstrap_intervals_from_evaluated_values(robust):
    """The 2.5/97.5 percentiles of 'topics Φ>=0.9' over topic resamples: recomputed from the evaluation
    pipeline's per-topic nDCG@20 and an ANOVA written out here."""
    qrels, runs = robust
    D = load_design(qrels, runs, 20, "601-650")
    rows, _ = st.study(D, [st.MeasureSpec(base="nDCG")], [20],
                       st.StudyOptions(restarts=0, phi_targets=(0.9,), topic_bootstrap=300, seed=4))
    row = next(r for r in rows if (r["gain"], r["discount"]) == ("linear", "log"))
    Y = _per_topic(qrels, runs, "nDCG@20", D.topics)
    rng = np.random.default_rng(4)
    ix = rng.integers(0, 50, size=(300, 50))
    need = []
    for cols in ix:
        Z = Y[:, cols]
        S, T = Z.shape
        grand = Z.mean()
        ms_s = T * ((Z.mean(axis=1) - grand) ** 2).sum() / (S - 1)
        ms_t = S * ((Z.mean(axis=0) - grand) ** 2).sum() / (T - 1)
        resid = Z - Z.mean(axis=1, keepdims=True) - Z.mean(axis=0, keepdims=True) + grand
        ms_e = (resid ** 2).sum() / ((S - 1) * (T - 1))
        vs, vt, ve = max((ms_s - ms_e) / T, 0), max((ms_t - ms_e) / S, 0), ms_e
        need.append(max(int(np.ceil(0.9 * (vt + ve) / (0.1 * vs) - 1e-9)), 1))
    lo, hi = np.percentile(need, [2.5, 97.5])
    assert row["topics Φ>=0.9 2.5%"] == pytest.approx(lo, abs=1e-9)
    assert row["topics Φ>=0.9 97.5%"] == pytest.approx(hi, abs=1e-9)


def test_cli_tables(robust, tmp_path):
    qrels, runs = robust
    args = ["stability", "--topics", "601-650", "-k", "20", "--restarts", "0", "--reps", "100", qrels, *runs]
    r = CliRunner().invoke(main, [*args[:-len(runs) - 1], "--table", "all", "-f", "json", qrels, *runs])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert set(doc) == {"meta", "rows", "tau", "asl"} and doc["meta"]["asl_reps"] == 100
    assert len(doc["tau"]) == 49 and len(doc["asl"]) == 4 * 136
    r = CliRunner().invoke(main, [*args[:-len(runs) - 1], "--table", "tau", "-f", "tsv", qrels, *runs])
    assert r.exit_code == 0 and r.stdout.splitlines()[0] == "measure\tk\tfunction_a\tfunction_b\ttau"
    r = CliRunner().invoke(main, [*args[:-len(runs) - 1], "--table", "tau,asl", "-f", "tsv", qrels, *runs])
    assert r.stdout.startswith("# tau\n") and "\n# asl\nmeasure\tk\tfunction\trun_a\trun_b\tasl\torder\n" in r.stdout
    r = CliRunner().invoke(main, [*args[:-len(runs) - 1], "--table", "taus", qrels, *runs])
    assert r.exit_code == 2 and "--table takes functions, tau, asl, paired or all" in r.stderr
