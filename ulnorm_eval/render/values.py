"""Cell values shared by the formatters: a metric's printed name, numbers, NaN and Monte Carlo errors.

NaN marks a value that is undefined and was left out (``--undefined skip``): ``nan`` in trec output
(as trec_eval prints it), ``NaN`` in tsv/csv (read as missing by pandas, R and spreadsheets), ``null``
in json/jsonl, an empty cell in tables.
"""
from __future__ import annotations

import math

__all__ = ["metric_label", "isnan", "num_text", "json_value", "mean_stderr"]


def metric_label(metric, names: str) -> str:
    """The column name of ``metric``: canonical, or trec_eval's with ``names='trec'``."""
    return metric.trec_name() if names == "trec" else str(metric)


def isnan(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def num_text(v: float, precision: int | None, nan: str = "nan") -> str:
    if isinstance(v, str):  # a text measure (relstring, runid)
        return v
    if isnan(v):
        return nan
    if precision is None:
        return repr(float(v))
    return f"{v:.{precision}f}"


def json_value(v: float, precision: int | None):
    """A JSON number: None for NaN, rounded when a precision is given."""
    if isinstance(v, str):
        return v
    if isnan(v):
        return None
    v = float(v)
    return round(v, precision) if precision is not None else v


def mean_stderr(values, se) -> float:
    """Standard error of a mean of independent Monte Carlo estimates: sqrt(sum se_i^2) / n."""
    import numpy as np

    ok = ~np.isnan(values)
    n = int(ok.sum())
    return float(np.sqrt(np.sum(np.square(se[ok]))) / n) if n else float("nan")
