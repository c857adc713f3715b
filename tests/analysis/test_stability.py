"""Stability-optimal gains and discounts (Kanoulas & Aslam 2009): objective, optimisers, command.

The objective is checked against a reference evaluation written here from the files (sort, cut,
gain, discount, ideal, random-ranking expectation) and an independent least-squares two-way ANOVA;
the optimisers against the named functions, a grid over the gain simplex and their constraints.
"""
from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from ulnorm_eval.analysis import stability as st
from ulnorm_eval.analysis import stats
from ulnorm_eval.cli.main import main
from ulnorm_eval.analysis.stability import load_design

# --------------------------------------------------------------------------- synthetic data


@pytest.fixture(scope="module")
def synth(tmp_path_factory):
    """6 runs x 9 topics, grades 0/1/2 (and -1), unjudged documents, a topic without relevant
    documents, runs of different lengths and one run missing a topic."""
    rng = np.random.default_rng(7)
    d = tmp_path_factory.mktemp("stab")
    qrels, runs = [], {f"r{i}": [] for i in range(6)}
    for t in range(9):
        qid = str(400 + t)
        docs = [f"D{t}-{i:02d}" for i in range(40)]
        grades = rng.choice([0, 0, 0, 1, 1, 2, -1], size=30) if t != 4 else np.zeros(30, int)
        for doc, g in zip(docs[:30], grades):  # the last 10 documents are unjudged
            qrels.append(f"{qid} 0 {doc} {g}")
        for i, name in enumerate(runs):
            if name == "r5" and t == 2:
                continue
            n = 25 if i % 2 else 14
            skill = 0.3 * i
            score = rng.random(40) + skill * np.isin(np.arange(40), np.flatnonzero(grades > 0))
            for doc in np.asarray(docs)[np.argsort(-score)][:n]:
                runs[name].append((qid, doc, float(score[docs.index(doc)])))
    (d / "qrels").write_text("\n".join(qrels) + "\n")
    paths = []
    for name, lines in runs.items():
        p = d / name
        p.write_text("".join(f"{q} Q0 {doc} 0 {s!r} {name}\n" for q, doc, s in lines))
        paths.append(str(p))
    return str(d / "qrels"), paths


def reference_scores(qrels_path, run_paths, k, gains: dict, discount, measure="nDCG", topics=None):
    """(S, T) scores computed straight from the files, one (run, topic) at a time.

    Runs sorted by score descending then docid descending (trec_eval); gain from ``gains`` by grade
    (unjudged and non-positive grades 0); the ideal is the judged documents sorted by gain; E is the
    mean gain of the judged documents times the discounts of ranks 1..min(k, judged); UL2 = (A-E)/(I-E)
    above E, (A-E)/E below, 0 when I = E.
    """
    judged = {}
    for line in open(qrels_path):
        q, _, doc, g = line.split()
        judged.setdefault(q, {})[doc] = float(g)
    topics = topics or sorted(judged, key=int)
    ranked = []
    for p in run_paths:
        per = {}
        for line in open(p):
            q, _, doc, _, s, _ = line.split()
            per.setdefault(q, []).append((float(s), doc))
        ranked.append(per)
    d = np.asarray(discount, float)[:k]

    def gain(g):
        return gains.get(g, 0.0) if g > 0 else 0.0

    out = np.zeros((len(run_paths), len(topics)))
    for j, q in enumerate(topics):
        pool = [gain(g) for g in judged[q].values()]
        ideal = sorted(pool, reverse=True)[:k]
        I = sum(x * d[r] for r, x in enumerate(ideal))
        m = min(k, len(pool))
        E = (sum(pool) / len(pool)) * d[:m].sum()
        for i, per in enumerate(ranked):
            docs = [doc for _, doc in sorted(per.get(q, []), key=lambda x: (x[0], x[1].encode()), reverse=True)][:k]
            A = sum(gain(judged[q].get(doc, 0.0)) * d[r] for r, doc in enumerate(docs))
            if measure == "DCG":
                out[i, j] = A
            elif measure == "nDCG":
                out[i, j] = A / I if I > 0 else 0.0
            elif measure == "UL2":
                if abs(I - E) <= 1e-12 * max(1.0, abs(I)):
                    out[i, j] = 0.0
                else:
                    out[i, j] = (A - E) / (I - E) if A >= E else (A - E) / E
    return out


def lstsq_anova(Y):
    """Variance components from least-squares fits of the additive model and its reductions."""
    ns, nt = Y.shape
    y = Y.ravel()
    S = np.kron(np.eye(ns), np.ones((nt, 1)))
    T = np.kron(np.ones((ns, 1)), np.eye(nt))
    one = np.ones((ns * nt, 1))

    def rss(X):
        beta, *_ = np.linalg.lstsq(X, y, rcond=None)
        return float(((y - X @ beta) ** 2).sum())

    full = rss(np.hstack([one, S[:, 1:], T[:, 1:]]))
    ss_s = rss(np.hstack([one, T[:, 1:]])) - full
    ss_t = rss(np.hstack([one, S[:, 1:]])) - full
    ms_e = full / ((ns - 1) * (nt - 1))
    ms_s, ms_t = ss_s / (ns - 1), ss_t / (nt - 1)
    return max((ms_s - ms_e) / nt, 0.0), max((ms_t - ms_e) / ns, 0.0), ms_e


def gains_dict(levels, g):
    return {float(lv): float(x) for lv, x in zip(levels, g)}


# --------------------------------------------------------------------------- named functions, kernels

def test_named_functions_are_the_papers_normalised():
    k = 5
    r = np.arange(1, 6)
    assert np.allclose(st.named_discount("log", k), (1 / np.log2(1 + r)) / (1 / np.log2(1 + r)).sum(), rtol=0, atol=1e-15)
    assert np.allclose(st.named_discount("zipf", k), (1 / r) / (1 / r).sum(), rtol=0, atol=1e-15)
    assert st.named_discount("linear", k).tolist() == pytest.approx([5 / 15, 4 / 15, 3 / 15, 2 / 15, 1 / 15])
    assert st.named_gains("linear", [1, 2]).tolist() == pytest.approx([1 / 3, 2 / 3])
    assert st.named_gains("exponential", [1, 2, 3]).tolist() == pytest.approx([1 / 11, 3 / 11, 7 / 11])
    assert st.gain_ratios([1, 2], st.named_gains("exponential", [1, 2])) == {"2/1": pytest.approx(3.0)}
    with pytest.raises(ValueError):
        st.named_discount("cubic", 3)


def test_parse_measure_and_topics():
    assert st.parse_measure("nDCG") == st.MeasureSpec(base="nDCG")
    assert st.parse_measure("ue2(ndcg)") == st.MeasureSpec(base="nDCG", variant="UL2")
    assert st.parse_measure("UL1(DCG)").name(10) == "UL1(DCG@10)"
    for bad in ("AP", "UL9(nDCG)", "nDCG@10", "UL2(nDCG"):
        with pytest.raises(ValueError):
            st.parse_measure(bad)
    topics = ["301", "302", "601", "650", "651", "x7"]
    assert st.parse_topics("601-650", topics) == ["601", "650"]
    assert st.parse_topics("301, 651-700,x7", topics) == ["301", "651", "x7"]
    with pytest.raises(ValueError, match="matches no topic"):
        st.parse_topics("700-800", topics)


# --------------------------------------------------------------------------- objective = full evaluation

@pytest.mark.parametrize("measure", ["nDCG", "DCG", "UL2"])
def test_precomputed_scores_equal_a_full_evaluation(synth, measure):
    qrels, runs = synth
    k = 12
    D = load_design(qrels, runs, k)
    assert D.C.shape == (6, 9, 2, k) and D.levels.tolist() == [1.0, 2.0]
    spec = st.parse_measure(measure if measure != "UL2" else "UL2(nDCG)")
    rng = np.random.default_rng(1)
    for g in (np.array([0.3, 0.7]), np.array([0.8, 0.2])):  # the second reverses the ideal's grade order
        d = rng.dirichlet(np.ones(k))  # not monotone: the ideal still sorts by gain
        ref = reference_scores(qrels, runs, k, gains_dict(D.levels, g), d, measure)
        got = st.scores(D, g, d, spec)
        assert np.abs(got - ref).max() <= 1e-12 * max(1.0, np.abs(ref).max())


def test_variance_components_equal_an_independent_anova(synth):
    qrels, runs = synth
    D = load_design(qrels, runs, 10)
    g, d = st.named_gains("linear", D.levels), st.named_discount("log", 10)
    Y = reference_scores(qrels, runs, 10, gains_dict(D.levels, g), d)
    vc = st.components(D, g, d, st.MeasureSpec(base="nDCG"))
    s, t, e = lstsq_anova(Y)
    assert (vc.system, vc.topic, vc.residual) == pytest.approx((s, t, e), rel=1e-10, abs=1e-15)
    assert st.objective(D, g, d, st.MeasureSpec(base="nDCG"))[0] == pytest.approx(s / (s + t + e), rel=1e-12)


@pytest.mark.parametrize("measure", ["nDCG", "DCG", "UL2(nDCG)"])
def test_gradient_matches_finite_differences(synth, measure):
    from scipy.optimize import approx_fprime

    qrels, runs = synth
    k = 10
    D = load_design(qrels, runs, k)
    spec = st.parse_measure(measure)
    x = np.concatenate([np.array([0.35, 0.65]), st.named_discount("log", k)])
    _, gg, gd = st.objective(D, x[:2], x[2:], spec)
    num = approx_fprime(x, lambda z: st.objective(D, z[:2], z[2:], spec)[0], 1e-7)
    assert np.abs(num - np.concatenate([gg, gd])).max() <= 1e-5 * max(1.0, np.abs(num).max())


# --------------------------------------------------------------------------- optimisers

def _check_constraints(o, mono=True):
    assert abs(o.gains.sum() - 1) <= 1e-9 and abs(o.discount.sum() - 1) <= 1e-9
    assert o.gains.min() >= -1e-9 and o.discount.min() >= -1e-9
    if mono:
        assert np.all(np.diff(o.discount) <= 1e-9)
        assert np.all(np.diff(o.gains) >= -1e-9)
    assert o.residual <= 1e-9


@pytest.mark.parametrize("measure", ["nDCG", "UL2(nDCG)"])
def test_optimum_beats_every_named_function_and_keeps_the_constraints(synth, measure):
    qrels, runs = synth
    k = 10
    D = load_design(qrels, runs, k)
    spec = st.parse_measure(measure)
    lin = st.named_gains("linear", D.levels)
    log = st.named_discount("log", k)
    named = {(a, b): st.objective(D, st.named_gains(a, D.levels), st.named_discount(b, k), spec)[0]
             for a in st.GAINS for b in st.DISCOUNTS}
    od = st.optimise(D, spec, (lin, None), restarts=2)
    og = st.optimise(D, spec, (None, log), restarts=2)
    oj = st.optimise(D, spec, restarts=2, starts=[np.concatenate([o.gains, o.discount]) for o in (od, og)])
    for o in (od, og, oj):
        _check_constraints(o)
        assert o.phi1 == st.objective(D, o.gains, o.discount, spec)[0]
    assert all(od.phi1 >= named[("linear", b)] for b in st.DISCOUNTS)
    assert all(og.phi1 >= named[(a, "log")] for a in st.GAINS)
    assert oj.phi1 >= max(max(named.values()), od.phi1, og.phi1)
    ou = st.optimise(D, spec, (lin, None), monotone=False, restarts=2, starts=[od.discount])
    _check_constraints(ou, mono=False)
    assert ou.phi1 >= od.phi1


@pytest.mark.parametrize("monotone", [True, False])
def test_gain_optimum_is_the_grid_maximum(synth, monotone):
    """Two grade levels: the gain simplex is a segment, searched here on a fine grid."""
    qrels, runs = synth
    D = load_design(qrels, runs, 10)
    spec = st.MeasureSpec(base="nDCG")
    d = st.named_discount("log", 10)
    o = st.optimise(D, spec, (None, d), monotone=monotone, restarts=3)
    hi = 0.5 if monotone else 1.0
    grid = max(st.objective(D, np.array([a, 1 - a]), d, spec)[0] for a in np.linspace(0, hi, 2001))
    assert o.phi1 >= grid - 1e-9
    _check_constraints(o, mono=monotone)


def test_the_optimum_evaluated_from_scratch_gives_the_reported_phi(synth):
    qrels, runs = synth
    k = 10
    D = load_design(qrels, runs, k)
    spec = st.parse_measure("UL2(nDCG)")
    o = st.optimise(D, spec, restarts=2)
    Y = reference_scores(qrels, runs, k, gains_dict(D.levels, o.gains), o.discount, "UL2")
    vc = stats.variance_components(Y)
    assert stats.phi(vc, 1) == pytest.approx(o.phi1, rel=1e-12, abs=1e-15)


def test_reproducible_for_a_fixed_seed(synth):
    qrels, runs = synth
    D = load_design(qrels, runs, 10)
    spec = st.MeasureSpec(base="nDCG")
    lin = st.named_gains("linear", D.levels)
    a = st.optimise(D, spec, (lin, None), monotone=False, restarts=3, seed=5)
    b = st.optimise(D, spec, (lin, None), monotone=False, restarts=3, seed=5)
    assert a.discount.tolist() == b.discount.tolist() and a.phi1 == b.phi1 and a.agree == b.agree


# --------------------------------------------------------------------------- Robust 2003

@pytest.fixture(scope="module")
def robust(shared):
    base = shared / "robust03"
    runs = sorted(str(p) for p in (base / "runs").iterdir())
    return str(base / "qrels.txt"), runs


def test_robust03_matches_the_evaluation_pipeline(robust):
    """linear gains + log discount is trec_eval's nDCG@20; UL2 is `eval --pool qrels`'s UL2(nDCG@20) (the
    design's random ranker permutes the judged documents)."""
    from ulnorm_eval import evaluate

    qrels, runs = robust
    D = load_design(qrels, runs, 20, "601-650")
    g, d = st.named_gains("linear", D.levels), st.named_discount("log", 20)
    res = evaluate(qrels, runs, ["nDCG@20"], variants=["UL2"], pool="qrels")
    specs = (st.MeasureSpec(base="nDCG"), st.MeasureSpec(base="nDCG", variant="UL2"))
    for spec, metric in zip(specs, res.metrics):
        Y = st.scores(D, g, d, spec)
        for i, rr in enumerate(res.runs):
            col = {q: j for j, q in enumerate(rr.qids)}
            want = np.asarray(rr.values[metric])[[col[q] for q in D.topics]]
            assert np.abs(Y[i] - want).max() <= 1e-12


def test_robust03_optimum_evaluated_from_the_files(robust, tmp_path):
    """The joint optimum's Φ, recomputed from the run files by the reference evaluation."""
    import gzip
    import shutil

    qrels, runs = robust
    D = load_design(qrels, runs, 20, "601-650")
    spec = st.MeasureSpec(base="nDCG")
    o = st.optimise(D, spec, restarts=1)
    plain = []
    for i, r in enumerate(runs):  # the reference reads plain text
        path = tmp_path / f"run{i}"
        with gzip.open(r, "rb") as src, open(path, "wb") as dst:
            shutil.copyfileobj(src, dst)
        plain.append(str(path))
    Y = reference_scores(qrels, plain, 20, gains_dict(D.levels, o.gains), o.discount, "nDCG", D.topics)
    vc = stats.variance_components(Y)
    assert stats.phi(vc, 1) == pytest.approx(o.phi1, rel=1e-12)
    assert o.phi1 > st.objective(D, st.named_gains("linear", D.levels), st.named_discount("log", 20), spec)[0]


def test_robust03_study_rows(robust):
    qrels, runs = robust
    D = load_design(qrels, runs, 20, "601-650")
    assert len(D.systems) == 17 and len(D.topics) == 50 and D.topics[0] == "601"
    rows, _ = st.study(D, [st.MeasureSpec(base="nDCG")], [20],
                       st.StudyOptions(unconstrained="gains", restarts=1, phi_targets=(0.9, 0.95)))
    by = {(r["gain"], r["discount"]): r for r in rows}
    opt = by[("linear", "optimal")]
    for dn in st.DISCOUNTS:
        assert opt["phi"] >= by[("linear", dn)]["phi"]
        assert opt["topics Φ>=0.95"] <= by[("linear", dn)]["topics Φ>=0.95"]
    assert by[("optimal", "log")]["phi"] >= by[("exponential", "log")]["phi"]
    assert by[("optimal (joint)", "optimal (joint)")]["phi"] >= max(r["phi"] for r in rows) - 1e-12
    vc = stats.variance_components(st.scores(D, st.named_gains("linear", D.levels), st.named_discount("zipf", 20),
                                             st.MeasureSpec(base="nDCG")))
    assert by[("linear", "zipf")]["topics Φ>=0.9"] == stats.topics_needed(vc, 0.9)
    assert by[("linear", "zipf")]["phi"] == stats.phi(vc, 50)


# --------------------------------------------------------------------------- command line

def _parse_string(s):
    """gains and discount back from a printed measure string."""
    import re

    m = re.search(r"gains=\{([^}]*)\}, discount=\[([^\]]*)\]\)@(\d+)", s)
    gains = {float(a): float(b) for a, b in (p.split(":") for p in m.group(1).split(","))}
    return gains, [float(x) for x in m.group(2).split(",")], int(m.group(3))


def test_cli_json_and_the_pasteable_string(synth, tmp_path):
    qrels, runs = synth
    out = tmp_path / "s.json"
    r = CliRunner().invoke(main, ["stability", "-k", "8", "-m", "nDCG", "-m", "UL2(nDCG)", "--restarts", "1",
                                  "-f", "json", "-o", str(out), qrels, *runs])
    assert r.exit_code == 0, r.output
    data = json.loads(out.read_text())
    rows = data["rows"]
    assert {x["measure"] for x in rows} == {"nDCG@8", "UL2(nDCG@8)"}
    assert data["meta"]["topics"] == 9 and data["meta"]["runs"] == 6
    for row in rows:
        gains, disc, k = _parse_string(row["string"])
        assert k == 8 and gains[0.0] == 0.0 and len(disc) == 8
        kind = "UL2" if row["measure"].startswith("UL2") else "nDCG"
        Y = reference_scores(qrels, runs, k, gains, disc, kind)
        vc = stats.variance_components(Y)
        assert stats.phi(vc, 9) == pytest.approx(row["phi"], rel=1e-9, abs=1e-12)
        assert row["residual"] <= 1e-9
        # the string pasted into `eval -m` scores every (run, topic) as the optimiser did: same Phi
        ev = CliRunner().invoke(main, ["-f", "tsv", "-q", "--pool", "qrels", "--norm", "none", "-m", row["string"],
                                       qrels, *runs])
        assert ev.exit_code == 0, ev.output
        lines = [x.split("\t") for x in ev.stdout.splitlines()[1:] if x.split("\t")[1] != "all"]
        order = sorted({q for _, q, _ in lines})
        Z = np.array([[float(v) for r, q, v in sorted(lines, key=lambda x: x[1]) if r == run_name]
                      for run_name in dict.fromkeys(r for r, _, _ in lines)])
        assert Z.shape == (6, len(order)) == Y.shape
        assert np.allclose(Z, Y, rtol=1e-9, atol=1e-10)
    tsv = CliRunner().invoke(main, ["stability", "-k", "8", "--restarts", "1", "-f", "tsv", qrels, *runs])
    assert tsv.exit_code == 0
    header = tsv.stdout.splitlines()[0].split("\t")
    assert header[:4] == ["measure", "k", "gain", "discount"] and "topics Φ>=0.95" in header


def test_cli_plot(synth, tmp_path):
    import matplotlib  # noqa: F401 - the test extra installs it
    qrels, runs = synth
    png = tmp_path / "s.png"
    r = CliRunner().invoke(main, ["stability", "-k", "6", "--restarts", "0", "-f", "tsv", "--plot", str(png),
                                  qrels, *runs])
    assert r.exit_code == 0, r.output
    assert png.stat().st_size > 1000


@pytest.mark.parametrize("args,msg", [
    (["-m", "AP"], "unknown measure"),
    (["-k", "0"], "cutoff"),
    (["-k", "ten"], "cutoff"),
    (["--phi", "1.5"], "--phi"),
    (["--topics", "900-901"], "matches no topic"),
    (["--unconstrained=sometimes"], "sometimes"),
    (["--restarts", "x"], "x"),
])
def test_cli_errors_are_one_line_with_exit_2(synth, args, msg):
    qrels, runs = synth
    r = CliRunner().invoke(main, ["stability", *args, qrels, *runs])
    assert r.exit_code == 2
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ulnorm-eval: ") and msg in lines[0]


def test_cli_input_errors(synth, tmp_path):
    qrels, runs = synth
    r = CliRunner().invoke(main, ["stability", qrels, runs[0]])
    assert r.exit_code == 2 and r.output.strip() == ("ulnorm-eval: stability needs at least two runs (systems) "
                                                 "(see 'ulnorm-eval stability --help')")
    r = CliRunner().invoke(main, ["stability", qrels, runs[0], str(tmp_path / "nope")])
    assert r.exit_code == 2 and r.output.strip().splitlines() == [f"ulnorm-eval: {tmp_path / 'nope'}: no such file"]
    bad = tmp_path / "bad"
    bad.write_text("401 Q0 D1 1 x r\n")
    r = CliRunner().invoke(main, ["stability", qrels, runs[0], str(bad)])
    assert r.exit_code == 2 and r.output.strip().splitlines() == [f"ulnorm-eval: {bad}:1: score 'x' is not a number"]


# --------------------------------------------------------------------------- held-out Φ and paired ratios

def test_topic_splits_are_disjoint_halves():
    for T in (9, 10):
        for fit, held in st.topic_splits(T, 5, seed=3):
            assert len(fit) == T // 2 and len(held) == T - T // 2
            assert sorted(np.concatenate([fit, held]).tolist()) == list(range(T))
    a, b = st.topic_splits(10, 4, seed=1), st.topic_splits(10, 4, seed=1)
    assert all((x[0] == y[0]).all() for x, y in zip(a, b))
    assert any((x[0] != y[0]).any() for x, y in zip(a, st.topic_splits(10, 4, seed=2)))


def test_holdout_phi_is_computed_on_the_other_half(synth):
    """Named functions: Φ at n topics from the variance components of each half's own scores (the full
    design's scores restricted to those topics, an independent path); optima: fitted on the fitting
    half, so there at least as high as every named function, and scored on the held-out half."""
    qrels, runs = synth
    D = load_design(qrels, runs, 10)
    spec = st.MeasureSpec(base="nDCG")
    splits = 6
    rows, _ = st.study(D, [spec], [10], st.StudyOptions(restarts=1, holdout=splits, seed=5))
    halves = st.topic_splits(len(D.topics), splits, seed=5)
    n = len(D.topics)
    by = {(r["gain"], r["discount"]): r for r in rows}
    log = by[("linear", "log")]
    for (gn, dn), r in by.items():
        if r["optimised"] != "—":
            continue
        Y = st.scores(D, st.named_gains(gn, D.levels), st.named_discount(dn, 10), spec)
        fit = [stats.phi(stats.variance_components(Y[:, a]), n) for a, _ in halves]
        held = [stats.phi(stats.variance_components(Y[:, b]), n) for _, b in halves]
        assert r["phi fit-half"] == pytest.approx(np.mean(fit), rel=1e-12)
        assert r["phi held-out"] == pytest.approx(np.mean(held), rel=1e-12)
        assert r["phi held-out 2.5%"] == pytest.approx(np.percentile(held, 2.5), rel=1e-12)
        assert r["phi held-out 97.5%"] == pytest.approx(np.percentile(held, 97.5), rel=1e-12)
        ref = [stats.phi(stats.variance_components(st.scores(D, st.named_gains("linear", D.levels),
                                                             st.named_discount("log", 10), spec)[:, b]), n)
               for _, b in halves]
        assert r["phi held-out - log"] == pytest.approx(np.mean(np.subtract(held, ref)), abs=1e-12)
    assert log["phi held-out - log"] == 0
    opt = by[("linear", "optimal")]
    # fitted on the fitting half: at least every named discount's Φ there, on every split, so in the mean
    for dn in st.DISCOUNTS:
        assert opt["phi fit-half"] >= by[("linear", dn)]["phi fit-half"] - 1e-12
    # the held-out value is the optimum of the fitting half scored on the other half, recomputed here
    want = []
    for a, b in halves:
        o = st.optimise(D.subset(a), spec, (st.named_gains("linear", D.levels), None), restarts=1, seed=5)
        want.append(stats.phi(stats.variance_components(st.scores(D, o.gains, o.discount, spec)[:, b]), n))
    assert opt["phi held-out"] == pytest.approx(np.mean(want), rel=1e-9)
    assert opt["phi held-out"] != pytest.approx(opt["phi fit-half"], rel=1e-6)


def test_functions_table_shows_the_holdout_interval():
    """-f table: a held-out column prints its mean, then its [2.5%, 97.5%] over the splits, to --precision."""
    from ulnorm_eval.render.stability_report import render_tables

    row = {"measure": "m", "gain": "g", "discount": "d", "phi": 0.5, "erho2": float("inf"), "phi held-out": -0.25,
           "phi held-out 2.5%": -0.5, "phi held-out 97.5%": 0.125, "residual": 1.234e-7, "converged": False,
           "optimised": "—"}
    text = render_tables({"functions": [row]}, "table", 3, {})
    assert "-0.250 [-0.500, 0.125]" in text and " 0.500 " in text and "∞" in text
    assert "1.2e-07" in text and " NO " in text


def test_paired_ratios_are_ratios_of_topics_needed_on_shared_resamples(synth):
    qrels, runs = synth
    D = load_design(qrels, runs, 10)
    specs = [st.MeasureSpec(base="nDCG"), st.MeasureSpec(base="nDCG", variant="UL2")]
    paired = []
    rows, _ = st.study(D, specs, [10], st.StudyOptions(restarts=0, topic_bootstrap=200, seed=2, phi_targets=(0.9,)), paired=paired)
    res = st.topic_resamples(len(D.topics), 200, 2)
    g, d, z = st.named_gains("linear", D.levels), st.named_discount("log", 10), st.named_discount("zipf", 10)

    def need(Y):  # topics needed for Φ >= 0.9, unrounded: eq. 2 solved for n
        vc = stats.variance_components(Y)
        return 0.9 * (vc.topic + vc.residual) / (0.1 * vc.system)

    got = {(p["measure_a"], p["function_a"], p["measure_b"], p["function_b"]): p for p in paired}
    # within a measure: Zipfian against log, on the same resamples
    p = got[("nDCG@10", "linear/zipf", "nDCG@10", "linear/log")]
    A, B = st.scores(D, g, z, specs[0]), st.scores(D, g, d, specs[0])
    assert p["ratio"] == pytest.approx(need(A) / need(B), rel=1e-12)
    r = np.array([need(A[:, ix]) / need(B[:, ix]) for ix in res])
    assert p["ratio 2.5%"] == pytest.approx(np.percentile(r, 2.5), rel=1e-12)
    assert p["ratio 97.5%"] == pytest.approx(np.percentile(r, 97.5), rel=1e-12)
    assert p["share a<b"] == np.mean(r < 1) and p["share a>b"] == np.mean(r > 1)
    # across measures: UL2 against nDCG with the same function
    p = got[("UL2(nDCG@10)", "linear/log", "nDCG@10", "linear/log")]
    U = st.scores(D, g, d, specs[1])
    assert p["ratio"] == pytest.approx(need(U) / need(B), rel=1e-12)
    r = np.array([need(U[:, ix]) / need(B[:, ix]) for ix in res])
    assert p["ratio 2.5%"] == pytest.approx(np.percentile(r, 2.5), rel=1e-12)
    # the rounded counts of the functions table agree with the unrounded ratio
    by = {(x["measure"], x["gain"], x["discount"]): x for x in rows}
    assert by[("UL2(nDCG@10)", "linear", "log")]["topics Φ>=0.9"] == int(np.ceil(need(U) - 1e-9))
    assert len(paired) == 2 * 6 + 7  # every function against log, in each measure; UL2 against nDCG


def test_cli_paired_and_holdout(synth):
    qrels, runs = synth
    res = CliRunner().invoke(main, ["stability", "-k", "5,10", "-m", "nDCG", "-m", "UL2(nDCG)", "--restarts", "0",
                                    "--topic-bootstrap", "50", "--holdout", "2", "--table", "functions,paired",
                                    "-f", "json", qrels, *runs])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["meta"]["holdout"] == 2 and doc["meta"]["topic_bootstrap"] == 50
    assert all("phi held-out" in r and "phi fit-half 97.5%" in r for r in doc["rows"])
    assert {(p["measure_a"], p["function_a"]) for p in doc["paired"]} >= {("UL2(nDCG@5)", "linear/log")}
    # a later cutoff against the first, function by function (named functions only)
    D = load_design(qrels, runs, 10)
    g = st.named_gains("linear", D.levels)
    p = next(p for p in doc["paired"] if (p["measure_a"], p["function_a"], p["measure_b"], p["function_b"])
             == ("UL2(nDCG@10)", "linear/zipf", "UL2(nDCG@5)", "linear/zipf"))
    spec = st.MeasureSpec(base="nDCG", variant="UL2")
    want = (st.error_ratio(st.scores(D, g, st.named_discount("zipf", 10), spec))
            / st.error_ratio(st.scores(D.at(5), g, st.named_discount("zipf", 5), spec)))
    assert p["ratio"] == pytest.approx(want, rel=1e-12)
    assert not [p for p in doc["paired"] if p["measure_a"] == "nDCG@10" and p["measure_b"] == "nDCG@5"
                and p["function_a"] == "joint"]
    bad = CliRunner().invoke(main, ["stability", "--table", "paired", qrels, *runs])
    assert bad.exit_code == 2 and "--table paired needs --topic-bootstrap" in bad.stderr


@pytest.mark.parametrize("lo,hi,verb", [(1.10, 2.35, "needs more topics than"), (0.64, 0.89, "needs fewer topics than"),
                                        (0.94, 1.67, "is not separated from"), (1.0, 1.2, "is not separated from"),
                                        (0.8, 1.0, "is not separated from")])
def test_ratio_claim_words_only_what_the_interval_supports(lo, hi, verb):
    p = {"measure_a": "UL2(nDCG@20)", "function_a": "linear/log", "measure_b": "nDCG@20", "function_b": "linear/log",
         "ratio": (lo + hi) / 2, "ratio 2.5%": lo, "ratio 97.5%": hi}
    assert st.ratio_claim(p) == (f"UL2(nDCG@20) linear/log {verb} nDCG@20 linear/log: {(lo + hi) / 2:.2f}x "
                                 f"[{lo:.2f}, {hi:.2f}]")


def test_ratio_claim_never_prints_an_excluding_bound_as_1():
    p = {"measure_a": "nDCG@3", "function_a": "optimal/log", "measure_b": "nDCG@3", "function_b": "linear/log",
         "ratio": 0.81, "ratio 2.5%": 0.67, "ratio 97.5%": 0.9996}
    assert st.ratio_claim(p).endswith("needs fewer topics than nDCG@3 linear/log: 0.81x [0.67, 0.9996]")
