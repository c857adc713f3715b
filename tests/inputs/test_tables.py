"""The small inputs (inputs/tables.py): compare's systems tables (tsv, csv, json), query-id lists and
trec_eval's -Z file, read to their values, and each malformed one refused naming its file and line."""
from __future__ import annotations

import json

import pytest

from ulnorm_eval.inputs.errors import InputError
from ulnorm_eval.inputs.tables import read_query_ids, read_systems, read_zscores

SYSTEMS = [("bm25", "AP", "0.25", "2"), ("dense", "AP", "0.5", "1"), ("bm25", "P@10", "0.125", "1")]
WANT = {"AP": {"bm25": 0.25, "dense": 0.5}, "P@10": {"bm25": 0.125}}


def _refused(read, path, line, reason):
    with pytest.raises(InputError) as err:
        read(str(path))
    assert (err.value.path, err.value.line, err.value.reason) == (str(path), line, reason)


@pytest.mark.parametrize("sep", ["\t", ","])
def test_a_systems_table_is_read_from_its_columns_by_name(tmp_path, sep):
    p = tmp_path / "s.txt"
    rows = [sep.join(("rank", "metric", "run", "mean"))] + [sep.join((r, m, run, v)) for run, m, v, r in SYSTEMS]
    p.write_text("# a comment\n" + "\n".join(rows) + "\n\nsummary table after a blank line\n")
    assert read_systems(str(p)) == WANT


def test_a_json_systems_table_is_read(tmp_path):
    p = tmp_path / "s.json"
    p.write_text(json.dumps({"systems": [{"run": run, "metric": m, "mean": float(v)} for run, m, v, _ in SYSTEMS]}))
    assert read_systems(str(p)) == WANT


def test_malformed_systems_tables_name_file_and_line(tmp_path):
    p = tmp_path / "s.tsv"
    for text, line, reason in (
            ("run\tmetric\tmean\nbm25\tAP\t0.25\nbm25\tAP\t0.5\n", 3, "run 'bm25' appears twice under AP"),
            ("run\tmetric\tmean\nbm25\tAP\n", 2, "2 fields, the header has 3"),
            ("run\tmetric\tmean\nbm25\tAP\tx\n", 2, "mean 'x' is not a number"),
            ("run\tmetric\tavg\n", 1, "no 'mean' column: expected the systems table of `compare --table systems` "
                                       "(run, metric, mean, rank)"),
            ("run\tmetric\tmean\n", None, "no system in the table"),
            ('{"systems": [{"run": "a"}]}', None, "systems row 1: needs run, metric and mean"),
            ('{"systems": \n[', 2, "invalid JSON: Expecting value")):
        p.write_text(text)
        _refused(read_systems, p, line, reason)


def test_query_ids_are_read_once_each_in_file_order(tmp_path):
    p = tmp_path / "q.txt"
    p.write_text("7\n\n3\n7\n10\n")
    assert read_query_ids(str(p)) == (["7", "3", "10"], 1)
    p.write_text("7\n3 Q0 d1 1 0.5 t\n")
    _refused(read_query_ids, p, 2, "expected one query id per line, got 6 fields")


def test_zscore_lines_are_read_and_checked(tmp_path):
    p = tmp_path / "z.txt"
    p.write_text("q1 map 0.25 0.5\nq1 P_5 0.2 0\n")
    assert read_zscores(str(p)) == {("q1", "map"): (0.25, 0.5), ("q1", "P_5"): (0.2, 0.0)}
    p.write_text("q1 map 0.25 0.5\nq1 map 0.3 0.1\n")
    _refused(read_zscores, p, 2, "query 'q1' and measure 'map' given twice")
    p.write_text("q1 map 0.25\n")
    _refused(read_zscores, p, 1, "expected 4 fields 'qid measure mean stddev', found 3")
