"""``ulnorm-eval --trec``: trec_eval 10's stdout, byte for byte, for trec_eval's own arguments.

The expected bytes are trec_eval 10's output, stored in tests/data/trec_mode/ (CI has no trec_eval; the
README there gives the command that produced them), and trec_eval's own expected files (out.test*)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data" / "trec_mode"
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
    """trec_eval 10 without -c prints nothing and exits when a qrels query has no results (302 in
    results.trunc); -c scores it 0 and --run-queries-only takes the intersection."""
    d = shared / "trec_eval_test"
    p = trec(str(d / "qrels.test"), str(d / "results.trunc"), check_rc=2)
    assert p.stdout == b""
    err = p.stderr.decode()
    assert err.count("\n") == 1 and "qrels query 302 has no results" in err and "-c" in err
    inter = trec("--run-queries-only", "-q", "-m", "num_q", "-m", "map", str(d / "qrels.test"), str(d / "results.trunc"))
    lines = inter.stdout.decode().splitlines()
    assert {ln.split("\t")[1] for ln in lines} == {"301", "303", "all"}
    assert "num_q                 \tall\t2" in lines


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


CORNERS = Path(__file__).parent / "data" / "trec_eval_corners"
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
