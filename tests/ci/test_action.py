"""action.yml: the composite GitHub Action's gate step, run locally with its inputs substituted (GitHub
itself is not exercised: the install step is only checked to pip-install the action's own path)."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

from conftest import ROOT


load = yaml.safe_load  # PyYAML: the test extra installs it

ACTION = load((ROOT / "action.yml").read_text(encoding="utf-8"))


def step(name):
    return next(s for s in ACTION["runs"]["steps"] if s["name"] == name)


def test_action_shape():
    assert ACTION["runs"]["using"] == "composite"
    assert {"qrels", "runs", "fail-below", "baseline", "max-drop", "alpha", "test"} <= set(ACTION["inputs"])
    assert ACTION["inputs"]["qrels"]["required"] and ACTION["inputs"]["runs"]["required"]
    install = step("Install ulnorm-eval")
    assert install["shell"] == "bash" and 'pip install --quiet "$GITHUB_ACTION_PATH"' in install["run"]
    assert step("Gate")["shell"] == "bash"


def run_gate(tmp_path, summary_text="earlier step\n", **given):
    """The Gate step's script under bash, ${{ inputs.x }} replaced by the given or default inputs.

    It calls the ``ulnorm-eval`` console script of this interpreter's environment; conftest.py puts the
    code under test first on PYTHONPATH, so the script runs it (test_exit_codes.py checks)."""
    gate = step("Gate")
    inputs = {k: str(v.get("default", "")) for k, v in ACTION["inputs"].items()}
    inputs.update({k.replace("_", "-"): str(v) for k, v in given.items()})
    env = dict(os.environ)
    for k, v in gate["env"].items():
        m = re.fullmatch(r"\$\{\{ inputs\.([\w-]+) \}\}", v)
        assert m, v
        env[k] = inputs[m.group(1)]
    summary = tmp_path / "step_summary.md"
    summary.write_text(summary_text, encoding="utf-8")
    env["GITHUB_STEP_SUMMARY"] = str(summary)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    proc = subprocess.run(["bash", "-c", gate["run"]], env=env, cwd=tmp_path, capture_output=True, text=True)
    return proc, summary.read_text(encoding="utf-8")


def test_gate_passes(shared, tmp_path):
    d = shared / "dlhard-passage"
    proc, summary = run_gate(tmp_path, qrels=d / "qrels.txt", runs=f"{d}/runs/bm25.run.gz",
                             measures="nDCG@10 AP", fail_below="UL2(nDCG@10)=-0.5 nDCG@10=0.30")
    assert proc.returncode == 0, proc.stderr
    assert "gate passed: 2 checks" in proc.stderr
    assert summary.startswith("earlier step\n\n## ulnorm-eval gate: passed (2 checks)\n")  # appended
    assert "| ✅ pass | bm25.run | nDCG@10 | --fail-below 0.3 over 50 of 50 queries | 0.3037 | 0.3000 | +0.0037 |  |" in summary
    doc = json.loads((tmp_path / "ulnorm-eval.json").read_text())
    assert len(doc["meta"]["inputs"]["qrels"]["sha256"]) == 64
    assert [r["name"] for r in doc["meta"]["inputs"]["runs"]] == ["bm25.run"]


def test_gate_fails_on_a_significant_drop(shared, tmp_path):
    d = shared / "dlhard-passage"
    proc, summary = run_gate(tmp_path, qrels=d / "qrels.txt", runs=f"{d}/runs/bm25_rm3.run.gz",
                             measures="nDCG@10", variants="none", baseline=f"{d}/runs/bm25.run.gz",
                             max_drop="0.01", alpha="0.05", output="")
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == "nDCG@10\tall\t0.2728\n"
    assert "## ulnorm-eval gate: FAILED (1 of 1 check)" in summary
    assert ("| ❌ fail | bm25_rm3.run | nDCG@10 | --baseline bm25.run (0.3037) --max-drop 0.01 | 0.2728 | 0.2937 | "
            "-0.0209 | 0.0206 (paired t, one-sided, n = 50 of 50 queries; fails if < 0.05) |") in summary


def test_runs_are_patterns_and_names_keep_their_parentheses(shared, tmp_path):
    d = shared / "dlhard-passage"
    proc, summary = run_gate(tmp_path, qrels=d / "qrels.txt", runs=f"{d}/runs/bm25_rm3*.run.gz",
                             measures="RBP(p=0.9)", variants="none", fail_below="RBP(p=0.9)=0.9", output="")
    assert proc.returncode == 1
    assert summary.count("❌ fail") == 3  # bm25_rm3, bm25_rm3_bert_zs, bm25_rm3_t5_zs
    assert "| RBP(p=0.9) |" in summary


def test_bad_input_exits_2(tmp_path):
    proc, summary = run_gate(tmp_path, qrels="missing.qrels", runs="missing.run")
    assert proc.returncode == 2
    assert proc.stderr.strip() == "ulnorm-eval: missing.qrels: no such file"
    assert summary == "earlier step\n"


GATE_MD = (ROOT / "docs" / "gate.md").read_text(encoding="utf-8")


def yaml_blocks():
    return [load(b) for b in re.findall(r"```yaml\n(.*?)```", GATE_MD, re.S)]


def test_documented_action_usage_names_only_real_inputs():
    usage = next(b for b in yaml_blocks() if isinstance(b, dict) and "steps" in b)
    step_ = next(s for s in usage["steps"] if "ulnorm-eval" in s.get("uses", ""))
    assert set(step_["with"]) <= set(ACTION["inputs"])
    assert {"qrels", "runs", "fail-below", "baseline"} <= set(step_["with"])


def test_documented_gitlab_job_runs(shared, tmp_path):
    """The GitLab snippet's ulnorm-eval line on DL-HARD (main = bm25, candidate = bm25_rm3): the gate fails."""
    job = next(b for b in yaml_blocks() if isinstance(b, dict) and "retrieval-gate" in b)["retrieval-gate"]
    assert any("pip install" in line for line in job["script"])
    line = next(line for line in job["script"] if line.startswith("ulnorm-eval "))
    d = shared / "dlhard-passage"
    line = (line.replace("qrels.txt", str(d / "qrels.txt")).replace("runs/main.run.gz", str(d / "runs" / "bm25.run.gz"))
            .replace("runs/candidate.run.gz", str(d / "runs" / "bm25_rm3.run.gz")))
    env = dict(os.environ, PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
    proc = subprocess.run(["bash", "-c", line], env=env, cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 1, proc.stderr
    # nDCG@10 and EM(nDCG@10) drop significantly (EM's mean, 0.2587, is above 0.25); AP and EM(AP) rise
    assert (tmp_path / "gate.md").read_text(encoding="utf-8").startswith("## ulnorm-eval gate: FAILED (2 of 5 checks)")
    assert set(job["artifacts"]["paths"]) == {p.name for p in tmp_path.iterdir()}


def _fake_python(tmp_path, layout):
    """An interpreter stand-in: `-m venv DIR` makes DIR/<layout>/python, which logs what it is asked."""
    log = tmp_path / "calls.log"
    fake = tmp_path / "fakepython"
    fake.write_text(f"""#!/usr/bin/env bash
if [ "$1 $2" = "-m venv" ]; then
  mkdir -p "$3/{layout}"
  printf '#!/usr/bin/env bash\\necho "venv python $*" >> {log}\\n' > "$3/{layout}/python"
  chmod +x "$3/{layout}/python"
fi
""")
    fake.chmod(0o755)
    return fake, log


def test_install_step_finds_the_venv_on_every_runner(tmp_path):
    """bin/ on Linux and macOS, Scripts/ on Windows runners: the step installs with that venv's python
    and puts that folder on the job's PATH."""
    install = step("Install ulnorm-eval")
    for layout in ("bin", "Scripts"):
        d = tmp_path / layout
        d.mkdir()
        fake, log = _fake_python(d, layout)
        gh_path = d / "github_path"
        env = dict(os.environ, UL_PYTHON=str(fake), RUNNER_TEMP=str(d), GITHUB_PATH=str(gh_path),
                   GITHUB_ACTION_PATH=str(ROOT))
        proc = subprocess.run(["bash", "-c", install["run"]], env=env, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        venv = d / "ulnorm-eval-venv" / layout
        assert gh_path.read_text().strip() == str(venv)
        assert log.read_text().strip() == f"venv python -m pip install --quiet {ROOT}"


def test_action_documents_pinning_and_every_test():
    text = (ROOT / "action.yml").read_text(encoding="utf-8")
    assert "Pin it to a release tag" in text and "commit SHA" in text
    assert "t, randomization or bootstrap" in ACTION["inputs"]["test"]["description"]
