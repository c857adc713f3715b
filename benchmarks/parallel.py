"""Speed-up of ``ulnorm-eval -j 2`` (and of a 2-worker Dask LocalCluster) over ``-j 1``.

    python benchmarks/parallel.py                 # Robust 2003 (17 runs) and a 7M-line run, median of 3
    python benchmarks/parallel.py --repeat 5 --no-dask --out parallel.md

Two workloads: the 17 Robust 2003 runs of ../shared/data (gzip, so one task per run) and the
generated 7000 x 1000 run of generate.py (7M lines, uncompressed, so 65 query-block tasks of 4 MiB),
each ``ulnorm-eval -f tsv -q`` with the default measures and variants.  Every configuration runs in
its own process; the repeats are interleaved across configurations, so a change in machine load hits
all of them alike.  The report gives medians of wall and CPU time (the CPU of the worker processes
included), the speed-up (wall of -j 1 / wall of the configuration), whether the output is
byte-identical to -j 1, and the load average before and after: on a shared machine the other
processes' load bounds what two workers can gain (and with the kernel's autogroup scheduling, a
command's worker processes share one session's slice of the CPU).  A second table gives the bound
two idle cores would allow: the CPU time of the serial part and of the tasks (Amdahl's law); and a
control (two pure-Python tasks in one and in two processes) shows what two processes got from the
machine during the measurement.
Markdown on stdout; progress on stderr.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from generate import generate

HERE = Path(__file__).resolve().parent
SHARED = Path(os.environ.get("ULNORM_EVAL_SHARED_DATA", HERE.parent.parent / "shared" / "data"))


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def timed(argv: list, out: Path) -> tuple:
    """(wall, cpu) of one command, CPU of all its descendants included; its stdout goes to ``out``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    with open(out, "wb") as fh:
        rc = subprocess.run(argv, stdout=fh, stderr=subprocess.DEVNULL).returncode
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if rc != 0:
        raise SystemExit(f"{' '.join(map(str, argv))}: exit {rc}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


# CPU seconds of the serial part of a command (imports, qrels, output) and of its tasks, in a fresh
# interpreter, tasks one after the other with one Arrow thread (as in a worker).
_PARTS = r"""
import json, sys, time
c0 = time.process_time()
import pyarrow as pa
from ulnorm_eval.pipeline import evaluate as api, parallel
from ulnorm_eval.pipeline.orchestrator import evaluate_runs
from ulnorm_eval.render.formats import FORMATS
pa.set_cpu_count(1)
c1 = time.process_time()
qp, runs = sys.argv[1], sys.argv[2:]
q = api.load_qrels(qp); m = api.resolve_metrics(None, None); o = api.Options()
c2 = time.process_time()
with parallel.executor(q, 1) as ex:
    res = list(evaluate_runs(q, runs, m, o, ex))
c3 = time.process_time()
FORMATS["tsv"](api.Result(m, res, o, qp, runs), per_query=True)
c4 = time.process_time()
print(json.dumps({"serial": (c1 - c0) + (c2 - c1) + (c4 - c3), "tasks": c3 - c2}))
"""


# The control: what two processes get from this machine right now.  Two equal pure-Python tasks
# (no I/O, no memory traffic) in one and in two worker processes; on two idle cores the ratio is ~2.
_CONTROL = r"""
import json, time
from concurrent.futures import ProcessPoolExecutor
def spin(n):
    s = 0
    for i in range(n):
        s += i
    return s
out = {}
for j in (1, 2):
    t = time.perf_counter()
    with ProcessPoolExecutor(j) as ex:
        list(ex.map(spin, [10_000_000] * 2))
    out[j] = time.perf_counter() - t
print(json.dumps(out[1] / out[2]))
"""


def control() -> float:
    out = subprocess.run([sys.executable, "-c", _CONTROL], capture_output=True, text=True, check=True)
    return float(out.stdout)


def parts(inputs: list) -> dict:
    out = subprocess.run([sys.executable, "-c", _PARTS, *inputs], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def load() -> str:
    return " / ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--queries", type=int, default=7000, help="queries of the generated run (x 1000 lines)")
    ap.add_argument("--data", default=str(HERE / "data"))
    ap.add_argument("--shared", default=str(SHARED), help="the shared data directory (robust03/)")
    ap.add_argument("--no-dask", action="store_true", help="skip the LocalCluster configuration")
    ap.add_argument("--out", help="also write the report to this file")
    a = ap.parse_args()

    robust = Path(a.shared) / "robust03"
    gq, gr = (os.path.join(a.data, f"q{a.queries}_d1000.{x}") for x in ("qrels", "run"))
    if not (os.path.exists(gq) and os.path.exists(gr)):  # generate.py writes them seeded, and atomically
        log(f"generating {a.queries} x 1000 run lines into {a.data}")
        gq, gr = generate(a.data, a.queries, 1000, 30, 1)
    workloads = {
        f"Robust 2003, {len(list((robust / 'runs').iterdir()))} runs (gzip)":
            [str(robust / "qrels.txt"), *sorted(str(p) for p in (robust / "runs").iterdir())],
        f"generated, {a.queries * 1000:,} run lines (uncompressed)": [gq, gr],
    }
    configs = {"-j 1": ["-j", "1"], "-j 2": ["-j", "2"]}
    cluster = None
    if not a.no_dask:
        try:
            import dask.distributed  # noqa: F401 - only whether it is installed
        except ImportError:
            log("dask.distributed is not installed: skipping the LocalCluster (pip install '.[dask]' in a checkout)")
        else:
            from run import start_local_cluster

            cluster = start_local_cluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                          dashboard_address=None, silence_logs=50)
            configs["LocalCluster, 2 workers"] = ["--scheduler", cluster.scheduler_address]

    exe = [sys.executable, "-c", "from ulnorm_eval.cli import main; main()"]
    results = HERE / "results"
    results.mkdir(exist_ok=True)
    load_before = load()
    stats = {(w, c): [] for w in workloads for c in configs}
    controls = []
    try:
        for rep in range(a.repeat):
            controls.append(control())
            for w, inputs in workloads.items():
                for c, opt in configs.items():
                    log(f"[{rep + 1}/{a.repeat}] {w}: {c}")
                    out = results / f"parallel-{list(workloads).index(w)}-{list(configs).index(c)}.tsv"
                    stats[(w, c)].append(timed([*exe, "-f", "tsv", "-q", *opt, *inputs], out))
    finally:
        if cluster is not None:
            cluster.close()
    load_after = load()

    lines = ["# Parallel evaluation: speed-up over -j 1", "",
             f"- machine: {os.cpu_count()} CPUs, Python {sys.version.split()[0]}",
             f"- load average (1/5/15 min): {load_before} before, {load_after} after",
             f"- `ulnorm-eval -f tsv -q` (the defaults: nDCG@10, AP, RBP(p=0.8), each with E and EM), median of {a.repeat}; "
             "CPU includes the worker processes (not the LocalCluster's, which run outside)",
             "- control, what 2 processes get from the machine now (2 equal pure-Python tasks, 1 process / "
             f"2 processes; ~2 on idle cores), once per repeat: {', '.join(f'{c:.2f}' for c in controls)}", "",
             "| workload | configuration | wall s | CPU s | speed-up (wall -j 1 / wall) | output = -j 1 |",
             "|---|---|---|---|---|---|"]
    for wi, w in enumerate(workloads):
        base_wall = statistics.median(x[0] for x in stats[(w, "-j 1")])
        ref = (results / f"parallel-{wi}-0.tsv").read_bytes()
        for ci, c in enumerate(configs):
            wall = statistics.median(x[0] for x in stats[(w, c)])
            cpu = statistics.median(x[1] for x in stats[(w, c)])
            same = (results / f"parallel-{wi}-{ci}.tsv").read_bytes() == ref
            lines.append(f"| {w} | {c} | {wall:.2f} | {cpu:.2f} | {base_wall / wall:.2f} | {'yes' if same else 'NO'} |")
    lines += ["", "What two workers can gain on idle cores (Amdahl): CPU seconds of the command's serial part "
              "(imports, qrels, output) and of its tasks, one after the other with one Arrow "
              "thread; bound = (serial + tasks) / (serial + tasks / 2), median of the repeats.", "",
              "| workload | serial CPU s | tasks CPU s | bound for 2 workers |", "|---|---|---|---|"]
    for w, inputs in workloads.items():
        got = [parts(inputs) for _ in range(a.repeat)]
        ser = statistics.median(g["serial"] for g in got)
        tasks = statistics.median(g["tasks"] for g in got)
        lines.append(f"| {w} | {ser:.2f} | {tasks:.2f} | {(ser + tasks) / (ser + tasks / 2):.2f} |")
    report = "\n".join(lines) + "\n"
    print(report)
    if a.out:
        Path(a.out).write_text(report)


if __name__ == "__main__":
    main()
