"""A gate with nothing measured fails, on every path (docs/gate.md, "Undefined values").

The qrels judge every document of a query with one grade (MS MARCO style): every ranking of the
judged pool (--pool qrels) scores alike, so each ratio variant is undefined for every query.  With ``--undefined skip``
its mean is NaN, and every gate on it must exit 1 with the reason, whatever the options
(``--fail-below`` with any threshold, ``--baseline`` with or without ``--max-drop``, ``--alpha``,
each ``--test``, the variant named in ``-m`` or added by ``--norm``); with ``--undefined zero`` the
same checks compare defined zeros and follow the ordinary rules.
"""
from __future__ import annotations

import ulnorm_eval
import pytest
from click.testing import CliRunner

from ulnorm_eval.cli.main import main
from ulnorm_eval.core.registry import VARIANTS

ONE_GRADE = "q1 0 d1 1\nq1 0 d2 1\nq2 0 d3 1\nq2 0 d4 1\n"
RUN = "q1 Q0 d1 1 2 A\nq1 Q0 d9 2 1 A\nq2 Q0 d3 1 2 A\nq2 Q0 d8 2 1 A\n"
BASE = "q1 Q0 d1 1 2 B\nq1 Q0 d2 2 1 B\nq2 Q0 d3 1 2 B\nq2 Q0 d4 2 1 B\n"
RATIO = [v.name for v in VARIANTS.values() if v.kind in ("ratio", "distribution")]

GATES = [
    ["--fail-below", "{m}=0.1"],
    ["--fail-below", "{m}=-1000"],  # a threshold any defined value passes
    ["--baseline", "{base}"],
    ["--baseline", "{base}", "--max-drop", "0.5"],
    ["--baseline", "{base}", "--alpha", "0.05"],
    ["--baseline", "{base}", "--alpha", "0.05", "--test", "randomization"],
    ["--baseline", "{base}", "--alpha", "0.05", "--test", "bootstrap"],
    ["--baseline", "{base}", "--alpha", "0.5", "--max-drop", "0.1", "--test", "t"],
]


@pytest.fixture
def data(tmp_path):
    for name, text in (("qrels", ONE_GRADE), ("run", RUN), ("base", BASE)):
        (tmp_path / name).write_text(text)
    return tmp_path


def _gate(data, variant, gate, undefined, via_norm, md=None):
    metric = f"{variant}(nDCG@10)"
    measure = ["-m", "nDCG@10", "--norm", variant.lower()] if via_norm else ["-m", metric, "--norm", "none"]
    args = [a.format(m=metric, base=data / "base") for a in gate]
    extra = ["--summary-md", str(md)] if md else []
    return CliRunner().invoke(main, [*measure, "--pool", "qrels", "--undefined", undefined, *args, *extra,
                                     str(data / "qrels"), str(data / "run")])


def test_every_ratio_variant_is_undefined_on_one_grade_qrels():
    # the premise of the matrix below: otherwise it would test nothing
    assert set(RATIO) >= {"UL1", "UL2", "MM", "UEW", "EB", "EM", "DB"}


@pytest.mark.parametrize("variant", RATIO)
@pytest.mark.parametrize("via_norm", [False, True])
def test_undefined_gate_fails_on_every_path(data, variant, via_norm):
    for gate in GATES:
        res = _gate(data, variant, gate, "skip", via_norm)
        err = res.stderr
        assert res.exit_code == 1, (gate, res.exit_code, err)
        assert "gate FAILED" in err and "Traceback" not in err, (gate, err)
        fails = [ln for ln in err.splitlines() if ln.startswith(f"ulnorm-eval:   FAIL run {variant}(nDCG@10)")]
        assert len(fails) == 1, (gate, err)
        assert fails[0].endswith("; undefined: the run's mean is undefined (no query has a defined value)"), fails


@pytest.mark.parametrize("variant", ["UL2", "DB"])
def test_the_same_gates_on_defined_zeros_follow_the_ordinary_rules(data, variant):
    """--undefined zero: both runs score 0 on every query, so only the 0.1 threshold fails."""
    for gate in GATES:
        res = _gate(data, variant, gate, "zero", False)
        expected = 1 if gate == GATES[0] else 0
        assert res.exit_code == expected, (gate, res.exit_code, res.stderr)
        assert "undefined:" not in res.stderr


def test_the_plain_measure_beside_an_undefined_variant_is_still_judged(data):
    res = _gate(data, "UL2", ["--baseline", "{base}", "--alpha", "0.05"], "skip", True)
    lines = res.stderr.splitlines()
    plain = [ln for ln in lines if " run nDCG@10:" in ln]
    # nDCG@10 0.6131 vs the baseline's 1.0: a drop with p = 0 (constant differences): failed, defined
    assert len(plain) == 1 and plain[0].startswith("ulnorm-eval:   FAIL run nDCG@10: mean 0.6131 vs baseline 1.0000")
    assert "undefined" not in plain[0]
    assert "gate FAILED: 2 of 2 checks" in res.stderr


def test_an_undefined_baseline_mean_fails(data, tmp_path):
    """A defined run against a baseline whose mean is undefined (evaluated on other qrels, through the
    library): the check fails with the baseline's reason."""
    import math

    from ulnorm_eval.analysis import gate
    from ulnorm_eval.pipeline import evaluate as api

    metric = api.resolve_metrics(["UL2(nDCG@10)"], [])
    name = ["UL2(nDCG@10)"]
    graded = tmp_path / "graded"
    graded.write_text("q1 0 d1 2\nq1 0 d2 1\nq1 0 d3 0\nq2 0 d3 1\nq2 0 d4 0\n")
    opts = api.Options(undefined="skip", pool="run")  # the run's pool: a query can be uninformative
    good = ulnorm_eval.evaluate(str(graded), [str(data / "run")], name, [], opts).runs[0]
    q = data / "qrels"
    base = ulnorm_eval.evaluate(str(q), [str(data / "base")], name, [], opts)
    assert math.isnan(base.runs[0].mean[metric[0]]) and not math.isnan(good.mean[metric[0]])
    result = base.__class__(metrics=metric, runs=[good], options=opts, qrels_path=str(graded), run_paths=["run"])
    checks = gate.check_baseline(result, base.runs[0], 0.0, 0.05)
    assert [c.failed for c in checks] == [True]
    assert checks[0].undefined == gate.NO_BASE
    from ulnorm_eval.render.gate_md import describe

    assert describe(checks[0]).endswith("; undefined: " + gate.NO_BASE)


ONE_QUERY = "q1 0 d1 1\nq1 0 d2 0\n"
WORSE = "q1 Q0 d2 1 2 A\nq1 Q0 d1 2 1 A\n"
BETTER = "q1 Q0 d1 1 2 B\nq1 Q0 d2 2 1 B\n"


@pytest.mark.parametrize("test", ["t", "randomization", "bootstrap"])
def test_a_drop_whose_p_value_is_undefined_fails(tmp_path, test):
    """One query: the paired tests have no p-value.  A drop then fails (its significance cannot be
    judged), no drop passes; never an internal error (scipy's randomization test refuses one pair)."""
    for name, text in (("qrels", ONE_QUERY), ("worse", WORSE), ("better", BETTER)):
        (tmp_path / name).write_text(text)

    def gate(run, base):
        return CliRunner().invoke(main, ["-m", "P@1", "--norm", "none", "--baseline", str(tmp_path / base),
                                         "--alpha", "0.05", "--test", test, str(tmp_path / "qrels"),
                                         str(tmp_path / run)])

    res = gate("worse", "better")
    assert res.exit_code == 1, res.stderr
    assert res.stderr.splitlines()[-1] == (
        f"ulnorm-eval:   FAIL worse P@1: mean 0.0000 vs baseline 1.0000, difference -1.0000, limit +0.0000 "
        f"(--max-drop), margin -1.0000, p = nan ({gate_name(test)}, one-sided, n = 1 of 1 query, alpha = 0.05); "
        "undefined: the drop's p-value is undefined (fewer than two queries with defined values in both runs)")
    res = gate("better", "worse")
    assert res.exit_code == 0, res.stderr
    assert "undefined" not in res.stderr and "gate passed: 1 check" in res.stderr


def gate_name(test):
    return {"t": "paired t", "randomization": "paired randomization", "bootstrap": "paired bootstrap"}[test]


@pytest.mark.parametrize("test", ["t", "randomization", "bootstrap"])
def test_undefined_gate_in_the_markdown_summary(data, tmp_path, test):
    md = tmp_path / "summary.md"
    res = _gate(data, "UL2", ["--baseline", "{base}", "--alpha", "0.05", "--test", test], "skip", False, md)
    assert res.exit_code == 1
    text = md.read_text()
    assert text.startswith("## ulnorm-eval gate: FAILED (1 of 1 check)\n")
    assert f"| ❌ fail (undefined) | run | UL2(nDCG@10) | --baseline base (nan) --max-drop 0 |" in text
    assert f"nan ({gate_name(test)}, one-sided, n = 0 of 2 queries; fails if < 0.05) |" in text  # no query defined in both
    assert ("- run UL2(nDCG@10): the run's mean is undefined (no query has a defined value), so the check fails"
            in text.splitlines())


def test_summ_gate_on_an_undefined_mean_fails(tmp_path):
    """summ's --fail-below: a NaN mean fails and says it is undefined."""
    docs = tmp_path / "docs.tsv"
    docs.write_text("d1\tthe\tthe\n")  # a one-word source: every random summary is the same (I = E)
    sysa = tmp_path / "A.tsv"
    sysa.write_text("d1\tthe\n")
    res = CliRunner().invoke(main, ["summ", "-m", "ROUGE-1", "--norm", "ue2", "--undefined", "skip",
                                    "--fail-below", "UE2(ROUGE-1)=-100", str(docs), str(sysa)])
    assert res.exit_code == 1, (res.exit_code, res.stderr)
    assert res.stderr.splitlines()[-1] == ("ulnorm-eval:   FAIL A UE2(ROUGE-1): mean nan, threshold -100.0000 "
                                           "(--fail-below), margin nan; undefined: the run's mean is undefined "
                                           "(no query has a defined value)")


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e999"])
def test_summ_gate_refuses_a_threshold_that_is_not_finite(tmp_path, value):
    """'ROUGE-1=nan' compared false with every mean: the gate was switched off (exit 0)."""
    docs, sysa = tmp_path / "docs.tsv", tmp_path / "A.tsv"
    docs.write_text("d1\tthe cat sat\tthe cat sat\n")
    sysa.write_text("d1\tthe cat\n")
    res = CliRunner().invoke(main, ["summ", "-m", "ROUGE-1", "--fail-below", f"ROUGE-1={value}", str(docs), str(sysa)])
    assert res.exit_code == 2 and res.stdout == ""
    assert res.stderr == (f"ulnorm-eval: Invalid value for '--fail-below': 'ROUGE-1={value}': the threshold is not a "
                          "finite number (see 'ulnorm-eval summ --help')\n")
