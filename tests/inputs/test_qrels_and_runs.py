"""Reading qrels, runs and LETOR files: messy layouts, compression, stdin, and exact error messages.

Private names: ``trec._fast_columns`` and ``_slow_columns``, the two parsers read_run chooses between,
compared with each other on the same bytes."""
from __future__ import annotations

import math

import numpy as np
import pytest

from ulnorm_eval import evaluate
from ulnorm_eval.pipeline.evaluate import load_qrels, load_run
# private: the two parsers read_run chooses between, compared with each other
from ulnorm_eval.inputs.trec import InputError, _fast_columns, _slow_columns, read_qrels, read_run
from conftest import invoke

QRELS = """q1 0 d1 2
q1 0 d2 0
q1 0 d#3 1
q1 0 d4 -1
q2 0 a 1.5
q3 0 z 0
"""
RUN = """q1 Q0 d1 1 0.5 tag
q1 Q0 d#3 2 0.9 tag
q1 Q0 d2 3 0.5 tag
q1 Q0 x 4 0.1 tag
q2 Q0 b 1 1.0 tag
q2 Q0 a 2 1.0 tag
q9 Q0 a 1 1 tag
"""
MEASURES = ["AP", "nDCG@10", "P@2", "RR"]
# q1 ranks d#3 (g1), d2 (g0, wins the 0.5 tie: docid descending), d1 (g2), x (unjudged); R = 2
# q2 ranks b (unjudged, wins the tie), a (grade 1.5: relevant, gain 1.5); q3 is not retrieved; q9 is ignored
IDCG1 = 2 + 1 / math.log2(3)
HAND = {
    "AP": [(1 + 2 / 3) / 2, 1 / 2, 0.0],
    "nDCG@10": [(1 + 2 / math.log2(4)) / IDCG1, (1.5 / math.log2(3)) / 1.5, 0.0],
    "P@2": [0.5, 0.5, 0.0],
    "RR": [1.0, 0.5, 0.0],
}


def _cli(args, stdin=None):
    return invoke("--norm", "none", "-f", "trec", "-q", *[x for m in MEASURES for x in ("-m", m)], *args, input=stdin)


def test_hand_computed_values(write):
    res = evaluate(write("qrels", QRELS), [write("run", RUN)], MEASURES, variants=[])
    rr = res.runs[0]
    assert rr.qids == ["q1", "q2", "q3"]
    assert rr.missing == 1 and rr.ignored == 1
    for m in res.metrics:
        assert rr.values[m] == pytest.approx(HAND[str(m)], abs=1e-12), m
        assert rr.mean[m] == pytest.approx(sum(HAND[str(m)]) / 3, abs=1e-12), m


def _messy(text: str) -> str:
    """Same lines, with runs of mixed tabs and spaces and leading/trailing blanks."""
    out = []
    for i, line in enumerate(text.splitlines()):
        f = line.split()
        seps = [" \t ", "\t", "   ", "\t\t"]
        out.append((" " if i % 2 else "\t ") + "".join(x + seps[(i + j) % 4] for j, x in enumerate(f)).rstrip()
                   + (" \t" if i % 3 else ""))
    return "\n".join(out) + "\n"


def _commented(text: str) -> str:
    lines = text.splitlines()
    return "\n".join(["# a comment line", lines[0], "", "   # indented comment", *lines[1:], "", "#"]) + "\n"


VARIANTS = {
    "tabs": lambda t: t.replace(" ", "\t"),
    "messy-whitespace": _messy,
    "crlf": lambda t: t.replace("\n", "\r\n"),
    "bom": lambda t: "\ufeff" + t,
    "comments-and-blanks": _commented,
    "no-final-newline": lambda t: t.rstrip("\n"),
    "all-at-once": lambda t: "\ufeff" + _commented(_messy(t)).replace("\n", "\r\n"),
}


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_layouts_give_identical_results(write, variant):
    base = _cli([write("q", QRELS), write("r", RUN)])
    change = VARIANTS[variant]
    got = _cli([write("q2", change(QRELS)), write("r2", change(RUN))])
    assert base.exit_code == got.exit_code == 0, got.output
    assert got.stdout == base.stdout
    assert got.stdout.count("\n") == 4 * 4  # 3 queries + all, 4 measures


@pytest.mark.parametrize("compress", ["gz", "bz2", "xz"])
def test_compressed_inputs(write, compress):
    base = _cli([write("q", QRELS), write("r", RUN)])
    got = _cli([write(f"q.{compress}", QRELS, compress), write(f"r.{compress}", RUN, compress)])
    assert got.exit_code == 0, got.output
    assert got.stdout == base.stdout


def test_run_from_stdin(write):
    base = _cli([write("q", QRELS), write("r", RUN)])
    got = _cli([write("q", QRELS), "-"], stdin=RUN)
    assert got.exit_code == 0, got.output
    assert got.stdout == base.stdout


def test_stderr_counts_what_was_skipped(write):
    got = _cli([write("q", _commented(QRELS)), write("r", _commented(RUN))])
    assert got.exit_code == 0
    err = got.stderr
    assert err.count("skipped 5 comment or blank lines") == 2  # per file: 3 comments + 2 blanks
    assert "1 of 3 qrels queries have no ranked documents and score 0" in err
    assert "1 run queries are not in the qrels and were ignored" in err


def test_hash_inside_a_docid_is_data(write):
    q = read_qrels(write("q", "1 0 CR#93E-1860 1\n# CR93E-1860 is not a judgement\n1 0 #x 0\n"))
    assert q.docid.to_pylist() == ["CR#93E-1860", "#x"]
    assert q.skipped == 1


def test_extra_run_fields_are_ignored_and_counted(write):
    """trec_eval ignores fields after the sixth (its own results.trunc has them)."""
    run = read_run(write("r", "q1 Q0 d1 1 0.5 tag more junk\nq1 Q0 d2 2 0.4 tag\n"))
    assert run.docid.to_pylist() == ["d1", "d2"]
    assert run.meta["extra_fields"] == 1


def test_float_grades_are_gains(write):
    q = read_qrels(write("q", "1 0 a 0.5\n1 0 b 2.25\n1 0 c -3\n"))
    assert q.grade.tolist() == [0.5, 2.25, -3.0]


# --------------------------------------------------------------------------- fast and careful paths

def test_fast_path_taken_only_for_clean_files():
    clean = RUN.encode()
    assert _fast_columns(clean, 6) is not None
    assert _fast_columns(RUN.replace(" ", "\t").encode(), 6) is not None
    assert _fast_columns(_messy(RUN).encode(), 6) is None
    assert _fast_columns(_commented(RUN).encode(), 6) is None
    assert _fast_columns(RUN.replace("tag\n", "tag x\n").encode(), 6) is None


@pytest.mark.parametrize("variant", ["plain", "crlf", "bom", "tabs"])
def test_fast_and_slow_paths_agree(variant):
    data = {"plain": RUN, "crlf": RUN.replace("\n", "\r\n"), "bom": "\ufeff" + RUN,
            "tabs": RUN.replace(" ", "\t")}[variant].encode()
    fast = _fast_columns(data, 6)
    slow, lines, skipped, extra = _slow_columns(data, 6, "r", "run")
    assert fast is not None
    assert [c.to_pylist() for c in fast] == [c.to_pylist() for c in slow]
    assert lines.tolist() == list(range(1, 8)) and skipped == extra == 0


def test_fast_and_slow_paths_agree_on_a_real_run(shared, tmp_path):
    src = shared / "dlhard-passage" / "runs" / "bm25.run.gz"
    import gzip

    data = gzip.decompress(src.read_bytes())
    assert _fast_columns(data, 6, (4,)) is not None
    slow_file = tmp_path / "slow.run"
    slow_file.write_bytes(b"# forces the careful parser\n" + data)
    fast, slow = read_run(str(src)), read_run(str(slow_file))
    assert fast.qid.equals(slow.qid) and fast.docid.equals(slow.docid)
    assert np.array_equal(fast.score, slow.score)
    qrels = str(shared / "dlhard-passage" / "qrels.txt")
    a = evaluate(qrels, [fast], ["nDCG@10", "AP", "RR"], variants=[]).frame
    b = evaluate(qrels, [slow], ["nDCG@10", "AP", "RR"], variants=[]).frame
    assert a.to_numpy().tolist() == b.to_numpy().tolist()


# --------------------------------------------------------------------------- bad input

GOOD_RUN = "q1 Q0 d1 1 0.5 t\n"
GOOD_QRELS = "q1 0 d1 1\n"
BAD = {
    # id: (which file, its content, line, reason)
    "run-too-few-fields": ("run", "q1 Q0 d1 1 0.5 t\n# c\nq1 Q0 d2 2 0.4\n", 3,
                           "expected 6 fields (qid Q0 docid rank score tag), found 5"),
    "run-score-not-a-number": ("run", "q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 abc t\n", 2, "score 'abc' is not a number"),
    "run-score-underscore": ("run", "q1 Q0 d1 1 1_0 t\n", 1, "score '1_0' is not a number"),
    "run-score-inf": ("run", "q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 inf t\n", 2, "score 'inf' is not a finite number"),
    "run-score-nan": ("run", "q1 Q0 d1 1 nan t\n", 1, "score 'nan' is not a finite number"),
    "run-score-overflow": ("run", "q1 Q0 d1 1 1e999 t\n", 1, "score '1e999' is not a finite number"),
    "run-duplicate": ("run", "q1 Q0 d1 1 0.5 t\nq2 Q0 d1 1 0.5 t\n\nq1 Q0 d1 2 0.4 t\n", 4,
                      "duplicate document 'd1' for query 'q1' in the run"),
    "run-empty": ("run", "", 1, "empty file: no ranked documents"),
    "run-only-comments": ("run", "# nothing\n\n", 1, "empty file: no ranked documents"),
    "run-bad-utf8": ("run", b"q1 Q0 d\xff 1 0.5 t\n", 1, "not valid UTF-8"),
    "qrels-too-many-fields": ("qrels", "q1 0 d1 1\nq1 0 d2 1 extra\n", 2,
                              "expected 4 fields (qid iter docid grade), found 5"),
    "qrels-too-few-fields": ("qrels", "q1 0 d1\n", 1, "expected 4 fields (qid iter docid grade), found 3"),
    "qrels-grade-not-a-number": ("qrels", "q1 0 d1 1\nq1 0 d2 x\n", 2, "grade 'x' is not a number"),
    "qrels-grade-nan": ("qrels", "q1 0 d1 nan\n", 1, "grade 'nan' is not a finite number"),
    "qrels-duplicate": ("qrels", "q1 0 d1 1\nq1 0 d1 1\n", 2, "duplicate document 'd1' for query 'q1' in the qrels"),
    "qrels-empty": ("qrels", "", 1, "empty file: no judgements"),
}


@pytest.mark.parametrize("case", list(BAD))
@pytest.mark.parametrize("to_file", [False, True])
def test_bad_input_one_line_error_exit_2(write, tmp_path, case, to_file):
    which, content, line, reason = BAD[case]
    qrels = write("qrels.txt", content if which == "qrels" else GOOD_QRELS)
    run = write("run.txt", content if which == "run" else GOOD_RUN)
    out = tmp_path / "out.txt"
    args = ["-m", "AP", qrels, run] + (["-o", str(out)] if to_file else [])
    result = invoke(*args)
    assert result.exit_code == 2
    bad = qrels if which == "qrels" else run
    assert result.stderr.splitlines()[-1] == f"ulnorm-eval: {bad}:{line}: {reason}"
    assert result.stdout == ""
    assert not out.exists()
    assert list(tmp_path.iterdir()) == sorted(tmp_path.iterdir()) and \
        {p.name for p in tmp_path.iterdir()} == {"qrels.txt", "run.txt"}  # no temporary left behind


def test_error_names_the_line_through_the_library(write):
    with pytest.raises(InputError) as err:
        evaluate(write("q", GOOD_QRELS), [write("r", "q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 x t\n")], ["AP"], variants=[])
    assert (err.value.line, err.value.reason) == (2, "score 'x' is not a number")


def test_missing_file(tmp_path):
    result = invoke("-m", "AP", str(tmp_path / "nope"), str(tmp_path / "nope2"))
    assert result.exit_code == 2


def test_a_path_that_cannot_be_opened_is_named_with_why(tmp_path):
    for path, reason in ((tmp_path, "is a directory, not a file"), (tmp_path / "nope", "no such file"),
                         (tmp_path / ("x" * 300), "file name too long")):
        with pytest.raises(InputError) as err:
            read_qrels(str(path))
        assert (err.value.path, err.value.line, err.value.reason) == (str(path), None, reason)


# --------------------------------------------------------------------------- LETOR

@pytest.fixture(scope="module")
def letor(shared):
    d = shared / "letor" / "lightgbm_lambdarank"
    path = d / "rank.test"
    sizes = [int(x) for x in (d / "rank.test.query").read_text().split()]
    rows = path.read_bytes().decode().splitlines()
    grades = [float(r.split()[0]) for r in rows]
    # a deterministic score per row: the value of feature 1 (0 when absent) plus a small row term
    feat = []
    for r in rows:
        v = next((float(t.split(":")[1]) for t in r.split()[1:] if t.startswith("1:")), 0.0)
        feat.append(v)
    scores = [f + 0.001 * (i % 7) for i, f in enumerate(feat)]
    return path, sizes, rows, grades, scores


def _trec_equivalent(write, sizes, grades, scores):
    """The LETOR data as TREC files: query = group index, document = row position within the group."""
    q, r, i = [], [], 0
    for g, n in enumerate(sizes):
        for pos in range(n):
            q.append(f"{g} 0 {pos} {grades[i]:g}")
            r.append(f"{g} Q0 {pos} 0 {scores[i]!r} t")
            i += 1
    return write("trec.qrels", "\n".join(q) + "\n"), write("trec.run", "\n".join(r) + "\n")


def test_letor_with_query_file_and_both_score_forms(letor, write):
    path, sizes, rows, grades, scores = letor
    assert len(rows) == sum(sizes) == 768
    qrels = load_qrels(str(path))
    assert qrels.letor and len(qrels) == 768
    one = write("scores.txt", "\n".join(repr(s) for s in scores) + "\n")
    ranklib_lines, i = [], 0
    for g, n in enumerate(sizes):
        for pos in range(n):
            ranklib_lines.append(f"{g}\t{pos}\t{scores[i]!r}")
            i += 1
    ranklib = write("ranklib.txt", "\n".join(reversed(ranklib_lines)) + "\n")  # order must not matter
    measures = ["nDCG@10", "AP", "P@5", "RR"]
    a = evaluate(qrels, [load_run(one, qrels), load_run(ranklib, qrels)], measures, variants=[])
    tq, tr = _trec_equivalent(write, sizes, grades, scores)
    ref = evaluate(tq, [tr], measures, variants=[])
    assert len(a.runs[0].qids) == 50
    for rr in a.runs:
        assert rr.qids == ref.runs[0].qids
        for m in a.metrics:
            assert np.allclose(rr.values[m], ref.runs[0].values[m], rtol=0, atol=1e-15), m
    assert 0 < a.runs[0].mean[a.metrics[0]] < 1


def test_letor_with_qid_column(letor, write):
    path, sizes, rows, grades, scores = letor
    with_qid, i = [], 0
    for g, n in enumerate(sizes):
        for _ in range(n):
            label, rest = rows[i].split(None, 1)
            with_qid.append(f"{label} qid:{g} {rest} # row {i}")
            i += 1
    qpath = write("with_qid.txt", "\n".join(with_qid) + "\n")  # no .query file beside it
    one = write("scores.txt", "\n".join(repr(s) for s in scores) + "\n")
    measures = ["nDCG@10", "AP"]
    a = evaluate(qpath, [one], measures, variants=[])
    b = evaluate(str(path), [one], measures, variants=[])
    assert a.frame.to_numpy().tolist() == b.frame.to_numpy().tolist()


def test_letor_hand_computed(write):
    qrels = write("tiny.txt", "2 qid:7 1:0.1\n0 qid:7 1:0.2\n1 qid:7 1:0.3\n0 qid:8 1:0.1\n")
    scores = write("s.txt", "0.1\n0.9\n0.5\n0.3\n")
    res = evaluate(qrels, [scores], ["nDCG@10", "AP"], variants=[])
    rr = res.runs[0]
    assert rr.qids == ["7", "8"]
    # query 7 ranks rows 1 (g0), 2 (g1), 0 (g2): DCG = 1/log2(3) + 2/log2(4); IDCG = 2 + 1/log2(3)
    ndcg = (1 / math.log2(3) + 1) / (2 + 1 / math.log2(3))
    assert rr.values[res.metrics[0]].tolist() == pytest.approx([ndcg, 0.0], abs=1e-12)
    assert rr.values[res.metrics[1]].tolist() == pytest.approx([(1 / 2 + 2 / 3) / 2, 0.0], abs=1e-12)


@pytest.mark.parametrize("scores,line,reason", [
    ("0.1\n0.2\nabc\n", 3, "score 'abc' is not a number"),
    ("0.1\n0.2\ninf\n", 3, "score 'inf' is not a finite number"),
    ("0.1\n0.2 0.3\n", 2, "expected 1 fields (score), found 2"),
    ("", 1, "empty file: no scores"),
])
def test_letor_bad_scores(write, scores, line, reason):
    qrels = write("tiny.txt", "2 qid:7 1:0.1\n0 qid:7 1:0.2\n1 qid:7 1:0.3\n")
    s = write("s.txt", scores)
    result = invoke("-m", "AP", qrels, s)
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == f"ulnorm-eval: {s}:{line}: {reason}"


def test_letor_score_count_must_match(write):
    qrels = write("tiny.txt", "2 qid:7 1:0.1\n0 qid:7 1:0.2\n1 qid:7 1:0.3\n")
    s = write("s.txt", "0.1\n0.2\n")
    result = invoke("-m", "AP", qrels, s)
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == f"ulnorm-eval: {s}: 2 scores for 3 LETOR rows"
