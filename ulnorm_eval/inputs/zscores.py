"""trec_eval's -Z file: per query and measure, the mean and standard deviation of reference runs.

Lines ``qid measure_name mean stddev`` (whitespace-separated; get_zscores.c).  A measure name is
trec_eval's output name (``map``, ``P_5``, ``ndcg_cut_10``).
"""
from __future__ import annotations

from .errors import InputError, finite_float
from .text import read_text

__all__ = ["read_zscores"]


def read_zscores(path: str) -> dict:
    """{(qid, measure name): (mean, stddev)}; a malformed, non-finite or repeated line is an
    InputError naming the file and line (trec_eval would read a partial number with atof)."""
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
