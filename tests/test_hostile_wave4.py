"""The fresh hostile pass over the fourth wave (issue 52's "done when"): a Dask cluster that loses its
worker or its scheduler, the gate's and the legends' direction of a lower-is-better measure, and the
probes of the orchestrator, the notes, repro, compare's tests, the R ceiling and the pools, each a
test that failed before its fix or a representative of the probes that passed."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import invoke

ROOT = Path(__file__).resolve().parents[1]
QRELS = "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 1\nq2 0 d1 1\nq2 0 d4 1\n"
RUN = "q1 Q0 d1 1 3 r\nq1 Q0 d2 2 2 r\nq1 Q0 d3 3 1 r\nq2 Q0 d4 1 2 r\nq2 Q0 d9 2 1 r\n"


@pytest.fixture
def files(tmp_path):
    (tmp_path / "q.txt").write_text(QRELS)
    (tmp_path / "r.txt").write_text(RUN)
    (tmp_path / "r2.txt").write_text(RUN.replace(" 3 r", " 0.5 r"))
    return str(tmp_path / "q.txt"), str(tmp_path / "r.txt"), str(tmp_path / "r2.txt")


def one_line(res, *fragments) -> None:
    code, out, err = (res.returncode, res.stdout, res.stderr) if hasattr(res, "returncode") else (
        res.exit_code, res.stdout, res.stderr)
    assert (code, out) == (2, ""), (code, out, err)
    assert err.count("\n") == 1 and err.startswith("ulnorm-eval: "), err
    for fragment in fragments:
        assert fragment in err, err


# --------------------------------------------------------------------------- 52.8: a Dask cluster that dies

def _dask(*args):
    return subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_" + args[0], *args[1:]],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)


@pytest.fixture
def dask_processes(tmp_path):
    """A scheduler and one worker without a nanny (nothing restarts it), as processes; the address,
    the scheduler's process and a client."""
    import socket

    from dask.distributed import Client

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    address = f"tcp://127.0.0.1:{port}"
    scheduler = _dask("scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard")
    worker = None
    try:
        worker = _dask("worker", address, "--nthreads", "1", "--no-nanny", "--no-dashboard")
        client = Client(address, timeout="60s", set_as_default=False)
        client.wait_for_workers(1, timeout=60)
        yield address, scheduler, client
        client.close(timeout=5)
    finally:
        for process in (worker, scheduler):
            if process is not None:
                process.kill()
                process.wait()


@pytest.mark.parametrize("victim", ["worker", "scheduler"])
def test_a_dask_cluster_that_loses_its_worker_or_scheduler_ends_the_command(dask_processes, files, tmp_path,
                                                                             victim):
    """The first evaluation task kills its worker (no nanny: no worker is left), or the scheduler:
    the command waited for ever without a word; now one line and exit 2 within --scheduler-timeout."""
    from distributed.diagnostics.plugin import WorkerPlugin

    address, scheduler, client = dask_processes
    target = scheduler.pid if victim == "scheduler" else None

    class Kill(WorkerPlugin):  # defined here: pickled by value to the worker
        name = "kill"

        def transition(self, key, start, finish, **kw):
            if finish == "executing" and "ulnorm-eval-run_task" in str(key):
                if target is None:
                    os._exit(1)
                os.kill(target, signal.SIGKILL)

    client.register_plugin(Kill())
    began = time.monotonic()
    out = subprocess.run([sys.executable, "-m", "ulnorm_eval", "--scheduler", address, "--scheduler-timeout", "3",
                          "-m", "AP", *files], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert time.monotonic() - began < 100
    expected = {"worker": f"the Dask scheduler at {address} lost its workers (none for 3 s, --scheduler-timeout)",
                "scheduler": f"lost the connection to the Dask scheduler at {address}"}[victim]
    one_line(out, expected, "the evaluation was not finished")


# --------------------------------------------------------------------------- a lower-is-better measure's direction

GQRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d1 1\nq2 0 d2 0\n"
# A: every retrieved document judged, RBP_resid 0 on both queries; B: an unjudged x at rank 2 of q1,
# RBP_resid(p=0.9) = 0.9^2 + (1 - 0.9) 0.9^1 = 0.90 on q1, 0 on q2: mean 0.45 (worse: more unjudged weight)
GA = "q1 Q0 d1 1 2 A\nq1 Q0 d2 2 1 A\nq2 Q0 d1 1 2 A\nq2 Q0 d2 2 1 A\n"
GB = "q1 Q0 d1 1 2 B\nq1 Q0 x 2 1 B\nq2 Q0 d1 1 2 B\nq2 Q0 d2 2 1 B\n"


@pytest.fixture
def lower(tmp_path):
    for name, text in (("q", GQRELS), ("A", GA), ("B", GB)):
        (tmp_path / name).write_text(text)
    return str(tmp_path / "q"), str(tmp_path / "A"), str(tmp_path / "B")


def _verdict(res):
    return [line for line in res.stderr.splitlines() if "FAIL" in line or "pass " in line or "gate" in line]


def test_a_rise_of_a_lower_is_better_measure_fails_the_baseline_gate(lower):
    """B's residual rose from 0 to 0.45: worse.  The gate read it as a gain of 0.45 and passed."""
    qrels, a, b = lower
    res = invoke("-m", "RBP_resid", "--norm", "none", "--baseline", a, "--max-drop", "0.1", qrels, b)
    assert res.exit_code == 1, res.stderr
    # paired t on the oriented differences -(0.9, 0): mean -0.45, sd 0.9/sqrt(2), t = -1 on 1 df: p = 0.25
    assert _verdict(res)[1:] == [
        "ulnorm-eval:   FAIL B RBP_resid(p=0.9): mean 0.4500 vs baseline 0.0000, difference +0.4500, limit +0.1000 "
        "(--max-drop, lower is better: a rise fails), margin -0.3500, p = 0.25 (paired t, one-sided, n = 2)"]
    # a drop of the residual is a gain: the baseline A against B passes
    res = invoke("-m", "RBP_resid", "--norm", "none", "--baseline", b, "--max-drop", "0", "--alpha", "0.3", qrels, a)
    assert res.exit_code == 0 and "margin +0.4500, p = 0.75" in res.stderr, res.stderr
    # within --max-drop: a rise of 0.45 under a limit of 0.5 passes, margin 0.05
    res = invoke("-m", "RBP_resid", "--norm", "none", "--baseline", a, "--max-drop", "0.5", qrels, b)
    assert res.exit_code == 0 and "margin +0.0500" in res.stderr, res.stderr


def test_fail_below_of_a_lower_is_better_measure_fails_the_run_above_it(lower):
    """--fail-below RBP_resid=0.3 failed A (residual 0, the best possible) and passed B (0.45)."""
    qrels, a, b = lower
    res = invoke("-m", "RBP_resid", "--norm", "none", "--fail-below", "RBP_resid=0.3", qrels, a, b)
    assert res.exit_code == 1
    assert _verdict(res)[1:] == [
        "ulnorm-eval:   pass A RBP_resid(p=0.9): mean 0.0000, threshold 0.3000 (--fail-below, lower is better: "
        "above it fails), margin +0.3000",
        "ulnorm-eval:   FAIL B RBP_resid(p=0.9): mean 0.4500, threshold 0.3000 (--fail-below, lower is better: "
        "above it fails), margin -0.1500"]
    res = invoke("-m", "RBP_resid", "--norm", "none", "--fail-below", "RBP_resid=0.45", qrels, b)
    assert res.exit_code == 0, res.stderr  # equal passes, as for every measure
    # the Markdown summary: B's threshold is the baseline's 0 + 0.1, its margin 0.1 - 0.45
    summary = Path(qrels).with_name("summary.md")
    res = invoke("-m", "RBP_resid", "--norm", "none", "--baseline", a, "--max-drop", "0.1", "--summary-md", summary,
                 qrels, b)
    text = summary.read_text()
    assert res.exit_code == 1 and "| ❌ fail | B | RBP_resid(p=0.9) | --baseline A (0.0000) --max-drop 0.1 (lower is " \
        "better) | 0.4500 | 0.1000 | -0.3500 |" in text, text


def test_a_higher_is_better_measure_keeps_its_direction(lower):
    """The control: AP, higher is better.  A: AP 1 on both queries; B: 1 on both too (d1 first): equal."""
    qrels, a, b = lower
    res = invoke("-m", "P@2", "--norm", "none", "--baseline", a, "--max-drop", "0.2", qrels, b)
    # P@2: A 0.5 on both queries, B 0.5 on both: difference 0, limit -0.2
    assert res.exit_code == 0 and "difference +0.0000, limit -0.2000 (--max-drop), margin +0.2000" in res.stderr


def test_the_legend_says_iub_is_the_worst_ordering_of_a_lower_is_better_measure(lower):
    qrels, a, b = lower
    last = invoke("-f", "table", "-m", "RBP_resid", "-m", "AP", "--norm", "ul2,iub,wlb", qrels, a).stdout.splitlines()[-1]
    assert ("I = IUB, the best ordering's value (the largest; the worst ordering's for RBP_resid(p=0.9), where lower "
            "is better)") in last and "WLB = the worst ordering's value" in last
    last = invoke("-f", "table", "-m", "AP", "--norm", "ul2,iub", qrels, a).stdout.splitlines()[-1]
    assert "I = IUB, the best ordering's value;" in last and "where lower is better" not in last


def test_compare_ranks_bolds_and_marks_a_lower_is_better_measure_by_its_direction(lower, tmp_path):
    """compare ranked RBP_resid's highest mean 1st ('1 = best'), bolded it in the paper table and
    marked the run with more unjudged weight as significantly better."""
    qrels, a, b = lower
    c = tmp_path / "C"  # RBP_resid(p=0.9): q1 y at rank 2: 0.81 + 0.09 = 0.90; q2 z at rank 1: 0.81 + 0.1 = 0.91
    c.write_text("q1 Q0 d1 1 2 C\nq1 Q0 y 2 1 C\nq2 Q0 z 1 2 C\nq2 Q0 d2 2 1 C\n")
    res = invoke("compare", "-f", "tsv", "--table", "systems", "-m", "RBP_resid", "-m", "P@1", "--norm", "none",
                 qrels, a, b, c)
    assert res.exit_code == 0, res.stderr
    assert res.stdout.splitlines()[1:] == ["A\tRBP_resid(p=0.9)\t0.0\t1", "B\tRBP_resid(p=0.9)\t0.45\t2",
                                           "C\tRBP_resid(p=0.9)\t0.905\t3",
                                           "A\tP@1\t1.0\t1", "B\tP@1\t1.0\t1", "C\tP@1\t0.5\t3"]
    # A - C = (-0.90, -0.91): paired t = -181 on 1 df, p = 0.0035, Holm over 3 pairs: significant for A
    res = invoke("compare", "-f", "markdown", "-m", "RBP_resid", "--norm", "none", qrels, a, b, c)
    assert "| a | A | **0.0000**<sup>c</sup> |" in res.stdout and "| c | C | 0.9050 |" in res.stdout, res.stdout
    res = invoke("compare", "-f", "markdown", "--baseline", c, "-m", "RBP_resid", "--norm", "none", qrels, a, b, c)
    assert "| A | **0.0000**† |" in res.stdout or "**0.0000**<sup>†</sup>" in res.stdout, res.stdout
