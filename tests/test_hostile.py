"""Hostile inputs and options: never a traceback, never exit 1 for an error, inputs unchanged.

Exit 1 means only "a CI gate failed" (docs/errors.md); every error is one ``ulnorm-eval: ...``
line on stderr with exit 2.
"""
from __future__ import annotations

import hashlib
import os

import pytest
from click.testing import CliRunner

from ulnorm_eval.cli.main import main

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


def cli(*args, input=None):
    return CliRunner().invoke(main, [str(a) for a in args], input=input)


def one_line_error(res, expected: str | None = None) -> str:
    assert res.exit_code == 2, (res.exit_code, res.stdout, res.stderr)
    assert "Traceback" not in res.stderr
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert lines and lines[-1].startswith("ulnorm-eval: "), res.stderr
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
