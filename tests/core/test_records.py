"""The measure and variant records: every family is complete, and the registry refuses records
that are not (no kernel, no bounds declaration, exact bounds without an expectation, duplicates)."""
from __future__ import annotations

import dataclasses

import pytest

from ulnorm_eval.core import records, registry
from ulnorm_eval.core.records import FAMILIES, VARIANTS, Family, register


@pytest.mark.parametrize("name", list(FAMILIES))
def test_every_family_is_complete(name):
    f = FAMILIES[name]
    assert callable(f.kernel), f"{name}: no kernel"
    assert callable(f.gain), f"{name}: no gain"
    assert f.bounds in records.BOUNDS, f"{name}: no bounds declaration"
    if f.bounds == "exact":
        assert callable(f.expectation), f"{name}: bounds='exact' without an expectation"
    assert f.summary in records.SUMMARIES and f.level in ("rel", "gains")
    assert f.formula and f.expectation_formula and f.cite
    assert f.check() == []


@pytest.mark.parametrize("name", list(VARIANTS))
def test_every_variant_is_complete(name):
    v = VARIANTS[name]
    assert v.kind in records.VARIANT_KINDS and v.formula and v.cite and v.rng
    if v.kind == "ratio":
        assert callable(v.normalise)
    assert v.check() == []


def _copy(family, **kw):
    return dataclasses.replace(FAMILIES[family], **kw)


def test_register_refuses_incomplete_or_duplicate_records():
    with pytest.raises(ValueError, match="duplicate measure family AP"):
        register(FAMILIES["AP"])
    with pytest.raises(ValueError, match="needs an expectation"):
        register(_copy("AP", name="AP2", aliases=(), trec=(), expectation=None))
    with pytest.raises(ValueError, match="no kernel"):
        register(_copy("AP", name="AP3", aliases=(), trec=(), kernel=None))
    with pytest.raises(ValueError, match="bounds must be one of"):
        register(_copy("AP", name="AP4", aliases=(), trec=(), bounds="maybe"))
    with pytest.raises(ValueError, match="duplicate trec_eval name map"):
        register(_copy("AP", name="AP5", aliases=()))
    assert not {"AP2", "AP3", "AP4", "AP5"} & set(FAMILIES)
    assert isinstance(FAMILIES["AP"], Family)


def test_montecarlo_or_no_bounds_need_no_expectation():
    assert _copy("AP", expectation=None, bounds="montecarlo").check() == []
    assert _copy("AP", expectation=None, bounds="none").check() == []


def test_exact_for_makes_some_measures_of_an_exact_family_monte_carlo():
    """nDCG_rel's closed form holds for gains >= 0 given to judged levels: the rest are Monte Carlo."""
    assert _copy("AP", exact_for=lambda m: True, bounds="montecarlo").check() == ["exact_for is a callable of an 'exact' family"]
    fam = FAMILIES["nDCG_rel"]
    assert fam.bounds == "exact" and fam.check() == []
    bounds = {n: registry.parse(n).measure.bounds for n in
              ("nDCG_rel", "nDCG_rel(gains={1:3,2:0})", "nDCG_rel(gains={1:3,2:-1})", "nDCG_rel(gains={-1:2})",
               "nDCG_rel(gains={-2:0,1:2})")}
    assert bounds == {"nDCG_rel": "exact", "nDCG_rel(gains={1:3,2:0})": "exact", "nDCG_rel(gains={1:3,2:-1})": "montecarlo",
                      "nDCG_rel(gains={-1:2})": "montecarlo", "nDCG_rel(gains={-2:0,1:2})": "exact"}


@pytest.mark.parametrize("base", list(registry.TREC_NAMES))
def test_trec_names_round_trip(base):
    """Every trec_eval name of a record parses, and each measure it names prints that name."""
    for metric in registry.parse_many(base):
        name = metric.measure.trec_name()
        assert name.split("_")[0] == base.split("_")[0]
        assert registry.parse_many(name) == [metric] or name == base


def test_aliases_and_variant_lists_come_from_records():
    assert registry.ALIASES == {"NDCG": "nDCG", "MAP": "AP", "SumP": "SP", "Recall": "R", "MRR": "RR"}
    assert registry.DEFAULT_VARIANTS == ("E", "EM")  # one answer per measure (docs/bounds.md, the pool study)
    assert registry.PRIOR_VARIANTS == ("NRG", "UC")
    assert registry.BOUND_VARIANTS == ("E", "IUB", "WLB")


def test_a_family_without_bounds_or_with_a_sum_follows_its_record(monkeypatch):
    """What the next families (counts such as num_rel_ret) rely on: bounds='none' skips the default
    variants and refuses an explicit one; summary='sum' sums the 'all' row."""
    import numpy as np

    from ulnorm_eval import evaluate
    from ulnorm_eval.core.kernels import rel_of, relevant
    from ulnorm_eval.inputs.in_memory import qrels_from_object, run_from_object
    from ulnorm_eval.pipeline.evaluate import resolve_metrics

    def k_relret(rk, J, m, rel_level):
        return rk.rowsum(relevant(rk, rel_of(m, rel_level))).astype(np.float64)

    fam = dataclasses.replace(FAMILIES["P"], name="RelRet", cutoff="none", kernel=k_relret, bounds="none",
                              expectation=None, summary="sum", trec=(), aliases=(), examples=(), browsing=None,
                              unique=False)
    monkeypatch.setitem(FAMILIES, "RelRet", fam)
    assert [str(m) for m in resolve_metrics(["RelRet", "AP"], ["E", "UL2"])] == ["RelRet", "AP", "E(AP)", "UL2(AP)"]
    with pytest.raises(registry.UnknownMeasure, match="no random-ranking bounds"):
        resolve_metrics(["UL2(RelRet)"], [])
    import pandas as pd
    qrels = qrels_from_object(pd.DataFrame({"query_id": ["1", "1", "2"], "doc_id": ["a", "b", "c"],
                                           "relevance": [1, 1, 1]}))
    run = run_from_object(pd.DataFrame({"query_id": ["1", "1", "2"], "doc_id": ["a", "x", "c"],
                                       "score": [3.0, 2.0, 1.0]}), name="r")
    res = evaluate(qrels, run, ["RelRet"], variants=[])
    m = res.metrics[0]
    assert list(res.runs[0].values[m]) == [1.0, 1.0] and res.runs[0].mean[m] == 2.0


def test_summaries_by_hand():
    import numpy as np

    from ulnorm_eval.core.summary import summarise

    v = np.array([0.5, 0.0, 0.2, np.nan])
    assert summarise(v) == pytest.approx(0.7 / 3)
    assert summarise(v, rule="sum") == pytest.approx(0.7)
    # trec_eval's gm_map: values floored at 1e-5 before the log
    assert summarise(v, rule="gmean") == pytest.approx((0.5 * 1e-5 * 0.2) ** (1 / 3))


def test_every_trec_name_has_a_place_in_trec_evals_order():
    """--names trec prints measures in trec_eval's table order: every record's trec name is in it."""
    from ulnorm_eval.render.rows import TREC_ORDER

    missing = [t.base for f in FAMILIES.values() for t in f.trec if t.base not in TREC_ORDER]
    assert not missing
