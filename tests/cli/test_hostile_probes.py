"""The fresh hostile pass over the fourth wave (issue 52's "done when"): a Dask cluster that loses its
worker or its scheduler, the gate's and the legends' direction of a lower-is-better measure, and the
probes of the orchestrator, the notes, repro, compare's tests, the R ceiling and the pools, each a
test that failed before its fix or a representative of the probes that passed."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT, invoke

from toy_files import QRELS, RUN, files, one_line  # noqa: F401 (files: the fixture, imported to be found)


# --------------------------------------------------------------------------- 52.8: a Dask cluster that dies

def _dask(*args):
    return subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_" + args[0], *args[1:]],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)


@pytest.fixture
def dask_processes(tmp_path):
    """A scheduler and one worker without a nanny (nothing restarts it), as processes; the address,
    the scheduler's process and a client."""
    import socket

    from dask.distributed import Client

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    address = f"tcp://127.0.0.1:{port}"
    scheduler = _dask("scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard")
    worker = None
    try:
        worker = _dask("worker", address, "--nthreads", "1", "--no-nanny", "--no-dashboard")
        client = Client(address, timeout="60s", set_as_default=False)
        client.wait_for_workers(1, timeout=60)
        yield address, scheduler, client
        client.close(timeout=5)
    finally:
        for process in (worker, scheduler):
            if process is not None:
                process.kill()
                process.wait()


@pytest.mark.parametrize("victim", ["worker", "scheduler"])
def test_a_dask_cluster_that_loses_its_worker_or_scheduler_ends_the_command(dask_processes, files, tmp_path,
                                                                             victim):
    """The first evaluation task kills its worker (no nanny: no worker is left), or the scheduler:
    the command waited for ever without a word; now one line and exit 2 within --scheduler-timeout."""
    from distributed.diagnostics.plugin import WorkerPlugin

    address, scheduler, client = dask_processes
    target = scheduler.pid if victim == "scheduler" else None

    class Kill(WorkerPlugin):  # defined here: pickled by value to the worker
        name = "kill"

        def transition(self, key, start, finish, **kw):
            if finish == "executing" and "ulnorm-eval-run_task" in str(key):
                if target is None:
                    os._exit(1)
                os.kill(target, signal.SIGKILL)

    client.register_plugin(Kill())
    began = time.monotonic()
    out = subprocess.run([sys.executable, "-m", "ulnorm_eval", "--scheduler", address, "--scheduler-timeout", "8",
                          "-m", "AP", *files], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert time.monotonic() - began < 100
    expected = {"worker": f"the Dask scheduler at {address} lost its workers (none for 8 s, --scheduler-timeout)",
                "scheduler": f"lost the connection to the Dask scheduler at {address}"}[victim]
    one_line(out, expected, "the evaluation was not finished")


# --------------------------------------------------------------------------- a lower-is-better measure's direction

GQRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d1 1\nq2 0 d2 0\n"
# A: every retrieved document judged, RBP_resid 0 on both queries; B: an unjudged x at rank 2 of q1,
# RBP_resid(p=0.9) = 0.9^2 + (1 - 0.9) 0.9^1 = 0.90 on q1, 0 on q2: mean 0.45 (worse: more unjudged weight)
GA = "q1 Q0 d1 1 2 A\nq1 Q0 d2 2 1 A\nq2 Q0 d1 1 2 A\nq2 Q0 d2 2 1 A\n"
GB = "q1 Q0 d1 1 2 B\nq1 Q0 x 2 1 B\nq2 Q0 d1 1 2 B\nq2 Q0 d2 2 1 B\n"


@pytest.fixture
def lower(tmp_path):
    for name, text in (("q", GQRELS), ("A", GA), ("B", GB)):
        (tmp_path / name).write_text(text)
    return str(tmp_path / "q"), str(tmp_path / "A"), str(tmp_path / "B")


def _verdict(res):
    return [line for line in res.stderr.splitlines() if "FAIL" in line or "pass " in line or "gate" in line]


def test_a_rise_of_a_lower_is_better_measure_fails_the_baseline_gate(lower):
    """B's residual rose from 0 to 0.45: worse.  The gate read it as a gain of 0.45 and passed."""
    qrels, a, b = lower
    res = invoke("-m", "RBP_resid", "--norm", "none", "--baseline", a, "--max-drop", "0.1", qrels, b)
    assert res.exit_code == 1, res.stderr
    # paired t on the oriented differences -(0.9, 0): mean -0.45, sd 0.9/sqrt(2), t = -1 on 1 df: p = 0.25
    assert _verdict(res)[1:] == [
        "ulnorm-eval:   FAIL B RBP_resid(p=0.9): mean 0.4500 vs baseline 0.0000, difference +0.4500, limit +0.1000 "
        "(--max-drop, lower is better: a rise fails), margin -0.3500, p = 0.25 (paired t, one-sided, n = 2 of 2 queries)"]
    # a drop of the residual is a gain: the baseline A against B passes
    res = invoke("-m", "RBP_resid", "--norm", "none", "--baseline", b, "--max-drop", "0", "--alpha", "0.3", qrels, a)
    assert res.exit_code == 0 and "margin +0.4500, p = 0.75" in res.stderr, res.stderr
    # within --max-drop: a rise of 0.45 under a limit of 0.5 passes, margin 0.05
    res = invoke("-m", "RBP_resid", "--norm", "none", "--baseline", a, "--max-drop", "0.5", qrels, b)
    assert res.exit_code == 0 and "margin +0.0500" in res.stderr, res.stderr


def test_fail_below_of_a_lower_is_better_measure_fails_the_run_above_it(lower):
    """--fail-below RBP_resid=0.3 failed A (residual 0, the best possible) and passed B (0.45)."""
    qrels, a, b = lower
    res = invoke("-m", "RBP_resid", "--norm", "none", "--fail-below", "RBP_resid=0.3", qrels, a, b)
    assert res.exit_code == 1
    assert _verdict(res)[1:] == [
        "ulnorm-eval:   pass A RBP_resid(p=0.9): mean 0.0000 over 2 of 2 queries, threshold 0.3000 (--fail-below, lower is better: "
        "above it fails), margin +0.3000",
        "ulnorm-eval:   FAIL B RBP_resid(p=0.9): mean 0.4500 over 2 of 2 queries, threshold 0.3000 (--fail-below, lower is better: "
        "above it fails), margin -0.1500"]
    res = invoke("-m", "RBP_resid", "--norm", "none", "--fail-below", "RBP_resid=0.45", qrels, b)
    assert res.exit_code == 0, res.stderr  # equal passes, as for every measure
    # the Markdown summary: B's threshold is the baseline's 0 + 0.1, its margin 0.1 - 0.45
    summary = Path(qrels).with_name("summary.md")
    res = invoke("-m", "RBP_resid", "--norm", "none", "--baseline", a, "--max-drop", "0.1", "--summary-md", summary,
                 qrels, b)
    text = summary.read_text()
    assert res.exit_code == 1 and "| ❌ fail | B | RBP_resid(p=0.9) | --baseline A (0.0000) --max-drop 0.1 (lower is " \
        "better) | 0.4500 | 0.1000 | -0.3500 |" in text, text


def test_a_higher_is_better_measure_keeps_its_direction(lower):
    """The control: AP, higher is better.  A: AP 1 on both queries; B: 1 on both too (d1 first): equal."""
    qrels, a, b = lower
    res = invoke("-m", "P@2", "--norm", "none", "--baseline", a, "--max-drop", "0.2", qrels, b)
    # P@2: A 0.5 on both queries, B 0.5 on both: difference 0, limit -0.2
    assert res.exit_code == 0 and "difference +0.0000, limit -0.2000 (--max-drop), margin +0.2000" in res.stderr


def test_the_legend_says_iub_is_the_worst_ordering_of_a_lower_is_better_measure(lower):
    qrels, a, b = lower
    last = invoke("-f", "table", "-m", "RBP_resid", "-m", "AP", "--norm", "ul2,iub,wlb", qrels, a).stdout.splitlines()[-1]
    assert ("I = IUB, the best ordering's value (the largest; the worst ordering's for RBP_resid(p=0.9), where lower "
            "is better)") in last and "WLB = the worst ordering's value" in last
    last = invoke("-f", "table", "-m", "AP", "--norm", "ul2,iub", qrels, a).stdout.splitlines()[-1]
    assert "I = IUB, the best ordering's value;" in last and "where lower is better" not in last


def test_compare_ranks_bolds_and_marks_a_lower_is_better_measure_by_its_direction(lower, tmp_path):
    """compare ranked RBP_resid's highest mean 1st ('1 = best'), bolded it in the paper table and
    marked the run with more unjudged weight as significantly better."""
    qrels, a, b = lower
    c = tmp_path / "C"  # RBP_resid(p=0.9): q1 y at rank 2: 0.81 + 0.09 = 0.90; q2 z at rank 1: 0.81 + 0.1 = 0.91
    c.write_text("q1 Q0 d1 1 2 C\nq1 Q0 y 2 1 C\nq2 Q0 z 1 2 C\nq2 Q0 d2 2 1 C\n")
    res = invoke("compare", "-f", "tsv", "--table", "systems", "-m", "RBP_resid", "-m", "P@1", "--norm", "none",
                 qrels, a, b, c)
    assert res.exit_code == 0, res.stderr
    assert res.stdout.splitlines()[1:] == ["A\tRBP_resid(p=0.9)\t0.0\t1", "B\tRBP_resid(p=0.9)\t0.45\t2",
                                           "C\tRBP_resid(p=0.9)\t0.905\t3",
                                           "A\tP@1\t1.0\t1", "B\tP@1\t1.0\t1", "C\tP@1\t0.5\t3"]
    # A - C = (-0.90, -0.91): paired t = -181 on 1 df, p = 0.0035, Holm over 3 pairs: significant for A
    res = invoke("compare", "-f", "markdown", "-m", "RBP_resid", "--norm", "none", qrels, a, b, c)
    assert "| a | A | **0.0000**<sup>c</sup> |" in res.stdout and "| c | C | 0.9050 |" in res.stdout, res.stdout
    res = invoke("compare", "-f", "markdown", "--baseline", c, "-m", "RBP_resid", "--norm", "none", qrels, a, b, c)
    assert "| A | **0.0000**† |" in res.stdout or "**0.0000**<sup>†</sup>" in res.stdout, res.stdout


# --------------------------------------------------------------------------- --pool qrels+N: bounded

@pytest.mark.parametrize("count", ["1000001", "99999999999", "1" + "0" * 21, "9" * 5000])
def test_a_qrels_pool_past_a_million_placeholders_is_refused(files, count):
    """qrels+10^8 took 1.6 GB (every E sums over the pool's ranks), qrels+10^11 ran out of memory and
    qrels+10^21 was an internal error (OverflowError)."""
    res = invoke("-m", "AP", "--pool", f"qrels+{count}", *files[:2])
    assert (res.exit_code, res.stdout) == (2, "") and res.stderr.count("\n") == 1, res.stderr
    assert "at most 1,000,000 unjudged documents (qrels+N" in res.stderr
    import ulnorm_eval

    with pytest.raises(ValueError, match="at most 1,000,000 unjudged documents"):
        ulnorm_eval.evaluate(files[0], files[1], ["AP"], pool=f"qrels+{count}")


def test_a_qrels_pool_of_a_million_placeholders_is_evaluated(files):
    # q1: 3 judged (2 relevant) + 10^6 unjudged; E[AP] is small but defined and the run's AP unchanged
    res = invoke("-q", "-f", "tsv", "-m", "AP", "--norm", "e", "--pool", "qrels+1000000", *files[:2])
    assert res.exit_code == 0, res.stderr
    row = res.stdout.splitlines()[1].split("\t")
    assert row[:3] == ["r.txt", "q1", str((1 + 2 / 3) / 2)] and 0 < float(row[3]) < 1e-4


@pytest.mark.parametrize("pool, reason", [
    ("nonexistent.run", "pool='nonexistent.run': expected 'run', 'qrels', 'union', 'qrels+N'"),
    ("/dev/null", "pool='/dev/null': expected 'run', 'qrels', 'union', 'qrels+N' (N unjudged placeholders beside the "
                  "judged documents) or the path of a candidate file"),
    ("qrels+1000001", "pool 'qrels+1000001': at most 1,000,000 unjudged documents")])
def test_a_pool_that_is_neither_a_kind_nor_a_file_says_which(files, pool, reason):
    res = invoke("-m", "AP", "--pool", pool, *files[:2])
    assert res.exit_code == 2 and res.stderr.count("\n") == 1 and reason in res.stderr, res.stderr


# --------------------------------------------------------------------------- the probes kept (representatives)

def _gen(seed, nq=3, ndocs=6, maxg=2, runlen=5, unj=0.3, tag="r"):
    """The probes' generator: random qrels and a run with ties and unjudged documents."""
    import random

    rng = random.Random(seed)
    qrels, run = [], []
    for q in range(1, nq + 1):
        docs = [f"d{q}_{i}" for i in range(ndocs)]
        for doc in rng.sample(docs, max(1, int(ndocs * (1 - unj)))):
            qrels.append(f"q{q} 0 {doc} {rng.randint(0, maxg)}")
        for rank, doc in enumerate(rng.sample(docs, min(runlen, ndocs))):
            score = rng.randint(0, 3) if rng.random() < 0.3 else round(rng.uniform(0, 10), 3)
            run.append(f"q{q} Q0 {doc} {rank + 1} {score} {tag}")
    return "\n".join(qrels) + "\n", "\n".join(run) + "\n"


def _rows(stdout):
    lines = stdout.strip().splitlines()
    head = lines[0].split("\t")
    return {(cells[0], cells[1]): dict(zip(head, cells)) for cells in (line.split("\t") for line in lines[1:])}


def _brute(gains, relevant, ideal, k):
    """E and the maximum of AP, P@k, nDCG@k over every ordering of the pool's gains."""
    import itertools
    import math

    import numpy as np

    def ap(order):
        hits, total = 0, 0.0
        for i, gain in enumerate(order):
            if gain >= 1:
                hits += 1
                total += hits / (i + 1)
        return total / relevant if relevant else 0.0

    def ndcg(order):
        dcg = sum(g / math.log2(i + 2) for i, g in enumerate(order[:k]) if g > 0)
        idcg = sum(g / math.log2(i + 2) for i, g in enumerate(sorted(ideal, reverse=True)[:k]) if g > 0)
        return dcg / idcg if idcg else 0.0

    orders = list(itertools.permutations(gains))
    values = {"AP": [ap(o) for o in orders], f"P@{k}": [sum(g >= 1 for g in o[:k]) / k for o in orders],
              f"nDCG@{k}": [ndcg(o) for o in orders]}
    return {m: (float(np.mean(v)), max(v)) for m, v in values.items()}


@pytest.mark.parametrize("seed, pool, depth, k", [(0, "qrels+0", None, 2), (1, "qrels+2", None, 3), (2, "qrels+3", None, 1),
                                                  (3, "FILE", 2, 2), (4, "FILE", 4, 3), (5, "FILE", 1, 1)])
def test_pool_bounds_equal_every_ordering_enumerated(tmp_path, seed, pool, depth, k):
    """--pool qrels+N and --pool FILE: E and IUB of AP, P@k and nDCG@k per query against the mean and
    the maximum over every ordering of the pool (qrels+0 stands for --pool qrels)."""
    qrels, run = _gen(seed)
    (tmp_path / "q").write_text(qrels)
    (tmp_path / "r").write_text(run)
    judged = {}
    for line in qrels.splitlines():
        qid, _, doc, grade = line.split()
        judged.setdefault(qid, {})[doc] = int(grade)
    if pool == "FILE":
        cand = _gen(seed + 100, runlen=6, tag="cand")[1]
        (tmp_path / "cand").write_text(cand)
        args, pools = ["--pool", str(tmp_path / "cand"), "--pool-depth", str(depth)], {}
        for qid in judged:
            ranked = sorted(((float(s), d) for q, _, d, _, s, _ in map(str.split, cand.splitlines()) if q == qid),
                            reverse=True)[:depth]  # score desc, docid desc: trec_eval's order
            pools[qid] = [judged[qid].get(doc, 0) for _, doc in ranked]
    else:
        extra = int(pool.partition("+")[2])
        args = ["--pool", pool if extra else "qrels"]
        pools = {qid: list(grades.values()) + [0] * extra for qid, grades in judged.items()}
    res = invoke("-q", "-f", "tsv", *args, "--norm", "e,iub", "-m", "AP", "-m", f"P@{k}", "-m", f"nDCG@{k}",
                 tmp_path / "q", tmp_path / "r")
    assert res.exit_code == 0, res.stderr
    checked = 0
    for (_, qid), row in _rows(res.stdout).items():
        if qid == "all" or not pools.get(qid):
            continue
        relevant = sum(grade >= 1 for grade in judged[qid].values())
        for measure, (mean, top) in _brute(pools[qid], relevant, list(judged[qid].values()), k).items():
            assert float(row[f"E({measure})"]) == pytest.approx(mean, abs=1e-12), (qid, measure)
            assert float(row[f"IUB({measure})"]) == pytest.approx(top, abs=1e-12), (qid, measure)
            checked += 1
    assert checked >= 3


def _per_query(path_q, path_r, measure):
    res = invoke("-q", "-f", "tsv", "--norm", "none", "-m", measure, path_q, path_r)
    return {qid: float(row[measure]) for (_, qid), row in _rows(res.stdout).items() if qid != "all"}


@pytest.mark.parametrize("seed, test", [(0, "wilcoxon"), (1, "wilcoxon"), *((seed, "tukey") for seed in range(2, 10))])
def test_compare_wilcoxon_and_tukey_p_values_against_scipy_and_enumeration(tmp_path, seed, test):
    """Wilcoxon's p equals scipy.stats.wilcoxon's; the randomised Tukey HSD's, with few enough topics to
    enumerate every labelling, the share of labellings whose largest difference of means reaches the
    pair's (Carterette 2012)."""
    import itertools

    import numpy as np
    from scipy import stats

    nq = 8 if test == "wilcoxon" else 4
    qrels = _gen(seed, nq=nq, ndocs=8)[0]
    (tmp_path / "q").write_text(qrels)
    runs = []
    for j in range(3):
        (tmp_path / f"s{j}").write_text(_gen(seed * 10 + j + 1, nq=nq, ndocs=8, runlen=4 + j, tag=f"s{j}")[1])
        runs.append(tmp_path / f"s{j}")
    res = invoke("compare", "-f", "tsv", "--table", "pairs", "--test", test, "--correction", "none", "-m", "AP",
                 "--norm", "none", tmp_path / "q", *runs)
    assert res.exit_code == 0, res.stderr
    values = {path.name: _per_query(tmp_path / "q", path, "AP") for path in runs}
    topics = sorted(set().union(*values.values()))
    arrays = {name: np.array([v.get(t, 0.0) for t in topics]) for name, v in values.items()}
    if test == "tukey":
        table = np.array(list(arrays.values())).T
        labellings = list(itertools.permutations(range(3)))
        largest = []
        for choice in itertools.product(labellings, repeat=len(topics) - 1):
            means = np.vstack([table[0]] + [table[t + 1][list(c)] for t, c in enumerate(choice)]).mean(axis=0)
            largest.append(means.max() - means.min())
        largest = np.array(largest)
    lines = res.stdout.strip().splitlines()
    head = lines[0].split("\t")
    for line in lines[1:]:
        row = dict(zip(head, line.split("\t")))
        a, b = arrays[row["run_a"]], arrays[row["run_b"]]
        if test == "wilcoxon":
            want = stats.wilcoxon(a, b).pvalue if np.any(a != b) else float("nan")
        else:
            want = float(np.mean(largest >= abs(a.mean() - b.mean()) - 1e-12))
        assert float(row["p"]) == pytest.approx(want, rel=1e-9, nan_ok=True), row


def test_repro_rmse_effect_ratio_and_delta_ri_by_hand(tmp_path):
    """Breuer et al. 2020 eq. 2, 4, 5 from the per-topic values (repro_eval's formulas)."""
    import math

    import numpy as np

    qrels = _gen(7, nq=5, ndocs=8)[0]
    (tmp_path / "q").write_text(qrels)
    for name, seed in (("o", 11), ("p", 12), ("bo", 13), ("bp", 14)):
        (tmp_path / name).write_text(_gen(seed, nq=5, ndocs=8, runlen=6, tag=name)[1])
    res = invoke("repro", "-f", "tsv", "-m", "AP", "-m", "P@5", "--baseline-pair", tmp_path / "bo", tmp_path / "bp",
                 tmp_path / "q", tmp_path / "o", tmp_path / "p")
    assert res.exit_code == 0, res.stderr
    table = res.stdout.split("\n\n")[0].strip().splitlines()
    rows = {cells[0]: dict(zip(table[0].split("\t"), cells)) for cells in (ln.split("\t") for ln in table[1:])}
    for measure in ("AP", "P@5"):
        o, p, bo, bp = (_per_query(tmp_path / "q", tmp_path / name, measure) for name in ("o", "p", "bo", "bp"))
        topics = sorted(set(o) | set(p))
        o, p, bo, bp = (np.array([v.get(t, 0.0) for t in topics]) for v in (o, p, bo, bp))
        assert float(rows[measure]["rmse"]) == pytest.approx(math.sqrt(np.mean((o - p) ** 2)), rel=1e-12)
        assert float(rows[measure]["er"]) == pytest.approx(np.mean(p - bp) / np.mean(o - bo), rel=1e-12)
        delta_ri = (o.mean() - bo.mean()) / bo.mean() - (p.mean() - bp.mean()) / bp.mean()
        assert float(rows[measure]["delta_ri"]) == pytest.approx(delta_ri, rel=1e-12)


@pytest.mark.parametrize("seed, world_flags", [(0, ()), (1, ("-l", "0")), (2, ("-M", "3")), (3, ("-J",))])
def test_hole_worlds_open_contains_the_others(tmp_path, seed, world_flags):
    """Per query and run: LB(open) <= LB(open=est), LB(open=2); LB <= UB in each world; UB(closed) <=
    UB(open); the value within closed's [LB, UB] (but at -l 0, where a judged hole is relevant
    whatever its grade).  Closed and the ceilings do not nest: closed lets every hole be relevant and
    nothing else, open=N at most N unjudged documents, holes or not.  Two runs: each one's holes are
    the other's too."""
    qrels, run = _gen(seed, nq=3, ndocs=8, unj=0.5)
    (tmp_path / "q").write_text(qrels)
    (tmp_path / "a").write_text(run)
    (tmp_path / "b").write_text(_gen(seed + 50, nq=3, ndocs=8, unj=0.5, tag="b")[1])
    rows = {}
    for world in ("closed", "open=est", "open", "open=2"):
        res = invoke("-q", "-f", "tsv", "--holes", world, "--norm", "lb,ub", *world_flags, "-m", "AP",
                     tmp_path / "q", tmp_path / "a", tmp_path / "b")
        assert res.exit_code == 0, res.stderr
        rows[world] = _rows(res.stdout)
    for key, row in rows["closed"].items():
        lb = {w: float(rows[w][key]["LB(AP)"]) for w in rows}
        ub = {w: float(rows[w][key]["UB(AP)"]) for w in rows}
        assert lb["open"] <= min(lb["open=est"], lb["open=2"]) + 1e-12, key
        assert all(lb[w] <= ub[w] + 1e-12 <= ub["open"] + 2e-12 for w in rows), key
        assert world_flags[:2] == ("-l", "0") or lb["closed"] - 1e-12 <= float(row["AP"]) <= ub["closed"] + 1e-12, key


@pytest.mark.parametrize("mangle, reason", [(lambda ln: ln.replace(ln.split()[4], "abc"), "score"),
                                            (lambda ln: " ".join(ln.split()[:3]), "field"),
                                            (lambda ln: ln.replace(ln.split()[4], "nan"), "nan")])
@pytest.mark.parametrize("command", [(), ("compare",), ("queries",), ("nrg", "--leave-one-out"), ("repro",)])
def test_a_bad_run_line_is_one_line_naming_file_and_line_in_every_command(tmp_path, mangle, reason, command):
    qrels, run = _gen(3)
    lines = run.splitlines()
    lines[4] = mangle(lines[4])
    (tmp_path / "q").write_text(qrels)
    (tmp_path / "good").write_text(run)
    (tmp_path / "bad").write_text("\n".join(lines) + "\n")
    res = invoke(*command, tmp_path / "q", tmp_path / "good", tmp_path / "bad")
    assert (res.exit_code, res.stdout) == (2, ""), (res.exit_code, res.stdout, res.stderr)
    assert res.stderr.count("\n") == 1 and f"{tmp_path / 'bad'}:5" in res.stderr, res.stderr
    assert reason in res.stderr.lower(), res.stderr


def test_repro_effect_ratio_of_no_original_improvement_is_infinite_as_documented(tmp_path):
    """ORIGINAL equal to B_ORIG: the improvement to reproduce is 0, so ER divides by 0 (repro_eval's
    division): +inf for a reproduced gain, nan for none (docs/comparing.md says so)."""
    (tmp_path / "q").write_text(QRELS)
    (tmp_path / "o").write_text(RUN)
    (tmp_path / "worse").write_text(RUN.replace("q1 Q0 d1 1 3 r", "q1 Q0 d1 1 0 r"))  # q1: d1 last, AP 0.8333 -> 0.5833
    for reproduced, want in (("o", "inf"), ("worse", "nan")):  # REPRODUCED - B_REPR: o - worse > 0; 0
        res = invoke("repro", "-f", "tsv", "-m", "AP", "--baseline-pair", tmp_path / "o", tmp_path / "worse",
                     tmp_path / "q", tmp_path / "o", tmp_path / reproduced)
        row = dict(zip(*(line.split("\t") for line in res.stdout.split("\n\n")[0].splitlines()[:2])))
        assert res.exit_code == 0 and row["er"] == want, (row, res.stderr)


def _other_checkout(tmp_path, older=False):
    """A copy of this package with one line added to a module: another checkout (``older``: one whose
    tasks do not check their worker's code, as before that check)."""
    import shutil

    copy = tmp_path / "other"
    shutil.copytree(ROOT / "ulnorm_eval", copy / "ulnorm_eval", ignore=shutil.ignore_patterns("__pycache__"))
    with open(copy / "ulnorm_eval" / "pipeline" / "blocks.py", "a") as fh:
        fh.write("\n# another checkout\n")
    parallel = copy / "ulnorm_eval" / "pipeline" / "parallel.py"
    if older:
        parallel.write_text(parallel.read_text().replace("args, identity=None):", "args):"))
    return copy


def test_workers_running_another_ulnorm_eval_are_refused(tmp_path, files):
    """A Dask worker installed from another checkout (here: this package with one line changed)
    computed the values with its own code: the command printed other numbers than -j 1, exit 0 (found
    when main's default 'all' row changed under a running cluster).  Now one line, exit 2."""
    import socket

    copy = _other_checkout(tmp_path)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    address = f"tcp://127.0.0.1:{port}"
    env = {**os.environ, "PYTHONPATH": str(copy)}
    processes = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                                   "--port", str(port), "--no-dashboard"], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, env=env, cwd=copy)]
    try:
        processes.append(subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads",
                                           "1", "--no-nanny", "--no-dashboard"], stdout=subprocess.DEVNULL,
                                          stderr=subprocess.DEVNULL, env=env, cwd=copy))
        out = subprocess.run([sys.executable, "-m", "ulnorm_eval", "--scheduler", address, "--scheduler-timeout", "60",
                              "-m", "AP", *files], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                             env={**os.environ, "PYTHONPATH": str(ROOT)})
    finally:
        for process in processes:
            process.kill()
            process.wait()
    one_line(out, f"the Dask workers at {address} run another ulnorm-eval (sha256 ", "than this command (sha256 ",
             "start them from the same installation")


@pytest.mark.parametrize("seed, args", [(0, ()), (1, ("--norm", "ul2,em,mm,e", "--undefined", "skip", "--pool", "qrels")),
                                        (2, ("--norm", "eb,uew", "--undefined", "zero", "--pool", "run")),
                                        (4, ("--norm", "em", "--undefined", "skip", "--pool", "run"))])
def test_every_all_row_is_the_mean_of_the_per_query_values_shown(tmp_path, seed, args):
    """Issue 47's one aggregate, probed: each 'all' cell is the mean of the run's per-query cells of its
    column (undefined ones, NaN, left out); with nothing undefined compare's systems mean is the same."""
    import math

    import numpy as np

    qrels = _gen(seed, nq=5, ndocs=10)[0]
    (tmp_path / "q").write_text(qrels)
    (tmp_path / "a").write_text(_gen(seed + 20, nq=5, ndocs=10, runlen=6, tag="a")[1])
    (tmp_path / "b").write_text(_gen(seed + 40, nq=4, ndocs=10, runlen=3, tag="b")[1])
    runs = (tmp_path / "a", tmp_path / "b")
    res = invoke("-q", "-f", "tsv", "-m", "AP", "-m", "nDCG@5", *args, tmp_path / "q", *runs)
    assert res.exit_code == 0, res.stderr
    rows = _rows(res.stdout)
    checked = 0
    for (run, qid), row in rows.items():
        if qid != "all":
            continue
        for column, cell in row.items():
            if column in ("run", "query"):
                continue
            per = [float(r[column]) for (name, q), r in rows.items() if name == run and q != "all"]
            per = [value for value in per if not math.isnan(value)]
            assert float(cell) == pytest.approx(float(np.mean(per)), rel=1e-12, abs=1e-15), (run, column)
            checked += 1
    assert checked >= 8
    # compare pairs the queries: one undefined for some run (--undefined skip under a pool of each run's
    # own) is left out of every run's mean there (docs/comparing.md), else its mean is the 'all' row
    res = invoke("compare", "-f", "tsv", "--table", "systems", "-m", "AP", "-m", "nDCG@5", *args, tmp_path / "q", *runs)
    assert res.exit_code == 0 and ("left out of the comparison" in res.stderr) == (seed == 4), res.stderr
    qids = {q for _, q in rows if q != "all"}
    for line in res.stdout.strip().splitlines()[1:]:
        run, metric, mean, _ = line.split("\t")
        common = [q for q in qids if not any(math.isnan(float(rows[(r.name, q)][metric])) for r in runs)]
        assert float(mean) == pytest.approx(np.mean([float(rows[(run, q)][metric]) for q in common]), rel=1e-12,
                                            abs=1e-15), (run, metric)
        if len(common) == len(qids):
            assert float(mean) == pytest.approx(float(rows[(run, "all")][metric]), rel=1e-12, abs=1e-15), (run, metric)
        left = len(qids) - len(common)  # the note counts them, in the right number
        said = f"{metric}: {left} {'query' if left == 1 else 'queries'} undefined for some run left out"
        assert (said in res.stderr) == (left > 0), (said, res.stderr)


@pytest.mark.parametrize("measure, lower", [("AP", False), ("nDCG@5", False), ("RBP_resid(p=0.9)", True), ("Unjudged@5", True)])
def test_the_floor_decides_on_the_per_query_mean_in_the_measure_s_direction(tmp_path, measure, lower):
    """The gate probes kept: a --fail-below threshold at the run's mean of per-query values passes; a hair
    above it fails a higher-is-better measure and passes a lower-is-better one; a hair below the reverse."""
    import numpy as np

    qrels, run = _gen(9, nq=5, ndocs=10, unj=0.5)
    (tmp_path / "q").write_text(qrels)
    (tmp_path / "r").write_text(run)
    mean = float(np.mean(list(_per_query(tmp_path / "q", tmp_path / "r", measure).values())))
    assert 0 < mean < 1
    for threshold, fails in ((mean, False), (mean + 1e-6, not lower), (mean - 1e-6, lower)):
        res = invoke("-m", measure, "--norm", "none", "--fail-below", f"{measure}={threshold!r}", tmp_path / "q",
                     tmp_path / "r")
        assert res.exit_code == (1 if fails else 0), (threshold, res.stderr)


@pytest.mark.parametrize("older", [False, True])
def test_a_worker_running_another_ulnorm_eval_that_joins_later_is_refused(tmp_path, files, older):
    """The check at connection saw only the workers of that moment: a worker from another checkout that
    joined afterwards computed the values with its own code, exit 0.  Each task checks its worker now;
    an older worker, whose tasks take no identity to check, fails them, and is named."""
    from dask.distributed import LocalCluster

    import ulnorm_eval as ue
    from ulnorm_eval.pipeline.orchestrator import evaluate_runs
    from ulnorm_eval.pipeline.parallel import DaskPool, ParallelError

    qrels, env = ue.load_qrels(files[0]), {**os.environ, "PYTHONPATH": str(_other_checkout(tmp_path, older))}
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol="tcp", host="127.0.0.1",
                      dashboard_address=None, silence_logs=50) as cluster, DaskPool(qrels, cluster.scheduler_address, timeout=60) as pool:
        late = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", cluster.scheduler_address,
                                 "--nthreads", "1", "--no-nanny", "--no-dashboard"], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, env=env, cwd=tmp_path)
        try:
            pool.client.wait_for_workers(2, timeout=60)
            cluster.scale(0)  # the checked worker leaves: the late one runs every task
            while len(pool.client.nthreads()) > 1:
                time.sleep(0.05)
            named = "one without this check" if older else "sha256 "
            with pytest.raises(ParallelError, match=rf"run another ulnorm-eval \({named}"):
                list(evaluate_runs(qrels, files[1:], [ue.parse_measure("AP")], ue.Options(), pool))
        finally:
            late.kill()
            late.wait()


def test_one_query_left_out_of_the_comparison_is_said_in_the_singular(tmp_path):
    """Run b ranks one document for q2, so EM(AP) is undefined there for b alone (every ordering of a
    one-document pool scores the same): compare leaves q2 out and says "1 query", not "1 queries"."""
    (tmp_path / "q").write_text("q1 0 d1 1\nq1 0 d2 0\nq2 0 d1 1\nq2 0 d2 0\nq3 0 d1 1\nq3 0 d3 0\n")
    (tmp_path / "a").write_text("q1 Q0 d1 1 2 a\nq1 Q0 d2 2 1 a\nq2 Q0 d2 1 2 a\nq2 Q0 d1 2 1 a\n"
                                "q3 Q0 d1 1 2 a\nq3 Q0 d3 2 1 a\n")
    (tmp_path / "b").write_text("q1 Q0 d2 1 2 b\nq1 Q0 d1 2 1 b\nq2 Q0 d1 1 2 b\nq3 Q0 d3 1 2 b\nq3 Q0 d1 2 1 b\n")
    res = invoke("compare", "-f", "tsv", "--table", "systems", "-m", "AP", "--norm", "em", "--undefined", "skip",
                 "--pool", "run", tmp_path / "q", tmp_path / "a", tmp_path / "b")
    assert res.exit_code == 0, res.stderr
    assert "EM(AP): 1 query undefined for some run left out of the comparison" in res.stderr
    # EM on q1 and q3: a ranks the relevant document first on both (1.0), b last on both (-1.0)
    assert "a\tEM(AP)\t1.0\t1" in res.stdout and "b\tEM(AP)\t-1.0\t2" in res.stdout
