"""The fifth hostile pass (issue 52's "done when"): generated cases over what the last wave changed, each
checked against values worked out here: the one aggregate (E and EM over qrels+1000 from their closed
forms, 'all' = the mean of the per-query values, the "EM vs random" interval, omission, the gate's
"n of N queries" and its paired t), open=est's ceilings, the orchestrator's executors (-j, query
blocks, --stream, Dask), notes said once, repro and Tukey's HSD.  benchmarks/hostile_probes.py runs
the same checks over more seeds, with --trec against trec_eval 10 and malformed inputs."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from conftest import invoke

from test_hostile_probes import _gen, _rows

DEFAULTS = ("nDCG@10", "AP", "RBP(p=0.8)")


def ranked(run: str, qid: str) -> list:
    """trec_eval's order of a query's documents: score descending, then docid descending."""
    lines = [line.split() for line in run.splitlines() if line.split()[0] == qid]
    return [doc for _, doc in sorted(((float(s), d) for _, _, d, _, s, _ in lines), reverse=True)]


def judgements(qrels: str) -> dict:
    judged = {}
    for line in qrels.splitlines():
        qid, _, doc, grade = line.split()
        judged.setdefault(qid, {})[doc] = int(grade)
    return judged


def by_hand(judged: dict, order: list, top: int, extra: int = 1000) -> dict:
    """A, E and I of nDCG@10, AP and RBP(p=0.8) for one query under --pool qrels+EXTRA (a shuffle of the
    judged documents among ``extra`` unjudged ones; --pool qrels: none): E[AP] = (1/n)(H_n + (R-1)/(n-1)
    (n - H_n)); E[DCG@k] = mean gain x sum_{i<=min(k,n)} 1/log2(i+1); E[RBP] = mean gain (1 - p^n), gains
    over the qrels' top grade."""
    n, grades = len(judged) + extra, [judged.get(doc, 0) for doc in order]
    R, ideal = sum(g >= 1 for g in judged.values()), sorted(judged.values(), reverse=True)
    harmonic = sum(1 / i for i in range(1, n + 1))
    hits = np.cumsum([g >= 1 for g in grades])
    ap = sum(h / (i + 1) for i, (h, g) in enumerate(zip(hits, grades)) if g >= 1) / R if R else 0.0
    discount = [1 / math.log2(i + 2) for i in range(10)]
    idcg = sum(g * d for g, d in zip(ideal, discount) if g > 0)
    dcg = sum(g * d for g, d in zip(grades, discount) if g > 0)
    scale = max(top, 1)
    rbp = lambda gains: 0.2 * sum(0.8 ** i * g / scale for i, g in enumerate(gains) if g > 0)  # noqa: E731
    mean_gain = sum(max(g, 0) for g in judged.values()) / n  # a negative grade is no gain (trec_eval's ndcg)
    e_ap = (harmonic + (R - 1) / (n - 1) * (n - harmonic)) / n if n > 1 else float(R)
    return {"AP": (ap, e_ap if R else 0.0, 1.0 if R else 0.0),
            "nDCG@10": (dcg / idcg if idcg else 0.0, mean_gain * sum(discount[:n]) / idcg if idcg else 0.0,
                        1.0 if idcg else 0.0),
            "RBP(p=0.8)": (rbp(grades), mean_gain / scale * (1 - 0.8 ** n), rbp(ideal))}


def _case(seed: int, tmp_path, runs: int = 1):
    """A generated qrels and ``runs`` runs: one query of the qrels missing from each run, one of the
    runs not in the qrels; every third seed's qrels with some grades -1 and -2."""
    qrels = _gen(seed, nq=4, ndocs=10, maxg=3)[0]
    if seed % 3 == 2:
        qrels = "".join(line[:-1] + ("-1", "-2")[i % 2] + "\n" if i % 3 == 0 else line + "\n"
                        for i, line in enumerate(qrels.splitlines()))
    (tmp_path / "q").write_text(qrels)
    paths = []
    for j in range(runs):
        run = _gen(seed * 7 + j, nq=5, ndocs=10, runlen=4 + 2 * j, tag=f"r{j}")[1]
        run = "".join(line + "\n" for line in run.splitlines() if not line.startswith(f"q{1 + (seed + j) % 4} "))
        (tmp_path / f"r{j}").write_text(run)
        paths.append(tmp_path / f"r{j}")
    return tmp_path / "q", paths


def _tsv(*args):
    res = invoke("-q", "-f", "tsv", *args)
    assert res.exit_code == 0, res.stderr
    return _rows(res.stdout), res


@pytest.mark.parametrize("seed", range(12))
def test_default_columns_and_all_rows_equal_their_closed_forms(tmp_path, seed):
    """Every cell of the default output (A, E, EM of the three default measures), per query and in the
    'all' row (the mean over the qrels' queries; EM undefined, 0), against the formulas above, under
    the default pool, qrels+3 (runs longer than the pool) and qrels."""
    q, (r,) = _case(seed, tmp_path)
    judged, run = judgements(q.read_text()), r.read_text()
    top = max(g for docs in judged.values() for g in docs.values())
    extra = (1000, 3, 0)[seed % 3]
    rows, _ = _tsv("--pool", f"qrels+{extra}" if extra else "qrels", q, r)
    assert {qid for _, qid in rows} == set(judged) | {"all"}
    want = {}
    for qid, docs in judged.items():
        for measure, (a, e, i) in by_hand(docs, ranked(run, qid), top, extra).items():
            em = 0.0 if i == e else (a - e) / (i - e)
            for column, value in ((measure, a), (f"E({measure})", e), (f"EM({measure})", em)):
                assert float(rows[("r0", qid)][column]) == pytest.approx(value, rel=1e-9, abs=1e-15), (qid, column)
                want.setdefault(column, []).append(value)
    for column, values in want.items():
        assert float(rows[("r0", "all")][column]) == pytest.approx(np.mean(values), rel=1e-9, abs=1e-15), column


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("undefined", ["zero", "skip"])
def test_leaving_out_a_query_or_a_ranking_s_tail_never_raises_the_all_row(tmp_path, seed, undefined):
    q, (r,) = _case(seed, tmp_path)
    lines = r.read_text().splitlines(keepends=True)
    before, _ = _tsv("--undefined", undefined, q, r)
    qids = sorted({line.split()[0] for line in lines})
    cut = tmp_path / "cut"
    for drop in qids + ["tail"]:
        if drop == "tail":  # each query's last document in trec_eval's order gone
            last = {(qid, ranked(r.read_text(), qid)[-1]) for qid in qids}
            kept = [line for line in lines if tuple(line.split()[0:3:2]) not in last]
        else:
            kept = [line for line in lines if line.split()[0] != drop]
        cut.write_text("".join(kept))
        after, _ = _tsv("--undefined", undefined, "--allow-disjoint", q, cut)
        for column, value in before[("r0", "all")].items():
            if column not in ("run", "query"):
                assert float(after[("cut", "all")][column]) <= float(value) + 1e-15, (drop, column)


@pytest.mark.parametrize("seed", range(5))
def test_the_em_interval_is_the_same_random_orderings_for_every_run(tmp_path, seed):
    """'EM vs random' = the 'all' row minus a random ordering's mean, over the same random orderings of
    each query's pool for every run: 'all' - low and high - 'all' are the same for every run."""
    q, paths = _case(seed, tmp_path, runs=3)
    res = invoke("-f", "json", q, *paths)
    assert res.exit_code == 0, res.stderr
    spans = []
    for run in json.loads(res.stdout)["runs"]:
        spans.append({c: (run["summary"][c] - lo, hi - run["summary"][c]) for c, (lo, hi) in run["interval"].items()})
        assert set(spans[-1]) == {f"EM({m})" for m in DEFAULTS}
        assert all(lo <= hi for lo, hi in run["interval"].values())
    for span in spans[1:]:
        for column, (below, above) in span.items():
            assert below == pytest.approx(spans[0][column][0], abs=1e-12)
            assert above == pytest.approx(spans[0][column][1], abs=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_the_gate_reads_the_all_row_over_n_of_n_queries_and_its_paired_t(tmp_path, seed):
    """--fail-below at the printed mean passes, a hair above it fails; "over n of N queries" counts the
    defined values under --undefined skip; --baseline's p is scipy's one-sided paired t."""
    from scipy import stats

    q, (a, b) = _case(seed, tmp_path, runs=2)
    for undefined in ("zero", "skip"):
        rows, _ = _tsv("--undefined", undefined, "-m", "AP", "--norm", "em", q, a)
        mean = float(rows[("r0", "all")]["EM(AP)"])
        defined = sum(1 for (_, qid), row in rows.items() if qid != "all" and not math.isnan(float(row["EM(AP)"])))
        for threshold, code in ((mean, 0), (mean + 1e-9, 1)):
            res = invoke("--undefined", undefined, "-m", "AP", "--norm", "em", "--fail-below", f"EM(AP)={threshold!r}",
                         q, a)
            assert res.exit_code == code, res.stderr
            assert f"over {defined} of 4 queries" in res.stderr
    per = {name: _rows(invoke("-q", "-f", "tsv", "-m", "AP", "--norm", "none", q, path).stdout)
           for name, path in (("r0", a), ("r1", b))}
    diff = [float(per["r0"][("r0", f"q{i}")]["AP"]) - float(per["r1"][("r1", f"q{i}")]["AP"]) for i in range(1, 5)]
    res = invoke("-m", "AP", "--norm", "none", "--baseline", b, "--max-drop", "0.5", q, a)
    p = stats.ttest_1samp(diff, 0, alternative="less").pvalue if np.std(diff) > 0 else None
    if p is not None:
        assert f"p = {p:.3g}" in res.stderr.replace("p = 1.00", "p = 1"), (p, res.stderr)
    assert "n = 4 of 4 queries" in res.stderr


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("flags", [(), ("-l", "0"), ("-l", "2"), ("-M", "3"), ("-J",)])
def test_the_estimated_ceiling_bounds_as_open_n_with_its_n(tmp_path, seed, flags):
    """open=est's LB and UB of a query equal open=N's for N = that query's ceiling (open=N is checked
    against brute force in tests/core), under -l, -M and -J: the ceilings as the library estimates them."""
    import ulnorm_eval as ue
    from ulnorm_eval.pipeline.evaluate import with_runs_holes

    q, paths = _case(seed, tmp_path, runs=2)
    qrels = ue.load_qrels(str(q))
    metrics = [ue.parse_measure(f"{v}(AP)") for v in ("LB", "UB")]
    level = float(flags[1]) if flags[:1] == ("-l",) else 1.0
    depth = int(flags[1]) if flags[:1] == ("-M",) else None
    options = ue.Options(holes="open=est", rel_level=level, depth=depth, judged_only=flags == ("-J",))
    ceiling = dict(with_runs_holes(options, qrels, [str(p) for p in paths], metrics).holes_ceiling)
    est, _ = _tsv(*flags, "--holes", "open=est", "--norm", "lb,ub", "-m", "AP", "-m", "nDCG@5", q, *paths)
    checked = 0
    for cap in {c for c in ceiling.values() if math.isfinite(c)}:
        fixed, _ = _tsv(*flags, "--holes", f"open={int(cap)}", "--norm", "lb,ub", "-m", "AP", "-m", "nDCG@5", q, *paths)
        for (run, qid), row in est.items():
            if qid in ceiling and ceiling[qid] == cap:
                assert row == fixed[(run, qid)], (qid, cap)
                checked += 1
    assert checked or not any(math.isfinite(c) for c in ceiling.values())


def _values(result) -> dict:
    """A RunResult as plain numbers: its per-query values, 'all' row and intervals, NaN as None."""
    clean = lambda x: None if isinstance(x, float) and math.isnan(x) else x  # noqa: E731
    return {"qids": list(result.qids), "all": {str(m): clean(v) for m, v in result.mean.items()},
            "values": {str(m): [clean(float(x)) for x in v] for m, v in result.values.items()},
            "interval": {str(m): v for m, v in (result.interval or {}).items()}}


@pytest.mark.parametrize("seed", range(6))
def test_query_blocks_on_two_workers_equal_one_run_read_whole(tmp_path, seed):
    """A run cut into query blocks of 40-240 bytes, scored by two local workers and merged, gives the
    values, 'all' rows and intervals of the run read whole in this process (Monte Carlo DB included);
    a run whose queries' lines are not together too (its blocks given up, the run read whole)."""
    import ulnorm_eval as ue
    from ulnorm_eval.pipeline.orchestrator import evaluate_runs
    from ulnorm_eval.pipeline.parallel import LocalPool

    q, paths = _case(seed, tmp_path, runs=2)
    for path in paths[: seed % 2]:  # its queries' lines not together: read whole after all
        lines = path.read_text().splitlines(keepends=True)
        path.write_text("".join(lines[1::2] + lines[::2]))
    qrels = ue.load_qrels(str(q))
    metrics = [ue.parse_measure(n) for n in ("AP", "EM(AP)", "nDCG@5", "EM(nDCG@5)", "DB(P@3)", "R@5")]
    whole = [_values(r) for r in evaluate_runs(qrels, [str(p) for p in paths], metrics, ue.Options(), stream=False)]
    with LocalPool(qrels, 2) as pool:
        blocks = [_values(r) for r in evaluate_runs(qrels, [str(p) for p in paths], metrics, ue.Options(), pool,
                                                    block_bytes=40 + 40 * seed)]
    assert blocks == whole


@pytest.mark.parametrize("command", [["--ci", "-f", "json"], ["--holes", "--holes-list", "3"], ["compare", "--table", "systems"],
                                     ["queries"], ["nrg", "--leave-one-out"]])
@pytest.mark.parametrize("seed", range(2))
def test_every_executor_prints_the_same_bytes_and_each_note_once(tmp_path, seed, command):
    """-j 1, -j 2, --stream and --no-stream: the same stdout and stderr (eval's json: every value, the
    intervals and --ci's included); no stderr line twice."""
    q, paths = _case(seed, tmp_path, runs=3)
    outs = set()
    for flags in (["-j", "1"], ["-j", "2"], ["--stream"], ["--no-stream"]):
        if command[:1] in (["compare"], ["queries"], ["nrg"]) and flags[0].endswith("stream"):
            continue
        res = invoke(*command[:1], *flags, "-f", "tsv", *command[1:], "-m", "nDCG@5", "-m", "P@5", q, *paths)
        assert res.exit_code == 0, res.stderr
        lines = res.stderr.splitlines()
        assert len(lines) == len(set(lines)) and lines, res.stderr
        outs.add((res.stdout, res.stderr))
    assert len(outs) == 1


@pytest.fixture(scope="module")
def cluster():
    from dask.distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None,
                      silence_logs=50) as running:
        yield running.scheduler_address


@pytest.mark.parametrize("command", [[], ["compare", "--table", "pairs"], ["queries"]])
def test_a_dask_cluster_prints_what_one_process_prints(tmp_path, cluster, command):
    q, paths = _case(3, tmp_path, runs=3)
    args = [*command, "-f", "tsv", "-m", "AP", "-m", "nDCG@5", q, *paths]
    here, there = invoke(*command, "-j", "1", *args[len(command):]), invoke(*command, "--scheduler", cluster,
                                                                           *args[len(command):])
    assert (there.exit_code, there.stdout, there.stderr) == (0, here.stdout, here.stderr), there.stderr


def test_query_blocks_on_a_dask_cluster_equal_one_run_read_whole(tmp_path, cluster):
    """The blocks' bytes shipped to the cluster's workers (orchestrator._remote), scored and merged."""
    import ulnorm_eval as ue
    from ulnorm_eval.pipeline.orchestrator import evaluate_runs
    from ulnorm_eval.pipeline.parallel import DaskPool

    q, paths = _case(5, tmp_path, runs=2)
    qrels, runs = ue.load_qrels(str(q)), [str(p) for p in paths]
    metrics = [ue.parse_measure(n) for n in ("AP", "EM(AP)", "nDCG@5", "DB(P@3)")]
    whole = [_values(r) for r in evaluate_runs(qrels, runs, metrics, ue.Options(), stream=False)]
    with DaskPool(qrels, cluster, timeout=60) as pool:
        assert [_values(r) for r in evaluate_runs(qrels, runs, metrics, ue.Options(), pool, block_bytes=50)] == whole


@pytest.mark.parametrize("seed", range(3))
def test_repro_of_a_run_by_itself_and_by_its_reverse(tmp_path, seed):
    """A run reproduced by itself: RMSE 0, KTU 1, RBO of a list with itself (below 1: not extrapolated
    past its end, docs/comparing.md) over the topics both rank; by its ranking reversed, KTU as Breuer
    et al. 2020 define it (not -1: the lists' docid orders are compared rank by rank)."""
    from scipy import stats
    q, (r,) = _case(seed, tmp_path)
    lines = [line.split() for line in r.read_text().splitlines()]
    (tmp_path / "rev").write_text("".join(f"{t} Q0 {d} {i} {i} rev\n" for t in {x[0] for x in lines}
                                          for i, d in enumerate(ranked(r.read_text(), t))))
    (tmp_path / "same").write_text(r.read_text())
    topics = {x[0] for x in lines} & {line.split()[0] for line in q.read_text().splitlines()}
    def ktu(first, second):  # Kendall's tau-b of the lists written as positions in their sorted union
        union = sorted(set(first) | set(second))
        return stats.kendalltau([union.index(d) for d in first], [union.index(d) for d in second]).statistic

    reverse = np.nanmean([ktu(ranked(r.read_text(), t), ranked(r.read_text(), t)[::-1]) for t in topics])
    for other, ktu in (("same", 1.0), ("rev", reverse)):
        res = invoke("repro", "-f", "tsv", "-m", "AP", q, r, tmp_path / other)
        assert res.exit_code == 0, res.stderr
        table, pairs = (part.strip().splitlines() for part in res.stdout.split("\n\n")[:2])
        row = dict(zip(table[0].split("\t"), table[1].split("\t")))
        pair = dict(zip(pairs[0].split("\t"), pairs[1].split("\t")))
        assert float(pair["ktu"]) == pytest.approx(ktu) and int(pair["topics"]) == len(topics)
        if other == "same":  # RBO's sum stops at depth 1,000: |O_d n R_d| / d = min(d, L) / d at p = 0.95
            weights = 0.95 ** np.arange(1000)
            rbo = [np.sum(weights * np.minimum(np.arange(1, 1001), sum(x[0] == t for x in lines)) / np.arange(1, 1001))
                   / np.sum(weights) for t in topics]
            assert (float(row["rmse"]), float(pair["rbo"])) == (0.0, pytest.approx(np.mean(rbo), rel=1e-12)), pair


@pytest.mark.parametrize("seed", range(4))
def test_holes_list_weighs_each_hole_by_its_ranks(tmp_path, seed):
    """--holes-list names every unjudged document the runs rank with its weight: the sum over runs and
    measures of 1/rank within the measure's cutoff (AP: none; nDCG@3: 3), its run count and best rank."""
    import re

    q, paths = _case(seed, tmp_path, runs=2)
    judged = judgements(q.read_text())
    want = {}
    for path in paths:
        run = path.read_text()
        for qid in judged:
            for rank, doc in enumerate(ranked(run, qid), 1):
                if doc not in judged[qid]:
                    weight, runs, best = want.get((qid, doc), (0.0, 0, rank))
                    want[(qid, doc)] = (weight + 1 / rank + (1 / rank if rank <= 3 else 0), runs + 1, min(best, rank))
    res = invoke("--holes", "--holes-list", "1000", "-m", "AP", "-m", "nDCG@3", "--norm", "none", q, *paths)
    listed = re.findall(r"judge next: (\S+) (\S+) \(weight ([\d.]+): (\d) runs?, best rank (\d+)\)", res.stderr)
    assert res.exit_code == 0 and len(listed) == len(want), res.stderr
    for qid, doc, weight, runs, best in listed:
        assert (float(weight), int(runs), int(best)) == (pytest.approx(want[(qid, doc)][0], abs=5e-4),
                                                         *want[(qid, doc)][1:]), (qid, doc)
    weights = [float(w) for _, _, w, _, _ in listed]
    assert weights == sorted(weights, reverse=True)


@pytest.mark.parametrize("seed", range(3))
def test_a_note_said_once_for_several_runs_keeps_their_counts(tmp_path, seed):
    """The short note of several runs ("4 runs (a, b, c, 1 more: --notes all): 1-2 of 4 qrels queries
    have no ranked documents") names how many runs, the first three in order and the range of their
    counts, each run's count the number of qrels queries its file leaves out (--notes all: one a run)."""
    import re

    q = tmp_path / "q"
    q.write_text(_gen(seed, nq=4, ndocs=10)[0])
    missing, sizes = {}, np.random.default_rng(seed).permutation([1, 2, 0, 1, 1 + seed % 2])
    for j in range(5):
        left_out = set(np.random.default_rng(seed * 10 + j).choice(4, size=sizes[j], replace=False) + 1)
        run = _gen(seed * 7 + j, nq=4, ndocs=10, runlen=4, tag=f"r{j}")[1]
        (tmp_path / f"r{j}").write_text("".join(line + "\n" for line in run.splitlines()
                                                if int(line.split()[0][1:]) not in left_out))
        if left_out:
            missing[f"r{j}"] = len(left_out)
    paths = [tmp_path / f"r{j}" for j in range(5)]
    tail = " of 4 qrels queries have no ranked documents"
    full = invoke("--notes", "all", "-m", "AP", q, *paths).stderr
    assert dict(re.findall(rf"ulnorm-eval: (r\d): (\d){tail}", full)) == {k: str(v) for k, v in missing.items()}
    short = [line for line in invoke("-m", "AP", q, *paths).stderr.splitlines() if tail in line]
    names, counts = list(missing), sorted(set(missing.values()))
    shown = ", ".join(names[:3]) + (f", {len(names) - 3} more: --notes all" if len(names) > 3 else "")
    span = f"{counts[0]}-{counts[-1]}" if len(counts) > 1 else f"{counts[0]}"
    runs = f"{len(names)} runs ({shown})" if len(names) > 1 else names[0]
    assert short == [f"ulnorm-eval: {runs}: {span}{tail} and score 0 (--run-queries-only leaves them out)"]
