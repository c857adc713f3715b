"""The peer evaluators of the benchmark, each the way its users typically call it.

    python benchmarks/peers.py pytrec_eval QRELS RUN
    python benchmarks/peers.py ir_measures QRELS RUN

Both compute the mean nDCG@10 and AP over the queries and print trec_eval-style lines
(``ndcg_cut_10 all 0.1234``), so run.py can check that every tool computed the same numbers.
Imports happen inside the functions: like ulnorm-eval's, they are part of the timed work.
"""
from __future__ import annotations

import sys


def pytrec_eval(qrels_path: str, run_path: str) -> dict[str, float]:
    """trec_eval's C code through pytrec_eval: files parsed into dicts in Python, the usual way."""
    import pytrec_eval

    qrels: dict[str, dict[str, int]] = {}
    with open(qrels_path) as f:
        for line in f:
            q, _, doc, grade = line.split()
            qrels.setdefault(q, {})[doc] = int(grade)
    run: dict[str, dict[str, float]] = {}
    with open(run_path) as f:
        for line in f:
            q, _, doc, _, score, _ = line.split()
            run.setdefault(q, {})[doc] = float(score)
    per_query = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut_10", "map"}).evaluate(run)
    return {m: sum(v[m] for v in per_query.values()) / len(per_query) for m in ("ndcg_cut_10", "map")}


def ir_measures(qrels_path: str, run_path: str) -> dict[str, float]:
    """ir_measures' own readers and calc_aggregate (it picks its pytrec_eval provider for these)."""
    import ir_measures
    from ir_measures import AP, nDCG

    agg = ir_measures.calc_aggregate([nDCG @ 10, AP], ir_measures.read_trec_qrels(qrels_path),
                                     ir_measures.read_trec_run(run_path))
    return {"ndcg_cut_10": agg[nDCG @ 10], "map": agg[AP]}


PEERS = {"pytrec_eval": pytrec_eval, "ir_measures": ir_measures}


def main(argv: list[str]) -> None:
    if len(argv) != 3 or argv[0] not in PEERS:
        sys.exit(f"usage: peers.py {{{','.join(PEERS)}}} QRELS RUN")
    for name, value in PEERS[argv[0]](argv[1], argv[2]).items():
        print(f"{name}\tall\t{value:.4f}")


if __name__ == "__main__":
    main(sys.argv[1:])
