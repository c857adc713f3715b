"""Judgment holes on simulated holes: leave-one-run-out on the TREC 2003 Robust runs.

    python benchmarks/holes.py                       # report (markdown) on stdout
    python benchmarks/holes.py --data DIR --runs 5   # another qrels + runs/ directory, the first 5 runs
    python benchmarks/holes.py --shallow             # shallow pools (top 10, top 20) against the full qrels

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
import ulnorm_eval as api  # noqa: E402 - the library's evaluate

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
          "between the bootstrap samples' 2.5th and 97.5th percentiles [BSLO, BSHI] (their spread, not a 95% interval).\n")
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


# --------------------------------------------------------------------------- shallow-to-deep pools

SHALLOW_MEASURES = ["nDCG@10", "P@10", "AP"]


def _qvals(result, metric_name: str) -> np.ndarray:
    """runs x queries values of one metric (queries in the first run's order)."""
    qids = result.runs[0].qids
    out = []
    for rr in result.runs:
        m = next(m for m in result.metrics if str(m) == metric_name)
        pos = dict(zip(rr.qids, np.asarray(rr.values[m], dtype=float)))
        out.append([pos.get(q, np.nan) for q in qids])
    return np.array(out)


def _tau(a, b) -> float:
    from scipy.stats import kendalltau

    return float(kendalltau(a, b).statistic)


def _interval(stat, n_topics: int, reps: int, rng) -> tuple:
    """stat(topic index array) and its 2.5/97.5 percentiles over ``reps`` resamples of the topics."""
    full = stat(np.arange(n_topics))
    boot = [stat(rng.integers(0, n_topics, n_topics)) for _ in range(reps)]
    lo, hi = np.percentile(boot, [2.5, 97.5])
    return full, lo, hi


def _fmt(t, pct=False) -> str:
    f = (lambda x: f"{100 * x:.1f}%") if pct else (lambda x: f"{x:.4f}")
    return f"{f(t[0])} [{f(t[1])}, {f(t[2])}]"


def shallow(args) -> int:
    """qrels restricted to the documents in the top d of the runs (a shallow pool) against the full qrels."""
    qrels_path = args.data / "qrels.txt"
    runs = sorted((args.data / "runs").iterdir())
    if args.runs:
        runs = runs[: args.runs]
    paths = [str(r) for r in runs]
    lines = qrels_path.read_text(encoding="utf-8").splitlines(keepends=True)
    worlds = [w for w in args.worlds.split(",") if w]
    priors = [p for p in args.priors.split(",") if p]
    rng = np.random.default_rng(args.seed)
    full = api.evaluate(str(qrels_path), paths, SHALLOW_MEASURES, [])
    qids = full.runs[0].qids
    truth = {m: _qvals(full, m) for m in SHALLOW_MEASURES}
    nq = len(qids)
    print(f"# Judgment holes: shallow pools on {args.data.name}\n")
    print(f"{len(runs)} runs x {nq} topics.  The qrels are cut to the documents some run ranked in its top d "
          f"(d = {args.depths}); every number is against the full qrels.  Intervals: 2.5/97.5 percentiles over "
          f"{args.reps} bootstrap resamples of the topics (seed {args.seed}).  Bootstrap (BS): "
          f"{args.samples} samples per query.\n")
    with tempfile.TemporaryDirectory() as tmp:
        for depth in [int(x) for x in args.depths.split(",")]:
            tops = [top_docs(r, depth) for r in runs]
            pool = {}
            for t in tops:
                for q, docs in t.items():
                    pool.setdefault(q, set()).update(docs)
            kept = [ln for ln in lines if len(p := ln.split()) >= 4 and p[2] in pool.get(p[0], ())]
            red = Path(tmp) / f"qrels.top{depth}"
            red.write_text("".join(kept), encoding="utf-8")
            rel_full, rel_kept = {}, {}
            for src, dst in ((lines, rel_full), (kept, rel_kept)):
                for ln in src:
                    p = ln.split()
                    if len(p) >= 4 and float(p[3]) > 0:
                        dst[p[0]] = dst.get(p[0], 0) + 1
            growth = np.array([(rel_full.get(q, 0) - rel_kept.get(q, 0)) / max(rel_kept.get(q, 0), 1) for q in qids])
            print(f"## Top-{depth} pool\n")
            print(f"{len(kept)} of {len(lines)} judgments kept; relevant documents per topic {np.mean(list(rel_kept.values())):.1f} "
                  f"(full qrels: {np.mean([rel_full.get(q, 0) for q in qids]):.1f}).  New relevant documents per topic "
                  f"as a share of the pool's: median {100 * np.median(growth):.0f}%, 90th percentile "
                  f"{100 * np.percentile(growth, 90):.0f}%, 99th {100 * np.percentile(growth, 99):.0f}%, max "
                  f"{100 * growth.max():.0f}%.\n")
            print("Containment: the full-qrels value inside [LB, UB], share of (run, topic) pairs; width: mean UB - LB.\n")
            print("| world | " + " | ".join(f"{m} inside | {m} width" for m in SHALLOW_MEASURES) + " |")
            print("|---|" + "---|---|" * len(SHALLOW_MEASURES))
            for w in worlds:
                alone = w.endswith(":alone")
                world = w.removesuffix(":alone")
                t0 = time.perf_counter()
                if alone:
                    parts = [api.evaluate(str(red), [p], SHALLOW_MEASURES, ["LB", "UB"], holes=world) for p in paths]
                    lb = {m: np.vstack([_qvals(r, f"LB({m})") for r in parts]) for m in SHALLOW_MEASURES}
                    ub = {m: np.vstack([_qvals(r, f"UB({m})") for r in parts]) for m in SHALLOW_MEASURES}
                else:
                    r = api.evaluate(str(red), paths, SHALLOW_MEASURES, ["LB", "UB"], holes=world)
                    lb = {m: _qvals(r, f"LB({m})") for m in SHALLOW_MEASURES}
                    ub = {m: _qvals(r, f"UB({m})") for m in SHALLOW_MEASURES}
                cells = []
                for m in SHALLOW_MEASURES:
                    inside = (lb[m] - 1e-12 <= truth[m]) & (truth[m] <= ub[m] + 1e-12)
                    cells.append(_fmt(_interval(lambda ix: inside[:, ix].mean(), nq, args.reps, rng), pct=True))
                    cells.append(_fmt(_interval(lambda ix: (ub[m] - lb[m])[:, ix].mean(), nq, args.reps, rng)))
                label = f"{world}, each run alone" if alone else f"{world}, the {len(runs)} runs together"
                print(f"| {label} | " + " | ".join(cells) + " |")
                print(f"{w}: {time.perf_counter() - t0:.0f} s", file=sys.stderr)
            print()
            plain = api.evaluate(str(red), paths, SHALLOW_MEASURES, ["CL"])
            est = {m: {"unjudged = 0": _qvals(plain, m), "condensed (CL)": _qvals(plain, f"CL({m})")}
                   for m in SHALLOW_MEASURES}
            cover = {m: {} for m in SHALLOW_MEASURES}
            for p in priors:
                t0 = time.perf_counter()
                b = api.evaluate(str(red), paths, SHALLOW_MEASURES, ["BS", "BSLO", "BSHI"], holes_prior=p,
                                 holes_samples=args.samples, seed=args.seed)
                for m in SHALLOW_MEASURES:
                    est[m][f"BS ({p} prior)"] = _qvals(b, f"BS({m})")
                    lo, hi = _qvals(b, f"BSLO({m})"), _qvals(b, f"BSHI({m})")
                    cover[m][p] = (lo - 1e-12 <= truth[m]) & (truth[m] <= hi + 1e-12)
                print(f"BS {p}: {time.perf_counter() - t0:.0f} s", file=sys.stderr)
            print("Point estimates: mean absolute error over (run, topic) pairs, and Kendall's tau between the "
                  "runs' means and their full-qrels means.\n")
            names = list(est[SHALLOW_MEASURES[0]])
            print("| measure | estimate | MAE | system tau |")
            print("|---|---|---|---|")
            for m in SHALLOW_MEASURES:
                for nm in names:
                    e = est[m][nm]
                    mae = _interval(lambda ix: np.abs(e[:, ix] - truth[m][:, ix]).mean(), nq, args.reps, rng)
                    tau = _interval(lambda ix: _tau(e[:, ix].mean(axis=1), truth[m][:, ix].mean(axis=1)), nq,
                                    args.reps, rng)
                    print(f"| {m} | {nm} | {_fmt(mae)} | {_fmt(tau)} |")
            print("\nCoverage of [BSLO, BSHI] (the 2.5th to 97.5th percentile of the bootstrap samples):\n")
            print("| measure | " + " | ".join(f"{p} prior" for p in priors) + " |")
            print("|---|" + "---|" * len(priors))
            for m in SHALLOW_MEASURES:
                print(f"| {m} | " + " | ".join(
                    _fmt(_interval(lambda ix: cover[m][p][:, ix].mean(), nq, args.reps, rng), pct=True)
                    for p in priors) + " |")
            print()
    return 0


if __name__ == "__main__":
    if "--shallow" in sys.argv[1:]:
        ap = argparse.ArgumentParser(description="Judgment holes on shallow pools (top d of the runs) against "
                                                 "the full qrels.")
        ap.add_argument("--shallow", action="store_true")
        ap.add_argument("--data", type=Path, default=default_data())
        ap.add_argument("--runs", type=int, default=0, help="only the first N runs (0: all)")
        ap.add_argument("--depths", default="10,20", help="pool depths, comma-separated")
        ap.add_argument("--worlds", default="closed:alone,closed,open=100%,open=300%,open",
                        help="--holes worlds; ':alone' evaluates each run on its own")
        ap.add_argument("--priors", default="run,pool,mix")
        ap.add_argument("--samples", type=int, default=100)
        ap.add_argument("--reps", type=int, default=1000, help="bootstrap resamples of the topics")
        ap.add_argument("--seed", type=int, default=0)
        sys.exit(shallow(ap.parse_args()))
    sys.exit(main())
