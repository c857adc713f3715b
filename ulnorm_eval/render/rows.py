"""Plain-text formatters of a Result: trec_eval's rows, tsv and csv."""
from __future__ import annotations

import io

from ..core import records
from .legends import percent
from .values import csv_cell, metric_label, num_text, safe_text, zscores

__all__ = ["format_trec", "format_tsv", "format_csv", "TREC_ORDER"]


# trec_eval 10's measure table order (its -m all_trec output), which its output follows
TREC_ORDER = {name: i for i, name in enumerate(records.TREC_ORDER)}


def _trec_rank(m) -> int:
    """Place of a metric in trec_eval's table: its family's trec_eval base name (a variant sorts with
    its measure; the sort is stable, so each measure keeps its variants after it)."""
    rec = m.measure.record
    if rec is None or not rec.trec:
        return len(TREC_ORDER)
    name = m.measure.trec_name()
    fits = [t.base for t in rec.trec if name == t.base or name.startswith(t.base + "_")]
    base = max(fits, key=len) if fits else rec.trec[0].base  # map_cut_5 is map_cut's, not map's
    return TREC_ORDER.get(base, len(TREC_ORDER))


def _column(m, values, precision, nan: str = "nan", as_float: bool = False) -> list:
    """Values of one metric as trec_eval prints them: text as is, counts as integers (%ld), the rest %.4f."""
    vals = values.tolist() if hasattr(values, "tolist") else list(values)
    rec = m.measure.record
    as_int = rec is not None and rec.value == "int" and m.own_scale and not as_float
    out = []
    for v in vals:
        if isinstance(v, str):
            out.append(safe_text(v))
        elif v is None or v != v:  # NaN (undefined, left out)
            out.append(nan)
        elif as_int:
            out.append(f"{int(round(float(v)))}")
        else:
            out.append(f"{v:.{precision}f}")
    return out


def format_trec(result, per_query: bool = False, names: str = "canonical", precision: int | None = 4,
                query_order=None, summary: bool = True, until: str | None = None, **_) -> str:
    """trec_eval rows ``measure<TAB>query<TAB>value``: per query (with -q) in query order, then ``all``
    (not with ``summary=False``, -n); several runs each after a ``runid`` line, as if trec_eval ran once per
    file.  ``names='trec'``: trec_eval's names, padding and query order, byte for byte (docs/trec_eval.md);
    ``until`` (a query id) cuts the last run where trec_eval 10 exits at that query."""
    precision = 4 if precision is None else precision
    nan = "  -nan" if getattr(result.options, "trec_nan", False) else "nan"  # glibc's %6.4f of 0/0
    metrics, labels, zscores = _trec_labels(result, names)
    cell = (precision, nan, zscores)
    lines = []
    runid = f"{'runid':<22s}" if names == "trec" else "runid"
    has_runid = summary and names == "trec" and any(_record_flag(m, "summary", "") == "run" and not m.variant
                                                    for m in metrics)
    for rr in result.runs:
        cut = until is not None and rr is result.runs[-1]
        if len(result.runs) > 1 and not has_runid:  # trec_eval's runid line: the run's tag (the file name if none)
            lines.append(f"{runid}\tall\t{safe_text(rr.name if getattr(rr, 'tag', None) is None else rr.tag)}")
        if per_query:
            order = query_order
            if order is None and names == "trec":
                order = sorted(rr.qids, key=str.encode)  # trec_eval's order (strcmp), for a line-for-line drop-in
            if cut:
                order = [q for q in (order or rr.qids) if q < until]  # str order = byte order, trec_eval's
            lines += _per_query_lines(rr, zip(labels, metrics), order, cell, result.options)
        if summary and not cut:
            lines += [f"{lab}\tall\t{_column(m, [rr.mean[m]], *cell)[0]}" for lab, m in zip(labels, metrics)
                      if m.summary != "none"]
    return "\n".join(lines) + ("\n" if lines else "")


def _trec_labels(result, names: str) -> tuple:
    """The metrics in print order (trec_eval's table order with ``names='trec'``, whatever the -m
    order), their labels (trec_eval's ``%-22s`` padding; -Z's 'Z' before the name) and whether -Z is on."""
    metrics = list(result.metrics)
    if names == "trec":
        metrics.sort(key=_trec_rank)
    labels = [metric_label(m, names) for m in metrics]
    if names == "trec":
        labels = [f"{lab:<22s}" for lab in labels]
    zscores = bool(getattr(result.options, "zscore", None))
    if zscores:  # trec_eval's -Z: 'Z' before the padded name, every value as %6.4f (counts too)
        labels = [lab if m.variant or _record_flag(m, "value", "float") == "text" else "Z" + lab
                  for lab, m in zip(labels, metrics)]
    return metrics, labels, zscores


def _per_query_lines(rr, labelled, order, cell: tuple, options) -> list:
    """A run's per-query rows, query by query (``order``: None for the run's own), each query's
    metrics that have per-query rows; trec_eval 9 printed none for the queries the run did not retrieve for."""
    pos = {q: i for i, q in enumerate(rr.qids)}
    skip = set(rr.missing_qids) if str(getattr(options, "trec_version", "10")) == "9" else set()
    rows = [(lab, m) for lab, m in labelled if m.variant or _record_flag(m, "per_query", True)]
    cols = [(lab, _column(m, rr.values[m], *cell)) for lab, m in rows]
    lines = []
    for q in (rr.qids if order is None else [q for q in order if q in pos]):
        if q in skip:
            continue
        i, sq = pos[q], safe_text(q)
        lines.extend(f"{lab}\t{sq}\t{col[i]}" for lab, col in cols)
    return lines


def shared_tags(runs) -> dict:
    """A tag several runs share -> their names."""
    by_tag: dict = {}
    for run in runs:
        if getattr(run, "tag", None) is not None:
            by_tag.setdefault(run.tag, []).append(run.name)
    return {tag: names for tag, names in by_tag.items() if len(names) > 1}


def shared_tags_note(runs, told_apart: bool = False) -> list:
    """A note when runs printed in trec format share a tag: their blocks' runid lines (the tag, as
    trec_eval prints it) are then told apart by their order alone, or (``told_apart``) name the run."""
    how = ("name the run instead (its file; --names trec and --trec print the tag, as trec_eval)" if told_apart
           else "are the same; they follow the order of the RUN arguments")
    return [f"runs {', '.join(map(safe_text, names))} share the tag {tag!r}: their blocks' runid lines {how}"
            for tag, names in shared_tags(runs).items()]


def _record_flag(m, name: str, default):
    rec = m.measure.record
    return default if rec is None else getattr(rec, name)


# --------------------------------------------------------------------------- tsv / csv

def _delimited(result, delimiter: str, names: str, precision: int | None, cell=safe_text) -> str:
    """Header ``run, query, <metric>...``, then a row per (run, query) with the ``all`` row last per run;
    ``cell`` makes a name safe: control characters escaped (a newline or tab in a run's file name
    never splits a row), and for csv formulas neutralised (:func:`.values.csv_cell`)."""
    import csv  # csv and tsv only: not at the start-up of every command

    buf = io.StringIO()
    w = csv.writer(buf, delimiter=delimiter, lineterminator="\n")
    spans = _interval_columns(result, names)
    w.writerow(["run", "query", *(cell(metric_label(m, names, zscores(result))) for m in result.metrics),
                *(cell(head) for _, head in spans)])
    for rr in result.runs:
        name = cell(rr.name)
        for i, q in enumerate(rr.qids):
            w.writerow([name, cell(q), *(num_text(rr.values[m][i], precision, "NaN") for m in result.metrics),
                        *[""] * len(spans)])
        ends = [num_text(rr.ci.get(m, (float("nan"),) * 2)[end], precision, "NaN") for (m, end), _ in spans]
        w.writerow([name, "all", *(num_text(rr.mean[m], precision, "NaN") for m in result.metrics), *ends])
    return buf.getvalue()


def _interval_columns(result, names: str) -> list:
    """Under ``eval --ci``: ((metric, 0 or 1), heading) for the two ends of every 'all' row's confidence
    interval over the topics, at --ci's level, after the metrics; filled on 'all' rows."""
    level = getattr(result.options, "ci", None)
    if level is None:
        return []
    out = []
    for m in result.metrics:
        if any(m in getattr(rr, "ci", {}) for rr in result.runs):
            head = f"{metric_label(m, names, zscores(result))} {percent(level)} CI"
            out += [((m, 0), f"{head} low"), ((m, 1), f"{head} high")]
    return out


def format_tsv(result, names: str = "canonical", precision: int | None = None, **_) -> str:
    """Tab-separated: every query of every run and the ``all`` row (``-q`` is implied); full precision."""
    return _delimited(result, "\t", names, precision)


def format_csv(result, names: str = "canonical", precision: int | None = None, **_) -> str:
    """Comma-separated (RFC 4180 quoting: names like ``RBP(p=0.8)`` contain no comma, ``P(rel=2)@5`` neither,
    but a run name may); otherwise as :func:`format_tsv`.  A text cell (run name, query id) starting
    with ``= + - @``, tab or CR gets a leading ``'`` so that a spreadsheet does not run it as a
    formula; numbers are never changed (docs/output.md)."""
    return _delimited(result, ",", names, precision, csv_cell)
