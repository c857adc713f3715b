"""The library reads qrels and runs and evaluates them without importing pandas (0.3-0.4 s), unless the
caller gave a DataFrame or asks for one: pyarrow imports pandas on its first ``pa.array`` (any input)
and its first ``to_numpy`` (any type), so the library builds and reads Arrow arrays on their buffers
(ulnorm_eval/inputs/arrow.py).  The command line refuses pandas to pyarrow instead (``defer_pandas``),
which a library must not do to its caller's pyarrow."""
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
