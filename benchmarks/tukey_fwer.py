"""Family-wise error of compare's tests on null resamples of Robust 2003 (docs/comparing.md).

The 17 runs' per-topic scores (one measure, 100 topics) are evaluated once.  Each null resample permutes
every topic's run labels (seeded), so that no run differs from another in distribution; a test commits a
family-wise error when it calls any of the 136 pairs significant at alpha.  Printed: the share of
resamples with an error, with its binomial standard error, for the randomised Tukey HSD test (adjusted
by itself), the t-test with Holm's correction and the t-test uncorrected.

    python benchmarks/tukey_fwer.py                       # 1,000 resamples, 1,000 permutations each
    python benchmarks/tukey_fwer.py --resamples 200 --reps 500 --measure nDCG@10
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--resamples", type=int, default=1000, help="null resamples (default 1000)")
    ap.add_argument("--reps", type=int, default=1000, help="Tukey HSD permutations per resample (default 1000)")
    ap.add_argument("--measure", default="AP", help="measure (default AP)")
    ap.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    ap.add_argument("--seed", type=int, default=2026, help="seed of the null resamples (default 2026)")
    ap.add_argument("--data", default=os.environ.get("ULNORM_EVAL_SHARED_DATA") or str(ROOT.parent / "shared" / "data"),
                    help="the shared data folder (default ../shared/data)")
    args = ap.parse_args()

    import numpy as np

    import ulnorm_eval
    from ulnorm_eval.analysis import stats

    data = Path(args.data) / "robust03"
    result = ulnorm_eval.evaluate(data / "qrels.txt", sorted(str(path) for path in (data / "runs").glob("input.*.gz")),
                                  [args.measure], variants=[])
    scores = np.array([np.asarray(run.values[result.metrics[0]]) for run in result.runs])
    first, second = np.triu_indices(len(scores), 1)
    rng = np.random.default_rng(args.seed)
    errors = {"tukey": 0, "t, holm": 0, "t, none": 0}
    started = time.perf_counter()
    for trial in range(args.resamples):
        null = rng.permuted(scores, axis=0)
        diffs = null[first] - null[second]
        tukey = stats.pairwise_tukey(diffs, stats.tukey_null(null, args.reps, seed=trial)).p
        t_test = stats.pairwise_t(diffs).p
        errors["tukey"] += bool((tukey < args.alpha).any())
        errors["t, holm"] += bool((stats.adjust(t_test, "holm") < args.alpha).any())
        errors["t, none"] += bool((t_test < args.alpha).any())
    print(f"{len(scores)} runs, {scores.shape[1]} topics, {args.measure}, {len(first)} pairs; {args.resamples} null "
          f"resamples (each topic's run labels permuted, seed {args.seed}); Tukey HSD with {args.reps} permutations; "
          f"alpha {args.alpha}; {time.perf_counter() - started:.0f} s")
    for test, count in errors.items():
        rate = count / args.resamples
        print(f"{test:8s} family-wise error {rate:.3f} +- {math.sqrt(rate * (1 - rate) / args.resamples):.3f}")


if __name__ == "__main__":
    main()
