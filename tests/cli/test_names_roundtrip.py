"""What is printed is what is accepted: every name the tool prints, in either naming scheme
(canonical and --names trec), with every variant, parses back to the same metric through every door
(-m, --fail-below, --sort, the library, ulnorm_eval.irm), over the whole registry."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

import ulnorm_eval as ue
from ulnorm_eval import irm
from ulnorm_eval.analysis.gate import parse_threshold
from ulnorm_eval.cli.main import main
from ulnorm_eval.core.registry import parse as parse_metric
from ulnorm_eval.core import registry
from ulnorm_eval.core.records import FAMILIES, VARIANTS

from conftest import ROOT

EXAMPLES = ROOT / "examples"
QRELS = str(EXAMPLES / "qrels" / "dlhard-passage.qrels.txt")
RUN = str(EXAMPLES / "runs" / "bm25.run.gz")

# the trec_eval spellings with parameters, typed as a user would (trec_eval echoes them as typed)
TYPED = ["ndcg.1=3.0,2=9", "ndcg.1=3,2=9", "set_F.0.50", "set_F.2", "rbp.p=0.80", "rbp.p=0.5,1=1,2=3",
         "Rprec_mult.0.2", "iprec_at_recall..1", "utility.2,-1,0,0", "11pt_avg..25,.5", "relstring.20",
         "P.5,7,3", "ndcg_cut.10,20", "success.2", "recall.20", "map_cut.100", "relative_P.5", "unj.10",
         "rbp_resid.p=0.7"]  # a trec_eval name with "_" that begins like another (rbp)


def _measures() -> list:
    """A measure of every family, every example of its record (cutoffs below and above a pool),
    trec_eval's all_trec, and parameters typed in trec_eval's syntax."""
    names = []
    for fam in FAMILIES.values():
        names.append(fam.name if fam.cutoff != "required" else f"{fam.name}@10")
        for ex in fam.examples:
            names += [ex.replace("{k}", str(k)) for k in (1, 10, 1000)] if "{k}" in ex else [ex]
    names += registry.expand_names(["all_trec"]) + TYPED + ["ERR@20", "Compat(p=0.8)", "RBP(p=0.9,rel=2)"]
    out = []
    for n in names:
        for m in registry.parse_many(n):
            if m not in out:
                out.append(m)
    return out


MEASURES = _measures()


def _metrics() -> list:
    """Each measure plain and under every variant the tool prints for it (none for families without
    bounds; the prior variants NRG and UC for every measure nrg takes)."""
    out = []
    for m in MEASURES:
        out.append(m)
        if m.measure.bounds == "none" or m.measure.summary == "gmean":
            continue  # no variants (tests/pipeline/test_default_variants.py: geometric means)
        for v in VARIANTS:
            out.append(registry.Metric(m.measure, v))
    return out


METRICS = _metrics()


def test_the_registry_is_covered():
    families = {m.measure.family for m in METRICS}
    assert set(FAMILIES) <= families
    assert {m.variant for m in METRICS} == {None, *VARIANTS}
    assert len(METRICS) > 1500


@pytest.mark.parametrize("scheme", ["canonical", "trec"])
def test_every_printed_name_parses_back(scheme):
    bad = []
    for m in METRICS:
        printed = str(m) if scheme == "canonical" else m.trec_name()
        try:
            got = registry.parse_many(printed)
        except registry.UnknownMeasure as exc:
            bad.append(f"{printed}: {exc}")
            continue
        if got != [m]:
            bad.append(f"{printed} -> {[str(g) for g in got]}, expected {m}")
        elif scheme == "trec" and got[0].trec_name() != printed:
            bad.append(f"{printed} prints back as {got[0].trec_name()}")
    assert not bad, f"{len(bad)} printed names do not parse back, e.g.\n" + "\n".join(bad[:20])


@pytest.mark.parametrize("scheme", ["canonical", "trec"])
def test_variant_spellings(scheme):
    """UL2(map), UL2(ndcg_cut.10), ul2_map, ue2_map, UE2(...): every alias, around every spelling."""
    bad = []
    for m in MEASURES:
        if m.measure.bounds == "none" or m.measure.summary == "gmean":
            continue
        inner = str(m) if scheme == "canonical" else m.measure.trec_name()
        for v in VARIANTS.values():
            for alias in (v.name, *v.aliases):
                # V(x) with every alias as registered; v_x (what --names trec prints) for the name and
                # the upper-case aliases (UE2 -> ue2_map), which the parser reads in any case
                forms = [f"{alias}({inner})"] + ([f"{alias.lower()}_{inner}"] if alias == alias.upper() else [])
                for text in forms:
                    try:
                        got = registry.parse(text)
                    except registry.UnknownMeasure as exc:
                        bad.append(f"{text}: {exc}")
                        continue
                    if got != registry.Metric(m.measure, v.name):
                        bad.append(f"{text} -> {got}")
    assert not bad, f"{len(bad)} spellings refused, e.g.\n" + "\n".join(bad[:20])


def test_gate_sort_and_irm_doors():
    bad = []
    for m in METRICS:
        text = m.measure.record is not None and m.measure.record.value == "text"
        for printed in {str(m), m.trec_name()}:
            try:
                assert parse_metric(printed) == m
                if text:  # runid, relstring: read as a measure, refused as a gate's number
                    with pytest.raises(ValueError, match="is text .*not a number to gate on"):
                        parse_threshold(f"{printed}=0.3")
                else:
                    assert parse_threshold(f"{printed}=0.3").metric == m
            except Exception as exc:  # noqa: BLE001 - collected, reported below
                bad.append(f"{printed}: {exc!r}")
            if m.variant in ("NRG", "UC") or text:
                continue
            try:
                obj = irm.measure(printed)
            except Exception as exc:  # noqa: BLE001
                bad.append(f"irm.measure({printed!r}): {exc!r}")
                continue
            if registry.parse(str(obj)) != m and m.measure.native:
                bad.append(f"irm.measure({printed!r}) = {obj}")
    assert not bad, f"{len(bad)} failures, e.g.\n" + "\n".join(bad[:20])


def test_cli_and_library_read_what_they_print():
    res = CliRunner().invoke(main, ["--names", "trec", "--norm", "ul2", "-m", "map", "-m", "ndcg_cut.10", QRELS, RUN])
    assert res.exit_code == 0, res.output
    printed = [line.split("\t")[0].strip() for line in res.stdout.splitlines()]
    assert printed == ["map", "ul2_map", "ndcg_cut_10", "ul2_ndcg_cut_10"]
    args = ["--names", "trec", "--norm", "none"]
    for p in printed:
        args += ["-m", p]
    args += ["--fail-below", "ul2_map=-1", "--sort", "ul2_ndcg_cut_10", "--head", "1"]
    again = CliRunner().invoke(main, [*args, QRELS, RUN])
    assert again.exit_code == 0, again.output
    assert [line for line in again.stdout.splitlines() if "\tall\t" in line] == \
        [line for line in res.stdout.splitlines() if "\tall\t" in line]
    ev = ue.evaluate(QRELS, RUN, ["UL2(map)", "ul2_ndcg_cut_10"], [])
    assert list(ev.summary().columns) == ["UL2(AP)", "UL2(nDCG@10)"]
    assert str(irm.measure("UL2(ndcg_cut.10)")) == "UL2(nDCG@10)"


def test_trec_names_echo_parameters_as_typed():
    t = str(ROOT / "examples" / "qrels" / "dlhard-passage.qrels.txt")
    res = CliRunner().invoke(main, ["--names", "trec", "--norm", "none", "-m", "ndcg.1=3.0,2=9", "-m", "set_F.0.50",
                                    "-m", "rbp.p=0.80", "-m", "ndcg.1=3,2=9", t, RUN])
    assert res.exit_code == 0, res.output
    # trec_eval 10 prints these names for these -m values (checked against its binary); the
    # repeated ndcg is the same measure: printed once, as first typed
    assert [line.split("\t")[0].strip() for line in res.stdout.splitlines()] == \
        ["ndcg_1=3.0,2=9", "set_F_0.50", "rbp_p=0.80"]


def test_a_trec_measure_given_twice_with_other_parameters_is_refused():
    res = CliRunner().invoke(main, ["--names", "trec", "-m", "P.5", "-m", "P.10", QRELS, RUN])
    assert res.exit_code == 2
    assert "-m P.10: P is already given (-m P.5); trec_eval keeps only the first" in res.stderr
    assert res.stdout == ""
    ok = CliRunner().invoke(main, ["--names", "trec", "--norm", "none", "-m", "P.5,10", QRELS, RUN])
    assert [line.split("\t")[0].strip() for line in ok.stdout.splitlines()] == ["P_5", "P_10"]
    # canonical names: two measures, as asked
    ok = CliRunner().invoke(main, ["--norm", "none", "-m", "P.5", "-m", "P.10", QRELS, RUN])
    assert ok.exit_code == 0 and len(ok.stdout.splitlines()) == 2
