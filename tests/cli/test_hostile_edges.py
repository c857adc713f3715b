"""The fourth hostile pass (issue 52), items at the edges of the command line, the renderers and the
library (10 to 14): each a test that failed before its fix, or a documented refusal (one line, exit 2).
Items 10 and 11 (stderr's reader gone, a fatal signal during a bar) are in test_exit_codes.py and
test_progress.py; the --trec items (6, 7, 12's UL2) in test_trec_mode.py."""
from __future__ import annotations

import math
import subprocess
import sys

import pytest

from conftest import invoke

from toy_files import QRELS, RUN, files, one_line  # noqa: F401 (files: the fixture, imported to be found)


# --------------------------------------------------------------------------- 12: settings silently ignored

def test_an_empty_scheduler_address_is_refused(files):
    """--scheduler '' ran on this machine without a word: the option asks for a cluster."""
    one_line(invoke("--scheduler", "", "-m", "AP", *files[:2]), "--scheduler '': no address")
    one_line(invoke("compare", "--scheduler", " ", "-m", "AP", *files), "--scheduler ' ': no address")


@pytest.mark.parametrize("value", ["garbage", "alway", "2"])
def test_an_unknown_progress_setting_is_refused(files, monkeypatch, value):
    """ULNORM_EVAL_PROGRESS=garbage was taken as unset; a setting that is silently ignored is refused."""
    monkeypatch.setenv("ULNORM_EVAL_PROGRESS", value)
    one_line(invoke("-m", "AP", *files[:2]), f"ULNORM_EVAL_PROGRESS={value!r}: expected always or never")
    monkeypatch.setenv("ULNORM_EVAL_PROGRESS", " Never ")
    assert invoke("-m", "AP", "--norm", "none", *files[:2]).exit_code == 0


def test_alpha_below_1e_15_is_refused_and_1e_15_gives_finite_intervals(files):
    """compare --alpha 5e-324 printed [-inf, inf] (1 - alpha/2 is 1 in double precision) and eval --ci
    failed with an internal error; below 1e-15 --alpha is refused, at 1e-15 the intervals are finite."""
    for command in (["compare", "-f", "tsv", *files], ["eval", "--ci", *files[:2]]):
        one_line(invoke(*command[:1], "--alpha", "5e-324", "-m", "AP", "--norm", "none", *command[1:]),
                 "5e-324 is not in the range 1e-15<=x<1")
    res = invoke("compare", "-f", "tsv", "--table", "pairs", "--alpha", "1e-15", "-m", "AP", "--norm", "none", *files)
    header, row = res.stdout.splitlines()[:2]
    cells = dict(zip(header.split("\t"), row.split("\t")))
    # 2 queries (1 degree of freedom): [-7.2e13, 7.2e13], wide but finite
    assert res.exit_code == 0 and all(math.isfinite(float(cells[k])) for k in ("ci_low", "ci_high")), res.stdout


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["eval", "--help"]])
def test_help_and_version_to_a_full_disk_say_one_line(args):
    """--help and --version to /dev/full printed two error lines (click's, then the final flush's)."""
    with open("/dev/full", "w") as full:
        p = subprocess.run([sys.executable, "-m", "ulnorm_eval", *args], stdout=full, stderr=subprocess.PIPE,
                           text=True, timeout=120)
    assert p.returncode == 2
    assert p.stderr == "ulnorm-eval: standard output: cannot write: no space left on device\n"


# --------------------------------------------------------------------------- 13: numbers without a word

@pytest.mark.parametrize("mangle", [lambda d: "D" + d, lambda d: d + "\u200b"], ids=["prefix", "zero-width space"])
def test_a_run_whose_docids_all_miss_the_qrels_gets_a_note(tmp_path, mangle):
    """A run whose docids all miss the qrels (a prefix, a trailing zero-width space) scored 0 with exit 0
    and no word, where a run sharing no query id is refused: a note says none of its documents is in
    the qrels, read whole, streamed in blocks and under -j; a run with one judged document gets none."""
    import ulnorm_eval as ue
    from ulnorm_eval.pipeline.orchestrator import evaluate_runs

    (tmp_path / "q").write_text(QRELS)
    lines = [line.split() for line in RUN.splitlines()]
    (tmp_path / "bad").write_text("".join(f"{q} Q0 {mangle(d)} {r} {s} t\n" for q, _, d, r, s, _ in lines))
    (tmp_path / "one").write_text("".join(f"{q} Q0 {mangle(d) if i else d} {r} {s} t\n"
                                          for i, (q, _, d, r, s, _) in enumerate(lines)))
    note = "bad: none of its 5 ranked documents is in the qrels, so every measure is 0"
    for extra in ([], ["--stream"], ["-j", "2", tmp_path / "one"]):
        res = invoke("-m", "AP", "--norm", "none", tmp_path / "q", tmp_path / "bad", *extra)
        assert res.exit_code == 0 and "AP\tall\t0.0000" in res.stdout.splitlines()[:2] and note in res.stderr
        assert "one: none of" not in res.stderr
    qrels = ue.load_qrels(str(tmp_path / "q"))
    (streamed,) = evaluate_runs(qrels, [str(tmp_path / "bad")], [ue.parse_measure("AP")], ue.Options(), stream=True,
                                block_bytes=40)
    assert any(note in n for n in streamed.notes)  # counted over several blocks


def test_no_interval_and_no_claim_from_fewer_queries_than_an_interval_needs(tmp_path):
    """One defined query gave a 95% interval [x, x] over the topics.  A percentile interval is taken from
    n >= 4 queries at 95% (n**-n below the 2.5% tail: with 3, the resample of the lowest query three times
    has chance 1/27 > 2.5% and the interval's end is that query's value); with fewer, --ci gives no
    interval (null in json) for a plain measure or a normalisation, and a note with the rule."""
    import json

    from ulnorm_eval.core.intervals import min_queries

    assert [min_queries(level) for level in (0.5, 0.9, 0.95, 0.99, 1 - 1e-15)] == [3, 3, 4, 4, 14]
    qrels = "".join(f"q{i} 0 a 1\nq{i} 0 b 0\nq{i} 0 c 0\n" for i in range(4))
    run = "".join(f"q{i} Q0 b 1 3 r\nq{i} Q0 c 2 2 r\nq{i} Q0 a 3 1 r\n" for i in range(4))  # a last: AP 1/3 < E
    (tmp_path / "r").write_text(run)
    for n, shown in ((1, False), (3, False), (4, True)):
        (tmp_path / f"q{n}").write_text("".join(qrels.splitlines(keepends=True)[: 3 * n]))
        res = invoke("--ci", "-f", "json", "-m", "AP", "--norm", "em", "--notes", "all", tmp_path / f"q{n}", tmp_path / "r")
        span = json.loads(res.stdout)["runs"][0]["ci"]["EM(AP)"]
        assert res.exit_code == 0 and (None not in span) == shown, span
        many = f"{n} quer{'y' if n == 1 else 'ies'}"
        rule = f"r: no interval of AP from {many}, EM(AP) from {many}: a percentile bootstrap needs n queries"
        assert (rule in res.stderr) == (not shown), res.stderr
    ci = invoke("--ci", "--norm", "none", "-f", "json", "-m", "AP", tmp_path / "q4", tmp_path / "r")
    assert ci.exit_code == 0 and "no interval of AP" not in ci.stderr, ci.stderr  # 4 queries at 95%
    few = invoke("--ci", "--alpha", "0.001", "--norm", "none", "-m", "AP", "--notes", "all", tmp_path / "q4", tmp_path / "r")
    assert "r: no interval of AP from 4 queries" in few.stderr  # 99.9% needs 5: 4**-4 = 0.39% > 0.05%


# --------------------------------------------------------------------------- 14: the library's refusals

def test_a_lone_surrogate_in_an_id_is_an_input_error_naming_the_row():
    """A surrogate in a docid (a file name decoded with surrogateescape) raised a raw UnicodeEncodeError."""
    import ulnorm_eval as ue
    from ulnorm_eval.inputs.errors import InputError

    for qrels, run, where in (({"q": {"a": 1, "d\ud800": 1}}, {"q": {"a": 1.0}}, "<qrels>: row 1: document id"),
                              ({"q": {"a": 1}}, {"q": {"a": 1.0}, "q\udc80": {"a": 2.0}}, "run: row 1: query id")):
        with pytest.raises(InputError) as caught:
            ue.evaluate(qrels, run, ["AP"], variants=[])
        assert str(caught.value).startswith(where) and "lone surrogate" in str(caught.value)


@pytest.mark.parametrize("kind", ["qrels", "run"])
def test_a_frame_with_a_column_twice_is_refused(kind):
    """Duplicate DataFrame columns raised AttributeError ('DataFrame' object has no attribute 'dtype')."""
    import pandas as pd

    import ulnorm_eval as ue
    from ulnorm_eval.inputs.errors import InputError

    qrels = pd.DataFrame([["q", "a", 1]], columns=["query_id", "doc_id", "relevance"])
    run = pd.DataFrame([["q", "a", 1.0]], columns=["query_id", "doc_id", "score"])
    bad = {"qrels": qrels, "run": run}[kind]
    bad = pd.concat([bad, bad.iloc[:, 2]], axis=1)  # the value column twice, under one name
    with pytest.raises(InputError, match=f"has the column '{bad.columns[2]}' twice"):
        ue.evaluate(bad if kind == "qrels" else qrels, bad if kind == "run" else run, ["AP"], variants=[])


def test_integer_scores_beyond_2_to_the_53_are_refused_not_tied():
    """int64 scores 2^53 + 1 and 2^53 became one float64 and tied (ordered by docid): AP 0.5 for a run
    whose scores rank the relevant document first.  Refused, naming the row; 2^53 itself is exact."""
    import numpy as np
    import pandas as pd

    import ulnorm_eval as ue
    from ulnorm_eval.inputs.errors import InputError

    qrels = {"q": {"a": 1, "b": 0}}
    frame = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "score": np.array([2**53 + 1, 2**53])})
    for run, where in ((frame, "run: row 0: score 9007199254740993"),
                       ({"q": {"a": 2**53 + 1, "b": 2**53}}, "run: query 'q', document 'a': score 9007199254740993")):
        with pytest.raises(InputError) as caught:
            ue.evaluate(qrels, run, ["AP"], variants=[])
        assert str(caught.value).startswith(where) and "beyond 2^53" in str(caught.value)
    exact = frame.assign(score=np.array([2**53, 2**53 - 1]))
    assert ue.evaluate(qrels, exact, ["AP"], variants=[]).runs[0].mean[ue.parse_measure("AP")] == 1.0
