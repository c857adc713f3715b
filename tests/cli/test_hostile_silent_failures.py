"""The third hostile pass (issue 40): each line of its report as a test that failed before the fix.

Data loss and false success first, then silent wrong numbers, crashes and messages.  Every error is
one ``ulnorm-eval: ...`` line and exit 2; exit 1 means only a failed gate (docs/errors.md).
Private names: ``files._path_inputs`` (every command's path options are checked as inputs),
and ``guard._install`` (the signal handlers, in a child process), each a step a whole command cannot be
made to reach.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from conftest import SUMM_DOCS
from conftest import invoke as cli
from conftest import wait_for_signal_state
from ulnorm_eval.cli.main import main

from toy_files import QRELS, RUN, write_toy


@pytest.fixture
def files(tmp_path):
    return write_toy(tmp_path)[:2]


def one_line_error(res, *fragments) -> str:
    assert res.exit_code == 2, (res.exit_code, res.stdout, res.stderr)
    assert "Traceback" not in res.stderr and "internal error" not in res.stderr, res.stderr
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert lines and lines[-1].startswith("ulnorm-eval: "), res.stderr
    for f in fragments:
        assert f in lines[-1], (f, lines[-1])
    return lines[-1]


# --------------------------------------------------------------------------- data loss

@pytest.mark.parametrize("flag", ["-o", "--summary-md"])
def test_output_onto_the_zscore_input_is_refused(files, tmp_path, flag):
    q, r = files
    zs = tmp_path / "zs.txt"
    zs.write_text("q1 P_10 .1 .05\n")
    res = cli("-Z", zs, "--norm", "none", "-m", "P@10", "--fail-below", "P@10=0", flag, zs, q, r)
    one_line_error(res, "zs.txt", "is an input")
    assert zs.read_text() == "q1 P_10 .1 .05\n"


def test_every_file_parameter_of_every_command_is_an_input(tmp_path):
    """A click.Path option that is not an output is protected whatever its name: a new input option
    cannot be forgotten in render/files.py."""
    import click

    from ulnorm_eval.render import files as rf

    for name, cmd in main.all_commands().items():
        ctx = click.Context(cmd)
        with ctx:
            # private: the path options each command checks as inputs, listed from every command's parameters
            extra = set(rf._path_inputs())
        paths = {p.name for p in cmd.params if isinstance(p.type, click.Path) and p.type.file_okay}
        outs = {k for k, _ in rf.OUTPUT_KEYS}
        assert paths - outs <= set(rf.INPUT_KEYS) | extra, name


@pytest.mark.parametrize("sig", ["SIGHUP", "SIGINT", "SIGTERM"])
def test_an_inherited_ignored_signal_stays_ignored(tmp_path, sig):
    """nohup and trap '' INT TERM: the command must not undo them (it exited 129 under nohup).  The
    command waits on its run from a pipe, its handlers installed, while its signal masks are read from
    /proc."""
    ignored = getattr(signal, sig)
    # the guard's handler of this one is installed last (Python itself catches SIGINT from the start)
    other = signal.SIGHUP if ignored == signal.SIGTERM else signal.SIGTERM
    (tmp_path / "q").write_text("q1 0 d1 1\n")
    p = subprocess.Popen([sys.executable, "-m", "ulnorm_eval", "-m", "P@1", "--norm", "none", "q", "-"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path,
                         preexec_fn=lambda: signal.signal(ignored, signal.SIG_IGN))
    try:
        wait_for_signal_state(p.pid, other)  # the guard's handlers are installed
        wait_for_signal_state(p.pid, ignored, "SigIgn", timeout=1)  # and this one is still ignored
        out, err = p.communicate(b"q1 Q0 d1 1 1.0 r\n", timeout=120)
    finally:
        p.kill()
    assert (p.returncode, out, err) == (0, b"P@1\tall\t1.0000\n", b""), err


def test_nohup_run_survives_a_hangup(tmp_path):
    q = tmp_path / "q"
    r = tmp_path / "r"
    q.write_text("".join(f"q{i} 0 d{j} {j % 3}\n" for i in range(100) for j in range(30)))
    r.write_text("".join(f"q{i} Q0 d{j} {j} {1000 - j} x\n" for i in range(100) for j in range(600)))
    out = tmp_path / "out.txt"
    # the command as users start it, with SIGHUP ignored before its exec as nohup does (not a `python -c`
    # program embedding main(), whose interpreter shutdown can abort in Arrow's threads: apache/arrow#34314)
    p = subprocess.Popen([sys.executable, "-m", "ulnorm_eval", "-m", "UL2(G)", "-o", str(out), str(q), str(r)],
                         stderr=subprocess.PIPE, cwd=tmp_path,
                         preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN))
    wait_for_signal_state(p.pid, signal.SIGTERM)  # the guard's handlers are installed: main is running
    p.send_signal(signal.SIGHUP)
    assert p.wait(120) == 0, p.stderr.read()
    assert out.read_text().startswith("UL2(G)\tall\t")


# --------------------------------------------------------------------------- false success

ZS = "q1 P_10 0 .01\nq2 P_10 0 .01\n"  # P@10 is 0.2 and 0.1: z-scores 20 and 10


def test_zscores_have_their_own_name_and_the_gate_says_so(files, tmp_path):
    q, r = files
    zs = tmp_path / "zs.txt"
    zs.write_text(ZS)
    md = tmp_path / "gate.md"
    res = cli("-Z", zs, "--norm", "none", "-m", "P@10", "--fail-below", "P@10=0.5", "--summary-md", md, q, r)
    assert res.exit_code == 0
    assert "pass r.txt ZP@10 (z-score, -Z): mean 15.0000 over 2 of 2 queries, threshold 0.5000" in res.stderr
    assert "| ZP@10 (z-score, -Z) |" in md.read_text()
    doc = json.loads(cli("-Z", zs, "--norm", "none", "-m", "P@10", "-f", "json", q, r).stdout)
    assert doc["runs"][0]["summary"] == {"ZP@10": 15.0}
    assert [x["values"] for x in doc["runs"][0]["queries"]] == [{"ZP@10": 20.0}, {"ZP@10": 10.0}]
    tsv = cli("-Z", zs, "--norm", "none", "-m", "P@10", "-f", "tsv", q, r).stdout.splitlines()
    assert tsv[0] == "run\tquery\tZP@10" and tsv[-1] == "r.txt\tall\t15.0"
    jl = cli("-Z", zs, "--norm", "none", "-m", "P@10", "-f", "jsonl", q, r).stdout.splitlines()
    assert {json.loads(x)["measure"] for x in jl} == {"ZP@10"}
    # without -Z the real P@10, 0.15, fails the same gate
    assert cli("--norm", "none", "-m", "P@10", "--fail-below", "P@10=0.5", q, r).exit_code == 1


def test_summ_gate_over_a_system_missing_a_document_fails(tmp_path):
    docs = tmp_path / "docs.tsv"
    docs.write_text(SUMM_DOCS)
    part = tmp_path / "sysA.tsv"
    part.write_text("d1\tthe cat sat on the mat\n")
    full = tmp_path / "sysB.tsv"
    full.write_text("d1\tthe cat sat on the mat\nd2\tzzz\n")
    res = cli("summ", "-m", "ROUGE-1", "--norm", "none", "--fail-below", "ROUGE-1=0.5", docs, part)
    assert res.exit_code == 1, res.stderr
    assert "FAIL sysA ROUGE-1: mean 0.6667" in res.stderr
    assert "1 of 2 documents have no summary from this run" in res.stderr
    assert cli("summ", "-m", "ROUGE-1", "--norm", "none", "--fail-below", "ROUGE-1=0.3", docs, full).exit_code == 0


@pytest.mark.parametrize("measure", ["runid", "all_trec", "relstring"])
def test_failing_gate_with_a_text_measure_exits_1_with_verdict_and_summary(files, tmp_path, measure):
    q, r = files
    md = tmp_path / "gate.md"
    res = cli("--norm", "none", "-m", measure, "-m", "P@10", "--fail-below", "P@10=0.9", "--summary-md", md, q, r)
    assert res.exit_code == 1, res.stderr
    assert "FAIL r.txt P@10: mean 0.1500 over 2 of 2 queries, threshold 0.9000" in res.stderr
    text = md.read_text()
    assert "FAILED (1 of 1 check)" in text and "| r.txt |" in text


# --------------------------------------------------------------------------- internal errors

@pytest.mark.parametrize("measure", ["all_trec", "runid", "relstring"])
def test_baseline_with_text_measures_compares_the_numbers(files, measure):
    q, r = files
    res = cli("--norm", "none", "-m", measure, "-m", "P@10", "--baseline", r, q, r)
    assert res.exit_code == 0, res.stderr
    assert "pass r.txt P@10: mean 0.1500 vs baseline 0.1500" in res.stderr
    assert " runid:" not in res.stderr and " relstring" not in res.stderr


def test_fail_below_on_a_text_measure_is_refused(files):
    one_line_error(cli("--norm", "none", "--fail-below", "runid=5", *files),
                   "--fail-below 'runid=5': runid is text", "not a number to gate on")


@pytest.mark.parametrize("var, value", [("ULNORM_EVAL_MAX_LINE", "abc"), ("ULNORM_EVAL_MAX_LINE", "-5"),
                                        ("ULNORM_EVAL_MAX_LINE", "0"), ("ULNORM_EVAL_MAX_INPUT", "1.5"),
                                        ("ULNORM_EVAL_MAX_RATIO", "inf"), ("ULNORM_EVAL_MAX_LINE", "1_0")])
def test_bad_limits_in_the_environment_are_refused(files, tmp_path, var, value):
    out = subprocess.run([sys.executable, "-m", "ulnorm_eval", "-m", "P@10", *files], capture_output=True,
                         text=True, cwd=tmp_path, env={**os.environ, var: value})
    assert out.returncode == 2, out.stderr
    assert out.stderr.strip().splitlines() == [f"ulnorm-eval: {var}: {value!r} is not a whole number >= 1 "
                                               "(a limit in the environment; unset it for the default)"]


def test_a_good_limit_is_still_honoured(files, tmp_path):
    out = subprocess.run([sys.executable, "-m", "ulnorm_eval", "-m", "P@10", *files], capture_output=True,
                         text=True, cwd=tmp_path, env={**os.environ, "ULNORM_EVAL_MAX_LINE": "8"})
    assert out.returncode == 2 and "line longer than 8 bytes (ULNORM_EVAL_MAX_LINE)" in out.stderr


@pytest.mark.parametrize("value", ["inf", "nan", "-1", "abc", "0"])
def test_bad_lcs_cell_limit_is_refused_by_summ(tmp_path, value):
    docs = tmp_path / "docs.tsv"
    docs.write_text("d1\tthe cat sat on the mat today\tthe cat sat\n")
    sys_a = tmp_path / "a.tsv"
    sys_a.write_text("d1\tthe cat\n")
    out = subprocess.run([sys.executable, "-m", "ulnorm_eval", "summ", "-m", "ROUGE-L", "--norm", "none",
                          str(docs), str(sys_a)], capture_output=True, text=True, cwd=tmp_path,
                         env={**os.environ, "ULNORM_EVAL_MAX_LCS_CELLS": value})
    assert out.returncode == 2, out.stderr
    assert out.stderr.strip().splitlines()[-1] == (f"ulnorm-eval: ULNORM_EVAL_MAX_LCS_CELLS: {value!r} is not a whole "
                                                    "number >= 1 (a limit in the environment; unset it for the default)")


# --------------------------------------------------------------------------- silent wrong numbers

def test_a_byte_order_mark_inside_a_file_is_refused_with_its_line(tmp_path, files):
    q, r = files
    joined = tmp_path / "joined.txt"  # two files joined by cat, the second with a BOM
    joined.write_bytes(b"q1 0 d1 1\n\xef\xbb\xbfq1 0 d3 1\nq2 0 d1 1\n")
    one_line_error(cli("-m", "P@10", joined, r), f"{joined}:2: byte-order mark (U+FEFF) inside the file")
    run = tmp_path / "joined.run"
    run.write_bytes(RUN.encode() + b"\xef\xbb\xbfq2 Q0 d1 3 0 r\n")
    for stream in ("--stream", "--no-stream"):
        one_line_error(cli("-m", "P@10", stream, q, run), f"{run}:6: byte-order mark")
    # the file's own BOM, at its start, is still read as before
    lead = tmp_path / "lead.txt"
    lead.write_bytes(b"\xef\xbb\xbf" + QRELS.encode())
    a, b = cli("-m", "P@10", "--norm", "none", lead, r), cli("-m", "P@10", "--norm", "none", q, r)
    assert a.exit_code == 0 and a.stdout == b.stdout == "P@10\tall\t0.1500\n"


@pytest.mark.parametrize("seed", ["-5", "-1", str(2 ** 64), str(2 ** 65)])
@pytest.mark.parametrize("command", ["eval", "compare", "queries", "stability", "summ"])
def test_seeds_outside_the_generators_range_are_refused(files, command, seed):
    q, r = files
    res = cli(command, "--seed", seed, q, r, r)
    assert res.exit_code == 2, res.stderr
    assert f"Invalid value for '--seed': {seed} is not in the range 0<=x<=18446744073709551615" in res.stderr


def test_the_largest_seed_is_accepted(files):
    q, r = files
    a = cli("-m", "UL2(G)", "--seed", str(2 ** 64 - 1), q, r)
    b = cli("-m", "UL2(G)", "--seed", "0", q, r)
    assert a.exit_code == b.exit_code == 0


@pytest.mark.parametrize("seed", [-1, 2 ** 64, 1.5, True])
def test_the_library_refuses_the_seeds_the_cli_refuses(files, seed):
    from ulnorm_eval.pipeline.blocks import Options

    with pytest.raises(ValueError, match=r"seed=.*a seed is a whole number from 0 to 2\*\*64 - 1"):
        Options(seed=seed)


def test_compare_checks_its_options_before_reading_runs(tmp_path, files):
    q, _ = files
    missing = tmp_path / "never-read.run"  # not there: an option error must come first
    missing2 = tmp_path / "never-read2.run"
    one_line_error(cli("compare", "--baseline", "nope", q, missing, missing2), "--baseline nope: not one of the RUNS")
    one_line_error(cli("compare", "--subset-size", "2", q, missing, missing2), "--subset-size 2: needs --subset")
    one_line_error(cli("compare", "--subset-size", "99", "--subset", "ideal", q, missing, missing2),
                   "--subset-size 99:", "has only 2 queries")
    one_line_error(cli("compare", "--seed", "-5", q, missing, missing2), "'--seed'")


@pytest.mark.parametrize("threshold", ["AP=1_0", "AP=0_5", "AP=1__0"])
def test_digit_separators_are_not_numbers_in_a_threshold(files, threshold):
    one_line_error(cli("--fail-below", threshold, *files), f"--fail-below {threshold!r}:", "is not a number")


def test_digit_separators_are_refused_in_summ_thresholds(tmp_path):
    docs = tmp_path / "docs.tsv"
    docs.write_text("d1\tthe cat sat on the mat today\tthe cat sat\n")
    a = tmp_path / "a.tsv"
    a.write_text("d1\tthe cat\n")
    one_line_error(cli("summ", "--fail-below", "ROUGE-1=0_5", docs, a), "--fail-below 'ROUGE-1=0_5'")


def test_digit_separators_are_refused_in_group_sizes_and_letor(tmp_path):
    letor = tmp_path / "l.txt"
    letor.write_text("2 1:0.5\n1 1:0.2\n0 1:0.1\n")
    scores = tmp_path / "l.sc"
    scores.write_text("0.3\n0.2\n0.1\n")
    groups = tmp_path / "g.txt"
    groups.write_text("1_0\n")
    one_line_error(cli("--groups", groups, "-m", "P@10", letor, scores), f"{groups}:1: group size '1_0'")
    groups.write_text("3\n")
    assert cli("--groups", groups, "-m", "P@10", "--norm", "none", letor, scores).stdout == "P@10\tall\t0.2000\n"
    grade = tmp_path / "l2.txt"
    grade.write_text("2 qid:1 1:0.5\n1_0 qid:1 1:0.2\n")
    one_line_error(cli("-m", "P@10", grade, scores), f"{grade}:2: grade '1_0' is not a number")


def test_digit_separators_are_refused_in_the_zscore_file(tmp_path, files):
    zs = tmp_path / "zs.txt"
    zs.write_text("q1 P_10 1_0 1\n")
    one_line_error(cli("-Z", zs, "--norm", "none", "-m", "P@10", *files), f"{zs}:1: mean '1_0' is not a number")
    for line, reason in (("q1 P_10 0.5 inf", "stddev 'inf' is not a finite number"),
                         ("q1 P_10 0.5 -1", "stddev '-1' is negative")):
        zs.write_text(line + "\n")
        one_line_error(cli("-Z", zs, "--norm", "none", "-m", "P@10", *files), f"{zs}:1: {reason}")


# --------------------------------------------------------------------------- invisibles and the backslash

INVISIBLE = [("\u202e", "\\u202e"), ("\ufeff", "\\ufeff"), ("\u200b", "\\u200b"), ("\xa0", "\\u00a0"),
             ("\\", "\\\\"), ("\t", "\\t"), ("\U000e0041", "\\U000e0041")]


@pytest.mark.parametrize("raw, shown", INVISIBLE)
def test_safe_text_escapes_invisibles_and_the_backslash(raw, shown):
    from ulnorm_eval.render.values import latex_text, markdown_text, safe_text

    assert safe_text(f"a{raw}b") == f"a{shown}b"
    assert safe_text("é中😀 x") == "é中😀 x"  # visible characters stay as they are
    assert raw not in markdown_text(f"a{raw}b").replace("\\\\", "") or raw == "\\"
    assert raw not in latex_text(f"a{raw}b") or raw == "\\"


def test_a_literal_backslash_t_differs_from_an_escaped_tab():
    from ulnorm_eval.render.values import safe_text

    assert safe_text("a\\tb") != safe_text("a\tb")


@pytest.mark.parametrize("fmt", ["trec", "table", "tsv", "markdown"])
def test_invisible_characters_in_query_ids_print_escaped(tmp_path, fmt):
    q = tmp_path / "q.txt"
    q.write_text("q\u202e1 0 d1 1\nq\\t2 0 d1 1\n", encoding="utf-8")
    r = tmp_path / "r.txt"
    r.write_text("q\u202e1 Q0 d1 1 1 r\nq\\t2 Q0 d1 1 1 r\n", encoding="utf-8")
    if fmt == "markdown":  # the paper table names runs: a run file named with U+202E
        evil = tmp_path / "r\u202e.txt"
        evil.write_text(r.read_text(encoding="utf-8"), encoding="utf-8")
        res = cli("compare", "-f", "markdown", "-m", "P@1", "--norm", "none", q, r, evil)
        assert res.exit_code == 0, res.stderr
        assert "\u202e" not in res.stdout and "r\\\\u202e" in res.stdout
        return
    res = cli("-q", "-f", fmt, "-m", "P@1", "--norm", "none", q, r)
    assert res.exit_code == 0, res.stderr
    assert "\u202e" not in res.stdout and "q\\u202e1" in res.stdout
    assert "q\\\\t2" in res.stdout


def test_invisible_characters_in_file_names_print_escaped_in_messages_and_verdicts(tmp_path, files):
    q, r = files
    evil = tmp_path / "r\u202e.txt"
    evil.write_text(RUN)
    res = cli("-m", "P@10", "--fail-below", "P@10=0.9", q, evil)
    assert res.exit_code == 1
    assert "\u202e" not in res.stderr and "FAIL r\\u202e.txt P@10" in res.stderr
    res = cli(q, tmp_path / "gone\ufeff.txt")
    assert "\ufeff" not in res.stderr and "gone\\ufeff.txt" in res.stderr


def test_messages_show_a_literal_backslash_in_a_file_name_doubled(tmp_path, files):
    q, _ = files
    res = cli(q, tmp_path / "a\\tb.run")  # backslash, t: not a tab
    one_line_error(res)
    assert "a\\\\tb.run" in res.stderr
    bad = tmp_path / "x\\y.txt"
    bad.write_text("q1 0 d1\n")
    one_line_error(cli(bad, files[1]), "x\\\\y.txt:1:")


# --------------------------------------------------------------------------- the library refuses what the CLI refuses

Q = {"q1": {"d1": 1, "d2": 0}, "q2": {"d1": 1}}
R = {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d1": 1.0}}


@pytest.mark.parametrize("qrels, run, message", [
    ({None: {"d1": 1}, **Q}, R, "missing query id (None)"),
    ({float("nan"): {"d1": 1}, **Q}, R, "missing query id (nan)"),
    ({"q1": {None: 1, "d1": 1}}, R, "query 'q1': missing document id (None)"),
    (Q, {"q1": {float("nan"): 1.0}}, "query 'q1': missing document id (nan)"),
    (Q, {"q1": {"d1": 1 + 2j, "d2": 1.0}}, "query 'q1', document 'd1': score (1+2j) is not a number"),
    (Q, {"q1": {"d1": __import__("datetime").datetime(2020, 1, 1), "d2": 1.0}}, "score datetime.datetime(2020, 1, 1"),
    ({"q1": {"d1": 1j}}, R, "relevance 1j is not a number"),
])
def test_library_refuses_missing_ids_and_unreal_values_in_dicts(qrels, run, message):
    import ulnorm_eval as ue
    from ulnorm_eval.inputs.errors import InputError

    with pytest.raises(InputError, match=__import__("re").escape(message)):
        ue.evaluate(qrels, run, ["P@1"], [])


@pytest.mark.parametrize("column", ["complex", "datetime", "timedelta"])
def test_library_refuses_unreal_score_columns(column):
    import pandas as pd

    import ulnorm_eval as ue
    from ulnorm_eval.inputs.errors import InputError

    scores = {"complex": [1 + 2j, 1], "datetime": pd.to_datetime(["2020-01-01", "2021-01-01"]),
              "timedelta": pd.to_timedelta([1, 2], unit="s")}[column]
    df = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "score": scores})
    with pytest.raises(InputError, match="row 0: score .* is not a number"):
        ue.evaluate(Q, df, ["P@1"], [])


def test_library_still_reads_real_numbers_of_every_kind():
    import numpy as np

    import ulnorm_eval as ue

    run = {"q1": {"d1": np.int64(3), "d2": np.float32(1.0)}, "q2": {"d1": 1}}
    assert ue.evaluate(Q, run, ["P@1"], []).means == {"run": {"P@1": 1.0}}


@pytest.mark.parametrize("measures, message", [([], "measures=[]: an empty value; give a name"),
                                               ([None], "measures: None is not a measure name"),
                                               (["P@1", ""], "measures: '' is not a measure name")])
@pytest.mark.parametrize("fn", ["evaluate", "compare", "nrg"])
def test_library_refuses_empty_and_non_name_measures(fn, measures, message):
    import ulnorm_eval as ue

    kw = {"priors": [R]} if fn == "nrg" else {}
    runs = [R, {"q1": {"d2": 2.0, "d1": 1.0}, "q2": {"d1": 1.0}}] if fn != "evaluate" else R
    with pytest.raises(ValueError, match=__import__("re").escape(message)):
        getattr(ue, fn)(Q, runs, measures=measures, **kw)


def test_library_nrg_without_priors_is_refused_with_the_cli_words(tmp_path):
    import ulnorm_eval as ue
    from ulnorm_eval.analysis.nrg import NO_PRIOR, NRGError

    with pytest.raises(NRGError, match="no prior run: NRG would equal the measure"):
        ue.nrg(Q, R, measures=["P@1"])
    (tmp_path / "q").write_text("q1 0 d1 1\n")
    (tmp_path / "r").write_text("q1 Q0 d1 1 1 r\n")
    res = cli("nrg", tmp_path / "q", tmp_path / "r")
    one_line_error(res, NO_PRIOR)


@pytest.mark.parametrize("precision", [-3, 18, 1.5, True])
def test_library_paper_table_refuses_the_precisions_the_cli_refuses(precision):
    import ulnorm_eval as ue

    cmp = ue.compare(Q, [R, {"q1": {"d2": 2.0, "d1": 1.0}, "q2": {"d1": 1.0}}], ["P@1"], [])
    with pytest.raises(ValueError, match=r"is not in the range 0<=x<=17 \(as --precision\)"):
        ue.paper_table(cmp, precision=precision)
    assert "P@1" in ue.paper_table(cmp, precision=0)


def test_nrg_counts_a_repeated_prior_once(tmp_path):
    """The same prior twice (by path, or a copy) discounted its documents twice."""
    q = tmp_path / "q"
    q.write_text("q1 0 d1 1\nq1 0 d2 1\nq1 0 d3 1\n")
    run = tmp_path / "run"
    run.write_text("q1 Q0 d1 1 3 a\nq1 Q0 d2 2 2 a\nq1 Q0 d3 3 1 a\n")
    prior = tmp_path / "prior"
    prior.write_text("q1 Q0 d1 1 3 p\nq1 Q0 d9 2 2 p\n")
    copy = tmp_path / "copy"
    copy.write_text(prior.read_text())
    base = cli("nrg", "-m", "P@3", q, run, "--prior", prior)
    assert base.exit_code == 0, base.stderr
    for extra in ([prior], [copy], [prior, copy]):
        res = cli("nrg", "-m", "P@3", q, run, "--prior", prior, *[x for p in extra for x in ("--prior", p)])
        assert res.exit_code == 0, res.stderr
        assert res.stdout == base.stdout
        assert "is the same run as" in res.stderr and "counted once" in res.stderr


# --------------------------------------------------------------------------- --scheduler

@pytest.fixture(scope="module")
def dask_cluster():
    import distributed  # noqa: F401 - the test extra installs dask[distributed]: missing, this fails, never skips
    from dask.distributed import LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None, silence_logs=50) as c:
        yield c


def test_scheduler_workers_get_the_clients_bytes_not_its_paths(dask_cluster, tmp_path, monkeypatch):
    """A worker started in another directory read its own 'r.txt' (P@10 0.0000 for 0.1500, exit 0)."""
    from dask.distributed import Client
    from distributed.diagnostics.plugin import WorkerPlugin

    here, there = tmp_path / "client", tmp_path / "worker"
    here.mkdir()
    there.mkdir()
    (here / "q.txt").write_text(QRELS)
    (here / "r.txt").write_text(RUN)
    (there / "q.txt").write_text(QRELS)
    (there / "r.txt").write_text("q1 Q0 zz 1 3 r\n")  # another file of the same name
    target = str(there)

    class Elsewhere(WorkerPlugin):  # pickled by value: the worker process changes directory
        name = "elsewhere"

        def setup(self, worker):
            os.chdir(target)

    with Client(dask_cluster, set_as_default=False) as client:
        client.register_plugin(Elsewhere())
        monkeypatch.chdir(here)
        for extra in ([], ["--no-stream"]):
            res = cli("--scheduler", dask_cluster.scheduler_address, "-m", "P@10", "--norm", "none", *extra,
                      "q.txt", "r.txt")
            assert res.exit_code == 0, res.stderr
            assert res.stdout == "P@10\tall\t0.1500\n"
        res = cli("nrg", "--scheduler", dask_cluster.scheduler_address, "-m", "P@10", "q.txt", "r.txt",
                  "--prior", "r.txt")
        assert res.exit_code == 0 and res.stdout.startswith("P@10\tall\t0.1500\n"), res.stderr


def _run_cli_subprocess(args, cwd, timeout=60):
    return subprocess.run([sys.executable, "-m", "ulnorm_eval", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=timeout)


def test_scheduler_without_workers_fails_within_its_timeout(tmp_path, files):
    import distributed  # noqa: F401 - the test extra installs dask[distributed]: missing, this fails, never skips
    from dask.distributed import LocalCluster

    with LocalCluster(n_workers=0, processes=True, host="127.0.0.1", dashboard_address=None,
                      silence_logs=50) as c:
        # the old code waited forever: the subprocess' own timeout turns that into a failure
        out = _run_cli_subprocess(["--scheduler", c.scheduler_address, "--scheduler-timeout", "8", "-m", "P@10",
                                   *files], tmp_path)
    assert out.returncode == 2
    assert out.stderr.strip().splitlines()[-1] == (
        f"ulnorm-eval: the Dask scheduler at {c.scheduler_address} has no worker (none joined within 8 s, "
        "--scheduler-timeout): start one with dask worker ADDRESS")


def _listener(reply: bytes | None):
    import socket
    import threading

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    held = []

    def serve():
        while True:
            try:
                c, _ = srv.accept()
            except OSError:
                return
            held.append(c)
            if reply:
                try:
                    c.sendall(reply)
                except OSError:
                    pass

    threading.Thread(target=serve, daemon=True).start()
    return srv, f"tcp://127.0.0.1:{srv.getsockname()[1]}"


def test_a_listener_that_is_not_dask_is_named_so(tmp_path, files):
    import distributed  # noqa: F401 - the test extra installs dask[distributed]: missing, this fails, never skips
    srv, address = _listener(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n" * 50)
    try:
        out = _run_cli_subprocess(["--scheduler", address, "--scheduler-timeout", "5", "-m", "P@10", *files],
                                  tmp_path)
    finally:
        srv.close()
    assert out.returncode == 2
    assert "Maximum allowed dimension" not in out.stderr
    assert out.stderr.strip().splitlines()[-1] in (
        f"ulnorm-eval: cannot connect to a Dask scheduler at {address}: what answered there does not speak Dask's "
        "protocol (is it a Dask scheduler's address?)",
        f"ulnorm-eval: no Dask scheduler answered at {address} within 5 s (--scheduler-timeout): is that a Dask "
        "scheduler's address?")


# --------------------------------------------------------------------------- the checksum is of what was read

def test_json_checksum_of_a_run_replaced_mid_evaluation_is_refused(files, monkeypatch):
    import hashlib

    from ulnorm_eval.pipeline import orchestrator

    q, r = files
    res = cli("-f", "json", "-m", "P@10", "--norm", "none", q, r)
    doc = json.loads(res.stdout)
    assert doc["meta"]["inputs"]["runs"][0]["sha256"] == hashlib.sha256(open(r, "rb").read()).hexdigest()
    original = orchestrator.tell

    def replaced_after_reading(result, warn):  # the run is replaced once its numbers are computed
        with open(r, "w") as fh:
            fh.write("q1 Q0 d9 1 3 other\nq2 Q0 d8 1 3 other\n")
        return original(result, warn)

    monkeypatch.setattr(orchestrator, "tell", replaced_after_reading)
    res = cli("-f", "json", "-m", "P@10", "--norm", "none", q, r)
    one_line_error(res, f"{r}: changed while it was being evaluated")
    assert res.stdout == ""


def test_condensed_variant_over_all_trec_and_of_a_text_measure(files):
    """--norm cl -m all_trec and CL(relstring) were internal errors (TypeError isnan)."""
    res = cli("--norm", "cl", "-m", "all_trec", *files)
    assert res.exit_code == 0, res.stderr
    assert "CL(P@10)\tall\t0.1500" in res.stdout
    one_line_error(cli("-m", "CL(relstring)", *files), "relstring is text")


# --------------------------------------------------------------------------- found by the fourth pass

def test_holes_world_refuses_digit_separators(files):
    one_line_error(cli("--holes", "open=1_0", *files), "Invalid value for '--holes': 'open=1_0'")


def test_shared_tag_note_escapes_a_backslash_in_a_run_name(tmp_path, files):
    q, r = files
    odd = tmp_path / "run\\tx.txt"  # backslash, t
    odd.write_text(RUN)
    res = cli("-m", "P@5", "--norm", "none", q, odd, r)
    assert res.exit_code == 0
    assert "runs run\\\\tx.txt, r.txt share the tag 'r'" in res.stderr
