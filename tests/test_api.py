"""The notebook API (ulnorm_eval.api): paths, DataFrames (ir_measures/PyTerrier and TREC column names)
and pytrec_eval-style dicts give the command line's numbers; tidy/wide frames, per-query arrays,
notes and bounds; compare and nrg the same way."""
from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import ulnorm_eval as ue
from ulnorm_eval.cli.main import main
from ulnorm_eval.inputs.trec import InputError

MEASURES = ["nDCG@10", "AP", "P@10"]


def cli_tsv(args) -> pd.DataFrame:
    res = CliRunner().invoke(main, ["-f", "tsv", "-q", *args])
    assert res.exit_code == 0, res.output
    return pd.read_csv(io.StringIO(res.stdout), sep="\t", dtype={"query": str})


def read_qrels(path) -> pd.DataFrame:
    return pd.read_csv(path, sep=r"\s+", header=None, names=["query_id", "iter", "doc_id", "relevance"],
                       dtype={"query_id": str, "doc_id": str})


def read_run(path) -> pd.DataFrame:
    return pd.read_csv(path, sep=r"\s+", header=None, names=["query_id", "Q0", "doc_id", "rank", "score", "tag"],
                       dtype={"query_id": str, "doc_id": str})


@pytest.fixture(scope="module")
def dl(shared):
    d = shared / "dlhard-passage"
    runs = {n: d / "runs" / f"{n}.run.gz" for n in ("bm25", "bm25_rm3")}
    return d / "qrels.txt", runs


def test_imports_stay_cheap():
    import subprocess
    import sys

    code = "import sys, ulnorm_eval; print(sorted(m for m in ('numpy', 'pandas', 'pyarrow', 'ir_measures') if m in sys.modules))"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "[]"


@pytest.mark.parametrize("style", ["paths", "ir_measures", "pyterrier", "dicts"])
def test_every_input_style_gives_the_cli_values(dl, style):
    qrels, runs = dl
    margs = [x for m in MEASURES for x in ("-m", m)]
    expected = pd.concat([cli_tsv(margs + ["--norm", "ul2", str(qrels), str(p)]).assign(run=name)
                          for name, p in runs.items()], ignore_index=True)
    q, r = read_qrels(qrels), {n: read_run(p) for n, p in runs.items()}
    if style == "paths":
        q_in, r_in = str(qrels), {n: str(p) for n, p in runs.items()}
    elif style == "ir_measures":
        q_in, r_in = q[["query_id", "doc_id", "relevance"]], {n: x[["query_id", "doc_id", "score"]] for n, x in r.items()}
    elif style == "pyterrier":
        q_in = q.rename(columns={"query_id": "qid", "doc_id": "docno", "relevance": "label"})
        r_in = {n: x.rename(columns={"query_id": "qid", "doc_id": "docno"}) for n, x in r.items()}
    else:
        q_in = {qid: dict(zip(g["doc_id"], g["relevance"])) for qid, g in q.groupby("query_id")}
        r_in = {n: {qid: dict(zip(g["doc_id"], g["score"])) for qid, g in x.groupby("query_id")} for n, x in r.items()}
    res = ue.evaluate(q_in, r_in, MEASURES, variants=["UL2"])
    wide = res.wide()
    assert list(wide.columns) == ["run", "query", "nDCG@10", "UL2(nDCG@10)", "AP", "UL2(AP)", "P@10", "UL2(P@10)"]
    pd.testing.assert_frame_equal(wide.reset_index(drop=True), expected[wide.columns].reset_index(drop=True),
                                  check_exact=True, check_dtype=False)
    assert len(wide) == 2 * 51


def test_tidy_per_query_means_notes(dl):
    qrels, runs = dl
    res = ue.evaluate(str(qrels), str(runs["bm25"]), ["nDCG@10"], variants=["UL2"], pool="run")
    tidy = res.tidy()
    assert list(tidy.columns) == ["run", "query", "measure", "value"]
    assert len(tidy) == 2 * 51 and len(res.tidy(all_rows=False)) == 2 * 50
    arr = res.per_query["bm25.run"]["UL2(nDCG@10)"]
    assert isinstance(arr, np.ndarray) and arr.shape == (50,)
    assert res.queries["bm25.run"][:2] == ["19335", "47923"]
    assert res.means["bm25.run"]["nDCG@10"] == tidy[(tidy["query"] == "all") & (tidy["measure"] == "nDCG@10")]["value"].item()
    # under --pool run (the run's own documents) a query whose ranked passages all score alike
    assert res.notes == ["bm25.run: undefined values: UL2 of nDCG@10 for 1 query (scored 0 per query by --undefined zero, "
                         "and as 0 in the 'all' row, a mean of per-query values; --undefined skip leaves such queries out)"]
    # frame: the queries only (pandas habits: describe() counts queries); the means in summary()
    f = res.frame
    assert len(f) == 50 and "all" not in f.index.get_level_values("query")
    assert f["nDCG@10"].describe()["count"] == 50
    assert f["nDCG@10"].mean() == pytest.approx(res.summary().loc["bm25.run", "nDCG@10"], abs=1e-15)
    assert res.wide(all_rows=True).iloc[-1]["query"] == "all" and len(res.wide(all_rows=False)) == 50


def test_bounds_equal_the_cli_bound_columns(dl):
    qrels, runs = dl
    res = ue.evaluate(str(qrels), {"a": str(runs["bm25"]), "b": str(runs["bm25_rm3"])}, ["nDCG@10", "AP"], variants=[])
    b = res.bounds
    assert list(b.columns) == ["run", "query", "measure", "E", "IUB", "WLB"]
    cli = cli_tsv(["-m", "nDCG@10", "-m", "AP", "--norm", "e,iub,wlb", str(qrels), str(runs["bm25_rm3"])])
    cli = cli[cli["query"] != "all"].set_index("query")
    for meas in ("nDCG@10", "AP"):
        got = b[(b["run"] == "b") & (b["measure"] == meas)].set_index("query")
        for v in ("E", "IUB", "WLB"):
            assert got[v].tolist() == cli[f"{v}({meas})"].tolist()
    # the default pool (qrels+1000) and the qrels pool are the same for every run; under --pool run, each
    # run's documents, the bounds differ between runs
    for pool, same in (("qrels+1000", True), ("qrels", True), ("run", False)):
        q = ue.evaluate(str(qrels), {"a": str(runs["bm25"]), "b": str(runs["bm25_rm3"])}, ["nDCG@10", "AP"],
                        variants=[], pool=pool).bounds
        bounds = [q[q["run"] == r][["E", "IUB", "WLB"]].values.tolist() for r in "ab"]
        assert (bounds[0] == bounds[1]) == same, pool


def test_run_names(dl):
    qrels, runs = dl
    df = read_run(runs["bm25"])
    assert [r.name for r in ue.evaluate(str(qrels), df, ["AP"], variants=[]).runs] == ["run"]
    assert [r.name for r in ue.evaluate(str(qrels), [df, df], ["AP"], variants=[]).runs] == ["run1", "run2"]
    assert [r.name for r in ue.evaluate(str(qrels), [str(runs["bm25"]), df], ["AP"], variants=[]).runs] == ["bm25.run", "run"]
    assert [r.name for r in ue.evaluate(str(qrels), {"x": str(runs["bm25"])}, ["AP"], variants=[]).runs] == ["x"]


def test_in_memory_notes_and_errors():
    q = pd.DataFrame({"qid": ["1", "1", "2"], "docno": ["a", "b", "c"], "label": [1, 0, 1]})
    r = pd.DataFrame({"qid": ["1", "1", "9"], "docno": ["a", "b", "z"], "score": [2.0, 1.0, 1.0]})
    res = ue.evaluate(q, r, ["AP"], variants=[])
    assert res.per_query["run"]["AP"].tolist() == [1.0, 0.0]
    assert res.notes == ["run: 1 of 2 qrels queries have no ranked documents and score 0 (--run-queries-only leaves them out)",
                         "run: 1 run queries are not in the qrels and were ignored"]
    with pytest.raises(InputError, match="run needs a column 'score'"):
        ue.evaluate(q, r.rename(columns={"score": "s"}), ["AP"])
    with pytest.raises(InputError, match=r"row 1: score 'x' is not a number"):
        ue.evaluate(q, r.assign(score=["1", "x", "2"]), ["AP"])
    with pytest.raises(InputError, match="duplicate document 'a' for query '1'"):
        ue.evaluate(pd.concat([q, q.iloc[:1]]), r, ["AP"])
    with pytest.raises(TypeError, match="unexpected keyword arguments \\['bogus'\\]"):
        ue.evaluate(q, r, ["AP"], bogus=1)


def test_options_are_the_cli_options(dl):
    qrels, runs = dl
    res = ue.evaluate(str(qrels), str(runs["bm25"]), ["AP"], variants=["UL2"], rel_level=2, depth=100, pool="union")
    cli = cli_tsv(["-m", "AP", "--norm", "ul2", "-l", "2", "-M", "100", "--pool", "union", str(qrels), str(runs["bm25"])])
    assert res.wide()[["AP", "UL2(AP)"]].values.tolist() == cli[["AP", "UL2(AP)"]].values.tolist()


def test_compare_and_nrg_from_dataframes_equal_the_paths(dl):
    qrels, runs = dl
    q = read_qrels(qrels)
    frames = {f"{n}.run": read_run(p) for n, p in runs.items()}
    a = ue.compare(q, frames, ["nDCG@10"], variants=["UL2"], test="randomization", reps=500, seed=3)
    b = ue.compare(str(qrels), [str(p) for p in runs.values()], ["nDCG@10"], variants=["UL2"], test="randomization",
                   reps=500, seed=3)
    pd.testing.assert_frame_equal(a.pairs, b.pairs, check_exact=True)
    pd.testing.assert_frame_equal(a.systems, b.systems, check_exact=True)
    assert a.meta["seed"] == 3 and a.meta["reps"] == 500

    n1 = ue.nrg(q, frames, measures="nDCG@10", protocol="leave-one-out")
    n2 = ue.nrg(str(qrels), [str(p) for p in runs.values()], measures=["nDCG@10"], protocol="leave-one-out")
    pd.testing.assert_frame_equal(n1.frame, n2.frame, check_exact=True)
    assert n1.priors == {"bm25.run": ["bm25_rm3.run"], "bm25_rm3.run": ["bm25.run"]}
    res = CliRunner().invoke(main, ["nrg", "-f", "tsv", "-q", "--leave-one-out", str(qrels), *map(str, runs.values())])
    cli = pd.read_csv(io.StringIO(res.stdout), sep="\t", dtype={"query": str})
    assert n1.frame.reset_index()["NRG(nDCG@10)"].tolist() == cli[cli["query"] != "all"]["NRG(nDCG@10)"].tolist()
    assert n1.wide()["NRG(nDCG@10)"].tolist() == cli["NRG(nDCG@10)"].tolist()
    assert n1.per_query["bm25.run"]["NRG(nDCG@10)"].shape == (50,) and len(n1.tidy(all_rows=False)) == 2 * 2 * 50


def test_rank_column_of_a_frame_orders_with_ties_rank():
    q = {"1": {"a": 1, "b": 0, "c": 1}}
    r = pd.DataFrame({"qid": ["1"] * 3, "docno": ["a", "b", "c"], "score": [1.0, 1.0, 1.0], "rank": [3, 1, 2]})
    # by rank: b (0), c (1), a (1): AP = (1/2 + 2/3) / 2; by score ties (docid descending): c, b, a: (1 + 2/3) / 2
    assert ue.evaluate(q, r, ["AP"], variants=[], ties="rank").means["run"]["AP"] == (1 / 2 + 2 / 3) / 2
    assert ue.evaluate(q, r, ["AP"], variants=[]).means["run"]["AP"] == (1 + 2 / 3) / 2
    with pytest.raises(InputError, match="row 0: rank 'x' is not an integer"):
        ue.evaluate(q, r.assign(rank=["x", "1", "2"]), ["AP"])
