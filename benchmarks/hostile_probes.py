"""Hostile passes: probes over what changed on main (issue 40: hole bounds and worlds, the UL2 'all' row
and captions, trec_eval mode, -Z, the gate, escaping, seeds, the library's refusals; issue 52's fresh
pass, :func:`fifth_pass`: the one aggregate, open=est, the executors, notes, repro, Tukey, --trec).

Usage: python benchmarks/hostile_probes.py [--seed N] [--quick]

Every probe is one command (in-process through click's test runner, or a library call) checked for
what the developers' guide promises: an exit code of 0, 1 (only a failed gate) or 2; no traceback and
no 'internal error'; on exit 2 nothing on stdout, no -o file written and a last stderr line
``ulnorm-eval: ...``; no input file changed; and, where a number can be worked out independently, the
number (precision, AP and reciprocal rank by brute force in trec_eval's order; the gate's verdict from
the printed mean; LB <= value <= UB; trec_eval 10's bytes from /work/tools/trec_eval when present;
-j 2 and --stream against -j 1 and --no-stream).  Prints each failure and the count of probes; exits 1
when any probe failed.  Not a unit test: a randomised sweep for a session (speed is not measured).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from click.testing import CliRunner  # noqa: E402

from ulnorm_eval.cli.main import main  # noqa: E402

TREC_EVAL = Path("/work/tools/trec_eval/trec_eval")


class Probes:
    def __init__(self, root: Path):
        self.root, self.count, self.failures = root, 0, []

    def inputs(self):
        return sorted(p for p in self.root.rglob("*") if p.is_file() and not p.name.startswith("out"))

    def digest(self):
        return {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in self.inputs()}

    def fail(self, name, why):
        self.failures.append(f"{name}: {why}")

    def run(self, name, args, expect=None, check=None, input=None, out=None):
        """One CLI probe.  ``expect``: the allowed exit codes; ``check(res)``: extra assertions (a string
        returned, or an AssertionError raised, is a failure)."""
        self.count += 1
        before = self.digest()
        if out is not None and Path(out).exists():
            Path(out).unlink()
        try:
            res = CliRunner().invoke(main, [str(a) for a in args], input=input, catch_exceptions=True)
        except Exception as exc:  # noqa: BLE001
            self.fail(name, f"raised {type(exc).__name__}: {exc}")
            return None
        err = res.stderr
        if res.exception is not None and not isinstance(res.exception, SystemExit):
            self.fail(name, f"exception {type(res.exception).__name__}: {res.exception}")
        if res.exit_code not in (0, 1, 2):
            self.fail(name, f"exit {res.exit_code}")
        if "Traceback" in err or "internal error" in err:
            self.fail(name, f"traceback or internal error: {err.strip().splitlines()[-1][:200]}")
        if res.exit_code == 2:
            lines = [x for x in err.splitlines() if x.strip()]
            if not lines or not lines[-1].startswith("ulnorm-eval: "):
                self.fail(name, f"exit 2 without a one-line error: {err[:200]!r}")
            if res.stdout:
                self.fail(name, f"exit 2 with output on stdout: {res.stdout[:120]!r}")
            if out is not None and Path(out).exists():
                self.fail(name, "exit 2 left the -o file")
        if res.exit_code == 1 and "gate FAILED" not in err:
            self.fail(name, "exit 1 without a failed gate's verdict")
        if expect is not None and res.exit_code not in expect:
            self.fail(name, f"exit {res.exit_code}, expected {expect}: {err.strip().splitlines()[-1:] }")
        if self.digest() != before:
            self.fail(name, "an input file changed")
        if check is not None and res.exit_code in (expect or (0, 1, 2)):
            try:
                why = check(res)
            except AssertionError as exc:
                why = f"assertion: {exc}"
            except Exception as exc:  # noqa: BLE001
                why = f"check raised {type(exc).__name__}: {exc}"
            if why:
                self.fail(name, why)
        return res

    def library(self, name, fn, raises=None, check=None):
        """One library probe: ``raises`` the exception type expected (its message must not be a raw
        Python one), or ``check(value)``."""
        self.count += 1
        try:
            value = fn()
        except Exception as exc:  # noqa: BLE001
            if raises is None or not isinstance(exc, raises):
                self.fail(name, f"raised {type(exc).__name__}: {exc}")
            return None
        if raises is not None:
            self.fail(name, f"accepted (expected {raises.__name__}): {str(value)[:120]}")
            return None
        if check is not None:
            why = check(value)
            if why:
                self.fail(name, why)
        return value


# --------------------------------------------------------------------------- brute force

def ranking(run_lines, qid):
    """trec_eval's order of one query's documents: score descending, then docid descending."""
    docs = [(float(s), d) for q, d, s in run_lines if q == qid]
    docs.sort(key=lambda x: (-x[0], tuple(-b for b in x[1].encode())))
    return [d for _, d in docs]


def brute(qrels, run_lines, measure, k=None, level=1):
    """Per qrels query: P@k, AP (all relevant judged documents) or RR, worked out in plain Python."""
    out = {}
    for q in sorted({x[0] for x in qrels}):
        rel = {d for qq, d, g in qrels if qq == q and g >= level}
        ranked = ranking(run_lines, q)
        if measure == "P":
            out[q] = sum(d in rel for d in ranked[:k]) / k
        elif measure == "AP":
            hits, s = 0, 0.0
            for i, d in enumerate(ranked, 1):
                if d in rel:
                    hits += 1
                    s += hits / i
            out[q] = s / len(rel) if rel else 0.0
        elif measure == "RR":
            out[q] = next((1 / i for i, d in enumerate(ranked, 1) if d in rel), 0.0)
    return out


def trec_values(text):
    vals = {}
    for line in text.splitlines():
        parts = line.split("\t")
        if len(parts) == 3:
            vals[(parts[0].strip(), parts[1])] = parts[2]
    return vals


def random_data(rng, nq=6, nd=12, grades=(0, 1, 2, 3), unjudged=0.3):
    qrels, run = [], []
    for q in range(nq):
        qid = f"q{q + 1}"
        docs = [f"d{j}" for j in range(nd)]
        for d in docs:
            if rng.random() > unjudged:
                qrels.append((qid, d, rng.choice(grades)))
        ranked = rng.sample(docs + [f"u{j}" for j in range(4)], rng.randint(1, nd))
        for d in ranked:
            run.append((qid, d, round(rng.uniform(0, 10), rng.choice([0, 1, 3]))))
    if not any(g >= 1 for _, _, g in qrels):  # one relevant document (judged once: a duplicate is refused)
        qrels = [x for x in qrels if x[:2] != ("q1", "d0")] + [("q1", "d0", 1)]
    return qrels, run


def write_qrels(path, qrels):
    path.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in qrels))


def write_run(path, run, tag="r"):
    path.write_text("".join(f"{q} Q0 {d} {i} {s} {tag}\n" for i, (q, d, s) in enumerate(run)))


# --------------------------------------------------------------------------- the probes

def main_(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args(argv)
    rng = random.Random(a.seed)
    tmp = Path(tempfile.mkdtemp(prefix="ulnorm-probes-"))
    os.chdir(tmp)
    P = Probes(tmp)

    q = tmp / "q.txt"
    r = tmp / "r.txt"
    r2 = tmp / "r2.txt"
    base_q, base_r = random_data(rng)
    write_qrels(q, base_q)
    write_run(r, base_r)
    write_run(r2, random_data(rng)[1], "s")

    # 1. brute-force numbers: P@k, AP, RR on random data (trec_eval's order, ties by docid descending)
    for i in range(40 if not a.quick else 8):
        qrels, run = random_data(rng, nq=rng.randint(1, 5), nd=rng.randint(2, 10))
        qi, ri = tmp / f"bq{i}.txt", tmp / f"br{i}.txt"
        write_qrels(qi, qrels)
        write_run(ri, run)
        level = rng.choice([1, 2])
        for m, k, name in (("P", 5, "P@5"), ("AP", None, "AP"), ("RR", None, "RR")):
            want = brute(qrels, run, m, k, level)

            def check(res, want=want, name=name):
                got = {qq: float(v) for (mm, qq), v in trec_values(res.stdout).items() if mm == name and qq != "all"}
                for qq, v in want.items():
                    if not math.isclose(got.get(qq, 0.0), v, abs_tol=1e-12):
                        return f"{name} {qq}: {got.get(qq)} != brute force {v}"
                mean = float(trec_values(res.stdout)[(name, "all")])
                if not math.isclose(mean, sum(want.values()) / len(want), abs_tol=1e-12):
                    return f"{name} all {mean} != {sum(want.values()) / len(want)}"
                return None

            P.run(f"brute {name} #{i}", ["-q", "--norm", "none", "-l", level, "-m", name, "--precision", "17",
                                         qi, ri], (0,), check)

    # 2. the gate's verdict follows the printed mean (fail-below), for plain measures and variants
    for i in range(30 if not a.quick else 6):
        metric = rng.choice(["P@5", "AP", "nDCG@10", "UL2(AP)", "E(P@5)", "RBP(p=0.8)", "RR", "UL1(nDCG@10)"])
        mean_res = CliRunner().invoke(main, ["--norm", "none", "-m", metric, "--precision", "17", str(q), str(r)])
        mean = float(trec_values(mean_res.stdout)[(metric, "all")])
        thr = round(mean + rng.choice([-0.01, 0.0, 0.01, 0.3, -0.3]), 6)
        P.run(f"gate {metric}={thr}", ["--norm", "none", "--fail-below", f"{metric}={thr}", q, r],
              (1,) if mean < thr else (0,))

    # 3. hole bounds: LB <= value <= UB per query, closed and open worlds, and BS inside [LB, UB]
    for world in ["closed", "open", "open=1", "open=50%"]:
        for metric in ["P@5", "nDCG@10", "AP", "RR", "RBP(p=0.8)"]:
            def check(res, metric=metric):
                v = trec_values(res.stdout)
                for (mm, qq), val in v.items():
                    if mm == metric:
                        lb, ub = float(v[(f"LB({metric})", qq)]), float(v[(f"UB({metric})", qq)])
                        x = float(val)
                        if not (lb - 1e-12 <= x <= ub + 1e-12):
                            return f"{qq}: LB {lb} <= {x} <= UB {ub} fails"
                        bs = v.get((f"BS({metric})", qq))
                        if bs is not None and not (lb - 1e-9 <= float(bs) <= ub + 1e-9):
                            return f"{qq}: BS {bs} outside [{lb}, {ub}]"
                return None

            P.run(f"holes {world} {metric}", ["-q", "--holes", world, "--holes-samples", "50", "--norm", "none",
                                             "-m", metric, "--precision", "17", q, r, r2], (0,), check)
    for bad in ["open=-1", "open=x", "closed,maybe", "open=1_0", "open=nan%", "open=1.5", "open=inf", ""]:
        P.run(f"holes bad {bad!r}", ["--holes", bad, q, r], (2,))

    # 4. trec_eval mode against the trec_eval 10 binary, byte for byte
    if TREC_EVAL.exists():
        for i in range(25 if not a.quick else 5):
            qrels, run = random_data(rng, nq=rng.randint(1, 4), nd=rng.randint(2, 9))
            qi, ri = tmp / f"tq{i}.txt", tmp / f"tr{i}.txt"
            write_qrels(qi, qrels)
            write_run(ri, run)
            flags = rng.choice([[], ["-q"], ["-c"], ["-J"], ["-q", "-c"], ["-m", "map"], ["-m", "P.5,10"],
                                ["-m", "ndcg_cut.10"], ["-q", "-m", "recip_rank"], ["-l", "2"]])
            ref = subprocess.run([str(TREC_EVAL), *flags, str(qi), str(ri)], capture_output=True, text=True)

            def check(res, ref=ref, flags=flags):
                if ref.returncode != 0:
                    return None
                if res.stdout != ref.stdout:
                    a_, b_ = res.stdout.splitlines(), ref.stdout.splitlines()
                    diff = next((f"{x!r} vs trec_eval {y!r}" for x, y in zip(a_, b_) if x != y), f"{len(a_)} vs {len(b_)} lines")
                    return f"--trec {flags}: {diff}"
                return None

            P.run(f"trec mode {flags} #{i}", ["--trec", *flags, qi, ri], None, check)

    # 5. every output format agrees on the 'all' row; -j 2, --stream and --no-stream give the same bytes
    for metric in ["nDCG@10", "AP", "UL2(P@5)", "RBP(p=0.8)", "E(AP)"]:
        base = CliRunner().invoke(main, ["-f", "tsv", "-m", metric, "--norm", "none", str(q), str(r)]).stdout
        last = base.splitlines()[-1].split("\t")[-1]

        def check_json(res, last=last, metric=metric):
            doc = json.loads(res.stdout)
            got = doc["runs"][0]["summary"][metric]
            if not (got is None and last in ("NaN", "nan")) and got != float(last):
                return f"json {got} != tsv {last}"
            return None

        P.run(f"json vs tsv {metric}", ["-f", "json", "-m", metric, "--norm", "none", q, r], (0,), check_json)
        for extra in (["--no-stream"], ["--stream"], ["-j", "2"]):
            P.run(f"{extra} {metric}", ["-f", "tsv", "-m", metric, "--norm", "none", *extra, q, r], (0,),
                  lambda res, base=base: None if res.stdout == base else "bytes differ from the default")

    # 6. outputs onto inputs: every input option, -o and --summary-md
    zs = tmp / "zs.txt"
    zs.write_text("q1 P_10 .1 .05\n")
    groups = tmp / "g.txt"
    groups.write_text("3\n")
    for flag in ["-o", "--summary-md"]:
        for target, extra in [(q, []), (r, []), (zs, ["-Z", zs, "--norm", "none", "-m", "P@10"]),
                              (r2, ["--baseline", r2])]:
            P.run(f"{flag} onto {target.name} {extra[:1]}", [*extra, flag, target, "--fail-below", "P@10=0", q, r],
                  (2,))
    for cmd in (["nrg", "--prior", r2], ["compare"], ["queries"]):
        P.run(f"{cmd[0]} -o onto an input", [*cmd, "-o", r2, q, r, r2] if cmd[0] != "nrg" else
              [*cmd, "-o", r2, q, r], (2,))

    # 7. bad option values: refused by name, before anything is read
    gone = tmp / "never.txt"
    bad_opts = [["--seed", "-1"], ["--seed", str(2 ** 64)], ["--seed", "1.5"], ["-l", "nan"], ["-l", "-1"],
                ["--fail-below", "AP=1_0"], ["--fail-below", "AP=nan"], ["--fail-below", "AP=inf"],
                ["--fail-below", "runid=1"], ["--fail-below", "=1"], ["--fail-below", "AP="], ["-M", "0"],
                ["-M", "-3"], ["--precision", "-1"], ["--precision", "99"], ["--permutations", "0"],
                ["--holes-samples", "0"], ["--holes-samples", "-5"], ["--head", "0"], ["--sort", "runid"],
                ["--sort", "nope"], ["-m", ""], ["-m", "nope@3"], ["--norm", ""], ["--norm", "xyz"],
                ["--max-drop", "0.1"], ["--alpha", "0.5"], ["-N", "-1"], ["-D", "1"], ["-R", "prefs"],
                ["-T", "x"], ["--trec-version", "8"], ["-j", "-1"], ["--scheduler", "tcp://127.0.0.1:1", "-j", "2"],
                ["--holes-prior", "x"], ["-Z", gone], ["-o", ""], ["--groups", gone]]
    for opts in bad_opts:
        P.run(f"bad {opts}", [*opts, q, r], (2,))
    for opts in [["--seed", "-5"], ["--subset-size", "0"], ["--subset-size", "3"], ["--baseline", "nope"],
                 ["--reps", "1"], ["--alpha", "2"], ["--table", "nope"], ["--phi-target", "1"],
                 ["--swap-between", "all", str(gone)], ["--holes", "fail"]]:
        P.run(f"compare bad {opts}", ["compare", *opts, q, r, r2], (2,))
    for opts in [["--seed", "-1"], ["--prior", gone], ["--group-by", "("], ["--best-by", "AP"],
                 ["--leave-one-out", "--chronological"]]:
        P.run(f"nrg bad {opts}", ["nrg", *opts, q, r, r2], (2,))
    P.run("nrg without priors", ["nrg", q, r], (2,))
    P.run("nrg repeated prior", ["nrg", "-m", "P@5", "--prior", r2, "--prior", r2, q, r], (0,),
          lambda res: None if "counted once" in res.stderr else "no note for the repeated prior")

    # 8. hostile bytes in inputs: every one refused with file:line or read as documented
    hostile = {
        "mid-BOM": b"q1 0 d1 1\n\xef\xbb\xbfq1 0 d2 1\n", "NUL": b"q1 0 d1 1\x00\n", "lone CR": b"q1 0 d1 1\rq1 0 d2 1\n",
        "grade 1_0": b"q1 0 d1 1_0\n", "grade 2^60": b"q1 0 d1 1152921504606846976\n", "grade nan": b"q1 0 d1 nan\n",
        "3 fields": b"q1 0 d1\n", "UTF-16": "q1 0 d1 1\n".encode("utf-16"), "empty": b"", "comment only": b"# x\n",
        "duplicate": b"q1 0 d1 1\nq1 0 d1 0\n", "latin-1 id": b"q\xe91 0 d1 1\n", "RLO id": "q\u202e1 0 d1 1\n".encode(),
        "huge line": b"q1 0 d1 " + b"1" * 2_000_000 + b"\n", "negative grade": b"q1 0 d1 -1\nq1 0 d2 1\n",
    }
    for name, data in hostile.items():
        hq = tmp / f"hq-{name.replace(' ', '_').replace('^', '')}.txt"
        hq.write_bytes(data)
        P.run(f"qrels {name}", ["-m", "P@5", hq, r], None,
              lambda res: None if "\u202e" not in res.stdout + res.stderr else "U+202E printed raw")
    run_hostile = {"score inf": b"q1 Q0 d1 1 inf r\n", "score 1_0": b"q1 Q0 d1 1 1_0 r\n", "mid-BOM":
                   b"q1 Q0 d1 1 2 r\n\xef\xbb\xbfq1 Q0 d2 2 1 r\n", "5 fields": b"q1 Q0 d1 1 2\n",
                   "dup doc": b"q1 Q0 d1 1 2 r\nq1 Q0 d1 2 1 r\n", "backslash id": b"q\\t1 Q0 d1 1 2 r\n"}
    for name, data in run_hostile.items():
        hr = tmp / f"hr-{name.replace(' ', '_')}.txt"
        hr.write_bytes(data)
        for stream in ("--stream", "--no-stream"):
            P.run(f"run {name} {stream}", ["-q", "-m", "P@5", stream, "--allow-disjoint", q, hr], None,
                  lambda res: None if "\t" not in res.stdout.replace("\t", "", 2 * res.stdout.count("\n"))
                  else "a tab forged inside a field")

    # 9. -Z: a z-score is named and gated as one, in every format
    zs2 = tmp / "zs2.txt"
    zs2.write_text("".join(f"q{i} P_5 0.1 0.1\n" for i in range(1, 7)))
    for fmt in ["trec", "tsv", "csv", "json", "jsonl", "table"]:
        P.run(f"-Z {fmt}", ["-Z", zs2, "--norm", "none", "-m", "P@5", "-f", fmt, q, r], (0,),
              lambda res: None if "ZP@5" in res.stdout else "z-scores not named ZP@5")
    P.run("-Z gate", ["-Z", zs2, "--norm", "none", "-m", "P@5", "--fail-below", "P@5=0", q, r], (0, 1),
          lambda res: None if "z-score, -Z" in res.stderr else "the gate does not say it holds z-scores")
    P.run("-Z with a variant", ["-Z", zs2, "-m", "UL2(P@5)", q, r], (2,))

    # 10. names with invisible characters and backslashes never print raw
    for ch in ["\u202e", "\ufeff", "\u200b", "\x1b", "\\t", "\u2028"]:
        evil = tmp / f"run{ch}x.txt"
        evil.write_text(r.read_text())
        for fmt in ["trec", "table", "tsv", "csv"]:
            P.run(f"name {ch!r} {fmt}", ["-f", fmt, "-m", "P@5", "--norm", "none", q, evil, r], (0,),
                  lambda res, ch=ch: None if (ch not in res.stdout + res.stderr if ch != "\\t" else
                                              "run\\tx" not in (res.stdout + res.stderr).replace("run\\\\tx", ""))
                  else f"{ch!r} printed raw")
        P.run(f"name {ch!r} gate", ["-m", "P@5", "--fail-below", "P@5=0.99", q, evil], (1,),
              lambda res, ch=ch: None if ch not in res.stderr or ch == "\\t" else f"{ch!r} raw in the verdict")
        P.run(f"name {ch!r} markdown", ["compare", "-f", "markdown", "-m", "P@5", "--norm", "none", q, evil, r],
              (0,), lambda res, ch=ch: None if ch not in res.stdout or ch == "\\t" else f"{ch!r} raw in Markdown")
        evil.unlink()

    # 11. the library refuses what the command line refuses
    import numpy as np
    import pandas as pd

    import ulnorm_eval as ue
    from ulnorm_eval.inputs.errors import InputError

    Q = {"q1": {"d1": 1, "d2": 0}, "q2": {"d1": 1}}
    R = {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d1": 1.0}}
    R2 = {"q1": {"d2": 2.0, "d1": 1.0}, "q2": {"d1": 1.0}}
    lib_bad = {
        "None qid": lambda: ue.evaluate({None: {"d1": 1}, **Q}, R, ["P@1"], []),
        "NaN qid": lambda: ue.evaluate({math.nan: {"d1": 1}, **Q}, R, ["P@1"], []),
        "None docid": lambda: ue.evaluate(Q, {"q1": {None: 1.0}}, ["P@1"], []),
        "complex": lambda: ue.evaluate(Q, {"q1": {"d1": 1j}}, ["P@1"], []),
        "datetime": lambda: ue.evaluate(Q, {"q1": {"d1": pd.Timestamp(0)}}, ["P@1"], []),
        "str score": lambda: ue.evaluate(Q, {"q1": {"d1": "1"}}, ["P@1"], []),
        "complex column": lambda: ue.evaluate(Q, pd.DataFrame({"query_id": ["q1"], "doc_id": ["d1"],
                                                               "score": [1 + 1j]}), ["P@1"], []),
        "timedelta column": lambda: ue.evaluate(Q, pd.DataFrame({"query_id": ["q1"], "doc_id": ["d1"],
                                                                 "score": pd.to_timedelta([1], "s")}), ["P@1"], []),
        "measures []": lambda: ue.evaluate(Q, R, [], []),
        "measures [None]": lambda: ue.evaluate(Q, R, [None], []),
        "measures ['']": lambda: ue.evaluate(Q, R, [""], []),
        "compare measures []": lambda: ue.compare(Q, [R, R2], [], []),
        "nrg no priors": lambda: ue.nrg(Q, R, measures=["P@1"]),
        "nrg measures [None]": lambda: ue.nrg(Q, R, [R2], [None]),
        "paper precision -3": lambda: ue.paper_table(ue.compare(Q, [R, R2], ["P@1"], []), precision=-3),
        "paper precision 1.5": lambda: ue.paper_table(ue.compare(Q, [R, R2], ["P@1"], []), precision=1.5),
        "seed -1": lambda: ue.evaluate(Q, R, ["P@1"], [], seed=-1),
        "seed 2**64": lambda: ue.evaluate(Q, R, ["P@1"], [], seed=2 ** 64),
        "seed 1.5": lambda: ue.evaluate(Q, R, ["P@1"], [], seed=1.5),
        "rel_level nan": lambda: ue.evaluate(Q, R, ["P@1"], [], rel_level=math.nan),
        "unknown option": lambda: ue.evaluate(Q, R, ["P@1"], [], nope=1),
        "unknown measure": lambda: ue.evaluate(Q, R, ["nope@3"], []),
        "variants ''": lambda: ue.evaluate(Q, R, ["P@1"], ""),
        "empty run dict": lambda: ue.evaluate(Q, {}, ["P@1"], []),
        "inf score": lambda: ue.evaluate(Q, {"q1": {"d1": math.inf}}, ["P@1"], []),
    }
    for name, fn in lib_bad.items():
        P.library(f"library {name}", fn, (ValueError, TypeError, InputError, KeyError))
    P.library("library numpy numbers", lambda: ue.evaluate(Q, {"q1": {"d1": np.int64(2), "d2": np.float32(1)},
                                                               "q2": {"d1": 1}}, ["P@1"], []),
              check=lambda v: None if v.means == {"run": {"P@1": 1.0}} else f"means {v.means}")

    # 12. the newer commands' options under the generic invariants: compare/queries with hole bounds,
    # summ's gate over incomplete systems, sorting and heads, gates whose hole bounds could flip them
    for cmd in (["compare"], ["queries"]):
        for opts in (["--holes", "closed"], ["--holes", "open"], ["--holes", "open=2"], ["--holes", "closed,warn"],
                     ["--holes", "open,fail"], ["--pool", "run"], ["--pool", "union"], ["--pool", "qrels"],
                     ["-f", "json"], ["-f", "csv"], ["--undefined", "skip"]):
            P.run(f"{cmd[0]} {opts}", [*cmd, *opts, "-m", "P@5", q, r, r2])
    for action in ("warn", "fail"):
        for thr in ("0", "0.2", "0.5", "1"):
            P.run(f"gate holes {action} {thr}", ["--holes", f"open,{action}", "--fail-below", f"P@5={thr}", q, r],
                  None, lambda res, action=action: None if res.exit_code != 0 or "FAIL" not in res.stderr
                  else "exit 0 with a failed check")
    docs = tmp / "docs.tsv"
    docs.write_text((Path(__file__).resolve().parents[1] / "tests/data/summ/docs.tsv").read_text())  # as the tests
    part = tmp / "part.tsv"
    part.write_text("d1\tthe cat sat on the mat\n")
    full = tmp / "full.tsv"
    full.write_text("d1\tthe cat sat on the mat\nd2\tstorms flooded the town\n")
    for m in ("ROUGE-1", "ROUGE-2", "ROUGE-L", "UE2(ROUGE-1)"):
        P.run(f"summ gate incomplete {m}", ["summ", "-m", m, "--fail-below", f"{m}=0", docs, part], (1,))
        P.run(f"summ gate complete {m}", ["summ", "-m", m, "--fail-below", f"{m}=-1", docs, full], (0,))
    for opts in (["--sort", "AP"], ["--sort=-AP"], ["--head", "1"], ["--sort", "UL2(AP)", "--head", "2"],
                 ["-q", "-f", "table"], ["--sort", "E(AP)"], ["-n"], ["-n", "-q"]):
        P.run(f"eval {opts}", [*opts, "-m", "AP", q, r, r2], (0,))

    fifth_pass(P, tmp, rng, a.quick)
    print(f"{P.count} probes, {len(P.failures)} failed")
    for f in P.failures:
        print("  FAIL", f)
    return 1 if P.failures else 0


TREC_EVAL_O0 = Path("/work/tools/trec_eval_O0/trec_eval")  # the parity reference (its rbp initialised)
TREC_FLAGS = [[], ["-q"], ["-c"], ["-J"], ["-q", "-c", "-J"], ["-M", "3"], ["-l", "2"], ["-q", "-l", "3", "-c"],
              ["-m", "all_trec"], ["-q", "-m", "all_trec"], ["-c", "-m", "all_trec"], ["-J", "-m", "all_trec"],
              ["-M", "2", "-m", "all_trec"], ["-N", "7", "-m", "all_trec"], ["-q", "-m", "ndcg_cut.1,3,5", "-m", "bpref"],
              ["-m", "infAP", "-m", "Rprec", "-m", "recip_rank"], ["-q", "-m", "rbp.p=0.5", "-m", "rbp_resid"],
              ["-m", "11pt_avg", "-m", "iprec_at_recall"], ["-q", "-m", "relstring.5", "-m", "G", "-m", "Rndcg"]]


def fifth_pass(P, tmp, rng, quick):
    """Issue 52's fresh pass over the last wave: tests/cli/test_hostile_generated.py's checks over more
    seeds, hole bounds against brute force over every assignment (tests/core/test_holes_options.py's
    check) under -l 0, -M, -J and open=N with one and two runs, --trec against trec_eval 10 (-O0) on
    generated data, and randomly damaged inputs under the generic invariants."""
    root = Path(__file__).resolve().parents[1]
    for folder in ("tests", "tests/cli", "tests/core"):
        sys.path.insert(0, str(root / folder))
    import numpy as np

    import test_hostile_generated as generated
    import test_holes_options as holes

    def case_dir():
        return Path(tempfile.mkdtemp(dir=tmp))

    seeds = range(100, 104 if quick else 120)
    for seed in seeds:
        for name, check in (("closed forms", generated.test_default_columns_and_all_rows_equal_their_closed_forms),
                            ("interval", generated.test_the_em_interval_is_the_same_random_orderings_for_every_run),
                            ("gate n of N", generated.test_the_gate_reads_the_all_row_over_n_of_n_queries_and_its_paired_t),
                            ("blocks", generated.test_query_blocks_on_two_workers_equal_one_run_read_whole),
                            ("repro", generated.test_repro_of_a_run_by_itself_and_by_its_reverse),
                            ("holes-list", generated.test_holes_list_weighs_each_hole_by_its_ranks),
                            ("notes once", generated.test_a_note_said_once_for_several_runs_keeps_their_counts)):
            P.library(f"{name} #{seed}", lambda check=check, seed=seed: check(case_dir(), seed) or "ok")
        flags = [(), ("-l", "0"), ("-l", "2"), ("-M", "3"), ("-J",)][seed % 5]
        P.library(f"open=est {flags} #{seed}", lambda seed=seed, flags=flags: generated.
                  test_the_estimated_ceiling_bounds_as_open_n_with_its_n(case_dir(), seed, flags) or "ok")
        for undefined in ("zero", "skip"):
            P.library(f"omission {undefined} #{seed}", lambda seed=seed, undefined=undefined: generated.
                      test_leaving_out_a_query_or_a_ranking_s_tail_never_raises_the_all_row(case_dir(), seed, undefined)
                      or "ok")
    brute = np.random.default_rng(rng.randrange(2 ** 32))
    for options in holes.OPTIONS:
        for runs in (1, 2):
            for trial in range(1 if quick else 3):
                case = None
                while case is None:
                    case = holes._case(brute, runs)
                P.library(f"holes brute force {options} runs={runs} #{trial}",
                          lambda case=case, options=options: holes._check(case_dir(), *case, options, "probe") or "ok")
    if TREC_EVAL_O0.exists():
        for i in range(20 if quick else 150):
            qrels, run = random_data(rng, nq=rng.randint(1, 5), nd=rng.randint(2, 12), grades=(0, 1, 2, 3, 4))
            qi, ri = tmp / f"t5q{i}.txt", tmp / f"t5r{i}.txt"
            write_qrels(qi, qrels)
            write_run(ri, run)
            flags = rng.choice(TREC_FLAGS)
            ref = subprocess.run([str(TREC_EVAL_O0), *flags, str(qi), str(ri)], capture_output=True, text=True)
            P.run(f"--trec {flags} #{i}", ["--trec", *flags, qi, ri], None,
                  lambda res, ref=ref: None if ref.returncode or res.stdout == ref.stdout else
                  next((f"{x!r} vs trec_eval {y!r}" for x, y in zip(res.stdout.splitlines(), ref.stdout.splitlines())
                        if x != y), "line counts differ"))
    q_bytes, r_bytes = (tmp / "q.txt").read_bytes(), (tmp / "r.txt").read_bytes()
    for i in range(30 if quick else 150):
        data = bytearray(rng.choice([q_bytes, r_bytes]))
        for _ in range(rng.randint(1, 4)):
            if not data:
                break
            at = rng.randrange(len(data))
            kind = rng.choice(["byte", "delete", "cut", "line twice", "swap fields"])
            if kind == "byte":
                data[at] = rng.choice(b"\x00\t \n\r.-+eE9xQ\xff\xc3")
            elif kind == "delete":
                del data[at:at + rng.randint(1, 5)]
            elif kind == "cut":
                del data[at:]
            elif kind == "line twice":
                lines = data.split(b"\n")
                lines.insert(rng.randrange(len(lines)), rng.choice(lines))
                data = bytearray(b"\n".join(lines))
            else:
                lines = data.split(b"\n")
                j = rng.randrange(len(lines))
                fields = lines[j].split()
                rng.shuffle(fields)
                lines[j] = b" ".join(fields)
                data = bytearray(b"\n".join(lines))
        damaged = tmp / f"damaged{i}.txt"
        damaged.write_bytes(bytes(data))
        pair = [damaged, tmp / "r.txt"] if i % 2 else [tmp / "q.txt", damaged]
        extra = rng.choice([[], ["-j", "2", tmp / "r2.txt"], ["--stream"], ["--holes", "-m", "AP"], ["compare", "-m", "AP"]])
        args = [*extra[:1], *pair, *extra[1:]] if extra[:1] == ["compare"] else [*extra, *pair]
        P.run(f"damaged #{i} {extra[:2]}", args)


if __name__ == "__main__":
    sys.exit(main_())
