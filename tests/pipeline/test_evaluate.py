"""pipeline/evaluate.py: the runs' shared holes (with_runs_holes), counted by hand."""
import numpy as np
import pytest

from ulnorm_eval.pipeline.evaluate import Options, load_qrels, resolve_metrics, with_runs_holes


def _holes_files(tmp_path, long: bool):
    """Qrels judging 40 of 400 docids for queries 1, 2, 10, and three runs of 60 docids each for
    queries 1, 2, 7 (not judged), 10; ``long``: docids too long for the fingerprints (Arrow's codes)."""
    rng = np.random.default_rng(5)
    docs = [("clueweb09-en0000-00-" if long else "LA0101-") + f"{i:05d}" + ("-" * 20 if long else "")
            for i in range(400)]
    qrels = tmp_path / "qrels"
    qrels.write_text("".join(f"{q} 0 {d} {int(rng.integers(0, 3))}\n" for q in ("1", "2", "10")
                             for d in rng.choice(docs, 40, replace=False)))
    runs = []
    for r in range(3):
        path = tmp_path / f"run{r}"
        path.write_text("".join(f"{q} Q0 {d} {k} {100 - k} t{r}\n" for q in ("1", "2", "7", "10")
                                for k, d in enumerate(rng.choice(docs, 60, replace=False))))
        runs.append(str(path))
    return str(qrels), runs


@pytest.mark.parametrize("long", [False, True])
def test_runs_holes_are_the_distinct_unjudged_pairs_of_the_runs(tmp_path, long):
    """holes_pool: per qrels query, in natural order, the distinct documents the runs retrieved that
    the qrels do not judge (a document two runs retrieve is one hole); none for a single run."""
    qrels_path, runs = _holes_files(tmp_path, long)
    metrics = resolve_metrics(["AP"], ["LB", "UB"])
    got = with_runs_holes(Options(), load_qrels(qrels_path), runs, metrics).holes_pool
    judged = {tuple(line.split()[:3:2]) for line in open(qrels_path)}
    pairs = {(f[0], f[2]) for run in runs for f in map(str.split, open(run)) if f[0] in {"1", "2", "10"}}
    hand: dict = {}
    for qid, _ in sorted(pairs - judged):
        hand[qid] = hand.get(qid, 0) + 1
    assert [qid for qid, _ in got] == ["1", "2", "10"]
    assert dict(got) == hand and len({pair for pair in pairs if pair not in judged}) < sum(
        1 for run in runs for line in open(run) if line.split()[:1] in (["1"], ["2"], ["10"]) and
        tuple(line.split()[:3:2]) not in judged)  # some holes are shared by runs: each counted once
    assert with_runs_holes(Options(), load_qrels(qrels_path), runs[:1], metrics).holes_pool == ()
