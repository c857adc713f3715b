"""Judgment holes: LB/UB against every assignment of grades to the unjudged documents of small
random queries (brute force), for every native measure that has hole bounds; the open bound; the
refusals; the CLI."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from ulnorm_eval.core import registry
from ulnorm_eval.core.holes import assign, candidate_grades, hole_bounds, holes_reason
from ulnorm_eval.core.kernels import Judgements, Ranking
from ulnorm_eval.core.records import FAMILIES

from conftest import ROOT, command

CUTOFFS = (1, 2, 3, 5)


def hole_measures():
    """Every example measure of every family with hole bounds (``{k}``: several cutoffs)."""
    out = []
    for fam in FAMILIES.values():
        if fam.holes is None:
            continue
        for ex in fam.examples:
            for k in (CUTOFFS if "{k}" in ex else (None,)):
                m = registry.parse(ex.replace("{k}", str(k)) if k else ex).measure
                if holes_reason(m) is None:
                    out.append(m)
    return list(dict.fromkeys(out))


def random_queries(rng, nq=5, max_holes=4):
    """Per query: the run's grades (None = a hole) and the unretrieved judged grades."""
    G = int(rng.integers(1, 4))
    queries = []
    for _ in range(nq):
        n = int(rng.integers(0, 8))
        run, holes = [], 0
        for _ in range(n):
            if holes < max_holes and rng.random() < 0.45:
                run.append(None)
                holes += 1
            else:
                run.append(float(rng.integers(-1 if rng.random() < 0.1 else 0, G + 1)))
        other = [float(x) for x in rng.integers(0, G + 1, size=int(rng.integers(0, 4)))]
        queries.append((run, other))
    return queries


def build(queries, qids=None, max_grade=None):
    """``queries``: per query (the run's grades, None = a hole; the unretrieved judged grades)."""
    row, grade, judged, jrow, jgrade = [], [], [], [], []
    for q, (run, other) in enumerate(queries):
        for g in run:
            row.append(q)
            grade.append(0.0 if g is None else g)
            judged.append(g is not None)
        for g in [g for g in run if g is not None] + list(other):
            jrow.append(q)
            jgrade.append(g)
    nq = len(queries)
    jrow, jgrade = np.array(jrow, np.int64), np.array(jgrade, dtype=float)
    order = np.lexsort((-jgrade, jrow))
    qids = qids or [f"q{i}" for i in range(nq)]
    rk = Ranking(np.array(row, np.int64), np.array(grade, dtype=float), nq, np.arange(nq), np.array(judged, bool))
    G = max_grade if max_grade is not None else float(jgrade.max()) if len(jgrade) else 0.0
    return rk, Judgements(qids, jrow[order], jgrade[order], G)


def brute(queries, m, max_grade, level=1.0, extra=(), outside=None, cap=None):
    """Per query: min and max of the kernel over every assignment of candidate grades to its holes
    (``extra``: more unretrieved judged grades; ``outside[q]``: that many documents outside query q's
    ranking, each of any candidate grade, 0 included; ``cap[q]``: only the assignments giving at most
    that many of the holes and outside documents a grade above 0)."""
    kernel = FAMILIES[m.family].kernel
    cands = candidate_grades(max_grade)
    lo, hi = [], []
    for q, (run, other) in enumerate(queries):
        holes = [i for i, g in enumerate(run) if g is None]
        combos = list(itertools.product(cands, repeat=len(holes) + (0 if outside is None else int(outside[q]))))
        if cap is not None:
            combos = [c for c in combos if sum(g > 0 for g in c) <= cap[q]]
        row, grade, jrow, jgrade = [], [], [], []
        for a, combo in enumerate(combos):
            full = list(run)
            for i, g in zip(holes, combo):
                full[i] = g
            row += [a] * len(full)
            grade += full
            judged = full + list(other) + list(extra) + list(combo[len(holes):])
            jrow += [a] * len(judged)
            jgrade += judged
        A = len(combos)
        rk = Ranking(np.array(row, np.int64), np.array(grade, dtype=float), A, np.arange(A),
                     np.ones(len(row), bool))
        jrow, jgrade = np.array(jrow, np.int64), np.array(jgrade, dtype=float)
        order = np.lexsort((-jgrade, jrow))
        v = kernel(rk, Judgements([f"a{i}" for i in range(A)], jrow[order], jgrade[order], max_grade), m, level)
        lo.append(v.min())
        hi.append(v.max())
    return np.array(lo), np.array(hi)


MEASURES = hole_measures()


def test_the_families_with_hole_bounds():
    fams = {m.family for m in MEASURES}
    assert {"nDCG", "DCG", "AP", "GMAP", "SP", "P", "R", "RR", "Rprec", "RBP", "Success"} <= fams


@pytest.mark.parametrize("m", MEASURES, ids=str)
def test_bounds_equal_brute_force(m):
    rng = np.random.default_rng(20260 + len(str(m)))
    for trial in range(6):
        queries = random_queries(rng)
        rk, J = build(queries)
        for level in (1.0, 2.0):
            lb, ub = hole_bounds(rk, J, m, level)
            blo, bhi = brute(queries, m, J.max_grade, level)
            np.testing.assert_allclose(lb, blo, rtol=1e-12, atol=1e-13, err_msg=f"LB {m} trial {trial} l={level}")
            np.testing.assert_allclose(ub, bhi, rtol=1e-12, atol=1e-13, err_msg=f"UB {m} trial {trial} l={level}")
            plain = FAMILIES[m.family].kernel(rk, J, m, level)
            assert np.all(lb <= plain + 1e-12) and np.all(plain <= ub + 1e-12)


def test_many_holes_and_graded_levels():
    """Longer rankings with many holes and four gain levels: the Dinkelbach search and the count
    searches against brute force (up to 4^6 assignments a query)."""
    rng = np.random.default_rng(7)
    ms = [registry.parse(x).measure for x in ("nDCG", "nDCG@4", "nDCG(dcg='exp-log2')@3", "AP", "AP@4", "Rprec",
                                              "nDCG(discount='zipf')", "nDCG(gains={0:0,1:5,2:1,3:2})@5")]
    for _ in range(3):
        queries = []
        for _ in range(4):
            run = [None if rng.random() < 0.6 else float(rng.integers(0, 4)) for _ in range(9)]
            while sum(g is None for g in run) > 6:
                run[run.index(None)] = 0.0
            queries.append((run, [3.0] + [float(x) for x in rng.integers(0, 4, size=2)]))
        rk, J = build(queries)
        for m in ms:
            lb, ub = hole_bounds(rk, J, m, 1.0)
            blo, bhi = brute(queries, m, J.max_grade)
            np.testing.assert_allclose(lb, blo, rtol=1e-12, atol=1e-13, err_msg=f"LB {m}")
            np.testing.assert_allclose(ub, bhi, rtol=1e-12, atol=1e-13, err_msg=f"UB {m}")


def test_interior_grade_is_the_maximum():
    """The largest nDCG@3 may need a hole at a middle grade: ranks 1-2 judged 3 and 2, rank 3 a hole,
    another judged 2: the hole at 2 gives 1.0, at 3 less (IDCG grows faster than DCG)."""
    queries = [([3.0, 2.0, None], [2.0])]
    rk, J = build(queries)
    m = registry.parse("nDCG@3").measure
    lb, ub = hole_bounds(rk, J, m, 1.0)
    assert ub[0] == pytest.approx(1.0, abs=1e-15)
    rk3, J3 = assign(rk, J, [np.full(3, 3.0)])
    assert FAMILIES["nDCG"].kernel(rk3, J3, m, 1.0)[0] < 0.99


def test_hand_computed_ap():
    """Run: rel, hole, nonrel, hole; one unretrieved relevant.  R_J = 2.  Max: hole 1 relevant only
    ((1 + 2/2)/3 = 0.667; both: (1 + 2/2 + 3/4)/4 = 0.6875 is larger).  Min: both holes
    non-relevant is 1/2, hole 2 alone relevant (1 + 2/4)/3 = 0.5: ties; LB = 0.5."""
    queries = [([1.0, None, 0.0, None], [1.0])]
    rk, J = build(queries)
    lb, ub = hole_bounds(rk, J, registry.parse("AP").measure, 1.0)
    assert ub[0] == pytest.approx((1 + 1 + 0.75) / 4, abs=1e-15)
    assert lb[0] == pytest.approx(0.5, abs=1e-15)


def test_open_bound():
    """--holes open: the closed LB with any number of unretrieved documents at the largest grade; for
    nDCG@k k such documents attain it, for measures divided by R it is 0, the others keep theirs."""
    rng = np.random.default_rng(3)
    for _ in range(4):
        queries = random_queries(rng)
        rk, J = build(queries)
        for m in MEASURES:
            lb, ub = hole_bounds(rk, J, m, 1.0)
            olb, oub = hole_bounds(rk, J, m, 1.0, mode="open")
            if m.family == "Rprec":  # an outside relevant document can raise Rprec (test_holes_worlds)
                assert np.all(oub >= ub)
            else:
                np.testing.assert_array_equal(oub, ub)
            assert np.all(olb <= lb + 1e-15)
            if m.family in ("nDCG",) and m.cutoff is not None:
                blo, _ = brute(queries, m, J.max_grade, extra=[J.max_grade] * m.cutoff)
                np.testing.assert_allclose(olb, blo, rtol=1e-12, atol=1e-13)
            elif FAMILIES[m.family].holes_outside is not None and m.get("norm") != "k":  # divided by R, or nDCG without a cutoff
                assert np.all(olb == 0)
            else:
                np.testing.assert_array_equal(olb, lb)


def test_candidate_grades():
    assert candidate_grades(3).tolist() == [0, 1, 2, 3]
    assert candidate_grades(2.5).tolist() == [0, 1, 2, 2.5]
    assert candidate_grades(-1).tolist() == [0]


def test_no_holes_no_width():
    queries = [([1.0, 0.0, 2.0], [1.0]), ([], [1.0])]
    rk, J = build(queries)
    for m in MEASURES:
        lb, ub = hole_bounds(rk, J, m, 1.0)
        plain = FAMILIES[m.family].kernel(rk, J, m, 1.0)
        np.testing.assert_array_equal(lb, plain)
        np.testing.assert_array_equal(ub, plain)


def test_measures_without_hole_bounds_say_why():
    from ulnorm_eval.pipeline.evaluate import resolve_metrics

    for name in ("LB(Bpref)", "UB(ERR@10)", "LB(nDCG(discount=[1,0.2,0.5]))", "UB(nDCG(gains={1:-1}))"):
        with pytest.raises(registry.UnknownMeasure, match="no hole bounds: .*"):
            resolve_metrics([name], [])
    # --holes adds LB/UB where they exist, nothing elsewhere
    got = [str(m) for m in resolve_metrics(["AP", "Bpref"], ["LB", "UB"])]
    assert got == ["AP", "LB(AP)", "UB(AP)", "Bpref"]
    for fam in FAMILIES.values():
        if fam.holes is None:
            assert holes_reason(registry.Measure(family=fam.name)) is not None


def test_cli_holes(tmp_path):
    qrels = tmp_path / "qrels"
    run = tmp_path / "run"
    qrels.write_text("q1 0 a 1\nq1 0 b 0\nq1 0 z 1\n")
    run.write_text("q1 Q0 a 1 3 t\nq1 Q0 x 2 2 t\nq1 Q0 b 3 1 t\n")
    out = command(["--holes", "closed", "-m", "AP", "-m", "Bpref", "-f", "tsv",
                   str(qrels), str(run)])
    assert out.returncode == 0, out.stderr
    header, *rows = out.stdout.splitlines()
    cols = header.split("\t")
    assert "LB(AP)" in cols and "UB(AP)" in cols and "LB(Bpref)" not in cols
    allrow = dict(zip(cols, [r for r in rows if "\tall\t" in r][0].split("\t")))
    # R_J = 2; x relevant: (1 + 2/2)/3; x not: 1/2
    assert float(allrow["UB(AP)"]) == pytest.approx(2 / 3)
    assert float(allrow["LB(AP)"]) == pytest.approx(0.5)
    assert "Bpref" in out.stderr and "hole bounds" in out.stderr
    out = command(["--holes", "open", "-m", "AP", "-f", "tsv",
                   str(qrels), str(run)])
    assert out.returncode == 0, out.stderr
    cols = out.stdout.splitlines()[0].split("\t")
    allrow = dict(zip(cols, [r for r in out.stdout.splitlines() if "\tall\t" in r][0].split("\t")))
    assert float(allrow["LB(AP)"]) == 0.0 and float(allrow["UB(AP)"]) == pytest.approx(2 / 3)


# --------------------------------------------------------------------------- condensed lists (CL)

DL = (str(ROOT / "examples/qrels/dlhard-passage.qrels.txt"), str(ROOT / "examples/runs/bm25.run.gz"))


def test_condensed_equals_judged_only_evaluation():
    """CL(M) = M evaluated with -J (trec_eval's judged-only ranking), for native and ir_measures
    measures, beside the plain M."""
    from ulnorm_eval import evaluate

    names = ["nDCG@10", "AP", "P@10", "RBP(p=0.8)", "Rprec", "Bpref", "NumRet", "infAP", "ERR@10"]
    a = evaluate(DL[0], DL[1], [f"CL({n})" for n in names] + names, [])
    b = evaluate(DL[0], DL[1], names, [], judged_only=True)
    ra, rb = a.runs[0], b.runs[0]
    for n in names:
        cl = next(m for m in a.metrics if str(m) == f"CL({n})")
        plain = next(m for m in b.metrics if str(m) == n)
        np.testing.assert_array_equal(ra.values[cl], rb.values[plain], err_msg=n)
    plain_a = next(m for m in a.metrics if str(m) == "nDCG@10")
    assert not np.array_equal(ra.values[plain_a], rb.values[plain])  # the plain value is not condensed


def test_condensed_hand_computed():
    """Ranking rel, hole, nonrel, hole, rel; R = 2: AP = (1 + 2/5)/2 = 0.7, condensed (rel, nonrel, rel):
    (1 + 2/3)/2."""
    queries = [([1.0, None, 0.0, None, 1.0], [])]
    rk, J = build(queries)
    from ulnorm_eval.core.measures.trec import judged_only

    m = registry.parse("AP").measure
    assert FAMILIES["AP"].kernel(rk, J, m, 1.0)[0] == pytest.approx(0.7)
    assert FAMILIES["AP"].kernel(judged_only(rk), J, m, 1.0)[0] == pytest.approx((1 + 2 / 3) / 2)


def test_cli_condensed(tmp_path):
    out = command(["-m", "AP", "-m", "CL(AP)", "--norm", "none", "-f", "tsv", *DL])
    assert out.returncode == 0, out.stderr
    out_j = command(["-J", "-m", "AP", "--norm", "none", "-f", "tsv", *DL])
    rows = [r.split("\t") for r in out.stdout.splitlines()]
    rows_j = [r.split("\t") for r in out_j.stdout.splitlines()]
    i, j = rows[0].index("CL(AP)"), rows_j[0].index("AP")
    assert [r[i] for r in rows[1:]] == [r[j] for r in rows_j[1:]]


# --------------------------------------------------------------------------- the gate under --holes

def _gate(tmp_path, *args):
    qrels = tmp_path / "qrels"
    run = tmp_path / "run"
    base = tmp_path / "base"
    qrels.write_text("q1 0 a 1\nq1 0 b 0\nq1 0 z 1\n")
    run.write_text("q1 Q0 a 1 3 t\nq1 Q0 b 2 2 t\nq1 Q0 x 3 1 t\n")  # AP@2 = 1/2; x relevant: 1/3
    base.write_text("q1 Q0 a 1 3 b\nq1 Q0 b 2 2 b\nq1 Q0 z 3 1 b\n")  # AP@2 = 1/2, no holes
    args = [str(a).replace("BASE", str(base)) for a in args]
    return command(["-m", "AP@2", "--norm", "none", "-f", "tsv", *args, str(qrels), str(run)])


def test_gate_holes_warn_and_fail(tmp_path):
    # passes (0.5 >= 0.4) but LB(AP@2) = 1/3 < 0.4: reported under warn, failed under fail
    out = _gate(tmp_path, "--fail-below", "AP@2=0.4", "--holes", "closed,warn")
    assert out.returncode == 0, out.stderr
    assert ("could flip (mean within [0.3333, 0.5000] whatever grades the unjudged documents the run retrieved "
            "take, documents no run retrieved being non-relevant)") in out.stderr
    out = _gate(tmp_path, "--fail-below", "AP@2=0.4", "--holes", "closed,fail")
    assert out.returncode == 1 and "failed by --holes fail" in out.stderr
    # 0.3 is below LB: the decision holds whatever the holes are
    out = _gate(tmp_path, "--fail-below", "AP@2=0.3", "--holes", "closed,fail")
    assert out.returncode == 0 and "holds whatever grades the unjudged documents the run retrieved take" in out.stderr
    # without --holes nothing is said about holes
    out = _gate(tmp_path, "--fail-below", "AP@2=0.4")
    assert out.returncode == 0 and "holes" not in out.stderr
    # a variant has no hole bounds: said, never guessed
    out = _gate(tmp_path, "--fail-below", "UL2(AP@2)=-5", "--holes", "fail")
    assert out.returncode == 0 and "no hole bounds for this metric" in out.stderr


def test_gate_holes_baseline(tmp_path):
    # the run's hole x is the baseline's too (its R grows if x is relevant): each run's AP@2 in [1/3, 1/2],
    # difference 0 within [1/3 - 1/2, 1/2 - 1/3]: with --max-drop 0.1 the limit -0.1 lies inside: could flip
    out = _gate(tmp_path, "--baseline", "BASE", "--max-drop", "0.1", "--holes", "closed,fail")
    assert out.returncode == 1 and "difference within [-0.1667, +0.1667] whatever grades the unjudged documents " \
        "any of the 2 runs retrieved take (one grade per document, shared by the runs)" in out.stderr
    out = _gate(tmp_path, "--baseline", "BASE", "--max-drop", "0.2", "--holes", "closed,fail")
    assert out.returncode == 0 and "holds whatever" in out.stderr
    # the default world (open=est) lets documents no run retrieved be relevant: the drop could then pass 0.2
    out = _gate(tmp_path, "--baseline", "BASE", "--max-drop", "0.2", "--holes", "fail")
    assert out.returncode == 1 and "query's estimated ceiling" in out.stderr, out.stderr


def test_holes_option_values(tmp_path):
    out = _gate(tmp_path, "--holes", "open,warn")
    assert out.returncode == 0 and "LB(AP@2)" in out.stdout
    out = _gate(tmp_path, "--holes", "open,closed")
    assert out.returncode == 2 and "open=est, closed, open, open=N or open=P%" in out.stderr
    out = _gate(tmp_path, "--holes", "opne")  # a misspelt value: the grammar's error, not a missing file
    assert out.returncode == 2 and "closed, open, open=N" in out.stderr
    out = _gate(tmp_path, "--holes", "open=2,warn")
    assert out.returncode == 0 and "LB(AP@2)" in out.stdout
    out = _gate(tmp_path, "--holes", "open=-2")
    assert out.returncode == 2 and "N a whole number" in out.stderr


def test_holes_before_the_qrels_path(tmp_path):
    """--holes directly before QRELS takes no value: QRELS stays the qrels (closed, warn)."""
    qrels = tmp_path / "qrels"
    run = tmp_path / "run"
    qrels.write_text("q1 0 a 1\nq1 0 b 0\n")
    run.write_text("q1 Q0 a 1 3 t\nq1 Q0 x 2 2 t\n")  # P@2 = 1/2, x a hole: [1/2, 1]
    for args in (["--holes", str(qrels), str(run)], [str(qrels), str(run), "--holes"],
                 ["--holes", "-m", "P@2", str(qrels), str(run)], ["--holes", "closed", str(qrels), str(run)]):
        out = command(["--norm", "none", "-m", "P@2", *args])
        assert out.returncode == 0, (args, out.stderr)
        assert out.stdout.splitlines()[:3] == ["P@2\tall\t0.5000", "LB(P@2)\tall\t0.5000", "UB(P@2)\tall\t1.0000"], args


def test_table_shows_value_and_interval():
    """The table prints value [LB, UB] in one column and the caption says how far holes move a mean."""
    from ulnorm_eval import evaluate
    from ulnorm_eval.render.table import format_table

    res = evaluate(DL[0], DL[1], ["nDCG@10", "Bpref"], ["LB", "UB"])
    rr = res.runs[0]
    lb, ub = (next(m for m in res.metrics if str(m) == f"{v}(nDCG@10)") for v in ("LB", "UB"))
    text = format_table(res, width=200)
    assert f"[{rr.mean[lb]:.4f}, {rr.mean[ub]:.4f}]" in text and "[LB, UB]" in text
    assert f"holes matter: the unjudged documents could move a mean by up to {rr.mean[ub] - rr.mean[lb]:.4f}" in text
    for width in (40, 80):  # narrower layouts keep the numbers
        narrow = format_table(res, width=width)
        assert f"{rr.mean[lb]:.4f}" in narrow and f"{rr.mean[ub]:.4f}" in narrow


def test_table_shows_the_unjudged_share_of_the_cutoff(tmp_path):
    """With --holes the table prints after [LB, UB] the share of the measure's top k that is unjudged
    (Unjudged@k, mean over queries), and the caption its largest; AP (no cutoff) gets none."""
    qrels = tmp_path / "qrels"
    run = tmp_path / "run"
    qrels.write_text("q1 0 a 1\nq1 0 b 0\nq2 0 c 1\n")
    # q1: a, x (hole) -> P@2 = 1/2, 1 of 2 unjudged; q2: c, d (hole), e (hole) -> P@2 = 1/2, 1 of 2
    # unjudged in the top 2; P@4 has 1/4 and 2/4 of its top 4 unjudged (over k = 4): mean 37.5% -> 38%
    run.write_text("q1 Q0 a 1 3 t\nq1 Q0 x 2 2 t\nq2 Q0 c 1 3 t\nq2 Q0 d 2 2 t\nq2 Q0 e 3 1 t\n")
    out = command(["--holes", "-f", "table", "--norm", "none", "-m", "P@2", "-m", "P@4",
                   "-m", "AP", str(qrels), str(run)],
                  env={"COLUMNS": "250"})
    assert out.returncode == 0, out.stderr
    lines = {ln.split()[0]: ln for ln in out.stdout.splitlines() if ln.strip()}
    assert lines["P@2"].rstrip().endswith("[0.5000, 1.0000] 50%")
    assert lines["P@4"].rstrip().endswith("[0.2500, 0.6250] 38%")
    assert lines["AP"].rstrip().endswith("]")
    assert "up to 50% (run P@2)" in out.stdout
    # other formats: no extra column (Unjudged@k is evaluated for the table only)
    tsv = command(["--holes", "-f", "trec", "--norm", "none", "-m", "P@2", str(qrels), str(run)])
    assert [ln.split("\t")[0] for ln in tsv.stdout.splitlines()] == ["P@2", "LB(P@2)", "UB(P@2)"]
