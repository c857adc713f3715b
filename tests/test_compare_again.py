"""compare's tie-rule check (the marks the score precision or --ties decides) evaluates again only the
runs whose note says the change moves their documents, and compares again only the pairs (no summary
rows): its pairs and systems equal those of the comparison that reads and scores every run again."""
import dataclasses
from pathlib import Path

import numpy as np
import pytest

from ulnorm_eval.analysis import compare as cmp_mod
from ulnorm_eval.analysis.compare import CompareRequest, compare_for_request
from ulnorm_eval.pipeline.blocks import PRECISION_NOTE, TIE_RULE_NOTE, Options


def _files(tmp_path):
    rng = np.random.default_rng(11)
    queries = [str(q) for q in range(1, 31)]
    qrels = tmp_path / "qrels"
    qrels.write_text("".join(f"{q} 0 d{d} {int(rng.integers(0, 3))}\n" for q in queries for d in range(25)))
    runs = []
    for r in range(4):
        lines = []
        for q in queries:
            docs = rng.permutation(40)
            score = 100.0
            for k, d in enumerate(docs):
                if r < 2 and k % 6 == 1:  # equal as floats, not as doubles: the precision moves them
                    score -= 1e-9
                elif r < 2 and k % 6 == 4:  # an exact tie: trec_eval orders it by docid, --ties rank by rank
                    pass
                else:
                    score = 100.0 - k
                lines.append(f"{q} Q0 d{d} {k + 1} {score!r} r{r}\n")
        p = tmp_path / f"run{r}"
        p.write_text("".join(lines))
        runs.append(str(p))
    return str(qrels), runs


@pytest.mark.parametrize("ties", ["score", "rank"])
def test_compare_again_equals_the_whole_comparison_again(tmp_path, monkeypatch, ties):
    qrels, runs = _files(tmp_path)
    options = Options(ties=ties)
    request = CompareRequest(qrels=qrels, runs=tuple(runs), measures=["AP", "P@5", "nDCG@10"], options=options,
                             compare={"test": "t", "correction": "none"}, progress=False)
    notes: list = []
    first = compare_for_request(request, notes, check_ties=False)
    note = PRECISION_NOTE if ties == "score" else TIE_RULE_NOTE
    moved = [n for n in notes if note in n]
    assert 0 < len(moved) < len(runs)  # some runs, not all: the others are reused
    changed = (dataclasses.replace(options, score_precision="float32") if ties == "score"
               else dataclasses.replace(options, ties="score"))
    evaluated, summarised = [], []
    from ulnorm_eval.pipeline import evaluate as api
    from ulnorm_eval.analysis import stats
    real = api.evaluate_run
    monkeypatch.setattr(api, "evaluate_run", lambda q, run, *a, **k: evaluated.append(run.path) or real(q, run, *a, **k))
    for name in ("split_half_swap_rate", "variance_components", "kendall_tau"):
        spied = getattr(stats, name)
        monkeypatch.setattr(stats, name, lambda *a, _f=spied, _n=name, **k: summarised.append(_n) or _f(*a, **k))
    again = cmp_mod._compare_again(first, note, changed)
    monkeypatch.undo()
    whole = compare_for_request(dataclasses.replace(request, options=changed), [], check_ties=False)
    assert again is not None and len(evaluated) == len(moved)
    # only the marks are read from it: no summary row (swap trials, variance components, taus) is computed
    assert summarised == [] and len(again.tables["summary"]) == 0
    assert "split_half_swap_rate" in whole.tables["summary"].columns
    # the change moves values: a comparison that reused every run would differ from the whole one
    assert list(whole.tables["pairs"]["diff"]) != list(first.tables["pairs"]["diff"])
    for name in ("systems", "pairs"):
        table = whole.tables[name]
        other = again.tables[name]
        assert list(table.columns) == list(other.columns)
        for col in table.columns:
            a, b = list(table[col]), list(other[col])
            assert len(a) == len(b)
            for x, y in zip(a, b):
                assert (x == y) or (x != x and y != y), (name, col, x, y)


def test_compare_again_leaves_out_the_holes_interval_ends(tmp_path, monkeypatch):
    """Only the significance marks are read from the comparison again: the holes' LB/UB and bootstrap
    ends (most of compare --holes' time) are not evaluated a second time, and the marks equal those of
    the whole comparison again."""
    qrels, runs = _files(tmp_path)
    lines = Path(qrels).read_text().splitlines(True)
    Path(qrels).write_text("".join(lines[::2]))  # every other judgment dropped: the runs have holes
    request = CompareRequest(qrels=qrels, runs=tuple(runs), measures=["AP", "P@5"], options=Options(), holes=True,
                             holes_bootstrap=True, compare={"test": "t", "correction": "none"}, progress=False)
    first = compare_for_request(request, [], check_ties=False)
    assert "holes_overlap" in first.tables["pairs"].columns
    changed = dataclasses.replace(Options(), score_precision="float32")
    from ulnorm_eval.pipeline import evaluate as api
    asked = []
    real = api.evaluate_run
    monkeypatch.setattr(api, "evaluate_run", lambda q, run, metrics, *a, **k: asked.append(metrics) or real(q, run, metrics, *a, **k))
    again = cmp_mod._compare_again(first, PRECISION_NOTE, changed)
    monkeypatch.setattr(api, "evaluate_run", real)
    assert again is not None and asked
    assert all(m.variant not in cmp_mod.HOLE_ENDS for metrics in asked for m in metrics)
    whole = compare_for_request(dataclasses.replace(request, options=changed), [], check_ties=False)
    assert list(whole.tables["pairs"]["significant"]) == list(again.tables["pairs"]["significant"])
    assert list(whole.tables["pairs"]["diff"]) == list(again.tables["pairs"]["diff"])


def test_the_shared_queries_check_leaves_the_query_encoding_made(tmp_path, monkeypatch):
    """compare's reader refuses a run sharing no query with the qrels from the run's query encoding, which
    the ranking needs anyway: the scorer finds it made on the run (one hash of the query ids per run,
    not two), and the check still names a disjoint run and lets an overlapping one through."""
    import pyarrow.compute as pc
    from ulnorm_eval.inputs.trec import InputError
    from ulnorm_eval.pipeline import evaluate as api
    from ulnorm_eval.pipeline.run_checks import iter_runs

    qrels, runs = _files(tmp_path)
    q = api.load_qrels(qrels)
    other = tmp_path / "other"
    other.write_text("x1 Q0 d1 1 2.0 r\nx2 Q0 d2 1 1.0 r\n")
    encoded = []
    real = pc.dictionary_encode
    monkeypatch.setattr(pc, "dictionary_encode", lambda arr, *a, **k: encoded.append(len(arr)) or real(arr, *a, **k))
    (run,) = iter_runs(q, runs[:1], qrels)
    assert "queries" in run.cache and sorted(run.cache["queries"][0].to_pylist(), key=int) == [str(i) for i in range(1, 31)]
    made = len(encoded)
    api.evaluate_run(q, run, api.resolve_metrics(["AP"], []), Options())
    assert len([n for n in encoded[made:] if n == len(run.qid)]) == 0  # the run's query ids are not hashed again
    with pytest.raises(InputError, match="other"):
        list(iter_runs(q, [str(other)], qrels))
    assert len(list(iter_runs(q, [str(other)], qrels, allow_disjoint=True))) == 1
