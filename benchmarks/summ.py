"""Summarisation benchmark: `ulnorm-eval summ` on SummEval, timed against its targets and against
rouge-score itself (the peer, measured in the same run).

    python benchmarks/summ.py [DATA] [--skip-bertscore]

1. ROUGE-1/2/L with E (exact or Monte Carlo, 200 draws), IUB, UE1, UE2 for all 16 systems x 100
   documents (1,600 summaries, 11 references each): target < 60 s.  Peer: rouge-score's
   `score_multi` alone (no bounds) on the same summaries.
2. BERTScore with all-MiniLM-L6-v2 (the packaged default) on the 12 abstractive systems' 1,200
   summaries, with E by Algorithm 1 and Algorithm 2's document scores: target < 600 s.

Prints each time, its ratio to the target and PASS/FAIL; exit 1 if a target is missed.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT = (Path(os.environ.get("ULNORM_EVAL_SHARED_DATA", HERE.parents[1] / "shared" / "data")) / "summeval"
           / "model_annotations.aligned.paired.jsonl.gz")
ABSTRACTIVE = ["M8", "M9", "M10", "M11", "M12", "M13", "M14", "M15", "M17", "M20", "M22", "M23"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("data", nargs="?", default=str(DEFAULT))
    ap.add_argument("--skip-bertscore", action="store_true")
    a = ap.parse_args()
    sys.path.insert(0, str(HERE.parent))
    from ulnorm_eval.inputs.summaries import read_summaries
    from ulnorm_eval.pipeline import summ_eval as se
    from ulnorm_eval.render.rows import format_trec

    ok = True
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (timings are wall clock; "
          "other processes inflate them)")
    t0 = time.perf_counter()
    d = read_summaries(a.data)
    res = se.evaluate_summaries(d, se.resolve_text_metrics(), se.SummOptions())
    format_trec(res, per_query=True)
    t_rouge = time.perf_counter() - t0
    n = sum(x is not None for row in d.summaries for x in row)

    from rouge_score import rouge_scorer

    t0 = time.perf_counter()
    rs = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"])
    for s in range(len(d.systems)):
        for j in range(len(d.doc_ids)):
            rs.score_multi(d.references[j], d.summaries[s][j])
    t_peer = time.perf_counter() - t0
    verdict = "PASS" if t_rouge < 60 else "FAIL"
    ok &= verdict == "PASS"
    print(f"ROUGE-1/2/L + E, IUB, UE1, UE2 on {n} summaries: {t_rouge:.1f} s (target 60 s, ratio "
          f"{t_rouge / 60:.2f}); rouge-score score_multi alone, no bounds: {t_peer:.1f} s "
          f"(ours/peer {t_rouge / t_peer:.2f})  {verdict}")

    if not a.skip_bertscore:
        from ulnorm_eval.core import bertscore as bs

        da = d.only_systems(ABSTRACTIVE)
        t0, c0 = time.perf_counter(), time.process_time()
        scorer = bs.make_scorer()
        r = bs.score_documents(da, scorer)
        t_bert, c_bert = time.perf_counter() - t0, time.process_time() - c0
        n = int((~(r.A[..., 2] != r.A[..., 2])).sum())
        verdict = "PASS" if t_bert < 600 else "FAIL"
        ok &= verdict == "PASS"
        print(f"BERTScore (all-MiniLM-L6-v2, layer {scorer.num_layers}) + E (Algorithm 1) + Algorithm 2 on {n} "
              f"summaries: {t_bert:.1f} s (target 600 s, ratio {t_bert / 600:.2f}; CPU {c_bert:.0f} s on "
              f"{os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f} at the end)  {verdict}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
