"""`ulnorm-eval summ`: the plain layout, output formats, the gate, and one-line errors with exit 2."""
from __future__ import annotations

import itertools
import json

import pytest

import rouge_score  # noqa: F401,E402 - the test extra installs it

from conftest import SUMM_DOCS, SUMM_SYSTEM_A, invoke  # noqa: E402
from ulnorm_eval.core import text_measures as tm  # noqa: E402


def run(*args):
    return invoke("summ", *args)


@pytest.fixture
def plain(tmp_path):
    docs = tmp_path / "docs.tsv"
    docs.write_text(SUMM_DOCS)
    a = tmp_path / "sysA.tsv"
    a.write_text(SUMM_SYSTEM_A)
    b = tmp_path / "sysB.jsonl"
    b.write_text(json.dumps({"id": "d1", "summary": "a dog"}) + "\n" + json.dumps({"id": "d2", "summary": "town"}) + "\n")
    return str(docs), str(a), str(b)


def test_plain_layout_values_and_names(plain):
    r = run("-f", "tsv", "-m", "ROUGE-1", "--norm", "none", "--combine", "mean", *plain)
    assert r.exit_code == 0, r.output
    lines = [x.split("\t") for x in r.output.strip().split("\n")]
    assert lines[0] == ["run", "query", "ROUGE-1"]
    rows = {(x[0], x[1]): float(x[2]) for x in lines[1:]}
    assert set(rows) == {("sysA", "d1"), ("sysA", "d2"), ("sysA", "all"), ("sysB", "d1"), ("sysB", "d2"),
                         ("sysB", "all")}
    # sysA d1: "the cat sat on the mat" vs "the cat sat" (P 3/6, R 1, F 2/3) and "a cat on a mat" (3/6, 3/5)
    f2 = 2 * (3 / 6) * (3 / 5) / (3 / 6 + 3 / 5)
    assert rows[("sysA", "d1")] == pytest.approx((2 / 3 + f2) / 2)
    # sysB d1: "a dog" shares only "a" with "a cat on a mat" (P 1/2, R 1/5), nothing with "the cat sat"
    assert rows[("sysB", "d1")] == pytest.approx((0 + 2 * 0.5 * 0.2 / 0.7) / 2)


def test_exact_e_and_variants_by_hand(plain):
    """Pooled ROUGE-1 F = 2 sum_r M_r / (n L + sum_r m_r) (M_r: clipped unigram overlap with reference r),
    and E from the source's unigram model (docs/summarisation.md), worked by hand.

    d2: source "storms flooded the town" (p = 1/4 each), refs "storms hit the town" (4 tokens) and
    "town flooded" (2), summary "storms flooded town" (L = 3): M = 2 + 2, A = 8/12 = 2/3.  Each
    reference word the source has (storms, the, town; town, flooded) is drawn at least once with
    P = 1 - (3/4)^3 = 37/64: E[sum M] = 5 * 37/64 and E = 2 E[sum M] / 12 = 185/384.
    d1: source "the cat sat on the mat today" (p(the) = 2/7, else 1/7), refs "the cat sat" and
    "a cat on a mat", summary of 6 tokens: M = 3 + 3, A = 12/20 = 3/5; E[sum M] = (1 - (5/7)^6) +
    5 (1 - (6/7)^6) ("a" is not in the source), E = 2 E[sum M] / 20.
    """
    r = run("-f", "jsonl", "-m", "ROUGE-1", "--norm", "e,iub,ue1,ue2,eb,em", "--combine", "pooled", "--length",
            "candidate", plain[0], plain[1])
    assert r.exit_code == 0, r.output
    vals = {(o["query"], o["measure"]): o["value"] for o in map(json.loads, r.output.strip().split("\n"))}
    e1 = ((1 - (5 / 7) ** 6) + 5 * (1 - (6 / 7) ** 6)) / 10
    for q, A, E in (("d2", 2 / 3, 185 / 384), ("d1", 3 / 5, e1)):
        assert vals[(q, "ROUGE-1")] == pytest.approx(A, rel=1e-12)
        assert vals[(q, "E(ROUGE-1)")] == pytest.approx(E, rel=1e-12)
        assert vals[(q, "IUB(ROUGE-1)")] == 1.0
        # UE1 = (A/I)(A/(A+E)), UE2 = (A-E)/(I-E) for A >= E, EB = A/E, EM = (A-E)/(I-E), with I = 1
        assert vals[(q, "UE1(ROUGE-1)")] == pytest.approx(A * A / (A + E), rel=1e-12)
        assert vals[(q, "UE2(ROUGE-1)")] == pytest.approx((A - E) / (1 - E), rel=1e-12)
        assert vals[(q, "EB(ROUGE-1)")] == pytest.approx(A / E, rel=1e-12)
        assert vals[(q, "EM(ROUGE-1)")] == pytest.approx((A - E) / (1 - E), rel=1e-12)
    assert vals[("d2", "E(ROUGE-1)")] == pytest.approx(185 / 384, rel=1e-12)  # 0.48177...
    assert vals[("d2", "UE1(ROUGE-1)")] == pytest.approx(512 / 1323, rel=1e-12)
    assert vals[("d2", "UE2(ROUGE-1)")] == pytest.approx(71 / 199, rel=1e-12)
    assert vals[("d2", "EB(ROUGE-1)")] == pytest.approx(256 / 185, rel=1e-12)
    # the same E by enumerating all 4^3 summaries of d2's source (each with probability 1/64)
    src, refs = "storms flooded the town".split(), ["storms hit the town".split(), ["town", "flooded"]]
    total = 0.0
    for seq in itertools.product(src, repeat=3):
        M = sum(min(seq.count(w), ref.count(w)) for ref in refs for w in set(ref))
        total += 2 * M / (2 * 3 + 6) / 64
    assert total == pytest.approx(185 / 384, rel=1e-12)
    # the default, --length reference: E of the document, the same for every system's summary.  d2: each
    # reference r scored against a random summary of its own length m_r: P(a word drawn) = 1 - (3/4)^m_r,
    # E[M_1] = 3 (1 - (3/4)^4) = 525/256 (storms, the, town), E[M_2] = 2 (1 - (3/4)^2) = 224/256;
    # pooled F = 2 (E[M_1] + E[M_2]) / (sum L_r + sum m_r) = 2 * 749/256 / 12 = 749/1536
    r2 = run("-f", "jsonl", "-m", "E(ROUGE-1)", "--norm", "none", "--combine", "pooled", plain[0], plain[1])
    by_doc = {}
    for o in map(json.loads, r2.output.strip().split("\n")):
        if o["query"] != "all":
            by_doc.setdefault(o["query"], set()).add(o["value"])
    assert all(len(v) == 1 for v in by_doc.values())
    assert next(iter(by_doc["d2"])) == pytest.approx(749 / 1536, rel=1e-12)


def test_oracle_upper_bound_option(plain):
    r = run("-f", "jsonl", "-m", "IUB(ROUGE-1)", "--upper", "oracle", "--combine", "max", plain[0], plain[1])
    assert r.exit_code == 0, r.output
    vals = {o["query"]: o["value"] for o in map(json.loads, r.output.strip().split("\n"))}
    doc = tm.encode_document("storms flooded the town".split(), ["storms hit the town".split(), ["town", "flooded"]])
    assert vals["d2"] == pytest.approx(tm.oracle_rouge1(doc, 3, "max")[2])
    assert vals["d2"] < 1


def test_monte_carlo_e_reports_its_standard_error(plain):
    r = run("-f", "jsonl", "-m", "E(ROUGE-L)", "--draws", "50", plain[0], plain[1])
    assert r.exit_code == 0, r.output
    objs = [json.loads(x) for x in r.output.strip().split("\n")]
    assert {o["measure"] for o in objs} == {"E(ROUGE-L)", "SE(E(ROUGE-L))"}
    assert all("stderr" in o for o in objs if o["measure"] == "E(ROUGE-L)")


def test_fail_below_gate(plain):
    r = run("-m", "ROUGE-1", "--norm", "none", "--fail-below", "ROUGE-1=0.5", *plain)
    assert r.exit_code == 1
    assert "FAIL sysB" in r.stderr and "FAIL sysA" not in r.stderr


@pytest.mark.parametrize("args,needle", [
    (["-m", "ROUGE-3"], "unknown summarisation measure"),
    (["--norm", "xx"], "unknown variant"),
    (["--systems", "nope"], "no system nope"),
])
def test_usage_errors_are_one_line_exit_2(plain, args, needle):
    r = run(*args, *plain)
    assert r.exit_code == 2
    assert r.stderr.count("\n") == 1 and needle in r.stderr and r.stdout == ""


def test_input_errors_name_file_and_line(tmp_path, plain):
    bad = tmp_path / "bad.tsv"
    bad.write_text("d1\tthe cat\nd9\tunknown doc\n")
    r = run(plain[0], str(bad))
    assert r.exit_code == 2 and r.stderr == f"ulnorm-eval: {bad}:2: unknown document id d9\n" and r.stdout == ""
    r = run(str(tmp_path / "missing.tsv"), plain[1])
    assert r.exit_code == 2 and r.stderr.strip().endswith("missing.tsv: no such file")
    r = run(plain[0])
    assert r.exit_code == 2 and "plain layout needs" in r.stderr and r.stderr.count("\n") == 1
    short = tmp_path / "short.tsv"
    short.write_text("d1\tonly a source\n")
    r = run(str(short), plain[1])
    assert r.exit_code == 2 and f"{short}:1: expected id, source and at least one reference" in r.stderr


def test_correlate_without_ratings_is_an_error(plain):
    r = run("--correlate", *plain)
    assert r.exit_code == 2 and "no human ratings" in r.stderr


@pytest.fixture
def summeval_like(tmp_path):
    """A SummEval-format file: 3 documents x 4 systems with expert ratings (relevance varies)."""
    import random

    rnd = random.Random(3)
    words = "storm town road river bridge mayor rain flood closed people water night".split()
    lines = []
    for d in range(3):
        src = " ".join(rnd.choice(words) for _ in range(30))
        refs = [" ".join(rnd.choice(words) for _ in range(8)) for _ in range(2)]
        for s in range(4):
            summ = " ".join(rnd.choice(words) for _ in range(6 + s))
            ann = [{"coherence": rnd.randint(1, 5), "consistency": rnd.randint(1, 5), "fluency": rnd.randint(1, 5),
                    "relevance": rnd.randint(1, 5)} for _ in range(3)]
            lines.append(json.dumps({"id": f"doc{d}", "decoded": summ, "expert_annotations": ann,
                                     "turker_annotations": ann[:1], "references": refs, "model_id": f"M{s}",
                                     "filepath": "x", "text": src}))
    p = tmp_path / "se.jsonl"
    p.write_text("\n".join(lines) + "\n")
    return str(p), lines


def test_correlate_matches_scipy_on_our_own_values(summeval_like, tmp_path):
    import numpy as np
    from scipy import stats

    path, lines = summeval_like
    r = run("-f", "tsv", "-m", "ROUGE-1", "--norm", "ue2", "--combine", "mean", path)
    assert r.exit_code == 0, r.output
    rows = [x.split("\t") for x in r.output.strip().split("\n")[1:]]
    a = {(x[0], x[1]): float(x[2]) for x in rows if x[1] != "all"}
    objs = [json.loads(x) for x in lines]
    rel = {(o["model_id"], o["id"]): np.mean([e["relevance"] for e in o["expert_annotations"]]) for o in objs}
    systems, docs = ["M0", "M1", "M2", "M3"], ["doc0", "doc1", "doc2"]
    sys_a = [np.mean([a[(s, d)] for d in docs]) for s in systems]
    sys_h = [np.mean([rel[(s, d)] for d in docs]) for s in systems]
    want_sys = stats.kendalltau(sys_a, sys_h).statistic
    per_doc = [stats.kendalltau([a[(s, d)] for s in systems], [rel[(s, d)] for s in systems]).statistic for d in docs]
    want_sum = np.nanmean(per_doc)
    png = tmp_path / "c.png"
    r = run("--correlate", "-f", "tsv", "-m", "ROUGE-1", "--norm", "ue2", "--combine", "mean", "--plot", str(png), path)
    assert r.exit_code == 0, r.output
    got = {(x[0], x[1], x[2], x[3]): x for x in (l.split("\t") for l in r.output.strip().split("\n")[1:])}
    assert float(got[("system", "kendall", "ROUGE-1", "relevance")][4]) == pytest.approx(want_sys)
    assert float(got[("summary", "kendall", "ROUGE-1", "relevance")][4]) == pytest.approx(want_sum)
    checked = 0
    for dim in ("coherence", "consistency", "fluency", "relevance"):
        u = got[("system", "kendall", "UE2(ROUGE-1)", dim)]
        plain = float(got[("system", "kendall", "ROUGE-1", dim)][4])
        if plain == 0:
            assert u[5] == "nan"  # PAI (Feng 2023 eq. 8.1) is undefined over a zero correlation
        else:
            assert float(u[5]) == pytest.approx((float(u[4]) - plain) / abs(plain) * 100)
            checked += 1
    assert checked
    assert png.stat().st_size > 1000
    r = run("--correlate", "--ratings", "crowd", "-m", "ROUGE-1", "--norm", "none", path)
    assert r.exit_code == 0 and "crowd ratings, 3 documents, 4 systems" in r.output
    # -f table: a terminal table, aligned, no Markdown pipes; its numbers are the tsv's
    t = run("--correlate", "-f", "table", "-m", "ROUGE-1", "--norm", "ue2", "--combine", "mean", path).output
    assert "|" not in t
    lines = t.splitlines()
    at = lines.index(next(x for x in lines if x.startswith("kendall at system level")))
    assert lines[at + 1].split() == ["metric", "Coherence", "Consistency", "Fluency", "Relevance"]
    assert set(lines[at + 2]) == {"-"}
    import re

    row = re.split(r"\s{2,}", lines[at + 3].strip())  # cells: the value, then its bootstrap interval
    want = f"{float(got[('system', 'kendall', 'ROUGE-1', 'relevance')][4]):.3f}"
    assert row[0] == "ROUGE-1" and row[4].split()[0] == want and row[4].split()[1].startswith("[")


def test_table_format_prints_every_cell(plain):
    r = run("-f", "table", "-q", "-m", "ROUGE-1", "--norm", "e,ue2", "--combine", "mean", plain[0], plain[1])
    assert r.exit_code == 0, r.output
    lines = r.output.split("\n")
    assert lines[0].split() == ["system", "document", "measure", "value", "E", "UE2"]
    row = {x.split()[1]: x.split() for x in lines[2:5]}
    assert {x.split()[0] for x in lines[2:5]} == {"sysA"}
    t = run("-f", "tsv", "-m", "ROUGE-1", "--norm", "e,ue2", "--combine", "mean", plain[0], plain[1]).output
    tsv = {x.split("\t")[1]: x.split("\t") for x in t.strip().split("\n")[1:]}
    for q in ("d1", "d2", "all"):
        assert row[q][3:] == [f"{float(v):.4f}" for v in tsv[q][2:]]


def test_table_format_is_one_table_with_systems_as_rows_and_a_legend(plain):
    """Every system in one table (a row per system and measure), the footer once, and one line per column
    shown (the defaults, and SE for the Monte Carlo E of ROUGE-2 and ROUGE-L), nothing about others."""
    r = run("-f", "table", "--combine", "mean", *plain)
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert lines[0].split() == ["system", "measure", "value", "E", "IUB", "UE1", "UE2", "SE"]  # SE: Monte Carlo E
    assert [x.split()[:2] for x in lines[2:8]] == [[s, m] for s in ("sysA", "sysB")
                                                   for m in ("ROUGE-1", "ROUGE-2", "ROUGE-L")]
    assert lines[8] == ("2 systems, 2 documents; without a summary: none; 0 undefined cases; 'all' rows: the mean "
                        "over the documents, of every measure and variant")
    assert [x.split(":")[0] for x in lines[9:]] == ["value", "E", "IUB", "UE1", "UE2", "SE"]
    assert r.output.count("documents;") == 1


def test_compare_summarisation_systems(plain):
    """summ --compare ranks systems and tests pairs exactly as compare does for runs: the means are
    summ's means of per-document values (its 'all' rows: compare, as for runs, averages the values its
    tests pair), the paired t-test's p-value is scipy's on the per-document scores."""
    from scipy import stats as sst

    per = run("-f", "tsv", "-q", "-m", "ROUGE-1", "--norm", "ue2", *plain)
    assert per.exit_code == 0, per.output
    rows = [x.split("\t") for x in per.output.strip().split("\n")[1:]]
    val = {(r[0], r[1]): (float(r[2]), float(r[3])) for r in rows}
    r = run("--compare", "-f", "tsv", "-m", "ROUGE-1", "--norm", "ue2", *plain)
    assert r.exit_code == 0, r.output
    # one table per --table choice, each with its own header, separated by a blank line (docs/comparing.md)
    blocks = [[x.split("\t") for x in block.split("\n")] for block in r.stdout.strip().split("\n\n")]
    assert len(blocks) == 3 and all(len({len(x) for x in block}) == 1 for block in blocks)

    def table(first, want):
        (cols, *rows), = [block for block in blocks if block[0][:len(first)] == first]
        return [[x[cols.index(c)] for c in want] for x in rows]

    sysrows = table(["run", "metric", "mean"], ["run", "metric", "mean"])
    means = {(x[0], x[1]): float(x[2]) for x in sysrows}
    assert means[("sysA", "ROUGE-1")] == pytest.approx(val[("sysA", "all")][0], abs=1e-12)
    assert means[("sysB", "UE2(ROUGE-1)")] == pytest.approx(val[("sysB", "all")][1], abs=1e-12)
    assert {x[1] for x in sysrows} == {"ROUGE-1", "UE2(ROUGE-1)"}  # no SE or E rows compared
    p = {m: float(v) for m, v in table(["metric", "run_a"], ["metric", "p"])}
    a = [val[("sysA", d)][0] for d in ("d1", "d2")]
    b = [val[("sysB", d)][0] for d in ("d1", "d2")]
    assert p["ROUGE-1"] == pytest.approx(sst.ttest_rel(a, b).pvalue, rel=1e-9)
    bad = run("--compare", "-f", "trec", "-m", "ROUGE-1", *plain)
    assert bad.exit_code == 2 and bad.stderr.count("\n") == 1


def test_correlate_intervals_and_seed_spread(summeval_like):
    """--bootstrap: the intervals are bootstrap_correlations' on the values the command scored; --mc-repeats:
    the spread is the min and max of the correlations recomputed with seeds --seed .. --seed+R."""
    import numpy as np

    from ulnorm_eval.analysis.human_correlation import bootstrap_correlations

    path, lines = summeval_like
    args = ("--correlate", "-f", "tsv", "-m", "ROUGE-2", "--norm", "ue2", "--length", "candidate", "--seed", "4")
    r = run(*args, "--bootstrap", "80", "--mc-repeats", "2", path)
    assert r.exit_code == 0, r.output
    head, *body = [x.split("\t") for x in r.output.strip().split("\n")]
    assert head == ["level", "correlation", "metric", "dimension", "value", "PAI", "documents", "low", "high",
                    "PAI_low", "PAI_high", "seeds_min", "seeds_max"]
    got = {tuple(x[:4]): x for x in body}
    # the spread: the same command at seeds 4, 5, 6 without repeats
    per_seed = []
    for sd in ("4", "5", "6"):
        rr = run(*args[:-1], sd, "--bootstrap", "0", path)
        per_seed.append({tuple(x.split("\t")[:4]): float(x.split("\t")[4]) for x in rr.output.strip().split("\n")[1:]})
    for key, row in got.items():
        vals = [p[key] for p in per_seed]
        if all(np.isfinite(vals)):
            assert float(row[11]) == min(vals) and float(row[12]) == max(vals)
            assert float(row[4]) == vals[0]
    # the intervals: the scored values (through the library) and the ratings, through bootstrap_correlations
    from ulnorm_eval.inputs.summaries import read_summaries
    from ulnorm_eval.pipeline import summ_eval as se

    d = read_summaries(path)
    res = se.evaluate_summaries(d, se.resolve_text_metrics(["ROUGE-2"], ["ue2"]), se.SummOptions(length="candidate",
                                                                                                  seed=4))
    values = {}
    for m in res.metrics:
        if m.variant in (None, "UE2"):
            values[str(m)] = np.array([[rr.values[m][list(rr.qids).index(q)] for q in d.doc_ids] for rr in res.runs])
    human = {dim: np.array(v, dtype=np.float64) for dim, v in d.ratings["expert"].items()}
    ci = bootstrap_correlations(values, human, base={"UE2(ROUGE-2)": "ROUGE-2"}, reps=80, seed=4)
    for key, (lo, hi, plo, phi) in ci.items():
        row = got[key]
        for text, want in zip(row[7:11], (lo, hi, plo, phi)):
            assert (text == "nan" and not np.isfinite(want)) or float(text) == pytest.approx(want, abs=1e-12), key
    r = run(*args, "--bootstrap", "0", path)
    assert all(x.split("\t")[7] == "nan" for x in r.output.strip().split("\n")[1:])


def test_gate_line_and_summary_md_as_eval(plain, tmp_path):
    """summ --fail-below prints eval's verdict (summary line, then each check with mean, threshold
    and margin) and --summary-md appends eval's Markdown."""
    md = tmp_path / "summary.md"
    r = run("-m", "ROUGE-1", "--norm", "none", "--combine", "mean", "--fail-below", "ROUGE-1=0.5",
            "--summary-md", str(md), *plain)
    assert r.exit_code == 1
    lines = [x for x in r.stderr.splitlines() if "gate" in x or "FAIL" in x or "pass" in x]
    assert lines[0] == "ulnorm-eval: gate FAILED: 1 of 2 checks"
    assert lines[1].startswith("ulnorm-eval:   pass sysA ROUGE-1: mean ") and "threshold 0.5000 (--fail-below)" in lines[1]
    assert lines[2].startswith("ulnorm-eval:   FAIL sysB ROUGE-1: mean ") and "margin -" in lines[2]
    text = md.read_text()
    assert text.startswith("## ulnorm-eval gate: FAILED (1 of 2 checks)")
    assert "| ❌ fail | sysB | ROUGE-1 | --fail-below 0.5 | 0.3381 | 0.5000 | -0.1619 |  |" in text


def test_docs_limit_for_a_quick_look(plain):
    full = run("-f", "tsv", "-q", "-m", "ROUGE-1", "--norm", "none", *plain)
    one = run("-f", "tsv", "-q", "-m", "ROUGE-1", "--norm", "none", "--docs", "1", *plain)
    assert one.exit_code == 0, one.output
    assert "--docs 1: the first 1 of 2 documents only" in one.stderr
    rows = [x.split("\t") for x in one.stdout.strip().split("\n")[1:]]
    assert {r[1] for r in rows} == {"d1", "all"}
    frows = {(r[0], r[1]): r[2] for r in (x.split("\t") for x in full.stdout.strip().split("\n")[1:])}
    assert all(frows[(r[0], "d1")] == r[2] for r in rows)


def test_summeval_systems_in_natural_order():
    from conftest import SHARED

    from ulnorm_eval.inputs.summaries import natural_key, read_summaries

    assert sorted(["M11", "M13", "M1", "M2", "M10", "M0"], key=natural_key) == ["M0", "M1", "M2", "M10", "M11", "M13"]
    data = SHARED / "summeval" / "model_annotations.aligned.paired.jsonl.gz"
    if data.exists():
        assert read_summaries(str(data)).systems == ["M0", "M1", "M2", "M5", "M8", "M9", "M10", "M11", "M12", "M13",
                                                     "M14", "M15", "M17", "M20", "M22", "M23"]


def test_summary_md_of_a_normalised_summ_gate(plain, tmp_path):
    """A gate on UE2(ROUGE-1) writes its Markdown (it was 'internal error: KeyError: UE2': the
    retrieval table's notes on the ranking pool looked UE2 up as a retrieval variant) and exits 1 on a
    failed check; no note about a ranking pool or UL2's 'all' row, which summ does not have."""
    md = tmp_path / "summary.md"
    r = run("-m", "UE2(ROUGE-1)", "--combine", "mean", "--fail-below", "UE2(ROUGE-1)=0.99",
            "--summary-md", str(md), *plain)
    assert r.exit_code == 1, r.stderr
    text = md.read_text()
    assert text.startswith("## ulnorm-eval gate: FAILED (2 of 2 checks)")
    assert "| ❌ fail | sysA | UE2(ROUGE-1) | --fail-below 0.99 |" in text
    assert "--pool" not in text and "'all' row" not in text


def test_normalisations_all_row_is_the_mean_of_per_document_values_as_eval(plain):
    """summ's 'all' row of UE1, UE2, EB, EM follows eval's rule: the mean of the per-document values (Feng
    2023's average).  sysB ('a dog', 'town'): that is not UE2 applied to its means; the table's footer says
    what the row is."""
    args = ("-m", "ROUGE-1", "--norm", "e,iub,ue1,ue2,eb,em", "--combine", "mean", *plain)
    out = run("-f", "jsonl", "-q", *args)
    assert out.exit_code == 0, out.output
    pv = {(o["run"], o["query"], o["measure"]): o["value"] for o in map(json.loads, out.output.split("\n")[:-1])}
    for s in ("sysA", "sysB"):
        for v in ("UE1", "UE2", "EB", "EM"):
            k = f"{v}(ROUGE-1)"
            assert pv[(s, "all", k)] == pytest.approx((pv[(s, "d1", k)] + pv[(s, "d2", k)]) / 2, rel=1e-12)
    A, E, I = (sum(pv[("sysB", d, k)] for d in ("d1", "d2")) / 2 for k in ("ROUGE-1", "E(ROUGE-1)", "IUB(ROUGE-1)"))
    of_means = (A - E) / (I - E) if A >= E else (A - E) / E
    assert pv[("sysB", "all", "UE2(ROUGE-1)")] != pytest.approx(of_means, abs=0.01)
    t = run("-f", "table", *args).output
    assert "'all' rows: the mean over the documents, of every measure and variant" in t
