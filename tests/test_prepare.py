"""Duplicate detection on the numeric fast path and on strings name the same file line."""
from __future__ import annotations

import pytest

from ulnorm_eval.pipeline import evaluate as api

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
            res = api.evaluate_path(qrels, str(r), metrics, api.Options(), lambda m: None, stream)
            # '7' ranks second and is the only relevant document of query 1; query 2 retrieves 7
            assert list(res.values[metrics[0]]) == [0.2, 0.2]
        else:
            with pytest.raises(io.InputError) as e:
                api.evaluate_path(qrels, str(r), metrics, api.Options(), lambda m: None, stream)
            assert e.value.line == dup_line and "duplicate document" in e.value.reason
