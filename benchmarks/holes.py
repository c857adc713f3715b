"""Judgment holes against judgments made later: the TREC 2003 Robust runs and qrels.

    python benchmarks/holes.py                 # leave-one-run-out (report, markdown, on stdout)
    python benchmarks/holes.py --shallow       # shallow-to-deep: top-5/10/20 pools against the full qrels
    python benchmarks/holes.py --shallow --depths 10 --worlds open=est:alone --reps 200   # a part of it
    python benchmarks/holes.py --shallow --samples 0; python benchmarks/holes.py --priors ''  # no bootstrap

Leave-one-run-out (Zobel 1998): for each run, the judgments of the documents only it had in its top 100
are removed; the run is evaluated alone against the reduced qrels and compared with its values under
the full qrels.

Shallow-to-deep: the qrels are cut to the documents some run ranked in its top d (the pool a
shallower judging would have made); every run is evaluated against that cut, alone and with the
others, and compared with its values under the full qrels (the later, deeper judging).

Reported, per measure (AP, R@100, Rprec, nDCG@10, P@10, RBP(p=0.8), RR): the share of (run, topic)
pairs whose full-qrels value lies in [LB, UB] under each world, the mean width UB - LB, the share in
[BSLO, BSHI] (the bootstrap's samples' spread), and, shallow only, every gate line "holds" that the
full qrels contradict (none may), and how much judging the --holes-list documents narrows the bounds
against judging as many random holes.  Brackets: 2.5/97.5 percentiles over resamples of the topics.
Numbers are whatever they turn out to be; docs/holes.md quotes a run of this script.
"""
from __future__ import annotations

import argparse
import gzip
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import ulnorm_eval as api  # noqa: E402 - the library's evaluate
from ulnorm_eval.analysis import gate  # noqa: E402
from ulnorm_eval.core.registry import parse  # noqa: E402
from ulnorm_eval.pipeline.evaluate import Result  # noqa: E402

MEASURES = ["AP", "R@100", "Rprec", "nDCG@10", "P@10", "RBP(p=0.8)", "RR"]
DEFAULT = "open=est"


def default_data() -> Path:
    shared = os.environ.get("ULNORM_EVAL_SHARED_DATA")
    return Path(shared) / "robust03" if shared else ROOT.parent / "shared" / "data" / "robust03"


def ranked(path: Path) -> dict:
    """query -> the run's documents in trec_eval's order (score descending, docid descending)."""
    opener = gzip.open if path.suffix == ".gz" else open
    rows = {}
    with opener(path, "rt", encoding="utf-8") as f:
        for line in f:
            p = line.split()
            if len(p) >= 5:
                rows.setdefault(p[0], []).append((-float(p[4]), tuple(-b for b in p[2].encode()), p[2]))
    return {q: [d for *_, d in sorted(v)] for q, v in rows.items()}


def read_qrels(path: Path) -> dict:
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        p = line.split()
        if len(p) >= 4:
            out.setdefault(p[0], {})[p[2]] = p[3]
    return out


def write_qrels(path: Path, qrels: dict) -> str:
    path.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items()), encoding="utf-8")
    return str(path)


def cut(qrels: dict, runs: list, depth: int) -> dict:
    """The judgments of the documents some run ranked in its top ``depth``."""
    pool = {}
    for run in runs:
        for q, docs in run.items():
            pool.setdefault(q, set()).update(docs[:depth])
    return {q: {d: g for d, g in docs.items() if d in pool.get(q, ())} for q, docs in qrels.items()}


def values(result, name: str, qids: list) -> np.ndarray:
    """runs x topics values of one metric, topics in ``qids``' order."""
    out = []
    for rr in result.runs:
        metric = next(m for m in result.metrics if str(m) == name)
        at = dict(zip(rr.qids, np.asarray(rr.values[metric], dtype=float)))
        out.append([at.get(q, np.nan) for q in qids])
    return np.array(out)


def bounds(qrels: str, paths: list, world: str, alone: bool, qids: list, variants=("LB", "UB"), **kw):
    """{variant: {measure: runs x topics}} and the results, the runs evaluated alone or together."""
    results = ([api.evaluate(qrels, [p], MEASURES, list(variants), holes=world, **kw) for p in paths] if alone else
               [api.evaluate(qrels, paths, MEASURES, list(variants), holes=world, **kw)])
    got = {v: {m: np.vstack([values(r, f"{v}({m})", qids) for r in results]) for m in MEASURES} for v in variants}
    return got, results


def interval(stat, n_topics: int, reps: int, rng) -> tuple:
    """stat(topic indices) and its 2.5/97.5 percentiles over ``reps`` resamples of the topics."""
    boot = [stat(rng.integers(0, n_topics, n_topics)) for _ in range(reps)]
    return (stat(np.arange(n_topics)), *np.percentile(boot, [2.5, 97.5]))


def fmt(t, pct=False) -> str:
    f = (lambda x: f"{100 * x:.1f}") if pct else (lambda x: f"{x:.3f}")
    return f"{f(t[0])} [{f(t[1])}, {f(t[2])}]"


def inside(low, high, truth) -> np.ndarray:
    return (low - 1e-9 <= truth) & (truth <= high + 1e-9)


def contradictions(results, truth_means: dict, max_drops=(0.0, 0.02)) -> tuple:
    """(gate lines that say "holds", those the full qrels contradict): every run and measure against
    thresholds around its shallow and full means and a grid, and, with several runs, every ordered pair
    as run and baseline."""
    said = wrong = 0
    for result in results:
        for m in MEASURES:
            metric = parse(m)
            for rr in result.runs:
                full = truth_means[m][rr.name]
                cuts = {round(x, 4) for x in (full - 0.01, full + 0.01, rr.mean[metric] - 0.01, rr.mean[metric] + 0.01,
                                              0.1, 0.2, 0.3, 0.5)}
                checks = gate.check_thresholds(Result(metrics=result.metrics, runs=[rr], options=result.options),
                                               [gate.Threshold(metric=metric, value=t) for t in cuts])
                gate.check_holes(result, checks)
                for check in checks:
                    if check.holes.startswith("holds"):
                        said += 1
                        wrong += check.failed != (full < check.reference)
            for base in result.runs if len(result.runs) > 1 else ():
                for drop in max_drops:
                    checks = [c for c in gate.check_baseline(result, base, drop) if c.metric == metric and c.run != base.name]
                    gate.check_holes(result, checks, base, drop)
                    for check in checks:
                        if check.holes.startswith("holds"):
                            said += 1
                            wrong += check.failed != (truth_means[m][check.run] - truth_means[m][base.name] < -drop)
    return said, wrong


# --------------------------------------------------------------------------- shallow-to-deep

def shallow(args) -> int:
    qrels_path = args.data / "qrels.txt"
    paths = sorted(str(p) for p in (args.data / "runs").iterdir())[: args.runs or None]
    full_qrels, runs = read_qrels(qrels_path), [ranked(Path(p)) for p in paths]
    full = api.evaluate(str(qrels_path), paths, MEASURES, [])
    qids = full.runs[0].qids
    truth = {m: values(full, m, qids) for m in MEASURES}
    names = [rr.name for rr in full.runs]
    truth_means = {m: dict(zip(names, np.nanmean(truth[m], axis=1))) for m in MEASURES}
    rng = np.random.default_rng(args.seed)
    nq = len(qids)
    print(f"# Judgment holes: shallow pools on {args.data.name}\n")
    print(f"{len(paths)} runs x {nq} topics; the qrels cut to the documents some run ranked in its top d; every number "
          f"against the full qrels.  Brackets: 2.5/97.5 percentiles over {args.reps} resamples of the topics (seed "
          f"{args.seed}); % of (run, topic) pairs.  Bootstrap: {args.samples} samples a query, pool prior.\n")
    with tempfile.TemporaryDirectory() as tmp:
        for depth in [int(x) for x in args.depths.split(",")]:
            shallow_qrels = cut(full_qrels, runs, depth)
            red = write_qrels(Path(tmp) / f"qrels.top{depth}", shallow_qrels)
            rel = lambda docs: sum(float(g) >= 1 for g in docs.values())  # noqa: E731
            kept = np.array([rel(shallow_qrels.get(q, {})) for q in qids])
            grown = np.array([rel(full_qrels.get(q, {})) for q in qids]) - kept
            print(f"## Top-{depth} pool\n")
            print(f"{sum(map(len, shallow_qrels.values()))} judgments kept; relevant documents a topic {kept.mean():.1f} "
                  f"(full qrels {kept.mean() + grown.mean():.1f}); new relevant ones a topic: median {np.median(grown):.0f}, "
                  f"90th percentile {np.percentile(grown, 90):.0f}, max {grown.max():.0f}.\n")
            print("| world | " + " | ".join(MEASURES) + " |")
            print("|---|" + "---|" * len(MEASURES))
            for spec in filter(None, args.worlds.split(",")):
                world, alone = spec.removesuffix(":alone"), spec.endswith(":alone")
                started = time.perf_counter()
                got, results = bounds(red, paths, world, alone, qids)
                cells = []
                for m in MEASURES:
                    hit = inside(got["LB"][m], got["UB"][m], truth[m])
                    width = got["UB"][m] - got["LB"][m]
                    cells.append(f"{fmt(interval(lambda ix: hit[:, ix].mean(), nq, args.reps, rng), True)}; "
                                 f"{np.nanmean(width):.3f}")
                label = f"{world}, {'each run alone' if alone else f'the {len(paths)} runs together'}"
                print(f"| {label} | " + " | ".join(cells) + " |")
                if world == DEFAULT:
                    said, wrong = contradictions(results, truth_means)
                    caps = np.array([[dict(r.options.holes_ceiling).get(q, np.inf) for q in qids] for r in results])
                    held = caps >= grown
                    print(f"| (gate: {said} lines say \"holds\", {wrong} contradicted; the estimated ceiling at least "
                          f"the new relevant documents for {fmt(interval(lambda ix: held[:, ix].mean(), nq, args.reps, rng), True)}% "
                          f"of {'(run, topic) pairs' if alone else 'topics'}, {np.isinf(caps).mean():.1%} without one, "
                          f"mean of the finite ones {caps[np.isfinite(caps)].mean():.0f}) |" + " |" * len(MEASURES))
                print(f"top {depth} {spec}: {time.perf_counter() - started:.0f} s", file=sys.stderr)
            print("\nEach cell: % of pairs in [LB, UB] [interval]; mean width UB - LB.\n")
            started = time.perf_counter()
            if args.samples:
                got, _ = bounds(red, paths, DEFAULT, False, qids, ("BSLO", "BSHI"), holes_samples=args.samples,
                                seed=args.seed)
                cells = [fmt(interval(lambda ix: inside(got["BSLO"][m], got["BSHI"][m], truth[m])[:, ix].mean(), nq,
                                      args.reps, rng), True) for m in MEASURES]
                print("| [BSLO, BSHI] | " + " | ".join(MEASURES) + " |\n|---|" + "---|" * len(MEASURES))
                print(f"| top {depth}, the runs together | " + " | ".join(cells) + " |\n")
                print(f"top {depth} bootstrap: {time.perf_counter() - started:.0f} s", file=sys.stderr)
            judge_next(args, red, shallow_qrels, full_qrels, paths, qids, Path(tmp), rng)
    return 0


def judge_next(args, red, shallow_qrels, full_qrels, paths, qids, tmp, rng) -> None:
    """Judge (from the full qrels) the --holes-list documents, or as many random holes of the runs
    (``args.draws`` draws), and the mean width of the bounds after each, the runs together under the
    default world."""
    first = api.evaluate(red, paths, MEASURES, ["LB", "UB"], holes=DEFAULT, holes_list=args.list)
    listed = [(q, d) for q, d, *_ in first.options.holes_listed]
    holes = sorted({(q, d) for p in paths for q, docs in ranked(Path(p)).items() for d in docs
                    if d not in shallow_qrels.get(q, {})})
    print(f"Judging {len(listed)} documents (grades from the full qrels; 0 where it has none), the runs together, "
          f"{DEFAULT}: mean width UB - LB ({args.draws} random draws: their mean, and [min, max] of the last "
          "column).\n")
    print("| judged | " + " | ".join(MEASURES) + " | mean |\n|---|" + "---|" * (len(MEASURES) + 1))

    def widths(picked):
        more = {q: dict(docs) for q, docs in shallow_qrels.items()}
        for q, d in picked:
            more.setdefault(q, {})[d] = full_qrels.get(q, {}).get(d, "0")
        got, _ = bounds(write_qrels(tmp / "qrels.more", more), paths, DEFAULT, False, qids)
        return [np.nanmean(got["UB"][m] - got["LB"][m]) for m in MEASURES]

    for label, picked in (("none", []), (f"the {len(listed)} of --holes-list", listed)):
        got = widths(picked)
        print(f"| {label} | " + " | ".join(f"{w:.4f}" for w in got) + f" | {np.mean(got):.4f} |")
    drawn = np.array([widths([holes[i] for i in rng.choice(len(holes), size=len(listed), replace=False)])
                      for _ in range(args.draws)])
    spread = drawn.mean(axis=1)
    print(f"| {len(listed)} random holes | " + " | ".join(f"{w:.4f}" for w in drawn.mean(axis=0))
          + f" | {spread.mean():.4f} [{spread.min():.4f}, {spread.max():.4f}] |\n")


# --------------------------------------------------------------------------- leave-one-run-out

def loo(args) -> int:
    qrels_path = args.data / "qrels.txt"
    paths = sorted((args.data / "runs").iterdir())[: args.runs or None]
    full_qrels, runs = read_qrels(qrels_path), {p: ranked(p) for p in paths}
    full = api.evaluate(str(qrels_path), [str(p) for p in paths], MEASURES, [])
    qids = full.runs[0].qids
    priors = [p for p in args.priors.split(",") if p]
    rng = np.random.default_rng(args.seed)
    hits = {key: {m: [] for m in MEASURES} for key in ["LB", *priors]}
    errors = {key: {m: [] for m in MEASURES} for key in ["unjudged = 0", "CL", *priors]}
    widths = {m: [] for m in MEASURES}
    removed = relevant = 0
    with tempfile.TemporaryDirectory() as tmp:
        for i, path in enumerate(paths):
            others = {}
            for other, run in runs.items():
                if other != path:
                    for q, docs in run.items():
                        others.setdefault(q, set()).update(docs[:100])
            only = {q: set(docs[:100]) - others.get(q, set()) for q, docs in runs[path].items()}
            reduced = {q: {d: g for d, g in docs.items() if d not in only.get(q, ())} for q, docs in full_qrels.items()}
            gone = [g for q, docs in full_qrels.items() for d, g in docs.items() if d in only.get(q, ())]
            removed, relevant = removed + len(gone), relevant + sum(float(g) >= 1 for g in gone)
            red = write_qrels(Path(tmp) / "qrels.reduced", reduced)
            got, _ = bounds(red, [str(path)], DEFAULT, False, qids, ("LB", "UB"))
            plain = api.evaluate(red, [str(path)], MEASURES, ["CL"])
            boot = {p: bounds(red, [str(path)], DEFAULT, False, qids, ("BS", "BSLO", "BSHI"), holes_samples=args.samples,
                              seed=args.seed, holes_prior=p)[0] for p in priors}
            for m in MEASURES:
                truth = values(full, m, qids)[i][None, :]
                hits["LB"][m].append(inside(got["LB"][m], got["UB"][m], truth)[0])
                widths[m].append(np.nanmean(got["UB"][m] - got["LB"][m]))
                errors["unjudged = 0"][m].append(np.abs(values(plain, m, qids) - truth)[0])
                errors["CL"][m].append(np.abs(values(plain, f"CL({m})", qids) - truth)[0])
                for p in priors:
                    hits[p][m].append(inside(boot[p]["BSLO"][m], boot[p]["BSHI"][m], truth)[0])
                    errors[p][m].append(np.abs(boot[p]["BS"][m] - truth)[0])
            print(f"{path.name}: {len(gone)} judgments removed", file=sys.stderr)
    print(f"# Judgment holes: leave-one-run-out on {args.data.name}\n")
    print(f"{len(paths)} runs x {len(qids)} topics; for each run the judgments of the documents only it had in its top "
          f"100 removed ({removed} in all, {100 * relevant / max(removed, 1):.1f}% relevant); the run evaluated alone "
          f"under {DEFAULT}.  % of (run, topic) pairs [2.5/97.5 percentiles over {args.reps} resamples of the topics]; "
          f"bootstrap {args.samples} samples a query.\n")
    print("| held in | " + " | ".join(MEASURES) + " |\n|---|" + "---|" * len(MEASURES))
    for key in hits:
        cells = []
        for m in MEASURES:
            hit = np.vstack(hits[key][m])
            cells.append(fmt(interval(lambda ix: hit[:, ix].mean(), len(qids), args.reps, rng), True))
        print(f"| {'[LB, UB]' if key == 'LB' else f'[BSLO, BSHI], {key} prior'} | " + " | ".join(cells) + " |")
    print("| mean width UB - LB | " + " | ".join(f"{np.mean(widths[m]):.3f}" for m in MEASURES) + " |")
    print("\nMean absolute error against the full-qrels value over the (run, topic) pairs, +- its standard error:\n")
    print("| estimate | " + " | ".join(MEASURES) + " |\n|---|" + "---|" * len(MEASURES))
    for key, table in errors.items():
        label = key if key in ("unjudged = 0", "CL") else f"BS, {key} prior"
        cells = [np.concatenate(table[m]) for m in MEASURES]
        print(f"| {label} | " + " | ".join(f"{e.mean():.4f} +- {e.std(ddof=1) / np.sqrt(len(e)):.4f}" for e in cells) + " |")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shallow", action="store_true", help="shallow-to-deep instead of leave-one-run-out")
    ap.add_argument("--data", type=Path, default=default_data())
    ap.add_argument("--runs", type=int, default=0, help="only the first N runs (0: all)")
    ap.add_argument("--depths", default="5,10,20", help="pool depths, comma-separated")
    ap.add_argument("--worlds", default="closed:alone,closed,open:alone,open=100%:alone,open=est:alone,open=est",
                    help="--holes worlds; ':alone' evaluates each run on its own")
    ap.add_argument("--samples", type=int, default=100, help="bootstrap samples a query (shallow: 0 leaves the bootstrap out)")
    ap.add_argument("--list", type=int, default=200, help="--holes-list N of the judge-next experiment")
    ap.add_argument("--draws", type=int, default=5, help="random draws of holes to judge against --holes-list's")
    ap.add_argument("--reps", type=int, default=1000, help="resamples of the topics for the intervals")
    ap.add_argument("--priors", default="run,pool,mix", help="leave-one-run-out: the bootstrap's priors (--holes-prior; "
                    "'': no bootstrap)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    return shallow(args) if args.shallow else loo(args)


if __name__ == "__main__":
    sys.exit(main())
