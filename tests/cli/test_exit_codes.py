"""Exit codes of every command in a real process (docs/errors.md): 0 ok, 1 only a failed gate,
2 usage or input error (one line, nothing on stdout), 141 when stdout's reader is gone.

The processes run ``python -m ulnorm_eval`` with the package under test first on PYTHONPATH
(tests/conftest.py), never whatever console script happens to be installed.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import ulnorm_eval
from conftest import CODE, SUMM_DOCS, SUMM_SYSTEM_A
from ulnorm_eval.cli.main import main

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 1\nq2 0 d4 1\nq2 0 d5 0\nq10 0 d6 1\nq10 0 d7 0\n"
RUN_A = "q1 Q0 d1 1 3.0 A\nq1 Q0 d2 2 2.0 A\nq1 Q0 d3 3 1.0 A\nq2 Q0 d5 1 2.0 A\nq2 Q0 d4 2 1.0 A\n"
RUN_B = ("q1 Q0 d3 1 3.0 B\nq1 Q0 d1 2 2.0 B\nq1 Q0 d2 3 1.0 B\nq2 Q0 d4 1 2.0 B\nq2 Q0 d5 2 1.0 B\n"
         "q10 Q0 d7 1 2.0 B\nq10 Q0 d6 2 1.0 B\n")
DOCS, SUMS = SUMM_DOCS, SUMM_SYSTEM_A
SYSTEMS_A = "run\tmetric\tmean\trank\na.run\tAP\t0.4444\t2\nb.run\tAP\t0.8333\t1\n"  # compare --table systems
SYSTEMS_B = "run\tmetric\tmean\trank\na.run\tAP\t0.9\t1\nb.run\tAP\t0.8\t2\n"

# command -> arguments that succeed (files named as in the fixture below)
OK = {
    "eval": ["-m", "AP", "--norm", "none", "qrels", "a.run", "b.run"],
    "compare": ["-m", "AP", "--norm", "none", "qrels", "a.run", "b.run"],
    "queries": ["-m", "AP", "qrels", "a.run"],
    "nrg": ["--leave-one-out", "-m", "nDCG@10", "qrels", "a.run", "b.run"],
    "summ": ["-m", "ROUGE-1", "--norm", "none", "docs.tsv", "sysA.tsv"],
    "stability": ["-k", "2", "qrels", "a.run", "b.run"],
    "swaps": ["systems_a.tsv", "systems_b.tsv"],
    "repro": ["-m", "AP", "qrels", "a.run", "b.run"],
    "measures": [],
}
# the commands with a gate, and a gate that fails
GATES = {
    "eval": [["-m", "AP", "--norm", "none", "--fail-below", "AP=0.9", "qrels", "a.run"],
             ["-m", "AP", "--norm", "none", "--baseline", "b.run", "qrels", "a.run"]],
    "summ": [["-m", "ROUGE-1", "--norm", "none", "--fail-below", "ROUGE-1=0.99", "docs.tsv", "sysA.tsv"]],
    "repro": [["-m", "AP", "--max-rmse", "0.01", "qrels", "a.run", "b.run"],
              ["-m", "AP", "--min-ktu", "0.9", "qrels", "a.run", "b.run"]],
}
# a missing input file for each command that reads files
MISSING = {c: [("missing.run" if a.endswith(".run") else "missing.tsv" if a in ("sysA.tsv", "systems_b.tsv") else a)
               for a in args]
           for c, args in OK.items() if args}


@pytest.fixture
def work(tmp_path):
    for name, text in (("qrels", QRELS), ("a.run", RUN_A), ("b.run", RUN_B), ("docs.tsv", DOCS), ("sysA.tsv", SUMS),
                       ("systems_a.tsv", SYSTEMS_A), ("systems_b.tsv", SYSTEMS_B)):
        (tmp_path / name).write_text(text)
    return tmp_path


def process(cwd, command, args, *, close_stdout=False):
    """``python -m ulnorm_eval COMMAND ARGS`` in ``cwd``: (exit code, stdout, stderr)."""
    argv = [sys.executable, "-m", "ulnorm_eval", command, *args]
    if close_stdout:  # no reader at all: the first write fails
        p = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        p.stdout.close()
        _, err = p.communicate(timeout=300)
        return p.returncode, "", err
    p = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def test_every_command_is_covered():
    assert set(main.all_commands()) == set(OK)


def test_processes_import_the_package_under_test(tmp_path):
    """In this process, in ``python -m`` children and behind the console script on PATH (the venv's,
    as test_action.py calls it): ulnorm_eval comes from the code under test, not an older install."""
    assert Path(ulnorm_eval.__file__).resolve().is_relative_to(CODE)
    probe = "import ulnorm_eval; print(ulnorm_eval.__file__)"
    out = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert Path(out.stdout.strip()).resolve().is_relative_to(CODE)
    path = str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", "")
    script = shutil.which("ulnorm-eval", path=path)
    assert script, "the console script is installed with the package (pip install '.[test]')"
    interpreter = Path(script).read_text(encoding="utf-8", errors="replace").splitlines()[0][2:].split()
    out = subprocess.run([*interpreter, "-c", probe], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert Path(out.stdout.strip()).resolve().is_relative_to(CODE)


@pytest.mark.parametrize("command", list(OK))
def test_exit_0_writes_everything(work, command):
    code, out, err = process(work, command, OK[command])
    assert code == 0, err
    assert out.strip() and "Traceback" not in err


@pytest.mark.parametrize("command, args", [(c, a) for c, gates in GATES.items() for a in gates],
                         ids=lambda x: x if isinstance(x, str) else "-".join(x[4:5]))
def test_exit_1_only_for_a_failed_gate(work, command, args):
    code, out, err = process(work, command, args)
    assert code == 1, err
    assert "FAIL" in err and "Traceback" not in err
    assert out.strip()  # the numbers are written before the verdict


@pytest.mark.parametrize("command", [c for c in OK if c not in GATES])
def test_commands_without_a_gate_refuse_gate_options_with_2(work, command):
    code, out, err = process(work, command, ["--fail-below", "AP=0.9", *OK[command]])
    assert code == 2 and out == "" and len(err.splitlines()) == 1, err
    assert "No such option" in err


@pytest.mark.parametrize("command", list(MISSING))
def test_exit_2_on_a_missing_input(work, command):
    code, out, err = process(work, command, MISSING[command])
    assert code == 2, err
    assert out == "" and len(err.splitlines()) == 1 and "Traceback" not in err
    assert "missing." in err and "no such file" in err


@pytest.mark.parametrize("command", list(OK))
def test_exit_2_on_a_bad_option(work, command):
    code, out, err = process(work, command, ["--no-such-option", *OK[command]])
    assert code == 2 and out == "", err
    assert len(err.splitlines()) == 1 and err.startswith("ulnorm-eval: ") and "No such option '--no-such-option'" in err


@pytest.mark.parametrize("command", list(OK))
def test_exit_141_when_stdout_is_closed(work, command):
    code, _, err = process(work, command, OK[command], close_stdout=True)
    assert code == 141, err
    assert "Traceback" not in err


@pytest.mark.parametrize("command, args", [(c, a) for c, gates in GATES.items() for a in gates[:1]])
def test_exit_141_beats_a_failing_gate(work, command, args):
    """A closed stdout is 141 even when the gate would fail: 1 must mean that the gate was seen."""
    code, _, err = process(work, command, args, close_stdout=True)
    assert code == 141, err


@pytest.mark.parametrize("command, args", [(c, a) for c, gates in GATES.items() for a in gates])
def test_stderrs_reader_gone_changes_neither_the_code_nor_the_outputs(work, command, args):
    """With stderr a pipe whose reader is gone (``2>&1 >/dev/null | true``), the notes and the verdict
    are lost but a failed gate still exits 1 and -o is written (issue 52, item 10; it was 141, no -o)."""
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first message: every write to stderr fails (EPIPE)
    try:
        argv = [sys.executable, "-m", "ulnorm_eval", command, "-o", "out.txt", *args]
        p = subprocess.run(argv, cwd=work, stdout=subprocess.DEVNULL, stderr=write, timeout=300)
    finally:
        os.close(write)
    assert p.returncode == 1
    assert (work / "out.txt").read_text().strip()


# usage errors no other test reaches: one line naming the option and the reason, exit 2, before any input is read
USAGE = [(["-c", "--run-queries-only"], "-c (every qrels query) and --run-queries-only contradict each other"),
         (["-j", "x"], "'x' is not a valid integer"), (["-j", "-1"], "give 'auto' or a number of worker processes >= 1"),
         (["--scheduler", "tcp://h:1", "-j", "2"], "-j/--jobs and --scheduler exclude each other"),
         (["--holes", "open,closed"], "'open,closed': give open=est, closed, open, open=N or open=P%"),
         (["--alpha", "", "--ci"], "'--alpha': '' is not a valid float"),
         (["stability", "--phi", ","], "',' names nothing (a comma-separated list)")]


@pytest.mark.parametrize("args, message", USAGE)
def test_usage_errors_are_one_line_before_any_input(args, message):
    from conftest import invoke

    res = invoke(*args, "no-qrels.txt", "no-run", "no-run-2")
    assert res.exit_code == 2 and message in res.output and len(res.output.splitlines()) == 1, res.output
