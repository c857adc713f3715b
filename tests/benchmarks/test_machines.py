"""docs/performance.md keeps one row per machine measured: benchmarks/like_for_like.py's
--update-docs replaces the row of its own CPU model and core count and keeps every other one."""
from __future__ import annotations

import pytest

from conftest import ROOT


@pytest.fixture()
def lfl(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    import like_for_like

    return like_for_like


def _rows(lfl, text: str) -> list[list[str]]:
    from summary import block

    lines = [ln for ln in block(text, *lfl.MACHINES).splitlines() if ln.startswith("|")]
    return [[c.strip() for c in ln.strip().strip("|").split("|")] for ln in lines[2:]]


def test_machine_rows_are_kept_per_cpu(lfl):
    text = (ROOT / "docs" / "performance.md").read_text()
    before = _rows(lfl, text)
    width = 6 + len(lfl.MACHINE_COLUMNS) + 1
    assert before and all(len(r) == width for r in before)
    assert len({tuple(r[:2]) for r in before}) == len(before)  # one row per CPU and core count
    new = ["Test CPU X (family 1, model 2)", "4", "AVX512_SKX", "3.11.7 / 2.4.6 / 26.0.1", "2026-11-27", "0.10 (0.0-0.2)"]
    new += ["0.50 (0.80)"] * len(lfl.MACHINE_COLUMNS) + ["30 of 31"]
    once = lfl.merge_machine_row(text, new)
    assert _rows(lfl, once) == before + [new]  # every earlier machine kept, the new one added
    again = list(new)
    again[4], again[-1] = "2026-11-28", "31 of 31"
    twice = lfl.merge_machine_row(once, again)
    assert _rows(lfl, twice) == before + [again]  # the same CPU and cores: its row replaced, not added
    other = list(new)
    other[1] = "8"
    assert _rows(lfl, lfl.merge_machine_row(twice, other)) == before + [again, other]


def test_machine_row_reads_the_target_rows(lfl, monkeypatch):
    """Each ratio column takes the target row it names (wall, CPU in parentheses); a missing one is
    '-'; the last cell counts the PASS rows among the PASS and FAIL ones and names the failed ones."""
    monkeypatch.setattr(lfl, "machine", lambda: {"cpu": "C", "cores": 2, "simd": "AVX2", "python": "3",
                                                 "numpy": "2", "pyarrow": "26"})
    targets = [["all_trec, 17 Robust 2003 runs / trec_eval looped (wall)", "≤ 0.6", "0.71", "0.88", "FAIL"],
               ["library, run in memory: ulnorm_eval.evaluate / ranx.evaluate (numba cache warm)", "≤ 0.5", "0.02",
                "0.01", "PASS"],
               ["150 runs: -j 2 parallel efficiency (speed-up / ideal)", "-", "0.83", "", "(reported)"],
               ["something else", "≤ 1", "0.5", "", "PASS"]]
    row = lfl.machine_row(targets, "1.00 (0.5-2.0)")
    heads = [h for h, _ in lfl.MACHINE_COLUMNS]
    cell = dict(zip(heads, row[6:-1]))
    assert row[:2] == ["C", "2"] and row[5] == "1.00 (0.5-2.0)"
    assert cell["all_trec / trec_eval, wall (CPU)"] == "0.71 (0.88)"
    assert cell["evaluate / ranx.evaluate, wall (CPU)"] == "0.02 (0.01)"
    assert cell["-j 2 efficiency"] == "0.83"
    assert cell["7M lines / ranx, wall (CPU)"] == "-"
    assert row[-1] == "2 of 3; failed: all_trec, 17 Robust 2003 runs / trec_eval looped (wall)"
    assert lfl.machine_row(targets[1:], "1.00 (0.5-2.0)")[-1] == "2 of 2"


def test_a_partial_run_keeps_what_it_did_not_measure(lfl):
    """A run of some sections only (the large runs apart on a busy machine) fills its cells and
    leaves the machine row's other cells as an earlier run wrote them."""
    text = (ROOT / "docs" / "performance.md").read_text()
    n = len(lfl.MACHINE_COLUMNS)
    first = ["CPU Y", "2", "AVX2", "v", "2026-11-27", "5.00 (4-6)"] + [f"0.{i}0 (0.9)" for i in range(n)] + ["3 of 9"]
    later = ["CPU Y", "2", "AVX2", "v", "2026-11-28", "2.00 (1-3)"] + ["-"] * (n - 1) + ["0.77 (0.70)", "1 of 2"]
    got = _rows(lfl, lfl.merge_machine_row(lfl.merge_machine_row(text, first), later))[-1]
    assert got == later[:6] + first[6:6 + n - 1] + ["0.77 (0.70)", "1 of 2"]


def test_the_large_section_gives_the_readme_its_dated_7m_figures(lfl, monkeypatch):
    """README's 7M-line figures come from a benchmark run that regenerates them (run.py's full run or
    like_for_like's large section): dated, with the CPU model and cores, and the section's load;
    none when the 7M runs did not all run (a scaled-down check, a peer missing)."""
    import summary

    monkeypatch.setattr(lfl.run_module, "default_variants_text", lambda: "E and UL2")
    monkeypatch.setattr(lfl, "KEY", {"numeric_time": 0.3, "numeric_rss": 0.2, "large_loads": [1.0, 3.0, 0.5]})
    assert lfl.large_keys({"cpu": "CPU Y", "cores": 2}) == {}  # no string-id run
    lfl.KEY["string_time"] = 0.25
    got = lfl.large_keys({"cpu": "CPU Y", "cores": 2})
    assert set(got) == set(summary.LARGE_KEYS)
    assert (got["machine"], got["load"], got["variants"]) == ("CPU Y, 2 cores", "1.00", "E and UL2")
    assert (got["numeric_time"], got["numeric_rss"], got["string_time"]) == (0.3, 0.2, 0.25)
    import datetime

    assert got["date"] == f"{datetime.date.today():%d %B %Y}".lstrip("0")
    data = dict.fromkeys(summary.KEYS, 0.5) | got
    sentence = summary.readme_sentence(data)
    assert "(CPU Y, 2 cores, load 1.00): a 7M-line run" in sentence and "E and UL2 takes 0.30×" in sentence
