"""trec_eval's -Z file: per query and measure, the mean and standard deviation of reference runs.

Lines ``qid measure_name mean stddev`` (whitespace-separated; get_zscores.c).  A measure name is
trec_eval's output name (``map``, ``P_5``, ``ndcg_cut_10``).
"""
from __future__ import annotations

import math

from .errors import InputError, strict_float
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
        try:
            mean_value, std_value = strict_float(mean), strict_float(std_text)
        except ValueError:
            raise InputError(path, line_no, f"mean {mean!r} or stddev {std_text!r} is not a number") from None
        if not (math.isfinite(mean_value) and math.isfinite(std_value)) or std_value < 0:
            raise InputError(path, line_no, "mean and stddev must be finite, stddev >= 0")
        if (qid, name) in out:
            raise InputError(path, line_no, f"query {qid!r} and measure {name!r} given twice")
        out[qid, name] = (mean_value, std_value)
    return out
