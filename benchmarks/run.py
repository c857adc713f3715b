"""Benchmark ulnorm-eval against pytrec_eval, ir_measures and trec_eval.

    pip install '.[bench]'
    python benchmarks/run.py                   # 7000 queries x 1000 documents (7M run lines)
    python benchmarks/run.py --quick           # 400 queries: checks the harness in a minute or two
    python benchmarks/run.py --out results.md  # also write the report to a file
    python benchmarks/run.py --stream-check    # also --stream on 2M- and 20M-line runs (~1.5 GB disk)
    PATH=/path/to/trec_eval:$PATH python benchmarks/run.py --no-scaling --out docs/performance-report.md

Besides the generated 7M-line comparison (numeric ids, then the same runs with string ids
``D2573`` and ``XX-1234-5678``), it times research-size evaluations on the real data of
../shared/data beside the checkout (or $ULNORM_EVAL_SHARED_DATA): one DL-HARD run and the 17 Robust 2003 runs against
trec_eval, and ``compare`` against ``eval`` on those runs (issue 13's targets).

Every command runs in its own process under a small wrapper process that waits for it and reads
its peak RSS from getrusage(RUSAGE_CHILDREN), so the numbers of different tools never mix; on Linux
the wrapper also samples the summed RSS of the command's process tree every 10 ms (a command with
-j workers holds them all at once) and the larger of the two is reported.  The
repeats are interleaved across tools, so a change in machine load hits every tool alike; the report
gives medians, and the load average before and after.  Data come from generate.py into
benchmarks/data/ and are reused (the file names carry size and seed).  Peers are optional extras:
one that is not installed (pytrec_eval, ir_measures) or not on PATH (trec_eval) is reported and
skipped.  The report is markdown on stdout; progress goes to stderr.  POSIX only (resource).
"""
from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from generate import generate

HERE = Path(__file__).resolve().parent


def start_local_cluster(**kwargs):
    """A Dask ``LocalCluster(**kwargs)`` started without changing this process's environment.

    Starting its nannies writes their pre-spawn environment into ``os.environ`` and leaves it there:
    MALLOC_TRIM_THRESHOLD_=65536, OMP_NUM_THREADS, MKL_NUM_THREADS and OPENBLAS_NUM_THREADS=1, and a
    PYTHONHASHSEED.  Every command measured afterwards inherited them; with glibc trimming its heap at
    64 KiB, ulnorm-eval on 7M run lines took 6.0 s of CPU time instead of 2.9 s (and less memory),
    so the sections after the Dask measurement did not measure what a user runs.  The workers
    are already started when the environment is put back; a restarted worker gets the nanny's
    settings from Dask's configuration, not from this process's environment."""
    from dask.distributed import LocalCluster

    saved = dict(os.environ)
    try:
        return LocalCluster(**kwargs)
    finally:
        os.environ.clear()
        os.environ.update(saved)
DEPTH, JUDGED = 1000, 30
QUICK_QUERIES = 400
STARTUP_REPEAT = 5
STREAM_SIZES = (2000, 20000)           # queries of the --stream check: 2M and 20M run lines
STREAM_SHORT_DEPTH = 100                # the 20,000-query run cut to 2M lines
# Targets of issue 5, each a ratio measured in the same run (or seconds for start-up).
TARGET_DEFAULT_TIME, TARGET_DEFAULT_RSS, TARGET_PLAIN_TIME, TARGET_HELP = 0.5, 0.6, 0.4, 0.3
TARGET_STREAM_RSS = 1.10          # issue 5: within 10% of the 2M-line run's peak RSS
TARGET_VARIANTS_COST = 3.0        # issue 11: default variants of ERR@20, bpref, infAP <= 3x the plain measures
TARGET_ALL_TREC_DEFAULTS = 2.0    # `-q -m all_trec` with the default variants <= 2x `--norm none` (one Robust run)
SHARED = Path(os.environ.get("ULNORM_EVAL_SHARED_DATA", HERE.parents[1] / "shared" / "data"))
ROBUST03 = SHARED / "robust03"  # ../shared/data/robust03 (17 runs, 100 queries)
VARIANT_MEASURES = ["-m", "ERR@20", "-m", "bpref", "-m", "infAP"]
# Issue 13 (ratios measured in the same run): research-size runs and string document ids.
TARGET_SMALL_VS_TREC_EVAL = 2.0     # one DL-HARD run (50 queries x 1000), wall / trec_eval's
TARGET_ROBUST_VS_TREC_EVAL = 1.0    # the 17 Robust 2003 runs in one process / trec_eval looped
TARGET_COMPARE_VS_EVAL = 1.2        # compare on those 17 runs / eval on them
TARGET_STRING_TIME, TARGET_STRING_RSS, TARGET_NUMERIC_TIME = 0.4, 0.3, 0.35   # default run / pytrec_eval
TARGET_STARTUP = 0.1                # `--help` and `measures`, seconds
STRING_IDS = ("msmarco-doc", "trec")
KEY: dict = {}  # the headline numbers (benchmarks/summary.py), filled in as the sections run
FLOOR = "python -c 'import numpy'"
SAME_ARGS = ["--norm", "none", "-m", "official"]  # trec_eval's default measures, no variants
SAME = "ulnorm-eval --norm none -m official"

# Runs in its own interpreter: RUSAGE_CHILDREN then covers exactly the one command it waited for.
# Its ru_maxrss is the largest single process's peak; a command of several processes (-j workers)
# holds their sum at once, so on Linux a thread also samples the summed RSS of the command's process
# tree every 10 ms (shared pages counted in each process: an upper bound), and the larger is reported.
_WRAPPER = r"""
import json, os, resource, subprocess, sys, threading, time
PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
def tree_rss(pid):
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/statm") as f:
                total += int(f.read().split()[1]) * PAGE
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    todo += [int(c) for c in f.read().split()]
        except (OSError, ValueError):
            pass
    return total
t = time.perf_counter()
with open(sys.argv[1], "wb") as out:
    proc = subprocess.Popen(sys.argv[2:], stdout=out)
    peak, done = [0], threading.Event()
    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], tree_rss(proc.pid))
            done.wait(0.01)
    sampler = threading.Thread(target=sample, daemon=True)
    if os.path.exists(f"/proc/{proc.pid}"):
        sampler.start()
    rc = proc.wait()
wall = time.perf_counter() - t
done.set()
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"rc": rc, "wall": wall, "cpu": ru.ru_utime + ru.ru_stime, "maxrss": ru.ru_maxrss, "tree": peak[0]}))
"""
_RSS_UNIT = 1 if sys.platform == "darwin" else 1024     # ru_maxrss: bytes on macOS, KiB on Linux


@dataclass
class Stats:
    """Repeated measurements of one command: medians of wall time, CPU time and peak RSS."""
    argv: list[str]
    output: Path
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    rss: list[float] = field(default_factory=list)     # MiB
    load: list[float] = field(default_factory=list)    # 1-minute load average just before each run
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and bool(self.wall)

    def med(self, what: str) -> float:
        return statistics.median(getattr(self, what))


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


LOADS: list[float] = []  # the 1-minute load average before every measured run of this process


def measure(stats: Stats, env: dict | None = None) -> None:
    """Run the command once under the wrapper; record wall, CPU and peak RSS (and the load average
    just before), or the error.  ``env``: variables set for this command only."""
    load = os.getloadavg()[0]
    proc = subprocess.run([sys.executable, "-c", _WRAPPER, str(stats.output), *stats.argv],
                          capture_output=True, text=True, env={**os.environ, **env} if env else None)
    try:
        res = json.loads(proc.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        res = {"rc": -1}
    if res["rc"] != 0:
        tail = (proc.stderr.strip().splitlines() or ["(no message)"])[-1]
        stats.error = f"exit {res['rc']}: {tail}"
        return
    stats.load.append(load)
    LOADS.append(load)
    stats.wall.append(res["wall"])
    stats.cpu.append(res["cpu"])
    stats.rss.append(max(res["maxrss"] * _RSS_UNIT, res.get("tree", 0)) / 2**20)


def bench(cmds: dict[str, list[str]], repeat: int, outdir: Path, tag: str,
          env: dict[str, dict] | None = None, probe: dict | None = None,
          limit: dict[str, int] | None = None) -> dict[str, Stats]:
    """Median of ``repeat`` runs of each command, the repeats interleaved across commands.
    ``env``: extra environment variables of some commands (by label); ``probe``: for some commands,
    a function giving the CPU seconds used so far by processes outside the command that work for it
    (a Dask cluster's), whose increase during the run is added to the command's CPU time; ``limit``:
    fewer repeats for some commands (a slow peer), taken in the first rounds."""
    stats = {label: Stats(argv, outdir / f"{tag}-{_slug(label)}.out") for label, argv in cmds.items()}
    for r in range(repeat):
        for label, s in stats.items():
            if s.error is None and r < (limit or {}).get(label, repeat):
                extra = (probe or {}).get(label)
                before = extra() if extra else 0.0
                measure(s, (env or {}).get(label))
                if extra and s.error is None:
                    s.cpu[-1] += extra() - before
                log(f"  [{tag} {r + 1}/{repeat}] {label}: "
                    + (f"{s.wall[-1]:.2f} s, {s.rss[-1]:.0f} MiB" if s.error is None else s.error))
    return stats


def _slug(label: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in label).strip("_")


def warm(*paths: str) -> None:
    """Read the files once so the first timed run does not pay for the disk."""
    for p in paths:
        with open(p, "rb") as f:
            while f.read(1 << 24):
                pass


def dataset(data_dir: Path, queries: int, seed: int, ids: str = "numeric") -> tuple[str, str]:
    """The qrels and run of this size, seed and document id style, generated on first use."""
    name = f"q{queries}_d{DEPTH}_j{JUDGED}_s{seed}" + ("" if ids == "numeric" else f"_{ids}")
    qrels, run = data_dir / f"{name}.qrels", data_dir / f"{name}.run"
    if not (qrels.exists() and run.exists()):
        log(f"generating {queries * DEPTH:,} run lines ({ids} ids) into {data_dir} ...")
        generate(str(data_dir), queries, DEPTH, JUDGED, seed, name=name, ids=ids)
    return str(qrels), str(run)


def plain_copy(src: Path, dst: Path) -> str:
    """``src`` decompressed (trec_eval reads no gzip), written once to ``dst``."""
    import gzip

    if not dst.exists():
        dst.parent.mkdir(parents=True, exist_ok=True)
        opener = gzip.open if src.suffix == ".gz" else open
        with opener(src, "rb") as f, open(dst.with_suffix(".tmp"), "wb") as out:
            shutil.copyfileobj(f, out)
        dst.with_suffix(".tmp").rename(dst)
    return str(dst)


def ulnorm_command() -> list[str]:
    """The ulnorm-eval of this interpreter's environment (as installed by pip), else the one on PATH."""
    beside = Path(sys.executable).parent / "ulnorm-eval"
    found = str(beside) if beside.exists() else shutil.which("ulnorm-eval")
    if not found:
        sys.exit("ulnorm-eval is not installed in this environment: pip install '.[bench]'")
    return [found]


def tool_commands(ul: list[str], qrels: str, run: str) -> tuple[dict[str, list[str]], list[str]]:
    """Commands of ulnorm-eval and of every available peer; notes on the peers that are missing."""
    cmds = {"ulnorm-eval": [*ul, qrels, run], "ulnorm-eval --norm none": [*ul, "--norm", "none", qrels, run]}
    missing = []
    for peer in ("pytrec_eval", "ir_measures"):
        if importlib.util.find_spec(peer) is None:
            missing.append(f"{peer}: not installed (pip install '.[bench]'), skipped")
        else:
            cmds[peer] = [sys.executable, str(HERE / "peers.py"), peer, qrels, run]
    trec_eval = shutil.which("trec_eval")
    if trec_eval:
        cmds["trec_eval"] = [trec_eval, "-m", "ndcg_cut.10", "-m", "map", qrels, run]
    else:
        missing.append("trec_eval: no binary on PATH, skipped")
    return cmds, missing


def means(output: Path) -> dict[str, float]:
    """nDCG@10 and AP means from a trec-format output (ulnorm-eval's or trec_eval's names)."""
    names = {"nDCG@10": "nDCG@10", "ndcg_cut_10": "nDCG@10", "AP": "AP", "map": "AP"}
    found = {}
    for line in output.read_text().splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[-2] == "all" and parts[-3] in names:
            found[names[parts[-3]]] = float(parts[-1])
    return found


# ---------------------------------------------------------------------------------- report


def table(headers: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    return out + ["| " + " | ".join(r) + " |" for r in rows] + [""]


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def _trec_eval_version() -> str:
    exe = shutil.which("trec_eval")
    if not exe:
        return "not on PATH"
    proc = subprocess.run([exe, "-v"], capture_output=True, text=True)
    return (proc.stderr or proc.stdout).strip().splitlines()[0] if (proc.stderr or proc.stdout).strip() else exe


def _load() -> str:
    return " / ".join(f"{x:.2f}" for x in os.getloadavg())


def cpu_model() -> str:
    """The CPU's model name as the kernel reports it, with its family/model numbers (a virtual
    machine may show only 'AMD EPYC'; the numbers tell its generation apart)."""
    info: dict = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                k, _, v = line.partition(":")
                info.setdefault(k.strip(), v.strip())
                if not line.strip():
                    break
    except OSError:
        pass
    name = info.get("model name") or platform.processor() or platform.machine() or "unknown CPU"
    if "cpu family" in info and "model" in info:
        name += f" (family {info['cpu family']}, model {info['model']})"
    return name


def simd() -> str:
    """The widest x86 vector extensions numpy found and uses (its sorts are SIMD kernels whose speed
    depends on them: AVX-512 or AVX2), or the platform's machine name elsewhere."""
    try:
        import numpy as np

        found = np._core._multiarray_umath.__cpu_features__
    except (ImportError, AttributeError):
        return platform.machine()
    for name in ("AVX512_SPR", "AVX512_ICL", "AVX512_SKX", "AVX512F", "AVX2", "SSE42", "ASIMD"):
        if found.get(name):
            return name
    return platform.machine()


def machine() -> dict:
    """What a figure was measured on: CPU model, cores, numpy's SIMD level, versions, load."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {"cpu": cpu_model(), "cores": cores, "simd": simd(), "python": platform.python_version(),
            "numpy": _version("numpy"), "pyarrow": _version("pyarrow"),
            "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE", "unset"), "load": _load()}


def machine_lines(load_before: str) -> list[str]:
    """The report head's lines on the machine (every section also gives its own load)."""
    m = machine()
    return [f"- CPU: {m['cpu']}, {m['cores']} cores available, numpy's SIMD level {m['simd']} "
            f"(OPENBLAS_CORETYPE {m['openblas_coretype']}); {platform.platform()}",
            f"- Python {m['python']}, numpy {m['numpy']}, pyarrow {m['pyarrow']}",
            f"- load average (1/5/15 min): {load_before} before, {m['load']} after"]


def section_load(stats: dict) -> str:
    """The 1-minute load average over a section's runs: median (min-max) of the values taken just
    before each run."""
    xs = [x for s in stats.values() for x in s.load]
    if not xs:
        return f"load {_load()}"
    return f"load {statistics.median(xs):.2f} (1-min average before each run, {min(xs):.2f}-{max(xs):.2f})"


def verdict(ok: bool | None) -> str:
    return "SKIP" if ok is None else ("PASS" if ok else "FAIL")


def compile_installed() -> None:
    """Compile ulnorm_eval's modules to bytecode once, as pip does when it installs a package.

    An editable install, or PYTHONDONTWRITEBYTECODE in the environment, would otherwise leave every
    timed start to compile its ~50 modules from source (~70 ms), a cost no installed copy has."""
    import compileall

    spec = importlib.util.find_spec("ulnorm_eval")
    if spec is not None and spec.origin:
        compileall.compile_dir(str(Path(spec.origin).parent), quiet=1)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", type=int, default=7000, help="queries of the full size (x1000 run lines; default 7000)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per command; the report gives medians (default 3)")
    ap.add_argument("--quick", action="store_true", help=f"{QUICK_QUERIES} queries: a check of the harness")
    ap.add_argument("--seed", type=int, default=1, help="seed of the generated data (default 1)")
    ap.add_argument("--out", type=Path, help="also write the markdown report to this file")
    ap.add_argument("--data", type=Path, default=HERE / "data", help="data folder (default benchmarks/data)")
    ap.add_argument("--no-scaling", action="store_true", help="skip the 1x/2x/4x scaling runs")
    ap.add_argument("--stream-check", action="store_true",
                    help="also time --stream on 2M- and 20M-line runs against the in-memory path (~1.5 GB disk)")
    ap.add_argument("--strict", action="store_true", help="exit 1 when a target fails")
    ap.add_argument("--no-strings", action="store_true", help="skip the string document id runs")
    ap.add_argument("--no-research", action="store_true",
                    help="skip the DL-HARD and Robust 2003 runs against trec_eval")
    ap.add_argument("--small-repeat", type=int, default=5,
                    help="runs per command of the research-size cases (default 5; medians)")
    ap.add_argument("--update-docs", action="store_true",
                    help="write the report into docs/performance.md and the headline numbers into README.md "
                         "and docs/performance-summary.json (a full run: not with --only, --quick or --no-*)")
    ap.add_argument("--only", choices=("research", "large"),
                    help="research: only the DL-HARD and Robust 2003 runs and start-up; large: only the "
                         "generated comparisons (numeric and string ids) and start-up")
    args = ap.parse_args()
    if args.quick:
        args.queries = QUICK_QUERIES
    if args.queries < 4 or args.repeat < 1:
        ap.error("--queries must be at least 4 and --repeat at least 1")
    if args.update_docs and (args.only == "large" or (args.only is None and (args.queries != 7000 or args.no_strings
                                                                           or args.no_research))):
        ap.error("--update-docs needs the full run (7000 queries, no --only large, --no-strings or --no-research), "
                 "or --only research (which updates the research-size numbers alone)")
    ul = ulnorm_command()
    compile_installed()
    outdir = HERE / "results"
    outdir.mkdir(exist_ok=True)
    load_before = _load()
    report: list[str] = []
    targets: list[list[str]] = []

    default = None
    if args.only != "research":
        section, default, plain = large(ul, args, outdir, targets)
        report += section
    # ---- issue 13: research-size runs against trec_eval (real data)
    if not args.no_research and args.only != "large":
        report += research_size(ul, args, outdir, targets)
        report += all_trec_defaults(ul, args, outdir, targets)
    # ---- scaling: the same evaluation at 1x, 2x and 4x the queries
    if args.only is None and not args.no_scaling and default is not None:
        report += scaling(ul, args, outdir, default, plain)

    # ---- start-up
    log("start-up")
    startup = bench({"python -c pass": [sys.executable, "-c", "pass"], "ulnorm-eval --help": [*ul, "--help"],
                     "ulnorm-eval measures": [*ul, "measures"]}, STARTUP_REPEAT, outdir, "startup")
    report += [f"### Start-up, median of {STARTUP_REPEAT} ({section_load(startup)})", ""]
    report += table(ROW_HEADERS, _rows(startup))
    h = startup["ulnorm-eval --help"]
    targets.append(["`ulnorm-eval --help` wall time", f"< {TARGET_HELP} s", f"{h.med('wall'):.3f} s" if h.ok else "-",
                    f"{h.med('cpu'):.3f} s" if h.ok else "", verdict(h.med("wall") < TARGET_HELP if h.ok else False)])
    for k in ("ulnorm-eval --help", "ulnorm-eval measures"):
        h = startup[k]
        targets.append([f"`{k}` wall time", f"< {TARGET_STARTUP} s", f"{h.med('wall'):.3f} s" if h.ok else "-",
                        f"{h.med('cpu'):.3f} s" if h.ok else "", verdict(h.med("wall") < TARGET_STARTUP if h.ok else False)])

    # ---- the variants' cost (E, IUB, UL1, UL2 listed; per run on the default --pool run)
    if args.only is None:
        report += variants_cost(ul, args, outdir, targets)

    # ---- streaming
    if args.stream_check:
        report += stream_check(ul, args, outdir, targets)

    load_after = _load()
    head = [f"## ulnorm-eval benchmark, {datetime.datetime.now().astimezone():%Y-%m-%d %H:%M %Z}", "",
            *machine_lines(load_before),
            f"- ulnorm-eval {_version('ulnorm-eval')}, "
            f"pytrec-eval-terrier {_version('pytrec-eval-terrier')}, ir-measures {_version('ir-measures')}, "
            f"trec_eval: {_trec_eval_version()}",
            f"- data: generate.py, seed {args.seed}, {JUDGED} judged documents per query (Poisson), depth {DEPTH}",
            "- wall time is elapsed time; on a loaded machine it exceeds CPU time", ""]
    text = "\n".join(head + ["### Targets", ""]
                     + table(["target", "limit", "measured (wall)", "same with CPU time", "result"], targets) + report)
    print(text)
    if args.update_docs:
        update_docs(text, load_after, research_only=args.only == "research")
    if args.out:
        args.out.write_text(text + "\n")
        log(f"report written to {args.out}")
    return 1 if args.strict and any(t[-1] == "FAIL" for t in targets) else 0



def large(ul: list[str], args, outdir: Path, targets: list[list[str]]):
    """The generated comparison at full size (numeric ids) against every peer, then the same with
    string ids; returns (report lines, default run's Stats, `--norm none` Stats)."""
    report: list[str] = []
    qrels, run = dataset(args.data, args.queries, args.seed)
    warm(qrels, run)
    cmds, missing = tool_commands(ul, qrels, run)
    log(f"comparison: {args.queries} queries, {args.queries * DEPTH:,} run lines, median of {args.repeat}")
    main_stats = bench(cmds, args.repeat, outdir, f"q{args.queries}")
    default, plain = main_stats["ulnorm-eval"], main_stats["ulnorm-eval --norm none"]

    report += [f"### Evaluation of {args.queries * DEPTH:,} run lines ({args.queries} queries x {DEPTH}), "
               f"median of {args.repeat} ({section_load(main_stats)})", ""]
    values = []
    for label, s in main_stats.items():
        if s.ok:
            m = means(s.output)
            values.append([label, f"{m.get('nDCG@10', float('nan')):.4f}", f"{m.get('AP', float('nan')):.4f}"])
    report += table(ROW_HEADERS, _rows(main_stats))
    report += [f"- {m}" for m in missing] + ([""] if missing else [])

    ratio_rows = []
    for label, s in main_stats.items():
        if label.startswith("ulnorm") or not s.ok:
            continue
        ratio_rows.append([label] + [f"{u.med(k) / s.med(k):.2f}" if u.ok else "-"
                                     for u in (default, plain) for k in ("wall", "cpu", "rss")])
    if ratio_rows:
        report += ["ulnorm-eval / peer (below 1: ulnorm-eval is faster or smaller):", ""]
        report += table(["peer"] + [f"{u}: {k}" for u in ("default", "`--norm none`") for k in ("wall", "CPU", "RSS")],
                        ratio_rows)
    report += ["Mean values each tool printed (a check that they did the same work):", ""]
    report += table(["command", "nDCG@10", "AP"], values)

    pytrec = main_stats.get("pytrec_eval")
    have_pytrec = pytrec is not None and pytrec.ok and default.ok and plain.ok

    def vs_pytrec(u: Stats, key: str, limit: float, what: str) -> None:
        r = u.med(key) / pytrec.med(key) if have_pytrec else None
        # CPU time is less sensitive than wall time to other processes on the machine
        cpu = f"{u.med('cpu') / pytrec.med('cpu'):.2f}" if have_pytrec and key == "wall" else ""
        # the targets are set for MS MARCO scale; below it ulnorm-eval's fixed start-up cost (pyarrow,
        # pandas, numpy imports: ~0.3 s, ~130 MiB) dominates, so a smaller run is only reported
        applies = args.queries >= 7000
        targets.append([what, f"≤ {limit}", "-" if r is None else f"{r:.2f}", cpu,
                        verdict(None if r is None else r <= limit) if applies
                        else f"n/a below 7,000 queries ({verdict(None if r is None else r <= limit)})"])

    vs_pytrec(default, "wall", TARGET_DEFAULT_TIME, "default run wall time / pytrec_eval")
    vs_pytrec(default, "rss", TARGET_DEFAULT_RSS, "default run peak RSS / pytrec_eval")
    vs_pytrec(plain, "wall", TARGET_PLAIN_TIME, "`--norm none` wall time / pytrec_eval")
    vs_pytrec(default, "wall", TARGET_NUMERIC_TIME, "numeric ids: default run wall time / pytrec_eval")
    if have_pytrec:
        KEY["variants"] = default_variants_text()  # what the default run computed (the README names them)
        KEY["numeric_time"] = default.med("wall") / pytrec.med("wall")
        KEY["numeric_rss"] = default.med("rss") / pytrec.med("rss")
    vs_pytrec(default, "rss", TARGET_STRING_RSS, "numeric ids: default run peak RSS / pytrec_eval")

    # ---- issue 13: string document ids at the same size
    if not args.no_strings:
        report += string_ids(ul, args, outdir, targets)
    return report, default, plain


def scaling(ul: list[str], args, outdir: Path, default: Stats, plain: Stats) -> list[str]:
    """The same evaluation at 1x, 2x and 4x the queries (the largest is the comparison's run)."""
    report: list[str] = []
    sizes = [args.queries // 4, args.queries // 2]
    scale: dict[int, dict[str, Stats]] = {}
    for q in sizes:
        sq, sr = dataset(args.data, q, args.seed)
        warm(sq, sr)
        log(f"scaling: {q} queries")
        scale[q] = bench({"default": [*ul, sq, sr], "plain": [*ul, "--norm", "none", sq, sr]},
                         args.repeat, outdir, f"q{q}")
    scale[args.queries] = {"default": default, "plain": plain}
    base = scale[sizes[0]]
    rows = []
    for q, st in scale.items():
        row = [f"{q} ({q * DEPTH / 1e6:g}M lines)"]
        for key in ("default", "plain"):
            s = st[key]
            row += ([f"{s.med('wall'):.2f}", f"{s.med('wall') / base[key].med('wall'):.2f}",
                     f"{s.med('rss'):.0f}"] if s.ok and base[key].ok else [s.error or "-", "", ""])
        rows.append(row)
    report += [f"### Scaling, median of {args.repeat} (sizes 1x : 2x : 4x; "
               f"{section_load({f'{q} {k}': s for q, st in scale.items() for k, s in st.items()})})", ""]
    report += table(["queries", "default s", "÷ 1x", "default MiB", "`--norm none` s", "÷ 1x", "`--norm none` MiB"], rows)
    # Linear growth means a constant cost per extra line; the intercept is start-up and the qrels.
    steps = []
    for key in ("default", "plain"):
        qs = list(scale)
        if all(scale[q][key].ok for q in qs):
            per = [(scale[b][key].med("wall") - scale[a][key].med("wall")) / ((b - a) * DEPTH / 1e6)
                   for a, b in zip(qs, qs[1:])]
            steps.append(f"{key}: " + ", then ".join(f"{x:.2f}" for x in per))
    if steps:
        report += ["Seconds per extra million run lines, 1x to 2x, then 2x to 4x (equal: linear) - "
                   + "; ".join(steps), ""]

    return report


def update_docs(report: str, load_after: str, research_only: bool = False) -> None:
    """The report into docs/performance.md, the headline numbers into docs/performance-summary.json
    and, as one sentence, into README.md (between their markers).  ``research_only`` (``--only
    research``): only the research-size numbers are replaced, with their own date and load, and the
    report goes to its own block of docs/performance.md."""
    from summary import BEGIN, END, KEYS, LFL_KEYS, RESEARCH_KEYS, readme_sentence, replace_block

    root = HERE.parent
    today = f"{datetime.date.today():%d %B %Y}".lstrip("0")
    load = load_after.split(" / ")[0]
    KEY.update(research_date=today, research_load=load)
    summary_path = root / "docs" / "performance-summary.json"
    if research_only:
        old = json.loads(summary_path.read_text())
        KEY.update({k: old[k] for k in KEYS if k not in RESEARCH_KEYS and k in old})
    else:
        m = machine()  # the CPU model and cores, as like_for_like.py names the machine of its 7M figures
        KEY.update(date=today, machine=f"{m['cpu']}, {m['cores']} cores", load=load)
    old = json.loads(summary_path.read_text()) if summary_path.exists() else {}
    KEY.update({k: old[k] for k in LFL_KEYS if k in old})  # benchmarks/like_for_like.py's, kept
    missing = [k for k in KEYS if k not in KEY]
    if missing:
        log(f"docs not updated: no {', '.join(missing)} in this run (a peer or the shared data missing?)")
        return
    summary_path.write_text(json.dumps({k: KEY[k] for k in KEYS}, indent=1) + "\n")
    readme = root / "README.md"
    readme.write_text(replace_block(readme.read_text(), BEGIN, END, readme_sentence(KEY)))
    perf = root / "docs" / "performance.md"
    block = ("<!-- BEGIN research-report -->", "<!-- END research-report -->") if research_only else \
        ("<!-- BEGIN benchmark-report -->", "<!-- END benchmark-report -->")
    perf.write_text(replace_block(perf.read_text(), *block, "\n" + _demoted(report) + "\n"))
    log("README.md, docs/performance.md and docs/performance-summary.json updated")


def _demoted(report: str) -> str:
    """The report's headings one level down (it sits under a section of docs/performance.md)."""
    return "\n".join("#" + line if line.startswith("##") else line for line in report.split("\n"))


def default_variants_text() -> str:
    """The default variants of the ulnorm-eval being timed (this interpreter's), in words ("E and UL2")."""
    code = ("from ulnorm_eval.core.registry import DEFAULT_VARIANTS as v; "
            "print(v[0] if len(v) == 1 else ', '.join(v[:-1]) + ' and ' + v[-1])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=HERE)
    return out.stdout.strip() or "the default variants"


def variants_cost(ul: list[str], args, outdir: Path, targets: list[list[str]]) -> list[str]:
    """`-m ERR@20 -m bpref -m infAP` with `--norm e,iub,ul1,ul2` (listed: ERR's E is a Monte Carlo
    estimate, and such a measure gets no variant unless asked for; exact E for bpref and infAP) on the
    17 Robust 2003 runs, against the same without variants."""
    runs = sorted(str(p) for p in (ROBUST03 / "runs").glob("*.gz")) if ROBUST03.is_dir() else []
    if not runs:
        targets.append(["default variants / `--norm none` (ERR@20, bpref, infAP; Robust 2003)",
                        f"≤ {TARGET_VARIANTS_COST}", "-", "", f"SKIP (no {ROBUST03})"])
        return []
    qrels = str(ROBUST03 / "qrels.txt")
    warm(qrels, *runs)
    log(f"variants cost: {len(runs)} Robust 2003 runs")
    # ERR's E is a Monte Carlo estimate: its variants are computed only when listed, so list them
    st = bench({"variants": [*ul, "--norm", "e,iub,ul1,ul2", *VARIANT_MEASURES, qrels, *runs],
                "plain": [*ul, "--norm", "none", *VARIANT_MEASURES, qrels, *runs]}, args.repeat, outdir, "robust03")
    v, p = st["variants"], st["plain"]
    ok = v.ok and p.ok
    r = v.med("wall") / p.med("wall") if ok else None
    targets.append(["default variants / `--norm none` (ERR@20, bpref, infAP; 17 Robust 2003 runs)",
                    f"≤ {TARGET_VARIANTS_COST}", "-" if r is None else f"{r:.2f}",
                    f"{v.med('cpu') / p.med('cpu'):.2f}" if ok else "", verdict(None if r is None else r <= TARGET_VARIANTS_COST)])
    return [f"### Default variants of ERR@20, bpref and infAP on {len(runs)} Robust 2003 runs, median of {args.repeat} "
            f"({section_load(st)})", ""] + table(ROW_HEADERS, _rows(st))


def all_trec_defaults(ul: list[str], args, outdir: Path, targets: list[list[str]]) -> list[str]:
    """`-q -m all_trec` on one Robust 2003 run with the default variants against `--norm none`: the
    default variants skip the measures whose E would be a Monte Carlo estimate, so a cheap request
    stays cheap (it took minutes when they did not)."""
    what = "`-q -m all_trec`, default variants / `--norm none` (one Robust 2003 run)"
    run = ROBUST03 / "runs" / "input.oce03noXbmD.gz"
    if not run.exists():
        targets.append([what, f"≤ {TARGET_ALL_TREC_DEFAULTS}", "-", "", f"SKIP (no {run})"])
        return []
    qrels = str(ROBUST03 / "qrels.txt")
    warm(qrels, str(run))
    log("all_trec with the default variants: one Robust 2003 run")
    st = bench({"ulnorm-eval -q -m all_trec": [*ul, "-q", "-m", "all_trec", qrels, str(run)],
                "ulnorm-eval -q -m all_trec --norm none": [*ul, "-q", "-m", "all_trec", "--norm", "none", qrels,
                                                           str(run)]}, args.small_repeat, outdir, "alltrec")
    targets.append(_ratio_row(what, TARGET_ALL_TREC_DEFAULTS, st["ulnorm-eval -q -m all_trec"],
                              st["ulnorm-eval -q -m all_trec --norm none"]))
    return ([f"### `-q -m all_trec` on one Robust 2003 run (input.oce03noXbmD), median of {args.small_repeat} "
             f"({section_load(st)})", "",
             "The default variants are added to the measures with a closed-form E only.", ""]
            + table(ROW_HEADERS, _rows(st)))


def _reported(row: list) -> list:
    """A ratio row without a target: reported, never PASS or FAIL."""
    row[1] = "-"
    if not row[-1].startswith("SKIP"):
        row[-1] = "(reported)"
    return row


def _ratio_row(what: str, limit: float, u: Stats, peer: Stats | None, key: str = "wall") -> list[str]:
    """A target row: ulnorm-eval / peer of ``key`` (and of CPU time beside a wall-time ratio)."""
    if peer is None or not (u.ok and peer.ok):
        why = (u.error if not u.ok else (peer.error if peer is not None else "peer missing")) or "no run"
        return [what, f"≤ {limit}", "-", "", f"SKIP ({why})"]
    r = u.med(key) / peer.med(key)
    cpu = f"{u.med('cpu') / peer.med('cpu'):.2f}" if key == "wall" else ""
    return [what, f"≤ {limit}", f"{r:.2f}", cpu, verdict(r <= limit)]


ROW_HEADERS = ["command", "wall s", "CPU s", "peak RSS MiB", "load"]


def _rows(stats: dict[str, Stats]) -> list[list[str]]:
    """Median wall, CPU and peak RSS of each command, and the median 1-minute load average just
    before its runs (ROW_HEADERS)."""
    return [[f"`{k}`" if k.startswith("ulnorm") else k] + ([f"{s.med('wall'):.3f}", f"{s.med('cpu'):.3f}",
                                                             f"{s.med('rss'):.0f}", f"{s.med('load'):.2f}"]
                                                            if s.ok else [s.error or "-", "", "", ""])
            for k, s in stats.items()]


def string_ids(ul: list[str], args, outdir: Path, targets: list[list[str]]) -> list[str]:
    """The full-size comparison with string document ids: MS MARCO documents' D + number, TREC's
    XX-1234-5678 (the same judgements and rankings as the numeric run)."""
    have_pytrec = importlib.util.find_spec("pytrec_eval") is not None
    report = []
    for ids in STRING_IDS:
        qrels, run = dataset(args.data, args.queries, args.seed, ids)
        warm(qrels, run)
        cmds = {"ulnorm-eval": [*ul, qrels, run], "ulnorm-eval --norm none": [*ul, "--norm", "none", qrels, run]}
        if have_pytrec:
            cmds["pytrec_eval"] = [sys.executable, str(HERE / "peers.py"), "pytrec_eval", qrels, run]
        log(f"string ids ({ids}): {args.queries * DEPTH:,} run lines, median of {args.repeat}")
        st = bench(cmds, args.repeat, outdir, f"q{args.queries}-{ids}")
        report += [f"### {args.queries * DEPTH:,} run lines with `{ids}` document ids, median of {args.repeat} "
                   f"({section_load(st)})", ""]
        report += table(ROW_HEADERS, _rows(st))
        peer = st.get("pytrec_eval")
        if peer is not None and peer.ok and st["ulnorm-eval"].ok:
            KEY["string_time"] = max(KEY.get("string_time", 0.0), st["ulnorm-eval"].med("wall") / peer.med("wall"))
        applies = args.queries >= 7000
        for key, limit, what in (("wall", TARGET_STRING_TIME, "wall time"), ("rss", TARGET_STRING_RSS, "peak RSS")):
            row = _ratio_row(f"{ids} ids: default run {what} / pytrec_eval", limit, st["ulnorm-eval"],
                             peer, key)
            if not applies and not row[-1].startswith("SKIP"):
                row[-1] = f"n/a below 7,000 queries ({row[-1]})"
            targets.append(row)
    return report


def research_size(ul: list[str], args, outdir: Path, targets: list[list[str]]) -> list[str]:
    """One DL-HARD run (50 queries x 1000) and the 17 Robust 2003 runs against trec_eval (its default
    measures; ulnorm-eval's default measures and variants), and compare against eval on the 17 runs."""
    trec_eval = shutil.which("trec_eval")
    dl, rob = SHARED / "dlhard-passage", SHARED / "robust03"
    if not (dl / "qrels.txt").exists() or not (rob / "qrels.txt").exists():
        targets.append(["research-size runs (DL-HARD, Robust 2003)", "", "-", "", f"SKIP (no data in {SHARED})"])
        return []
    plain = args.data / "plain"
    qrels_dl = str(dl / "qrels.txt")
    run_dl = plain_copy(dl / "runs" / "bm25.run.gz", plain / "dlhard_bm25.run")
    qrels_rob = str(rob / "qrels.txt")
    runs_rob = [plain_copy(p, plain / "robust03" / p.name.removesuffix(".gz"))
                for p in sorted((rob / "runs").iterdir())][:17]
    warm(qrels_dl, run_dl, qrels_rob, *runs_rob)
    rep = args.small_repeat
    report = []

    # the same measures on both sides: trec_eval's default (official) measures, no variants
    cmds = {"ulnorm-eval": [*ul, qrels_dl, run_dl], SAME: [*ul, *SAME_ARGS, qrels_dl, run_dl]}
    if trec_eval:
        cmds["trec_eval"] = [trec_eval, qrels_dl, run_dl]
    if importlib.util.find_spec("pytrec_eval") is not None:
        cmds["pytrec_eval"] = [sys.executable, str(HERE / "peers.py"), "pytrec_eval", qrels_dl, run_dl]
    # The floor of any CPython tool built on numpy: starting the interpreter and importing numpy.
    cmds[FLOOR] = [sys.executable, "-c", "import numpy"]
    log(f"DL-HARD bm25 (50 queries x 1000), median of {rep}")
    st = bench(cmds, rep, outdir, "dlhard")
    report += [f"### One DL-HARD run (bm25, 50 queries x 1000 lines), median of {rep} ({section_load(st)})", "",
               "trec_eval: its default measures; ulnorm-eval: its default measures and variants, and "
               f"`{SAME}`: trec_eval's default measures, no variants; "
               "pytrec_eval: nDCG@10 and AP through peers.py; "
               f"`{FLOOR}`: starting Python and importing numpy, nothing else.", ""]
    report += table(ROW_HEADERS, _rows(st))
    # retired: below the start-up cost of any CPython + numpy tool (the floor row); like_for_like.py's
    # fresh-process target against pytrec_eval replaced it
    targets.append(_reported(_ratio_row("one DL-HARD run: wall time / trec_eval (retired target: 2.0, below the "
                                        "import-numpy floor)", TARGET_SMALL_VS_TREC_EVAL,
                                        st["ulnorm-eval"], st.get("trec_eval"))))
    targets.append(_reported(_ratio_row("one DL-HARD run, trec_eval's measures on both sides: wall time / trec_eval",
                                        float("inf"), st[SAME], st.get("trec_eval"))))
    for key, name in (("dlhard_s", SAME), ("trec_eval_s", "trec_eval"), ("floor_s", FLOOR)):
        if name in st and st[name].ok:
            KEY[key] = st[name].med("wall")
    for label, peer in (("one DL-HARD run: wall time / pytrec_eval (reported)", "pytrec_eval"),
                        (f"`{FLOOR}` / trec_eval: the least a Python + numpy tool can take (reported)", None)):
        u = st["ulnorm-eval"] if peer else st[FLOOR]
        r = _ratio_row(label, float("inf"), u, st.get(peer or "trec_eval"))
        r[1], r[-1] = "-", "(reported)" if not r[-1].startswith("SKIP") else r[-1]
        targets.append(r)

    cmds = {"ulnorm-eval (17 runs)": [*ul, qrels_rob, *runs_rob],
            f"{SAME} (17 runs)": [*ul, *SAME_ARGS, qrels_rob, *runs_rob],
            "ulnorm-eval compare (17 runs)": [*ul, "compare", qrels_rob, *runs_rob]}
    if trec_eval:
        cmds["trec_eval looped x17"] = ["sh", "-c", 'q=$1; shift; for f in "$@"; do "$0" "$q" "$f" || exit; done',
                                        trec_eval, qrels_rob, *runs_rob]
    log(f"Robust 2003, 17 runs, median of {rep}")
    st = bench(cmds, rep, outdir, "robust17")
    report += [f"### The 17 Robust 2003 runs, median of {rep} ({section_load(st)})", "",
               "ulnorm-eval: one process for all 17 runs (its default measures and variants; and "
               f"`{SAME}`, trec_eval's default measures); trec_eval: one process per run, in a shell loop.", ""]
    report += table(ROW_HEADERS, _rows(st))
    targets.append(_ratio_row("17 Robust 2003 runs, one process: wall time / trec_eval looped",
                              TARGET_ROBUST_VS_TREC_EVAL, st["ulnorm-eval (17 runs)"], st.get("trec_eval looped x17")))
    targets.append(_ratio_row("compare on the 17 runs: wall time / eval on them", TARGET_COMPARE_VS_EVAL,
                              st["ulnorm-eval compare (17 runs)"], st["ulnorm-eval (17 runs)"]))
    ev, cmp_, te = st["ulnorm-eval (17 runs)"], st["ulnorm-eval compare (17 runs)"], st.get("trec_eval looped x17")
    if ev.ok and cmp_.ok:
        KEY["compare"] = cmp_.med("wall") / ev.med("wall")
    same = st[f"{SAME} (17 runs)"]
    targets.append(_reported(_ratio_row("17 Robust 2003 runs, trec_eval's measures on both sides: wall time / "
                                        "trec_eval looped", float("inf"), same, te)))
    if same.ok and te is not None and te.ok:
        KEY["robust_same"] = same.med("wall") / te.med("wall")
    return report


def truncated(run: str, depth: int) -> str:
    """The run cut to its top ``depth`` lines per query (generated runs list each query's lines in
    rank order), written once beside it."""
    out = Path(run).with_name(Path(run).stem + f"_top{depth}.run")
    if not out.exists():
        tmp = out.with_suffix(".tmp")
        with open(run, "rb") as src, open(tmp, "wb") as dst:
            last, n = None, 0
            for line in src:
                q = line.split(None, 1)[0]
                n = n + 1 if q == last else 0
                last = q
                if n < depth:
                    dst.write(line)
        tmp.rename(out)
    return str(out)


def stream_check(ul: list[str], args, outdir: Path, targets: list[list[str]]) -> list[str]:
    """Peak RSS of --stream at 2M and 20M run lines, and its output against the in-memory path."""
    helps = [subprocess.run([*ul, *sub, "--help"], capture_output=True, text=True).stdout for sub in ([], ["eval"])]
    if not any("--stream" in h for h in helps):
        log("stream check skipped: `ulnorm-eval --help` lists no --stream option")
        targets.append(["--stream", "", "-", "", "SKIP (no --stream option)"])
        return ["### Streaming", "", "Skipped: this ulnorm-eval has no `--stream` option.", ""]
    # the in-memory path: --no-stream where streaming is the default for regular files
    in_memory = ["--no-stream"] if any("--no-stream" in h for h in helps) else []
    rows, stream_rss, same = [], {}, []
    # The target is about run length: the same qrels (20,000 queries) with the run cut to its top
    # 100 documents per query (2M lines) and whole (20M lines).  The row with a 2,000-query qrels
    # shows what a 10x larger qrels adds on top (the qrels are held in memory).
    big_q = STREAM_SIZES[1]
    qrels_big, run_big = dataset(args.data, big_q, args.seed)
    cases = [("2M (same qrels)", qrels_big, truncated(run_big, STREAM_SHORT_DEPTH)), ("20M", qrels_big, run_big),
             ("2M (2,000-query qrels)", *dataset(args.data, STREAM_SIZES[0], args.seed))]
    for label, qrels, run in cases:
        warm(qrels, run)
        log(f"stream check: {label}")
        # tsv: every query at full precision, so "identical" means identical per-query values
        st = bench({"--stream": [*ul, "--stream", "-f", "tsv", qrels, run],
                    "in memory": [*ul, *in_memory, "-f", "tsv", qrels, run]}, 1, outdir,
                   "stream-" + label.split()[0] + ("-q2000" if "2,000" in label else ""))
        for mode, s in st.items():
            rows.append([label, mode] + ([f"{s.med('wall'):.2f}", f"{s.med('rss'):.0f}", f"{s.med('load'):.2f}"]
                                         if s.ok else [s.error or "-", "", ""]))
        if st["--stream"].ok:
            stream_rss[label] = st["--stream"].med("rss")
        if st["--stream"].ok and st["in memory"].ok:
            same.append(st["--stream"].output.read_bytes() == st["in memory"].output.read_bytes())
        else:
            same.append(False)
    small, big = "2M (same qrels)", "20M"
    r = stream_rss[big] / stream_rss[small] if small in stream_rss and big in stream_rss else None
    targets.append(["--stream peak RSS, 20M / 2M run lines (same qrels)", f"≤ {TARGET_STREAM_RSS}",
                    "-" if r is None else f"{r:.2f}", "", verdict(False if r is None else r <= TARGET_STREAM_RSS)])
    targets.append(["--stream peak RSS at 20M lines", "< 1024 MiB",
                    "-" if big not in stream_rss else f"{stream_rss[big]:.0f} MiB", "",
                    verdict(big in stream_rss and stream_rss[big] < 1024)])
    targets.append(["--stream output identical to in-memory (`-f tsv`)", "every size",
                    ", ".join("yes" if x else "no" for x in same), "", verdict(all(same))])
    return (["### Streaming (`--stream`, one run each, `-f tsv`)", ""]
            + table(["run lines", "mode", "wall s", "peak RSS MiB", "load"], rows))


if __name__ == "__main__":
    sys.exit(main())
