"""Issue 47's "one headline number": the same aggregate in every command, and never raised by leaving
things out (docs/bounds.md, "The decision", "Which 'all' row").

* For every normalised variant and pool, eval's 'all' row (the trec lines), the library's means,
  compare's systems table, the paper table and the gate's line print the same number for the same run,
  measure and options (the bundled DL-HARD runs).
* Removing queries from a run, or documents from the bottom of its rankings, never raises a normalised
  aggregate under a pool the same for every run, nor turns a failing gate into a passing one (random
  removals, seeded, on Robust 2003 and DL-HARD).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import ulnorm_eval as ue
from conftest import invoke
from test_random_baseline import read_run

QRELS = "examples/qrels/dlhard-passage.qrels.txt"
RUNS = ["examples/runs/bm25.run.gz", "examples/runs/bm25_bert_zs.run.gz", "examples/runs/bm25_rm3.run.gz"]
VARIANTS = ["UL1", "UL2", "MM", "EB", "EM", "UEW"]
POOLS = ["qrels+1000", "qrels", "run", "union", RUNS[0]]


@pytest.mark.parametrize("pool", POOLS)
def test_every_command_prints_the_same_aggregate(pool):
    """nDCG@10 and AP with the six normalisations: eval's trec lines, the library, compare's systems
    table, its Markdown paper table and --fail-below's line agree to the printed digits (the library and
    compare to 1e-12)."""
    measures = ["nDCG@10", "AP"]
    ev = ue.evaluate(QRELS, RUNS, measures, VARIANTS, pool=pool)
    cmp = ue.compare(QRELS, RUNS, measures, VARIANTS, pool=pool)
    systems = cmp.systems.set_index(["run", "metric"])["mean"]
    paper = ue.paper_table(cmp, "markdown")
    names = [f"{v}({m})" for m in measures for v in VARIANTS]
    for run in ev.means:
        for name in names:
            assert systems[(run, name)] == pytest.approx(ev.means[run][name], rel=1e-12, abs=1e-15), (pool, run, name)
            assert f"{ev.means[run][name]:.4f}" in paper.split(run, 1)[1].split("\n", 1)[0], (pool, run, name)
    lines = invoke("--pool", pool, *sum((["-m", n] for n in names), []), QRELS, *RUNS).output.splitlines()
    printed = [line.split("\t") for line in lines if "\tall\t" in line and "(" in line]
    got = [float(v) for name, _, v in printed if name in names]
    want = [ev.means[run][name] for run in ev.means for name in names]
    assert np.allclose(got, want, atol=5e-5), pool
    gate = invoke("--pool", pool, "-m", "EM(AP)", "--fail-below", "EM(AP)=2", QRELS, RUNS[0]).output
    assert f"mean {ev.means['bm25.run']['EM(AP)']:.4f} over 50 of 50 queries, threshold 2.0000" in gate


def _removals(run: pd.DataFrame, seed: int) -> list:
    """Seeded removals from a run: 30% of its queries at random, every query cut at a random depth, every
    query cut to 20 documents; each a new run."""
    rng = np.random.default_rng(seed)
    qids = run.qid.unique()
    out = [run[~run.qid.isin(rng.choice(qids, int(0.3 * len(qids)), replace=False))]]
    ranked = run.sort_values(["qid", "score", "docno"], ascending=[True, False, False], kind="stable")
    rank = ranked.groupby("qid").cumcount().to_numpy()
    depth = ranked.qid.map(dict(zip(qids, rng.integers(1, 1001, len(qids))))).to_numpy()
    out.append(ranked[rank < depth])
    out.append(ranked[rank < 20])
    return out


@pytest.mark.parametrize("collection", ["robust03", "dlhard"])
def test_leaving_queries_or_documents_out_never_raises_a_normalised_aggregate(collection, shared):
    """Two runs of each collection, three seeded removals each (30% of the queries; every query cut at a
    random depth; every query cut to 20): under the default pool (qrels+1000) and --pool qrels no
    normalisation's 'all' row rises (its bounds do not depend on the run, a query left out scores A = 0
    against them, and each variant grows with A); a gate failing the full run by 0.0001 (--fail-below) or
    a baseline whose copy fails by a drop (--baseline, --max-drop 0) still fails.  Under --pool run the
    same removals do raise some (the pool shrinks with the run: why it is not the default)."""
    d = shared / ("robust03" if collection == "robust03" else "dlhard-passage")
    paths = sorted((d / "runs").glob("input.*.gz" if collection == "robust03" else "*.run.gz"))[:2]
    qrels = str(d / "qrels.txt")
    measures = ["nDCG@10", "AP", "RBP(p=0.8)"]
    rose = 0
    for k, path in enumerate(paths):
        full = read_run(path)
        cut = {f"cut{j}": r for j, r in enumerate(_removals(full, 100 + k))}
        for pool in ("qrels+1000", "qrels", "run"):
            base = ue.evaluate(qrels, {"full": full}, measures, VARIANTS, pool=pool)
            ev = ue.evaluate(qrels, cut, measures, VARIANTS, pool=pool, allow_disjoint=True)
            for name, value in base.means["full"].items():
                if "(" not in name or name.startswith("E("):
                    continue
                for c in cut:
                    if pool == "run":
                        rose += ev.means[c][name] > value + 1e-12
                    else:
                        assert ev.means[c][name] <= value + 1e-12, (path.name, pool, c, name)
    assert rose > 0
    # the gates, from the command line, on the first run of the collection and its first removal
    run, removed = paths[0], _removals(read_run(paths[0]), 100)[0]
    full = ue.evaluate(qrels, {"full": read_run(run)}, ["AP"], ["EM"]).means["full"]["EM(AP)"]
    text = "".join(f"{q} Q0 {doc} 1 {s} t\n" for q, doc, s in removed.itertuples(index=False))
    out = invoke("-m", "EM(AP)", "--fail-below", f"EM(AP)={full - 0.0001}", qrels, "-", input=text)
    assert out.exit_code == 1 and "FAIL" in out.output
    out = invoke("-m", "EM(AP)", "--baseline", str(run), "--max-drop", "0", qrels, "-", input=text)
    assert out.exit_code == 1 and "gate FAILED: 1 of 1 check" in out.output
