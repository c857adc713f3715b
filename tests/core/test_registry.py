"""The measure registry: canonical names, trec_eval names, suggestions for unknown names."""
from __future__ import annotations

import pytest

from ulnorm_eval.pipeline import evaluate as api
from ulnorm_eval.core.registry import (DEFAULT_MEASURES, DEFAULT_VARIANTS, FAMILIES, VARIANTS, UnknownMeasure,
                                  parse, parse_many)

CANONICAL = [
    "nDCG@10", "nDCG", "nDCG(dcg='exp-log2')@10", "nDCG(gains={0:0.0,1:1.0,2:3.0})@10", "AP", "AP@100",
    "P@10", "RR", "RR@10", "R@100", "Rprec", "RBP(p=0.8)", "RBP(p=0.9,rel=2)", "RBP(p=0.5)@20", "SP@10",
    "DCG@5", "AP(rel=2)", "P(rel=2)@5", "UL2(nDCG@10)", "UL1(AP)", "E(P@5)", "DB(RBP(p=0.9))",
    "IUB(nDCG(dcg='exp-log2')@20)", "ERR@20", "Bpref", "infAP",
]


@pytest.mark.parametrize("name", CANONICAL)
def test_canonical_names_round_trip(name):
    m = parse(name)
    assert str(m) == name
    assert parse(str(m)) == m
    assert hash(parse(str(m))) == hash(m)


@pytest.mark.parametrize("given,canonical", [
    ("RBP", "RBP(p=0.8)"),  # p is always shown, and RBP == RBP(p=0.8)
    ("RBP(rel=2,p=0.9)", "RBP(p=0.9,rel=2)"),
    ("MAP", "AP"), ("NDCG@10", "nDCG@10"), ("MRR", "RR"), ("ul2(AP)", "UL2(AP)"), ("UE2(AP)", "UL2(AP)"),
    ("nDCG(dcg='log2')@10", "nDCG@10"),  # a parameter at its default is dropped
    ("nDCG(gains={2:3,0:0,1:1})@10", "nDCG(gains={0:0.0,1:1.0,2:3.0})@10"),
    (" AP ", "AP"),
])
def test_spellings_normalise(given, canonical):
    assert str(parse(given)) == canonical
    assert parse(given) == parse(canonical)


@pytest.mark.parametrize("trec,expanded", [
    ("ndcg_cut.10,20", ["nDCG@10", "nDCG@20"]),
    ("ndcg_cut.10,20,23.4", ["nDCG@10", "nDCG@20", "nDCG@23"]),  # trec_eval truncates 23.4
    ("map", ["AP"]), ("map_cut.100", ["AP@100"]), ("P.5,10", ["P@5", "P@10"]),
    ("P.5,7,3", ["P@3", "P@5", "P@7"]),  # trec_eval sorts the cutoffs
    ("recip_rank", ["RR"]), ("recall.100", ["R@100"]), ("Rprec", ["Rprec"]), ("ndcg", ["nDCG"]),
    ("P", ["P@5", "P@10", "P@15", "P@20", "P@30", "P@100", "P@200", "P@500", "P@1000"]),
    ("ndcg.1=3,2=9,4=4.5", ["nDCG(gains={1:3.0,2:9.0,4:4.5})"]),
    ("ndcg_cut_10", ["nDCG@10"]), ("P_10", ["P@10"]), ("recall_1000", ["R@1000"]), ("map_cut_5", ["AP@5"]),
])
def test_trec_names_expand(trec, expanded):
    assert [str(m) for m in parse_many(trec)] == expanded


@pytest.mark.parametrize("name,trec", [
    ("nDCG@10", "ndcg_cut_10"), ("nDCG", "ndcg"), ("AP", "map"), ("AP@100", "map_cut_100"), ("P@10", "P_10"),
    ("RR", "recip_rank"), ("R@100", "recall_100"), ("Rprec", "Rprec"),
    ("nDCG(gains={1:3,2:9,4:4.5})", "ndcg_1=3,2=9,4=4.5"),
    ("UL2(AP)", "ul2_map"),
    ("RR@10", "RR@10"), ("nDCG(dcg='exp-log2')@10", "nDCG(dcg='exp-log2')@10"),  # no trec_eval name
])
def test_trec_output_names(name, trec):
    m = parse(name)
    assert m.trec_name() == trec
    if "=" not in trec and "(" not in trec and not m.variant:
        assert parse(trec) == m  # trec_eval's output name reads back as the same measure


@pytest.mark.parametrize("name,suggestion", [
    ("nDGC@10", "nDCG"), ("mapp", "map"), ("recip", "recip_rank"), ("Rprc", "Rprec"), ("AveP", "AP"),
    ("ndgc_cut.10", "ndcg_cut"),
])
def test_unknown_names_suggest(name, suggestion):
    with pytest.raises(UnknownMeasure) as err:
        parse_many(name)
    msg = str(err.value)
    assert msg.startswith(f"unknown measure {name!r}; did you mean ")
    hints = msg.split("did you mean ", 1)[1].rstrip("?").split(" or ")
    assert suggestion in hints
    assert len(hints) == len(set(hints))  # each suggestion once


@pytest.mark.parametrize("typed,canonical", [
    ("ndcg@10", ["nDCG@10"]), ("map", ["AP"]), ("p@10", ["P@10"]), ("rbp(p=0.8)", ["RBP(p=0.8)"]),
    ("judged@10", ["Judged@10"]), ("ul2(ndcg@10)", ["UL2(nDCG@10)"]), ("Ul2_Map", ["UL2(AP)"]), ("p_10", ["P@10"]),
    ("NDCG_CUT.10,20", ["nDCG@10", "nDCG@20"]), ("iprec@0.2", ["IPrec@0.2"]), ("BPREF", ["Bpref"]),
    ("RECALL", [f"R@{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]),  # R needs a cutoff: only trec_eval's fits
])
def test_names_in_any_case(typed, canonical):
    """A name in another case is read as the one record's name that fits it (every spelling of the records)."""
    assert [str(m) for m in parse_many(typed)] == canonical


def test_a_name_ambiguous_without_its_case_is_refused_naming_each_reading():
    with pytest.raises(UnknownMeasure) as err:
        parse_many("Rbp")  # our RBP (p = 0.8) or trec_eval's rbp (p = 0.9, gains scaled)
    assert str(err.value) == "'Rbp' is ambiguous without its case: RBP (RBP(p=0.8)) or rbp (RBP_trec(p=0.9))"
    assert str(parse("RBP")) == "RBP(p=0.8)" and str(parse("rbp")) == "RBP_trec(p=0.9)"  # exact names stand
    with pytest.raises(UnknownMeasure, match=r"^ndcg\(foo=1\)@10: nDCG has no parameter 'foo'"):
        parse_many("ndcg(foo=1)@10")  # the record's own error, of the name as typed


@pytest.mark.parametrize("name,fragment", [
    ("RBP(p=1.5)", "p must lie strictly between 0 and 1"),
    ("nDCG(foo=1)@10", "nDCG has no parameter 'foo'"),
    ("Rprec@10", "Rprec takes no @cutoff"),
    ("P@0", "the cutoff must be a positive integer"),
    ("nDCG@2.5", "the cutoff must be a positive integer"),
    ("P(rel=2)", "P needs a cutoff"),
    ("nDCG(dcg='exp')@10", "dcg must be 'log2' or 'exp-log2'"),
    ("UL2(UL1(AP))", "variants do not nest"),
    ("UL2(AP)@10", "a variant takes only the measure"),
    ("map.5", "map takes no parameters"),
    ("P.x", "cutoff 'x' is not a number"),
    ("ndcg.1=a", "ndcg takes grade=gain pairs"),
    ("", "empty measure name"),
])
def test_bad_names_are_explained(name, fragment):
    with pytest.raises(UnknownMeasure, match=fragment.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        parse_many(name)


def test_parse_refuses_a_name_for_several_measures():
    with pytest.raises(UnknownMeasure, match="names 2 measures"):
        parse("P.5,10")


def test_defaults_and_variants():
    plain = api.resolve_metrics(None, [])
    assert [str(m) for m in plain] == list(DEFAULT_MEASURES) == ["nDCG@10", "AP", "RBP(p=0.8)"]
    full = api.resolve_metrics(None, None)
    assert [str(m) for m in full[:1 + len(DEFAULT_VARIANTS)]] == \
        ["nDCG@10"] + [f"{v}(nDCG@10)" for v in DEFAULT_VARIANTS]
    assert len(full) == len(DEFAULT_MEASURES) * (1 + len(DEFAULT_VARIANTS))
    # a measure named twice (directly and through a trec name) is computed once
    assert [str(m) for m in api.resolve_metrics(["P@5", "P.5,10"], [])] == ["P@5", "P@10"]


def test_every_family_and_variant_is_documented():
    for f in FAMILIES.values():
        assert f.formula and f.cite and f.expectation_formula
        assert str(parse(f.name + ("@10" if f.cutoff == "required" else ""))).startswith(f.name)
    for v in VARIANTS.values():
        assert str(parse(f"{v.name}(AP)")) == f"{v.name}(AP)"


def test_a_parameter_given_twice_is_refused():
    for text in ("RBP(p=0.8,p=0.9)", "RBP(p=0.8, p=0.8)", "nDCG(dcg='log2', dcg='exp-log2')@10"):
        with pytest.raises(UnknownMeasure, match="given twice"):
            parse(text)
