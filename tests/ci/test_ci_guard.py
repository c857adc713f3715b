"""Under CI nothing skips: a CI machine without ../shared/data must go red, not green.

Runs pytest in a child process with the suite's conftest on generated files: two tests that need the
real data (one through the ``shared`` fixture, one through ``summeval_file``, the fixtures the tests of
the real data use), with ``$ULNORM_EVAL_SHARED_DATA`` an empty folder; and two that skip in other ways
(``importorskip``, a ``skipif`` mark).
"""
from __future__ import annotations

import os
import subprocess
import sys

from conftest import ROOT

NEEDS_DATA = ("def test_shared(shared):\n    assert shared.is_dir()\n\n\n"
              "def test_summeval(summeval_file):\n    assert summeval_file.is_file()\n")
SKIPS = ("import pytest\n\n\n"
         "def test_import():\n    pytest.importorskip('ulnorm_eval_no_such_module')\n\n\n"
         "@pytest.mark.skipif(True, reason='a mark')\ndef test_mark():\n    pass\n")


def _pytest(tmp_path, ci: str, test: str = NEEDS_DATA):
    """pytest in a child process, with tests/conftest.py as a plugin, on a file of ``test`` (in tmp_path, away
    from the project's pytest settings); $ULNORM_EVAL_SHARED_DATA an empty folder; CI set to ``ci``."""
    (tmp_path / "test_generated.py").write_text(test)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env.update(ULNORM_EVAL_SHARED_DATA=str(tmp_path / "no-data-here"), PYTHONPATH=os.pathsep.join([str(ROOT / "tests"), str(ROOT)]))
    if ci:
        env["CI"] = ci
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", "-p", "conftest",
                           "test_generated.py"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)


def test_missing_data_fails_under_ci(tmp_path):
    res = _pytest(tmp_path, "true")
    assert res.returncode == 1, res.stdout + res.stderr
    last = res.stdout.splitlines()[-1]  # failing in setup, pytest counts them as errors
    assert "2 errors" in last and "skipped" not in last and "passed" not in last, res.stdout
    assert res.stdout.count("CI must have it (CI is set)") >= 2


def test_missing_data_skips_outside_ci(tmp_path):
    res = _pytest(tmp_path, "")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "2 skipped" in res.stdout.splitlines()[-1]


def test_any_skip_fails_under_ci(tmp_path):
    """conftest's report hook: under CI a skip from importorskip or a skipif mark is a failure."""
    res = _pytest(tmp_path, "true", SKIPS)
    assert res.returncode == 1, res.stdout + res.stderr
    # the mark skips in setup, which pytest counts as an error
    assert "1 failed, 1 error" in res.stdout.splitlines()[-1], res.stdout
    for reason in ("Skipped: a mark", "Skipped: could not import 'ulnorm_eval_no_such_module'"):
        assert f"skipped under CI, which must run every test: {reason}" in res.stdout, res.stdout


def test_the_same_skips_stay_skips_outside_ci(tmp_path):
    res = _pytest(tmp_path, "", SKIPS)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "2 skipped" in res.stdout.splitlines()[-1], res.stdout


def test_ci_script_refuses_to_run_without_the_data(tmp_path):
    """.ci/run checks the data before installing anything (run from a copy: it cds to its parent)."""
    (tmp_path / ".ci").mkdir()
    script = tmp_path / ".ci" / "run"
    script.write_bytes((ROOT / ".ci" / "run").read_bytes())
    env = dict(os.environ, ULNORM_EVAL_SHARED_DATA=str(tmp_path / "no-data-here"))
    res = subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True, timeout=60)
    assert res.returncode == 1
    assert res.stderr == f".ci/run: real evaluation data missing: {tmp_path / 'no-data-here'}/trec_eval_test (see the README's test section)\n"
    assert [p.name for p in tmp_path.iterdir()] == [".ci"]  # no .venv: nothing was installed


def test_ci_script_finds_the_data_beside_the_repository_it_was_cloned_from(tmp_path):
    """``git clone . /tmp/x && cd /tmp/x && bash .ci/run``: ../shared is not beside the clone, but it is
    beside its origin; .ci/run uses that (and says so) before installing anything (here a stand-in
    python3 stops it right there)."""
    origin = tmp_path / "work" / "repo"
    for d in ("trec_eval_test", "robust03", "dlhard-passage", "letor", "summeval"):
        (tmp_path / "work" / "shared" / "data" / d).mkdir(parents=True)
    clone = tmp_path / "elsewhere" / "x"
    (clone / ".ci").mkdir(parents=True)
    origin.mkdir()
    (clone / ".ci" / "run").write_bytes((ROOT / ".ci" / "run").read_bytes())
    subprocess.run(["git", "init", "-q", str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "remote", "add", "origin", str(origin)], check=True)
    stub = tmp_path / "bin"
    stub.mkdir()
    (stub / "python3").write_text("#!/bin/sh\necho \"$ULNORM_EVAL_SHARED_DATA\" >&2\nexit 3\n")
    (stub / "python3").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != "ULNORM_EVAL_SHARED_DATA"}
    env["PATH"] = f"{stub}{os.pathsep}{env['PATH']}"
    res = subprocess.run(["bash", str(clone / ".ci" / "run")], env=env, capture_output=True, text=True, timeout=60)
    data = (tmp_path / "work" / "shared" / "data").resolve()
    assert res.returncode == 3
    assert res.stderr.splitlines() == [f".ci/run: evaluation data beside the repository this was cloned from: {data}",
                                       str(data)]
