"""Shared fixtures: the real evaluation data beside the checkout, and small helpers.

Under CI (the environment variable ``CI`` set and not empty) nothing may skip: a missing
``../shared/data`` (or ``$ULNORM_EVAL_SHARED_DATA``) fails every test that needs it, and any other
skip is reported as a failure, so that a machine without the data cannot go green on the tests that
compare with trec_eval and the published outputs.
"""
from __future__ import annotations

import gzip
import os
import signal
import sys
from pathlib import Path

import pytest
from hypothesis import settings

# CI runs the same examples every time (a red CI blocks a landing; exploring is for local runs).
settings.register_profile("ci", derandomize=True, deadline=None)
if os.environ.get("CI"):
    settings.load_profile("ci")

ROOT = Path(__file__).resolve().parents[1]
# A test session started in the background of a shell without job control (`.ci/run &` from a script,
# `setsid nohup ... &`) inherits SIGINT ignored, and so would every command the tests start: the Ctrl-C
# tests (exit 130, no partial output) then tested an ignored signal and failed (4 of them, 27 November
# 2026).  They stand for a user pressing Ctrl-C in an interactive shell, so the session takes SIGINT
# back; the product itself keeps an ignored SIGINT ignored (cli/guard.py), as a background job expects.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# The package under test: the checkout, or a copy of it (benchmarks/mutation.py sets ULNORM_EVAL_CODE).
# First on sys.path here and on PYTHONPATH for every child process (python -m ulnorm_eval, the console
# script), so that no installed copy (editable elsewhere, or stale) is ever tested instead.
CODE = Path(os.environ.get("ULNORM_EVAL_CODE") or ROOT).resolve()
sys.path.insert(0, str(CODE))
os.environ["PYTHONPATH"] = os.pathsep.join([str(CODE), *filter(None, [os.environ.get("PYTHONPATH")])])

# A test sees the terminal size its session was started with: pytest-xdist's workers (pyproject's -n 2)
# find COLUMNS=80 and LINES=24 in their environment, set in the controlling process after it imported
# this file, and -f table reads COLUMNS when its output is piped (README's examples are shown at the
# natural width).  The controlling process records the sizes it was given; each worker restores them.
if os.environ.get("PYTEST_XDIST_WORKER"):
    for var, value in zip(("COLUMNS", "LINES"), os.environ.get("ULNORM_EVAL_TEST_TERMINAL", ",").split(",")):
        if value:
            os.environ[var] = value
        else:
            os.environ.pop(var, None)
else:
    os.environ["ULNORM_EVAL_TEST_TERMINAL"] = ",".join(os.environ.get(var, "") for var in ("COLUMNS", "LINES"))

SHARED = Path(os.environ.get("ULNORM_EVAL_SHARED_DATA") or Path(__file__).resolve().parents[1].parent / "shared" / "data")
IN_CI = bool(os.environ.get("CI"))


def missing_data(what: Path) -> None:
    """Skip a test whose real data is absent; under CI, fail it instead."""
    message = f"real evaluation data not found at {what} (see the README's test section)"
    if IN_CI:
        pytest.fail(f"{message}; CI must have it (CI is set)", pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="session")
def shared() -> Path:
    """``../shared/data`` (trec_eval's test files, DL-HARD, Robust 2003, LETOR); skip when absent
    (fail under CI)."""
    if not SHARED.is_dir():
        missing_data(SHARED)
    return SHARED


SUMMEVAL = SHARED / "summeval" / "model_annotations.aligned.paired.jsonl.gz"


@pytest.fixture(scope="session")
def summeval_file(shared) -> Path:
    """SummEval's paired file (the summ tests' real data); skip when absent (fail under CI), as
    ``shared`` does, and 'slow' through it."""
    if not SUMMEVAL.exists():
        missing_data(SUMMEVAL)
    return SUMMEVAL


needs_summeval = pytest.mark.usefixtures("summeval_file")


def pytest_collection_modifyitems(config, items):
    """Every test that reads the real data (the ``shared`` fixture, directly or through another fixture) is
    ``slow``: ``pytest -m "not slow"`` is the quick subset (README), ``.ci/run`` runs everything."""
    for item in items:
        if "shared" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slow)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Under CI a skipped test is a failed one (skipif marks, pytest.skip, importorskip alike)."""
    outcome = yield
    rep = outcome.get_result()
    if IN_CI and rep.skipped and not hasattr(rep, "wasxfail"):
        reason = rep.longrepr[2] if isinstance(rep.longrepr, tuple) else str(rep.longrepr)
        rep.outcome = "failed"
        rep.longrepr = f"skipped under CI, which must run every test: {reason}"


def read_trec_eval_output(path: Path) -> dict:
    """trec_eval ``-q`` output as ``{(measure, qid): value_text}`` (values kept as printed)."""
    opener = gzip.open if str(path).endswith(".gz") else open
    out = {}
    with opener(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 3:
                continue
            out[(parts[0].strip(), parts[1])] = parts[2]
    return out


@pytest.fixture
def write(tmp_path):
    """Write text (or bytes) to a file under tmp_path and return its path as a string."""

    def _write(name: str, content, compress: str | None = None) -> str:
        path = tmp_path / name
        data = content.encode("utf-8") if isinstance(content, str) else content
        if compress == "gz":
            data = gzip.compress(data)
        elif compress == "bz2":
            import bz2
            data = bz2.compress(data)
        elif compress == "xz":
            import lzma
            data = lzma.compress(data)
        path.write_bytes(data)
        return str(path)

    return _write


# a two-document summarisation input in the plain layout (tests/data/summ/README.md)
SUMM_DOCS = (ROOT / "tests" / "data" / "summ" / "docs.tsv").read_text(encoding="utf-8")
SUMM_SYSTEM_A = (ROOT / "tests" / "data" / "summ" / "sysA.tsv").read_text(encoding="utf-8")


def invoke(*args, input=None, catch_exceptions=True, env=None):
    """ulnorm-eval run in process (click's CliRunner) with ``args`` (paths given as objects are turned
    into text); the click Result, whatever the exit code.  ``catch_exceptions=False``: an exception the
    command lets through reaches the test with its traceback; ``env``: variables set for the command."""
    from click.testing import CliRunner

    from ulnorm_eval.cli.main import main

    return CliRunner().invoke(main, [str(a) for a in args], input=input, catch_exceptions=catch_exceptions, env=env)


def command(args, env=None):
    """``ulnorm-eval ARGS`` in process, reported as ``subprocess.run(..., capture_output=True, text=True)``
    reports a process: ``returncode``, ``stdout``, ``stderr``.  For what a command prints; what only a
    real process shows (signals, pipes, the exit code of an unexpected error) is tested in processes."""
    from types import SimpleNamespace

    res = invoke(*args, env=env)
    return SimpleNamespace(returncode=res.exit_code, stdout=res.stdout, stderr=res.stderr)


def cli(*args, code=0, input=None):
    """:func:`invoke`, asserting the exit code ``code`` (the output and exception in the message)."""
    res = invoke(*args, input=input)
    assert res.exit_code == code, (res.exit_code, res.output, res.exception)
    return res


def wait_for_signal_state(pid: int, signum: int, field: str = "SigCgt", timeout: float = 60) -> None:
    """Block until process ``pid`` has ``signum`` in its /proc status ``field`` (SigCgt: a handler is
    installed; SigIgn: the signal is ignored), instead of sleeping for a guessed time; AssertionError
    after ``timeout`` seconds."""
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/status") as fh:
                mask = int(next(ln for ln in fh if ln.startswith(field + ":")).split()[1], 16)
        except (OSError, StopIteration):
            mask = 0
        if mask & (1 << (signum - 1)):
            return
        time.sleep(0.01)  # polling the condition, not a guess at how long it takes
    raise AssertionError(f"process {pid} never had signal {signum} in {field}")
