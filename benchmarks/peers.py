"""The peer evaluators of the benchmark, each the way its users typically call it.

    python benchmarks/peers.py pytrec_eval QRELS RUN...
    python benchmarks/peers.py ir_measures QRELS RUN...
    python benchmarks/peers.py ranx QRELS RUN...
    python benchmarks/peers.py ranx-per-query QRELS RUN...    # run, query, metric, value (tab-separated)

Each computes nDCG@10 and AP of every run (the qrels read once) and prints, per run, the means
over the queries as trec_eval-style lines (``ndcg_cut_10 all 0.1234``), so run.py can check that
every tool computed the same numbers.  Imports happen inside the functions: like ulnorm-eval's,
they are part of the timed work.

ranx compiles its functions with numba on first use and caches the machine code (numba's
``cache=True``, in ``NUMBA_CACHE_DIR`` when set): a first use with an empty cache directory times
the compilation, later ones load the cache.  Its readers keep the run's last score of a repeated
document; its ``evaluate`` is called with ``make_comparable=True`` (a query of the qrels missing
from the run scores 0, a run query without judgements is dropped), which on the benchmark's files
(every run covers the qrels' queries) averages over the same queries as trec_eval.
"""
from __future__ import annotations

import sys


def pytrec_eval(qrels_path: str, run_paths: list[str]) -> list[dict[str, float]]:
    """trec_eval's C code through pytrec_eval: files parsed into dicts in Python, the usual way."""
    import pytrec_eval

    qrels: dict[str, dict[str, int]] = {}
    with open(qrels_path) as f:
        for line in f:
            q, _, doc, grade = line.split()
            qrels.setdefault(q, {})[doc] = int(grade)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut_10", "map"})
    out = []
    for run_path in run_paths:
        run: dict[str, dict[str, float]] = {}
        with open(run_path) as f:
            for line in f:
                q, _, doc, _, score, _ = line.split()
                run.setdefault(q, {})[doc] = float(score)
        per_query = evaluator.evaluate(run)
        out.append({m: sum(v[m] for v in per_query.values()) / len(per_query) for m in ("ndcg_cut_10", "map")})
    return out


def ir_measures(qrels_path: str, run_paths: list[str]) -> list[dict[str, float]]:
    """ir_measures' own readers and calc_aggregate (it picks its pytrec_eval provider for these)."""
    import ir_measures
    from ir_measures import AP, nDCG

    qrels = list(ir_measures.read_trec_qrels(qrels_path))
    out = []
    for run_path in run_paths:
        agg = ir_measures.calc_aggregate([nDCG @ 10, AP], qrels, ir_measures.read_trec_run(run_path))
        out.append({"ndcg_cut_10": agg[nDCG @ 10], "map": agg[AP]})
    return out


def _ranx_runs(qrels_path: str, run_paths: list[str]):
    """ranx's readers and evaluate (nDCG@10 with linear gains, as trec_eval's; AP over all the
    judged relevant documents): (run path, its Run with per-query scores in ``run.scores``, means)."""
    from ranx import Qrels, Run, evaluate

    qrels = Qrels.from_file(qrels_path, kind="trec")
    for run_path in run_paths:
        run = Run.from_file(run_path, kind="trec")
        means = evaluate(qrels, run, ["ndcg@10", "map"], make_comparable=True)
        yield run_path, run, {"ndcg_cut_10": float(means["ndcg@10"]), "map": float(means["map"])}


def ranx(qrels_path: str, run_paths: list[str]) -> list[dict[str, float]]:
    return [means for _, _, means in _ranx_runs(qrels_path, run_paths)]


def ranx_per_query(qrels_path: str, run_paths: list[str]) -> None:
    """Every run's per-query nDCG@10 and AP from ranx, full precision: run, query, metric, value."""
    import os

    names = {"ndcg@10": "nDCG@10", "map": "AP"}
    for path, run, _ in _ranx_runs(qrels_path, run_paths):
        for metric, values in run.scores.items():
            for q, v in values.items():
                print(f"{os.path.basename(path)}\t{q}\t{names[metric]}\t{float(v)!r}")


PEERS = {"pytrec_eval": pytrec_eval, "ir_measures": ir_measures, "ranx": ranx}


def main(argv: list[str]) -> None:
    if len(argv) >= 3 and argv[0] == "ranx-per-query":
        ranx_per_query(argv[1], argv[2:])
        return
    if len(argv) < 3 or argv[0] not in PEERS:
        sys.exit(f"usage: peers.py {{{','.join(PEERS)},ranx-per-query}} QRELS RUN...")
    for means in PEERS[argv[0]](argv[1], argv[2:]):
        for name, value in means.items():
            print(f"{name}\tall\t{value:.4f}")


if __name__ == "__main__":
    main(sys.argv[1:])
