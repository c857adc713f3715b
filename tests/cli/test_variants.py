"""The variants through the command line, on the bundled DL-HARD qrels and BM25 run.

Expected values are recomputed here from the printed plain values and bounds (the variant formulas)
or from the qrels themselves (pool sizes, relevant counts), not copied from earlier output.
"""
from __future__ import annotations

import itertools
from collections import defaultdict

import numpy as np
import pytest
from click.testing import CliRunner

from conftest import ROOT, cli as conftest_cli
from ulnorm_eval.cli.main import main

EXAMPLES = ROOT / "examples"
QRELS = str(EXAMPLES / "qrels" / "dlhard-passage.qrels.txt")
RUN = str(EXAMPLES / "runs" / "bm25.run.gz")


def cli(*args):
    return conftest_cli("-f", "trec", *args, QRELS, RUN)


def rows(res):
    """{measure: {query: value}} from trec-format stdout."""
    out = defaultdict(dict)
    for line in res.stdout.splitlines():
        name, q, v = line.split("\t")
        out[name.strip()][q] = float(v)
    return out


def names(res):
    return list(dict.fromkeys(line.split("\t")[0] for line in res.stdout.splitlines()))


def qrels_by_query():
    out = defaultdict(list)
    with open(QRELS) as fh:
        for line in fh:
            q, _, _, g = line.split()
            out[q].append(int(g))
    return out


def ul1(a, i, e):
    return (a / i) * (a / (a + e))


def ul2(a, i, e):
    return (a - e) / (i - e) if a >= e else (a - e) / e


def test_default_measures_and_variants():
    res = cli()
    want = []
    for m in ("nDCG@10", "AP", "RBP(p=0.8)"):
        want += [m, f"E({m})", f"EM({m})"]  # one answer per measure: its value, E and EM
    assert names(res) == want
    assert all(line.split("\t")[1] == "all" for line in res.stdout.splitlines())


@pytest.mark.parametrize("measure", ["AP@100", "nDCG@10", "RBP(p=0.8)"])
def test_ul1_ul2_follow_their_formulas_per_query(measure):
    res = cli("-q", "--precision", "17", "-m", measure, "--norm", "e,iub,ul1,ul2")
    assert names(res) == [measure, f"E({measure})", f"IUB({measure})", f"UL1({measure})", f"UL2({measure})"]
    r = rows(res)
    qids = [q for q in r[measure] if q != "all"]
    assert len(qids) == 50
    got1, got2 = [], []
    for q in qids:
        a, e, i = r[measure][q], r[f"E({measure})"][q], r[f"IUB({measure})"][q]
        uninformative = abs(i - e) <= 1e-12 * max(1, abs(i))
        assert r[f"UL1({measure})"][q] == pytest.approx(0.0 if uninformative else ul1(a, i, e), abs=1e-12)
        assert r[f"UL2({measure})"][q] == pytest.approx(0.0 if uninformative else ul2(a, i, e), abs=1e-12)
        got1.append(r[f"UL1({measure})"][q])
        got2.append(r[f"UL2({measure})"][q])
    # the 'all' row: the mean of the per-query values, undefined ones 0 (docs/bounds.md, "Which 'all' row")
    assert r[f"UL2({measure})"]["all"] == pytest.approx(np.mean(got2), abs=1e-12)
    assert r[f"UL1({measure})"]["all"] == pytest.approx(np.mean(got1), abs=1e-12)
    # a wrapped variant alone prints the same number as the --norm form
    alone = rows(cli("-m", f"UL2({measure})", "--precision", "17"))
    assert list(alone) == [f"UL2({measure})"]
    assert alone[f"UL2({measure})"]["all"] == pytest.approx(np.mean(got2), abs=1e-12)


def test_trec_names():
    res = cli("--names", "trec", "-m", "ndcg_cut.10", "-m", "map", "--norm", "ul2,e")
    lines = res.stdout.splitlines()
    # trec_eval's measure order (map before ndcg_cut), each measure followed by its variants
    assert [line.split("\t")[0] for line in lines] == [f"{n:<22s}" for n in (
        "map", "ul2_map", "e_map", "ndcg_cut_10", "ul2_ndcg_cut_10", "e_ndcg_cut_10")]


def test_undefined_skip_and_zero():
    """AP's judged pool (--pool qrels) is uninformative when every judged document is relevant or none
    is (I = E); the 'all' row, the mean of per-query values, leaves them out or counts them 0."""
    pools = qrels_by_query()
    want_undefined = sorted(q for q, g in pools.items() if all(x >= 1 for x in g) or not any(x >= 1 for x in g))
    assert len(want_undefined) > 0
    judged = ("--pool", "qrels")
    skip = cli("-q", "--precision", "17", "-m", "AP", "--norm", "ul2", "--undefined", "skip", *judged)
    zero = cli("-q", "--precision", "17", "-m", "AP", "--norm", "ul2", *judged)
    s, z = rows(skip)["UL2(AP)"], rows(zero)["UL2(AP)"]
    got_undefined = sorted(q for q, v in s.items() if np.isnan(v))
    assert got_undefined == want_undefined
    assert all(z[q] == 0 for q in want_undefined)
    defined = [v for q, v in s.items() if q != "all" and not np.isnan(v)]
    assert s["all"] == pytest.approx(np.mean(defined), abs=1e-12)
    assert z["all"] == pytest.approx(sum(defined) / 50, abs=1e-12)
    n = len(want_undefined)
    assert (f"undefined values: UL2 of AP for {n} queries (left out per query and of the 'all' row: --undefined skip)"
            in skip.stderr)
    assert (f"undefined values: UL2 of AP for {n} queries (scored 0 per query by --undefined zero, and as 0 in the 'all' "
            "row, a mean of per-query values; --undefined skip leaves such queries out)") in zero.stderr


def test_db_of_rbp():
    """DB(RBP(p=0.9)) = Pr[RBP of a random ranking of the judged documents <= the run's RBP]:
    exact (enumerated) for the small pools, which the test enumerates itself."""
    args = ("-q", "--precision", "17", "-m", "RBP(p=0.9)", "-m", "DB(RBP(p=0.9))", "--pool", "qrels", "--seed", "3")
    r = rows(cli(*args))
    assert r == rows(cli(*args))  # seeded: reproducible
    db, rbp = r["DB(RBP(p=0.9))"], r["RBP(p=0.9)"]
    assert all(0 <= v <= 1 for v in db.values())
    pools = qrels_by_query()
    maxg = max(max(g) for g in pools.values())
    checked = 0
    for q, grades in pools.items():
        if len(grades) > 8 or len(set(grades)) == 1:
            continue
        perms = set(itertools.permutations(grades))
        vals = [0.1 * sum(g / maxg * 0.9 ** i for i, g in enumerate(p)) for p in perms]
        assert db[q] == pytest.approx(np.mean(np.asarray(vals) <= rbp[q] + 1e-12), abs=1e-12), q
        checked += 1
    assert checked >= 3
    # a different seed moves only the Monte Carlo estimates, and only a little
    other = rows(cli(*args[:-1], "7"))["DB(RBP(p=0.9))"]
    diff = np.array([abs(other[q] - db[q]) for q in db])
    assert diff.max() < 0.1 and diff.max() > 0


def test_paper_expectation_and_pools():
    """--expectation paper: E[SP@10] = 10 (P/n)^2 from the judged pool; --pool union adds the run's
    unjudged documents (gain 0) to the pool, so n grows and E falls."""
    pools = qrels_by_query()
    paper = rows(cli("-q", "--precision", "17", "-m", "SP@10", "--norm", "e,iub", "--expectation", "paper",
                     "--pool", "qrels"))
    for q, g in pools.items():
        P, n = sum(x >= 1 for x in g), len(g)
        assert paper["E(SP@10)"][q] == pytest.approx(10 * (P / n) ** 2, rel=1e-12)
        assert paper["IUB(SP@10)"][q] == 10
    qrels_pool = rows(cli("-q", "--precision", "17", "-m", "P@10", "--norm", "e", "--pool", "qrels"))
    union = rows(cli("-q", "--precision", "17", "-m", "P@10", "--norm", "e", "--pool", "union"))
    for q, g in pools.items():
        P, n = sum(x >= 1 for x in g), len(g)
        assert qrels_pool["E(P@10)"][q] == pytest.approx(P / n * min(10, n) / 10, rel=1e-12)
        assert union["E(P@10)"][q] <= qrels_pool["E(P@10)"][q] + 1e-12
    assert union["E(P@10)"]["all"] < qrels_pool["E(P@10)"]["all"]


def test_all_variants_at_once():
    res = cli("-m", "nDCG@10", "--norm", "e,iub,wlb,ul1,ul2,mm,eb,em,db,uew", "--permutations", "200", "--notes", "all",
              "--pool", "run")  # a run's own pool: some queries uninformative
    assert names(res) == ["nDCG@10"] + [f"{v}(nDCG@10)" for v in
                                        ("E", "IUB", "WLB", "UL1", "UL2", "MM", "EB", "EM", "DB", "UEW")]
    note = [line for line in res.stderr.splitlines() if ": undefined values: " in line]
    assert len(note) == 1  # one line per run, naming every variant that was undefined somewhere
    for v in ("UL1", "UL2", "MM", "EB", "EM", "DB", "UEW"):
        assert v in note[0].split(": ", 2)[2]
    # every 'all' row is a mean of per-query values: the undefined queries count 0 in it
    assert ("(scored 0 per query by --undefined zero, and as 0 in the 'all' row, a mean of per-query values; "
            "--undefined skip leaves such queries out)") in note[0]


def readme_examples():
    """The ``$ ulnorm-eval ...`` blocks of docs/bounds.md (bounds and normalisations, worked example)."""
    section = (EXAMPLES.parent / "docs" / "bounds.md").read_text(encoding="utf-8")
    out = []
    for block in section.split("```text\n")[1:]:
        block = block[:block.index("```")]
        first, _, shown = block.partition("\n")
        assert first.startswith("$ ulnorm-eval ")
        out.append((first[2:], shown.rstrip("\n")))
    return out


@pytest.mark.parametrize("command, shown", readme_examples(), ids=lambda x: x[:60] if isinstance(x, str) else "")
def test_readme_worked_examples_are_current(command, shown, monkeypatch):
    """Rerun each README command (2>&1: stderr first, as the CLI writes warnings before output;
    | grep -w Q: only the lines of query Q) and compare with the text shown."""
    import shlex

    monkeypatch.chdir(EXAMPLES.parent)
    cmd, _, grep = command.partition(" | grep -w ")
    args = shlex.split(cmd)[1:]
    merge = "2>&1" in args
    args = [a for a in args if a not in ("2>&1", "2>/dev/null")]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    text = (res.stderr if merge else "") + res.stdout
    lines = text.rstrip("\n").splitlines()
    if grep:
        lines = [ln for ln in lines if grep in ln.split("\t")]
    assert "\n".join(lines) == shown


@pytest.mark.parametrize("word", ["ul2", "e,UL2", "UE1", "none"])
def test_retired_short_norm_says_did_you_mean(word):
    """-n was --norm's short form and is now trec_eval's --nosummary: `-n ul2 QRELS RUN` reads ul2 as the
    qrels; the error names the fix in one line (exit 2), not just 'no such file'."""
    qrels, run = EXAMPLES / "qrels" / "dlhard-passage.qrels.txt", EXAMPLES / "runs" / "bm25.run.gz"
    res = CliRunner().invoke(main, ["-n", word, str(qrels), str(run)])
    assert res.exit_code == 2 and res.stdout == ""
    assert res.stderr == (f"ulnorm-eval: {word}: no such file; did you mean --norm {word}? (-n is now trec_eval's "
                          "--nosummary, no longer --norm's short form)\n")


def test_a_missing_file_that_is_no_variant_gets_no_hint(tmp_path):
    res = CliRunner().invoke(main, [str(tmp_path / "ul3"), str(EXAMPLES / "runs" / "bm25.run.gz")])
    assert res.exit_code == 2 and "did you mean --norm" not in res.stderr and "no such file" in res.stderr
