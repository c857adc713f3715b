"""Formatters: a Result in, text out.  One function per format, gathered in FORMATS.

Every formatter takes the Result and keyword options (``per_query``, ``names``, ``precision``, ...)
and returns the whole text, so that ``-o FILE`` can be written atomically and a failure half-way
leaves nothing behind.  Order is deterministic everywhere: runs as given, queries in natural
order (the Result's order), then ``all``; measures in ``-m`` order with their variants.

NaN marks a value that is undefined and was left out (``--undefined skip``): ``nan`` in trec output
(as trec_eval prints it), ``NaN`` in tsv/csv (read as missing by pandas, R and spreadsheets), ``null``
in json/jsonl, an empty cell in tables.
"""
from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import json
import math
import os
import re
import sys
from dataclasses import asdict

__all__ = [
    "FORMATS", "JSON_SCHEMA", "format_trec", "format_table", "format_tsv", "format_csv", "format_json",
    "format_jsonl", "make_table", "json_document", "write_atomic", "sha256_file", "progress",
    "measures_markdown", "variants_markdown", "query_order",
]

# variants whose value is below 0 (EB: below 1) exactly when the run is worse than a random ranking
_BELOW_RANDOM_AT = {"UL2": 0.0, "EM": 0.0, "UEW": 0.0, "EB": 1.0}


def _name(metric, names: str) -> str:
    return metric.trec_name() if names == "trec" else str(metric)


def _isnan(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _num(v: float, precision: int | None, nan: str = "nan") -> str:
    if _isnan(v):
        return nan
    if precision is None:
        return repr(float(v))
    return f"{v:.{precision}f}"


def _value(v: float, precision: int | None):
    """A JSON number: None for NaN, rounded when a precision is given."""
    if _isnan(v):
        return None
    v = float(v)
    return round(v, precision) if precision is not None else v


def _mean_stderr(values, se) -> float:
    """Standard error of a mean of independent Monte Carlo estimates: sqrt(sum se_i^2) / n."""
    import numpy as np

    ok = ~np.isnan(values)
    n = int(ok.sum())
    return float(np.sqrt(np.sum(np.square(se[ok]))) / n) if n else float("nan")


# --------------------------------------------------------------------------- trec

# trec_eval 10's measure table order (its -m all_trec output), which its output follows
_TREC_ORDER = {name: i for i, name in enumerate(
    "num_ret num_rel num_rel_ret map Rprec bpref recip_rank iprec_at_recall P relstring recall infAP "
    "Rprec_mult utility 11pt_avg binG G ndcg ndcg_rel Rndcg ndcg_cut map_cut relative_P success set_P "
    "set_relative_P set_recall set_map set_F num_nonrel_judged_ret rbp rbp_resid unj".split())}


def format_trec(result, per_query: bool = False, names: str = "canonical", precision: int | None = 4,
                query_order=None, **_) -> str:
    """trec_eval rows ``measure<TAB>query<TAB>value``: per query (with -q) in query order, then ``all``.

    With ``names='trec'`` the measure column uses trec_eval's names and its exact ``%-22s`` padding, so
    the output is a drop-in replacement for trec_eval's, per-query rows in its order too (query ids in
    byte order).  With several runs a first column names the run (one run keeps trec_eval's three
    columns).  ``query_order`` (``--sort``/``--head``) replaces the natural order of the per-query rows.
    """
    precision = 4 if precision is None else precision
    lines = []
    multi = len(result.runs) > 1
    metrics = list(result.metrics)
    if names == "trec":
        # trec_eval prints measures in its own table's order, whatever the -m order
        metrics.sort(key=lambda m: _TREC_ORDER.get(re.match(r"(.+?)(_\d.*)?$", m.measure.trec_name()).group(1),
                                                   len(_TREC_ORDER)))
    labels = [_name(m, names) for m in metrics]
    if names == "trec":
        labels = [f"{lab:<22s}" for lab in labels]
    for rr in result.runs:
        prefix = f"{rr.name}\t" if multi else ""
        if per_query:
            pos = {q: i for i, q in enumerate(rr.qids)}
            order = query_order
            if order is None and names == "trec":
                order = sorted(rr.qids, key=str.encode)  # trec_eval's order (strcmp), for a line-for-line drop-in
            for q in (rr.qids if order is None else [q for q in order if q in pos]):
                i = pos[q]
                for lab, m in zip(labels, metrics):
                    lines.append(f"{prefix}{lab}\t{q}\t{_num(rr.values[m][i], precision)}")
        for lab, m in zip(labels, metrics):
            lines.append(f"{prefix}{lab}\tall\t{_num(rr.mean[m], precision)}")
    return "\n".join(lines) + ("\n" if lines else "")


# --------------------------------------------------------------------------- tsv / csv

def _delimited(result, delimiter: str, names: str, precision: int | None) -> str:
    """Header ``run, query, <metric>...``, then a row per (run, query) with the ``all`` row last per run."""
    buf = io.StringIO()
    w = csv.writer(buf, delimiter=delimiter, lineterminator="\n")
    w.writerow(["run", "query", *(_name(m, names) for m in result.metrics)])
    for rr in result.runs:
        for i, q in enumerate(rr.qids):
            w.writerow([rr.name, q, *(_num(rr.values[m][i], precision, "NaN") for m in result.metrics)])
        w.writerow([rr.name, "all", *(_num(rr.mean[m], precision, "NaN") for m in result.metrics)])
    return buf.getvalue()


def format_tsv(result, names: str = "canonical", precision: int | None = None, **_) -> str:
    """Tab-separated: every query of every run and the ``all`` row (``-q`` is implied); full precision."""
    return _delimited(result, "\t", names, precision)


def format_csv(result, names: str = "canonical", precision: int | None = None, **_) -> str:
    """Comma-separated (RFC 4180 quoting: names like ``RBP(p=0.8)`` contain no comma, ``P(rel=2)@5`` neither,
    but a run name may); otherwise as :func:`format_tsv`."""
    return _delimited(result, ",", names, precision)


# --------------------------------------------------------------------------- json / jsonl

_NUM_OR_NULL = {"type": ["number", "null"]}
_VALUES = {"type": "object", "additionalProperties": _NUM_OR_NULL}

JSON_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "ulnorm-eval -f json",
    "description": "One document per call. Measure keys are the canonical names (or trec_eval's with "
                   "--names trec); null marks an undefined value left out of the mean.",
    "type": "object",
    "required": ["meta", "runs"],
    "additionalProperties": False,
    "properties": {
        "meta": {
            "type": "object",
            "required": ["tool", "version", "options", "inputs", "measures", "queries"],
            "additionalProperties": False,
            "properties": {
                "tool": {"const": "ulnorm-eval"},
                "version": {"type": "string"},
                "options": {"type": "object", "description": "every option that changes a number, plus "
                            "the output's names and precision"},
                "inputs": {
                    "type": "object", "required": ["qrels", "runs"], "additionalProperties": False,
                    "properties": {
                        "qrels": {"$ref": "#/$defs/file"},
                        "runs": {"type": "array", "items": {"$ref": "#/$defs/file"}},
                    },
                },
                "measures": {"type": "array", "items": {"type": "string"},
                             "description": "output columns in order"},
                "queries": {
                    "type": "array", "description": "per run, in run order",
                    "items": {
                        "type": "object",
                        "required": ["run", "evaluated", "no_ranking", "not_in_qrels", "undefined", "left_out"],
                        "additionalProperties": False,
                        "properties": {
                            "run": {"type": "string"},
                            "evaluated": {"type": "integer", "minimum": 0,
                                          "description": "queries in the query set (the rows)"},
                            "no_ranking": {"type": "array", "items": {"type": "string"},
                                           "description": "query-set queries the run ranked nothing for (scored 0)"},
                            "not_in_qrels": {"type": "array", "items": {"type": "string"},
                                             "description": "run queries without judgements (ignored)"},
                            "undefined": {"type": "object", "additionalProperties": {"type": "integer"},
                                          "description": "measure -> queries where the variant is undefined"},
                            "left_out": {"type": "object",
                                         "additionalProperties": {"type": "array", "items": {"type": "string"}},
                                         "description": "measure -> queries left out of its mean "
                                                        "(--undefined skip)"},
                        },
                    },
                },
            },
        },
        "runs": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["name", "summary", "stderr", "queries"],
                "additionalProperties": False,
                "properties": {
                    "name": {"type": "string"},
                    "summary": {**_VALUES, "description": "measure -> mean over queries (the 'all' row)"},
                    "stderr": {**_VALUES, "description": "measure -> Monte Carlo standard error of the mean, "
                                                        "only for Monte Carlo values"},
                    "queries": {
                        "type": "array",
                        "items": {
                            "type": "object", "required": ["query", "values"], "additionalProperties": False,
                            "properties": {
                                "query": {"type": "string"},
                                "values": _VALUES,
                                "stderr": {**_VALUES, "description": "Monte Carlo standard errors"},
                            },
                        },
                    },
                },
            },
        },
    },
    "$defs": {
        "file": {
            "type": "object", "required": ["path", "sha256"], "additionalProperties": False,
            "properties": {
                "path": {"type": "string"},
                "name": {"type": "string", "description": "the run's name as printed"},
                "sha256": {"type": ["string", "null"], "pattern": "^[0-9a-f]{64}$",
                           "description": "of the file's bytes as stored (compressed if it is); "
                                          "null for standard input"},
            },
        },
    },
}


def sha256_file(path) -> str | None:
    """Hex SHA-256 of a file's bytes as stored; None for '-' or anything that is not a readable file."""
    if not isinstance(path, (str, os.PathLike)) or str(path) == "-" or not os.path.isfile(path):
        return None
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def json_document(result, names: str = "canonical", precision: int | None = None) -> dict:
    """The ``-f json`` document as Python objects (see JSON_SCHEMA)."""
    import numpy as np

    from .. import __version__

    labels = {m: _name(m, names) for m in result.metrics}
    paths = list(result.run_paths) or [rr.name for rr in result.runs]
    meta = {
        "tool": "ulnorm-eval",
        "version": __version__,
        "options": {**asdict(result.options), "names": names, "precision": precision},
        "inputs": {
            "qrels": {"path": str(result.qrels_path), "sha256": sha256_file(result.qrels_path)},
            "runs": [{"path": str(p), "name": rr.name, "sha256": sha256_file(p)}
                     for p, rr in zip(paths, result.runs)],
        },
        "measures": list(labels.values()),
        "queries": [],
    }
    runs = []
    for rr in result.runs:
        left_out = {}
        for m, lab in labels.items():
            nan = np.isnan(rr.values[m])
            if nan.any():
                left_out[lab] = [q for q, x in zip(rr.qids, nan) if x]
        meta["queries"].append({
            "run": rr.name, "evaluated": len(rr.qids),
            "no_ranking": list(getattr(rr, "missing_qids", [])),
            "not_in_qrels": list(getattr(rr, "ignored_qids", [])),
            "undefined": {labels[m]: int(n) for m, n in rr.undefined.items() if n},
            "left_out": left_out,
        })
        queries = []
        for i, q in enumerate(rr.qids):
            row = {"query": q, "values": {lab: _value(rr.values[m][i], precision) for m, lab in labels.items()}}
            se = {labels[m]: _value(s[i], precision) for m, s in rr.stderr.items() if m in labels}
            if se:
                row["stderr"] = se
            queries.append(row)
        runs.append({
            "name": rr.name,
            "summary": {lab: _value(rr.mean[m], precision) for m, lab in labels.items()},
            "stderr": {labels[m]: _value(_mean_stderr(rr.values[m], s), precision)
                       for m, s in rr.stderr.items() if m in labels},
            "queries": queries,
        })
    return {"meta": meta, "runs": runs}


def format_json(result, names: str = "canonical", precision: int | None = None, **_) -> str:
    """One JSON document: ``meta`` (version, options, inputs with sha256, query lists) and per-run
    summaries with every query's values; schema in :data:`JSON_SCHEMA`."""
    return json.dumps(json_document(result, names, precision), indent=1, allow_nan=False) + "\n"


def format_jsonl(result, names: str = "canonical", precision: int | None = None, **_) -> str:
    """One JSON object a line: ``{"run", "query", "measure", "value"}`` (plus ``"stderr"`` for Monte Carlo
    values), per run, query (``all`` last) and measure."""
    lines = []
    for rr in result.runs:
        rows = [(q, i) for i, q in enumerate(rr.qids)] + [("all", None)]
        for q, i in rows:
            for m in result.metrics:
                v = rr.mean[m] if i is None else rr.values[m][i]
                obj = {"run": rr.name, "query": q, "measure": _name(m, names), "value": _value(v, precision)}
                if m in rr.stderr:
                    se = _mean_stderr(rr.values[m], rr.stderr[m]) if i is None else rr.stderr[m][i]
                    obj["stderr"] = _value(se, precision)
                lines.append(json.dumps(obj, allow_nan=False))
    return "\n".join(lines) + ("\n" if lines else "")


# --------------------------------------------------------------------------- table

def _layout(metrics):
    """Rows (measures, first-appearance order) and columns (None = the plain value, then variants)."""
    rows = list(dict.fromkeys(m.measure for m in metrics))
    slots = list(dict.fromkeys(m.variant for m in metrics))
    if None in slots:
        slots.remove(None)
        slots.insert(0, None)
    return rows, slots


def _below_random(variant, v, e) -> bool:
    """Worse than the expected value of a random ranking: UL2/EM/UEW < 0, EB < 1, or A < E."""
    if _isnan(v):
        return False
    if variant is None:
        return e is not None and not _isnan(e) and v < e - 1e-12 * max(1.0, abs(e))
    at = _BELOW_RANDOM_AT.get(variant)
    return at is not None and v < at - 1e-12


def caption(result) -> str:
    """Query count, pool, tie rule, score precision and undefined cases, in one line."""
    o = result.options
    counts = {len(rr.qids) for rr in result.runs}
    if len(counts) <= 1:
        q = f"{next(iter(counts), 0)} queries"
    else:
        q = "queries " + ", ".join(f"{rr.name} {len(rr.qids)}" for rr in result.runs)
    ties = {"score": "score desc, docid desc (trec_eval)", "rank": "rank column", "file": "file order"}[o.ties]
    und = sum(int(n) for rr in result.runs for n in rr.undefined.values())
    how = "scored 0" if o.undefined == "zero" else "left out"
    parts = [q, f"pool {o.pool}", f"ties {ties}", f"scores {o.score_precision}",
             f"{und} undefined {'case' if und == 1 else 'cases'} ({how})"]
    if o.depth:
        parts.insert(1, f"depth {o.depth}")
    if o.run_queries_only:
        parts.insert(1, "run queries only")
    return "; ".join(parts)


def make_table(result, per_query: bool = False, names: str = "canonical", precision: int | None = 4,
               query_order=None, color: bool = True):
    """The rich Table: a row per measure, columns value, E, IUB, UL1, UL2, ... (as requested), one column
    group per run; with ``per_query`` rows are grouped by query (``query_order`` or natural order) and
    the means follow as query ``all``.  Cells worse than a random ranking are bold red."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    from ..core.registry import Metric

    precision = 4 if precision is None else precision
    rows, slots = _layout(result.metrics)
    have = set(result.metrics)
    multi = len(result.runs) > 1
    table = Table(box=box.SIMPLE_HEAD, title=None if multi or not result.runs else result.runs[0].name,
                  title_justify="left", pad_edge=False, show_edge=False)
    if per_query:
        table.add_column("query", no_wrap=True)
    table.add_column("measure", no_wrap=True)
    for rr in result.runs:
        for j, s in enumerate(slots):
            head = s or "value"
            if multi:
                head = f"{rr.name if j == 0 else ''}\n{head}"
            table.add_column(head, justify="right", no_wrap=True)

    def cells(rr, meas, i):
        """Cells of one run for one measure; i = None for the mean, -1 for a query the run lacks."""
        e = Metric(meas, "E") if Metric(meas, "E") in have else None
        out = []
        for s in slots:
            m = Metric(meas, s)
            if m not in have or i == -1:
                out.append(Text(""))
                continue
            v = rr.mean[m] if i is None else rr.values[m][i]
            ev = None if e is None else (rr.mean[e] if i is None else rr.values[e][i])
            style = "bold red" if color and _below_random(s, v, ev) else ""
            out.append(Text("" if _isnan(v) else f"{v:.{precision}f}", style=style))
        return out

    pos = [{q: i for i, q in enumerate(rr.qids)} for rr in result.runs]
    groups = []
    if per_query:
        if query_order is None:
            from ..pipeline.ordering import natural_order
            query_order = natural_order({q for rr in result.runs for q in rr.qids})
        groups = [(q, [p.get(q, -1) for p in pos]) for q in query_order]
    groups.append(("all", [None] * len(result.runs)))
    for q, idx in groups:
        for r, meas in enumerate(rows):
            row = ([Text(q if r == 0 else "")] if per_query else []) + [Text(_name(Metric(meas), names))]
            for rr, i in zip(result.runs, idx):
                row += cells(rr, meas, i)
            table.add_row(*row, end_section=per_query and r == len(rows) - 1)
    return table


def format_table(result, per_query: bool = False, names: str = "canonical", precision: int | None = 4,
                 query_order=None, color: bool = False, width: int | None = None, **_) -> str:
    """The rich table as text (ANSI styles only with ``color``) followed by the caption line.

    ``width``: the terminal's width (the table shrinks to fit); None renders at the table's natural
    width so nothing is wrapped in a file or a pipe.
    """
    from rich.console import Console

    table = make_table(result, per_query, names, precision, query_order, color)
    buf = io.StringIO()
    console = Console(file=buf, width=width or 100_000, force_terminal=color, color_system="standard" if color else None,
                      highlight=False, emoji=False, markup=False, soft_wrap=False, legacy_windows=False)
    console.print(table)
    console.print()
    note = caption(result)
    if color:
        note += "; bold red: worse than a random ranking"
    console.print(note, style="dim", soft_wrap=width is None)
    return "\n".join(line.rstrip() for line in buf.getvalue().split("\n"))


FORMATS = {
    "table": format_table, "trec": format_trec, "tsv": format_tsv, "csv": format_csv,
    "json": format_json, "jsonl": format_jsonl,
}


# --------------------------------------------------------------------------- writing

# atomic_path and write_atomic live in files.py (re-exported here)
from .files import atomic_path, write_atomic  # noqa: E402,F401


# --------------------------------------------------------------------------- progress

PROGRESS_MIN_BYTES = 4 << 20  # below a few MB reading is too quick for a bar to help


@contextlib.contextmanager
def progress(paths, enabled: bool):
    """A rich progress bar on stderr over the input files' bytes; yields ``step(description, path)``.

    ``step`` is called before each file is read (and evaluated) and advances the bar past the previous
    one; the bar is transient, so nothing is left on the terminal.  When disabled, or when the inputs
    total less than PROGRESS_MIN_BYTES, ``step`` does nothing and rich is not imported.
    """
    sizes = {p: (os.path.getsize(p) if p != "-" and os.path.isfile(p) else 0) for p in paths}
    if not enabled or sum(sizes.values()) < PROGRESS_MIN_BYTES:
        yield lambda description, path=None: None
        return
    from rich.console import Console
    from rich.progress import (BarColumn, DownloadColumn, Progress, SpinnerColumn, TextColumn,
                               TimeElapsedColumn)

    bar = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), DownloadColumn(),
                   TimeElapsedColumn(), console=Console(file=sys.stderr), transient=True)
    task = bar.add_task("", total=sum(sizes.values()))
    pending = [0]

    def step(description: str, path=None):
        bar.advance(task, pending[0])
        pending[0] = sizes.get(path, 0)
        bar.update(task, description=description)

    with bar:
        yield step


# --------------------------------------------------------------------------- registry tables

def _md(text: str) -> str:
    return str(text).replace("|", "\\|")


def measures_markdown() -> str:
    """The README's measures table, generated from the registry."""
    from ..core.registry import FAMILIES, Measure

    lines = ["| family | syntax | trec_eval name | formula | E under a random ranking | source |",
             "|---|---|---|---|---|---|"]
    for f in FAMILIES.values():
        trec = []
        for cut in ([None] if f.cutoff == "none" else [10] if f.cutoff == "required" else [None, 10]):
            m = Measure(f.name, (), cut)
            t = m.trec_name()
            if t != str(m) or t == f.trec:  # Rprec is spelt alike in both
                trec.append(f"`{t.replace('_10', '_k')}`")
        lines.append(f"| {f.name} | `{_md(syntax(f))}` | {', '.join(trec)} | {_md(f.formula)} | "
                     f"{_md(f.expectation)} | {_md(f.cite)} |")
    return "\n".join(lines)


def syntax(f) -> str:
    """``RBP(p=0.8, rel=None)[@k]``: a family's parameters with their defaults and its cutoff."""
    params = ", ".join(f"{p.name}={p.default!r}" for p in f.params)
    cut = {"optional": "[@k]", "required": "@k", "none": ""}[f.cutoff]
    return f"{f.name}{'(' + params + ')' if params else ''}{cut}"


_FROM_BOUNDS = ("E", "IUB", "WLB", "UL1", "UL2", "MM", "EB", "EM", "UEW")


def bounds_kind(variant: str) -> str:
    """How a variant's random-ranking bounds are obtained: exactly, or by Monte Carlo."""
    if variant == "DB":
        return "exact (enumerated) for <= 5040 distinct arrangements of the pool, else Monte Carlo (--permutations, --seed)"
    if variant in _FROM_BOUNDS:
        return "exact for the measures above; Monte Carlo for other ir_measures measures"
    return "none needed (no random-ranking bound)"


def variants_markdown() -> str:
    """The README's variants table, generated from the registry."""
    from ..core.registry import VARIANTS

    lines = ["| variant | formula | range | bounds | source |", "|---|---|---|---|---|"]
    for v in VARIANTS.values():
        alias = f" (alias {', '.join(v.aliases)})" if v.aliases else ""
        lines.append(f"| {v.name}{alias} | {_md(v.formula)} | {_md(v.rng)} | {bounds_kind(v.name)} | {_md(v.cite)} |")
    return "\n".join(lines)


# --------------------------------------------------------------------------- per-query order

def query_order(result, metric=None, descending: bool = False, head: int | None = None) -> list:
    """Queries for per-query rows: natural order, or sorted by ``metric`` of the first run (``--sort``;
    ties and queries the first run lacks keep natural order, NaN last), then the first ``head``."""
    from ..pipeline.ordering import natural_order

    qids = natural_order({q for rr in result.runs for q in rr.qids})
    if metric is not None and result.runs:
        rr = result.runs[0]
        val = dict(zip(rr.qids, rr.values[metric].tolist()))

        def key(q):
            v = val.get(q, math.nan)
            return (1, 0.0) if math.isnan(v) else (0, -v if descending else v)

        qids = sorted(qids, key=key)
    return qids[:head] if head is not None else qids
