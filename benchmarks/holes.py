"""Judgment holes on simulated holes: leave-one-run-out on the TREC 2003 Robust runs.

    python benchmarks/holes.py                       # report (markdown) on stdout
    python benchmarks/holes.py --data DIR --runs 5   # another qrels + runs/ directory, the first 5 runs

For each run: remove from the qrels the judgments of the documents that only this run retrieved in
its top 100 (no other run has them in its top 100: the classic leave-one-run-out pool test, Zobel
1998), evaluate the run with the reduced qrels, and compare with its values under the full qrels:

* containment: the full-qrels value must lie inside [LB, UB] (closed holes) for every query;
* errors: mean absolute error, over the run's queries, of the value with unjudged documents counted
  non-relevant (the plain value under the reduced qrels), of the condensed-list value (CL, Sakai
  2007) and, where the bootstrap is available, of its mean; and the coverage of its interval;
* cost: hole bounds of nDCG@10, AP, P@10 and RBP on the 17 runs (one process, in memory) against the
  same evaluation without them; the median of --repeats timings of each, interleaved.

Numbers are whatever they turn out to be; docs/holes.md quotes a run of this script.
"""
from __future__ import annotations

import argparse
import gzip
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ulnorm_eval.core.registry import VARIANTS  # noqa: E402
from ulnorm_eval.pipeline import evaluate as api  # noqa: E402

MEASURES = ["nDCG@10", "AP", "P@10", "RBP(p=0.8)"]
DEPTH = 100


def default_data() -> Path:
    shared = os.environ.get("ULNORM_EVAL_SHARED_DATA")
    return Path(shared) / "robust03" if shared else ROOT.parent / "shared" / "data" / "robust03"


def top_docs(path: Path, depth: int) -> dict:
    """query -> the set of the run's top ``depth`` documents in trec_eval's order (score descending,
    docid descending)."""
    opener = gzip.open if path.suffix == ".gz" else open
    rows = {}
    with opener(path, "rt", encoding="utf-8") as f:
        for line in f:
            p = line.split()
            if len(p) >= 5:
                rows.setdefault(p[0], []).append((float(p[4]), p[2]))
    return {q: {d for _, d in sorted(v, key=lambda x: (-x[0], _neg(x[1])))[:depth]} for q, v in rows.items()}


def _neg(docid: str):
    return tuple(-b for b in docid.encode())


def reduced_qrels(qrels_lines: list, unique: dict) -> list:
    """The qrels lines without the judgments of the documents in ``unique`` (query -> set)."""
    return [ln for ln in qrels_lines if not (len(p := ln.split()) >= 4 and p[2] in unique.get(p[0], ()))]


def per_query(result, run_index: int, metric_name: str) -> dict:
    rr = result.runs[run_index]
    m = next(m for m in result.metrics if str(m) == metric_name)
    return dict(zip(rr.qids, np.asarray(rr.values[m], dtype=float)))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=default_data())
    ap.add_argument("--runs", type=int, default=0, help="only the first N runs (0: all)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--samples", type=int, default=0,
                    help="bootstrap samples per query for the BS variant, if registered (0: its default)")
    ap.add_argument("--priors", default="run,pool,mix", help="the bootstrap's priors to report (--holes-prior)")
    ap.add_argument("--seed", type=int, default=0, help="the bootstrap's seed")
    args = ap.parse_args(argv)
    qrels_path = args.data / "qrels.txt"
    runs = sorted((args.data / "runs").iterdir())
    if args.runs:
        runs = runs[: args.runs]
    qrels_lines = qrels_path.read_text(encoding="utf-8").splitlines(keepends=True)
    tops = {r: top_docs(r, DEPTH) for r in runs}
    boot = "BS" in VARIANTS
    priors = [p for p in args.priors.split(",") if p] if boot else []
    variants = [v for v in ["LB", "UB", "CL"] if v in VARIANTS]
    boot_kw = {"seed": args.seed, **({"holes_samples": args.samples} if args.samples else {})}
    rows = []
    tot = {k: 0 for k in ("queries", "inside", "holes")}
    err = {m: {"zero": [], "CL": [], **{f"BS {p}": [] for p in priors}, **{f"cover {p}": [] for p in priors}}
           for m in MEASURES}
    full = api.evaluate(str(qrels_path), [str(r) for r in runs], MEASURES, [])
    with tempfile.TemporaryDirectory() as tmp:
        for i, r in enumerate(runs):
            others = {}
            for o in runs:
                if o != r:
                    for q, docs in tops[o].items():
                        others.setdefault(q, set()).update(docs)
            unique = {q: docs - others.get(q, set()) for q, docs in tops[r].items()}
            red = Path(tmp) / "qrels.reduced"
            red.write_text("".join(reduced_qrels(qrels_lines, unique)), encoding="utf-8")
            removed = len(qrels_lines) - len(red.read_text(encoding="utf-8").splitlines())
            gone = [ln.split() for ln in qrels_lines
                    if len(p := ln.split()) >= 4 and p[2] in unique.get(p[0], ())]
            tot["removed"] = tot.get("removed", 0) + len(gone)
            tot["removed_rel"] = tot.get("removed_rel", 0) + sum(float(p[3]) >= 1 for p in gone)
            res = api.evaluate(str(red), [str(r)], MEASURES, variants)
            boots = {p: api.evaluate(str(red), [str(r)], MEASURES, ["BS", "BSLO", "BSHI"], holes_prior=p, **boot_kw)
                     for p in priors}
            line = {"run": r.name, "removed": removed}
            for m in MEASURES:
                truth = per_query(full, i, m)
                val = per_query(res, 0, m)
                lb, ub = per_query(res, 0, f"LB({m})"), per_query(res, 0, f"UB({m})")
                qs = [q for q in val if q in truth]
                inside = sum(lb[q] - 1e-12 <= truth[q] <= ub[q] + 1e-12 for q in qs)
                tot["queries"] += len(qs)
                tot["inside"] += inside
                line[m + " inside"] = f"{inside}/{len(qs)}"
                err[m]["zero"] += [abs(val[q] - truth[q]) for q in qs]
                if "CL" in variants:
                    cl = per_query(res, 0, f"CL({m})")
                    err[m]["CL"] += [abs(cl[q] - truth[q]) for q in qs]
                for p, b in boots.items():
                    bs = per_query(b, 0, f"BS({m})")
                    lo, hi = per_query(b, 0, f"BSLO({m})"), per_query(b, 0, f"BSHI({m})")
                    err[m][f"BS {p}"] += [abs(bs[q] - truth[q]) for q in qs]
                    err[m][f"cover {p}"] += [lo[q] - 1e-12 <= truth[q] <= hi[q] + 1e-12 for q in qs]
                line[m + " width"] = float(np.mean([ub[q] - lb[q] for q in qs]))
            rows.append(line)
            print(f"{r.name}: {removed} judgments removed", file=sys.stderr)

    # cost: the 17 runs, with and without hole bounds, interleaved
    paths = [str(r) for r in runs]
    t_plain, t_holes = [], []
    for _ in range(args.repeats):
        for variants_, out in (([], t_plain), (["LB", "UB"], t_holes)):
            t0 = time.perf_counter()
            api.evaluate(str(qrels_path), paths, MEASURES, variants_)
            out.append(time.perf_counter() - t0)
    mp, mh = statistics.median(t_plain), statistics.median(t_holes)

    print(f"# Judgment holes: leave-one-run-out on {args.data.name}\n")
    print(f"{len(runs)} runs; for each, the judgments of the documents only it retrieved in its top {DEPTH} "
          f"removed.  Measures: {', '.join(MEASURES)}.\n")
    print(f"Full-qrels value inside [LB, UB]: {tot['inside']} of {tot['queries']} (run, query, measure) "
          f"cases ({100.0 * tot['inside'] / max(tot['queries'], 1):.2f}%).\n")
    n_pairs = len(err[MEASURES[0]]["zero"])
    print(f"Mean absolute error against the full-qrels value over {n_pairs} (run, query) pairs per measure, "
          "+- its standard error (sd / sqrt(pairs)); coverage: the share of pairs whose full-qrels value lies "
          "in the bootstrap's 95% interval [BSLO, BSHI].\n")
    heads = ["MAE unjudged = 0", "MAE condensed (CL)"] + [f"MAE BS ({p} prior)" for p in priors] + \
        [f"coverage ({p})" for p in priors] + ["mean UB - LB"]
    print("| measure | " + " | ".join(heads) + " |")
    print("|---|" + "---|" * len(heads))

    def mae(x):
        return f"{np.mean(x):.4f} +- {np.std(x, ddof=1) / np.sqrt(len(x)):.4f}" if x else "n/a"

    for m in MEASURES:
        e = err[m]
        cells = [mae(e["zero"]), mae(e["CL"])] + [mae(e[f"BS {p}"]) for p in priors] + \
            [f"{100 * np.mean(e[f'cover {p}']):.1f}%" for p in priors]
        width = np.mean([row[m + ' width'] for row in rows])
        print(f"| {m} | " + " | ".join(cells) + f" | {width:.4f} |")
    judged_rel = sum(float(p[3]) >= 1 for ln in qrels_lines if len(p := ln.split()) >= 4)
    print(f"\nThe removed judgments (documents only one run had in its top {DEPTH}): {tot.get('removed', 0)}, "
          f"{100.0 * tot.get('removed_rel', 0) / max(tot.get('removed', 0), 1):.1f}% relevant; of all "
          f"{len(qrels_lines)} judgments {100.0 * judged_rel / max(len(qrels_lines), 1):.1f}% are relevant.")
    print("\n| run | judgments removed | " + " | ".join(f"{m} inside" for m in MEASURES) + " |")
    print("|---|---|" + "---|" * len(MEASURES))
    for row in rows:
        print(f"| {row['run']} | {row['removed']} | " + " | ".join(row[m + " inside"] for m in MEASURES) + " |")
    print(f"\nCost ({len(runs)} runs, {', '.join(MEASURES)}; median of {args.repeats}): without hole bounds "
          f"{mp:.2f} s, with LB and UB {mh:.2f} s: {mh / mp:.2f}x.")
    return 0 if tot["inside"] == tot["queries"] else 1


if __name__ == "__main__":
    sys.exit(main())
