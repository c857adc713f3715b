"""The third hostile pass (issue 40): each line of its report as a test that failed before the fix.

Data loss and false success first, then silent wrong numbers, crashes and messages.  Every error is
one ``ulnorm-eval: ...`` line and exit 2; exit 1 means only a failed gate (docs/errors.md).
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from ulnorm_eval.cli.main import main

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 1\nq2 0 d1 1\nq2 0 d4 1\n"
RUN = "q1 Q0 d1 1 3 r\nq1 Q0 d2 2 2 r\nq1 Q0 d3 3 1 r\nq2 Q0 d4 1 2 r\nq2 Q0 d9 2 1 r\n"


@pytest.fixture
def files(tmp_path):
    (tmp_path / "q.txt").write_text(QRELS)
    (tmp_path / "r.txt").write_text(RUN)
    return str(tmp_path / "q.txt"), str(tmp_path / "r.txt")


def cli(*args, input=None):
    return CliRunner().invoke(main, [str(a) for a in args], input=input)


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
            extra = set(rf._path_inputs())
        paths = {p.name for p in cmd.params if isinstance(p.type, click.Path) and p.type.file_okay}
        outs = {k for k, _ in rf.OUTPUT_KEYS}
        assert paths - outs <= set(rf.INPUT_KEYS) | extra, name


SIGNAL_SCRIPT = r"""
import signal, sys
SIG = getattr(signal, "SIG")
signal.signal(SIG, signal.SIG_IGN)
from ulnorm_eval.cli.guard import _install
old = _install()
print(signal.getsignal(SIG) == signal.SIG_IGN)
"""


@pytest.mark.parametrize("sig", ["SIGHUP", "SIGINT", "SIGTERM"])
def test_an_inherited_ignored_signal_stays_ignored(sig):
    """nohup and trap '' INT TERM: the command must not undo them (it exited 129 under nohup)."""
    out = subprocess.run([sys.executable, "-c", SIGNAL_SCRIPT.replace('"SIG"', repr(sig))],
                         capture_output=True, text=True, check=True, cwd=os.sep)
    assert out.stdout.strip() == "True"


def test_nohup_run_survives_a_hangup(tmp_path):
    q = tmp_path / "q"
    r = tmp_path / "r"
    q.write_text("".join(f"q{i} 0 d{j} {j % 3}\n" for i in range(100) for j in range(30)))
    r.write_text("".join(f"q{i} Q0 d{j} {j} {1000 - j} x\n" for i in range(100) for j in range(600)))
    out = tmp_path / "out.txt"
    code = ("import signal,sys; signal.signal(signal.SIGHUP, signal.SIG_IGN); "
            "from ulnorm_eval.cli.main import main; sys.argv=['ulnorm-eval']+sys.argv[1:]; main()")
    p = subprocess.Popen([sys.executable, "-c", code, "-m", "UL2(G)", "-o", str(out), str(q), str(r)],
                         stderr=subprocess.PIPE, cwd=tmp_path)
    time.sleep(1.0)
    p.send_signal(signal.SIGHUP)
    assert p.wait(120) == 0, p.stderr.read()
    assert out.read_text().startswith("UL2(G)\tall\t")
