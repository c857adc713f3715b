"""-j N and --scheduler: the same bytes as -j 1, for every command, on the shared data; a Dask
LocalCluster, and one whose worker dies mid-evaluation, too."""
from __future__ import annotations

import gzip
import io
import os
import random

import numpy as np
import pytest

from ulnorm_eval.inputs import trec as io
from ulnorm_eval.pipeline import evaluate as api
from ulnorm_eval.pipeline import parallel, stream
from ulnorm_eval.pipeline.orchestrator import evaluate_runs
from conftest import invoke

MC = ["-m", "nDCG@10", "-m", "AP", "--norm", "e,iub,ul2,db", "--permutations", "30"]  # DB: Monte Carlo


def _cli(*args):
    r = invoke(*args, catch_exceptions=False)
    return r.exit_code, r.stdout, r.stderr


def _same(args, *others):
    """Run ``args`` with -j 1 and with each of ``others`` appended: exit code, stdout and stderr equal."""
    one = _cli(*args, "-j", "1")
    assert one[0] == 0, one[2]
    assert one[1].count("\n") > 10
    for extra in others:
        assert _cli(*args, *extra) == one, extra
    return one


@pytest.fixture(scope="module")
def robust(shared):
    d = shared / "robust03"
    return d / "qrels.txt", sorted((d / "runs").iterdir())


@pytest.fixture(scope="module")
def dlhard(shared):
    d = shared / "dlhard-passage"
    return d / "qrels.txt", sorted((d / "runs").glob("*.run.gz"))


@pytest.fixture(scope="module")
def plain_runs(dlhard, tmp_path_factory):
    """The DL-HARD runs decompressed: uncompressed files are split into query blocks by byte range."""
    out = tmp_path_factory.mktemp("plain")
    paths = []
    for p in dlhard[1]:
        q = out / p.name.removesuffix(".gz")
        q.write_bytes(gzip.decompress(p.read_bytes()))
        paths.append(q)
    return paths


# --------------------------------------------------------------------------- local processes

def test_eval_j2_identical_dlhard_monte_carlo(dlhard):
    qrels, runs = dlhard
    _same(["-f", "tsv", "-q", "-l", "2", *MC, qrels, *runs], ["-j", "2"], ["-j", "0"])


def test_eval_j2_identical_robust03(robust):
    qrels, runs = robust
    _same(["-f", "tsv", "-q", "-m", "nDCG@10", "-m", "P@10", "--norm", "ul2,db", "--permutations", "20", qrels, *runs],
          ["-j", "2"])


def test_eval_j2_identical_streamed_plain_runs(dlhard, plain_runs):
    qrels = dlhard[0]
    _same(["-f", "tsv", "-q", "-l", "2", *MC, qrels, *plain_runs], ["-j", "2"], ["-j", "2", "--stream"])


def test_compare_queries_nrg_j2_identical(robust, dlhard):
    qrels, runs = robust
    _same(["compare", "-f", "tsv", "--table", "all", "--swap-trials", "200", "-m", "nDCG@10", "-m", "AP", qrels,
           *runs[:10]], ["-j", "2"])
    _same(["queries", "-f", "tsv", "--pool", "union", "-m", "nDCG@10", qrels, *runs[:6]], ["-j", "2"])
    _same(["nrg", "-f", "tsv", "-q", "--leave-one-out", qrels, *runs], ["-j", "2"])
    qrels, runs = dlhard
    _same(["nrg", "-f", "tsv", "-q", "-l", "2", "--chronological", "-m", "nDCG@10", "-m", "P@10", qrels, *runs],
          ["-j", "2"])


def test_standard_input_run_j2(dlhard):
    """'-' is read by the command itself, in its place among the runs."""
    qrels, runs = dlhard
    data = gzip.decompress(runs[2].read_bytes())

    def cli(*args):
        r = invoke(*args, input=data, catch_exceptions=False)
        return r.exit_code, r.stdout, r.stderr

    for cmd in (["-f", "tsv", "-q", "-l", "2"], ["-f", "tsv", "-q", "--stream", "-l", "2"], ["nrg", "-f", "tsv", "-q", "--leave-one-out"]):
        one = cli(*cmd, qrels, runs[0], "-", runs[1])
        assert one[0] == 0 and one[1].count("\n") > 10, one[2]
        assert cli(*cmd, qrels, runs[0], "-", runs[1], "-j", "2") == one, cmd


def test_letor_scores_j2_identical(shared, tmp_path):
    """LETOR qrels (group file beside them) and score files, one score a row: one task per score file."""
    d = shared / "letor" / "lightgbm_lambdarank"
    rows = (d / "rank.test").read_bytes().decode().splitlines()
    files = []
    for k in (1, 2, 3):
        p = tmp_path / f"scores{k}.txt"
        p.write_text("".join(f"{(i * 7919 * k) % 1000 / 1000!r}\n" for i in range(len(rows))))
        files.append(p)
    _same(["-f", "tsv", "-q", "-m", "nDCG@10", "--norm", "e,ul2,db", "--permutations", "20", d / "rank.test", *files],
          ["-j", "2"])


def _whole(q, paths, metrics, opts):
    """Each run read whole, in this process."""
    return list(evaluate_runs(q, paths, metrics, opts, stream=False))


def _assert_same_results(a, b, metrics):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert (x.name, x.qids, x.notes, x.missing_qids, x.ignored_qids) == (y.name, y.qids, y.notes,
                                                                              y.missing_qids, y.ignored_qids)
        for m in metrics:
            assert np.array_equal(x.values[m], y.values[m], equal_nan=True), m
            assert x.mean[m] == y.mean[m] or (np.isnan(x.mean[m]) and np.isnan(y.mean[m])), m
        assert set(x.stderr) == set(y.stderr)
        for m in x.stderr:
            assert np.array_equal(x.stderr[m], y.stderr[m], equal_nan=True), m


def test_query_blocks_by_byte_range_equal_whole_runs(dlhard, plain_runs):
    """Small blocks: every run in many byte-range tasks; the values equal reading each run whole."""
    q = api.load_qrels(str(dlhard[0]))
    metrics = api.resolve_metrics(["nDCG@10", "AP", "RR"], ["E", "UL2", "DB"])
    opts = api.Options(rel_level=2, permutations=20)
    paths = [str(p) for p in plain_runs[:3]]
    bounds = stream.block_bounds(paths[0], 60_000)
    assert len(bounds) > 10
    whole = _whole(q, paths, metrics, opts)
    with parallel.executor(q, 2) as ex:
        split = list(evaluate_runs(q, paths, metrics, opts, ex, block_bytes=60_000))
    _assert_same_results(split, whole, metrics)


def test_block_bounds_are_the_sequential_blocks(tmp_path):
    rng = random.Random(3)
    for trial in range(30):
        lines = []
        for q in range(rng.randint(0, 25)):
            for i in range(rng.randint(1, 50)):
                if rng.random() < 0.05:
                    lines.append("# a comment")
                if rng.random() < 0.03:
                    lines.append("")
                lines.append(f"{q} Q0 d{i} {i} {1 / (i + 1):.5f} tag")
        p = tmp_path / f"r{trial}"
        p.write_text("\n".join(lines) + ("\n" if rng.random() < 0.8 else ""))
        data = p.read_bytes()
        for size in (64, 333, 4096, 1 << 20):
            seq = [b for b, _ in stream.run_blocks(str(p), size)]  # the sequential streamed read
            b = stream.block_bounds(str(p), size)
            ranged = [data[lo:hi] for lo, hi in zip(b, b[1:])]
            if ranged and not ranged[-1].strip():  # query_blocks drops a blank tail; so does the scorer
                ranged.pop()
            assert ranged == seq, (trial, size)


def _ungrouped(tmp_path, dlhard):
    """A DL-HARD run with one query's last line moved to the end of the file."""
    lines = gzip.decompress(dlhard[1][0].read_bytes()).decode().splitlines(keepends=True)
    moved = lines.pop(len(lines) // 3)
    p = tmp_path / "ungrouped.run"
    p.write_text("".join(lines) + moved)
    return p, len(lines) + 1


def test_ungrouped_run_falls_back_or_is_refused_alike(tmp_path, dlhard):
    p, last = _ungrouped(tmp_path, dlhard)
    q = api.load_qrels(str(dlhard[0]))
    metrics = api.resolve_metrics(["nDCG@10", "AP"], ["UL2"])
    opts = api.Options(rel_level=2)
    after = str(dlhard[1][0])  # a run after it: its blocks must not be taken for the ungrouped run's
    whole = _whole(q, [str(p), after], metrics, opts)
    with parallel.executor(q, 2) as ex:
        got = list(evaluate_runs(q, [str(p), after], metrics, opts, ex, block_bytes=50_000))
        _assert_same_results(got, whole, metrics)
        with pytest.raises(stream.NotGrouped) as exc:
            list(evaluate_runs(q, [str(p)], metrics, opts, ex, stream=True, block_bytes=50_000))
    with pytest.raises(stream.NotGrouped) as seq:
        list(evaluate_runs(q, [str(p)], metrics, opts, stream=True, block_bytes=50_000))
    assert str(exc.value) == str(seq.value)
    assert f":{last}: query" in str(seq.value)
    one = _cli("-f", "tsv", "--stream", dlhard[0], p)
    assert one[0] == 2 and _cli("-f", "tsv", "--stream", "-j", "2", dlhard[0], p) == one
    # found out early (a line of a query two thirds in, moved a tenth in): the run's later blocks are
    # dropped, not taken for the next run's
    lines = p.read_text().splitlines(keepends=True)
    tenth, moved = len(lines) // 10, 2 * len(lines) // 3
    early = tmp_path / "early.run"
    early.write_text("".join(lines[:tenth] + [lines[moved]] + lines[tenth:moved] + lines[moved + 1:]))
    whole = [_whole(q, [str(early)], metrics, opts)[0], whole[1]]
    with parallel.executor(q, 2) as ex:
        got = list(evaluate_runs(q, [str(early), after], metrics, opts, ex, block_bytes=50_000))
    _assert_same_results(got, whole, metrics)


def test_bad_input_same_error_in_order(tmp_path, dlhard):
    """The first bad run in command-line order is reported, with its line, whatever finishes first."""
    qrels, runs = dlhard
    bad = tmp_path / "bad.run"
    bad.write_text("1 Q0 d1 1 1.0 t\n1 Q0 d2 2 oops t\n")
    args = ["-f", "tsv", qrels, runs[0], bad, runs[1], tmp_path / "missing.run"]
    one = _cli(*args)
    assert one[0] == 2 and one[1] == "" and "bad.run:2:" in one[2]
    assert _cli("-j", "2", *args) == one


def test_scheduler_refusals(monkeypatch, dlhard):
    qrels, runs = dlhard
    code, out, err = _cli("-j", "2", "--scheduler", "tcp://127.0.0.1:1", qrels, runs[0])
    assert code == 2 and out == "" and err.count("\n") == 1 and "exclude each other" in err
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "distributed" else real(name, *a))
    for cmd in ([], ["compare"], ["queries"], ["nrg"]):
        code, out, err = _cli(*cmd, "--scheduler", "tcp://127.0.0.1:1", qrels, runs[0], runs[1])
        assert (code, out) == (2, "") and err == ("ulnorm-eval: --scheduler needs distributed, from the 'dask' extra: "
                                                 "pip install '.[dask]' in a checkout of ulnorm-eval\n"), cmd


def _die(qrels, item):
    os._exit(1)


def test_local_worker_death_is_one_error(dlhard):
    q = api.load_qrels(str(dlhard[0]))
    with parallel.executor(q, 2) as ex:
        with pytest.raises(parallel.ParallelError, match="a worker process died"):
            [parallel.unwrap(outcome) for outcome in ex.imap([(_die, (item,)) for item in (1, 2, 3)])]


# --------------------------------------------------------------------------- a Dask cluster

@pytest.fixture(scope="module")
def cluster():
    import distributed  # noqa: F401 - the test extra installs dask[distributed]
    from dask.distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None, silence_logs=50) as c, Client(c, set_as_default=False) as client:
        yield c, client


def test_scheduler_identical(cluster, dlhard, plain_runs, robust):
    address = cluster[0].scheduler_address
    qrels, runs = dlhard
    _same(["-f", "tsv", "-q", "-l", "2", *MC, qrels, *runs, *plain_runs[:2]], ["--scheduler", address])
    qrels, runs = robust
    _same(["compare", "-f", "tsv", "--table", "all", "--swap-trials", "200", "-m", "nDCG@10", qrels, *runs[:8]],
          ["--scheduler", address])
    _same(["nrg", "-f", "tsv", "-q", "--leave-one-out", qrels, *runs[:8]], ["--scheduler", address])


def test_scheduler_worker_killed_mid_evaluation(cluster, dlhard, plain_runs, tmp_path):
    """The first evaluation task to start kills its worker process, which usually holds the only copy
    of the qrels (the result of the task before it): Dask recomputes the qrels, reschedules the task,
    and the output is the same."""
    from distributed.diagnostics.plugin import WorkerPlugin

    marker = str(tmp_path / "killed")

    class KillOnce(WorkerPlugin):  # defined here: pickled by value to the workers
        name = "kill-once"

        def transition(self, key, start, finish, **kw):
            if finish == "executing" and "ulnorm-eval" in str(key) and "qrels" not in str(key):
                try:
                    os.close(os.open(marker, os.O_CREAT | os.O_EXCL))
                except FileExistsError:
                    return
                os._exit(1)

    c, client = cluster
    qrels, runs = dlhard
    args = ["-f", "tsv", "-q", "-l", "2", *MC, qrels, *runs, *plain_runs[:2]]
    one = _cli(*args)
    client.register_plugin(KillOnce())
    try:
        got = _cli(*args, "--scheduler", c.scheduler_address)
    finally:
        client.unregister_worker_plugin("kill-once")
    assert os.path.exists(marker)  # a worker did die
    assert got[0] == one[0] == 0 and got[1] == one[1]
    assert [x for x in got[2].splitlines() if x.startswith("ulnorm-eval:")] == one[2].splitlines()
    client.wait_for_workers(2, timeout=60)


# --------------------------------------------------------------------------- -j auto (the default)

def _cores(monkeypatch, n):
    """The process may run on ``n`` cores (its CPU affinity), whatever the machine has."""
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(n)), raising=False)


def test_auto_is_the_affinity_capped_by_the_tasks(monkeypatch):
    _cores(monkeypatch, 3)
    assert parallel.usable_cores() == 3
    assert [parallel.resolve_jobs(parallel.AUTO, n) for n in (None, 0, 1, 2, 3, 17)] == [3, 1, 1, 2, 3, 3]
    assert [parallel.resolve_jobs(j, 2) for j in (1, 2, 5)] == [1, 2, 2]  # an explicit N: capped by the tasks only
    _cores(monkeypatch, 1)
    assert parallel.resolve_jobs(parallel.AUTO, 17) == 1
    monkeypatch.delattr(os, "sched_getaffinity")  # macOS, Windows: the core count
    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    assert parallel.resolve_jobs(parallel.AUTO, 17) == 4
    monkeypatch.setattr(os, "cpu_count", lambda: None)
    assert parallel.resolve_jobs(parallel.AUTO, 17) == 1


def test_auto_does_not_depend_on_the_machine_s_load(monkeypatch):
    """-j auto is the usable cores capped by the runs, on a busy machine as on an idle one: the worker
    count, hence the CPU time a command costs, does not change with what else runs."""
    import builtins

    real = builtins.open

    def busy(path, *a, **k):  # Linux's load: 9 runnable threads now, 9.0 over the last minute
        if str(path) == "/proc/loadavg":
            return io.StringIO("9.00 9.00 9.00 10/500 12345\n")
        return real(path, *a, **k)

    _cores(monkeypatch, 2)
    monkeypatch.setattr(builtins, "open", busy)
    monkeypatch.setattr(os, "getloadavg", lambda: (9.0, 9.0, 9.0), raising=False)
    assert [parallel.resolve_jobs(parallel.AUTO, n) for n in (1, 2, 17)] == [1, 2, 2]


def test_auto_without_fork_is_sequential_and_asks_only_when_workers_would_start(monkeypatch):
    """Without fork, auto stays sequential (spawn re-imports in every worker); the question (which
    imports multiprocessing) is asked only when auto would start more than one worker."""
    asked = []
    monkeypatch.setattr(parallel, "_fork_available", lambda: asked.append(1) or False)
    _cores(monkeypatch, 3)
    assert parallel.resolve_jobs(parallel.AUTO, 17) == 1 and len(asked) == 1
    assert parallel.resolve_jobs(2, 17) == 2 and len(asked) == 1  # an explicit N is the user's choice
    assert [parallel.resolve_jobs(parallel.AUTO, n) for n in (0, 1)] == [1, 1] and len(asked) == 1
    _cores(monkeypatch, 1)
    assert parallel.resolve_jobs(parallel.AUTO, 17) == 1 and len(asked) == 1


def _spy_pools(monkeypatch):
    """The worker count of every local pool the command starts (none: the sequential path)."""
    started = []
    real = parallel.LocalPool.__init__

    def init(self, qrels, jobs):
        started.append(jobs)
        real(self, qrels, jobs)

    monkeypatch.setattr(parallel.LocalPool, "__init__", init)
    return started


def test_default_uses_the_cores_for_several_runs(monkeypatch, dlhard):
    """Fails if the default silently stays sequential with 2+ cores and 2+ runs (eval, compare); queries
    and nrg get each run's ranking back from its worker, which costs more than the workers save: auto
    keeps them in the command."""
    qrels, runs = dlhard
    started = _spy_pools(monkeypatch)
    _cores(monkeypatch, 2)
    for cmd, count, workers in ((["-m", "P@10"], 3, [2]), (["-m", "P@10"], 1, []), (["-m", "P@10", "-j", "1"], 3, []),
                                (["compare", "-m", "P@10"], 3, [2]), (["queries", "-m", "P@10"], 2, []),
                                (["nrg", "--leave-one-out"], 3, []), (["compare", "-m", "P@10", "-j", "2"], 3, [2]),
                                (["nrg", "--leave-one-out", "-j", "0"], 3, [])):
        started.clear()
        code, out, err = _cli(*cmd, qrels, *runs[:count])
        assert code == 0 and out, err
        assert started == workers, (cmd, count)
    _cores(monkeypatch, 1)
    started.clear()
    assert _cli("-m", "P@10", qrels, *runs[:3])[0] == 0 and started == []
    _cores(monkeypatch, 8)
    started.clear()
    assert _cli("-m", "P@10", qrels, *runs[:3])[0] == 0 and started == [3]  # one worker per run at most


@pytest.fixture
def two_cores(monkeypatch):
    _cores(monkeypatch, 2)


@pytest.mark.parametrize("cmd", [["--norm", "none", "--names", "trec", "-m", "all_trec"], [],
                                 ["-q", "--norm", "none", "--names", "trec", "-m", "all_trec"]],
                         ids=["all_trec", "defaults", "q"])
def test_auto_equals_j1_on_the_17_robust_runs(two_cores, robust, cmd):
    qrels, runs = robust
    assert len(runs) == 17
    one = _cli(*cmd, qrels, *runs, "-j", "1")
    assert one[0] == 0 and one[1].count("\n") > 100, one[2]
    assert _cli(*cmd, qrels, *runs) == one


def test_bad_input_in_a_middle_run_as_j1(two_cores, robust, tmp_path):
    """The 9th of 17 runs has a bad line: the same one line and exit 2, nothing on stdout, as -j 1."""
    qrels, runs = robust
    runs = list(runs)
    lines = gzip.decompress(runs[8].read_bytes()).splitlines(keepends=True)
    bad = tmp_path / runs[8].name.removesuffix(".gz")
    fields = lines[500].split()
    fields[4] = b"oops"  # the score of line 501
    bad.write_bytes(b"".join(lines[:500] + [b" ".join(fields) + b"\n"] + lines[501:]))
    runs[8] = bad
    one = _cli("-m", "AP", qrels, *runs, "-j", "1")
    assert one[0] == 2 and one[1] == "" and one[2] == f"ulnorm-eval: {bad}:501: score 'oops' is not a number\n", one
    assert _cli("-m", "AP", qrels, *runs) == one


def test_no_thread_of_ours_is_alive_when_the_workers_fork(two_cores, dlhard, tmp_path):
    """The workers are forked before the read-ahead thread (or any other thread of ours) starts, for
    every command and input kind, so no fork can copy a lock held by another thread of ours."""
    import threading

    qrels, runs = dlhard
    plain = tmp_path / "plain.run"
    plain.write_bytes(gzip.decompress(runs[0].read_bytes()))
    seen = []
    watching = [True]
    before = set(threading.enumerate())  # the test session's own (a Dask cluster's, pytest's): not the command's
    os.register_at_fork(before=lambda: watching[0] and seen.append(
        sorted(f"{type(t).__name__}:{t.name}" for t in set(threading.enumerate()) - before)))
    try:
        for cmd in (["-m", "P@10"], ["-m", "P@10", "--holes"], ["compare", "-m", "P@10", "-j", "2"],
                    ["nrg", "--leave-one-out", "-j", "2"]):
            for _ in range(3):
                r = invoke(*cmd, qrels, runs[1], plain, runs[2], catch_exceptions=False)
                assert r.exit_code == 0, r.stderr
        for cmd in (["-m", "P@10"], ["-m", "P@10", "--holes"]):  # 5 runs: the first one done before the fork
            r = invoke(*cmd, qrels, *runs[:5], catch_exceptions=False)
            assert r.exit_code == 0, r.stderr
        data = gzip.decompress(runs[2].read_bytes())
        r = invoke("-m", "P@10", qrels, "-", plain, runs[1], input=data, catch_exceptions=False)
        assert r.exit_code == 0, r.stderr
    finally:
        watching[0] = False
    assert len(seen) >= 2 * 15
    assert seen and not [names for names in seen if names], seen  # not even an executor's manager or feeder thread


def _pid(qrels, item):
    return os.getpid()


def test_the_pool_forks_every_worker_when_asked_for_outcomes(dlhard):
    """imap forks at once (not at the generator's first ``next``), at most one worker per task."""
    import multiprocessing

    q = api.load_qrels(str(dlhard[0]))
    before = {child.pid for child in multiprocessing.active_children()}
    with parallel.executor(q, 2, tasks=5) as ex:
        outcomes = ex.imap([(_pid, (i,)) for i in range(5)])
        workers = {child.pid for child in multiprocessing.active_children()} - before
        assert len(workers) == 2
        assert set(parallel.unwrap(o) for o in outcomes) <= workers
    with parallel.executor(q, 4) as ex:
        ex.imap([(_pid, (i,)) for i in range(3)])
        assert ex.workers == 3 and len({child.pid for child in multiprocessing.active_children()} - before) == 3


def test_explicit_j_splits_a_single_large_run_auto_does_not(monkeypatch, dlhard, tmp_path):
    """-j N evaluates one uncompressed run's query blocks on N workers; auto keeps one run in the command."""
    qrels, runs = dlhard
    plain = tmp_path / "plain.run"
    plain.write_bytes(gzip.decompress(runs[0].read_bytes()))
    started = _spy_pools(monkeypatch)
    _cores(monkeypatch, 2)
    one = _cli("-f", "tsv", "-q", "-m", "AP", qrels, plain, "-j", "1")
    assert _cli("-f", "tsv", "-q", "-m", "AP", qrels, plain) == one and started == []
    assert _cli("-f", "tsv", "-q", "-m", "AP", qrels, plain, "-j", "2") == one and started == [2]


def test_every_task_is_done_by_a_worker_none_by_the_command(dlhard, plain_runs):
    """2 workers, 3 to 5 runs (compressed files, and uncompressed files of one query block): the command
    does no task itself, not even the first before the fork (it once did, for the workers to inherit
    the query set's tables, which blocks.prepare now builds); the results equal the sequential ones."""
    qrels, runs = dlhard
    metrics = api.resolve_metrics(["P@10"], [])
    for paths in (runs, plain_runs):
        expected = list(evaluate_runs(api.load_qrels(str(qrels)), [str(r) for r in paths[:5]], metrics, api.Options()))
        for count in (5, 4, 3):
            q = api.load_qrels(str(qrels))
            here = []  # tasks done in this process (a worker's calls append to its own copy of the list)
            real = parallel._guard
            parallel._guard = lambda *args: here.append(args[2]) or real(*args)
            try:
                with parallel.executor(q, 2) as ex:
                    got = list(evaluate_runs(q, [str(r) for r in paths[:count]], metrics, api.Options(), ex))
                    assert ex.workers == 2 and here == [], count
                    _assert_same_results(got, expected[:count], metrics)
            finally:
                parallel._guard = real


def test_the_qrels_tables_are_built_before_the_fork_for_a_track(dlhard, plain_runs):
    """Two or more runs (whole, or the query blocks of uncompressed files): the qrels' tables of the
    full query set are built (blocks.prepare) before the workers fork, so they inherit them; the query
    blocks of a single run have their own query sets: nothing built.  Results as evaluated alone."""
    from ulnorm_eval.pipeline.blocks import query_set

    qrels, runs = dlhard
    metrics = api.resolve_metrics(None, None)
    full = tuple(query_set(api.load_qrels(str(qrels)), None, api.Options()))
    for paths, block_bytes, built in ((runs[:4], None, True), (plain_runs[:3], None, True), (plain_runs[:1], 1 << 14, False)):
        q = api.load_qrels(str(qrels))
        how = {"block_bytes": block_bytes} if block_bytes else {}
        with parallel.executor(q, 2) as ex:
            done = iter(evaluate_runs(q, [str(p) for p in paths], metrics, api.Options(), ex, **how))
            got = [next(done)]
            assert ("join" in q.cache and q.cache["join"][0] == full) == built
            got += list(done)
        _assert_same_results(got, list(evaluate_runs(api.load_qrels(str(qrels)), [str(p) for p in paths], metrics,
                                                     api.Options())), metrics)


@pytest.mark.parametrize("signame", ["SIGINT", "SIGTERM"])
def test_a_signal_while_the_workers_run_leaves_nothing(robust, tmp_path, signame):
    """Ctrl-C (SIGINT to the process group, as a terminal sends it) or SIGTERM while the workers of
    -j 2 evaluate: exit 130/143, nothing on stdout or stderr, no worker left, no output file."""
    import signal
    import subprocess
    import sys
    import time

    qrels, runs = robust
    out = tmp_path / "out.tsv"
    proc = subprocess.Popen([sys.executable, "-m", "ulnorm_eval", "-j", "2", "-q", "--norm", "none", "-m", "all_trec",
                             "-o", str(out), str(qrels), *map(str, runs)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    children = []
    deadline = time.monotonic() + 60
    while len(children) < 2 and proc.poll() is None and time.monotonic() < deadline:
        try:
            with open(f"/proc/{proc.pid}/task/{proc.pid}/children") as fh:
                children = fh.read().split()
        except OSError:
            break
        time.sleep(0.01)
    assert len(children) == 2, "the workers never started"
    os.killpg(proc.pid, getattr(signal, signame))
    stdout, stderr = proc.communicate(timeout=60)
    assert (proc.returncode, stdout, stderr) == (128 + getattr(signal, signame), b"", b"")
    time.sleep(0.2)
    assert not [pid for pid in children if os.path.exists(f"/proc/{pid}") and
                open(f"/proc/{pid}/stat").read().split()[2] != "Z"]
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------- a run of one block: finished by its worker

def _bits(x):
    """Everything of a value that can reach the output, bits and order included (NaN == NaN)."""
    import dataclasses

    if dataclasses.is_dataclass(x) and not isinstance(x, type) and type(x).__name__ == "RunResult":
        return tuple((f.name, _bits(getattr(x, f.name))) for f in dataclasses.fields(x))
    if isinstance(x, np.ndarray):
        return ("array", x.dtype.str, x.shape, x.tobytes())
    if isinstance(x, dict):
        return ("dict", tuple((k, _bits(v)) for k, v in x.items()))
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, tuple(_bits(v) for v in x))
    if isinstance(x, (float, np.floating)):
        return ("float", type(x).__name__, repr(float(x)))
    return x


def _random_track(tmp_path, rng, trial):
    """A qrels file and ragged runs: numeric or string docids and qids, grades -1 to 3, queries without
    judged relevant documents, runs missing queries or ranking queries the qrels lack, tied scores,
    comment lines, extra fields; the last run's queries are not contiguous (read whole by every path)."""
    numeric = trial % 2 == 0
    qids = [str(q) if numeric else f"q{q}" for q in rng.sample(range(1, 60), rng.randint(1, 9))]
    docs = [str(d) if numeric else f"D{d:05d}" for d in range(rng.randint(5, 80))]
    qrels = tmp_path / f"qrels{trial}"
    qrels.write_text("".join(f"{q} 0 {d} {rng.choice((-1, 0, 0, 1, 2, 3))}\n" for q in qids
                             for d in rng.sample(docs, rng.randint(1, len(docs)))))
    runs = []
    for r in range(rng.randint(2, 5)):
        lines = []
        for q in rng.sample(qids + ["x9", "7777"], rng.randint(1, len(qids) + 1)):
            if rng.random() < 0.1:
                lines.append("# a comment")
            for i, d in enumerate(rng.sample(docs, rng.randint(1, len(docs)))):
                extra = " more" if rng.random() < 0.02 else ""
                lines.append(f"{q} Q0 {d} {i} {rng.choice((1.0, 0.5, 0.5, rng.random()))!r} run{r}{extra}")
        runs.append(lines)
    if len(runs[-1]) > 2 and len({ln.split()[0] for ln in runs[-1] if not ln.startswith("#")}) > 1:
        runs[-1].append(runs[-1].pop(0 if not runs[-1][0].startswith("#") else 1))
    paths = []
    for r, lines in enumerate(runs):
        p = tmp_path / f"run{trial}.{r}"
        p.write_text("\n".join(lines) + "\n")
        paths.append(str(p))
    return str(qrels), paths


def _outcome(executor, paths, metrics, opts, stream=None, **how):
    """The orchestrator's results as bits, or its error (class and one line), as the command sees them."""
    try:
        return [_bits(r) for r in evaluate_runs(executor.qrels, paths, metrics, opts, executor, stream=stream, **how)]
    except io.InputError as exc:
        return (type(exc).__name__, str(exc))


def test_a_run_of_one_block_is_finished_by_its_worker_as_by_the_command(tmp_path, monkeypatch):
    """Each run file of one query block is one task whose worker returns the finished RunResult ('all'
    row, bootstrap intervals, notes); results, notes and errors, in order, equal the sequential
    read's and those of the command merging the runs' small query blocks, on random ragged tracks: good
    runs, a run whose queries are not contiguous (read whole, or refused with --stream), a bad line and
    a repeated document in a middle run."""
    rng = random.Random(39)
    tasks = []
    real = parallel.LocalPool._outcomes
    monkeypatch.setattr(parallel.LocalPool, "_outcomes",
                        lambda self, pool, ts: tasks.extend(f.__name__ for f, _ in ts) or real(self, pool, ts))
    variants = (["nDCG@10", "AP", "RBP(p=0.8)"], ["E", "UL2"])
    kinds = []

    def ungrouped_ok(results):  # the last run, not contiguous, was read whole: its values are there all the same
        return "whole" if len(results) >= 2 else "short"
    for trial in range(6):
        qrels, paths = _random_track(tmp_path, rng, trial)
        q = api.load_qrels(qrels)
        metrics = api.resolve_metrics(*variants) if trial % 3 else api.resolve_metrics(None, None)
        opts = api.Options(seed=trial, undefined=("zero", "skip")[trial % 2], rel_level=1 + trial % 2)
        bad, dup = tmp_path / f"bad{trial}", tmp_path / f"dup{trial}"
        good = open(paths[0]).read()
        bad.write_text(good + "zz Q0 d1 1 oops t\n")
        dup.write_text(good + good.splitlines(keepends=True)[-1])
        for case, stream in ((paths, None), (paths, True), (paths[:1] + [str(bad)] + paths[1:], None),
                             ([str(dup)] + paths, None)):
            expected = _outcome(parallel.Sequential(q), case, metrics, opts, stream)
            with parallel.LocalPool(q, 2) as ex:
                tasks.clear()
                assert _outcome(ex, case, metrics, opts, stream) == expected, (trial, case, stream)
                assert tasks and set(tasks) == {"run_task"}
            with parallel.LocalPool(q, 2) as ex:  # small query blocks, merged by the command
                tasks.clear()
                assert _outcome(ex, case, metrics, opts, stream, block_bytes=256) == expected, (trial, case, stream)
                assert "block_task" in tasks
            kinds.append(expected[0] if isinstance(expected, tuple) else ungrouped_ok(expected))
    # every case met: results, a run read whole, --stream's refusal, a bad line, a repeated document
    assert kinds.count("NotGrouped") >= 4 and kinds.count("InputError") >= 8 and kinds.count("whole") >= 4, kinds
