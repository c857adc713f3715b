"""Docs are code: every shell example of README.md and docs/*.md runs here and must exit as shown.

What counts as an example:

- a ```sh (or bash, shell) block: run as one bash script, line by line, in a sandbox directory;
- a ``$ command`` line of a ```text block: run on its own; the lines below it, up to the next
  ``$`` line, are its output.  Output that is not generated (no ``<!-- BEGIN name -->`` markers
  around the block; those are checked by test_cli_docs.py against scripts/gen_docs.py) must be
  exactly what the command prints (a line ``...`` ends the comparison: the output goes on).

The sandbox holds what the examples name: ``examples/`` (the bundled data), ``qrels.txt`` and
``qrels`` (the bundled DL-HARD qrels), ``run.gz`` and ``runs/`` (the bundled runs), an empty
``docs/``, and ``../shared/data`` (the real data, ``$ULNORM_EVAL_SHARED_DATA``; examples that use it
are skipped when it is absent).  ``$GITHUB_STEP_SUMMARY`` is a file of the sandbox.

Directives, an HTML comment on the line before a block (``<!-- docs-test: cwd=DIR exit=N -->``):
``cwd=DIR`` runs it in DIR (relative to the sandbox, e.g. ``../shared/data/dlhard-passage``);
``exit=N``: the exit code it must end with (default 0; a ``$`` example whose output shows
``gate FAILED`` must exit 1).  Lines that cannot run in a test suite are checked instead:
``python3 -m venv``/``. .venv/bin/activate`` (set-up), ``pip install`` (every extra named must be in
pyproject.toml), ``python -m pytest`` (this suite), ``python benchmarks/X.py ...`` (every option it
uses must be in that script's ``--help``).  Anything else fails with the page and line, so a new kind
of example is taught here rather than silently not run.
"""
from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from conftest import ROOT, missing_data

import pytest

from conftest import SHARED

PAGES = [ROOT / "README.md"] + sorted(p for p in (ROOT / "docs").glob("*.md") if p.name != "cli.md")
EXTRAS = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"].get("optional-dependencies", {}))
HOW = ("(tests/docs/test_examples.py runs every shell example of README.md and docs/; its docstring says "
       "what an example may do)")


@dataclass
class Example:
    page: str
    line: int
    lines: list  # (line number, command)
    output: str | None = None  # the shown output of a `$` example
    generated: bool = False
    cwd: str = "."
    exit: int = 0
    checked: list = field(default_factory=list)

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def _directives(text: str, start: int) -> dict:
    before = text[:start].rstrip().rsplit("\n", 1)[-1]
    m = re.fullmatch(r"<!-- docs-test: (.*) -->", before.strip())
    return dict(kv.split("=", 1) for kv in m.group(1).split()) if m else {}


def _logical(body: str, first: int) -> list:
    """(line number, command) of a shell block: continuation lines joined, comments and blanks dropped."""
    out, cur, start = [], "", first
    for i, raw in enumerate(body.split("\n")):
        if not cur:
            start = first + i
        line = raw.rstrip()
        if line.endswith("\\"):
            cur += line[:-1] + " "
            continue
        cur += line
        code = re.split(r"\s{2,}#|^#", cur, maxsplit=1)[0].strip()  # a comment after two spaces
        if code:
            out.append((start, code))
        cur = ""
    return out


def examples() -> list:
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        name = page.relative_to(ROOT).as_posix()
        spans = [(m.start(), m.end()) for m in re.finditer(r"<!-- BEGIN ([\w-]+) -->.*?<!-- END \1 -->", text, re.S)]
        for m in re.finditer(r"^```(sh|bash|shell|text)\n(.*?)^```", text, re.S | re.M):
            lang, body = m.groups()
            line = text[:m.start()].count("\n") + 1
            d = _directives(text, m.start())
            generated = any(a <= m.start() < b for a, b in spans)
            if lang != "text":
                found.append(Example(name, line, _logical(body, line + 1), None, generated, d.get("cwd", "."),
                                     int(d.get("exit", 0))))
                continue
            rows = body.split("\n")
            for i, row in enumerate(rows):
                if not row.startswith("$ "):
                    continue
                out = []
                for nxt in rows[i + 1:]:
                    if nxt.startswith("$ "):
                        break
                    out.append(nxt)
                shown = "\n".join(out).rstrip("\n")
                code = int(d.get("exit", 1 if "gate FAILED" in shown else 0))
                found.append(Example(name, line + 1 + i, [(line + 1 + i, row[2:])], shown, generated,
                                     d.get("cwd", "."), code))
    return found


EXAMPLES = examples()


def _benchmark_help(script: str) -> str:
    path = ROOT / "benchmarks" / script
    assert path.exists(), f"no {path}"
    proc = subprocess.run([sys.executable, str(path), "--help"], capture_output=True, text=True, cwd=ROOT / "benchmarks")
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _check_or_keep(ex: Example, lineno: int, command: str) -> str:
    """The command as the script runs it: ulnorm-eval and plain shell are kept; set-up, pip, pytest and
    benchmark lines are checked here and replaced by ``:``."""
    parts = [p.strip() for p in re.split(r"\s&&\s", command)]
    kept = []
    for part in parts:
        words = shlex.split(part)
        while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]) and len(words) > 1:
            words = words[1:]  # PATH=...:$PATH python ...: an environment prefix
        head = " ".join(words[:3])
        where = f"{ex.page}:{lineno}: `{part}`"
        if words[:3] == ["python3", "-m", "venv"] or words[:1] in (["."], ["source"]):
            ex.checked.append(f"{where}: set-up, not run")
            continue
        if words[:2] == ["pip", "install"] or words[:4] == ["python", "-m", "pip", "install"]:
            for spec in words[2:]:
                extras = re.fullmatch(r"\.\[([\w,-]+)\]", spec)
                if extras:
                    missing = set(extras.group(1).split(",")) - EXTRAS
                    assert not missing, f"{where}: no extra {sorted(missing)} in pyproject.toml {HOW}"
                elif spec != "." and not spec.startswith("-") and "==" not in spec:
                    raise AssertionError(f"{where}: installs {spec!r}, neither this project nor a pinned "
                                         f"package {HOW}")
            ex.checked.append(f"{where}: extras exist, not run")
            continue
        if words[:3] == ["python", "-m", "pytest"]:
            ex.checked.append(f"{where}: this test suite, not run")
            continue
        if len(words) >= 2 and words[0] in ("python", "python3") and words[1].startswith("benchmarks/"):
            helps = _benchmark_help(words[1].split("/", 1)[1])
            for w in words[2:]:
                if w.startswith("--"):
                    opt = w.split("=", 1)[0]
                    assert re.search(rf"(?<![\w-]){re.escape(opt)}(?![\w-])", helps), \
                        f"{where}: {opt} is not an option of {words[1]} (see its --help) {HOW}"
            ex.checked.append(f"{where}: options exist, not run")
            continue
        if words[:1] == ["ulnorm-eval"] or re.fullmatch(r"[A-Za-z_]\w*=\S+", part):
            kept.append(part)
            continue
        raise AssertionError(f"{where}: not a kind of example this test can run or check ({head}) {HOW}")
    return " && ".join(kept) if kept else ":"


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory) -> Path:
    top = tmp_path_factory.mktemp("docs")
    work = top / "work"
    work.mkdir()
    (work / "examples").symlink_to(ROOT / "examples")
    qrels = ROOT / "examples" / "qrels" / "dlhard-passage.qrels.txt"
    for name in ("qrels.txt", "qrels"):
        shutil.copy(qrels, work / name)
    runs = sorted((ROOT / "examples" / "runs").glob("*.run.gz"))
    (work / "runs").mkdir()
    for r in runs:
        shutil.copy(r, work / "runs" / r.name)
    shutil.copy(runs[0], work / "run.gz")
    (work / "docs").mkdir()
    if SHARED.is_dir():
        (top / "shared").mkdir()
        (top / "shared" / "data").symlink_to(SHARED)
    return work


def test_examples_are_found():
    pages = {e.page for e in EXAMPLES}
    assert {"README.md", "docs/comparing.md", "docs/gate.md", "docs/nrg.md", "docs/bounds.md"} <= pages
    assert sum(len(e.lines) for e in EXAMPLES) >= 25


@pytest.mark.parametrize("ex", EXAMPLES, ids=[e.where for e in EXAMPLES])
def test_example_runs_as_shown(ex: Example, sandbox: Path, tmp_path: Path):
    script = ["set -u"]
    for lineno, command in ex.lines:
        kept = _check_or_keep(ex, lineno, command)
        script.append(kept)
    body = "\n".join(script)
    if "shared/data" in body + ex.cwd and not SHARED.is_dir():
        missing_data(SHARED)  # skipped on a machine without the data; a failure under CI (conftest)
    if script[1:] == [":"] * (len(script) - 1):
        return  # checked only (set-up, pip, pytest, benchmark options): nothing to run
    if ex.exit == 0:
        body = "set -e\n" + body  # a block: every line must succeed
    cwd = (sandbox / ex.cwd).resolve()
    assert cwd.is_dir(), f"{ex.where}: docs-test cwd={ex.cwd} does not exist {HOW}"
    env = dict(os.environ, GITHUB_STEP_SUMMARY=str(tmp_path / "summary.md"),
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
    for var in ("ULNORM_EVAL_DEBUG", "COLUMNS", "LINES"):  # the output shown is the default width's
        env.pop(var, None)
    proc = subprocess.run(["bash", "-c", body], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    shown = "\n".join(c for _, c in ex.lines)
    assert proc.returncode == ex.exit, (
        f"{ex.where}: `{shown}` exited {proc.returncode}, the page shows exit {ex.exit} {HOW}\n"
        f"stderr:\n{proc.stderr[-2000:]}")
    if ex.output is not None and not ex.generated:
        got = proc.stdout.rstrip("\n").split("\n")
        want = ex.output.split("\n")
        if "..." in want:
            want = want[:want.index("...")]
            got = got[:len(want)]
        assert got == want, (f"{ex.where}: the output shown under `$ {shown}` is not what it prints now; "
                             f"paste the real output {HOW}\n--- shown\n" + "\n".join(want) + "\n--- printed\n"
                             + "\n".join(got))


def test_failures_name_page_line_and_remedy():
    """A new kind of example fails with where it is and what to do, not silently."""
    ex = Example("docs/x.md", 7, [(8, "make everything")])
    with pytest.raises(AssertionError, match=r"docs/x.md:8: `make everything`: not a kind of example .*docstring"):
        _check_or_keep(ex, 8, "make everything")
    with pytest.raises(AssertionError, match=r"no extra \['nosuch'\] in pyproject.toml"):
        _check_or_keep(ex, 8, "pip install '.[nosuch]'")
    with pytest.raises(AssertionError, match="--nosuch is not an option of benchmarks/run.py"):
        _check_or_keep(ex, 8, "python benchmarks/run.py --quick --nosuch")
