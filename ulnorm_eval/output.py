"""Formatters: a Result in, text out.  One function per format, gathered in FORMATS."""
from __future__ import annotations

import math
import os
import tempfile

__all__ = ["FORMATS", "format_trec", "write_atomic"]


def _name(metric, names: str) -> str:
    return metric.trec_name() if names == "trec" else str(metric)


def _num(v: float, precision: int | None) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "nan"
    if precision is None:
        return repr(float(v))
    return f"{v:.{precision}f}"


def format_trec(result, per_query: bool = False, names: str = "canonical", precision: int | None = 4,
                **_) -> str:
    """trec_eval rows ``measure<TAB>query<TAB>value``: per query (with -q) in query order, then ``all``.

    With ``names='trec'`` the measure column uses trec_eval's names and its exact ``%-22s`` padding, so
    the output is a drop-in replacement for trec_eval's.  With several runs a first column names the
    run (one run keeps trec_eval's three columns).
    """
    precision = 4 if precision is None else precision
    lines = []
    multi = len(result.runs) > 1
    for rr in result.runs:
        prefix = f"{rr.name}\t" if multi else ""
        labels = [_name(m, names) for m in result.metrics]
        if names == "trec":
            labels = [f"{lab:<22s}" for lab in labels]
        if per_query:
            for i, q in enumerate(rr.qids):
                for lab, m in zip(labels, result.metrics):
                    lines.append(f"{prefix}{lab}\t{q}\t{_num(rr.values[m][i], precision)}")
        for lab, m in zip(labels, result.metrics):
            lines.append(f"{prefix}{lab}\tall\t{_num(rr.mean[m], precision)}")
    return "\n".join(lines) + ("\n" if lines else "")


FORMATS = {"trec": format_trec}


def write_atomic(path: str, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename: never a half-written file."""
    d = os.path.dirname(os.path.abspath(path)) or "."
    fd, tmp = tempfile.mkstemp(prefix=".ulnorm-", dir=d)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
