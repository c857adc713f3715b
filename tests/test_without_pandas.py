"""The library reads qrels and runs and evaluates them without importing pandas (0.3-0.4 s), unless the
caller gave a DataFrame or asks for one: pyarrow imports pandas on its first ``pa.array`` (any input)
and its first ``to_numpy`` (any type), so the library builds and reads Arrow arrays on their buffers
(ulnorm_eval/inputs/arrow.py), and gives pyarrow.compute's functions their scalar arguments as
Arrow scalars built the same way.  `eval` on the command line imports neither pandas, scipy.stats nor
the other subcommands' modules, and the decompressors only when an input starts with their magic bytes."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import ulnorm_eval
from ulnorm_eval.inputs import arrow

QRELS = {"q1": {"d1": 2, "d2": 0, "d3": 1, "d4": 1}, "q2": {"d1": 1, "d5": 3, "d6": 0}, "10": {"x": 1, "y": 0}}
RUN = {"q1": {"d1": 1.5, "d3": 0.5, "d9": 0.25, "d2": 0.5}, "q2": {"d6": 2.0, "d5": 1.0, "d7": -1.0},
       "10": {"y": 3, "x": 1, "z": 2}}

_CHILD = """
import json, sys
import ulnorm_eval
what, qrels, run = sys.argv[1], sys.argv[2], sys.argv[3]
if what == "dicts":
    qrels, run = json.loads(qrels), json.loads(run)
if what == "load":
    q = ulnorm_eval.load_qrels(qrels)
    r = ulnorm_eval.load_run(run)
    out = [len(q.qid), len(r.qid), float(q.grade.sum()), float(r.score.sum())]
else:
    e = ulnorm_eval.evaluate(qrels, {"r": run})
    out = e.means["r"]
print(json.dumps(["pandas" in sys.modules, out]))
"""


def _child(what, qrels, run):
    done = subprocess.run([sys.executable, "-c", _CHILD, what, qrels, run], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("lib")
    (d / "qrels").write_text("".join(f"{q} 0 {doc} {g}\n" for q, docs in QRELS.items() for doc, g in docs.items()))
    (d / "run").write_text("".join(f"{q} Q0 {doc} {i + 1} {s} t\n" for q, docs in RUN.items()
                                   for i, (doc, s) in enumerate(docs.items())))
    return str(d / "qrels"), str(d / "run")


def test_reading_qrels_and_a_run_from_files_does_not_import_pandas(files):
    loaded, out = _child("load", *files)
    assert not loaded
    assert out == [9, 10, 9.0, 10.75]


def test_odd_files_do_not_import_pandas_either(tmp_path):
    """A comment and a blank line (the careful line-by-line parser), and a judged query the run lacks
    (scored against an empty ranking)."""
    q, r = tmp_path / "q", tmp_path / "r"
    q.write_text("# judged by hand\nq1 0 d1 2\nq1 0 d2 0\n\nq2 0 d1 1\nq3 0 d7 1\n")
    r.write_text("q1 Q0 d1 1 1.5 t\nq1 Q0 d2 2 0.5 t\nq2 Q0 d1 1 2 t\n")
    loaded, means = _child("paths", str(q), str(r))
    assert not loaded
    assert means == ulnorm_eval.evaluate(str(q), {"r": str(r)}).means["r"]
    assert means["AP"] == pytest.approx(2 / 3)  # q1 and q2 found their one relevant document first, q3 none


def test_evaluate_on_paths_does_not_import_pandas(files):
    loaded, means = _child("paths", *files)
    assert not loaded
    assert means == pytest.approx(ulnorm_eval.evaluate(*files).means["run"], abs=0, rel=0)


def test_evaluate_on_dicts_does_not_import_pandas_and_equals_the_frames():
    loaded, means = _child("dicts", json.dumps(QRELS), json.dumps(RUN))
    assert not loaded
    frames = (pd.DataFrame([(q, d, g) for q, docs in QRELS.items() for d, g in docs.items()],
                           columns=["query_id", "doc_id", "relevance"]),
              pd.DataFrame([(q, d, s) for q, docs in RUN.items() for d, s in docs.items()],
                           columns=["query_id", "doc_id", "score"]))
    assert means == ulnorm_eval.evaluate(*frames).means["run"]
    assert means == ulnorm_eval.evaluate(QRELS, {"r": RUN}).means["r"]
    assert means["nDCG@10"] > 0 and len(means) == 9


@pytest.mark.parametrize("values", [
    [], [""], ["a", "", "bc"], ["é", "日本", "x" * 1000, "\U0001f600"], [f"doc-{i}" for i in range(1000)],
])
def test_string_array_is_pa_array(values):
    import pyarrow as pa

    got = arrow.string_array(values)
    got.validate(full=True)
    assert got.equals(pa.array(values, pa.string()))


@pytest.mark.parametrize("make", [
    lambda pa: pa.array([1.5, -2.0, 3.25]), lambda pa: pa.array(np.arange(10, dtype=np.int32)).slice(3, 5),
    lambda pa: pa.array([True, False, True] * 7).slice(2, 13), lambda pa: pa.array(np.arange(5, dtype=np.uint64)),
    lambda pa: pa.array([1, None, 3]), lambda pa: pa.array(np.zeros(0)), lambda pa: pa.array([False]),
])
def test_to_numpy_is_arrows(make):
    import pyarrow as pa

    values = make(pa)
    got, want = arrow.to_numpy(values), values.to_numpy(zero_copy_only=False)
    assert got.dtype == want.dtype and np.array_equal(got, want, equal_nan=True)


# --------------------------------------------------------------------------- the other library entry points
# Each in a fresh process: the call's result (JSON) and whether pandas was imported by it.  Asking for a
# DataFrame (Evaluation.frame, Comparison.systems/.summary/.pairs, NRGEvaluation.tidy()) imports pandas by
# design, and so does ir_measures' own runtime provider (it turns the qrels into a DataFrame itself), which
# ulnorm_eval.irm's measures run under.

def _fresh(code: str):
    """(pandas imported, the value of ``result``) after ``code`` ran in a fresh interpreter."""
    text = f"import json, sys\nimport ulnorm_eval\n{code}\nprint(json.dumps(['pandas' in sys.modules, result]))\n"
    done = subprocess.run([sys.executable, "-c", text], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def letor(shared, tmp_path_factory):
    """LightGBM's LETOR test file (group sizes in rank.test.query), a score per row, and RankLib scores."""
    d = tmp_path_factory.mktemp("letor")
    data = shared / "letor" / "lightgbm_lambdarank" / "rank.test"
    rows = sum(1 for line in data.read_text().splitlines() if line.strip())
    rng = np.random.default_rng(7)
    (d / "scores").write_text("".join(f"{float(x)!r}\n" for x in rng.random(rows)))
    (d / "ranklib").write_text("".join(f"qid:0 {i} {float(x)!r}\n" for i, x in enumerate(rng.random(12))))
    return str(data), str(d / "scores"), str(d / "ranklib")


def test_letor_reading_and_evaluation_do_not_import_pandas(letor):
    data, scores, ranklib = letor
    code = (f"q = ulnorm_eval.load_qrels({data!r})\n"
            f"e = ulnorm_eval.evaluate({data!r}, [{scores!r}], ['nDCG@10', 'AP'], ['UL2'])\n"
            f"k = ulnorm_eval.evaluate({data!r}, [{ranklib!r}], ['nDCG@10'], allow_disjoint=True)\n"
            "result = [len(q.qid), sorted(set(q.qid.to_pylist()))[:3], e.means['scores'], k.means['ranklib']]")
    loaded, (rows, first, means, ranklib_means) = _fresh(code)
    assert not loaded
    q = ulnorm_eval.load_qrels(data)
    assert rows == len(q.qid) and first == sorted(set(q.qid.to_pylist()))[:3]
    assert means == ulnorm_eval.evaluate(data, [scores], ["nDCG@10", "AP"], ["UL2"]).means["scores"]
    assert ranklib_means == ulnorm_eval.evaluate(data, [ranklib], ["nDCG@10"], allow_disjoint=True).means["ranklib"]


def test_irds_qrels_do_not_import_pandas(shared):
    qrels = str(shared / "dlhard-passage" / "qrels.txt")
    run = str(shared / "dlhard-passage" / "runs" / "bm25.run.gz")
    code = ("import ir_datasets\n"
            f"ir_datasets.registry.register('lib-pandas/dl-hard', ir_datasets.create_dataset(qrels_trec={qrels!r}))\n"
            f"result = ulnorm_eval.evaluate('irds:lib-pandas/dl-hard', [{run!r}], ['nDCG@10', 'AP']).means['bm25.run']")
    loaded, means = _fresh(code)
    assert not loaded
    assert means == ulnorm_eval.evaluate(qrels, [run], ["nDCG@10", "AP"]).means["bm25.run"]


def test_nrg_does_not_import_pandas(shared):
    d = shared / "dlhard-passage"
    qrels, runs = str(d / "qrels.txt"), [str(d / "runs" / n) for n in ("bm25.run.gz", "bm25_rm3.run.gz")]
    code = (f"n = ulnorm_eval.nrg({qrels!r}, {runs!r}, [], ['nDCG@10', 'RBP(p=0.8)'], protocol='leave-one-out')\n"
            "result = n.means")
    loaded, means = _fresh(code)
    assert not loaded
    want = ulnorm_eval.nrg(qrels, runs, [], ["nDCG@10", "RBP(p=0.8)"], protocol="leave-one-out").means
    assert means == want and "NRG(nDCG@10)" in means["bm25.run"]


def test_hole_bounds_over_runs_with_long_docids_do_not_import_pandas(tmp_path):
    """Docids longer than the fingerprints take (32 bytes) are counted by Arrow (pipeline/evaluate.py's
    _arrow_runs_holes): same means as the same data with short docids, which the fingerprints count."""
    def write(stem, name):
        (tmp_path / f"{stem}.qrels").write_text("".join(f"q{q} 0 {name(q, d)} {d % 3}\n" for q in range(3) for d in range(6)))
        for off in (0, 3):
            (tmp_path / f"{stem}{off}.run").write_text("".join(f"q{q} Q0 {name(q, d + off)} {d + 1} {10 - d} t\n"
                                                              for q in range(3) for d in range(10)))
        return str(tmp_path / f"{stem}.qrels"), [str(tmp_path / f"{stem}{off}.run") for off in (0, 3)]

    long_q, long_runs = write("long", lambda q, d: f"{'x' * 40}-{q}-{d:03d}")
    short_q, short_runs = write("short", lambda q, d: f"d{q}-{d:03d}")
    code = (f"e = ulnorm_eval.evaluate({long_q!r}, {long_runs!r}, ['AP', 'nDCG@10'], ['LB', 'UB'])\n"
            "result = list(e.means.values())")
    loaded, means = _fresh(code)
    assert not loaded
    short = ulnorm_eval.evaluate(short_q, short_runs, ["AP", "nDCG@10"], ["LB", "UB"])
    assert means == list(short.means.values())
    assert means[0]["LB(AP)"] < means[0]["AP"] < means[0]["UB(AP)"]  # the runs' 7 shared holes a query count


def test_compare_and_its_paper_table_do_not_import_pandas(shared):
    """paper_table renders the comparison's own tables, as ``compare -f markdown`` does (it read the
    DataFrames, and failed on a hole comparison's missing overlaps: int(pd.NA))."""
    from conftest import invoke

    d = shared / "dlhard-passage"
    qrels = str(d / "qrels.txt")
    runs = [str(d / "runs" / n) for n in ("bm25.run.gz", "bm25_rm3.run.gz", "bm25_bert_zs.run.gz")]
    code = (f"c = ulnorm_eval.compare({qrels!r}, {runs!r}, ['AP'], hole_bounds=True)\n"
            "result = [c.runs, ulnorm_eval.paper_table(c, 'markdown', precision=3)]")
    loaded, (names, table) = _fresh(code)
    assert not loaded
    cli = invoke("compare", "--holes", "-m", "AP", "-f", "markdown", "--precision", "3", qrels, *runs)
    assert cli.exit_code == 0 and table == cli.stdout
    assert names == ["bm25.run", "bm25_rm3.run", "bm25_bert_zs.run"] and "<sup>a*</sup>" in table


# The last lines of a program below that embeds the command (python -c): it leaves as the command itself does
# (cli/guard._exit_now), not through the interpreter's shutdown, which can abort in Arrow's threads
# (apache/arrow#34314: exit -6); everything asserted on was printed and is flushed first.
LEAVE = "sys.stdout.flush()\nsys.stderr.flush()\n__import__('os')._exit(0)\n"


def _toy_command(tmp_path, entry: str, argv, watched, then: str = "", flags=(), env=None) -> list[str]:
    """Run the command through ``entry`` ('module:function') in a fresh ``python *flags`` process (with
    ``env``), on toy qrels and a toy run (``argv(q, r)``: its arguments); the lines it printed, the
    last one the sorted names of ``watched`` that were imported, then ``then`` (more code in the same
    process) run."""
    q = tmp_path / "q"
    q.write_text("1 0 a 1\n1 0 b 0\n2 0 c 2\n")
    r = tmp_path / "r"
    r.write_text("1 Q0 a 1 2.5 t\n1 Q0 x 2 1.5 t\n2 Q0 c 1 3 t\n1 Q0 b 3 1.5 t\n")
    module, function = entry.split(":")
    code = (f"import sys\nfrom {module} import {function}\n"
            f"sys.argv = ['ulnorm-eval', *{argv(str(q), str(r))!r}]\n"
            f"try:\n    {function}()\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
            f"print(sorted(m for m in {tuple(watched)!r} if m in sys.modules))\n" + then + LEAVE)
    out = subprocess.run([sys.executable, *flags, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip().splitlines()


@pytest.mark.parametrize("args", [[], ["-q", "--names", "trec", "-m", "all_trec", "--norm", "none"],
                                  ["--ties", "rank", "-m", "AP"]])
def test_eval_does_not_import_pandas_or_scipy_stats(tmp_path, args):
    """Nor the modules of the other subcommands (cli/main.py: LAZY_COMMANDS)."""
    lines = _toy_command(tmp_path, "ulnorm_eval.cli.main:main", lambda q, r: [*args, q, r],
                         ("pandas", "scipy.stats", "ulnorm_eval.cli.compare", "ulnorm_eval.cli.summ",
                          "ulnorm_eval.cli.nrg", "ulnorm_eval.cli.stability"),
                         # pandas stays usable in the same process, pyarrow's conversions included
                         then="import pandas, pyarrow as pa\nassert pa.table({'a': [1]}).to_pandas()['a'][0] == 1\n")
    assert lines[-1] == "[]"


def test_compressed_input_still_read_after_lazy_import(tmp_path):
    """gzip, bz2 and xz are imported when an input starts with their magic bytes: each still reads."""
    import bz2
    import gzip
    import lzma

    q = tmp_path / "q"
    q.write_text("1 0 a 1\n1 0 b 0\n")
    text = b"1 Q0 a 1 2.5 t\n1 Q0 b 2 1.5 t\n"
    outs = []
    for name, pack in (("r", bytes), ("r.gz", gzip.compress), ("r.bz2", bz2.compress), ("r.xz", lzma.compress)):
        path = tmp_path / name
        path.write_bytes(pack(text))
        # the command as users start it (its entry point, run()), not a program embedding it
        out = subprocess.run([sys.executable, "-m", "ulnorm_eval", str(q), str(path), "--norm", "none", "-m", "AP"],
                             capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        outs.append(out.stdout)
    assert outs[0] == "AP\tall\t1.0000\n" and set(outs) == {outs[0]}
