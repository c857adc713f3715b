"""The one route of an evaluation (pipeline/orchestrator.py): every entry point gives the same per-query
values and 'all' rows for the same inputs; a run given as a pipe, a FIFO or a process substitution is
read once and equals its file, in every command (issue 52, items 1 and 8); a run file replaced while
-j reads it is refused, never half old and half new (item 2)."""
from __future__ import annotations

import csv
import gzip
import io
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import ulnorm_eval
from conftest import CODE, ROOT, invoke

QRELS = str(ROOT / "examples" / "qrels" / "dlhard-passage.qrels.txt")
RUNS = [str(ROOT / "examples" / "runs" / f"{name}.run.gz") for name in ("bm25", "bm25_bert_zs", "bm25_rm3")]
MEASURES = ["nDCG@10", "AP"]


@pytest.fixture(scope="module")
def reference():
    """The library's per-query values and 'all' rows of the bundled runs: what every entry point gives."""
    res = ulnorm_eval.evaluate(QRELS, RUNS, MEASURES, variants=[])
    return res.per_query, res.means, res.queries


def _tsv(text: str) -> list:
    return list(csv.DictReader(io.StringIO(text), delimiter="\t"))


def _eval_json(*args) -> tuple:
    """(per-query values, 'all' rows, query ids) of `ulnorm-eval -f json -q`, by run name."""
    r = invoke("-f", "json", "-q", "--norm", "none", *[x for m in MEASURES for x in ("-m", m)], *args)
    assert r.exit_code == 0, r.stderr
    runs = json.loads(r.stdout)["runs"]
    values = {run["name"]: {m: np.array([q["values"][m] for q in run["queries"]]) for m in MEASURES} for run in runs}
    return values, {run["name"]: run["summary"] for run in runs}, {run["name"]: [q["query"] for q in run["queries"]]
                                                                   for run in runs}


def _same_as(reference, values, means, queries) -> None:
    per_query, ref_means, ref_queries = reference
    assert queries == ref_queries
    for name in per_query:
        for m in MEASURES:
            assert values[name][m].tolist() == per_query[name][m].tolist(), (name, m)
            assert means[name][m] == ref_means[name][m], (name, m)


@pytest.mark.parametrize("flags", [[], ["-j", "1"], ["-j", "2"], ["--stream"], ["--no-stream"], ["--stream", "-j", "2"]],
                         ids=["auto", "j1", "j2", "stream", "no-stream", "stream-j2"])
def test_eval_gives_the_library_s_values(reference, flags):
    _same_as(reference, *_eval_json(*flags, QRELS, *RUNS))


def test_uncompressed_runs_split_in_query_blocks_give_the_library_s_values(reference, tmp_path):
    """Uncompressed files: -j 2 reads them by byte range (tasks of query blocks when large; here whole)."""
    plain = []
    for path in RUNS:
        out = tmp_path / Path(path).name.removesuffix(".gz")
        out.write_bytes(gzip.decompress(Path(path).read_bytes()))
        plain.append(str(out))
    _same_as(reference, *_eval_json("-j", "2", QRELS, *plain))


def test_compare_systems_are_the_library_s_means(reference):
    r = invoke("compare", "-f", "tsv", "--table", "systems", "--norm", "none",
               *[x for m in MEASURES for x in ("-m", m)], QRELS, *RUNS)
    assert r.exit_code == 0, r.stderr
    rows = _tsv(r.stdout)
    _, means, _ = reference
    assert len(rows) == len(RUNS) * len(MEASURES)
    for row in rows:  # compare's mean is numpy's over the queries in query order; the 'all' row sums in byte order
        assert float(row["mean"]) == pytest.approx(means[row["run"]][row["metric"]], rel=1e-14, abs=0)


def test_queries_mean_of_one_run_is_its_per_query_value(reference):
    per_query, _, queries = reference
    for path, name in zip(RUNS, per_query):
        r = invoke("queries", "-f", "tsv", *[x for m in MEASURES for x in ("-m", m)], QRELS, path)
        assert r.exit_code == 0, r.stderr
        got = {(row["query"], row["measure"]): float(row["mean"]) for row in _tsv(r.stdout)}
        for m in MEASURES:
            assert [got[(q, m)] for q in queries[name]] == per_query[name][m].tolist(), (name, m)


def test_nrg_plain_values_are_the_library_s(reference):
    per_query, means, _ = reference
    res = ulnorm_eval.nrg(QRELS, RUNS[:2], priors=[RUNS[2]], measures=["nDCG@10"])
    for name in res.per_query:
        assert res.per_query[name]["nDCG@10"].tolist() == per_query[name]["nDCG@10"].tolist()
        assert res.means[name]["nDCG@10"] == means[name]["nDCG@10"]


def test_a_dask_cluster_gives_the_library_s_values(reference):
    pytest.importorskip("distributed", reason="the dask extra (the test extra installs it)")
    from dask.distributed import LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None,
                      silence_logs=50) as cluster:
        _same_as(reference, *_eval_json("--scheduler", cluster.scheduler_address, QRELS, *RUNS))


# --------------------------------------------------------------------------- a run read once, whatever it is

def _command(args: list, feeds: dict, stdin: bytes | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    """`python -m ulnorm_eval ARGS` in a child process (a FIFO read twice would block it for ever:
    the timeout turns that into a failure), each FIFO of ``feeds`` written by a thread of this one,
    ``stdin`` on its standard input."""
    writers = []
    for fifo, data in feeds.items():
        def feed(fifo=fifo, data=data):
            try:
                with open(fifo, "wb") as handle:
                    handle.write(data)
            except BrokenPipeError:  # a reader that stopped early: the command's failure shows it
                pass
        writers.append(threading.Thread(target=feed, daemon=True))
        writers[-1].start()
    try:
        return subprocess.run([sys.executable, "-m", "ulnorm_eval", *args], capture_output=True, timeout=timeout,
                              cwd=CODE, env={**os.environ, "NO_COLOR": "1"}, input=stdin)
    finally:
        for fifo in feeds:  # a writer still blocked in open() (the command never read it): unblock it
            try:
                os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
            except OSError:
                pass


@pytest.mark.parametrize("args", [
    ["compare", "-f", "tsv", "--table", "systems", "-m", "P@10", "--norm", "none"],
    ["compare", "-f", "tsv", "--holes", "-m", "AP"],
    ["queries", "-f", "tsv", "-m", "P@10", "--pool", "run"],
    ["nrg", "-f", "tsv", "-q", "--leave-one-out", "-m", "P@10"],
    ["-f", "tsv", "-q", "--holes", "-m", "AP", "--norm", "none"],
], ids=["compare", "compare-holes", "queries", "nrg", "eval-holes"])
def test_a_run_given_as_a_fifo_equals_its_file(tmp_path, args):
    """The same name in two folders: a FIFO fed once, and a file; every command's output is the same."""
    data = gzip.decompress(Path(RUNS[0]).read_bytes())
    (tmp_path / "fifo").mkdir()
    (tmp_path / "file").mkdir()
    fifo, file = tmp_path / "fifo" / "bm25.run", tmp_path / "file" / "bm25.run"
    os.mkfifo(fifo)
    file.write_bytes(data)
    got = _command([*args, QRELS, str(fifo), RUNS[2]], {fifo: data})
    want = _command([*args, QRELS, str(file), RUNS[2]], {})
    assert want.returncode == 0 and want.stdout.count(b"\n") > 1, want.stderr
    assert (got.returncode, got.stdout) == (0, want.stdout), got.stderr


@pytest.mark.parametrize("stdin", ["/dev/stdin", "-"])
def test_standard_input_to_queries_equals_its_file(stdin):
    """`zcat run.gz | ulnorm-eval queries QRELS /dev/stdin OTHER`: the pool sizes and means of the file."""
    args = ["queries", "-f", "tsv", "-m", "P@10", "--pool", "run", QRELS]
    got = _command([*args, stdin, RUNS[2]], {}, stdin=gzip.decompress(Path(RUNS[0]).read_bytes()))
    want = _command([*args, RUNS[0], RUNS[2]], {})
    assert want.returncode == 0 and want.stdout.count(b"\n") > 1, want.stderr
    assert (got.returncode, got.stdout) == (0, want.stdout), got.stderr


def test_a_process_substitution_is_read_once(tmp_path):
    """Issue 52.1 as reported: bm25 given as <(zcat ...) scores its file's P@10 (0.3040, first)."""
    run = subprocess.run(["bash", "-c", f"{sys.executable} -m ulnorm_eval compare -f tsv -m P@10 --norm none "
                                        f"--table systems {QRELS} <(zcat {RUNS[0]}) {RUNS[2]}"],
                         capture_output=True, timeout=60, cwd=CODE, env={**os.environ, "NO_COLOR": "1"})
    assert run.returncode == 0, run.stderr
    rows = _tsv(run.stdout.decode())
    means = ulnorm_eval.evaluate(QRELS, [RUNS[0], RUNS[2]], ["P@10"], variants=[]).means
    assert [(float(r["mean"]), r["rank"]) for r in rows] == [
        (pytest.approx(means["bm25.run"]["P@10"], rel=1e-14), "1"), (pytest.approx(means["bm25_rm3.run"]["P@10"], rel=1e-14), "2")]
    assert f"{means['bm25.run']['P@10']:.4f}" == "0.3040"


# --------------------------------------------------------------------------- a file replaced while -j reads it

def test_a_run_file_replaced_under_j_is_refused(tmp_path, monkeypatch):
    """`mv` of a same-size edited copy over a large run while -j 2 reads its query blocks: refused with
    exit 2 and one line naming the file, never a mix of the old and the new blocks (the tasks submitted
    after the first result read the new file)."""
    from ulnorm_eval.pipeline import parallel

    rng = np.random.default_rng(5)
    queries, docs = 1100, 1000
    qrels = tmp_path / "qrels"
    qrels.write_text("".join(f"q{q} 0 d{d} 1\n" for q in range(queries) for d in rng.choice(docs, 5, replace=False)))
    lines = [f"q{q} Q0 d{d:03d} {k + 1} {docs - k} t\n" for q in range(queries) for k, d in enumerate(rng.permutation(docs))]
    run = tmp_path / "big.run"
    run.write_text("".join(lines))
    assert run.stat().st_size > 5 * (4 << 20)  # more query blocks than the pool keeps in flight (4)
    edited = tmp_path / "edited.run"
    edited.write_text("".join(lines).replace(" d", " e"))  # the same size: no document is judged any more
    real = parallel.LocalPool._outcomes

    def replaced_after_the_first(self, pool, tasks):
        for count, outcome in enumerate(real(self, pool, tasks)):
            if count == 0:
                os.replace(edited, run)
            yield outcome

    monkeypatch.setattr(parallel.LocalPool, "_outcomes", replaced_after_the_first)
    res = invoke("-j", "2", "-f", "tsv", "-m", "P@10", "--norm", "none", str(qrels), str(run))
    assert (res.exit_code, res.stdout) == (2, ""), res.stderr
    assert res.stderr.splitlines()[-1].startswith(f"ulnorm-eval: {run}: changed while being read"), res.stderr
