"""How much time and memory ulnorm-eval spends refusing hostile input, and the harness's own memory probe.

Usage: python benchmarks/limits.py [--quick]

The tests check that each input is refused (one line, exit 2; tests/cli/test_hostile_io.py); this measures
what the refusal costs, against the limits the hostile passes set (issue 40): each command's wall time
and its peak resident memory (the launcher's getrusage(RUSAGE_CHILDREN).ru_maxrss, which also counts the
launcher's own ~10 MiB).  Also: --scheduler-timeout 1 against a listener that never answers gives up
within 1 s plus start-up, and benchmarks/run.py's wrapper reports the peak RSS of a parent and a child
that each hold 60 MB at the same time as their sum (both buffers), not only the larger one.
Prints one line per probe; exits 1 when a probe exceeds its limit (numbers on a loaded machine vary).
"""
from __future__ import annotations

import argparse
import bz2
import gzip
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CMD = [sys.executable, "-m", "ulnorm_eval"]
QRELS = "q1 0 d1 1\nq1 0 d2 0\n"
RUN = "q1 Q0 d1 1 2.0 A\nq1 Q0 d2 2 1.0 A\n"
# the command under a launcher that writes its peak RSS (KiB) to $HWM_FILE
LAUNCHER = ("import os, resource, subprocess, sys\n"
            "code = subprocess.call(sys.argv[1:])\n"
            "open(os.environ['HWM_FILE'], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\n"
            "sys.exit(code)")


def bounded(args, cwd: Path) -> tuple[int, float, float]:
    """(exit code, wall seconds, peak RSS in MiB) of ulnorm-eval ARGS run in ``cwd``."""
    hwm = cwd / ".hwm"
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", LAUNCHER, *CMD, *map(str, args)], cwd=cwd, capture_output=True,
                          env={**os.environ, "HWM_FILE": str(hwm)}, timeout=600)
    wall = time.perf_counter() - start
    return proc.returncode, wall, int(hwm.read_text()) / 1024


def endless_fifo(d: Path) -> tuple[int, float, float]:
    """A qrels FIFO of lines that never end: refused after a few blocks."""
    fifo = d / "endless"
    os.mkfifo(fifo)

    def writer():
        try:
            with open(fifo, "wb") as fh:
                for _ in range(4096):
                    fh.write(b"x" * (1 << 20))
        except OSError:  # the reader refused and closed
            pass

    threading.Thread(target=writer, daemon=True).start()
    return bounded(["endless", "a.run"], d)


def silent_scheduler(d: Path) -> tuple[int, float, float]:
    """--scheduler at a listener that accepts and never answers, --scheduler-timeout 1."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        return bounded(["--scheduler", f"tcp://127.0.0.1:{sock.getsockname()[1]}", "--scheduler-timeout", "1",
                        "qrels", "a.run", "a.run"], d)


def wrapper_tree_rss() -> float:
    """benchmarks/run.py's peak RSS of a parent and its child holding 60 MB each at once (MiB)."""
    sys.path.insert(0, str(HERE))
    import run

    two = ("import subprocess, sys, time\nheld = bytearray(60 << 20)\n"
           "child = subprocess.Popen([sys.executable, '-c', 'import time; held = bytearray(60 << 20); time.sleep(0.6)'])\n"
           "time.sleep(0.6)\nchild.wait()\n")
    with tempfile.TemporaryDirectory() as tmp:
        stats = run.Stats([sys.executable, "-c", two], Path(tmp) / "out")
        run.measure(stats)
    if stats.error:
        raise SystemExit(f"limits.py: run.py's wrapper failed: {stats.error}")
    return stats.rss[0]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="a smaller gzip bomb (20 MB instead of 200 MB)")
    args = ap.parse_args()
    scale = 10 if args.quick else 1
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "qrels").write_text(QRELS)
        (d / "a.run").write_text(RUN)
        (d / "bomb.gz").write_bytes(gzip.compress(b"1" * ((200 << 20) // scale), compresslevel=9))
        (d / "nl.gz").write_bytes(gzip.compress(b"\n" * (512 << 20), 9))  # refused past 64 MiB: not scaled
        (d / "nl.bz2").write_bytes(bz2.compress(b"\n" * (512 << 20)))
        (d / "blank").write_bytes(b"\n" * 3_000_000 + b"   \n\t\n")
        probes = {  # name: (run it, wall limit in s, RSS limit in MiB)
            "line without a newline from a FIFO": (lambda: endless_fifo(d), 30, 400),
            "gzip bomb as qrels": (lambda: bounded(["bomb.gz", "a.run"], d), 30, 400),
            "gzip bomb as a run with -j 2": (lambda: bounded(["-j", "2", "qrels", "a.run", "bomb.gz"], d), 30, 400),
            "gzip of blank lines as qrels": (lambda: bounded(["nl.gz", "a.run"], d), 30, 400),
            "bzip2 of blank lines as qrels": (lambda: bounded(["nl.bz2", "a.run"], d), 30, 400),
            "3 million blank lines as qrels": (lambda: bounded(["blank", "a.run"], d), 30, 400),
            "--scheduler-timeout 1, silent listener": (lambda: silent_scheduler(d), 45, 1000),
        }
        for name, (probe, wall_limit, rss_limit) in probes.items():
            code, wall, rss = probe()
            ok = code == 2 and wall < wall_limit and rss < rss_limit
            failed += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {name}: exit {code}, {wall:.2f} s (limit {wall_limit}), "
                  f"{rss:.0f} MiB (limit {rss_limit})")
    rss = wrapper_tree_rss()
    ok = rss > 120 if sys.platform.startswith("linux") else rss > 60
    failed += not ok
    print(f"{'ok  ' if ok else 'FAIL'} run.py's peak RSS of two processes holding 60 MB each: {rss:.0f} MiB "
          f"(their sum: > 120 on Linux)")
    print(f"{failed} probe(s) over their limit; load average {os.getloadavg()[0]:.2f}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
