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

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 1\nq2 0 d1 1\nq2 0 d4 1\n"
RUN = "q1 Q0 d1 1 3 r\nq1 Q0 d2 2 2 r\nq1 Q0 d3 3 1 r\nq2 Q0 d4 1 2 r\nq2 Q0 d9 2 1 r\n"


@pytest.fixture
def files(tmp_path):
    (tmp_path / "q.txt").write_text(QRELS)
    (tmp_path / "r.txt").write_text(RUN)
    (tmp_path / "r2.txt").write_text(RUN.replace(" 3 r", " 0.5 r"))
    return str(tmp_path / "q.txt"), str(tmp_path / "r.txt"), str(tmp_path / "r2.txt")


def one_line(res, *fragments) -> None:
    assert (res.exit_code, res.stdout) == (2, ""), (res.exit_code, res.stdout, res.stderr)
    assert res.stderr.count("\n") == 1 and res.stderr.startswith("ulnorm-eval: "), res.stderr
    for fragment in fragments:
        assert fragment in res.stderr, res.stderr


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
                 "is below 1e-15, where 1 - A/2 is 1")
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
