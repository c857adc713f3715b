"""Small inputs: query-id lists (``compare --swap-between FILE FILE``, one id per line), the systems
tables ``compare --table systems`` writes (``ulnorm-eval swaps A B``: tsv, csv or json; columns run,
metric, mean, others ignored) and trec_eval's -Z file (lines ``qid measure mean stddev``, get_zscores.c).
"""
from __future__ import annotations

import json

from .errors import InputError, finite_float
from .text import read_text

__all__ = ["read_query_ids", "read_systems", "read_zscores"]


def read_query_ids(path: str) -> tuple[list, int]:
    """(query ids in file order, repeated ids) of a one-id-per-line file; blank lines skipped, a line of
    more fields refused (a qrels or run file given by mistake), as is a file with no id."""
    ids, seen, repeated = [], set(), 0
    for line_no, line in enumerate(read_text(path).splitlines(), 1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) > 1:
            raise InputError(path, line_no, f"expected one query id per line, got {len(fields)} fields")
        if fields[0] in seen:
            repeated += 1
            continue
        seen.add(fields[0])
        ids.append(fields[0])
    if not ids:
        raise InputError(path, None, "no query id in the file")
    return ids, repeated


def read_systems(path: str) -> dict:
    """metric -> {run: mean} from a `compare --table systems` output (tsv, csv or json)."""
    text = read_text(path)
    if text.lstrip().startswith(("{", "[")):
        return _systems_json(path, text)
    import csv

    lines = text.splitlines()
    first = next((index for index, line in enumerate(lines) if line.strip() and not line.startswith("#")), None)
    if first is None:
        raise InputError(path, None, "empty: expected the systems table of `compare --table systems`")
    sep = "\t" if "\t" in lines[first] else ","
    rows = csv.reader(lines[first:], delimiter=sep)
    header = next(rows)
    missing = [column for column in ("run", "metric", "mean") if column not in header]
    if missing:
        raise InputError(path, first + 1, f"no {missing[0]!r} column: expected the systems table of "
                                          "`compare --table systems` (run, metric, mean, rank)")
    col = {column: header.index(column) for column in ("run", "metric", "mean")}
    out: dict = {}
    for row_index, row in enumerate(rows):
        line_no = first + 2 + row_index
        if not row:  # the blank line before a second table (`--table systems,summary`): stop there
            break
        if len(row) != len(header):
            raise InputError(path, line_no, f"{len(row)} fields, the header has {len(header)}")
        _add(out, path, line_no, row[col["run"]], row[col["metric"]], row[col["mean"]])
    if not out:
        raise InputError(path, None, "no system in the table")
    return out


def _systems_json(path: str, text: str) -> dict:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(path, exc.lineno, f"invalid JSON: {exc.msg}") from None
    rows = doc.get("systems") if isinstance(doc, dict) else doc
    if not isinstance(rows, list) or not rows:
        raise InputError(path, None, "no 'systems' list: expected `compare --table systems -f json`")
    out: dict = {}
    for index, row in enumerate(rows):
        if not isinstance(row, dict) or not all(column in row for column in ("run", "metric", "mean")):
            raise InputError(path, None, f"systems row {index + 1}: needs run, metric and mean")
        _add(out, path, None, row["run"], row["metric"], row["mean"])
    return out


def _add(out: dict, path, line_no, run, metric, mean) -> None:
    value = finite_float(mean, path, line_no, "mean")
    runs = out.setdefault(str(metric), {})
    if str(run) in runs:
        raise InputError(path, line_no, f"run {run!r} appears twice under {metric}")
    runs[str(run)] = value


def read_zscores(path: str) -> dict:
    """{(qid, measure name): (mean, stddev)}, a measure named as trec_eval prints it (``map``, ``P_5``); a
    malformed, non-finite or repeated line is an InputError naming the file and line (trec_eval would
    read a partial number with atof)."""
    out: dict = {}
    for line_no, line in enumerate(read_text(path).splitlines(), 1):
        fields = line.split()
        if len(fields) != 4:
            raise InputError(path, line_no, f"expected 4 fields 'qid measure mean stddev', found {len(fields)}")
        qid, name, mean, std_text = fields
        mean_value = finite_float(mean, path, line_no, "mean")
        std_value = finite_float(std_text, path, line_no, "stddev")
        if std_value < 0:
            raise InputError(path, line_no, f"stddev {std_text!r} is negative")
        if (qid, name) in out:
            raise InputError(path, line_no, f"query {qid!r} and measure {name!r} given twice")
        out[qid, name] = (mean_value, std_value)
    return out
