"""Progress bars: one rich bar with the time left for every long step of summ (ROUGE's Monte Carlo E),
compare (the runs, then the paired tests and swap trials) and stability (the SLSQP starts).  Shown on a
terminal or with ULNORM_EVAL_PROGRESS=always, never on stdout, never in a pipe.

Oracles: the units each step reports are counted (the SLSQP starts of the fitted optima, the documents
of every round, one unit per compared metric), and a command's stdout is compared byte for byte with
and without the bars, through a pseudo-terminal for stderr as a user's shell gives it."""
from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner

from ulnorm_eval.cli.main import main
from ulnorm_eval.render import progress as pr

from conftest import ROOT

EX = ROOT / "examples"
QRELS = str(EX / "qrels" / "dlhard-passage.qrels.txt")
RUNS = [str(p) for p in sorted((EX / "runs").glob("*.run.gz"))]
LABELS = {"stability": "stability: SLSQP starts", "compare": "comparing: paired tests", "summ": "ROUGE and its Monte",
          "eval": "evaluating bm25.run.gz"}


@pytest.fixture
def texts(tmp_path):
    docs = tmp_path / "docs.tsv"
    docs.write_text("d1\tthe cat sat on the mat today while the dog slept\tthe cat sat\ta cat on a mat\n"
                    "d2\tstorms flooded the town and the river rose\tstorms hit the town\ttown flooded\n"
                    "d3\tprices rose in the spring markets fell later\tprices rose\tmarkets fell\n")
    a = tmp_path / "sysA.tsv"
    a.write_text("d1\tthe cat sat on the mat\nd2\tstorms flooded town\nd3\tprices fell\n")
    b = tmp_path / "sysB.jsonl"
    b.write_text("".join(json.dumps({"id": d, "summary": s}) + "\n"
                         for d, s in (("d1", "a dog"), ("d2", "town"), ("d3", "markets rose in spring"))))
    return [str(docs), str(a), str(b)]


def commands(texts):
    return {"stability": ["stability", "-k", "5", "--restarts", "1", "-f", "tsv", QRELS, *RUNS],
            "compare": ["compare", "-f", "tsv", "-m", "P@5", "-m", "nDCG@10", "--norm", "none", "--swap-trials",
                        "20", QRELS, *RUNS],
            "summ": ["summ", "-f", "tsv", "-m", "ROUGE-2", "--norm", "e", "--draws", "20", *texts],
            "eval": ["eval", "-f", "tsv", "-m", "AP", "-m", "UL2(G)", "--permutations", "50", QRELS, *RUNS]}


# --------------------------------------------------------------------------- the units each step reports


def test_stability_ticks_every_slsqp_start_and_its_total_says_how_many():
    """The bar's total (entry_starts per measure, cutoff and fitting half) is the number of SLSQP
    starts the optima report (Optimum.starts), and each start advances the bar once."""
    from ulnorm_eval.analysis import stability as st

    design = st.load_design(QRELS, RUNS, 5)
    for unconstrained, restarts, holdout in (("none", 0, 0), ("both", 2, 0), ("gains", 1, 2)):
        heard, totals = [], []

        def advance(units=1.0, total=None):
            if total is not None:
                totals.append(total)
            heard.append(units)

        options = st.StudyOptions(unconstrained=unconstrained, restarts=restarts, holdout=holdout)
        rows, _ = st.study(design, [st.parse_measure("nDCG")], [3, 5], options, progress=advance)
        fitted = sum(r["starts"] for r in rows if r["starts"])  # the full-topic fits; each half refits as many
        assert totals == [st.entry_starts(unconstrained, restarts) * 2 * (1 + holdout)]
        assert fitted * (1 + holdout) == totals[0] == sum(heard)
    assert st.entry_starts("none", 0) == 4 + 3 + 8  # 3 named discounts + uniform; 2 gains + uniform; 6 pairs + 2 optima
    assert st.entry_starts("both", 2) == 4 + 5 + 3 + 4 + 8 + 5 * 2


def test_compare_reports_one_unit_per_metric_in_parts():
    from ulnorm_eval.analysis.compare import compare_files

    heard, totals = [], []

    def advance(units=1.0, total=None):
        if total is not None:
            totals.append(total)
        heard.append(units)

    compare_files(QRELS, RUNS, ["P@5", "nDCG@10", "AP"], [], test="randomization", reps=100, swap_trials=50,
                  progress=advance)
    assert totals == [3]
    assert sum(heard) == pytest.approx(3.0)
    assert len([u for u in heard if u > 0]) >= 6  # paired tests and swap trials separately, per metric
    assert all(u >= 0 for u in heard)


def test_summ_reports_each_document_of_every_round(texts, monkeypatch):
    """summ's ROUGE bar counts documents x rounds (1, plus --mc-repeats with --correlate)."""
    import contextlib
    import dataclasses

    from ulnorm_eval.pipeline import summ_eval as se

    opened, heard = [], []

    @contextlib.contextmanager
    def spy(enabled, label, total=None):
        opened.append((enabled, label, total))
        yield lambda units=1.0, total=None: heard.append(units)

    monkeypatch.setattr(pr, "work_bar", spy)
    request = se.SummRequest(data=texts[0], systems=tuple(texts[1:]), measures=["ROUGE-2"], variants=["E"], options=se.SummOptions(draws=20),
                             progress=pr)  # the command line's bars, as cli/summ.py hands them over
    se.summ_for_request(request, [])
    assert opened == [(True, "ROUGE and its Monte Carlo E (documents)", 3)] and sum(heard) == 3
    se.summ_for_request(dataclasses.replace(request, progress=None), [])  # no bars: none opened
    assert len(opened) == 1


# --------------------------------------------------------------------------- shown only where it belongs


def test_compare_with_holes_reports_each_run_it_evaluates():
    """With hole bounds the runs are read first (their holes are shared) and evaluated after: the bytes
    bar ends with the reading, so the evaluation (2.2 s a Robust run at --holes-samples 200) has a bar of
    its own, one unit per run, in process and with -j."""
    from ulnorm_eval.analysis.compare import compare_files

    from ulnorm_eval import load_qrels
    from ulnorm_eval.pipeline.parallel import executor

    judged = load_qrels(QRELS)
    for jobs in (1, 2):
        heard = []
        with executor(judged, jobs) as ex:
            compare_files(judged, RUNS, ["P@5"], [], holes=True, evaluated=lambda: heard.append(1), executor=ex)
        assert len(heard) == len(RUNS)


def test_compare_holes_bar_on_the_command_line(monkeypatch):
    args = ["compare", "-f", "tsv", "-m", "P@5", "--holes", "--holes-samples", "10", QRELS, *RUNS]
    plain = CliRunner().invoke(main, args)
    assert plain.exit_code == 0, plain.output
    monkeypatch.setenv(pr.PROGRESS_ENV, "always")
    shown = CliRunner().invoke(main, args)
    assert shown.exit_code == 0, shown.output
    text = re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", shown.stderr)
    # rich draws at 10 Hz: a state as short as one small file's reading may never be drawn, the last one is
    assert "evaluating the runs with their hole bounds" in text and "read 3 runs" in text
    assert "evaluating bm25.run.gz" not in text  # the bytes bar says what it measures: the reading
    assert shown.stdout_bytes == plain.stdout_bytes


@pytest.mark.parametrize("command", ["stability", "compare", "summ", "eval"])
def test_forced_bars_reach_stderr_only_and_leave_stdout_alone(command, texts, monkeypatch):
    """ULNORM_EVAL_PROGRESS=always: the step's bar (its label, the time left) is on stderr, stdout is
    byte for byte what it is without bars; without the switch a non-terminal stderr gets no bar."""
    args = commands(texts)[command]
    # stability's first run in a process differs from later ones in the last bit, with or without bars
    # (not with OPENBLAS_NUM_THREADS=1: OpenBLAS's threads); so the runs compared come after a first one
    CliRunner().invoke(main, args)
    plain = CliRunner().invoke(main, args)
    assert plain.exit_code == 0, plain.output
    assert LABELS[command] not in plain.stderr and "ETA" not in plain.stderr
    monkeypatch.setenv(pr.PROGRESS_ENV, "always")
    shown = CliRunner().invoke(main, args)
    assert shown.exit_code == 0, shown.output
    assert LABELS[command] in shown.stderr and "ETA" in shown.stderr
    assert shown.stdout_bytes == plain.stdout_bytes
    assert "ETA" not in shown.stdout and "\x1b" not in shown.stdout
    off = CliRunner().invoke(main, [args[0], "--no-progress", *args[1:]])
    assert "ETA" not in off.stderr and off.stdout_bytes == plain.stdout_bytes


def test_never_switches_bars_off_even_when_forced_elsewhere(monkeypatch):
    monkeypatch.setenv(pr.PROGRESS_ENV, "never")
    assert not pr.shown(True)
    monkeypatch.setenv(pr.PROGRESS_ENV, "always")
    assert pr.shown(True) and not pr.shown(False)  # --no-progress wins


def test_what_is_printed_while_a_bar_is_up_stays_on_stdout(monkeypatch, capfd):
    """rich redirects stdout into its display by default (to stderr, the console's file): a line the
    command prints while a bar is up would leave the pipe.  Never here."""
    monkeypatch.setenv(pr.PROGRESS_ENV, "always")
    with pr.work_bar(True, "a step", 2) as advance:
        print("a result line")
        advance()
        with pr.work_bar(True, "a step inside it", 1) as inner:  # joins the display on screen
            inner()
        advance()
    out, err = capfd.readouterr()
    assert out == "a result line\n"
    assert "a step" in err and "a result line" not in err
    assert pr._ACTIVE == []


def test_disabled_bars_import_no_rich():
    code = ("import sys; from ulnorm_eval.render import progress as pr\n"
            "with pr.work_bar(False, 'x', 5) as a: a(); a(0, total=9)\n"
            "print('rich' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.stdout.strip() == "False", out.stderr


def _with_terminal_stderr(args):
    """Run ulnorm-eval with stdout a pipe and stderr a pseudo-terminal: (stdout bytes, terminal bytes)."""
    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k != pr.PROGRESS_ENV}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.Popen([sys.executable, "-m", "ulnorm_eval", *args], stdout=subprocess.PIPE, stderr=slave,
                            stdin=subprocess.DEVNULL, cwd=ROOT, env=env)
    os.close(slave)
    seen = b""
    while True:
        ready, _, _ = select.select([master], [], [], 60)
        if not ready:
            break
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the terminal is closed when the process exits
            break
        if not chunk:
            break
        seen += chunk
    out = proc.stdout.read()
    proc.wait(timeout=120)
    os.close(master)
    assert proc.returncode == 0, seen.decode(errors="replace")
    return out, seen


def test_a_terminal_gets_the_bar_and_the_pipe_only_the_numbers():
    """As a user runs `ulnorm-eval stability ... | awk`: stderr is the terminal, stdout a pipe."""
    args = ["stability", "-k", "5", "--restarts", "1", "-f", "tsv", QRELS, *RUNS]
    out, terminal = _with_terminal_stderr(args)
    assert b"stability: SLSQP starts" in terminal and b"ETA" in terminal
    piped = subprocess.run([sys.executable, "-m", "ulnorm_eval", *args], capture_output=True, cwd=ROOT,
                           env={**{k: v for k, v in os.environ.items() if k != pr.PROGRESS_ENV},
                                "PYTHONPATH": str(ROOT)})
    assert piped.returncode == 0 and b"ETA" not in piped.stderr
    assert out == piped.stdout and b"\x1b" not in out
    assert np.isfinite([float(x.split(b"\t")[6]) for x in out.splitlines()[1:]]).all()  # phi


@pytest.mark.parametrize("name", ["SIGUSR1", "SIGQUIT"])
def test_a_signal_that_ends_the_process_first_shows_the_cursor_again(tmp_path, name):
    """SIGQUIT or SIGUSR1 while a bar is up (its display hides the cursor) ended the process with the
    cursor still hidden (issue 52, item 11): the display is taken down first (the cursor shown, rich's
    ESC [?25h), then the process ends by that signal, as it would have."""
    import signal

    from conftest import wait_for_signal_state

    sig = getattr(signal, name)
    fifo = tmp_path / "run.fifo"
    os.mkfifo(fifo)  # the run never comes: the bar stays up while the command waits for it
    (tmp_path / "q").write_text("1 0 a 1\n")
    proc = subprocess.Popen([sys.executable, "-m", "ulnorm_eval", "-m", "AP", "--norm", "none", str(tmp_path / "q"),
                             str(fifo)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, pr.PROGRESS_ENV: "always"}, preexec_fn=_no_core_dump)
    try:
        wait_for_signal_state(proc.pid, sig, timeout=120)  # the bar is up: its handler is installed (120 s: a hang, not a loaded machine)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == -sig
    hidden = err.rindex(b"\x1b[?25l")
    assert b"\x1b[?25h" in err[hidden:]


def _no_core_dump():
    import resource

    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # SIGQUIT's default action dumps core
