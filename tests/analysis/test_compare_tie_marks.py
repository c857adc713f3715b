"""compare's note on the significance marks the tie rule decides: the runs whose documents the other
score precision (or, under --ties rank|file, trec_eval's order) moves are scored that way in the same
pass as the comparison, and the marks it names are exactly those that differ from the whole comparison
run again under the other rule."""
import dataclasses
from pathlib import Path

import numpy as np
import pytest

from ulnorm_eval.analysis.compare import CompareRequest, compare_for_request
from ulnorm_eval.pipeline.blocks import Options


def _files(tmp_path, seed=1):
    """4 runs of 20 queries; runs 0 and 1 hold pairs of scores equal as floats, not as doubles, and
    every run has exact ties (trec_eval orders them by docid, --ties rank by the rank column)."""
    rng = np.random.default_rng(seed)
    queries = [str(q) for q in range(1, 21)]
    qrels = tmp_path / "qrels"
    qrels.write_text("".join(f"{q} 0 d{d} {int(rng.integers(0, 2))}\n" for q in queries for d in range(12)))
    runs = []
    for r in range(4):
        lines = []
        for q in queries:
            for k, d in enumerate(rng.permutation(15)):
                score = 100.0 - (k // 2) - (1e-9 if k % 2 and r < 2 else 0.0)
                lines.append(f"{q} Q0 d{d} {k + 1} {score!r} r{r}\n")
        path = tmp_path / f"run{r}"
        path.write_text("".join(lines))
        runs.append(str(path))
    return str(qrels), runs


def _flips(first, whole) -> list:
    a, b = first.tables["pairs"], whole.tables["pairs"]
    return [f"{m} {x} vs {y}" for m, x, y, s, t in zip(a["metric"], a["run_a"], a["run_b"], a["significant"],
                                                       b["significant"]) if bool(s) != bool(t)]


@pytest.mark.parametrize("ties, holes", [("score", False), ("rank", False), ("score", True)])
def test_the_marks_named_are_those_the_whole_comparison_under_the_other_rule_changes(tmp_path, ties, holes):
    qrels, runs = _files(tmp_path)
    if holes:  # every other judgement dropped: the runs have holes, and LB/UB are compared too
        lines = Path(qrels).read_text().splitlines(True)
        Path(qrels).write_text("".join(lines[::2]))
    options = Options(ties=ties, pool="run")  # each run's own pool: the data was built for it
    request = CompareRequest(qrels=qrels, runs=tuple(runs), measures=["P@3", "AP"], options=options, holes=holes,
                             compare={"test": "t", "correction": "none", "alpha": 0.2})
    notes: list = []
    first = compare_for_request(request, notes)
    changed = (dataclasses.replace(options, score_precision="float32") if ties == "score"
               else dataclasses.replace(options, ties="score"))
    whole = compare_for_request(dataclasses.replace(request, options=changed), [])
    flips = _flips(first, whole)
    assert flips  # the data makes some marks depend on the rule
    flag = "--score-precision float32" if ties == "score" else "--ties score"
    (note,) = [n for n in notes if "significance marks" in n]
    assert note.startswith(f"the tie rule decides {len(flips)} significance marks: {'; '.join(flips[:3])}")
    assert f"would be marked otherwise with {flag}" in note
    assert notes[-1] == note  # said last, after every run's notes


def test_no_note_when_no_run_moves(tmp_path):
    """Runs without tied scores rank alike under either rule: no note (and nothing scored twice)."""
    qrels, runs = _files(tmp_path)
    for path in runs:  # distinct scores: the float32 rounding and the tie rule move nothing
        lines = Path(path).read_text().splitlines()
        Path(path).write_text("".join(f"{' '.join(ln.split()[:4])} {1000 - k % 15} r\n" for k, ln in enumerate(lines)))
    notes: list = []
    compare_for_request(CompareRequest(qrels=qrels, runs=tuple(runs), measures=["P@3"], options=Options(),
                                       compare={"alpha": 0.2}), notes)
    assert not [n for n in notes if "significance marks" in n or "change place" in n]
