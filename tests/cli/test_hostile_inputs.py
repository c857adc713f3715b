"""Hostile inputs and options: never a traceback, never exit 1 for an error, inputs unchanged.

Exit 1 means only "a CI gate failed" (docs/errors.md); every error is one ``ulnorm-eval: ...``
line on stderr with exit 2.  Private name: ``ordering._natural_key``, whose digit-only shortcut is checked
against the general rule on generated ids (its public users sort whole runs).
"""
from __future__ import annotations

import hashlib
import os

import pytest

from conftest import SUMM_DOCS, SUMM_SYSTEM_A
from conftest import invoke as cli

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 1\nq2 0 d4 0\n"
RUN_A = "q1 Q0 d1 1 2.0 A\nq1 Q0 d2 2 1.0 A\nq2 Q0 d4 1 2.0 A\nq2 Q0 d3 2 1.0 A\n"
RUN_B = "q1 Q0 d2 1 2.0 B\nq1 Q0 d1 2 1.0 B\nq2 Q0 d3 1 2.0 B\nq2 Q0 d4 2 1.0 B\n"


@pytest.fixture
def files(tmp_path):
    out = {}
    for name, text in (("qrels", QRELS), ("a.run", RUN_A), ("b.run", RUN_B)):
        (tmp_path / name).write_text(text)
        out[name] = str(tmp_path / name)
    return out


def one_line_error(res, expected: str | None = None) -> str:
    assert res.exit_code == 2, (res.exit_code, res.stdout, res.stderr)
    assert "Traceback" not in res.stderr
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert lines and lines[-1].startswith("ulnorm-eval: "), res.stderr
    assert "internal error" not in res.stderr
    if expected is not None:
        assert lines[-1] == f"ulnorm-eval: {expected}"
    return lines[-1]


# --------------------------------------------------------------------------- option values

@pytest.mark.parametrize("args, option", [
    (["-l", "nan"], "'-l' / '--rel-level'"),
    (["-l", "inf"], "'-l' / '--rel-level'"),
    (["-l", "-inf"], "'-l' / '--rel-level'"),
    (["--baseline", "B", "--alpha", "nan"], "'--alpha'"),
    (["--baseline", "B", "--max-drop", "nan"], "'--max-drop'"),
    (["--baseline", "B", "--max-drop", "inf"], "'--max-drop'"),
])
def test_non_finite_option_values_are_refused(files, args, option):
    args = [files["b.run"] if a == "B" else a for a in args]
    value = args[-1]
    res = cli(*args, files["qrels"], files["a.run"])
    one_line_error(res, f"Invalid value for {option}: {value!r} is not a finite number "
                        "(see 'ulnorm-eval eval --help')")


@pytest.mark.parametrize("command, args", [
    ("compare", ["--alpha", "nan"]), ("compare", ["--phi-target", "nan"]), ("compare", ["-l", "nan"]),
    ("queries", ["--ideal-gap", "nan"]), ("queries", ["--informative-gap", "inf"]),
    ("queries", ["--hard-below", "nan"]), ("queries", ["--easy-above", "-inf"]), ("nrg", ["-l", "nan"]),
])
def test_non_finite_option_values_are_refused_in_every_command(files, command, args):
    res = cli(command, *args, files["qrels"], files["a.run"], files["b.run"])
    assert "is not a finite number" in one_line_error(res)


def test_nan_fail_below_threshold_is_refused(files):
    res = cli("--fail-below", "AP=nan", files["qrels"], files["a.run"])
    assert "'AP=nan': the threshold is not a finite number" in one_line_error(res)


@pytest.mark.parametrize("command", ["eval", "compare", "queries", "nrg"])
@pytest.mark.parametrize("value", ["", "  "])
def test_empty_measure_is_refused(files, command, value):
    res = cli(command, "-m", value, files["qrels"], files["a.run"], files["b.run"])
    assert "Invalid value for '-m' / '--measure': an empty value" in one_line_error(res)


def test_usage_errors_are_one_line(files):
    res = cli("--no-such-option", files["qrels"], files["a.run"])
    one_line_error(res, "No such option '--no-such-option'. (see 'ulnorm-eval eval --help')")


# --------------------------------------------------------------------------- misread input

def test_lone_carriage_return_inside_a_line_is_refused(tmp_path, files):
    bad = tmp_path / "cr.run"
    bad.write_bytes(b"q1 Q0 d1 1 2.0 A\rq1 Q0 d2 2 1.0 A\nq2 Q0 d3 1 1.0 A\n")
    for stream in ("--stream", "--no-stream"):
        one_line_error(cli(stream, files["qrels"], bad),
                       f"{bad}:1: stray carriage return (a CR not followed by LF; convert old Mac line ends "
                       "(CR) to LF, e.g. with mac2unix)")


def test_cr_only_line_ends_are_refused_in_qrels(tmp_path, files):
    bad = tmp_path / "mac.qrels"
    bad.write_bytes(QRELS.replace("\n", "\r").encode())
    assert "stray carriage return" in one_line_error(cli(bad, files["a.run"]))
    assert one_line_error(cli(bad, files["a.run"])).startswith(f"ulnorm-eval: {bad}:1: ")


def test_stray_cr_is_located_on_its_line(tmp_path, files):
    bad = tmp_path / "late.run"
    bad.write_bytes((RUN_A + "q2 Q0 d9 3 0.5 A\r \n").encode())
    assert one_line_error(cli("--no-stream", files["qrels"], bad)).startswith(f"ulnorm-eval: {bad}:5: stray")


def test_crlf_line_ends_are_read_like_lf(tmp_path, files):
    crlf_q, crlf_r = tmp_path / "q.crlf", tmp_path / "r.crlf"
    crlf_q.write_bytes(QRELS.replace("\n", "\r\n").encode())
    crlf_r.write_bytes(RUN_A.replace("\n", "\r\n").encode())
    got = cli("-m", "AP", "--norm", "none", crlf_q, crlf_r)
    assert got.exit_code == 0 and got.stdout == cli("-m", "AP", "--norm", "none", files["qrels"], files["a.run"]).stdout


def test_query_id_all_is_refused(tmp_path, files):
    q = tmp_path / "all.qrels"
    q.write_text(QRELS + "all 0 d9 1\n")
    one_line_error(cli(q, files["a.run"]), f"{q}:5: query id 'all' is reserved for the summary row (rename the query)")
    r = tmp_path / "all.run"
    r.write_text(RUN_A + "all Q0 d9 1 1.0 A\n")
    for stream in ("--stream", "--no-stream"):
        one_line_error(cli(stream, files["qrels"], r),
                       f"{r}:5: query id 'all' is reserved for the summary row (rename the query)")
    letor = tmp_path / "all.letor"
    letor.write_text("1 qid:all 1:0.5\n")
    one_line_error(cli(letor, files["a.run"]),
                   f"{letor}:1: query id 'all' is reserved for the summary row (rename the query)")


def test_runs_with_the_same_base_name_get_distinct_names(tmp_path, files):
    import gzip

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "run.txt").write_text(RUN_A)
    (tmp_path / "b" / "run.txt").write_text(RUN_B)
    res = cli("-m", "AP", "--norm", "none", files["qrels"], tmp_path / "a" / "run.txt", tmp_path / "b" / "run.txt")
    assert res.exit_code == 0
    assert res.stdout.splitlines() == ["runid\tall\tA", "AP\tall\t0.7500",  # runid: the tag, as trec_eval
                                      "runid\tall\tB", "AP\tall\t0.7500"]
    table = cli("-f", "table", "-m", "AP", "--norm", "none", files["qrels"], tmp_path / "a" / "run.txt",
                tmp_path / "b" / "run.txt").stdout
    assert "run.txt#1" in table and "run.txt#2" in table
    (tmp_path / "x.run").write_text(RUN_A)
    (tmp_path / "x.run.gz").write_bytes(gzip.compress(RUN_B.encode()))
    res = cli("-m", "P@1", "--norm", "none", "--fail-below", "P@1=0.75", files["qrels"], tmp_path / "x.run",
              tmp_path / "x.run.gz")
    assert res.exit_code == 1  # x.run: P@1 = 1/2 fails; x.run.gz: 1/2 fails too; both named
    assert res.stdout.splitlines() == ["runid\tall\tA", "P@1\tall\t0.5000",
                                      "runid\tall\tB", "P@1\tall\t0.5000"]
    assert "x.run#1 P@1" in res.stderr and "x.run#2 P@1" in res.stderr


def test_run_sharing_no_query_with_the_qrels_is_refused(tmp_path, files):
    r = tmp_path / "other.run"
    r.write_text("x1 Q0 d1 1 1.0 X\nx2 Q0 d2 1 1.0 X\n")
    one_line_error(cli(files["qrels"], r), f"{r}: shares no query with {files['qrels']} (the run has 'x1', 'x2'): "
                                          "the wrong qrels? (--allow-disjoint evaluates it anyway, scoring 0)")
    ok = cli("--allow-disjoint", "-m", "AP", "--norm", "none", files["qrels"], r)
    assert ok.exit_code == 0 and ok.stdout == "AP\tall\t0.0000\n"


def test_disjoint_baseline_is_refused_too(tmp_path, files):
    r = tmp_path / "other.run"
    r.write_text("x1 Q0 d1 1 1.0 X\n")
    assert "shares no query" in one_line_error(cli("--baseline", r, files["qrels"], files["a.run"]))


def test_duplicates_in_a_query_absent_from_the_qrels_one_behaviour(tmp_path, files):
    r = tmp_path / "dup.run"
    r.write_text(RUN_A + "q9 Q0 x 1 2.0 A\nq9 Q0 x 2 1.0 A\n")
    msgs = {one_line_error(cli(s, files["qrels"], r)) for s in ("--stream", "--no-stream")}
    msgs.add(one_line_error(cli(files["qrels"], "-", input=r.read_text())).replace("ulnorm-eval: -:", f"ulnorm-eval: {r}:"))
    assert msgs == {f"ulnorm-eval: {r}:6: duplicate document 'x' for query 'q9' in the run"}


@pytest.mark.parametrize("qid", ["q²", "1²", "²", "9" * 5000, "0" * 4999 + "1", "٣"])
def test_odd_query_ids_sort_without_crashing(tmp_path, qid):
    q = tmp_path / "q"
    q.write_text(f"{qid} 0 d1 1\n2 0 d1 1\n10 0 d1 1\n")
    r = tmp_path / "r"
    r.write_text(f"{qid} Q0 d1 1 1.0 A\n2 Q0 d1 1 1.0 A\n10 Q0 d1 1 1.0 A\n")
    res = cli("-q", "-m", "AP", "--norm", "none", q, r)
    assert res.exit_code == 0, res.stderr
    rows = [ln.split("\t")[1] for ln in res.stdout.splitlines()]
    assert rows[:2] == ["2", "10"] or rows[1:3] == ["2", "10"]
    assert sorted(rows) == sorted([qid, "2", "10", "all"])


def test_natural_key_shortcut_for_digit_ids_equals_the_general_rule():
    import re

    from hypothesis import given, settings, strategies as st

    # private: the sort key's digit-only shortcut against the general rule (hypothesis, any strings)
    from ulnorm_eval.pipeline.ordering import _natural_key

    def general(s):
        return tuple((0, len(t.lstrip("0")), t.lstrip("0")) if t[0] in "0123456789" else (1, 0, t)
                     for t in re.findall(r"[0-9]+|[^0-9]+", s))

    @settings(max_examples=300, deadline=None)
    @given(st.text(alphabet="0123456789", min_size=1, max_size=30) | st.text(min_size=1, max_size=8))
    def check(s):
        assert _natural_key(s) == general(s)

    check()


def test_natural_order_of_long_digit_runs():
    from ulnorm_eval.pipeline.ordering import natural_order

    big = "9" * 5000
    assert natural_order([big, "10", "2", "q10", "q2", "010", "²"]) == ["2", "010", "10", big, "q2", "q10", "²"]


def test_oversize_rank_with_ties_rank(tmp_path, files):
    r = tmp_path / "r"
    r.write_text("q1 Q0 d1 99999999999999999999 1.0 A\nq1 Q0 d2 2 1.0 A\n")
    one_line_error(cli("--ties", "rank", files["qrels"], r),
                   f"{r}:1: rank '99999999999999999999' is too large (--ties rank)")


@pytest.mark.parametrize("fmt", ["json", "trec", "jsonl"])
def test_grades_that_overflow_are_refused(tmp_path, fmt):
    q = tmp_path / "q"
    q.write_text("q1 0 d1 1e308\nq1 0 d2 1e308\nq1 0 d3 0\n")
    r = tmp_path / "r"
    r.write_text("q1 Q0 d3 1 3 A\nq1 Q0 d1 2 2 A\n")
    res = cli("-f", fmt, q, r)
    one_line_error(res, f"{q}:1: grade 1e+308 is too large (|grade| <= 2^53; see docs/errors.md)")
    assert res.stdout == ""


def test_exponential_gain_overflow_is_refused(tmp_path):
    q = tmp_path / "q"
    q.write_text("q1 0 d1 2000\nq1 0 d2 1\n")
    r = tmp_path / "r"
    r.write_text("q1 Q0 d2 1 3 A\nq1 Q0 d1 2 2 A\n")
    for fmt in ("json", "trec"):
        res = cli("-f", fmt, "-m", 'nDCG(dcg="exp-log2")@10', q, r)
        one_line_error(res, f"{q}: nDCG(dcg='exp-log2')@10 of r for query 'q1' overflows (grades too large for "
                            "its gain or bounds; the limits are in docs/errors.md)")
        assert res.stdout == ""


def test_swapped_qrels_and_run_get_a_hint(files):
    msg = one_line_error(cli(files["a.run"], files["qrels"]))
    assert msg == (f"ulnorm-eval: {files['a.run']}:1: expected 4 fields (qid iter docid grade), found 6; "
                   "this looks like a run file: QRELS comes first (ulnorm-eval QRELS RUN...)")


# --------------------------------------------------------------------------- LETOR

LETOR = "2 qid:1 1:0.5\n0 qid:1 1:0.1\n1 qid:2 1:0.3\n"


@pytest.mark.parametrize("scores, line, reason", [
    ("1 0 0.5\n1 2 0.4\n", 2, "document index 2 is outside query '1' (it has 2 documents: 0..1)"),
    ("1 0 0.5\n1 -1 0.4\n", 2, "document index -1 is outside query '1' (it has 2 documents: 0..1)"),
    ("1 0 0.5\n1 x 0.4\n", 2, "document index 'x' is not an integer (RankLib: qid idx score)"),
    ("1 0 0.5\n1 1.5 0.4\n", 2, "document index '1.5' is not an integer (RankLib: qid idx score)"),
    ("1 0 0.5\n1 0_1 0.4\n", 2, "document index '0_1' is not an integer (RankLib: qid idx score)"),
    ("1 0 0.5\nqid: 1 0.4\n", 2, "empty qid: (expected qid:ID)"),
])
def test_ranklib_scores_are_validated(tmp_path, scores, line, reason):
    q = tmp_path / "l.txt"
    q.write_text(LETOR)
    s = tmp_path / "s"
    s.write_text(scores)
    one_line_error(cli(q, s), f"{s}:{line}: {reason}")


@pytest.mark.parametrize("row, reason", [
    ("1 qid: 1:0.5\n", "empty qid: (expected qid:ID)"),
    ("1 qid:\xff 1:0.5\n", None),
])
def test_malformed_letor_qid(tmp_path, row, reason):
    q = tmp_path / "l.txt"
    q.write_bytes(row.encode("latin-1"))
    s = tmp_path / "s"
    s.write_text("0.5\n")
    msg = one_line_error(cli(q, s))
    assert msg.startswith(f"ulnorm-eval: {q}:1: ")
    if reason:
        assert msg.endswith(reason)


# --------------------------------------------------------------------------- paths and bytes

def test_corrupt_deflate_data(tmp_path, files):
    import gzip

    data = bytearray(gzip.compress((RUN_A * 50).encode()))
    data[20:30] = b"\xff" * 10
    r = tmp_path / "bad.gz"
    r.write_bytes(bytes(data))
    for stream in ("--stream", "--no-stream"):
        msg = one_line_error(cli(stream, files["qrels"], r))
        assert msg.startswith(f"ulnorm-eval: {r}: ") and ("corrupt" in msg or "cannot read" in msg)


def test_symlink_loop_and_path_through_a_file(tmp_path, files):
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    one_line_error(cli(files["qrels"], loop), f"{loop}: symbolic link loop")
    through = f"{files['a.run']}/x"
    one_line_error(cli(files["qrels"], through), f"{through}: a component of the path is a file, not a directory")


def test_dev_zero_is_refused_quickly(files):
    one_line_error(cli(files["qrels"], "/dev/zero"), "/dev/zero:1: NUL byte: binary data, not a text file")
    one_line_error(cli("/dev/zero", files["a.run"]), "/dev/zero:1: NUL byte: binary data, not a text file")


def test_closed_stdin(files):
    import subprocess
    import sys

    # the command as users start it: `python -c ...main()` is a program embedding it, whose interpreter
    # shutdown can abort in Arrow's threads (apache/arrow#34314: exit -6, seen once in CI); the command
    # itself leaves by os._exit after flushing (cli/guard._exit_now)
    res = subprocess.run([sys.executable, "-m", "ulnorm_eval", files["qrels"], "-"],
                         capture_output=True, text=True, timeout=120, preexec_fn=lambda: os.close(0))
    assert res.returncode == 2 and res.stderr == "ulnorm-eval: -: standard input is closed\n"


@pytest.mark.parametrize("encoding, message", [
    ("utf-16", "is UTF-16 text (little-endian byte-order mark); convert it to UTF-8 (iconv -f UTF-16 -t UTF-8 FILE)"),
    ("utf-16-be", "looks like UTF-16 text (NUL bytes between characters); convert it to UTF-8 "
                  "(iconv -f UTF-16 -t UTF-8 FILE)"),
    ("utf-16-le", "looks like UTF-16 text (NUL bytes between characters); convert it to UTF-8 "
                  "(iconv -f UTF-16 -t UTF-8 FILE)"),
    ("utf-32", "is UTF-32 text (little-endian byte-order mark); convert it to UTF-8 (iconv -f UTF-32 -t UTF-8 FILE)"),
])
def test_utf16_input_is_named(tmp_path, files, encoding, message):
    r = tmp_path / "r16"
    r.write_bytes(RUN_A.encode(encoding))
    one_line_error(cli(files["qrels"], r), f"{r}: {message}")
    one_line_error(cli(r, files["a.run"]), f"{r}: {message}")


def test_other_formats_are_named(tmp_path, files):
    import gzip
    import io
    import zipfile

    gg = tmp_path / "double.gz"
    gg.write_bytes(gzip.compress(gzip.compress(RUN_A.encode())))
    one_line_error(cli(files["qrels"], gg), f"{gg}: is gzip inside gzip: decompress the outer layer first")
    zst = tmp_path / "r.zst"
    zst.write_bytes(b"\x28\xb5\x2f\xfd" + b"\x00" * 20)
    one_line_error(cli(files["qrels"], zst), f"{zst}: is zstd-compressed; decompress it first (zstd -d FILE)")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("run", RUN_A)
    zp = tmp_path / "r.zip"
    zp.write_bytes(buf.getvalue())
    one_line_error(cli(files["qrels"], zp), f"{zp}: is a zip archive; extract it first (unzip FILE)")


def test_stdin_can_be_read_once_and_qrels_counts(files):
    for command in (["eval"], ["compare"], ["queries"], ["nrg"]):
        one_line_error(cli(*command, "-", "-", files["a.run"], input=QRELS),
                       "-: standard input can be read once, and QRELS counts: give the other inputs as files")


def test_gzip_bomb_of_zeros_fails_on_the_first_block(tmp_path, files):
    import gzip

    bomb = tmp_path / "bomb.gz"
    bomb.write_bytes(gzip.compress(b"\x00" * (64 << 20), compresslevel=9))  # 64 MB of zeros in 64 kB
    for stream in ("--stream", "--no-stream"):
        one_line_error(cli(stream, files["qrels"], bomb), f"{bomb}:1: NUL byte: binary data, not a text file")


def test_overlong_line_is_refused(tmp_path, files, monkeypatch):
    from ulnorm_eval.inputs import text

    monkeypatch.setattr(text, "MAX_LINE_BYTES", 1000)
    r = tmp_path / "long.run"
    r.write_text(RUN_A + "q2 Q0 " + "d" * 5000 + " 3 0.5 A\n")
    for stream in ("--stream", "--no-stream"):
        one_line_error(cli(stream, files["qrels"], r), f"{r}:5: line longer than 1000 bytes (ULNORM_EVAL_MAX_LINE)")


def test_streamed_reading_is_linear_in_one_huge_query(tmp_path, monkeypatch):
    """One query spanning many blocks: each line is looked at a bounded number of times (the old reader
    re-scanned the whole buffer after every block: quadratic)."""
    from ulnorm_eval.inputs import block_reader as blocks

    n = 20000
    r = tmp_path / "one.run"
    r.write_text("".join(f"q1 Q0 d{i} {i} {n - i} A\n" for i in range(n)) + "q2 Q0 d0 1 1 A\n")
    calls = []
    # private: counts the query-id parses, the quadratic rescan this test guards against
    real = blocks._qid
    monkeypatch.setattr(blocks, "_qid", lambda line: calls.append(1) or real(line))
    got = list(blocks.query_blocks(str(r), block_bytes=256))
    assert [len(b.splitlines()) for b, _ in got] == [n, 1] and [ln for _, ln in got] == [1, n + 1]
    assert len(calls) < 2 * n


def _old_query_blocks(data: bytes, block_bytes: int):
    """The previous (quadratic) reader, kept as the reference for the block boundaries."""
    def qid(line):
        parts = line.split(None, 1)
        if not parts or parts[0].startswith(b"#"):
            return None
        return parts[0].removeprefix(b"\xef\xbb\xbf")

    def tail_start(d, end):
        last, pos = None, end
        while pos > 0:
            start = d.rfind(b"\n", 0, pos - 1) + 1
            q = qid(d[start:pos])
            if q is not None:
                if last is None:
                    last = q
                elif q != last:
                    return pos
            pos = start
        return 0

    carry, line, out, i = b"", 1, [], 0
    while True:
        chunk = data[i:i + block_bytes]
        i += block_bytes
        if not chunk:
            if carry.strip():
                out.append((carry, line))
            return out
        d = carry + chunk
        end = d.rfind(b"\n") + 1
        cut = tail_start(d, end) if end else 0
        if cut == 0:
            carry = d
            continue
        block, carry = d[:cut], d[cut:]
        out.append((block, line))
        line += block.count(b"\n")


def test_block_boundaries_equal_the_previous_reader(tmp_path):
    """query_blocks cuts where the previous reader cut; run_blocks reads an input shorter than a
    block in one piece: the single block (and line 1) that joining those two blocks gives."""
    from hypothesis import HealthCheck, given, settings, strategies as st

    from ulnorm_eval.inputs import block_reader as blocks

    line = st.one_of(st.sampled_from(["q1", "q2", "q3", "q10"]).map(lambda q: f"{q} Q0 d 1 1 A"),
                     st.sampled_from(["", "# note", "   ", "\t \t", " " * 70, "\n" * 150]))

    @settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(line, min_size=1, max_size=40), st.integers(1, 600), st.booleans())
    def check(lines, block, final_newline):
        data = ("\n".join(lines) + ("\n" if final_newline else "")).encode()
        p = tmp_path / "r"
        p.write_bytes(data)
        old = _old_query_blocks(data, block)
        assert list(blocks.query_blocks(str(p), block_bytes=block)) == old
        if len(old) == 2 and len(old[0][0]) + len(old[1][0]) <= block:
            old = [(old[0][0] + old[1][0], old[0][1])]
        assert list(blocks.run_blocks(str(p), block)) == old
        if len(data) < block:
            assert len(old) <= 1

    check()


# --------------------------------------------------------------------------- the hostile matrix
# A few hundred bad inputs and options through every command: exit 2, every stderr line a
# `ulnorm-eval: ` line (the error last), nothing on stdout, inputs unchanged, no stray files.

def _hostile_files(d) -> dict:
    import bz2
    import gzip
    import lzma
    import random

    d.mkdir()
    rng = random.Random(12)
    valid_gz = gzip.compress(RUN_A.encode())
    blobs = {
        "empty": b"",
        "blank": b"\n\n  \n\t\n",
        "comments": b"# nothing\n# here\n",
        "nul": b"q1 Q0 d1\x00 1 1.0 A\n",
        "binary": bytes(rng.randrange(256) for _ in range(3000)),
        "utf16": RUN_A.encode("utf-16"),
        "utf16be": RUN_A.encode("utf-16-be"),
        "utf32": QRELS.encode("utf-32"),
        "latin1": "q1 Q0 d\xe9 1 1.0 A\nq1 0 d\xe9 1\n".encode("latin-1"),
        "lone_cr": b"q1 Q0 d1 1 1.0 A\rq1 Q0 d2 2 0.5 A\n",
        "cr_only": RUN_A.replace("\n", "\r").encode(),
        "one_field": b"q1\n",
        "three_fields": b"q1 0 d1\n",
        "five_fields": b"q1 Q0 d1 1 1.0\n",
        "score_word": b"q1 Q0 d1 1 high A\n",
        "score_nan": b"q1 Q0 d1 1 nan A\n",
        "score_inf": b"q1 Q0 d1 1 1e999 A\n",
        "score_huge_digits": b"q1 Q0 d1 1 " + b"9" * 400 + b"e999 A\n",
        "grade_word": b"q1 0 d1 yes\n",
        "grade_inf": b"q1 0 d1 inf\n",
        "grade_nan": b"q1 0 d1 nan\n",
        "grade_1e308": b"q1 0 d1 1e308\nq1 0 d2 1e308\nq1 0 d3 0\n",
        "all_qid_run": b"all Q0 d1 1 1.0 A\n",
        "all_qid_qrels": b"all 0 d1 1\n",
        "dup_run": b"q1 Q0 d1 1 1.0 A\nq1 Q0 d1 2 0.5 A\n",
        "dup_qrels": b"q1 0 d1 1\nq1 0 d1 0\n",
        "disjoint_run": b"zz Q0 d1 1 1.0 A\n",
        "letor_bad_qid": b"1 qid: 1:0.5\n",
        "letor_grade": b"x qid:1 1:0.5\n",
        "letor_mixed": b"1 qid:1 1:0.5\n0 1:0.3\n",
        "gz_truncated": valid_gz[: len(valid_gz) // 2],
        "gz_corrupt": valid_gz[:12] + b"\xff" * 8 + valid_gz[20:],
        "gz_garbage": b"\x1f\x8b" + bytes(rng.randrange(256) for _ in range(200)),
        "gz_in_gz": gzip.compress(valid_gz),
        "gz_of_nul": gzip.compress(b"\x00" * 100000),
        "bz2_truncated": bz2.compress((RUN_A * 20).encode())[:40],
        "xz_truncated": lzma.compress((RUN_A * 20).encode())[:40],
        "zstd": b"\x28\xb5\x2f\xfd" + bytes(16),
        "zip": b"PK\x03\x04" + bytes(40),
        "7z": b"7z\xbc\xaf\x27\x1c" + bytes(40),
        "long_line": b"q1 Q0 " + b"d" * (2 << 20) + b" 1 1.0 A\n",
        "ansi": b"\x1b[31mq1 Q0 d1 1 1.0 A\n",
    }
    out = {}
    for name, data in blobs.items():
        (d / name).write_bytes(data)
        out[name] = str(d / name)
    (d / "adir").mkdir()
    out["directory"] = str(d / "adir")
    out["missing"] = str(d / "missing")
    (d / "loop").symlink_to(d / "loop")
    out["symlink_loop"] = str(d / "loop")
    (d / "dangling").symlink_to(d / "nowhere")
    out["dangling"] = str(d / "dangling")
    out["through_file"] = str(d / "empty") + "/x"
    out["dev_zero"] = "/dev/zero"
    out["dev_null"] = "/dev/null"
    return out


ROLES = {
    # command -> how a hostile file H and good files G enter it
    "eval-qrels": lambda H, G: [H, G["a.run"]],
    "eval-run": lambda H, G: [G["qrels"], H],
    "eval-run-no-stream": lambda H, G: ["--no-stream", G["qrels"], H],
    "eval-baseline": lambda H, G: ["--baseline", H, G["qrels"], G["a.run"]],
    "compare-qrels": lambda H, G: ["compare", H, G["a.run"], G["b.run"]],
    "compare-run": lambda H, G: ["compare", G["qrels"], G["a.run"], H],
    "queries-qrels": lambda H, G: ["queries", H],
    "queries-run": lambda H, G: ["queries", G["qrels"], H],
    "nrg-run": lambda H, G: ["nrg", G["qrels"], H],
    "nrg-prior": lambda H, G: ["nrg", "--prior", H, G["qrels"], G["a.run"]],
}

# inputs that are fine in some roles (a run file is no qrels and vice versa, but a valid run as a run is valid)
NOT_AN_ERROR = {
    ("dup_qrels", r) for r in ROLES if not r.endswith("qrels")} | {
    ("disjoint_run", r) for r in ("queries-qrels", "eval-qrels", "compare-qrels")} | {
    ("grade_1e308", r) for r in ROLES if not r.endswith("qrels")} | {
    ("all_qid_qrels", r) for r in ROLES if not r.endswith("qrels")} | {
    ("latin1", r) for r in ROLES} | {
    # not refused there (yet): compare and nrg do not check that runs share queries with the qrels
    (f, r) for f in ("disjoint_run", "ansi") for r in ("compare-run", "queries-run", "nrg-run", "nrg-prior")}  # bytes are ids; latin-1 is invalid UTF-8: refused or not, never a traceback


def _state(d) -> dict:
    out = {}
    for p in sorted(d.rglob("*")):
        if p.is_symlink() or not p.is_file():
            out[str(p)] = "node"
        else:
            out[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def test_hostile_inputs_in_every_command(tmp_path, files):
    hostile = _hostile_files(tmp_path / "h")
    failures = []
    before = _state(tmp_path)
    n = 0
    for name, path in hostile.items():
        for role, make in ROLES.items():
            res = cli(*make(path, files))
            n += 1
            lines = res.stderr.splitlines()
            tolerated = (name, role) in NOT_AN_ERROR and res.exit_code in (0, 2)
            ok = ("Traceback" not in res.stderr and res.exception is None or isinstance(res.exception, SystemExit))
            ok = ok and (tolerated or (res.exit_code == 2 and res.stdout == "" and lines
                                       and all(ln.startswith("ulnorm-eval: ") and "internal error" not in ln for ln in lines)))
            if not ok:
                failures.append((name, role, res.exit_code, res.stderr[-300:]))
    assert _state(tmp_path) == before
    assert not failures, failures[:5]
    assert n >= 400


BAD_OPTIONS = [
    ["-l", "nan"], ["-l", "x"], ["-M", "0"], ["-M", "-3"], ["-M", "1e3"], ["-m", ""], ["-m", "nDCG@"],
    ["-m", "nDCG@-1"], ["-m", "UL9(AP)"], ["-m", "AP("], ["-m", "\x00"], ["-m", "P.5,x"], ["--norm", "bogus"],
    ["--norm", ""], ["--precision", "99"], ["--precision", "-1"], ["-f", "xml"], ["--ties", "x"],
    ["--permutations", "0"], ["--seed", "x"], ["--seed", "1e400"], ["--pool", "x"], ["--undefined", "x"],
    ["-o", ""], ["-o", "/nonexistent/dir/x"], ["-o", "/proc/sys/x"],
    ["--no-such-option"], ["-m", "RBP(p=nan)"], ["-m", "RBP(p=1.5)"], ["-m", "nDCG(dcg='x')@10"],
    ["-m", "P@" + "9" * 5000], ["-m", "AP@-1"], ["-m", "P@0"], ["--score-precision", "float16"], ["--expectation", "x"],
    ["--allow-disjoint", "-l", "inf"], ["--allow-disjoint=yes"],
]
NOT_COMPARE = [["-f", "markdown"], ["-f", "latex"]]  # compare has them (paper tables); the others do not
NOT_EVAL = [["-J"]]  # trec_eval's judged-only flag: eval has it, the others do not
EVAL_ONLY = [
    ["--head", "0"], ["--sort", "Bogus"], ["--fail-below", "AP"], ["--fail-below", "AP=x"],
    ["--fail-below", "AP=inf"], ["--fail-below", "Nope=0.1"], ["--alpha", "0.1"], ["--max-drop", "-1"],
    ["--baseline", "/nonexistent"], ["--names", "x"], ["--stream", "--ties", "rank"],
    ["--test", "bootstrap"], ["--test", "wilcoxon"], ["--test", "bootstrap", "--max-drop", "nan"],
]
COMPARE_ONLY = [["--alpha", "2"], ["--alpha", "nan"], ["--table", "x"], ["--test", "x"], ["--reps", "1"],
                ["--subset-size", "0"], ["--phi-target", "1"], ["--swap-trials", "0"], ["--correction", "x"]]
QUERIES_ONLY = [["--ideal-gap", "nan"], ["--hard-below", "x"], ["--easy-above", "inf"]]
NRG_ONLY = [*NOT_COMPARE, *NOT_EVAL, ["--leave-one-out", "--chronological"], ["--best-by", "AP"], ["--group-by", "("],
            ["-m", "AP@x"], ["--prior", "/nonexistent"]]


def test_hostile_options_in_every_command(tmp_path, files):
    cases = [(["eval"], o) for o in BAD_OPTIONS + EVAL_ONLY + NOT_COMPARE]
    cases += [(["compare"], o) for o in BAD_OPTIONS + COMPARE_ONLY + NOT_EVAL]
    cases += [(["queries"], o) for o in BAD_OPTIONS + QUERIES_ONLY + NOT_COMPARE + NOT_EVAL]
    cases += [(["nrg"], o) for o in [o for o in BAD_OPTIONS if o[0] not in ("--pool", "--undefined", "--permutations",
                                                                               "--expectation", "-n")]
              + NRG_ONLY]
    before = _state(tmp_path)
    failures = []
    for command, opts in cases:
        args = [*command, *opts, files["qrels"], files["a.run"], files["b.run"]]
        if opts[:1] == ["--stream"]:  # --ties rank on a run whose rank column is text
            bad = tmp_path / "rank.run"
            bad.write_text("q1 Q0 d1 first 1.0 A\n")
            args[-2:] = [str(bad)]
        res = cli(*args)
        lines = res.stderr.splitlines()
        if not (res.exit_code == 2 and "Traceback" not in res.stderr and res.stdout == "" and lines
                and all(ln.startswith("ulnorm-eval: ") and "internal error" not in ln for ln in lines)):
            failures.append((command, opts, res.exit_code, res.stderr[-300:], res.stdout[:100]))
        (tmp_path / "rank.run").unlink(missing_ok=True)
    assert _state(tmp_path) == before
    assert not failures, [f[:3] for f in failures]
    assert len(cases) >= 150


def test_hostile_fifo_input(tmp_path, files):
    import threading

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(b"q1 Q0 d1\x00 1 1 A\n" * 10), daemon=True)
    writer.start()
    one_line_error(cli("--no-stream", files["qrels"], fifo), f"{fifo}:1: NUL byte: binary data, not a text file")
    writer.join(timeout=30)


@pytest.mark.parametrize("flag, hint", [
    ("--Judged_docs_only", "is -J/--judged-only here"),
    ("--Zscore", "is -Z here"),
    ("--Rel_info_format", "is -R here (qrels only)"),
    ("--query_eval_wanted", "is -q here"),
    ("-v", "(version) is --version here"),
])
def test_trec_eval_flags_name_our_equivalent(files, flag, hint):
    one_line_error(cli(flag, files["qrels"], files["a.run"]),
                   f"No such option {flag!r}: trec_eval's {flag} {hint} (see 'ulnorm-eval eval --help')")


def test_measures_command_with_bad_options():
    one_line_error(cli("measures", "--bogus"), "No such option '--bogus'. (see 'ulnorm-eval measures --help')")
    one_line_error(cli("measures", "extra", "more"), "Got unexpected extra argument (more) (see 'ulnorm-eval measures --help')")


def test_a_closed_stdout_exits_141_not_the_gate_code(files):
    """The reader of stdout gone (`| head`): exit 141, never 1 (a failed gate), whether the error
    comes from click's own output or the command's."""
    import subprocess
    import sys

    for args in (["measures"], [files["qrels"], files["a.run"]]):
        # the command as users start it (not a `python -c` program embedding main(), whose interpreter shutdown
        # can abort in Arrow's threads: apache/arrow#34314)
        p = subprocess.Popen([sys.executable, "-m", "ulnorm_eval", *args],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        p.stdout.close()  # no reader at all: the first write fails
        _, err = p.communicate(timeout=120)
        assert p.returncode == 141 and b"Traceback" not in err, (args, p.returncode, err)


def test_stdin_left_unread_at_an_error_ends_cleanly(tmp_path, files):
    """A run on standard input is read in the command's own thread: an error in another run while
    stdin is still open ends with exit 2, not an aborted interpreter shutdown.

    Started as a program embedding the command (``python -c`` calling ``main()``), on purpose: the command's
    own process leaves by os._exit (cli/guard._exit_now), so only a program that goes through the interpreter's
    shutdown afterwards (a notebook, a script calling ``main()``) can show a reader still blocked on stdin.
    """
    import subprocess
    import sys

    dup = tmp_path / "dup.run"
    dup.write_text(RUN_A + RUN_A.splitlines()[0] + "\n")
    feeder = subprocess.Popen(["sh", "-c", f"cat {files['a.run']}; sleep 2"], stdout=subprocess.PIPE)
    res = subprocess.run([sys.executable, "-c", "from ulnorm_eval.cli import main; main()", "compare",
                          files["qrels"], str(dup), "-"], stdin=feeder.stdout, capture_output=True, text=True,
                         timeout=120)
    feeder.stdout.close()
    feeder.wait()
    assert res.returncode == 2 and "Fatal" not in res.stderr and "duplicate document" in res.stderr


@pytest.mark.parametrize("rank, reason", [
    ("+1", None), ("-0", None), ("07", None),
    ("1_0", "is not a decimal integer (ASCII digits, optional sign)"),
    ("\u0663", "is not a decimal integer (ASCII digits, optional sign)"),
    ("3\u00a0", "is not a decimal integer (ASCII digits, optional sign)"),
    ("0x9", "is not a decimal integer (ASCII digits, optional sign)"),
    ("1e1", "is not a decimal integer (ASCII digits, optional sign)"),
    ("9223372036854775808", "is too large"),
])
def test_ties_rank_reads_decimal_integers_only(tmp_path, files, rank, reason):
    """Python's int() took 1_0, Arabic-Indic digits and a trailing NBSP (then Arrow failed: internal
    error); Arrow read 0x9 as 9.  trec_eval ignores the rank column; --ties rank is ours."""
    run = tmp_path / "r.run"
    run.write_text(f"q1 Q0 d2 {rank} 1.0 A\nq1 Q0 d1 9 1.0 A\nq2 Q0 d3 1 1.0 A\n", encoding="utf-8")
    for stream in ("--stream", "--no-stream"):
        res = cli(stream, "--ties", "rank", "-m", "P@1", "--norm", "none", "-q", files["qrels"], run)
        if reason is None:  # d2 (non-relevant) ranked first: q1 scores 0
            assert res.exit_code == 0 and "P@1\tq1\t0.0000" in res.stdout, res.stderr
        else:
            one_line_error(res, f"{run}:1: rank {rank!r} {reason} (--ties rank)")


@pytest.mark.parametrize("sort", ["relstring", "runid", "-relstring", "relstring.10"])
def test_sort_by_a_text_measure_is_refused(files, sort):
    res = cli("-m", "P@1", "--norm", "none", "--sort", sort, files["qrels"], files["a.run"])
    assert "is text (trec_eval's" in one_line_error(res)


@pytest.mark.parametrize("command", ["eval", "compare", "queries"])
def test_permutations_are_bounded(files, command):
    res = cli(command, "--permutations", "99999999999999999999999", files["qrels"], files["a.run"], files["b.run"])
    assert "is not in the range 10<=x<=1000000" in one_line_error(res)


def test_ir_measures_parameters_are_checked_when_parsed(files):
    """ir_measures asserts on a bad parameter only when computing: an internal error."""
    res = cli("-m", "INST(T=1,max_rel=3)", files["qrels"], files["a.run"])
    one_line_error(res, "INST(T=1,max_rel=3): ir_measures refuses its parameters: invalid param T=1")
    res = cli("-m", "INST(T=1.0)", "--norm", "none", files["qrels"], files["a.run"])  # max_rel missing
    assert "INST: ir_measures cannot compute it: invalid param max_rel=" in one_line_error(res)


# --------------------------------------------------------------------------- silent misreads: summ

DOCS_TSV, SYS_A = SUMM_DOCS, SUMM_SYSTEM_A


@pytest.fixture
def summ_files(tmp_path):
    (tmp_path / "docs.tsv").write_text(DOCS_TSV)
    (tmp_path / "sysA.tsv").write_text(SYS_A)
    return str(tmp_path / "docs.tsv"), str(tmp_path / "sysA.tsv")


def _summ_rows(out: str) -> dict:
    lines = [x.split("\t") for x in out.strip().split("\n")]
    return {(r[0], r[1]): r[2:] for r in lines[1:]}


def test_summ_reads_standard_input_once(summ_files):
    """`summ docs.tsv - < sysA.tsv` read stdin once to sniff it and again to parse it: `ROUGE-1 all nan`."""
    docs, sys_a = summ_files
    want = _summ_rows(cli("summ", "-f", "tsv", "-m", "ROUGE-1", "--norm", "none", docs, sys_a).stdout)
    assert float(want[("sysA", "all")][0]) == pytest.approx((2 / 3 + 0.8) / 2)
    res = cli("summ", "-f", "tsv", "-m", "ROUGE-1", "--norm", "none", docs, "-", input=SYS_A)
    assert res.exit_code == 0, res.stderr
    got = _summ_rows(res.stdout)
    assert got == {("-", q): v for (_, q), v in want.items()}
    res = cli("summ", "-f", "tsv", "-m", "ROUGE-1", "--norm", "none", "-", sys_a, input=DOCS_TSV)
    assert res.exit_code == 0, res.stderr
    assert _summ_rows(res.stdout) == want
    one_line_error(cli("summ", "-", "-", input=DOCS_TSV),
                   "-: standard input can be read once, and QRELS counts: give the other inputs as files")


def test_summ_system_file_without_summaries_is_refused(summ_files, tmp_path):
    (tmp_path / "empty.tsv").write_text("\n")
    one_line_error(cli("summ", summ_files[0], tmp_path / "empty.tsv"), f"{tmp_path / 'empty.tsv'}: no summaries")


def _summeval(tmp_path, did="doc0", rating=3, reference="the storm hit the town", text="storm town road river"):
    ann = [{"coherence": 3, "consistency": 4, "fluency": 5, "relevance": rating}]
    rows = [{"id": did, "decoded": "storm town", "expert_annotations": ann, "turker_annotations": ann,
             "references": [reference], "model_id": f"M{s}", "text": text} for s in range(2)]
    p = tmp_path / "se.jsonl"
    import json

    # json.dumps writes NaN and Infinity as the literals Python's json reads back (and other tools write)
    p.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return str(p)


def test_summeval_document_all_is_refused_as_eval_refuses_query_all(tmp_path, summ_files):
    p = _summeval(tmp_path, did="all")
    one_line_error(cli("summ", p), f"{p}:1: document id 'all' is reserved for the summary row (rename the document)")
    (tmp_path / "d.tsv").write_text("all\tstorm town\tstorm\n")
    one_line_error(cli("summ", tmp_path / "d.tsv", summ_files[1]),
                   f"{tmp_path / 'd.tsv'}:1: document id 'all' is reserved for the summary row (rename the document)")


@pytest.mark.parametrize("rating, reason", [
    (float("nan"), "relevance rating nan is not a finite number"),
    (float("inf"), "relevance rating inf is not a finite number"),
    (float("-inf"), "relevance rating -inf is not a finite number"),
    (1e308, "relevance rating 1e+308 is outside SummEval's 1-5 scale"),
    (-1, "relevance rating -1 is outside SummEval's 1-5 scale"),
    (0, "relevance rating 0 is outside SummEval's 1-5 scale"),
    (5.5, "relevance rating 5.5 is outside SummEval's 1-5 scale"),
    ("4", "non-numeric relevance rating '4'"),
    (True, "non-numeric relevance rating True"),
])
def test_summeval_ratings_must_be_finite_and_on_the_scale(tmp_path, rating, reason):
    p = _summeval(tmp_path, rating=rating)
    for args in (["--correlate", "--bootstrap", "0"], []):  # read, not only when correlated
        one_line_error(cli("summ", "-m", "ROUGE-1", "--norm", "none", *args, p), f"{p}:1: {reason}")


def test_summeval_ratings_on_the_scale_are_read(tmp_path):
    from ulnorm_eval.inputs.summaries import read_summaries

    for r in (1, 5, 2.5):
        assert read_summaries(_summeval(tmp_path, rating=r)).ratings["expert"]["relevance"] == [[r], [r]]


def test_summeval_ratings_stored_as_a_python_literal_are_read(tmp_path):
    """Some copies of SummEval store the crowd ratings as a Python literal (a string)."""
    import json

    from ulnorm_eval.inputs.errors import InputError
    from ulnorm_eval.inputs.summaries import read_summaries

    p = tmp_path / "se.jsonl"
    for stored, want in ((str([{"relevance": 2}, {"relevance": 3}]), [[2.5], [2.5]]), ("[{'relevance': 2", None)):
        p.write_text("".join(json.dumps({"id": "d", "decoded": "storm", "turker_annotations": stored, "references": ["a storm"],
                                         "model_id": f"M{s}", "text": "storm town"}) + "\n" for s in range(2)))
        if want is None:
            with pytest.raises(InputError) as err:
                read_summaries(str(p))
            assert (err.value.line, err.value.reason) == (1, "annotations not a list of ratings")
        else:
            assert read_summaries(str(p)).ratings["crowd"]["relevance"] == want


def test_empty_reference_or_source_is_refused(tmp_path, summ_files):
    sys_a = summ_files[1]
    cases = [("d1\tthe cat sat\t\nd2\tstorms\tstorms\n", "1: reference 1 is empty"),
             ("d1\tthe cat sat\tthe cat\t  \nd2\tstorms\tstorms\n", "1: reference 2 is empty"),
             ("d1\tthe cat sat\tthe cat\nd2\t \tstorms\n", "2: the source document is empty (E is drawn from its words)")]
    for text, reason in cases:
        (tmp_path / "d.tsv").write_text(text)
        one_line_error(cli("summ", tmp_path / "d.tsv", sys_a), f"{tmp_path / 'd.tsv'}:{reason}")
    import json

    (tmp_path / "d.jsonl").write_text(json.dumps({"id": "d1", "source": "a b", "references": ["x", ""]}) + "\n")
    one_line_error(cli("summ", tmp_path / "d.jsonl", sys_a), f"{tmp_path / 'd.jsonl'}:1: reference 2 is empty")
    p = _summeval(tmp_path, reference=" ")
    one_line_error(cli("summ", p), f"{p}:1: reference 1 is empty")


def test_reference_without_rouge_tokens_is_refused(tmp_path):
    """rouge-score's tokeniser keeps a-z and 0-9 only: a Chinese reference had no token and every
    summary scored 0 (E 0), printed as results."""
    (tmp_path / "d.tsv").write_text("d1\t中文 文本\t中文\n")
    (tmp_path / "s.tsv").write_text("d1\t中文\n")
    why = "(rouge-score's tokeniser keeps only the letters a-z and the digits 0-9)"
    one_line_error(cli("summ", tmp_path / "d.tsv", tmp_path / "s.tsv"),
                   f"{tmp_path / 'd.tsv'}: document 'd1': reference 1 has no word ROUGE counts {why}")
    (tmp_path / "d.tsv").write_text("d1\t...\tthe cat\n")
    (tmp_path / "s.tsv").write_text("d1\tthe cat\n")
    one_line_error(cli("summ", tmp_path / "d.tsv", tmp_path / "s.tsv"),
                   f"{tmp_path / 'd.tsv'}: document 'd1': the source has no word ROUGE counts, so E (drawn from "
                   f"its words) is undefined {why}")
    res = cli("summ", "-f", "tsv", "--norm", "none", "-m", "ROUGE-1", tmp_path / "d.tsv", tmp_path / "s.tsv")
    assert res.exit_code == 0 and _summ_rows(res.stdout)[("s", "all")] == ["1.0"]  # no E asked: no source needed


def test_exact_e_has_standard_error_zero_not_nan(summ_files):
    """One document with a single reference (ROUGE-1's E exact under --combine max) and one with two
    (E by Monte Carlo): the SE column held NaN for the exact one and the 'all' row averaged the rest."""
    docs, sys_a = summ_files
    import pathlib

    pathlib.Path(docs).write_text("d1\tthe cat sat on the mat today\tthe cat sat\n"
                                  "d2\tstorms flooded the town\tstorms hit the town\ttown flooded\n")
    res = cli("summ", "-f", "tsv", "-m", "E(ROUGE-1)", "--norm", "none", docs, sys_a)
    assert res.exit_code == 0, res.stderr
    head = res.stdout.split("\n")[0].split("\t")
    rows = _summ_rows(res.stdout)
    se = head.index("SE(E(ROUGE-1))") - 2
    assert float(rows[("sysA", "d1")][se]) == 0.0
    d2 = float(rows[("sysA", "d2")][se])
    assert d2 > 0
    assert float(rows[("sysA", "all")][se]) == pytest.approx(d2 / 2)
    assert "nan" not in res.stdout.lower()
    # all exact: no SE column at all
    res = cli("summ", "-f", "tsv", "-m", "E(ROUGE-1)", "--norm", "none", "--combine", "mean", docs, sys_a)
    assert "SE(" not in res.stdout


@pytest.mark.parametrize("undefined, how", [
    ("zero", "0 per document and in the 'all' row, --undefined"),
    ("skip", None)])
def test_summ_reports_undefined_documents(tmp_path, undefined, how):
    """A document whose E equals I (source = reference = summary = one word) has UE1/UE2 undefined:
    the note says so (one document) and what the rule did with it; the 'all' row, a mean of per-document
    values, counts it 0 (--undefined zero) or leaves it out (skip)."""
    (tmp_path / "d.tsv").write_text("d1\tstorm\tstorm\nd2\tstorms flooded the town\tstorms hit the town\n")
    (tmp_path / "s.tsv").write_text("d1\tstorm\nd2\tstorms\n")
    res = cli("summ", "-f", "tsv", "-m", "ROUGE-1", "--norm", "ue1,ue2", "--undefined", undefined,
              tmp_path / "d.tsv", tmp_path / "s.tsv")
    assert res.exit_code == 0, res.stderr
    assert res.stderr == (f"ulnorm-eval: s: UE1 and UE2 undefined for 1 document of 1 measure ({how})\n" if how else  # short
                          "ulnorm-eval: s: undefined values: UE1 and UE2 of ROUGE-1 for 1 document (left out per document and "
                          "of the 'all' row: --undefined skip)\n")  # whole: it fits in 200 characters
    rows = _summ_rows(res.stdout)
    ue2_d2 = float(rows[("s", "d2")][2])
    assert float(rows[("s", "all")][2]) == pytest.approx(ue2_d2 / 2 if undefined == "zero" else ue2_d2)


def test_summ_errors_escape_control_characters(tmp_path, summ_files):
    bad = tmp_path / "bad\x1b[31mname.tsv"
    bad.write_text("d1\tx\n")
    res = cli("summ", "--systems", "zz", summ_files[0], bad)
    line = one_line_error(res)
    assert "\x1b" not in res.stderr and "bad\\x1b[31mname" in line


# --------------------------------------------------------------------------- silent misreads: library, -l

def _frames():
    import pandas as pd

    qrels = pd.DataFrame({"query_id": ["1", "1", "2"], "doc_id": ["a", "b", "c"], "relevance": [1, 0, 1]})
    run = pd.DataFrame({"query_id": [1.0, 1.0, 2.0], "doc_id": ["a", "b", "c"], "score": [2.0, 1.0, 1.0]})
    return qrels, run


FLOAT_IDS = ("shares no query with <qrels> (the run has '1.0', '2.0'): the wrong qrels? Query ids are compared "
             "as text, exactly: the run's '1.0' is not the qrels' '1' (a float or zero-padded id column? convert "
             "both to the same text first) (--allow-disjoint evaluates it anyway, scoring 0)")


def test_library_refuses_a_disjoint_run_as_the_cli_does():
    """A float query-id column against string qrels ids gave means of 0 and a note."""
    import ulnorm_eval as ue
    from ulnorm_eval.inputs.errors import InputError

    qrels, run = _frames()
    calls = [(lambda: ue.evaluate(qrels, run, ["P@1"], []), "run"),
             (lambda: ue.evaluate(qrels, {"bm25": run}, ["P@1"], []), "bm25"),
             (lambda: ue.compare(qrels, [run, run], ["P@1"], []), "run1"),
             (lambda: ue.nrg(qrels, [run], [run], ["P@1"]), "run")]  # refused as read: before #1, #2 name them apart
    for call, name in calls:
        with pytest.raises(InputError) as exc:
            call()
        assert str(exc.value) == f"{name}: {FLOAT_IDS}"
    # asked for: evaluated, scoring 0, with the notes
    ev = ue.evaluate(qrels, run, ["P@1"], [], allow_disjoint=True)
    assert ev.means == {"run": {"P@1": 0.0}}
    # the same ids as text: evaluated (P@1 of q1 = 1 (a), q2 = 1 (c))
    assert ue.evaluate(qrels, run.assign(query_id=["1", "1", "2"]), ["P@1"], []).means == {"run": {"P@1": 1.0}}


def test_cli_names_the_number_mismatch_too(tmp_path, files):
    (tmp_path / "r").write_text("1.0 Q0 a 1 2 t\n")
    (tmp_path / "q").write_text("1 0 a 1\n")
    one_line_error(cli(tmp_path / "q", tmp_path / "r"),
                   f"{tmp_path / 'r'}: " + FLOAT_IDS.replace("<qrels>", str(tmp_path / "q"))
                   .replace("'1.0', '2.0'", "'1.0'"))
    (tmp_path / "r").write_text("x Q0 a 1 2 t\n")  # no number in common: no hint
    one_line_error(cli(tmp_path / "q", tmp_path / "r"),
                   f"{tmp_path / 'r'}: shares no query with {tmp_path / 'q'} (the run has 'x'): the wrong qrels? "
                   "(--allow-disjoint evaluates it anyway, scoring 0)")


def test_library_variants_given_as_one_string():
    """variants='UL2' was iterated per character (variant 'U')."""
    import ulnorm_eval as ue

    qrels, run = _frames()
    run = run.assign(query_id=["1", "1", "2"])

    def names(ev):
        return [str(m) for m in ev.metrics]

    assert names(ue.evaluate(qrels, run, ["P@1"], "UL2")) == names(ue.evaluate(qrels, run, ["P@1"], ["UL2"])) \
        == ["P@1", "UL2(P@1)"]
    assert names(ue.evaluate(qrels, run, ["P@1"], "E, UL2")) == ["P@1", "E(P@1)", "UL2(P@1)"]
    assert names(ue.evaluate(qrels, run, ["P@1"], "none")) == ["P@1"]
    cmp = ue.compare(qrels, {"a": run, "b": run}, ["P@1"], "UL2")
    assert [str(m) for m in cmp.metrics] == ["P@1", "UL2(P@1)"]
    with pytest.raises(ValueError, match="no variant named"):
        ue.evaluate(qrels, run, ["P@1"], " , ")


def test_library_query_id_all_and_missing_ids_are_refused():
    import pandas as pd

    import ulnorm_eval as ue
    from ulnorm_eval.inputs.errors import InputError

    qrels, run = _frames()
    run = run.assign(query_id=["1", "1", "2"])
    bad_q = pd.DataFrame({"qid": ["1", "all"], "docno": ["a", "b"], "label": [1, 1]})
    for args, msg in (((bad_q, run), "<qrels>: row 1: query id 'all' is reserved for the summary row (rename the query)"),
                      ((qrels, run.assign(query_id=["1", "all", "2"])),
                       "run: row 1: query id 'all' is reserved for the summary row (rename the query)"),
                      ((qrels, {"all": {"a": 1.0}, "1": {"a": 2.0}}),
                       "run: row 0: query id 'all' is reserved for the summary row (rename the query)"),
                      ((qrels, run.assign(query_id=["1", None, "2"])), "run: row 1: query_id: missing query id (NaN or None)"),
                      ((qrels, run.assign(doc_id=["a", float("nan"), "c"])),
                       "run: row 1: doc_id: missing document id (NaN or None)")):
        with pytest.raises(InputError) as exc:
            ue.evaluate(*args, ["P@1"], [])
        assert str(exc.value) == msg


@pytest.mark.parametrize("level", ["-1", "-0.5", "-1e-9"])
def test_relevance_level_below_zero_is_refused(files, level):
    """-l -1 gave num_rel_ret 4 > num_rel 2 and bpref 2.0 (trec_eval's codes: unjudged is -1)."""
    from ulnorm_eval.pipeline.blocks import LEVEL_BELOW_ZERO

    for command in (["eval"], ["compare"], ["queries"], ["nrg"]):
        extra = [files["b.run"]] if command != ["eval"] else []
        one_line_error(cli(*command, "-l", level, files["qrels"], files["a.run"], *extra),
                       f"Invalid value for '-l' / '--rel-level': {level!r}: {LEVEL_BELOW_ZERO} "
                       f"(see 'ulnorm-eval {command[0]} --help')")
    import ulnorm_eval as ue

    with pytest.raises(ValueError, match="relevance level below 0"):
        ue.evaluate(files["qrels"], files["a.run"], ["P@1"], [], rel_level=float(level))


def test_relevance_level_zero_is_trec_evals(tmp_path):
    """-l 0: every judged document (grade >= 0) is relevant, unjudged and negative grades never; the
    counts stay consistent (num_rel_ret <= num_rel, bpref <= 1).  trec_eval 10 on these files gives
    num_rel 4, num_rel_ret 4, map 1.0, bpref 1.0, P_5 0.4."""
    (tmp_path / "q").write_text("q1 0 d1 1\nq1 0 d2 0\nq1 0 d5 -1\nq2 0 d3 1\nq2 0 d4 0\n")
    (tmp_path / "r").write_text("q1 Q0 d1 1 2.0 A\nq1 Q0 d2 2 1.0 A\nq1 Q0 d9 3 0.5 A\nq1 Q0 d5 4 0.4 A\n"
                                "q2 Q0 d4 1 2.0 A\nq2 Q0 d3 2 1.0 A\n")
    res = cli("-l", "0", "-f", "tsv", "--norm", "none", "-m", "num_rel num_rel_ret bpref map P.5", tmp_path / "q",
              tmp_path / "r")
    assert res.exit_code == 0, res.stderr
    lines = [x.split("\t") for x in res.stdout.strip().split("\n")]
    rows = {c: float(v) for c, v in zip(lines[0][2:], next(r for r in lines if r[1] == "all")[2:])}
    assert rows == {"NumRel": 4.0, "NumRelRet": 4.0, "Bpref": 1.0, "AP": 1.0, "P@5": 0.4}


# --------------------------------------------------------------------------- silent misreads: Markdown, LaTeX

HOSTILE_NAME = "`x`*y*_u_[l](http:e)<img src=x>|z&amp;$m$:+1:#1~s~\\q"


def _markdown_renderer():
    from markdown_it import MarkdownIt  # rich's Markdown parser: CommonMark, with GitHub's tables and ~~

    return MarkdownIt("commonmark").enable("table").enable("strikethrough")


def _plain_html(text: str) -> str:
    import html

    return html.escape(text, quote=False).replace('"', "&quot;")


def test_markdown_text_renders_as_written():
    """Every mix of Markdown and HTML specials renders (inline and in a table cell) as the text itself:
    no emphasis, code, link, image, raw HTML, entity or cell break."""
    import random

    from ulnorm_eval.render.values import markdown_text, safe_text

    md = _markdown_renderer()
    rnd = random.Random(7)
    alphabet = list("\\`*_{}[]<>()#!|~&$:+-.=@%^\"'/ ax1") + ["&amp;", "<img src=x>", "http://e.com", "**", "\n",
                                                              "&#42;", "[a]: /u", "<b>"]
    for _ in range(3000):
        s = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 12)))
        want = _plain_html(safe_text(s))
        assert md.renderInline(markdown_text(s)) == want, s
        table = md.render("| h |\n|-|\n| " + markdown_text(s) + " |\n")
        assert table.split("<td>")[1].split("</td>")[0] == want.strip(), s


def _cells(markdown: str, column: int) -> list:
    """The rendered text of one column of every table row (<td> cells) of a Markdown document."""
    html = _markdown_renderer().render(markdown)
    rows = [r.split("</tr>")[0] for r in html.split("<tr>")[1:]]
    return [r.split("<td")[column + 1].split(">", 1)[1].split("</td>")[0] for r in rows if "<td" in r]


def test_markdown_outputs_escape_run_names(tmp_path, files):
    """compare -f markdown, eval --summary-md and summ --summary-md escaped only '|': a run named with
    backticks, *, a link or raw HTML formatted the GitHub job summary."""
    run = tmp_path / HOSTILE_NAME
    run.write_text(RUN_A)
    from ulnorm_eval.render.values import safe_text

    want = _plain_html(safe_text(HOSTILE_NAME))  # its backslash doubled, as on a terminal
    res = cli("compare", "-f", "markdown", "-m", "P@1", "--norm", "none", files["qrels"], run, files["b.run"])
    assert res.exit_code == 0, res.stderr
    assert want in _cells(res.stdout, 1)
    res = cli("compare", "-f", "markdown", "-m", "P@1", "--norm", "none", "--baseline", run, files["qrels"], run,
              files["b.run"])
    assert res.exit_code == 0, res.stderr
    assert want + " (baseline)" in _cells(res.stdout, 0)
    caption = _markdown_renderer().render(res.stdout.split("\n\n", 1)[1])
    assert f"the baseline {want} (" in caption and "<img" not in caption
    md = tmp_path / "summary.md"
    res = cli("-m", "P@1", "--norm", "none", "--fail-below", "P@1=0.9", "--summary-md", md, files["qrels"], run)
    assert res.exit_code == 1
    text = md.read_text()
    assert _cells(text, 1)[0] == want  # the checks table's run column
    assert _cells(text, 0)[-1] == want  # the means table
    html = _markdown_renderer().render(text)
    for tag in ("<em>", "<code>", "<a ", "<img", "<del>", "<strong>"):
        assert tag not in html


def test_summ_summary_md_escapes_system_names(tmp_path, summ_files):
    sys_file = tmp_path / (HOSTILE_NAME + ".tsv")
    sys_file.write_text(SYS_A)
    md = tmp_path / "s.md"
    res = cli("summ", "-m", "ROUGE-1", "--norm", "none", "--fail-below", "ROUGE-1=0.99", "--summary-md", md,
              summ_files[0], sys_file)
    assert res.exit_code == 1, res.stderr
    from ulnorm_eval.render.values import safe_text

    assert _cells(md.read_text(), 1)[0] == _plain_html(safe_text(HOSTILE_NAME))


def test_latex_escapes_every_special(tmp_path, files):
    from ulnorm_eval.render.values import latex_text

    assert latex_text("a<b>c|d`e") == r"a\textless{}b\textgreater{}c\textbar{}d\textasciigrave{}e"
    assert latex_text("\\&%$#_{}~^") == (r"\textbackslash{}\textbackslash{}\&\%\$\#\_\{\}\textasciitilde{}\textasciicircum{}")
    assert latex_text("a\nb") == r"a\nb".replace("\\n", r"\textbackslash{}n")
    run = tmp_path / "<b>|x`"
    run.write_text(RUN_A)
    res = cli("compare", "-f", "latex", "-m", "P@1", "--norm", "none", files["qrels"], run, files["b.run"])
    assert res.exit_code == 0, res.stderr
    assert r"\textless{}b\textgreater{}\textbar{}x\textasciigrave{} &" in res.stdout
    assert "<b>" not in res.stdout


# --------------------------------------------------------------------------- fresh hostile pass: terminals, encodings

def _on_a_terminal(args, env_extra, cwd):
    """Run the console script with stdout on a pseudo-terminal; return (exit code, stdout bytes)."""
    import pty
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM", "COLUMNS")}
    env.update({"COLUMNS": "120", "PYTHONPATH": os.pathsep.join(sys.path)}, **env_extra)
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "ulnorm_eval", *map(str, args)], stdout=slave,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, cwd=cwd, env=env)
    os.close(slave)
    chunks = []
    while True:
        try:
            b = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not b:
            break
        chunks.append(b)
    os.close(master)
    proc.stderr.read()
    return proc.wait(timeout=120), b"".join(chunks)


@pytest.mark.parametrize("command", [["eval"], ["compare"]])
def test_no_color_and_dumb_terminals_get_no_escapes(files, command):
    """NO_COLOR (no-color.org) and TERM=dumb: the table on a terminal kept its ANSI bold/dim/red."""
    args = [*command, "-m", "P@2", files["qrels"], files["a.run"]] + ([files["b.run"]] if command == ["compare"] else [])
    code, out = _on_a_terminal(args, {"TERM": "xterm"}, os.path.dirname(files["qrels"]))
    assert code == 0 and b"\x1b[" in out  # the control: a colour terminal gets styles
    for env in ({"NO_COLOR": "1", "TERM": "xterm"}, {"TERM": "dumb"}):
        code, plain = _on_a_terminal(args, env, os.path.dirname(files["qrels"]))
        assert code == 0 and b"\x1b" not in plain and b"P@2" in plain, env


def test_an_encoding_that_cannot_write_a_name_is_named(tmp_path, files):
    """PYTHONIOENCODING=ascii and a run named with a non-ASCII letter: the encoding error was reported as
    'standard output: closed (>&-)'."""
    import subprocess
    import sys

    run = tmp_path / "rün.run"
    run.write_text(RUN_A)
    env = {**os.environ, "PYTHONIOENCODING": "ascii", "PYTHONPATH": os.pathsep.join(sys.path)}
    p = subprocess.run([sys.executable, "-m", "ulnorm_eval", "-f", "tsv", "-m", "P@1", "--norm", "none",
                        files["qrels"], run], capture_output=True, env=env, timeout=120)
    assert p.returncode == 2 and p.stdout == b""
    assert p.stderr.decode("ascii").strip() == (  # the character shown as \\xfc: ASCII, as the stream needs
        "ulnorm-eval: standard output: cannot write '\\xfc' in its encoding ascii (PYTHONIOENCODING or the "
        "locale): nothing was written; set PYTHONIOENCODING=utf-8 or give -o FILE (UTF-8)")


def test_summ_refuses_a_stray_carriage_return(tmp_path, summ_files):
    for name, text, line in (("docs_cr.tsv", "d1\tthe cat\r sat\tthe cat\n", 1),
                             ("docs_mac.tsv", "d1\tthe cat sat\tthe cat\rd2\tstorms\tstorms\r", 1)):
        (tmp_path / name).write_text(text, newline="")
        one_line_error(cli("summ", tmp_path / name, summ_files[1]),
                       f"{tmp_path / name}:{line}: stray carriage return (a CR not followed by LF; convert old Mac "
                       "line ends (CR) to LF, e.g. with mac2unix)")
    (tmp_path / "s.tsv").write_text("d1\tthe cat\rx\n", newline="")
    one_line_error(cli("summ", summ_files[0], tmp_path / "s.tsv"))
    (tmp_path / "crlf.tsv").write_text(DOCS_TSV.replace("\n", "\r\n"), newline="")
    res = cli("summ", "-f", "tsv", "-m", "ROUGE-1", "--norm", "none", tmp_path / "crlf.tsv", summ_files[1])
    assert res.exit_code == 0 and float(_summ_rows(res.stdout)[("sysA", "all")][0]) == pytest.approx((2 / 3 + 0.8) / 2)


def test_summ_table_escapes_names(tmp_path):
    import json

    (tmp_path / "d.jsonl").write_text(json.dumps({"id": "d\x1b[31m1\nx", "source": "the cat sat",
                                                  "references": ["the cat"]}) + "\n")
    sys_file = tmp_path / "s\x1b[32my.jsonl"
    sys_file.write_text(json.dumps({"id": "d\x1b[31m1\nx", "summary": "the cat"}) + "\n")
    res = cli("summ", "-q", "-f", "table", "-m", "ROUGE-1", "--norm", "none", tmp_path / "d.jsonl", sys_file)
    assert res.exit_code == 0, res.stderr
    assert "\x1b" not in res.stdout
    lines = res.stdout.split("\n")
    # one table: the system and the document in their columns, escaped
    assert lines[2].startswith("s\\x1b[32my  d\\x1b[31m1\\nx  ROUGE-1")


@pytest.mark.parametrize("args, reason", [
    (["--systems", ","], "Invalid value for '--systems': ',' names nothing (a comma-separated list of names)"),
    (["--systems", ""], "Invalid value for '--systems': an empty value; give a name"),
    (["--norm", " , "], "Invalid value for '--norm': ' , ' names nothing (a comma-separated list of names)"),
    (["-m", ""], "Invalid value for '-m' / '--measure': an empty value; give a name (see 'ulnorm-eval measures')"),
    (["--seed", "-1"], "Invalid value for '--seed': -1 is not in the range 0<=x<=18446744073709551615."),
    (["--fail-below", "ROUGE-9=0.1"], "--fail-below 'ROUGE-9=0.1': unknown summarisation measure 'ROUGE-9' "
                                      "(ROUGE-1, ROUGE-2, ROUGE-L, BERTScore, optionally (score=precision|recall|f), "
                                      "wrapped by E, IUB, UE1, UE2, EB, EM)"),
    (["--fail-below", "=0.1"], "--fail-below '=0.1': expected METRIC=VALUE, e.g. 'UE2(ROUGE-1)=0.15'"),
])
def test_summ_options_that_named_nothing_are_refused(summ_files, args, reason):
    """--systems ',' printed a header and no system (exit 0), --norm ',' meant 'none', -m '' the
    defaults, --seed -1 a numpy message naming no option."""
    tail = "" if reason.startswith("--fail-below") else " (see 'ulnorm-eval summ --help')"
    one_line_error(cli("summ", *args, *summ_files), reason + tail)


@pytest.mark.parametrize("command", ["eval", "compare"])
def test_norm_list_naming_nothing_is_refused(files, command):
    one_line_error(cli(command, "--norm", ",", files["qrels"], files["a.run"], files["b.run"]),
                   f"Invalid value for '--norm': ',' names nothing (a comma-separated list of names) "
                   f"(see 'ulnorm-eval {command} --help')")


@pytest.mark.parametrize("args, message", [
    (["compare", "--test", "bootstrap", "--reps", "1000000000"],
     "Invalid value for '--reps': 1000000000 is not in the range 10<=x<=1000000. (see 'ulnorm-eval compare --help')"),
    (["compare", "--swap-trials", "1000000000"],
     "Invalid value for '--swap-trials': 1000000000 is not in the range 1<=x<=100000. "
     "(see 'ulnorm-eval compare --help')"),
    (["stability", "--reps", "1000001"],
     "Invalid value for '--reps': 1000001 is not in the range 10<=x<=1000000. (see 'ulnorm-eval stability --help')"),
    (["stability", "--topic-bootstrap", "100001"],
     "Invalid value for '--topic-bootstrap': 100001 is not in the range 0<=x<=100000. "
     "(see 'ulnorm-eval stability --help')"),
    (["stability", "--restarts", "1001"],
     "Invalid value for '--restarts': 1001 is not in the range 0<=x<=1000. (see 'ulnorm-eval stability --help')"),
    (["stability", "--holdout", "100001"],
     "Invalid value for '--holdout': 100001 is not in the range 0<=x<=100000. (see 'ulnorm-eval stability --help')"),
    (["stability", "--holdout", "-1"],
     "Invalid value for '--holdout': -1 is not in the range 0<=x<=100000. (see 'ulnorm-eval stability --help')"),
])
def test_repetition_counts_are_bounded(files, args, message):
    """compare --reps 1000000000 (or --swap-trials) took all memory and was killed by the kernel."""
    one_line_error(cli(*args, files["qrels"], files["a.run"], files["b.run"]), message)


@pytest.mark.parametrize("args, message", [
    (["--bootstrap", "100001"], "Invalid value for '--bootstrap': 100001 is not in the range 0<=x<=100000."),
    (["--mc-repeats", "1001"], "Invalid value for '--mc-repeats': 1001 is not in the range 0<=x<=1000."),
])
def test_summ_repetition_counts_are_bounded(summ_files, args, message):
    """summ --correlate --bootstrap 100000000 took 2.5 GB before 'out of memory'."""
    one_line_error(cli("summ", "--correlate", *args, *summ_files), message + " (see 'ulnorm-eval summ --help')")


@pytest.mark.parametrize("command", ["eval", "compare", "queries"])
def test_groups_with_trec_qrels_is_refused(files, command):
    """--groups (a LETOR group file) with TREC qrels was ignored without a word."""
    one_line_error(cli(command, "--groups", files["a.run"], files["qrels"], files["a.run"], files["b.run"]),
                   f"{files['a.run']}: a LETOR group file (--groups), but {files['qrels']} holds TREC qrels, not "
                   "LETOR rows: leave --groups out")


@pytest.mark.parametrize("command, flag", [("eval", "--summary-md"), ("eval", "-o"), ("compare", "--plot")])
def test_empty_output_name_names_its_option(files, command, flag):
    """--summary-md '' said '-o: empty file name'."""
    one_line_error(cli(command, flag, "", files["qrels"], files["a.run"], files["b.run"]), f"{flag}: empty file name")


# --------------------------------------------------------------------------- fresh hostile pass: library entry checks

@pytest.mark.parametrize("kw, message", [
    ({"depth": 0}, "depth=0: expected None or a positive integer (-M)"),
    ({"depth": -1}, "depth=-1: expected None or a positive integer (-M)"),
    ({"undefined": "x"}, "undefined='x': expected one of 'zero', 'skip'"),
    ({"pool": "x"}, "pool='x': expected 'run', 'qrels', 'union', 'qrels+N' (N unjudged placeholders beside the "
                    "judged documents) or the path of a candidate file"),
    ({"expectation": "x"}, "expectation='x': expected one of 'exact', 'paper'"),
    ({"score_precision": "float16"}, "score_precision='float16': expected one of 'float64', 'float32'"),
    ({"permutations": 0}, "permutations=0: expected 10 to 1,000,000 (memory grows with them)"),
    ({"permutations": 10 ** 12}, "permutations=1000000000000: expected 10 to 1,000,000 (memory grows with them)"),
    ({"rel_level": float("nan")}, "rel_level=nan: not a finite number"),
    ({"holes_prior": "x"}, "holes_prior='x': expected one of 'run', 'pool', 'mix'"),
    ({"holes_samples": 0}, "holes_samples=0: expected 1 to 1,000,000 (memory grows with them)"),
])
def test_library_options_are_checked_as_the_cli_checks_them(files, kw, message):
    """depth=0, pool='x', undefined='x' were accepted silently (the CLI refuses them)."""
    import ulnorm_eval as ue

    with pytest.raises(ValueError) as exc:
        ue.evaluate(files["qrels"], files["a.run"], ["P@1"], [], **kw)
    assert str(exc.value) == message


@pytest.mark.parametrize("kw, message", [
    ({"alpha": 2}, "alpha=2: expected a number strictly between 0 and 1"),
    ({"test": "bootstrap", "reps": 10 ** 12}, "reps=1000000000000: expected 10 to 1,000,000 (memory grows with them)"),
    ({"swap_trials": 10 ** 12}, "swap_trials=1000000000000: expected 1 to 100,000 (memory grows with them)"),
    ({"phi_target": 1}, "phi_target=1: expected a number strictly between 0 and 1"),
])
def test_library_compare_options_are_bounded(files, kw, message):
    """reps=10**12 raised numpy's MemoryError ('14.6 TiB'), alpha=2 was accepted."""
    import ulnorm_eval as ue

    with pytest.raises(ValueError) as exc:
        ue.compare(files["qrels"], {"a": files["a.run"], "b": files["b.run"]}, ["P@1"], [], **kw)
    assert str(exc.value) == message


def test_library_names_repeated_runs_apart(files):
    """evaluate(qrels, [run, run]) gave one 'run' key in .means (the CLI says run#1, run#2)."""
    import ulnorm_eval as ue

    r = files["a.run"]
    assert ue.evaluate(files["qrels"], [r, r], ["P@1"], []).means == {"a.run#1": {"P@1": 0.5}, "a.run#2": {"P@1": 0.5}}
    assert list(ue.compare(files["qrels"], [r, r], ["P@1"], []).systems["run"]) == ["a.run#1", "a.run#2"]
    assert set(ue.nrg(files["qrels"], [r], [r], ["P@1"]).means) == {"a.run#1"}
    from ulnorm_eval.api import to_qrels, to_runs

    loaded = to_runs([r], to_qrels(files["qrels"]))[0]
    ue.compare(files["qrels"], [loaded, loaded], ["P@1"], [])
    assert loaded.name == "a.run"  # the caller's object is not renamed
    with pytest.raises(TypeError, match="runs: expected a run .* got int"):
        ue.evaluate(files["qrels"], 5, ["P@1"], [])


# (a second BOM inside the file is refused with its line before this: test_hostile_silent_failures.py)
@pytest.mark.parametrize("raw, shown", [(b"\xe2\x80\x8bq1", "'\\u200bq1'"), (b"q1\xc2\xa0", "'q1\\xa0'")])
def test_disjoint_ids_that_differ_by_an_invisible_character_are_named(tmp_path, files, raw, shown):
    """A zero-width space or a no-break space in the qrels ids: 'shares no query' named
    only the run's ids, which look identical."""
    lines = raw.split(b"\n")
    (tmp_path / "q").write_bytes(b"".join(x + b" 0 d1 1\n" for x in lines))
    res = cli(tmp_path / "q", files["a.run"])
    msg = one_line_error(res)
    assert f"Query ids are compared as text, exactly: the run's 'q1' is not the qrels' {shown} (an invisible " \
           "character or a non-ASCII space)" in msg
