"""The docs' comparative sentences are recomputed from the data, so their wording follows their
intervals or tests.

Every sentence of the form "A needs more topics than B: 1.70x [1.10, 2.35]" (or "fewer", or "is not
separated from") in docs/stability.md and docs/robust03-analysis.md is recomputed here from the Robust
2003 files with the functions `ulnorm-eval stability --topic-bootstrap 1000 --table paired` uses
(:func:`ulnorm_eval.analysis.stability.paired_ratios` on the same seeded resamples) and must equal
:func:`ulnorm_eval.analysis.stability.ratio_claim` of the numbers, verb included: "more" or "fewer" only
when the 95 % interval excludes 1.  A sentence belongs to the data set named by the last
``<!-- claims: NAME -->`` marker above it.  A claim the data no longer support, or a sentence naming a
comparison not computed here, fails the test.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

from ulnorm_eval.analysis import stability as st
from ulnorm_eval.analysis.stability import load_design

from conftest import ROOT

DOCS = ROOT / "docs"
CLAIM = re.compile(r"(\S+ \S+) (needs more topics than|needs fewer topics than|is not separated from) "
                   r"(\S+ \S+): (\d+\.\d+)x \[(\d+\.\d+), (\d+\.\d+)\]")
MARKER = re.compile(r"<!-- claims: (.+?) -->")
REPS, SEED = 1000, 0  # the docs' commands: --topic-bootstrap 1000, --seed 0 (the default)


def _named_claims(design, specs, cutoffs) -> dict:
    """Claims between the named functions (no optimiser): the rows `study` makes for them, paired on
    the command's resamples."""
    resamples = st.topic_resamples(len(design.topics), REPS, SEED)
    rows, draws = [], {}
    for k in cutoffs:
        dk = design.at(k)
        for spec in specs:
            fns = [("linear", dn) for dn in st.DISCOUNTS] + [("exponential", "log")]
            for gn, dn in fns:
                Y = st.scores(dk, st.named_gains(gn, dk.levels), st.named_discount(dn, k), spec)
                draws[len(rows)] = np.array([st.error_ratio(Y[:, ix]) for ix in resamples])
                rows.append({"k": k, "measure": spec.name(k), "gain": gn, "discount": dn, "optimised": "—",
                             "monotone": True, "_error_ratio": st.error_ratio(Y)})
    return _by_pair(st.paired_ratios(rows, draws))


def _study_claims(design, specs, k) -> dict:
    """Every claim of the command at one cutoff, optima included (restarts 3, seed 0: the defaults)."""
    paired = []
    st.study(design, specs, [k], st.StudyOptions(topic_bootstrap=REPS, seed=SEED, phi_targets=(0.9,)), paired=paired)
    return _by_pair(paired)


def _by_pair(paired) -> dict:
    return {(f"{p['measure_a']} {p['function_a']}", f"{p['measure_b']} {p['function_b']}"): p for p in paired}


def _without(design, system: str):
    keep = [i for i, s in enumerate(design.systems) if s != system]
    assert len(keep) == len(design.systems) - 1
    return st.Design(C=design.C[keep], counts=design.counts, pool=design.pool, levels=design.levels,
                     systems=[design.systems[i] for i in keep], topics=design.topics)


@pytest.fixture(scope="module")
def computed(shared):
    base = shared / "robust03"
    qrels, runs = str(base / "qrels.txt"), sorted(str(p) for p in (base / "runs").iterdir())
    specs = [st.MeasureSpec(base="nDCG"), st.MeasureSpec(base="nDCG", variant="UL2")]
    d50 = load_design(qrels, runs, 200, "601-650")
    d100 = load_design(qrels, runs, 100)
    out = {"robust03 601-650": {**_named_claims(d50, specs, [3, 10, 20, 100, 200]),
                                **_study_claims(d50.at(100), specs, 100)},
           "robust03 601-650 without NLPR03vb10": _study_claims(_without(d50.at(100), "input.NLPR03vb10"),
                                                                 specs[:1], 100),
           "robust03 all topics": _named_claims(d100, specs, [10, 100])}
    return out


def _doc_claims(name: str) -> list:
    """(data set, sentence match) for every generated-style sentence of a page, whitespace folded."""
    text = " ".join((DOCS / name).read_text(encoding="utf-8").split())
    out, pos = [], 0
    marks = [(m.start(), m.group(1)) for m in MARKER.finditer(text)]
    for m in CLAIM.finditer(text):
        before = [label for at, label in marks if at < m.start()]
        out.append((before[-1] if before else None, m))
    return out


@pytest.mark.parametrize("page", ["stability.md", "robust03-analysis.md", "comparing.md"])
def test_every_paired_claim_in_the_docs_is_what_the_data_give(computed, page):
    found = _doc_claims(page)
    if page == "comparing.md":  # one claim, about the table of its Robust 2003 section
        assert [m.group(1) for _, m in found] == ["UL2(nDCG@10) linear/log"]
    assert found, f"{page}: no paired claim found"
    for label, m in found:
        assert label in computed, f"{page}: claim {m.group(0)!r} has no '<!-- claims: ... -->' data set above it"
        p = computed[label].get((m.group(1), m.group(3)))
        assert p is not None, f"{page} ({label}): {m.group(1)} against {m.group(3)} is not computed here"
        assert m.group(0) == st.ratio_claim(p), (page, label, m.group(0), st.ratio_claim(p))


def test_the_issue_numbers_are_the_paired_intervals(computed):
    """UL2(nDCG) against nDCG with the log discount on topics 601-650 (Kanoulas & Aslam's 50 topics):
    1.30x at k = 100 with an interval containing 1, 1.70x at k = 20 with one above 1."""
    c = computed["robust03 601-650"]
    p100 = c[("UL2(nDCG@100) linear/log", "nDCG@100 linear/log")]
    p20 = c[("UL2(nDCG@20) linear/log", "nDCG@20 linear/log")]
    assert round(p100["ratio"], 2) == 1.30 and p100["ratio 2.5%"] < 1 < p100["ratio 97.5%"]
    assert round(p20["ratio"], 2) == 1.70 and 1 < p20["ratio 2.5%"]
    # the unrounded ratio is the ratio of the printed topic counts up to their rounding: 160/123, 290/171
    assert abs(p100["ratio"] - 160 / 123) < 0.01 and abs(p20["ratio"] - 290 / 171) < 0.01


def test_nrg_page_p_values_are_the_paired_t_tests_of_its_runs(shared):
    """docs/nrg.md's DL-HARD leave-one-out claims: bm25_rm3 against either T5 run p < 0.001 by nDCG@10;
    by NRG no pair is separated (smallest of the 15 p-values 0.16; rm3 against bm25_t5_zs 0.99)."""
    import itertools

    from scipy import stats as sps

    from ulnorm_eval.analysis.nrg import evaluate_nrg

    base = shared / "dlhard-passage"
    runs = sorted(str(p) for p in (base / "runs").glob("*.run.gz"))
    res = evaluate_nrg(str(base / "qrels.txt"), runs, protocol="leave-one-out")
    plain, nrg = res.metrics[0], res.metrics[1]
    assert (str(plain), str(nrg)) == ("nDCG@10", "NRG(nDCG@10)")
    values = {m: {rr.name: np.asarray(rr.values[m]) for rr in res.runs} for m in (plain, nrg)}
    assert len(res.runs) == 6 and all(len(v) == 50 for v in values[nrg].values())
    p = {m: {(a, b): sps.ttest_rel(values[m][a], values[m][b]).pvalue
             for a, b in itertools.combinations(sorted(values[m]), 2)} for m in (plain, nrg)}
    text = " ".join((DOCS / "nrg.md").read_text(encoding="utf-8").split())
    rm3 = "bm25_rm3.run"
    for t5 in ("bm25_t5_zs.run", "bm25_rm3_t5_zs.run"):
        key = tuple(sorted((rm3, t5)))
        assert p[plain][key] < 0.001
    assert "bm25_rm3 against either T5 run gives p < 0.001" in text
    smallest = min(p[nrg].values())
    assert f"the smallest of the 15 paired p-values is {smallest:.2f}" in text and smallest > 0.05
    assert f"bm25_rm3 against bm25_t5_zs gives p = {p[nrg][(rm3, 'bm25_t5_zs.run')]:.2f}" in text


def _folded(page: str) -> str:
    path = DOCS.parent / page if page == "README.md" else DOCS / page
    return " ".join(path.read_text(encoding="utf-8").split())


def _value_against_e(run: str, pool: str) -> dict:
    """Per measure: the paired t-test of the value against E over the bundled DL-HARD queries, as the docs
    say it is computed (`-q -f tsv --norm e` and scipy's ttest_rel): (mean difference, interval, p)."""
    from scipy import stats as sps

    import ulnorm_eval as ue

    examples = DOCS.parent / "examples"
    measures = ["nDCG@10", "AP", "RBP(p=0.8)"]
    frame = ue.evaluate(str(examples / "qrels" / "dlhard-passage.qrels.txt"),
                        [str(examples / "runs" / f"{run}.run.gz")], measures, "e", pool=pool).frame
    out = {}
    for m in measures:
        a, e = frame[m].to_numpy(), frame[f"E({m})"].to_numpy()
        assert len(a) == 50
        t = sps.ttest_rel(a, e)
        ci = t.confidence_interval()
        out[m] = (float(np.mean(a - e)), float(ci.low), float(ci.high), float(t.pvalue))
    return out


def test_value_against_e_claims_are_the_paired_t_tests():
    """Under --pool qrels both bundled runs are below E by a paired t-test (p < 0.03) except bm25_bert_zs
    on RBP(p=0.8) (p = 0.51; the README's --pool qrels table marks its UL2 interval 'n.s.');
    docs/bounds.md's worked example: bm25_bert_zs below E under --pool qrels and above it under --pool
    run, with the printed differences and intervals."""
    qrels = {run: _value_against_e(run, "qrels") for run in ("bm25", "bm25_bert_zs")}
    for run, res in qrels.items():
        for m, (d, lo, hi, p) in res.items():
            assert d < 0, (run, m, d)  # E above the mean: the README's "above both runs' means"
            if (run, m) != ("bm25_bert_zs", "RBP(p=0.8)"):
                assert p < 0.03 and hi < 0, (run, m, p)
    d, lo, hi, p = qrels["bm25_bert_zs"]["RBP(p=0.8)"]
    assert p > 0.05 and lo < 0 < hi
    bounds = _folded("bounds.md")

    def said(values, sign=""):
        d, lo, hi, p = values
        assert p < 0.05
        return f"{sign}{d:.3f} [{lo:.3f}, {hi:.3f}]".replace("-", "−")

    bert = qrels["bm25_bert_zs"]
    assert f"nDCG@10 {said(bert['nDCG@10'])}, p = {bert['nDCG@10'][3]:.3f}" in bounds
    assert bert["AP"][3] < 0.001 and f"AP {said(bert['AP'])}, p < 0.001" in bounds
    run = _value_against_e("bm25_bert_zs", "run")
    assert all(v[3] < 0.001 and v[1] > 0 for v in run.values())
    assert f"nDCG@10 {said(run['nDCG@10'], '+')}, AP {said(run['AP'], '+')}, both p < 0.001" in bounds


def _study_summary() -> list:
    """The rows of the summary table of the pool study's report (benchmarks/pool_study.md)."""
    report = (DOCS.parent / "benchmarks" / "pool_study.md").read_text(encoding="utf-8")
    summary = report.split("## Summary over the collections and measures")[1].split("\n## ")[0]
    return [line for line in summary.splitlines() if line.startswith("| ")]


def test_bounds_carries_the_pool_studys_table():
    """docs/bounds.md's study table is the summary the report of benchmarks/pool_study.py holds, row for
    row (the report is what the script wrote: run it and copy the table again when it changes)."""
    bounds = (DOCS / "bounds.md").read_text(encoding="utf-8")
    rows = _study_summary()
    assert len(rows) == 1 + 1 + 6 * 3 * 2  # head, the plain measure, 6 pools x 3 variants x 2 'all' rows
    missing = [row for row in rows if row not in bounds]
    assert not missing, missing


def test_the_decided_default_passes_the_studys_checks():
    """The default docs/bounds.md decides (pool qrels+1000, EM, the mean of the per-query values, the
    randomisation interval) passes the study's checks, and today's default does not: every run above 0,
    no rise from omission, no move with depth, no pair against the per-query column, coverage >= 93% in
    every cell; today's (run, UL2, of means, percentile) rises under omission and covers less than 93%
    somewhere."""
    rows = [[x.strip() for x in row.strip("|").split("|")] for row in _study_summary()]
    head, cells = rows[0], {tuple(c[:3]): c for c in rows[1:]}

    def col(row, name):
        return row[head.index(name)]

    decided = cells[("qrels+1000", "EM", "mean")]
    above, runs = map(int, col(decided, "runs > 0").split("/"))
    assert above == runs
    assert col(decided, "omission: rises").startswith("0/") and col(decided, "largest rise") == "0.000"
    assert col(decided, "pairs against the column mean").startswith("0/")
    assert col(decided, "nDCG@10 cut to 10: mean change (largest)").startswith("0.000 ")
    assert float(col(decided, "coverage, randomisation (lowest · all)").split("%")[0]) >= 93
    today = cells[("run", "UL2", "of means")]
    assert not col(today, "omission: rises").startswith("0/")
    assert float(col(today, "coverage, percentile (lowest · all)").split("%")[0]) < 93
    bounds = _folded("bounds.md")
    assert "`--pool qrels+1000`" in bounds and "mean of the per-query values" in bounds
