"""`repro` (analysis/repro.py): RMSE, KTU, RBO, ER and DeltaRI of a reproduced run.

Oracles: hand-worked lists and scores, and repro_eval (Breuer et al. 2020's package, a test-only
dependency) on the bundled runs and on Robust 2003, to 1e-9 for every measure both compute."""
from __future__ import annotations

import io
import json
import warnings

import numpy as np
import pandas as pd
import pytest

from conftest import ROOT, cli
from ulnorm_eval.analysis import repro
from ulnorm_eval.analysis.repro import ReproRequest, repro_for_request
from ulnorm_eval.pipeline.blocks import Options

EXAMPLES = ROOT / "examples"
QRELS = EXAMPLES / "qrels" / "dlhard-passage.qrels.txt"
BM25, BERT, RM3 = (EXAMPLES / "runs" / f"{name}.run.gz" for name in ("bm25", "bm25_bert_zs", "bm25_rm3"))
SHARED_MEASURES = ("AP", "nDCG@10", "P@10", "P@5", "RR", "Rprec", "R@100", "nDCG")  # repro_eval's names too


def test_measures_by_hand():
    """RBO of [a b c] and [b a d] at p = 1/2: overlaps 0, 2/2, 2/3 at depths 1-3, weighted 1, 1/2, 1/4:
    (1/2 + 1/6) / (7/4) = 8/21.  KTU of [a b c] and [b a c]: positions (0 1 2) and (1 0 2), one
    discordant pair of three: 1/3; two lists without a common document written in the same docid order:
    1 (KTU compares union positions, not documents).  ER and DeltaRI of hand-made means."""
    assert repro.rbo(["a", "b", "c"], ["b", "a", "d"], 0.5, 3) == pytest.approx(8 / 21, abs=1e-15)
    assert repro.rbo(["a", "b"], ["a", "b"], 0.95, 2) == 1.0
    assert repro.ktu(["a", "b", "c"], ["b", "a", "c"]) == pytest.approx(1 / 3, abs=1e-15)
    assert repro.ktu(["a", "b"], ["c", "d"]) == 1.0
    assert repro.ktu(["a", "b", "c"], ["b", "a"]) == -1.0  # the first two ranks of each: (0 1) against (1 0)
    assert repro.rmse([0.5, 0.2], [0.1, 0.2]) == pytest.approx(np.sqrt(0.16 / 2))
    adv, base, adv_rep, base_rep = [0.6, 0.4], [0.3, 0.3], [0.5, 0.3], [0.3, 0.3]
    assert repro.effect_ratio(adv, base, adv_rep, base_rep) == pytest.approx(0.1 / 0.2)  # half the improvement
    assert repro.delta_ri(adv, base, adv_rep, base_rep) == pytest.approx(0.2 / 0.3 - 0.1 / 0.3)


def test_a_run_reproduces_itself():
    """RMSE 0, ER 1, DeltaRI 0, KTU 1; RBO 1 at a depth every topic's list reaches (at depth 1000 a list of
    100 documents keeps an overlap of 100 below its end, divided by the depth: 0.9991, as repro_eval's)."""
    rep = repro_for_request(ReproRequest(qrels=QRELS, original=BM25, reproduced=BM25, baseline=(RM3, RM3), depth=50), [])
    measures, rankings = rep.tables["measures"].to_frame(), rep.tables["rankings"].to_frame()
    assert (measures["rmse"] == 0).all() and (measures["baseline_rmse"] == 0).all()
    assert list(measures["er"]) == pytest.approx([1.0] * 3) and list(measures["delta_ri"]) == pytest.approx([0.0] * 3, abs=1e-15)
    assert list(rankings["ktu"]) == [1.0, 1.0] and list(rankings["rbo"]) == pytest.approx([1.0, 1.0])


def _repro_eval(qrels, advanced, advanced_rep, baseline, baseline_rep) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # repro_eval imports scipy.stats.stats (deprecated) and tqdm
        from repro_eval.Evaluator import RpdEvaluator

        ev = RpdEvaluator(qrels_orig_path=str(qrels), run_a_orig_path=str(advanced), run_a_rep_path=str(advanced_rep),
                          run_b_orig_path=str(baseline), run_b_rep_path=str(baseline_rep))
        ev.trim()
        ev.evaluate()
        return {"rmse": ev.rmse(), "ktu": ev.ktu(), "rbo": ev.rbo(), "er": ev.er(), "dri": ev.dri()}


def _ours(qrels, runs, precision: str):
    rep = repro_for_request(ReproRequest(qrels=qrels, original=runs[0], reproduced=runs[1], baseline=tuple(runs[2:]),
                                         measures=SHARED_MEASURES, options=Options(score_precision=precision)), [])
    return rep.tables["measures"].to_frame().set_index("measure"), rep.tables["rankings"].to_frame().set_index("pair")


def _assert_parity(qrels, runs):
    """Per-query values as pytrec_eval's (which reads scores as floats: --score-precision float32); rankings
    as repro_eval's KTU and RBO order them (the file's scores as doubles: float64)."""
    theirs = _repro_eval(qrels, *runs)
    measures, _ = _ours(qrels, runs, "float32")
    _, rankings = _ours(qrels, runs, "float64")
    for m in SHARED_MEASURES:
        assert measures.loc[m, "rmse"] == pytest.approx(theirs["rmse"]["advanced"][m], abs=1e-9), m
        assert measures.loc[m, "baseline_rmse"] == pytest.approx(theirs["rmse"]["baseline"][m], abs=1e-9), m
        assert measures.loc[m, "er"] == pytest.approx(theirs["er"][m], abs=1e-9), m
        assert measures.loc[m, "delta_ri"] == pytest.approx(theirs["dri"][m], abs=1e-9), m
    for pair in ("advanced", "baseline"):
        assert rankings.loc[pair, "ktu"] == pytest.approx(theirs["ktu"][pair], abs=1e-9)
        assert rankings.loc[pair, "rbo"] == pytest.approx(theirs["rbo"][pair], abs=1e-9)


def test_equals_repro_eval_on_the_bundled_runs():
    _assert_parity(QRELS, (BERT, RM3, BM25, BERT))


def test_equals_repro_eval_on_robust03(shared):
    """Four Robust 2003 runs whose order depends on the score precision (oce03noXbmD: 1,542 documents)."""
    runs = shared / "robust03" / "runs"
    _assert_parity(shared / "robust03" / "qrels.txt",
                   tuple(runs / f"input.{name}.gz" for name in ("oce03noXbmD", "UAmsT03RDesc", "InexpC2", "Sel50")))


def _repro(*args, code=0):
    return cli("repro", *args, QRELS, BERT, RM3, code=code)


def test_every_format_and_the_gate():
    pair = ("--baseline-pair", BM25, BERT)
    tsv = _repro("-f", "tsv", *pair).stdout
    first, second = tsv.split("\n\n")
    measures, rankings = pd.read_csv(io.StringIO(first), sep="\t"), pd.read_csv(io.StringIO(second), sep="\t")
    assert list(measures["measure"]) == ["nDCG@10", "AP", "RBP(p=0.8)"] and list(rankings["pair"]) == ["advanced", "baseline"]
    ours = repro_for_request(ReproRequest(qrels=QRELS, original=BERT, reproduced=RM3, baseline=(BM25, BERT)), [])
    assert measures["er"].tolist() == ours.tables["measures"]["er"]
    csv = _repro("-f", "csv", *pair).stdout
    assert pd.read_csv(io.StringIO(csv.split("\n\n")[0]))["rmse"].tolist() == measures["rmse"].tolist()
    doc = json.loads(_repro("-f", "json", *pair).stdout)
    assert [row["ktu"] for row in doc["rankings"]] == rankings["ktu"].tolist() and doc["meta"]["depth"] == 1000
    assert "Reproduction per measure" in _repro("-f", "table", *pair).stdout
    worst = float(measures["rmse"].max())
    passed = _repro("--max-rmse", str(worst + 0.01), "--min-ktu", "-1", *pair)
    assert "gate passed: 8 checks" in passed.output
    failed = _repro("--max-rmse", str(worst - 0.01), *pair, code=1)
    assert "gate FAILED: 1 of 6 checks" in failed.output


def test_summary_md_is_appended(tmp_path):
    summary = tmp_path / "summary.md"
    summary.write_text("# earlier\n")
    _repro("--min-ktu", "0.9", "--summary-md", summary, code=1)
    text = summary.read_text()
    assert text.startswith("# earlier\n") and "### Reproduction: gate FAILED: 1 of 1 check" in text
    assert "| measure | original | reproduced | rmse |" in text


def test_bad_input_is_one_line_and_exit_2(tmp_path):
    assert "no such file" in cli("repro", QRELS, BERT, tmp_path / "absent", code=2).output
    assert "text measure" in _repro("-m", "runid", code=2).output
    bad = tmp_path / "bad.run"
    bad.write_text("1 Q0 d1 1 x tag\n")
    out = cli("repro", QRELS, BERT, bad, code=2).output
    assert out.count("\n") == 1 and "bad.run" in out
