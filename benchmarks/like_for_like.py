"""Speed measured like for like: the same measures on both sides, every ratio from one run.

    pip install '.[bench]'
    PATH=/path/to/trec_eval:$PATH python benchmarks/like_for_like.py            # ~20 minutes
    python benchmarks/like_for_like.py --repeat 5 --out docs/performance-like-for-like.md

Sections (each a ratio ulnorm-eval / peer measured in the same run, repeats interleaved, medians;
wall and CPU time; below 1: ulnorm-eval is faster):

0. ranx's numba compilation: one DL-HARD run in a fresh process with an empty numba cache (its first
   use: it compiles), once, then with the benchmark's cache (benchmarks/results/numba-cache), which
   every later ranx figure uses (a user's later sessions).
1. trec_eval's own measure set on the 17 Robust 2003 runs of ../shared/data: ``--norm none --names
   trec -m all_trec`` in one process against ``trec_eval -m all_trec`` looped over the files, and
   the same with ``-q``; nDCG@10 and AP of the 17 runs in one process against pytrec_eval and ranx,
   and ranx's per-query values against ulnorm-eval's under ``--ties rank`` (and on the DL-HARD runs).
2. Default measures: ulnorm-eval's defaults (nDCG@10, AP and RBP(p=0.8), each with E and EM, E on
   a shuffle of the run's own ranked documents: --pool run) against trec_eval's defaults, looped.
3. One DL-HARD run (50 queries) in a fresh process against pytrec_eval and ranx (benchmarks/peers.py),
   the same measures (nDCG@10 and AP), file parsing included on both sides.
4. Called from Python: ``ulnorm_eval.evaluate`` on the DL-HARD run, qrels loaded, against
   pytrec_eval's ``RelevanceEvaluator.evaluate`` and ``ranx.evaluate`` (same measures): the run in
   memory on every side (a ``Run`` / a dict / a ranx ``Run``), and from its file (parsing included).
5. A whole track: 150 generated runs x 50 queries x 1000 documents on one qrels: ``eval`` and
   ``compare`` (nDCG@10 and AP) against trec_eval looped; ``-j 2``'s parallel efficiency (its
   speed-up over ``-j 1`` / the ideal speed-up, cores / the cores ``-j 1`` keeps busy); the Dask path
   on a 2-worker LocalCluster against ``-j 2`` (CPU time includes the cluster's processes).
6. Large runs: generated runs of 2M and 7M lines (numeric ids; TREC-style string ids at 7M too)
   against pytrec_eval, nDCG@10 and AP on both sides (and ulnorm-eval's defaults beside them): peak
   RSS at 2M, wall time and peak RSS at 7M; at 7M (numeric ids) against ranx as well.
7. Monte Carlo bounds: ``-q -m all_trec --norm e`` against ``--norm none`` on one Robust 2003 run.

Every figure comes with the 1-minute load average taken just before its runs, and the report's head
names the CPU model, the cores available, numpy's SIMD level and the Python, numpy and pyarrow
versions.  ``--update-docs`` also adds this machine's row to docs/performance.md's per-machine table
(replacing only a row of the same CPU model and core count), and the large section's 7M-line ratios
(default measures and variants / pytrec_eval: wall time and peak RSS, numeric ids; wall time, string
ids) to README.md's speed sentence, dated, with the CPU model and the section's load.

Peers missing (trec_eval not on PATH, pytrec_eval or ranx not installed) are reported and skipped.  The
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

import run as run_module
from run import (HERE, ROW_HEADERS, SHARED, Stats, _load, _ratio_row, _reported, _rows, _version, bench, compile_installed,
                 dataset, log, machine, machine_lines, plain_copy, section_load, table, ulnorm_command, warm)

TRACK_RUNS, TRACK_QUERIES = 150, 50
KEY: dict = {}  # the README's numbers (benchmarks/summary.py's LFL_KEYS), filled in as the sections run
TARGET_ROWS: list = []  # every target row of this run (the per-machine table of docs/performance.md reads them)
TARGETS = {  # (wall-time limit, CPU-time limit) where a row has both
    "all_trec": (0.6, 0.9),   # -m all_trec, 17 runs in one process / trec_eval looped
    "all_trec_q": (1.0, 1.0),  # the same with -q
    "defaults": (0.5, 0.7),   # default measures and variants / trec_eval's defaults looped
    "fresh": (1.0, 1.0),      # one 50-query run in a fresh process / pytrec_eval, same measures
    "library": 0.4,           # ulnorm_eval.evaluate / RelevanceEvaluator.evaluate, same measures (in memory, from file)
    "ranx": 0.5,              # / ranx (its compilation cached), same measures: in-process and 7M lines
    "track": (0.5, 0.5),      # 150 runs: eval and compare / trec_eval looped
    "montecarlo": (5.0, 5.0),  # -m all_trec --norm e / --norm none, one run
    "rss_2m": 0.5,            # peak RSS at 2M run lines / pytrec_eval's
    "time_7m": 0.35,          # wall time at 7M run lines (numeric ids) / pytrec_eval's
    "time_7m_strings": 0.25,  # wall time at 7M run lines (TREC-style string ids) / pytrec_eval's
    "rss_7m": 0.3,            # peak RSS at 7M run lines / pytrec_eval's
}
RANX = "ranx (peers.py: its readers, ndcg@10 and map)"
# generated runs (benchmarks/generate.py): queries x 1000 documents, document id style
LARGE = ((2000, "2M", "numeric"), (7000, "7M", "numeric"), (7000, "7M", "trec"))
LOOP = 'q=$1; shift; for f in "$@"; do "$0" $TE_ARGS "$q" "$f" || exit; done'


def loop(trec_eval: str, args: list[str], qrels: str, runs: list[str]) -> list[str]:
    """trec_eval over every run file, one process per run, as a shell loop does it."""
    return ["env", f"TE_ARGS={' '.join(args)}", "sh", "-c", LOOP, trec_eval, qrels, *runs]


def both(what: str, limits: tuple, u: Stats, peer: Stats | None) -> list[list[str]]:
    """A wall-time target row and a CPU-time target row of the same ratio (limits: wall, CPU)."""
    wall = _ratio_row(f"{what} (wall)", limits[0], u, peer)
    cpu = _ratio_row(f"{what} (CPU)", limits[1], u, peer, key="cpu")
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
    return ([f"### 17 Robust 2003 runs, median of {args.repeat} ({section_load(st)})", "",
             "ulnorm-eval: one process for the 17 runs; trec_eval: one process per run in a shell loop. "
             "`--names trec -m all_trec` computes trec_eval's measure set (its 'all_trec' nickname).", ""]
            + table(ROW_HEADERS, _rows(st)) + same + peers_17(ul, qrels, runs, args, outdir, targets))


def peers_17(ul, qrels: str, runs: list[str], args, outdir: Path, targets) -> list[str]:
    """nDCG@10 and AP of the 17 Robust 2003 runs, each tool in one process for all of them: ulnorm-eval
    against pytrec_eval and ranx (numba cache warm); then ranx's per-query values against ulnorm-eval's
    under ``--ties rank``."""
    peer = [sys.executable, str(HERE / "peers.py")]
    mine = "ulnorm-eval --norm none -m nDCG@10 -m AP (17 runs)"
    cmds = {mine: [*ul, "--norm", "none", "-m", "nDCG@10", "-m", "AP", qrels, *runs]}
    if have("pytrec_eval"):
        cmds["pytrec_eval (peers.py, 17 runs)"] = [*peer, "pytrec_eval", qrels, *runs]
    if have("ranx"):
        cmds[RANX + ", 17 runs"] = [*peer, "ranx", qrels, *runs]
    if len(cmds) == 1:
        return []
    log(f"Robust 2003, 17 runs, nDCG@10 and AP against the Python peers, median of {args.repeat}")
    st = bench(cmds, args.repeat, outdir, "lfl-robust-peers", {RANX + ", 17 runs": ranx_env()},
               limit={RANX + ", 17 runs": args.ranx_repeat})
    for label in list(cmds)[1:]:
        targets.append(_reported(_ratio_row(f"17 Robust 2003 runs, nDCG@10 and AP / {label.split(' (')[0]}", 0,
                                            st[mine], st[label])))
    out = [f"#### The same 17 runs, nDCG@10 and AP, against the Python peers, median of {args.repeat} "
           f"(ranx: of {min(args.repeat, args.ranx_repeat)}) "
           f"({section_load(st)})", "",
           "Each tool in one process for the 17 runs (its qrels read once); ranx with its numba cache warm.", ""]
    out += table(ROW_HEADERS, _rows(st))
    if have("ranx"):
        dl = SHARED / "dlhard-passage"
        dl_runs = [plain_copy(p, HERE / "data" / "plain" / "dlhard" / p.name.removesuffix(".gz"))
                   for p in sorted((dl / "runs").glob("*.run.gz"))]
        out += ranx_per_query(ul, [("Robust 2003", qrels, runs), ("DL-HARD", str(dl / "qrels.txt"), dl_runs)], outdir)
    return out


def ranx_per_query(ul, sets, outdir: Path) -> list[str]:
    """ranx's per-query nDCG@10 and AP against ulnorm-eval's under ``--ties rank`` (rank column, then
    file order), full precision: equal within 1e-12, and for the queries that differ, whether their
    run has equal scores (ranx orders a query's documents by score with numba's argsort, which is
    not stable: tied documents come out in an order of its own)."""
    from collections import defaultdict

    out = ["#### Per-query values: ranx against ulnorm-eval `--ties rank`", "",
           "| runs | queries x measures | equal (within 1e-12) | differ | of which in queries with tied scores | "
           "largest difference |", "|---|---|---|---|---|---|"]
    for name, qrels, runs in sets:
        proc = subprocess.run([sys.executable, str(HERE / "peers.py"), "ranx-per-query", qrels, *runs],
                              capture_output=True, text=True, env={**os.environ, **ranx_env()})
        mine = subprocess.run([*ul, "-q", "-f", "tsv", "--ties", "rank", "--norm", "none", "-m", "nDCG@10", "-m", "AP",
                               qrels, *runs], capture_output=True, text=True)
        if proc.returncode or mine.returncode:
            out.append(f"| {name} | failed: {(proc.stderr or mine.stderr).strip().splitlines()[-1:]} | | | | |")
            continue
        theirs = {}
        for line in proc.stdout.splitlines():
            run, q, m, v = line.split("\t")
            theirs[(run, q, m)] = float(v)
        lines = mine.stdout.splitlines()
        head = lines[0].split("\t")
        ours = {}
        for line in lines[1:]:
            f = line.split("\t")
            if f[1] == "all":
                continue
            for m, v in zip(head[2:], f[2:]):
                ours[(f[0], f[1], m)] = float(v)
        ties = defaultdict(bool)
        for path in runs:
            seen = set()
            with open(path) as fh:
                for row in fh:
                    p = row.split()
                    key = (p[0], p[4])
                    ties[(Path(path).name, p[0])] |= key in seen
                    seen.add(key)
        keys = sorted(set(ours) & set(theirs))
        diff = [k for k in keys if abs(ours[k] - theirs[k]) > 1e-12]
        tied = sum(ties[(k[0], k[1])] for k in diff)
        worst = max((abs(ours[k] - theirs[k]) for k in diff), default=0.0)
        missing = len(set(ours) ^ set(theirs))
        out.append(f"| {name}, {len(runs)} runs | {len(keys):,}" + (f" ({missing} in one tool only)" if missing else "")
                   + f" | {len(keys) - len(diff):,} | {len(diff):,} | {tied:,} | {worst:.3g} |")
    return out + [""]


def _same_numbers(u: Stats | None, t: Stats | None) -> list[str]:
    """How many of trec_eval's -q -m all_trec lines ulnorm-eval printed identically (a check of the work)."""
    if not (u and t and u.ok and t.ok):
        return []
    mine = set(u.output.read_text().splitlines())
    theirs = [ln for ln in t.output.read_text().splitlines() if not ln.startswith(("runid", "rbp "))]
    equal = sum(ln in mine for ln in theirs)
    return [f"Check: {equal:,} of trec_eval's {len(theirs):,} lines (runid and rbp left out: trec_eval 10's rbp "
            "reads uninitialised memory at -O2) appear identically in ulnorm-eval's output.", ""]


def numba_cache() -> Path:
    """The numba cache directory of the benchmark's ranx runs (benchmarks/results/numba-cache), kept
    between runs like the data: its 'cached' figures are a user's second and later sessions."""
    d = HERE / "results" / "numba-cache"
    d.mkdir(parents=True, exist_ok=True)
    return d


def ranx_env() -> dict[str, str]:
    return {"NUMBA_CACHE_DIR": str(numba_cache())}


def have(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def fresh_and_library(ul, args, outdir, targets) -> list[str]:
    dl = SHARED / "dlhard-passage"
    qrels = str(dl / "qrels.txt")
    run = plain_copy(dl / "runs" / "bm25.run.gz", HERE / "data" / "plain" / "dlhard_bm25.run")
    warm(qrels, run)
    have_pytrec, have_ranx = have("pytrec_eval"), have("ranx")
    peer = [sys.executable, str(HERE / "peers.py")]
    cmds = {"ulnorm-eval --norm none -m nDCG@10 -m AP": [*ul, "--norm", "none", "-m", "nDCG@10", "-m", "AP", qrels, run]}
    env = {}
    if have_pytrec:
        cmds["pytrec_eval (peers.py: parse, nDCG@10 and AP)"] = [*peer, "pytrec_eval", qrels, run]
    report = []
    if have_ranx:
        cmds[RANX + ", numba cache warm"] = [*peer, "ranx", qrels, run]
        env[RANX + ", numba cache warm"] = ranx_env()
    # what any evaluation in a fresh process pays before it reads a line (reported, not a target)
    floor = "imports alone: python -c 'import numpy, pyarrow, pyarrow._compute, click'"
    cmds[floor] = [sys.executable, "-c", "import numpy, pyarrow, pyarrow._compute, click"]
    # without pyarrow: what a reader of our own for small files could at best start from
    floor2 = "imports alone: python -c 'import numpy, click'"
    cmds[floor2] = [sys.executable, "-c", "import numpy, click"]
    log(f"DL-HARD bm25, fresh processes, median of {args.small_repeat}")
    st = bench(cmds, args.small_repeat, outdir, "lfl-fresh", env, limit={k: args.ranx_repeat for k in env})
    u, t = st["ulnorm-eval --norm none -m nDCG@10 -m AP"], st.get("pytrec_eval (peers.py: parse, nDCG@10 and AP)")
    targets += both("one 50-query run, fresh process / pytrec_eval, same measures", TARGETS["fresh"], u, t)
    if have_ranx:
        targets.append(_reported(_ratio_row("one 50-query run, fresh process / ranx (numba cache warm), same measures",
                                            0, u, st[RANX + ", numba cache warm"])))
    if u.ok and t is not None and t.ok:
        KEY["lfl_fresh_cpu"] = u.med("cpu") / t.med("cpu")
    report = [f"### One DL-HARD run (bm25, 50 queries x 1000), fresh processes, median of {args.small_repeat} "
              + (f"(ranx: of {min(args.small_repeat, args.ranx_repeat)}) " if have_ranx else "")
              + f"({section_load(st)})", ""] + table(ROW_HEADERS, _rows(st)) + report
    f = st[floor]
    if f.ok and u.ok and t is not None and t.ok:
        report += [f"The imports ulnorm-eval cannot do without (numpy, pyarrow, click) take {f.med('wall'):.3f} s, "
                   f"{f.med('wall') / t.med('wall'):.2f}x pytrec_eval's whole evaluation (wall); the evaluation "
                   f"itself adds {u.med('wall') - f.med('wall'):.3f} s.", ""]
        f2 = st[floor2]
        if f2.ok:
            report[-2] += (f" Without pyarrow, numpy and click alone take {f2.med('wall'):.3f} s "
                           f"({f2.med('wall') / t.med('wall'):.2f}x), before any module of ulnorm-eval is imported.")
    if not have_pytrec:
        targets.append(["library evaluate / RelevanceEvaluator.evaluate", f"≤ {TARGETS['library']}", "-", "",
                        "SKIP (pytrec_eval not installed)"])
        return report
    proc = subprocess.run([sys.executable, __file__, "--library-timing", qrels, run, str(args.library_repeat)],
                          capture_output=True, text=True, env={**os.environ, **ranx_env()})
    if proc.returncode != 0:
        targets.append(["library evaluate / RelevanceEvaluator.evaluate", f"≤ {TARGETS['library']}", "-", "",
                        f"SKIP ({(proc.stderr.strip().splitlines() or ['failed'])[-1]})"])
        return report
    t = {}
    for line in proc.stdout.strip().splitlines():
        k, wall, cpu = line.split("\t")
        t[k] = (float(wall), float(cpu))
    rows = [("run in memory", "ulnorm_run", "pytrec_dict", "RelevanceEvaluator.evaluate", TARGETS["library"]),
            ("run from its file", "ulnorm_path", "pytrec_parse", "RelevanceEvaluator.evaluate", TARGETS["library"])]
    if "ranx_run" in t:
        rows += [("run in memory", "ulnorm_run", "ranx_run", "ranx.evaluate (numba cache warm)", TARGETS["ranx"]),
                 ("run from its file", "ulnorm_path", "ranx_path", "ranx.evaluate (numba cache warm)", None)]
    for what, mine, theirs, name, limit in rows:
        r, rc = t[mine][0] / t[theirs][0], t[mine][1] / t[theirs][1]
        if (mine, theirs) == ("ulnorm_run", "pytrec_dict"):
            KEY["lfl_library"] = r
        row = [f"library, {what}: ulnorm_eval.evaluate / {name}", f"≤ {limit}", f"{r:.2f}", f"{rc:.2f}",
               "PASS" if limit is not None and r <= limit else "FAIL"]
        targets.append(_reported(row) if limit is None else row)
    ms = {k: f"{1e3 * w:.1f} ({1e3 * c:.1f})" for k, (w, c) in t.items()}
    sec = {k: f"{w:.2f} s ({c:.2f} s)" for k, (w, c) in t.items()}
    report += [f"Called from Python, median of {args.library_repeat} calls, ms of wall time (of CPU time; "
               f"load {t['load'][0]:.2f} before, {t['load'][1]:.2f} after): "
               f"`ulnorm_eval.evaluate(qrels, run)` {ms['ulnorm_run']} (a loaded `Run`), "
               f"{ms['ulnorm_path']} (the run's file); "
               f"`RelevanceEvaluator.evaluate` {ms['pytrec_dict']} (a loaded dict), "
               f"{ms['pytrec_parse']} (the file parsed into a dict, then evaluated). "
               "Both with the qrels loaded, nDCG@10 and AP only.", ""]
    if "ranx_run" in t:
        report += [f"ranx (`ranx.evaluate(qrels, run, ['ndcg@10', 'map'])`, its `Qrels` loaded, numba cache warm): "
                   f"{ms['ranx_run']} on a loaded `Run`, {ms['ranx_path']} with `Run.from_file` each time; in a "
                   f"fresh session its first `Run.from_file` took {sec['ranx_first_load']} and its first `evaluate` "
                   f"{sec['ranx_first_eval']} (numba loading the cached machine code; `import ranx` "
                   f"{sec['ranx_import']}). ranx runs its numba kernels on all cores (its default `threads=0`), "
                   "so its CPU time exceeds its wall time.", ""]
    return report


def ranx_compilation(outdir: Path) -> list[str]:
    """ranx on one run in a fresh process with an empty numba cache (it compiles every function it
    uses: a user's first session) and, to warm the benchmark's cache, once more with it (before any
    other ranx figure)."""
    import tempfile

    dl = SHARED / "dlhard-passage"
    qrels = str(dl / "qrels.txt")
    run = plain_copy(dl / "runs" / "bm25.run.gz", HERE / "data" / "plain" / "dlhard_bm25.run")
    cmd = [sys.executable, str(HERE / "peers.py"), "ranx", qrels, run]
    with tempfile.TemporaryDirectory(prefix="numba-empty-") as empty:
        log("ranx: first use (an empty numba cache: compilation), once")
        cold = bench({"first": cmd}, 1, outdir, "lfl-ranx-cold", {"first": {"NUMBA_CACHE_DIR": empty}})["first"]
    warm_ = bench({"warm": cmd}, 1, outdir, "lfl-ranx-warmup", {"warm": ranx_env()})["warm"]
    if not (cold.ok and warm_.ok):
        return [f"ranx's first use could not be timed: {cold.error or warm_.error}", ""]
    return ["### ranx's numba compilation (one DL-HARD run, nDCG@10 and AP, fresh processes)", "",
            f"Its first use (a fresh process, an empty numba cache) took "
            f"{cold.med('wall'):.1f} s of wall time and {cold.med('cpu'):.1f} s of CPU time (load "
            f"{cold.med('load'):.2f} before it), against {warm_.med('wall'):.1f} s and {warm_.med('cpu'):.1f} s "
            f"right after with the cache it wrote (load {warm_.med('load'):.2f}): compilation "
            f"{cold.med('cpu') - warm_.med('cpu'):.1f} s of CPU.  Every other ranx figure uses the warm cache.", ""]


def library_timing(qrels: str, run: str, repeat: int) -> None:
    """Print the median wall and CPU seconds of each in-process call (run in a child: nothing else
    imported), and ranx's first calls (numba cache as NUMBA_CACHE_DIR has it)."""
    import time

    import pytrec_eval

    import ulnorm_eval
    from ulnorm_eval.pipeline.evaluate import load_run

    def med(f):
        f()
        ws, cs = [], []
        for _ in range(repeat):
            t, c = time.perf_counter(), time.process_time()
            f()
            ws.append(time.perf_counter() - t)
            cs.append(time.process_time() - c)
        return statistics.median(ws), statistics.median(cs)

    def once(f):
        t, c = time.perf_counter(), time.process_time()
        out = f()
        return out, (time.perf_counter() - t, time.process_time() - c)

    from ulnorm_eval import api

    load_before = os.getloadavg()[0]
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
    if importlib.util.find_spec("ranx") is not None:
        _, out["ranx_import"] = once(lambda: __import__("ranx"))
        from ranx import Qrels, Run, evaluate

        rq = Qrels.from_file(qrels, kind="trec")
        rr, out["ranx_first_load"] = once(lambda: Run.from_file(run, kind="trec"))
        _, out["ranx_first_eval"] = once(lambda: evaluate(rq, rr, ["ndcg@10", "map"]))
        out["ranx_run"] = med(lambda: evaluate(rq, rr, ["ndcg@10", "map"]))
        out["ranx_path"] = med(lambda: evaluate(rq, Run.from_file(run, kind="trec"), ["ndcg@10", "map"]))
    out["load"] = (load_before, os.getloadavg()[0])
    for k, (w, c) in out.items():
        print(f"{k}\t{w}\t{c}")


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


def cluster_cpu(pids: list[int]) -> float:
    """CPU seconds (user + system) used so far by the LocalCluster's processes (scheduler, nannies,
    workers): they run outside the measured command, so their time is added to its CPU time."""
    import psutil

    total = 0.0
    for pid in pids:
        try:
            t = psutil.Process(pid).cpu_times()
            total += t.user + t.system
        except psutil.NoSuchProcess:
            pass
    return total


def local_cluster(workers: int):
    """A Dask LocalCluster of ``workers`` single-threaded worker processes on this machine, and the
    process ids of its processes; None when dask.distributed is not installed."""
    if not have("distributed"):
        return None, []
    import psutil

    before = {p.pid for p in psutil.Process().children(recursive=True)}
    cluster = run_module.start_local_cluster(n_workers=workers, threads_per_worker=1, processes=True,
                                             host="127.0.0.1", dashboard_address=None, silence_logs=50)
    pids = [p.pid for p in psutil.Process().children(recursive=True) if p.pid not in before]
    return cluster, pids


def track(ul, trec_eval, args, outdir, targets) -> list[str]:
    qrels, runs = track_files(HERE / "data")
    warm(qrels, *runs)
    same = ["--norm", "none", "-m", "nDCG@10", "-m", "AP"]
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    cmds = {"ulnorm-eval eval -j 1": [*ul, "eval", *same, "-j", "1", qrels, *runs],
            "ulnorm-eval eval -j 2": [*ul, "eval", *same, "-j", "2", qrels, *runs],
            "ulnorm-eval compare -j 1": [*ul, "compare", *same, "-j", "1", qrels, *runs]}
    if trec_eval:
        cmds["trec_eval looped"] = loop(trec_eval, ["-m", "ndcg_cut.10", "-m", "map"], qrels, runs)
    dask_label = "ulnorm-eval eval --scheduler (LocalCluster, 2 workers)"
    cluster, pids = local_cluster(2) if not args.no_dask else (None, [])
    probe = {}
    if cluster is not None:
        cmds[dask_label] = [*ul, "eval", *same, "--scheduler", cluster.scheduler_address, qrels, *runs]
        probe[dask_label] = lambda: cluster_cpu(pids)
    log(f"a track of {TRACK_RUNS} runs, median of {args.repeat}")
    from parallel import control

    controls, st = [], None
    try:
        for _ in range(args.repeat):  # one round at a time, each after a control of the machine's cores
            controls.append(control())
            one = bench(cmds, 1, outdir, "lfl-track", probe=probe)
            if st is None:
                st = one
                continue
            for k, s in one.items():
                for f in ("wall", "cpu", "rss", "load"):
                    getattr(st[k], f).extend(getattr(s, f))
                st[k].error = st[k].error or s.error
    finally:
        if cluster is not None:
            cluster.close()
    te = st.get("trec_eval looped")
    targets += both(f"{TRACK_RUNS} runs: eval / trec_eval looped", TARGETS["track"], st["ulnorm-eval eval -j 1"], te)
    targets += both(f"{TRACK_RUNS} runs: compare / trec_eval looped", TARGETS["track"], st["ulnorm-eval compare -j 1"], te)
    j1, j2 = st["ulnorm-eval eval -j 1"], st["ulnorm-eval eval -j 2"]
    notes = []
    if j1.ok and j2.ok:
        n = min(2, cores)
        used = j1.med("cpu") / j1.med("wall")  # cores -j 1 keeps busy (its reader thread parses ahead)
        speedup = j1.med("wall") / j2.med("wall")
        ideal = n / used
        eff = speedup / ideal  # = CPU time of -j 1 / (n x wall time of -j 2)
        targets.append(_reported([f"{TRACK_RUNS} runs: -j 2 parallel efficiency (speed-up / ideal speed-up "
                                  f"{n} / {used:.2f} given -j 1's core use)", "", f"{eff:.2f}", "", ""]))
        notes += [f"What two processes got from the machine during these runs (parallel.py's control: two equal "
                  f"pure-Python tasks, time in one process / time in two; about 2 on two idle cores): "
                  f"{', '.join(f'{c:.2f}' for c in controls)}. On a busy machine `-j 1`'s core use below and the "
                  "efficiency measure the machine's spare cores as much as the code.", "",
                  f"Parallel efficiency of `-j 2`: `-j 1` keeps {used:.2f} cores busy (CPU / wall time), so on "
                  f"{n} cores the ideal speed-up of `-j 2` is {n} / {used:.2f} = {ideal:.2f}; it gained {speedup:.2f}, "
                  f"an efficiency of {eff:.2f} (= `-j 1`'s CPU time / ({n} x `-j 2`'s wall time)). `-j 2` used "
                  f"{j2.med('cpu') / j1.med('cpu'):.2f}x `-j 1`'s CPU time.", ""]
    d = st.get(dask_label)
    if d is not None and d.ok and j2.ok:
        targets.append(_reported(_ratio_row(f"{TRACK_RUNS} runs: Dask LocalCluster (2 workers) / -j 2", 0, d, j2)))
        notes += [f"The Dask path on a LocalCluster of 2 single-threaded workers (started once, before the "
                  f"timing) against `-j 2`: {d.med('wall'):.2f} s against {j2.med('wall'):.2f} s of wall time "
                  f"({d.med('wall') / j2.med('wall'):.2f}x), {d.med('cpu'):.2f} s against {j2.med('cpu'):.2f} s of "
                  f"CPU time, the cluster's scheduler and workers included ({d.med('cpu') - j2.med('cpu'):+.2f} s: "
                  f"the overhead of {TRACK_RUNS} tasks through the scheduler, the qrels sent to each worker, "
                  "the per-query values sent back).", ""]
    return ([f"### A track: {TRACK_RUNS} generated runs x {TRACK_QUERIES} queries x 1000 documents, one qrels, "
             f"median of {args.repeat} ({section_load(st)})", "",
             "nDCG@10 and AP on both sides (`--norm none -m nDCG@10 -m AP`; trec_eval `-m ndcg_cut.10 -m map`); "
             "compare also tests every pair of runs.", ""]
            + table(ROW_HEADERS, _rows(st)) + notes)


def large(ul, args, outdir, targets) -> list[str]:
    """Generated runs of 2M and 7M lines (30 judged documents per query, seed 1) against pytrec_eval,
    and at 7M lines against ranx (numba cache warm): the same measures (nDCG@10 and AP) on both
    sides, and ulnorm-eval's defaults; numeric ids, and at 7M lines TREC-style string ids too."""
    if importlib.util.find_spec("pytrec_eval") is None:
        targets.append(["large runs / pytrec_eval", "-", "-", "", "SKIP (pytrec_eval not installed)"])
        return []
    report = []
    reps = args.large_repeat
    peer = [sys.executable, str(HERE / "peers.py")]
    for queries, size, ids in LARGE:
        queries = max(4, round(queries * args.large_scale))
        if args.large_scale != 1:
            size = f"{queries / 1000:g}k-query stand-in for {size}"
        qrels, run = dataset(HERE / "data", queries, 1, ids)
        warm(qrels, run)
        tag = "" if ids == "numeric" else f", {ids} ids"
        same_, dflt_, pytrec_ = (f"ulnorm-eval --norm none -m nDCG@10 -m AP ({size}{tag})",
                                 f"ulnorm-eval defaults ({size}{tag})",
                                 f"pytrec_eval ({size}{tag}; peers.py: parse, nDCG@10 and AP)")
        cmds = {same_: [*ul, "--norm", "none", "-m", "nDCG@10", "-m", "AP", qrels, run],
                dflt_: [*ul, qrels, run], pytrec_: [*peer, "pytrec_eval", qrels, run]}
        ranx_ = f"{RANX} ({size}{tag}, numba cache warm)"
        if size.endswith("7M") and ids == "numeric" and have("ranx"):
            cmds[ranx_] = [*peer, "ranx", qrels, run]
        log(f"{size} run lines{tag}, median of {reps}")
        st = bench(cmds, reps, outdir, f"lfl-{size.split()[0]}-{ids}", {ranx_: ranx_env()},
                   limit={ranx_: args.ranx_repeat})
        same, dflt, pytrec = st[same_], st[dflt_], st[pytrec_]
        for what, u in (("same measures", same), ("default measures and variants", dflt)):
            if size.endswith("2M"):
                targets.append(_ratio_row(f"{size} lines, {what}: peak RSS / pytrec_eval", TARGETS["rss_2m"], u, pytrec,
                                          "rss"))
            elif ids == "numeric":
                targets.append(_ratio_row(f"{size} lines, {what}: wall time / pytrec_eval", TARGETS["time_7m"], u, pytrec))
                targets.append(_ratio_row(f"{size} lines, {what}: peak RSS / pytrec_eval", TARGETS["rss_7m"], u, pytrec,
                                          "rss"))
                if ranx_ in st:
                    targets.append(_ratio_row(f"{size} lines, {what}: wall time / ranx (numba cache warm)",
                                              TARGETS["ranx"], u, st[ranx_]))
            else:
                targets.append(_ratio_row(f"{size} lines{tag}, {what}: wall time / pytrec_eval",
                                          TARGETS["time_7m_strings"], u, pytrec))
        if size == "7M" and pytrec.ok and dflt.ok:  # the README's 7M-line figures (summary.LARGE_KEYS)
            if ids == "numeric":
                KEY.update(numeric_time=dflt.med("wall") / pytrec.med("wall"),
                           numeric_rss=dflt.med("rss") / pytrec.med("rss"), large_loads=[])
            else:
                KEY["string_time"] = dflt.med("wall") / pytrec.med("wall")
            KEY.setdefault("large_loads", []).extend(x for s in st.values() for x in s.load)
        report += [f"### {size} run lines ({queries:,} queries x 1000 documents, {ids} ids), median of {reps} "
                   + (f"(ranx: of {min(reps, args.ranx_repeat)}) " if ranx_ in st else "")
                   + f"({section_load(st)})", ""] + table(ROW_HEADERS, _rows(st))
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
            + table(ROW_HEADERS, _rows(st)))


MACHINES = ("<!-- BEGIN machines -->", "<!-- END machines -->")
# the per-machine table's ratio columns: (header, start of the target row's name)
MACHINE_COLUMNS = (("all_trec / trec_eval, wall (CPU)", "all_trec, 17 Robust 2003 runs / trec_eval looped (wall)"),
                   ("defaults / trec_eval's, wall (CPU)", "default measures and variants, 17 runs"),
                   ("fresh 50-query run / pytrec_eval, wall (CPU)", "one 50-query run, fresh process / pytrec_eval"),
                   ("evaluate / RelevanceEvaluator.evaluate, wall (CPU)", "library, run in memory: ulnorm_eval.evaluate / "
                                                                          "RelevanceEvaluator"),
                   ("evaluate / ranx.evaluate, wall (CPU)", "library, run in memory: ulnorm_eval.evaluate / ranx"),
                   ("7M lines / ranx, wall (CPU)", "7M lines, same measures: wall time / ranx"),
                   ("7M lines / pytrec_eval, wall (CPU)", "7M lines, same measures: wall time / pytrec_eval"),
                   ("7M string ids / pytrec_eval, wall (CPU)", "7M lines, trec ids, same measures: wall time"),
                   ("2M lines peak RSS / pytrec_eval", "2M lines, same measures: peak RSS"),
                   ("-j 2 efficiency", f"{TRACK_RUNS} runs: -j 2 parallel efficiency"))


def machine_row(targets: list[list[str]], load: str) -> list[str]:
    """This machine's row of the per-machine table: CPU, cores, SIMD, versions, date, load, the
    headline ratios (wall, CPU in parentheses), how many targets passed and which failed."""
    m = machine()
    cells = [m["cpu"], str(m["cores"]), m["simd"], f"{m['python']} / {m['numpy']} / {m['pyarrow']}",
             f"{datetime.date.today():%Y-%m-%d}", load]
    for _, prefix in MACHINE_COLUMNS:
        row = next((t for t in targets if t[0].startswith(prefix)), None)
        if row is None or row[2] in ("-", ""):
            cells.append("-")
        else:
            cells.append(row[2] + (f" ({row[3]})" if row[3] else ""))
    verdicts = [t[-1] for t in targets if t[-1] in ("PASS", "FAIL")]
    failed = [t[0] for t in targets if t[-1] == "FAIL"]
    cells.append(f"{verdicts.count('PASS')} of {len(verdicts)}" + (f"; failed: {'; '.join(failed)}" if failed else ""))
    return cells


def merge_machine_row(text: str, row: list[str]) -> str:
    """The per-machine table between the MACHINES markers of ``text`` with ``row`` in it: a row of
    the same CPU model and core count is replaced (a cell of ``row`` that is '-', not measured by
    this run, keeps that row's value), every other machine's row is kept."""
    from summary import block, replace_block

    headers = (["CPU", "cores", "numpy SIMD", "Python / numpy / pyarrow", "date", "load"]
               + [h for h, _ in MACHINE_COLUMNS] + ["targets passed"])
    kept = []
    for line in block(text, *MACHINES).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or cells[0] in ("CPU", "") or set(cells[0]) <= set("-"):
            continue
        if cells[:2] != row[:2]:
            kept.append(cells)
        elif len(cells) == len(row):  # the same machine: what this run did not measure keeps its value
            row = [old if new in ("-", "") else new for new, old in zip(row, cells)]
    body = "\n".join(table(headers, kept + [row])).rstrip("\n")
    return replace_block(text, *MACHINES, "\n" + body + "\n")


LARGE_BLOCK = ("<!-- BEGIN like-for-like-large -->", "<!-- END like-for-like-large -->")


def large_keys(m: dict) -> dict:
    """The README's 7M-line figures (summary.LARGE_KEYS) this run measured, dated, with this machine
    and the large section's load (median of the 1-minute averages before its 7M runs); empty when
    the 7M runs (numeric and string ids, against pytrec_eval) did not all run."""
    from summary import LARGE_KEYS

    if not all(k in KEY for k in ("numeric_time", "numeric_rss", "string_time")) or not KEY.get("large_loads"):
        return {}
    out = {"date": f"{datetime.date.today():%d %B %Y}".lstrip("0"), "machine": f"{m['cpu']}, {m['cores']} cores",
           "load": f"{statistics.median(KEY['large_loads']):.2f}", "variants": run_module.default_variants_text(),
           **{k: KEY[k] for k in ("numeric_time", "numeric_rss", "string_time")}}
    assert set(out) == set(LARGE_KEYS)
    return out


def update_docs(report: str, load: str, large_only: bool = False) -> None:
    """This machine's row into docs/performance.md's per-machine table (cells this run did not
    measure keep the row's earlier values), and the report into its like-for-like block, the ratios
    into docs/performance-summary.json and README.md's speed sentence; or, for a run of the large
    section alone (``large_only``), the report into the large-runs block."""
    import json

    from run import _demoted
    from summary import BEGIN, END, KEYS, LFL_KEYS, readme_sentence, replace_block

    root = HERE.parent
    perf = root / "docs" / "performance.md"
    path = root / "docs" / "performance-summary.json"
    readme = root / "README.md"
    text = merge_machine_row(perf.read_text(), machine_row(TARGET_ROWS, load))
    m = machine()
    large = large_keys(m)
    if large_only:
        perf.write_text(replace_block(text, *LARGE_BLOCK, "\n" + _demoted(report) + "\n"))
        if large:
            data = json.loads(path.read_text())
            data.update(large)
            path.write_text(json.dumps({k: data[k] for k in KEYS}, indent=1) + "\n")
            readme.write_text(replace_block(readme.read_text(), BEGIN, END, readme_sentence(data)))
        log("docs/performance.md updated (the per-machine row and the large runs' report)"
            + (", and README.md's 7M-line figures" if large else ""))
        return
    KEY.update(lfl_date=f"{datetime.date.today():%d %B %Y}".lstrip("0"), lfl_load=load.split(" (")[0],
               lfl_cpu=f"{m['cpu']}, {m['cores']} cores")
    missing = [k for k in LFL_KEYS if k not in KEY]
    if missing:
        perf.write_text(text)
        log(f"only the per-machine row updated: no {', '.join(missing)} in this run (trec_eval or pytrec_eval missing?)")
        return
    data = json.loads(path.read_text())
    data.update({k: KEY[k] for k in LFL_KEYS})
    data.update(large)
    path.write_text(json.dumps({k: data[k] for k in KEYS}, indent=1) + "\n")
    readme.write_text(replace_block(readme.read_text(), BEGIN, END, readme_sentence(data)))
    text = replace_block(text, "<!-- BEGIN like-for-like-report -->", "<!-- END like-for-like-report -->",
                         "\n" + _demoted(report) + "\n")
    perf.write_text(text)
    log("README.md, docs/performance.md and docs/performance-summary.json updated")


def main() -> int:
    if len(sys.argv) == 5 and sys.argv[1] == "--library-timing":
        library_timing(sys.argv[2], sys.argv[3], int(sys.argv[4]))
        return 0
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3, help="runs per command of the larger cases (medians; default 3)")
    ap.add_argument("--small-repeat", type=int, default=15,
                    help="runs per command of the fresh-process case (default 15: at 7, three quiet runs read 1.06-1.37x)")
    ap.add_argument("--large-repeat", type=int, default=3,
                    help="runs per command of the 2M- and 7M-line cases (default 3: pytrec_eval's own time on 7M "
                         "string-id lines read 9.6 s and 13.4 s in two quiet runs, so a median of 2 moved the ratio "
                         "by a third)")
    ap.add_argument("--library-repeat", type=int, default=21, help="in-process calls timed (default 21)")
    ap.add_argument("--skip", action="append", default=[], choices=("robust", "fresh", "track", "large", "montecarlo"),
                    help="leave a section out (repeatable)")
    ap.add_argument("--large-scale", type=float, default=1.0,
                    help="scale the 2M- and 7M-line runs' queries by this factor (a check of the harness; "
                         "not with --update-docs)")
    ap.add_argument("--ranx-repeat", type=int, default=2,
                    help="runs of each ranx command in a fresh process (default 2; each takes seconds to load "
                         "numba's cache)")
    ap.add_argument("--no-ranx-first-use", action="store_true",
                    help="do not time ranx's first use (its numba compilation, minutes): the ranx figures then use "
                         "whatever benchmarks/results/numba-cache holds (not with --update-docs)")
    ap.add_argument("--no-dask", action="store_true", help="leave the Dask LocalCluster out of the track section")
    ap.add_argument("--out", type=Path, help="also write the markdown report to this file")
    ap.add_argument("--strict", action="store_true", help="exit 1 when a target fails")
    ap.add_argument("--update-docs", action="store_true",
                    help="write the report into docs/performance.md and its ratios into docs/performance-summary.json "
                         "and README.md's speed sentence (every section: no --skip)")
    args = ap.parse_args()
    others = {"robust", "fresh", "track", "montecarlo"}
    large_only = set(args.skip) == others
    if args.update_docs and (args.large_scale != 1 or not (set(args.skip) <= {"large"} or large_only)
                             or (args.no_ranx_first_use and not large_only)):
        ap.error("--update-docs needs every section at full size, or every section but large, or large alone "
                 "(--skip robust --skip fresh --skip track --skip montecarlo), and ranx's first use timed "
                 "unless large alone")
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
    if have("ranx") and len(args.skip) < 5 and not args.no_ranx_first_use:
        report += ranx_compilation(outdir)
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
            *machine_lines(load_before),
            f"- peers: pytrec-eval-terrier {_version('pytrec-eval-terrier')}, ranx {_version('ranx')} "
            f"(numba {_version('numba')})",
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
    TARGET_ROWS[:] = targets
    if args.update_docs:
        loads = run_module.LOADS or [os.getloadavg()[0]]
        update_docs(text, f"{statistics.median(loads):.2f} ({min(loads):.2f}-{max(loads):.2f})", large_only)
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
    # an editable install whose import hook this interpreter does not load (its site-packages
    # reached through a path entry, not as a site directory) times as a regular one
    hook = any("__editable__" in (getattr(f, "__module__", None) or "") for f in sys.meta_path)
    editable = direct.get("dir_info", {}).get("editable", False) and hook
    kind = ("an editable install (pip install -e): each process also loads the editable import hook; "
            "`pip install .` times start-up as users get it") if editable else "a regular install (pip install .)"
    spec = importlib.util.find_spec("ulnorm_eval")
    where = Path(spec.origin).parent if spec is not None and spec.origin else "?"
    return f"{dist.version} at {ul[0]}, {kind}; the package imported from {where}"


if __name__ == "__main__":
    sys.exit(main())
