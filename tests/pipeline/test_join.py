"""Duplicate detection on the numeric fast path and on strings name the same file line.  Private name:
``ordering._join_index``, the join of a run with the qrels, whose two paths are compared directly."""
from __future__ import annotations

import ulnorm_eval
import numpy as np
import pytest

from ulnorm_eval.pipeline import evaluate as api
from ulnorm_eval.pipeline.orchestrator import evaluate_runs

from ulnorm_eval.inputs import trec as io


@pytest.mark.parametrize("docs, dup_line", [
    (["7", "8", "9", "7"], 4),          # numeric docids: the int64 fast path finds it
    (["d7", "d8", "d9", "d7"], 4),      # strings: the sort path
    (["007", "7", "70", "0007"], None),  # equal as integers, different as strings: not duplicates
])
def test_duplicate_documents(tmp_path, docs, dup_line):
    q = tmp_path / "q"
    q.write_text("1 0 7 1\n2 0 7 1\n")
    r = tmp_path / "r"
    lines = [f"1 Q0 {d} {i + 1} {10 - i} t" for i, d in enumerate(docs)] + ["2 Q0 7 1 1 t"]
    r.write_text("\n".join(lines) + "\n")
    qrels = io.read_qrels(str(q))
    metrics = api.resolve_metrics(["P@5"], [])
    for stream in (True, False):
        if dup_line is None:
            (res,) = evaluate_runs(qrels, [str(r)], metrics, api.Options(), stream=stream)
            # '7' ranks second and is the only relevant document of query 1; query 2 retrieves 7
            assert list(res.values[metrics[0]]) == [0.2, 0.2]
        else:
            with pytest.raises(io.InputError) as e:
                list(evaluate_runs(qrels, [str(r)], metrics, api.Options(), stream=stream))
            assert e.value.line == dup_line and "duplicate document" in e.value.reason


def test_duplicates_found_exactly_as_a_set_would(tmp_path):
    """rank_run's duplicate check (numbers, or codes shared with the qrels join) against a plain
    set of (query, docid) strings: the same verdict and the same first repeated line."""
    from hypothesis import HealthCheck, given, settings, strategies as st

    from ulnorm_eval.pipeline.ordering import rank_run

    doc = st.one_of(st.sampled_from(["7", "007", "70", "8", "0", "12345678901"]),
                    st.sampled_from(["d7", "D7", "FT-1", "é"]))
    row = st.tuples(st.sampled_from(["1", "2", "10"]), doc)

    @settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(row, min_size=1, max_size=12))
    def check(rows):
        r = tmp_path / "r"
        r.write_text("".join(f"{q} Q0 {d} 1 {i} t\n" for i, (q, d) in enumerate(rows)))
        q = tmp_path / "q"
        q.write_text("1 0 7 1\n2 0 d7 1\n10 0 007 2\n")
        qrels = io.read_qrels(str(q))
        run = io.read_run(str(r))
        seen, first = set(), None
        for i, key in enumerate(rows):
            if key in seen:
                first = i + 1
                break
            seen.add(key)
        if first is None:
            rr = rank_run(run, qrels, ["1", "2", "10"])
            judged = {("1", "7"): 1, ("2", "d7"): 1, ("10", "007"): 2}
            got = sorted(float(g) for g, j in zip(rr.ranking.grade, rr.ranking.judged) if j)
            assert got == sorted(float(judged[k]) for k in rows if k in judged)
        else:
            with pytest.raises(io.InputError) as e:
                rank_run(run, qrels, ["1", "2", "10"])
            assert e.value.line == first and "duplicate document" in e.value.reason

    check()


def test_join_index_holds_the_judged_docids_of_its_query_set(tmp_path):
    from ulnorm_eval.pipeline import ordering

    q = tmp_path / "q"
    q.write_text("1 0 a 1\n1 0 b 0\n2 0 b 2\n2 0 c 1\n3 0 d 1\n")
    for qids, judged in ((["1", "2", "3"], {"a", "b", "c", "d"}), (["2"], {"b", "c"}), (["3", "1"], {"a", "b", "d"})):
        qrels = io.read_qrels(str(q))
        # private: the join's index for a query set, against the judged docids read from the file
        jdict, keys, rows = ordering._join_index(qrels, qids)
        assert sorted(jdict.to_pylist()) == sorted(judged)
        # each key names (position of the query in qids, docid) of one qrels row
        doc = jdict.to_pylist()
        got = {(qids[k // len(doc)], doc[k % len(doc)]) for k in keys.tolist()}
        want = {(qrels.qid[r].as_py(), qrels.docid[r].as_py()) for r in rows.tolist()}
        assert got == want and len(got) == sum(qrels.qid[i].as_py() in qids for i in range(len(qrels)))
        assert "docid_encoding" not in qrels.cache  # the check's encoding is dropped after the first join


def _qrels_and_run(tmp_path):
    rng = np.random.default_rng(5)
    docs = [f"DOC-{i:04d}" for i in range(60)]
    q = tmp_path / "q"
    q.write_text("".join(f"{t} 0 {d} {rng.integers(0, 3)}\n" for t in (1, 2, 3) for d in rng.choice(docs, 25, replace=False)))
    r = tmp_path / "r"
    r.write_text("".join(f"{t} Q0 {d} {k} {100 - k} x\n" for t in (1, 2, 3)
                         for k, d in enumerate(rng.choice(docs, 40, replace=False))))
    return q, r


def test_a_changed_copy_of_loaded_qrels_is_evaluated_as_itself(tmp_path):
    # read_qrels keeps the encodings of its duplicate check for the join: a copy with other arrays
    # (dataclasses.replace) or arrays set in place must not use them
    import dataclasses

    import pyarrow as pa

    q, r = _qrels_and_run(tmp_path)
    names = ["nDCG@10", "AP", "RBP(p=0.8)"]

    def values(qrels):
        res = ulnorm_eval.evaluate(qrels, [str(r)], names, variants=["UL2"])
        return {str(m): res.runs[0].values[m] for m in res.metrics}

    fresh = values(api.load_qrels(str(q)))
    loaded = api.load_qrels(str(q))
    idx = np.argsort(-loaded.grade, kind="stable")
    shuffled = dataclasses.replace(loaded, qid=loaded.qid.take(pa.array(idx)), docid=loaded.docid.take(pa.array(idx)),
                                   grade=loaded.grade[idx], line=None)
    assert shuffled.cache == {}
    got = values(shuffled)
    assert got.keys() == fresh.keys() and all(np.array_equal(got[k], fresh[k], equal_nan=True) for k in got)

    # a filtered copy: the same values as a qrels file holding those rows only
    keep = np.flatnonzero(loaded.grade >= 1)
    sub = dataclasses.replace(loaded, qid=loaded.qid.take(pa.array(keep)), docid=loaded.docid.take(pa.array(keep)),
                              grade=loaded.grade[keep], line=None)
    lines = q.read_text().splitlines()
    q2 = tmp_path / "q2"
    q2.write_text("".join(lines[i] + "\n" for i in keep))
    got, want = values(sub), values(api.load_qrels(str(q2)))
    assert all(np.array_equal(got[k], want[k], equal_nan=True) for k in got)

    # arrays set in place on a loaded qrels
    inplace = api.load_qrels(str(q))
    inplace.qid, inplace.docid, inplace.grade = shuffled.qid, shuffled.docid, shuffled.grade
    inplace.line = None
    got = values(inplace)
    assert all(np.array_equal(got[k], fresh[k], equal_nan=True) for k in got)
