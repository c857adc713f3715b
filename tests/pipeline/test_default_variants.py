"""Default variants never turn a cheap request into minutes: measures whose E is a Monte Carlo
estimate get no default variants (a note says which and why), unless named or listed in --norm; the
Monte Carlo work has a progress bar with the time left once it runs for more than a second."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

import ulnorm_eval as ue
from ulnorm_eval.cli.main import main
from ulnorm_eval.core import registry
from ulnorm_eval.core.expectations import monte_carlo_units
from ulnorm_eval.core.permutations import monte_carlo_listener
from ulnorm_eval.pipeline.evaluate import resolve_metrics
from ulnorm_eval.render import progress as progress_mod

from conftest import ROOT

EXAMPLES = ROOT / "examples"
QRELS = str(EXAMPLES / "qrels" / "dlhard-passage.qrels.txt")
RUN = str(EXAMPLES / "runs" / "bm25.run.gz")


def _names(metrics):
    return [str(m) for m in metrics]


def test_default_variants_skip_monte_carlo_measures_with_a_note():
    notes = []
    ms = resolve_metrics(["all_trec"], None, warn=notes.append)
    mc = [m for m in ms if m.measure.bounds == "montecarlo"]
    assert {m.measure.family for m in mc} == {"IPrec", "Avg11pt", "G"}
    assert all(not m.variant for m in mc)  # plain values only
    exact = [m for m in ms if m.measure.bounds == "exact"]
    assert {m.variant for m in exact} == {None, "E", "EM"}
    assert len(notes) == 2 and notes[1] == ("no variants for GMAP, GMBpref: the expected geometric mean of a random ranking has no "
                                           "closed form; per query they are AP, Bpref: use theirs ('EM(GMAP)' says why)")
    assert "no default variants for 13 measures" in notes[0]
    assert "(IPrec (11), Avg11pt, G; seconds to minutes a run)" in notes[0] and "--norm e,em" in notes[0]


def test_explicit_norm_and_names_keep_monte_carlo_variants():
    notes = []
    ms = resolve_metrics(["G", "AP"], ["UL2"], warn=notes.append)
    assert _names(ms) == ["G", "UL2(G)", "AP", "UL2(AP)"] and notes == []
    ms = resolve_metrics(["UL2(G)", "AP"], None, warn=notes.append)
    assert _names(ms) == ["UL2(G)", "AP", "E(AP)", "EM(AP)"] and notes == []
    # an ir_measures measure outside the registry: Monte Carlo too
    ms = resolve_metrics(["ERR@20"], None, warn=notes.append)
    assert _names(ms) == ["ERR@20"] and "ERR@20" in notes[0]


def test_cli_note_and_outputs():
    res = CliRunner().invoke(main, ["-m", "G", "-m", "AP", QRELS, RUN])
    assert res.exit_code == 0, res.output
    names = [line.split("\t")[0].strip() for line in res.stdout.splitlines()]
    assert names == ["G", "AP", "E(AP)", "EM(AP)"]
    assert "no default variants for 1 measure whose E is a Monte Carlo estimate (G;" in res.stderr
    res = CliRunner().invoke(main, ["-m", "G", "--norm", "e", QRELS, RUN])
    assert [line.split("\t")[0] for line in res.stdout.splitlines()] == ["G", "E(G)"]
    assert "no default variants" not in res.stderr


def test_library_and_compare_note():
    ev = ue.evaluate(QRELS, RUN, ["G", "AP"])
    assert "E(G)" not in ev.summary().columns and "E(AP)" in ev.summary().columns
    assert ev.notes[0].startswith("no default variants for 1 measure")
    cmp = ue.compare(QRELS, [RUN, str(EXAMPLES / "runs" / "bm25_rm3.run.gz")], ["G", "AP"])
    assert list(dict.fromkeys(cmp.systems["metric"])) == ["G", "AP", "EM(AP)"]  # eval's default, E left out
    assert any(n.startswith("no default variants for 1 measure") for n in cmp.notes)
    cmp = ue.compare(QRELS, [RUN, str(EXAMPLES / "runs" / "bm25_rm3.run.gz")], ["G"], ["UL2"], swap_trials=10)
    assert list(dict.fromkeys(cmp.systems["metric"])) == ["G", "UL2(G)"]


def test_monte_carlo_units_add_up_to_the_bar_total():
    metrics = resolve_metrics(["G", "AP", "DB(AP)", "UL2(IPrec@0.5)"], ["E"])
    # G and IPrec@0.5 (Monte Carlo E), DB(AP) (its distribution): 3 units per query
    assert monte_carlo_units(metrics) == 3
    heard = []
    with monte_carlo_listener(heard.append):
        ue.evaluate(QRELS, [RUN, str(EXAMPLES / "runs" / "bm25_rm3.run.gz")], ["G", "AP", "DB(AP)", "UL2(IPrec@0.5)"],
                    ["E"], permutations=200)
    assert sum(heard) == pytest.approx(3 * 50 * 2)  # units x queries x runs, whatever was cached
    assert len(heard) > 6  # batches report as they go, not only at the end


def test_bar_appears_only_after_a_second(monkeypatch):
    now = [0.0]
    monkeypatch.setattr(progress_mod.time, "monotonic", lambda: now[0])  # the bar's clock, held still
    bar = progress_mod._Bar("Monte Carlo", lambda: 10.0, progress_mod.MONTE_CARLO_DELAY)
    bar(1)
    now[0] = 0.5
    bar(1)
    assert bar.shared is None  # under MONTE_CARLO_DELAY (1 s): no bar yet
    now[0] = 1.2
    bar(1)
    task = bar.shared.bar.tasks[0]
    assert task.total == 10.0 and task.completed == 3.0
    bar(20)
    assert bar.shared.bar.tasks[0].completed == 10.0  # never past the total
    bar.close()
    assert progress_mod._ACTIVE == []


def test_no_bar_when_not_on_a_terminal():
    res = CliRunner().invoke(main, ["-m", "UL2(G)", "--permutations", "200", QRELS, RUN])
    assert res.exit_code == 0
    assert "Monte Carlo" not in res.stderr and "ETA" not in res.stderr


def test_geometric_mean_measures_have_no_variants():
    """GMAP's 'all' row is a geometric mean: E(GMAP) as the arithmetic mean of per-query E[AP] would
    repeat E(AP) (it did).  Variants are refused by name, skipped with a note from --norm."""
    from ulnorm_eval.core.registry import UnknownMeasure

    for name in ("UL2(GMAP)", "E(gm_map)", "ul2_gm_bpref", "DB(GMBpref)"):
        with pytest.raises(UnknownMeasure, match="geometric mean over queries"):
            resolve_metrics([name], [])
    notes = []
    ms = resolve_metrics(["GMAP", "AP"], ["E", "UL2"], warn=notes.append)
    assert _names(ms) == ["GMAP", "AP", "E(AP)", "UL2(AP)"]
    assert notes and notes[0].startswith("no variants for GMAP: the expected geometric mean of a random ranking has no closed form")
    res = CliRunner().invoke(main, ["-m", "GMAP", "-m", "AP", "--norm", "e,ul2", QRELS, RUN])
    assert res.exit_code == 0
    assert [line.split("\t")[0] for line in res.stdout.splitlines()] == ["GMAP", "AP", "E(AP)", "UL2(AP)"]
    bad = CliRunner().invoke(main, ["-m", "UL2(GMAP)", QRELS, RUN])
    assert bad.exit_code == 2 and "use the variants of AP" in bad.stderr and bad.stdout == ""
