"""Notes on stderr once per command (--notes): a note several runs share is said once, naming the runs
compactly; --notes all says every run's note whole, --notes none none (errors and gate verdicts stay)."""
from __future__ import annotations

import re

from conftest import cli

from ulnorm_eval.cli.support import said_once
from ulnorm_eval.pipeline.blocks import Block, Note, input_notes

EX = "examples"
QRELS, RUNS = f"{EX}/qrels/dlhard-passage.qrels.txt", [f"{EX}/runs/{r}.run.gz" for r in ("bm25", "bm25_bert_zs", "bm25_rm3")]


def test_a_note_several_runs_share_is_said_once_with_spans_and_tally():
    brief = "{0:query|queries} missing of {1}; {tally}"
    notes = [Note(f"r{i}: whole note {i}", f"r{i}", brief, ((i, i + 1), 50), (("worse", i), ("n.s.", 1)))
             for i in range(1, 6)]
    assert said_once(notes + ["a plain note", "a plain note"]) == [
        "5 runs (r1, r2, r3, 2 more: --notes all): 1-6 queries missing of 50; 15 worse, 5 n.s.", "a plain note"]
    assert said_once(notes[:2]) == ["2 runs (r1, r2): 1-3 queries missing of 50; 3 worse, 2 n.s."]
    assert said_once(notes[:1]) == ["r1: whole note 1"]  # one run, a short note: said whole
    long = Note("r1: " + "x" * 201, "r1", "{0:query|queries} long", ((1, 1),))
    assert said_once([long]) == ["r1: 1 query long"]  # over 200 characters besides the name: the brief


def test_input_notes_carry_their_brief():
    notes = input_notes("a.run", Block(name="a", float32_ties=7, skipped=1), missing=3, ignored=2, nq=50)
    more = input_notes("b.run", Block(name="b", float32_ties=1), missing=4, ignored=0, nq=50)
    assert [str(n) for n in notes][0] == ("a: 3 of 50 qrels queries have no ranked documents and score 0 "
                                          "(--run-queries-only leaves them out)")
    said = said_once(notes + more)
    assert said[0] == ("2 runs (a, b): 3-4 of 50 qrels queries have no ranked documents and score 0 "
                       "(--run-queries-only leaves them out)")
    assert said[2] == ("2 runs (a, b): 1-7 ranked documents change place between float32 and float64 scores "
                       "(--score-precision: float64 is trec_eval 10's, float32 pytrec_eval's)")


def test_notes_option_on_the_command_line():
    """Three runs under --pool run (each run's pool: some queries undefined): the undefined-values note of
    each run once, for all three; --notes all: each run's whole note; --notes none: no note, the gate's
    verdict and an error still printed."""
    short = cli("--pool", "run", QRELS, *RUNS).stderr.splitlines()
    assert short == ["ulnorm-eval: 3 runs (bm25.run, bm25_bert_zs.run, bm25_rm3.run): EM undefined for 1-5 queries "
                     "of 3 measures (0 per query and in the 'all' row, --undefined)",
                     "ulnorm-eval: runs bm25.run, bm25_rm3.run share the tag 'PYSERINI': their blocks' runid lines "
                     "name the run instead (its file; --names trec and --trec print the tag, as trec_eval)"]
    every = cli("--notes", "all", "--pool", "run", QRELS, *RUNS).stderr.splitlines()
    assert [line.split(": ")[1] for line in every[:3]] == ["bm25.run", "bm25_bert_zs.run", "bm25_rm3.run"]
    assert all(": undefined values: EM of nDCG@10 for " in line for line in every[:3])
    gate = cli("--notes", "none", "--fail-below", "AP=0.9", QRELS, *RUNS, code=1).stderr
    assert gate.startswith("ulnorm-eval: gate FAILED") and "undefined" not in gate and "tag" not in gate
    error = cli("--notes", "none", QRELS, "nonexistent.run", code=2).stderr
    assert error == "ulnorm-eval: nonexistent.run: no such file\n"


def test_stderr_fits_on_robust_runs(shared):
    """Issue 50's measure: the defaults and -m all_trec on the 17 TREC 2003 Robust runs print at most 6
    lines of stderr, none over 200 characters but for the runs' names."""
    runs = sorted(str(p) for p in (shared / "robust03" / "runs").glob("*.gz"))
    assert len(runs) == 17
    for args in ([], ["-m", "all_trec"]):
        lines = cli(*args, shared / "robust03" / "qrels.txt", *runs).stderr.splitlines()
        assert 1 <= len(lines) <= 6, lines
        assert max(len(re.sub(r"input\.[\w-]+", "", line)) for line in lines) <= 200, lines
