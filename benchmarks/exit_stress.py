"""Stress the process exit: hundreds of runs of the success and error paths, several at a time
(load), counting every exit code that is not the expected one.

An interpreter shutdown that tears down Arrow's thread pool while a reader thread is still inside
Arrow aborts the process ("terminate called without an active exception", exit 134); a CI gate reads
exit codes, so even 1 in 10,000 is a defect.  Usage::

    python benchmarks/exit_stress.py [--runs 300] [--parallel 4] [--scenario NAME ...]

Prints, per scenario, the runs, the exit codes seen (with counts) and the aborts; exits 1 if any run
ended with an unexpected code.  Scenarios (each from a temporary directory holding small TREC files):

- ok: a successful evaluation (exit 0)
- gate: a failed --fail-below gate (exit 1)
- nan: a run with a `nan` score in its second block of lines (exit 2)
- dup: compare with a duplicate document in the first run (exit 2, the next run being read ahead)
- sigint: SIGINT while the output is rendered (exit 130)
- big-ok: a streamed run of several blocks (exit 0)
"""
from __future__ import annotations

import argparse
import collections
import concurrent.futures
import os
import subprocess
import sys
import tempfile
import time

CLI = [sys.executable, "-m", "ulnorm_eval"]  # the process exits as the console script does
SIGINT_SCRIPT = ("import os\nfrom ulnorm_eval.render import formats\n"
                 "formats.FORMATS['trec'] = lambda *a, **k: os.kill(os.getpid(), 2)\n"
                 "from ulnorm_eval.cli import main\nmain()\n")  # saved as 'ulnorm-eval': exits as the script


def make_files(d: str) -> dict:
    qrels = "".join(f"q{i} 0 d{i}a 1\nq{i} 0 d{i}b 0\n" for i in range(200))
    run = "".join(f"q{i} Q0 d{i}a 1 2.0 A\nq{i} Q0 d{i}b 2 1.0 A\n" for i in range(200))
    lines = [f"q{i} Q0 d{i}x{j} {j + 1} {1000 - j} A\n" for i in range(200) for j in range(400)]
    nan = lines[: len(lines) // 2] + ["q199 Q0 dnan 9999 nan A\n"] + lines[len(lines) // 2:]
    paths = {}
    for name, text in (("qrels", qrels), ("run", run), ("big", "".join(lines)), ("nan", "".join(nan)),
                       ("dup", run + "q0 Q0 d0a 3 0.5 A\n"), ("ulnorm-eval", SIGINT_SCRIPT)):
        paths[name] = os.path.join(d, name)
        with open(paths[name], "w") as fh:
            fh.write(text)
    paths["sigint"] = paths.pop("ulnorm-eval")
    return paths


def scenarios(p: dict) -> dict:
    quiet = ["-m", "P@1", "--norm", "none"]
    return {
        "ok": (CLI + [*quiet, p["qrels"], p["run"]], 0),
        "gate": (CLI + [*quiet, "--fail-below", "P@1=2", p["qrels"], p["run"]], 1),
        "nan": (CLI + [*quiet, "--stream", p["qrels"], p["nan"]], 2),
        "dup": (CLI + ["compare", *quiet, p["qrels"], p["dup"], p["big"], p["run"]], 2),
        "sigint": ([sys.executable, p["sigint"], *quiet, p["qrels"], p["run"]], 130),
        "big-ok": (CLI + [*quiet, "--stream", p["qrels"], p["big"]], 0),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=300, help="runs per scenario")
    ap.add_argument("--parallel", type=int, default=4, help="processes at a time (load)")
    ap.add_argument("--scenario", action="append", help="only these scenarios (repeatable)")
    args = ap.parse_args(argv)
    bad = 0
    with tempfile.TemporaryDirectory() as d:
        cases = scenarios(make_files(d))
        chosen = args.scenario or list(cases)
        for name in chosen:
            cmd, want = cases[name]
            env = dict(os.environ)
            env.pop("ULNORM_EVAL_DEBUG", None)
            t0 = time.perf_counter()

            def one(_):
                r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, timeout=600)
                return r.returncode, r.stderr

            codes, samples = collections.Counter(), {}
            with concurrent.futures.ThreadPoolExecutor(args.parallel) as ex:
                for code, err in ex.map(one, range(args.runs)):
                    codes[code] += 1
                    if code != want:
                        samples.setdefault(code, err.decode(errors="replace").strip().splitlines()[-1:])
            wrong = sum(n for c, n in codes.items() if c != want)
            aborts = codes.get(-6, 0) + codes.get(134, 0)
            bad += wrong
            print(f"{name:7s} runs {args.runs:5d}  expected {want:3d}  codes {dict(sorted(codes.items()))}  "
                  f"aborts {aborts}  unexpected {wrong}  ({time.perf_counter() - t0:.0f} s)"
                  + (f"  e.g. {samples}" if samples else ""), flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
