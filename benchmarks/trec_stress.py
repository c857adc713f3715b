"""`ulnorm-eval --trec` against the trec_eval 10 binary on generated inputs (issue 52, items 6 and 7).

Usage: python benchmarks/trec_stress.py [--cases N] [--seed S] [--binary PATH] [--keep DIR] [-v]

Each case writes random qrels and a random run (grades integer, fractional, negative and large, in
decimal and exponent forms; tied scores; queries only in the qrels or only in the run; sometimes a
UTF-8 byte order mark before the first line), picks trec_eval flags (-q, -c, -J, -n, -M, -N, -l with
odd levels, -Z with a file of random means and deviations) and measures (all_trec's, parameterised
ones with fractional gains and unsorted recall points; not ``rbp``, whose value in trec_eval 10 is
stack garbage), and runs both.  A case agrees when stdout and the exit status are the binary's, or
when ulnorm-eval refuses it with exit 2 and one of the documented refusals (docs/trec_eval.md: a
byte order mark, a non-finite gain); a case the binary crashes on (its -Z lookup reads past its table)
is counted and left out.  Prints the disagreements (the first line that differs) and a count of each
kind; exits 1 when any case disagrees.  The binary is built from usnistgov/trec_eval 10.0 as its
Makefile does (docs/trec_eval.md); it is never part of the repository.
"""
from __future__ import annotations

import argparse
import collections
import random
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from click.testing import CliRunner  # noqa: E402

from ulnorm_eval.cli.main import main  # noqa: E402

BINARY = "/work/tools/trec_eval_O0/trec_eval"
BOM = b"\xef\xbb\xbf"
GRADES = ["0", "1", "2", "3", "-1", "1.5", "0.5", "2.7", "-0.5", "1e1", "10", "12", "100", "2.0", ".5", "+2"]
LEVELS = ["0", "1", "2", "3", "1.5", "0.5", "2.9", "10", "1e1"]
MEASURES = ["map", "gm_map", "Rprec", "bpref", "recip_rank", "P", "recall", "relstring", "infAP", "gm_bpref",
            "Rprec_mult", "utility", "11pt_avg", "binG", "G", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut", "map_cut",
            "relative_P", "success", "set_P", "set_relative_P", "set_recall", "set_map", "set_F",
            "num_nonrel_judged_ret", "num_q", "num_ret", "num_rel", "num_rel_ret", "iprec_at_recall", "unj",
            "rbp_resid", "dcg", "ideal_dcg", "yaap", "runid", "official"]
PARAMETERISED = ["ndcg.1=2,2=3", "ndcg.1=1.5,2=0.5", "ndcg.0=-1,1=2", "ndcg.1=3,10=5", "ndcg_cut.3,5",
                 "Rndcg.1=2", "G.1=0.5,3=2", "ndcg_rel.2=4", "dcg.1=2.5", "ideal_dcg.1=1,2=7",
                 "11pt_avg.0.5,0.1,0.9", "11pt_avg.0.2,0.5,0.8", "11pt_avg.1.0,0.0", "iprec_at_recall.0.3,0.1",
                 "P.1,3,20", "relstring.4", "success.1,2", "Rprec_mult.0.5,2.0", "utility.1,-1,0,0",
                 "set_F.0.5", "map_cut.2,4", "relative_P.3", "rbp_resid.p=0.5", "ndcg.1=2,1=3", "ndcg.1.5=2",
                 "ndcg.-1=2,1=3", "ndcg.1=inf", "G.0=0.5,1=0.3", "Rndcg.2=0.5,1=1.2", "ndcg_rel.1=0.5,2=0.7",
                 "ideal_dcg.0=0.4,1=0.2", "ndcg.3=-0.5,1=0.9,2=1.1"]


def grade_text(rng) -> str:
    return rng.choice(GRADES)


def make_inputs(rng, root: Path, i: int):
    """(qrels path, run path, the queries, the qrels' measures-relevant facts)."""
    nq = rng.randint(1, 5)
    qids = rng.sample(["1", "2", "10", "3", "q7", "100", "20"], nq)
    docs = [f"d{j}" for j in range(12)]
    qrels_lines, judged = [], {}
    for q in qids:
        chosen = rng.sample(docs, rng.randint(1, 8))
        judged[q] = chosen
        qrels_lines += [f"{q} 0 {d} {grade_text(rng)}" for d in chosen]
    rng.shuffle(qrels_lines)
    run_lines = []
    run_qids = [q for q in qids if rng.random() < 0.9] + (["55"] if rng.random() < 0.2 else [])
    if not run_qids:
        run_qids = [qids[0]]
    for q in run_qids:
        pool = (judged.get(q, []) + [f"u{j}" for j in range(5)])
        ranked = rng.sample(pool, rng.randint(1, len(pool)))
        for r, d in enumerate(ranked, 1):
            score = rng.choice([rng.randint(1, 4), round(rng.uniform(0, 10), rng.choice([0, 1, 3]))])
            run_lines.append(f"{q} Q0 {d} {r} {score} tag{i % 3}")
    if rng.random() < 0.5:
        rng.shuffle(run_lines)
    qrels_bytes = ("\n".join(qrels_lines) + "\n").encode()
    run_bytes = ("\n".join(run_lines) + "\n").encode()
    if rng.random() < 0.06:
        run_bytes = BOM + run_bytes
    if rng.random() < 0.03:
        qrels_bytes = BOM + qrels_bytes
    qrels, run = root / f"q{i}.txt", root / f"r{i}.txt"
    qrels.write_bytes(qrels_bytes)
    run.write_bytes(run_bytes)
    return qrels, run, sorted(set(qids) | set(run_qids))


def zscore_file(rng, root: Path, i: int, qids: list, measures: list) -> Path:
    """Random means and deviations for some (query, measure) pairs, and a last query and a last measure
    per query that sort after every real one: trec_eval's binary search reads one entry past its tables
    (convert_zscores.c), which these keep inside them."""
    names = ["map", "P_5", "P_10", "num_q", "gm_map", "Rprec", "recip_rank", "ndcg", "num_ret", "bpref",
             "gm_bpref", "num_rel", "G", "ndcg_cut_5", "11pt_avg", "success_1", "set_F", "infAP"]
    lines = []
    for q in qids:
        for name in rng.sample(names, rng.randint(0, len(names))):
            sd = rng.choice(["0", "0.5", "0.1", "2"])
            lines.append(f"{q} {name} {rng.choice(['0', '0.25', '0.5', '1', '-0.5', '3'])} {sd}")
        lines.append(f"{q} ~~~~ 0 1")
    lines.append("\U0010ffff ~~~~ 0 1")
    path = root / f"z{i}.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


def make_flags(rng, root: Path, i: int, qids: list) -> list:
    flags = []
    for flag, chance in (("-q", 0.6), ("-c", 0.5), ("-J", 0.25), ("-n", 0.08)):
        if rng.random() < chance:
            flags.append(flag)
    if rng.random() < 0.3:
        flags += ["-M", str(rng.randint(1, 6))]
    if rng.random() < 0.15:
        flags += ["-N", str(rng.randint(10, 40))]
    if rng.random() < 0.4:
        flags += ["-l", rng.choice(LEVELS)]
    measures = []
    for _ in range(rng.randint(0, 4)):
        measures.append(rng.choice(MEASURES + PARAMETERISED))
    if rng.random() < 0.1:
        measures.append("all_trec")
    measures = [m for m in dict.fromkeys(measures) if m != "rbp"]
    for m in measures:
        flags += ["-m", m]
    if rng.random() < 0.2:
        flags += ["-Z", str(zscore_file(rng, root, i, qids, measures))]
    return flags


REFUSALS = ("byte order mark", "must be finite", "given twice", "shares no query", "share one table of gains", "level below 0")


def first_query_negative(qrels: Path) -> bool:
    """trec_eval 10 exits 4 ("Can't calculate measure") when the first qrels query in its order (qid
    byte order) is judged only with negative grades (docs/trec_eval.md): a documented difference."""
    grades: dict = {}
    for line in qrels.read_bytes().splitlines():
        qid, _, _, grade = line.split()
        grades.setdefault(qid, []).append(int(float(grade)) if b"e" not in grade else int(grade.split(b"e")[0]))
    return max(grades[min(grades)]) < 0


def compare(flags: list, qrels: Path, run: Path, binary: str):
    ref = subprocess.run([binary, *flags, str(qrels), str(run)], capture_output=True)
    if ref.returncode < 0 or ref.returncode > 128:
        return "binary crashed", None
    if "all_trec" in flags:  # rbp: stack garbage in trec_eval 10 (docs/trec_eval.md)
        ref_out = b"".join(line for line in ref.stdout.splitlines(True) if not line.startswith(b"rbp   "))
    else:
        ref_out = ref.stdout
    res = CliRunner().invoke(main, ["--trec", *flags, str(qrels), str(run)], catch_exceptions=True)
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        return "exception", f"{type(res.exception).__name__}: {res.exception}"
    out = res.stdout_bytes
    if "all_trec" in flags:
        out = b"".join(line for line in out.splitlines(True) if not line.startswith(b"rbp   "))
    if res.exit_code == 2 and any(word in res.stderr for word in REFUSALS):
        return "refused (documented)", res.stderr.strip().splitlines()[-1]
    if ref.returncode == 4 and b"Can't calculate measure" in ref.stderr and first_query_negative(qrels):
        return "first query judged only negatively (documented)", None
    if res.exit_code != ref.returncode:
        return "exit status", f"ours {res.exit_code} ({res.stderr.strip().splitlines()[-1:]}) vs {ref.returncode} " \
                              f"({ref.stderr.decode(errors='replace').strip()[:100]})"
    if out != ref_out:
        a, b = out.decode(errors="replace").splitlines(), ref_out.decode(errors="replace").splitlines()
        first = next((f"{x!r} vs trec_eval {y!r}" for x, y in zip(a, b) if x != y), f"{len(a)} vs {len(b)} lines")
        return "bytes", first
    return "same", None


def main_(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=600)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--binary", default=BINARY)
    ap.add_argument("--keep", help="write the cases here (default: a temporary directory)")
    ap.add_argument("-v", action="store_true", help="print every disagreement in full")
    a = ap.parse_args(argv)
    if not Path(a.binary).exists():
        print(f"no trec_eval binary at {a.binary}", file=sys.stderr)
        return 2
    rng = random.Random(a.seed)
    kinds = collections.Counter()
    bad = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(a.keep or tmp)
        root.mkdir(parents=True, exist_ok=True)
        for i in range(a.cases):
            qrels, run, qids = make_inputs(rng, root, i)
            flags = make_flags(rng, root, i, qids)
            kind, detail = compare(flags, qrels, run, a.binary)
            kinds[kind] += 1
            if kind not in ("same", "binary crashed") and "documented" not in kind:
                bad.append(f"#{i} {' '.join(flags)} {qrels.name} {run.name}: {kind}: {detail}")
    for line in bad if a.v else bad[:40]:
        print(line)
    print(f"{a.cases} cases: " + ", ".join(f"{k} {n}" for k, n in kinds.most_common()))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main_())
