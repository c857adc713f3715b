"""The golden set: a fixed list of commands whose stdout, stderr and exit code a refactoring must keep.

    python benchmarks/golden.py OUT_DIR            # run every command, write OUT_DIR/NN.{cmd,out,err,rc}
    python benchmarks/golden.py OUT_DIR --only 3,7 # some of them
    diff -r BEFORE_DIR AFTER_DIR                   # what changed

Each command runs as ``python -m ulnorm_eval`` of the checkout this file is in (PYTHONPATH set to it),
from that checkout, with ``../shared/data`` (or ``$ULNORM_EVAL_SHARED_DATA``) as ``$DATA``.  A change
that is meant to change output (a new aggregate, a reworded note) regenerates the set and says so in
its commit message; any other difference is a regression.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
Q = "examples/qrels/dlhard-passage.qrels.txt"
RUNS = "examples/runs/bm25.run.gz examples/runs/bm25_bert_zs.run.gz examples/runs/bm25_rm3.run.gz"
R1 = "examples/runs/bm25.run.gz"
RQ = "$DATA/robust03/qrels.txt"
RR = "$DATA/robust03/runs/*.gz"
RR4 = "$DATA/robust03/runs/input.aplrob03a.gz $DATA/robust03/runs/input.pircRBa1.gz $DATA/robust03/runs/input.uwmtCR0.gz $DATA/robust03/runs/input.oce03noXbmD.gz"
TE = "$DATA/trec_eval_test"

COMMANDS = [
    f"{Q} {RUNS}",
    f"-f table {Q} {RUNS}",
    f"-f tsv {Q} {RUNS}",
    f"-f csv -q {Q} {RUNS}",
    f"-f json {Q} {RUNS}",
    f"-f jsonl -q {Q} {R1}",
    f"--pool qrels -f table {Q} {RUNS}",
    f"--pool union --norm e,iub,wlb,ul1,ul2,mm,eb,em,uew -q {Q} {R1}",
    f"--pool run -f tsv {Q} {RUNS}",
    f"-m nDCG@10 --norm ul2 --baseline {R1} --max-drop 0.01 --alpha 0.05 {Q} examples/runs/bm25_rm3.run.gz",
    f"--fail-below 'UL2(nDCG@10)=0.30' -m nDCG@10 {Q} {RUNS}",
    f"--holes -m AP -m nDCG@10 -m P@10 {Q} {RUNS}",
    f"--holes open --holes-samples 50 -m nDCG@10 -f tsv {Q} {R1}",
    f"--holes fail --fail-below AP=0.1 -m AP --norm none {Q} {R1}",
    f"-m all_trec --norm none -q {Q} {R1}",
    f"--trec -q -c {Q} {R1}",
    f"--trec -m all_trec {TE}/qrels.test {TE}/results.test",
    f"--trec -m all_trec -q -c -M100 {TE}/qrels.test {TE}/results.trunc",
    f"-m 'DB(nDCG@10)' -m 'DB(AP)' --permutations 200 -q {Q} {R1}",
    f"--expectation paper -q {Q} {R1}",
    f"--sort -nDCG@10 --head 5 -f table {Q} {R1}",
    f"-j 2 {RQ} {RR}",
    f"-j 1 -q -f tsv {RQ} {RR4}",
    f"-j 2 -m all_trec --names trec --norm none -q {RQ} {RR4}",
    f"--stream -q {RQ} {RR4}",
    f"--holes -q {RQ} {RR4}",
    f"-f json {RQ} {RR4}",
    f"compare -f tsv {Q} {RUNS}",
    f"compare -f table -m nDCG@10 --norm ul2 --table pairs {Q} {RUNS}",
    f"compare -f json {Q} {RUNS}",
    f"compare -f markdown -m AP -m nDCG@10 {Q} {RUNS}",
    f"compare --test randomization --reps 500 -f tsv --table pairs {Q} {RUNS}",
    f"compare --holes -f tsv -m nDCG@10 {Q} {RUNS}",
    f"compare -f tsv {RQ} {RR}",
    f"compare --ties rank -f tsv --table pairs -m AP {RQ} {RR4}",
    f"queries -f tsv {Q} {RUNS}",
    f"queries -f table -m nDCG@10 {Q} {R1}",
    f"nrg -f tsv {Q} examples/runs/bm25_rm3.run.gz --prior {R1}",
    f"measures",
    f"measures --markdown",
    f"-m NDCG@10 -m ndcg_cut_10 -q {Q} {R1}",
    f"-m 'nDCG@10(x' {Q} {R1}",
    f"{Q} /nonexistent.run",
    "-m P@10 -m nDCG@10 -q --groups $DATA/letor/lightgbm_lambdarank/rank.test.query "
    "$DATA/letor/lightgbm_lambdarank/rank.test <(awk '{print (NR*7)%13}' $DATA/letor/lightgbm_lambdarank/rank.test)",
    f"compare -f tsv --table systems -m P@10 --norm none {Q} <(zcat {R1}) examples/runs/bm25_rm3.run.gz",
]


def run(out: Path, only: set | None) -> int:
    data = os.environ.get("ULNORM_EVAL_SHARED_DATA") or str(ROOT.parent / "shared" / "data")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "DATA": data, "COLUMNS": "200", "NO_COLOR": "1",
           "ULNORM_EVAL_SHARED_DATA": data}
    env.pop("FORCE_COLOR", None)
    out.mkdir(parents=True, exist_ok=True)
    for number, args in enumerate(COMMANDS):
        if only and number not in only:
            continue
        cmd = f"{sys.executable} -m ulnorm_eval {args}"
        done = subprocess.run(["bash", "-c", cmd], cwd=ROOT, env=env, capture_output=True, stdin=subprocess.DEVNULL)
        stem = out / f"{number:02d}"
        stem.with_suffix(".cmd").write_text(f"ulnorm-eval {args}\n")
        stem.with_suffix(".out").write_bytes(done.stdout)
        stem.with_suffix(".err").write_bytes(done.stderr.replace(sys.executable.encode(), b"python"))
        stem.with_suffix(".rc").write_text(f"{done.returncode}\n")
        print(f"{number:02d} rc={done.returncode} {args[:100]}", file=sys.stderr)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--only", default="", help="comma-separated command numbers")
    args = parser.parse_args()
    only = {int(x) for x in args.only.split(",") if x.strip()} or None
    return run(args.out, only)


if __name__ == "__main__":
    sys.exit(main())
