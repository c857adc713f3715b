"""Speed measured like for like: the same measures on both sides, every ratio from one run.

    pip install '.[bench]'
    PATH=/path/to/trec_eval:$PATH python benchmarks/like_for_like.py            # ~10 minutes
    python benchmarks/like_for_like.py --repeat 5 --out docs/performance-like-for-like.md

Sections (each a ratio ulnorm-eval / peer measured in the same run, repeats interleaved, medians;
wall and CPU time; below 1: ulnorm-eval is faster):

1. trec_eval's own measure set on the 17 Robust 2003 runs of ../shared/data: ``--norm none --names
   trec -m all_trec`` in one process against ``trec_eval -m all_trec`` looped over the files, and
   the same with ``-q``.
2. Default measures: ulnorm-eval's defaults (nDCG@10, AP, RBP with E, IUB, UL1, UL2) against
   trec_eval's defaults, looped.
3. One DL-HARD run (50 queries) in a fresh process against pytrec_eval (benchmarks/peers.py), the
   same measures (nDCG@10 and AP), file parsing included on both sides.
4. Called from Python: ``ulnorm_eval.evaluate`` on the DL-HARD run, qrels loaded, against
   pytrec_eval's ``RelevanceEvaluator.evaluate`` (same measures): the run in memory on both sides
   (a ``Run`` / a dict), and from its file on both sides (parsing included).
5. A whole track: 150 generated runs x 50 queries x 1000 documents on one qrels: ``eval`` and
   ``compare`` (trec_eval's default measures, no variants) against trec_eval looped; ``-j 2``
   against ``-j 1``.
6. Large runs: generated runs of 2M and 7M lines (numeric ids) against pytrec_eval, nDCG@10 and AP on
   both sides (and ulnorm-eval's defaults beside them): peak RSS at 2M, wall time and peak RSS at 7M.
7. Monte Carlo bounds: ``-q -m all_trec --norm e`` against ``--norm none`` on one Robust 2003 run.

Peers missing (trec_eval not on PATH, pytrec_eval not installed) are reported and skipped.  The
report is markdown on stdout (``--out`` also writes it); progress goes to stderr.
"""
from __future__ import annotations

import argparse
import datetime
import importlib.util
import os
import platform
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np

from run import (HERE, SHARED, Stats, _load, _ratio_row, _reported, _rows, bench, compile_installed, dataset, log,
                 plain_copy, table, ulnorm_command, warm)

TRACK_RUNS, TRACK_QUERIES = 150, 50
KEY: dict = {}  # the README's numbers (benchmarks/summary.py's LFL_KEYS), filled in as the sections run
TARGETS = {
    "all_trec": 1.0,          # -m all_trec, 17 runs in one process / trec_eval looped (wall and CPU)
    "all_trec_q": 1.0,        # the same with -q
    "defaults": 0.7,          # default measures and variants / trec_eval's defaults looped
    "fresh": 1.2,             # one 50-query run in a fresh process / pytrec_eval, same measures
    "library": 0.5,           # ulnorm_eval.evaluate / RelevanceEvaluator.evaluate, same measures
    "track": 0.5,             # 150 runs: eval and compare / trec_eval looped
    "jobs": 1.6,              # -j 2 at least this much faster than -j 1
    "montecarlo": 5.0,        # -m all_trec --norm e / --norm none, one run
    "rss_2m": 0.6,            # peak RSS at 2M run lines / pytrec_eval's
    "time_7m": 0.35,          # wall time at 7M run lines / pytrec_eval's
    "rss_7m": 0.3,            # peak RSS at 7M run lines / pytrec_eval's
}
LARGE = ((2000, "2M"), (7000, "7M"))  # generated runs (benchmarks/generate.py, numeric ids): queries x 1000 documents
LOOP = 'q=$1; shift; for f in "$@"; do "$0" $TE_ARGS "$q" "$f" || exit; done'


def loop(trec_eval: str, args: list[str], qrels: str, runs: list[str]) -> list[str]:
    """trec_eval over every run file, one process per run, as a shell loop does it."""
    return ["env", f"TE_ARGS={' '.join(args)}", "sh", "-c", LOOP, trec_eval, qrels, *runs]


def both(what: str, limit: float, u: Stats, peer: Stats | None) -> list[list[str]]:
    """A wall-time target row and a CPU-time target row of the same ratio."""
    wall = _ratio_row(f"{what} (wall)", limit, u, peer)
    cpu = _ratio_row(f"{what} (CPU)", limit, u, peer, key="cpu")
    return [wall, cpu]


def robust(ul, trec_eval, args, outdir, targets) -> list[str]:
    rob = SHARED / "robust03"
    qrels = str(rob / "qrels.txt")
    runs = [plain_copy(p, HERE / "data" / "plain" / "robust03" / p.name.removesuffix(".gz"))
            for p in sorted((rob / "runs").iterdir())][:17]
    warm(qrels, *runs)
    cmds = {"ulnorm-eval -m all_trec (17 runs)": [*ul, "--norm", "none", "--names", "trec", "-m", "all_trec", qrels, *runs],
            "ulnorm-eval -q -m all_trec (17 runs)": [*ul, "-q", "--norm", "none", "--names", "trec", "-m", "all_trec",
                                                    qrels, *runs],
            "ulnorm-eval defaults (17 runs)": [*ul, qrels, *runs]}
    if trec_eval:
        cmds["trec_eval -m all_trec, looped"] = loop(trec_eval, ["-m", "all_trec"], qrels, runs)
        cmds["trec_eval -q -m all_trec, looped"] = loop(trec_eval, ["-q", "-m", "all_trec"], qrels, runs)
        cmds["trec_eval defaults, looped"] = loop(trec_eval, [], qrels, runs)
    log(f"Robust 2003, 17 runs, median of {args.repeat}")
    st = bench(cmds, args.repeat, outdir, "lfl-robust")
    g = st.get
    targets += both("all_trec, 17 Robust 2003 runs / trec_eval looped", TARGETS["all_trec"],
                    st["ulnorm-eval -m all_trec (17 runs)"], g("trec_eval -m all_trec, looped"))
    for key, mine, theirs in (("all_trec", "ulnorm-eval -m all_trec (17 runs)", "trec_eval -m all_trec, looped"),
                              ("defaults", "ulnorm-eval defaults (17 runs)", "trec_eval defaults, looped")):
        u, t = st[mine], g(theirs)
        if u.ok and t is not None and t.ok:
            KEY[f"lfl_{key}_wall"], KEY[f"lfl_{key}_cpu"] = u.med("wall") / t.med("wall"), u.med("cpu") / t.med("cpu")
    targets += both("-q -m all_trec, 17 runs / trec_eval looped", TARGETS["all_trec_q"],
                    st["ulnorm-eval -q -m all_trec (17 runs)"], g("trec_eval -q -m all_trec, looped"))
    targets += both("default measures and variants, 17 runs / trec_eval's defaults looped", TARGETS["defaults"],
                    st["ulnorm-eval defaults (17 runs)"], g("trec_eval defaults, looped"))
    same = _same_numbers(st.get("ulnorm-eval -q -m all_trec (17 runs)"), st.get("trec_eval -q -m all_trec, looped"))
    return ([f"### 17 Robust 2003 runs, median of {args.repeat} (load {_load()} after)", "",
             "ulnorm-eval: one process for the 17 runs; trec_eval: one process per run in a shell loop. "
             "`--names trec -m all_trec` computes trec_eval's measure set (its 'all_trec' nickname).", ""]
            + table(["command", "wall s", "CPU s", "peak RSS MiB"], _rows(st)) + same)


def _same_numbers(u: Stats | None, t: Stats | None) -> list[str]:
    """How many of trec_eval's -q -m all_trec lines ulnorm-eval printed identically (a check of the work)."""
    if not (u and t and u.ok and t.ok):
        return []
    mine = set(u.output.read_text().splitlines())
    theirs = [ln for ln in t.output.read_text().splitlines() if not ln.startswith(("runid", "rbp "))]
    equal = sum(ln in mine for ln in theirs)
    return [f"Check: {equal:,} of trec_eval's {len(theirs):,} lines (runid and rbp left out: trec_eval 10's rbp "
            "reads uninitialised memory at -O2) appear identically in ulnorm-eval's output.", ""]


def fresh_and_library(ul, args, outdir, targets) -> list[str]:
    dl = SHARED / "dlhard-passage"
    qrels = str(dl / "qrels.txt")
    run = plain_copy(dl / "runs" / "bm25.run.gz", HERE / "data" / "plain" / "dlhard_bm25.run")
    warm(qrels, run)
    have_pytrec = importlib.util.find_spec("pytrec_eval") is not None
    cmds = {"ulnorm-eval --norm none -m nDCG@10 -m AP": [*ul, "--norm", "none", "-m", "nDCG@10", "-m", "AP", qrels, run]}
    if have_pytrec:
        cmds["pytrec_eval (peers.py: parse, nDCG@10 and AP)"] = [sys.executable, str(HERE / "peers.py"), "pytrec_eval",
                                                                 qrels, run]
    # what any evaluation in a fresh process pays before it reads a line (reported, not a target)
    floor = "imports alone: python -c 'import numpy, pyarrow, pyarrow._compute, click'"
    cmds[floor] = [sys.executable, "-c", "import numpy, pyarrow, pyarrow._compute, click"]
    log(f"DL-HARD bm25, fresh processes, median of {args.small_repeat}")
    st = bench(cmds, args.small_repeat, outdir, "lfl-fresh")
    u, t = st["ulnorm-eval --norm none -m nDCG@10 -m AP"], st.get("pytrec_eval (peers.py: parse, nDCG@10 and AP)")
    targets += both("one 50-query run, fresh process / pytrec_eval, same measures", TARGETS["fresh"], u, t)
    if u.ok and t is not None and t.ok:
        KEY["lfl_fresh_cpu"] = u.med("cpu") / t.med("cpu")
    report = [f"### One DL-HARD run (bm25, 50 queries x 1000), fresh processes, median of {args.small_repeat}", ""]
    report += table(["command", "wall s", "CPU s", "peak RSS MiB"], _rows(st))
    f = st[floor]
    if f.ok and u.ok and t is not None and t.ok:
        report += [f"The imports ulnorm-eval cannot do without (numpy, pyarrow, click) take {f.med('wall'):.3f} s, "
                   f"{f.med('wall') / t.med('wall'):.2f}x pytrec_eval's whole evaluation (wall); the evaluation "
                   f"itself adds {u.med('wall') - f.med('wall'):.3f} s.", ""]
    if not have_pytrec:
        targets.append(["library evaluate / RelevanceEvaluator.evaluate", f"≤ {TARGETS['library']}", "-", "",
                        "SKIP (pytrec_eval not installed)"])
        return report
    proc = subprocess.run([sys.executable, __file__, "--library-timing", qrels, run, str(args.library_repeat)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        targets.append(["library evaluate / RelevanceEvaluator.evaluate", f"≤ {TARGETS['library']}", "-", "",
                        f"SKIP ({(proc.stderr.strip().splitlines() or ['failed'])[-1]})"])
        return report
    t = dict(line.split("\t") for line in proc.stdout.strip().splitlines())
    t = {k: float(v) for k, v in t.items()}
    for what, mine, theirs in (("run in memory", "ulnorm_run", "pytrec_dict"),
                               ("run from its file", "ulnorm_path", "pytrec_parse")):
        r = t[mine] / t[theirs]
        if what == "run in memory":
            KEY["lfl_library"] = r
        targets.append([f"library, {what}: ulnorm_eval.evaluate / RelevanceEvaluator.evaluate",
                        f"≤ {TARGETS['library']}", f"{r:.2f}", "", "PASS" if r <= TARGETS["library"] else "FAIL"])
    report += [f"Called from Python, median of {args.library_repeat} calls (ms): "
               f"`ulnorm_eval.evaluate(qrels, run)` {1e3 * t['ulnorm_run']:.1f} (a loaded `Run`), "
               f"{1e3 * t['ulnorm_path']:.1f} (the run's file); "
               f"`RelevanceEvaluator.evaluate` {1e3 * t['pytrec_dict']:.1f} (a loaded dict), "
               f"{1e3 * t['pytrec_parse']:.1f} (the file parsed into a dict, then evaluated). "
               "Both with the qrels loaded, nDCG@10 and AP only.", ""]
    return report


def library_timing(qrels: str, run: str, repeat: int) -> None:
    """Print the median seconds of each in-process call (run in a child: nothing else imported)."""
    import time

    import pytrec_eval

    import ulnorm_eval
    from ulnorm_eval.pipeline.evaluate import load_run

    def med(f):
        f()
        ts = []
        for _ in range(repeat):
            t = time.perf_counter()
            f()
            ts.append(time.perf_counter() - t)
        return statistics.median(ts)

    from ulnorm_eval import api

    Q = api.to_qrels(qrels)
    R = load_run(run, Q)
    qd: dict = {}
    with open(qrels) as f:
        for line in f:
            q, _, d, g = line.split()
            qd.setdefault(q, {})[d] = int(g)

    def parse():
        rd: dict = {}
        with open(run) as f:
            for line in f:
                q, _, d, _, s, _ = line.split()
                rd.setdefault(q, {})[d] = float(s)
        return rd

    rd = parse()
    ev = pytrec_eval.RelevanceEvaluator(qd, {"ndcg_cut_10", "map"})
    ms = ["nDCG@10", "AP"]
    out = {"ulnorm_run": med(lambda: ulnorm_eval.evaluate(Q, R, ms, variants=[])),
           "ulnorm_path": med(lambda: ulnorm_eval.evaluate(Q, run, ms, variants=[])),
           "pytrec_dict": med(lambda: ev.evaluate(rd)),
           "pytrec_parse": med(lambda: ev.evaluate(parse()))}
    for k, v in out.items():
        print(f"{k}\t{v}")


def track_files(outdir: Path) -> tuple[str, list[str]]:
    """One generated qrels (50 queries) and 150 runs on it: the generator's run with its scores
    perturbed per run (seeded), so that every run ranks the same documents differently."""
    from generate import generate

    d = outdir / f"track_q{TRACK_QUERIES}_r{TRACK_RUNS}"
    qrels, base = d / "track.qrels", d / "track.run"
    runs = [d / f"run{i:03d}" for i in range(TRACK_RUNS)]
    if all(p.exists() for p in runs) and qrels.exists():
        return str(qrels), [str(p) for p in runs]
    log(f"generating a track: {TRACK_RUNS} runs x {TRACK_QUERIES} queries x 1000 documents into {d}")
    generate(str(d), TRACK_QUERIES, 1000, 30, 7, name="track")
    lines = base.read_bytes().splitlines()
    fields = [ln.split() for ln in lines]
    q = [f[0] for f in fields]
    doc = [f[2] for f in fields]
    score = np.array([float(f[4]) for f in fields])
    for i, p in enumerate(runs):
        rng = np.random.default_rng(1000 + i)
        s = score * rng.lognormal(0.0, 0.5, len(score))
        text = b"".join(b"%s Q0 %s 0 %.6f run%03d\n" % (a, b, c, i) for a, b, c in zip(q, doc, s))
        tmp = p.with_suffix(".tmp")
        tmp.write_bytes(text)
        tmp.rename(p)
    return str(qrels), [str(p) for p in runs]


def track(ul, trec_eval, args, outdir, targets) -> list[str]:
    qrels, runs = track_files(HERE / "data")
    warm(qrels, *runs)
    same = ["--norm", "none", "-m", "nDCG@10", "-m", "AP"]
    cmds = {"ulnorm-eval eval -j 1": [*ul, "eval", *same, "-j", "1", qrels, *runs],
            "ulnorm-eval eval -j 2": [*ul, "eval", *same, "-j", "2", qrels, *runs],
            "ulnorm-eval compare -j 1": [*ul, "compare", *same, "-j", "1", qrels, *runs]}
    if trec_eval:
        cmds["trec_eval looped"] = loop(trec_eval, ["-m", "ndcg_cut.10", "-m", "map"], qrels, runs)
    log(f"a track of {TRACK_RUNS} runs, median of {args.repeat}")
    st = bench(cmds, args.repeat, outdir, "lfl-track")
    te = st.get("trec_eval looped")
    targets += both(f"{TRACK_RUNS} runs: eval / trec_eval looped", TARGETS["track"], st["ulnorm-eval eval -j 1"], te)
    targets += both(f"{TRACK_RUNS} runs: compare / trec_eval looped", TARGETS["track"], st["ulnorm-eval compare -j 1"], te)
    j1, j2 = st["ulnorm-eval eval -j 1"], st["ulnorm-eval eval -j 2"]
    ceiling = []
    if j1.ok and j2.ok:
        r = j1.med("wall") / j2.med("wall")
        targets.append([f"{TRACK_RUNS} runs: speed-up of -j 2 over -j 1 (wall)", f"≥ {TARGETS['jobs']}", f"{r:.2f}",
                        "", "PASS" if r >= TARGETS["jobs"] else "FAIL"])
        # -j 1 already keeps more than one core busy (its read-ahead thread parses the next file while
        # this one is scored): on this machine's cores -j 2 cannot beat -j 1 by more than this
        cores = os.cpu_count() or 1
        best = j1.med("wall") / (j2.med("cpu") / cores)
        ceiling = [f"`-j 1` keeps {j1.med('cpu') / j1.med('wall'):.2f} cores busy (CPU / wall time). With {cores} "
                   f"cores, `-j 2` cannot take less wall time than its CPU time / {cores} = "
                   f"{j2.med('cpu') / cores:.3f} s, so its speed-up over `-j 1` here is at most {best:.2f}.", ""]
    return ([f"### A track: {TRACK_RUNS} generated runs x {TRACK_QUERIES} queries x 1000 documents, one qrels, "
             f"median of {args.repeat} (load {_load()} after)", "",
             "nDCG@10 and AP on both sides (`--norm none -m nDCG@10 -m AP`; trec_eval `-m ndcg_cut.10 -m map`); "
             "compare also tests every pair of runs.", ""]
            + table(["command", "wall s", "CPU s", "peak RSS MiB"], _rows(st)) + ceiling)


def large(ul, args, outdir, targets) -> list[str]:
    """Generated runs of 2M and 7M lines (numeric ids, 30 judged documents per query, seed 1) against
    pytrec_eval: the same measures (nDCG@10 and AP) on both sides, and ulnorm-eval's defaults."""
    if importlib.util.find_spec("pytrec_eval") is None:
        targets.append(["large runs / pytrec_eval", "-", "-", "", "SKIP (pytrec_eval not installed)"])
        return []
    report = []
    reps = max(1, args.repeat // 2 + 1)
    for queries, size in LARGE:
        qrels, run = dataset(HERE / "data", queries, 1)
        warm(qrels, run)
        cmds = {f"ulnorm-eval --norm none -m nDCG@10 -m AP ({size})": [*ul, "--norm", "none", "-m", "nDCG@10", "-m", "AP",
                                                                     qrels, run],
                f"ulnorm-eval defaults ({size})": [*ul, qrels, run],
                f"pytrec_eval ({size}; peers.py: parse, nDCG@10 and AP)": [sys.executable, str(HERE / "peers.py"),
                                                                          "pytrec_eval", qrels, run]}
        log(f"{size} run lines, median of {reps}")
        st = bench(cmds, reps, outdir, f"lfl-{size}")
        same, dflt, peer = (st[k] for k in cmds)
        for what, u in (("same measures", same), ("default measures and variants", dflt)):
            if size == "2M":
                targets.append(_ratio_row(f"{size} lines, {what}: peak RSS / pytrec_eval", TARGETS["rss_2m"], u, peer, "rss"))
            else:
                targets.append(_ratio_row(f"{size} lines, {what}: wall time / pytrec_eval", TARGETS["time_7m"], u, peer))
                targets.append(_ratio_row(f"{size} lines, {what}: peak RSS / pytrec_eval", TARGETS["rss_7m"], u, peer, "rss"))
        report += [f"### {size} run lines ({queries:,} queries x 1000 documents, numeric ids), median of {reps} "
                   f"(load {_load()} after)", ""] + table(["command", "wall s", "CPU s", "peak RSS MiB"], _rows(st))
    return report


def montecarlo(ul, args, outdir, targets) -> list[str]:
    rob = SHARED / "robust03"
    qrels = str(rob / "qrels.txt")
    run = plain_copy(rob / "runs" / "input.InexpC2.gz", HERE / "data" / "plain" / "robust03" / "input.InexpC2")
    cmds = {"ulnorm-eval -q -m all_trec --norm e": [*ul, "-q", "-m", "all_trec", "--norm", "e", qrels, run],
            "ulnorm-eval -q -m all_trec --norm none": [*ul, "-q", "-m", "all_trec", "--norm", "none", qrels, run]}
    log("Monte Carlo bounds: one Robust 2003 run")
    st = bench(cmds, max(1, args.repeat // 2), outdir, "lfl-mc")
    targets += both("-q -m all_trec --norm e / --norm none, one Robust 2003 run", TARGETS["montecarlo"],
                    st["ulnorm-eval -q -m all_trec --norm e"], st["ulnorm-eval -q -m all_trec --norm none"])
    return ([f"### Monte Carlo bounds on one Robust 2003 run (input.InexpC2), median of {max(1, args.repeat // 2)}", "",
             "E of iprec_at_recall, 11pt_avg and G is a Monte Carlo mean (1,000 random placements of each "
             "query's relevant judged documents among its judged documents, shared by every measure); the others "
             "are exact.", ""]
            + table(["command", "wall s", "CPU s", "peak RSS MiB"], _rows(st)))


def update_docs(report: str, load: str) -> None:
    """The report into docs/performance.md (its like-for-like block), the ratios into
    docs/performance-summary.json, and README.md's speed sentence rewritten from them."""
    import json

    from run import _demoted
    from summary import BEGIN, END, KEYS, LFL_KEYS, readme_sentence, replace_block

    KEY.update(lfl_date=f"{datetime.date.today():%d %B %Y}".lstrip("0"), lfl_load=load)
    missing = [k for k in LFL_KEYS if k not in KEY]
    if missing:
        log(f"docs not updated: no {', '.join(missing)} in this run (trec_eval or pytrec_eval missing?)")
        return
    root = HERE.parent
    path = root / "docs" / "performance-summary.json"
    data = json.loads(path.read_text())
    data.update({k: KEY[k] for k in LFL_KEYS})
    path.write_text(json.dumps({k: data[k] for k in KEYS}, indent=1) + "\n")
    readme = root / "README.md"
    readme.write_text(replace_block(readme.read_text(), BEGIN, END, readme_sentence(data)))
    perf = root / "docs" / "performance.md"
    perf.write_text(replace_block(perf.read_text(), "<!-- BEGIN like-for-like-report -->",
                                  "<!-- END like-for-like-report -->", "\n" + _demoted(report) + "\n"))
    log("README.md, docs/performance.md and docs/performance-summary.json updated")


def main() -> int:
    if len(sys.argv) == 5 and sys.argv[1] == "--library-timing":
        library_timing(sys.argv[2], sys.argv[3], int(sys.argv[4]))
        return 0
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3, help="runs per command of the larger cases (medians; default 3)")
    ap.add_argument("--small-repeat", type=int, default=7, help="runs per command of the fresh-process case (default 7)")
    ap.add_argument("--library-repeat", type=int, default=21, help="in-process calls timed (default 21)")
    ap.add_argument("--skip", action="append", default=[], choices=("robust", "fresh", "track", "large", "montecarlo"),
                    help="leave a section out (repeatable)")
    ap.add_argument("--out", type=Path, help="also write the markdown report to this file")
    ap.add_argument("--strict", action="store_true", help="exit 1 when a target fails")
    ap.add_argument("--update-docs", action="store_true",
                    help="write the report into docs/performance.md and its ratios into docs/performance-summary.json "
                         "and README.md's speed sentence (every section: no --skip)")
    args = ap.parse_args()
    if args.update_docs and args.skip:
        ap.error("--update-docs needs every section (no --skip)")
    if not (SHARED / "robust03").is_dir() or not (SHARED / "dlhard-passage").is_dir():
        sys.exit(f"needs ../shared/data (or $ULNORM_EVAL_SHARED_DATA): {SHARED} has no robust03 / dlhard-passage")
    ul = ulnorm_command()
    compile_installed()
    trec_eval = shutil.which("trec_eval")
    outdir = HERE / "results"
    outdir.mkdir(exist_ok=True)
    load_before = _load()
    targets: list[list[str]] = []
    report: list[str] = []
    if "robust" not in args.skip:
        report += robust(ul, trec_eval, args, outdir, targets)
    if "fresh" not in args.skip:
        report += fresh_and_library(ul, args, outdir, targets)
    if "track" not in args.skip:
        report += track(ul, trec_eval, args, outdir, targets)
    if "large" not in args.skip:
        report += large(ul, args, outdir, targets)
    if "montecarlo" not in args.skip:
        report += montecarlo(ul, args, outdir, targets)
    head = [f"## ulnorm-eval like-for-like benchmark, {datetime.datetime.now().astimezone():%Y-%m-%d %H:%M %Z}", "",
            f"- machine: {platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
            f"- load average (1/5/15 min): {load_before} before, {_load()} after",
            f"- trec_eval: {trec_eval or 'not on PATH (its rows are skipped)'}",
            f"- ulnorm-eval: {describe_install(ul)}", ""]
    if not trec_eval:
        head.append("- no trec_eval on PATH: build trec_eval 10 with `make CFLAGS='-O2 -I. -w'` and put it on PATH\n")
    text = "\n".join(head + ["### Targets", ""]
                     + table(["target", "limit", "measured", "same with CPU time", "result"], targets) + report)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
        log(f"report written to {args.out}")
    if args.update_docs:
        update_docs(text, _load().split(" / ")[0])
    return 1 if args.strict and any(t[-1] == "FAIL" for t in targets) else 0


def describe_install(ul: list[str]) -> str:
    """Which ulnorm-eval is timed, and how it is installed: an editable install (``pip install -e``)
    adds its import hook to every process, about 10 ms of each fresh-process figure on this
    machine, which the README's ``pip install .`` does not have."""
    import json
    from importlib import metadata

    try:
        dist = metadata.distribution("ulnorm-eval")
    except metadata.PackageNotFoundError:
        return f"{ul[0]} (not installed in this interpreter's environment)"
    direct = json.loads(dist.read_text("direct_url.json") or "{}")
    editable = direct.get("dir_info", {}).get("editable", False)
    kind = ("an editable install (pip install -e): each process also loads the editable import hook; "
            "`pip install .` times start-up as users get it") if editable else "a regular install (pip install .)"
    return f"{dist.version} at {ul[0]}, {kind}"


if __name__ == "__main__":
    sys.exit(main())
