"""``ulnorm-eval --trec``: trec_eval 10's stdout, byte for byte, for trec_eval's own arguments.

The expected bytes are trec_eval 10's output, stored in tests/data/trec_mode/ (CI has no trec_eval; the
README there gives the command that produced them), and trec_eval's own expected files (out.test*)."""
from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import ROOT

DATA = ROOT / "tests" / "data" / "trec_mode"
CORNERS = ROOT / "tests" / "data" / "trec_eval_corners"
CASES = [line.split("\t") for line in (DATA / "cases.tsv").read_text().splitlines() if not line.startswith("#")]


def trec(*args, check_rc=0):
    p = subprocess.run([sys.executable, "-m", "ulnorm_eval", "--trec", *args], capture_output=True)
    assert p.returncode == check_rc, p.stderr.decode()
    return p


def no_rbp(text: bytes) -> bytes:
    """trec_eval 10's rbp prints stack garbage (uninitialised bounds): its lines are not compared."""
    return b"".join(ln for ln in text.splitlines(keepends=True) if not ln.startswith(b"rbp  "))


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_trec_mode_is_trec_eval_byte_for_byte(shared, case):
    cid, qrels, run, args = case
    got = trec(*args.split(), str(shared / qrels), str(shared / run)).stdout
    assert no_rbp(got) == (DATA / f"{cid}.out").read_bytes()


def test_default_measures_are_trec_evals_official_set(shared):
    """No -m: trec_eval's default (-m official), the whole of trec_eval's out.test."""
    d = shared / "trec_eval_test"
    assert trec(str(d / "qrels.test"), str(d / "results.test")).stdout == (d / "out.test").read_bytes()


@pytest.mark.parametrize("expected, qrels, run, args", [
    ("out.test.a", "qrels.test", "results.test", ["-m", "all_trec"]),
    ("out.test.aq", "qrels.test", "results.test", ["-m", "all_trec", "-q"]),
    ("out.test.aqc", "qrels.test", "results.trunc", ["-m", "all_trec", "-q", "-c"]),
    ("out.test.aqcM", "qrels.test", "results.trunc", ["-m", "all_trec", "-q", "-c", "-M100"]),
    ("out.test.aql", "qrels.rel_level", "results.test", ["-m", "all_trec", "-m", "relstring.20", "-q", "-l2"]),
])
def test_trec_evals_own_expected_files(shared, expected, qrels, run, args):
    """trec_eval's published outputs (its rbp lines included: they are what the fixed reading gives)."""
    d = shared / "trec_eval_test"
    assert trec(*args, str(d / qrels), str(d / run)).stdout == (d / expected).read_bytes()


def test_missing_qrels_query_without_c_stops_like_trec_eval(shared):
    """trec_eval 10 without -c exits 4 at the first qrels query without results (302 in results.trunc),
    having printed nothing without -q; -c scores it 0 and --run-queries-only takes the intersection."""
    d = shared / "trec_eval_test"
    p = trec(str(d / "qrels.test"), str(d / "results.trunc"), check_rc=4)
    assert p.stdout == b""
    err = p.stderr.decode()
    assert err.count("\n") == 1 and "qrels query 302 has no results" in err and "-c" in err
    inter = trec("--run-queries-only", "-q", "-m", "num_q", "-m", "map", str(d / "qrels.test"), str(d / "results.trunc"))
    lines = inter.stdout.decode().splitlines()
    assert {ln.split("\t")[1] for ln in lines} == {"301", "303", "all"}
    assert "num_q                 \tall\t2" in lines


def test_missing_qrels_query_with_q_prints_the_queries_before_it_then_exits_4(write):
    """With -q trec_eval 10 prints the lines of the qrels queries before the first one without results
    (qid byte order), then exits 4 (issue 50): the same bytes and status, the reason on one line.  With
    several runs, the runs before are whole and the stopping run's block is cut there."""
    from conftest import invoke

    args = ["-q", "-m", "map", "-m", "P.2", CORNERS / "nan.qrels", CORNERS / "nan.run"]
    res = invoke("--trec", *args)
    assert (res.exit_code, res.stdout_bytes) == (4, (CORNERS / "stop_q.out").read_bytes())  # trec_eval 10's bytes
    assert res.stderr.count("\n") == 1 and "qrels query 2 has no results" in res.stderr
    assert "exits there (4), after printing the -q lines of the queries before it" in res.stderr
    assert invoke("--trec", *args[3:]).stdout_bytes == b""  # without -q: nothing, as trec_eval
    whole = write("whole", "1 Q0 c 1 3 w\n2 Q0 x 1 1 w\n3 Q0 p 1 1 w\n4 Q0 s 1 1 w\n")
    res = invoke("--trec", *args[:-1], whole, CORNERS / "nan.run")
    lines = res.stdout.splitlines()
    assert res.exit_code == 4 and lines[0] == "runid                 \tall\tw" and "runid                 \tall\tr" in lines
    assert lines[lines.index("runid                 \tall\tr") + 1:] == (CORNERS / "stop_q.out").read_text().splitlines()


def test_trec_refuses_a_variant_named_by_m(write):
    """--norm is refused with --trec (trec_eval has no variants); a variant named by -m is refused alike."""
    from conftest import invoke

    q, r = write("q", "1 0 a 1\n"), write("r", "1 Q0 a 1 2 t\n")
    for name in ("UL2(AP)", "ul2_map", "E(P@5)"):
        res = invoke("--trec", "-m", "map", "-m", name, q, r)
        assert (res.exit_code, res.stdout) == (2, "")
        assert res.stderr.count("\n") == 1 and f"which have no variants: leave out -m {name}" in res.stderr


def test_trec_reads_grades_and_l_as_trec_evals_atol_and_says_so(write):
    """trec_eval reads grades and -l with C's atol (1.5 -> 1, 1e1 -> 1): --trec does too, with a note
    (the bytes against the binary: tests/data/trec_eval_corners/frac_*)."""
    from conftest import invoke

    q = write("q", "1 0 a 1.5\n1 0 b 1e1\n1 0 c 2\n1 0 d 0.5\n1 0 e 1\n")
    r = write("r", "1 Q0 d 1 4 t\n1 Q0 a 2 3 t\n1 Q0 b 3 2 t\n1 Q0 c 4 1 t\n")
    res = invoke("--trec", "-l", "1.5", "-m", "num_rel", "-m", "relstring", "-q", q, r)
    assert res.exit_code == 0 and res.stdout.splitlines() == [
        "num_rel               \t1\t4", "relstring             \t1\t'0112'", "num_rel               \tall\t4"]
    assert "3 grades read as trec_eval reads them" in res.stderr and "-l 1.5 read as -l 1" in res.stderr
    plain = invoke("-f", "trec", "--names", "trec", "--norm", "none", "-l", "1.5", "-m", "num_rel", q, r)
    assert plain.stdout.splitlines() == ["num_rel               \tall\t3"]  # grades 1.5, 10 (1e1) and 2 are >= 1.5


@pytest.mark.parametrize("run_bom, qrels_bom", [(True, False), (False, True)])
def test_trec_refuses_a_byte_order_mark_that_trec_eval_would_read_into_a_query_id(write, run_bom, qrels_bom):
    """trec_eval 10 keeps a UTF-8 BOM in the first query id (that line becomes a query of its own):
    --trec refuses the file (line 1) instead of stripping the mark; without --trec it is stripped."""
    from conftest import invoke

    bom = b"\xef\xbb\xbf"
    q = write("q", (bom if qrels_bom else b"") + b"1 0 a 1\n1 0 b 1\n")
    r = write("r", (bom if run_bom else b"") + b"1 Q0 a 1 2 t\n1 Q0 b 2 1 t\n")
    for extra in ([], ["-j", "2", r], ["--stream"]):
        res = invoke("--trec", "-m", "map", q, r, *extra)
        assert (res.exit_code, res.stdout) == (2, "")
        assert res.stderr.splitlines()[-1].startswith(f"ulnorm-eval: {q if qrels_bom else r}:1: starts with a UTF-8 byte "
                                                      "order mark, which trec_eval 10 reads as part of the first")
    assert invoke("-f", "trec", "--norm", "none", "-m", "AP", q, r).stdout == "AP\tall\t1.0000\n"


@pytest.mark.parametrize("names, trec_only", [
    (["ndcg.1=inf"], False), (["ndcg.1=2,1=3"], False), (["nDCG(gains={1:2,1:3})"], False), (["ndcg.1=nan"], False),
    (["ndcg.-1=2,1=3"], True), (["Rndcg.-2=1"], True), (["dcg.1=3", "ndcg"], True), (["all_trec", "dcg.1=2"], True)])
def test_gain_maps_trec_eval_reads_otherwise_are_refused(write, names, trec_only):
    """Gains trec_eval 10 does not read as written, refused on one line (exit 2): an infinite gain
    (inf/inf), a grade given twice (which one wins depends on its sort), and under --trec a level below 0
    (trec_eval's code of a document not in the qrels) and different gains for dcg, ideal_dcg and ndcg
    (one shared table in m_ndcg.c)."""
    from conftest import invoke

    q, r = write("q", "1 0 a 1\n1 0 b 2\n"), write("r", "1 Q0 a 1 2 t\n1 Q0 b 2 1 t\n")
    measures = [a for name in names for a in ("-m", name)]
    res = invoke("--trec", *measures, q, r)
    assert (res.exit_code, res.stdout) == (2, "") and res.stderr.count("\n") == 1, res.stderr
    assert invoke("-f", "trec", "--names", "trec", "--norm", "none", *measures, q, r).exit_code == (0 if trec_only else 2)


def test_first_parameters_win(write):
    """trec_eval keeps the first parameters of a measure given twice; a bare -m P only asks for P."""
    q = write("q", "1 0 a 1\n1 0 b 0\n")
    r = write("r", "1 Q0 a 1 2 t\n1 Q0 b 2 1 t\n")
    p = trec("-m", "P", "-m", "P.1", "-m", "P.2", q, r)
    assert p.stdout == b"P_1                   \tall\t1.0000\n"
    assert "-m P.2 ignored" in p.stderr.decode()


def test_several_runs_are_opened_by_their_tag_once(write):
    """trec_eval's runid is the run's tag: each run's block starts with it, once, -m runid or not."""
    q = write("q", "1 0 a 1\n")
    r1, r2 = write("r1", "1 Q0 a 1 2 tagA\n"), write("r2", "1 Q0 a 1 2 tagB\n")
    for extra in ([], ["-m", "runid"]):
        out = trec(*extra, "-m", "map", q, r1, r2).stdout.decode().splitlines()
        assert out == ["runid                 \tall\ttagA", "map                   \tall\t1.0000",
                       "runid                 \tall\ttagB", "map                   \tall\t1.0000"]


def test_trec_refuses_what_changes_the_lines(write):
    q, r = write("q", "1 0 a 1\n"), write("r", "1 Q0 a 1 2 t\n")
    for extra in (["--norm", "ul2"], ["-f", "json"], ["--names", "canonical"], ["--holes"], ["--ties", "rank"],
                  ["--ties", "file"]):
        p = trec(*extra, q, r, check_rc=2)
        assert p.stdout == b"" and "--trec" in p.stderr.decode()


CORNER_CASES = [ln.split("\t")[:2] for ln in (CORNERS / "cases.tsv").read_text().splitlines()
                if ln.strip() and not ln.startswith("#")]


@pytest.mark.parametrize("cid, args", CORNER_CASES, ids=[c[0] for c in CORNER_CASES])
def test_trec_eval_corners_with_trec_evals_arguments_alone(cid, args):
    """trec_eval 10's corner outputs (-nan, -c's placeholder in utility.P and relstring.N, negative
    gains, -Z) from trec_eval's arguments alone: --trec implies --trec-nan."""
    from click.testing import CliRunner

    from ulnorm_eval.cli.main import main

    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(CORNERS)
        res = CliRunner().invoke(main, ["--trec", *args.split()], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert res.stdout_bytes == (CORNERS / f"{cid}.out").read_bytes()


DLHARD = ["bm25", "bm25_bert_zs", "bm25_rm3", "bm25_rm3_bert_zs", "bm25_rm3_t5_zs", "bm25_t5_zs"]


@pytest.mark.slow
@pytest.mark.parametrize("run", DLHARD)
def test_trec_version_9_is_the_published_file_byte_for_byte(shared, run):
    """DL-HARD's *.run.eval.gz (trec_eval 9.0.4 -l 2 -c -M 1000 -q -m all_trec): `diff` is empty.  trec_eval 9
    read scores as float and had no unj, rbp, rbp_resid.  bm25_bert_zs's published file was made from a run
    tagged T5-P; the run distributed beside it is tagged BERT-P (its last line), the one difference."""
    import gzip

    d = shared / "dlhard-passage"
    expected = gzip.decompress((d / "runs" / f"{run}.run.eval.gz").read_bytes())
    if run == "bm25_bert_zs":
        expected = expected.replace(b"runid                 \tall\tT5-P\n", b"runid                 \tall\tBERT-P\n")
    got = trec("-l", "2", "-c", "-M", "1000", "-q", "-m", "all_trec", "--score-precision", "float32",
               "--trec-version", "9", str(d / "qrels.txt"), str(d / "runs" / f"{run}.run.gz")).stdout
    assert got == expected


def test_trec_version_9_has_only_trec_eval_9s_measures(shared):
    d = shared / "trec_eval_test"
    ten = trec("-m", "all_trec", str(d / "qrels.test"), str(d / "results.test")).stdout.decode()
    nine = trec("--trec-version", "9", "-m", "all_trec", str(d / "qrels.test"), str(d / "results.test")).stdout.decode()
    added = {ln.split()[0] for ln in ten.splitlines()} - {ln.split()[0] for ln in nine.splitlines()}
    assert added == {"unj_5", "unj_10", "unj_20", "rbp", "rbp_resid"}
    # the same lines otherwise, in the same order (values may differ: 9's recall rounding)
    assert [ln.split()[0] for ln in ten.splitlines() if ln.split()[0] not in added] == [ln.split()[0] for ln in nine.splitlines()]
    p = trec("--trec-version", "9", "-m", "rbp_resid", str(d / "qrels.test"), str(d / "results.test"), check_rc=2)
    assert "trec_eval 9 has no rbp_resid" in p.stderr.decode() and p.stdout == b""


def _trec_cur_p(p, n):
    """trec_eval's cur_p after n ranks: 1.0 multiplied by p n times, in order (m_rbp.c, m_rbp_resid.c)."""
    cur = 1.0
    for _ in range(n):
        cur = cur * p
    return cur


def test_rbp_resid_last_bit_is_trec_evals(write):
    """The issue's example: q1 ranks a(1) x(unjudged) c(1) d(0) y(unjudged), q2 ranks e(1).  trec_eval
    0.7461000000000002 for q1 (pow: 0.7460999999999999...) and 'all' 0.3731 (pow: 0.3730)."""
    q = write("q", "1 0 a 1\n1 0 c 1\n1 0 d 0\n2 0 e 1\n")
    r = write("r", "1 Q0 a 1 5 r\n1 Q0 x 2 4 r\n1 Q0 c 3 3 r\n1 Q0 d 4 2 r\n1 Q0 y 5 1 r\n2 Q0 e 1 1 r\n")
    assert trec("-q", "-m", "rbp_resid", q, r).stdout.decode().splitlines() == [
        "rbp_resid             \t1\t0.7461", "rbp_resid             \t2\t0.0000", "rbp_resid             \tall\t0.3731"]
    v = _trec_cur_p(0.9, 5) + (1 - 0.9) * (_trec_cur_p(0.9, 1) + _trec_cur_p(0.9, 4))
    assert v == 0.7461000000000002
    got = trec("-q", "--precision", "17", "-m", "rbp_resid", q, r).stdout.decode().splitlines()[0].split("\t")[2]
    assert float(got) == v


def test_rbp_weights_are_trec_evals_repeated_products(write):
    """rbp (m_rbp.c) weighs rank i by the same repeated product: 0.1 * 0.9^4 as trec_eval, not pow's."""
    q = write("q", "1 0 e 1\n")
    r = write("r", "".join(f"1 Q0 {d} {i} {9 - i} r\n" for i, d in enumerate("abcde", 1)))
    got = trec("--precision", "17", "-m", "rbp", q, r).stdout.decode().split("\t")[2]
    assert float(got) == (1.0 - 0.9) * _trec_cur_p(0.9, 4) != (1.0 - 0.9) * 0.9 ** 4
