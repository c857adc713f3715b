"""The randomisation interval ("EM vs random") on real data: the numbers of docs/bounds.md, "How far from
random: the interval".

    python benchmarks/random_intervals.py                 # Robust 2003 and DL-HARD, 400 random rankings a cell
    python benchmarks/random_intervals.py --trials 100

Under the defaults (--pool qrels+1000, E and EM, the 'all' row mean EM), per collection and measure
(nDCG@10, AP, RBP(p=0.8)):

1. coverage: ``--trials`` random rankings (uniformly random orderings of each query's pool, seeded 47,
   independent of the null's seed 0), each with its 95% randomisation interval; how many contain 0
   (Clopper-Pearson 95% interval of the share; exact by construction: 95%), and the intervals' width;
2. the submitted runs (interval wholly above 0) and the reversals of the runs of 1,000 documents a query
   (wholly below 0), evaluated with ``ulnorm_eval.evaluate``;
3. the pipeline path: 10 random rankings written as runs and evaluated by ``ulnorm_eval.evaluate`` get
   the interval the direct computation gives them (to 1e-12);
4. the time to draw the null (999 orderings of the three measures, once per query set).

Needs ../shared/data (or $ULNORM_EVAL_SHARED_DATA).  tests/core/test_random_baseline.py runs a reduced version.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "core"))  # test_random_baseline.py

import ulnorm_eval as ue  # noqa: E402
from test_random_baseline import RandomRankings, read_run, reversal  # noqa: E402

DATA = Path(os.environ.get("ULNORM_EVAL_SHARED_DATA", ROOT.parent / "shared" / "data"))
MEASURES = ("nDCG@10", "AP", "RBP(p=0.8)")
COLLECTIONS = {"Robust 2003": ("robust03/qrels.txt", "robust03/runs/input.*.gz"),
               "DL-HARD": ("dlhard-passage/qrels.txt", "dlhard-passage/runs/*.run.gz")}


def clopper_pearson(k: int, n: int) -> tuple:
    from scipy.stats import beta

    lo = beta.ppf(0.025, k, n - k + 1) if k else 0.0
    hi = beta.ppf(0.975, k + 1, n - k) if k < n else 1.0
    return lo, hi


def report(name: str, qrels: str, runs: str, trials: int) -> list:
    rr = RandomRankings(str(DATA / qrels), MEASURES)
    t0 = time.process_time()
    rr.null()
    null_cpu = time.process_time() - t0
    lines = [f"### {name} ({len(rr.qids)} queries; the null: {null_cpu:.2f} s of CPU)", "",
             "| measure | intervals holding 0 | share [95%] | mean width | runs > 0 | reversals < 0 (1,000 documents) |",
             "|:-|-:|-:|-:|-:|-:|"]
    paths = sorted(DATA.glob(runs))
    frames = {p.name: read_run(p) for p in paths}
    full = {n: f for n, f in frames.items() if f.groupby("qid").size().min() >= 1000}
    ev = ue.evaluate(rr.qrels_path, frames, list(MEASURES), ["E", "EM"], random_intervals=True)
    rev = ue.evaluate(rr.qrels_path, {n: reversal(f) for n, f in full.items()}, list(MEASURES), ["E", "EM"],
                      random_intervals=True)
    for m in MEASURES:
        spans = rr.intervals(m, trials, seed=47)
        held = int(sum(lo <= 0 <= hi for lo, hi in spans))
        lo, hi = clopper_pearson(held, trials)
        width = float(np.mean([hi_ - lo_ for lo_, hi_ in spans]))
        above = sum(run.interval[_em(ev, m)][0] > 0 for run in ev.runs)
        below = sum(run.interval[_em(rev, m)][1] < 0 for run in rev.runs)
        lines.append(f"| {m} | {held}/{trials} | {100 * held / trials:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}] | "
                     f"{width:.4f} | {above}/{len(ev.runs)} | {below}/{len(rev.runs)} |")
    worst = rr.check_pipeline(10, seed=48)
    return lines + ["", f"The pipeline's interval of 10 random rankings written as runs equals the direct one "
                        f"(largest difference {worst:.1e}).", ""]


def _em(ev, m):
    return next(metric for metric in ev.metrics if str(metric) == f"EM({m})")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trials", type=int, default=400, help="random rankings per collection and measure")
    a = ap.parse_args(argv)
    out = [f"`python benchmarks/random_intervals.py --trials {a.trials}`, {time.strftime('%Y-%m-%d')}, load "
           f"{os.getloadavg()[0]:.1f}", ""]
    for name, (qrels, runs) in COLLECTIONS.items():
        out += report(name, qrels, runs, a.trials)
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
