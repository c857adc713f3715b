"""How a shuffled copy of a real run reads under the defaults: the numbers of docs/bounds.md, "How far
from random: the interval".

    python benchmarks/shuffle_intervals.py               # Robust 2003 MU03rob01 and DL-HARD bm25, 40 shuffles
    python benchmarks/shuffle_intervals.py --shuffles 20

For each collection, seeded shuffles of one run (seeds 100, 101, ...; the same documents in a uniformly
random order, as tests/test_random_baseline.py makes them) are evaluated with the defaults (--pool run,
E and UL2, the 'all' row UL2 of the means with its 95% percentile bootstrap interval over the queries).
Per measure it prints: how many intervals contain 0; the range of UL2 of the means; mean A - mean E
averaged over the shuffles, its spread (sd over shuffles) beside the standard error predicted from each
shuffle's per-query A - E (root mean square of sd / sqrt(n)), how many shuffles lie within 0.01 of E
and the largest |mean A - mean E|.  Needs ../shared/data (or $ULNORM_EVAL_SHARED_DATA).
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import ulnorm_eval as ue  # noqa: E402
from test_random_baseline import read_run, shuffled  # noqa: E402

DATA = Path(os.environ.get("ULNORM_EVAL_SHARED_DATA", ROOT.parent / "shared" / "data"))
CASES = [("Robust 2003", "robust03", "input.MU03rob01.gz"), ("DL-HARD", "dlhard-passage", "bm25.run.gz")]
MEASURES = ["nDCG@10", "AP"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shuffles", type=int, default=40)
    args = ap.parse_args(argv)
    print("| collection, run | measure | intervals holding 0 | UL2 of the means | mean A − mean E: average | "
          "sd over shuffles | predicted se | within 0.01 | largest |")
    print("|:-|:-|-:|-:|-:|-:|-:|-:|-:|")
    for title, coll, name in CASES:
        d = DATA / coll
        run = read_run(d / "runs" / name)
        sh = {f"s{i}": shuffled(run, 100 + i) for i in range(args.shuffles)}
        ev = ue.evaluate(str(d / "qrels.txt"), sh, MEASURES, variants=["E", "UL2"])
        for m in MEASURES:
            inside, ul2, gaps, ses = 0, [], [], []
            for rr in ev.runs:
                lo, hi = next(ci for k, ci in rr.interval.items() if str(k) == f"UL2({m})")
                inside += lo <= 0 <= hi
                ul2.append(ev.means[rr.name][f"UL2({m})"])
                gap = ev.per_query[rr.name][m] - ev.per_query[rr.name][f"E({m})"]
                gaps.append(gap.mean())
                ses.append(gap.std(ddof=1) / np.sqrt(len(gap)))
            gaps = np.array(gaps)
            print(f"| {title}, {name} | {m} | {inside}/{len(sh)} | {min(ul2):+.3f} to {max(ul2):+.3f} | "
                  f"{gaps.mean():+.5f} | {gaps.std(ddof=1):.5f} | {np.sqrt(np.mean(np.square(ses))):.5f} | "
                  f"{int(np.sum(np.abs(gaps) <= 0.01))}/{len(sh)} | {np.abs(gaps).max():.4f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
