"""Formatters of named tables (pandas DataFrames: compare's systems/summary/pairs, queries' table).

One function per format, gathered in FRAME_FORMATS: 'table' (rich), 'tsv'/'csv' (pandas; several
tables are each preceded by a '# name' line and separated by a blank line), 'json' ({meta, name:
records}), 'latex' and 'markdown' (compare's systems x metrics table for papers, :mod:`.paper`).  Each returns the whole text, so ``-o FILE`` is written atomically.
"""
from __future__ import annotations

import sys

__all__ = ["render", "FRAME_FORMATS", "format_frames_delimited", "format_frames_json", "format_frames_table"]


def render(frames: dict, fmt: str, precision=None, meta=None) -> str:
    """Text of named DataFrames in format ``fmt`` (a key of FRAME_FORMATS)."""
    return FRAME_FORMATS[fmt](frames, precision, meta or {})


def format_frames_delimited(frames: dict, precision, meta, sep: str = "\t") -> str:
    """tsv (or csv with ``sep=','``): several tables each after a '# name' line, a blank line apart."""
    parts = []
    for name, df in frames.items():
        body = _rounded(df, precision).to_csv(sep=sep, index=False, na_rep="nan", lineterminator="\n")
        parts.append((f"# {name}\n" if len(frames) > 1 else "") + body)
    return "\n".join(parts)


def format_frames_json(frames: dict, precision, meta) -> str:
    """{"meta": ..., name: [records]}; NaN and infinities as null."""
    return _json(frames, precision, meta)


def format_frames_table(frames: dict, precision, meta) -> str:
    """rich tables, one per frame (compare's systems table is pivoted to run x metric)."""
    return _rich(frames, 4 if precision is None else precision, meta)


FRAME_FORMATS = {
    "table": format_frames_table, "tsv": format_frames_delimited,
    "csv": lambda frames, precision, meta: format_frames_delimited(frames, precision, meta, ","),
    "json": format_frames_json,
    # tables for papers (compare only): systems x metrics with significance marks (render/paper.py)
    "latex": lambda frames, precision, meta: _paper("latex", frames, precision, meta),
    "markdown": lambda frames, precision, meta: _paper("markdown", frames, precision, meta),
}


def _paper(fmt, frames, precision, meta) -> str:
    from . import paper

    return {"latex": paper.format_latex, "markdown": paper.format_markdown}[fmt](frames, precision, meta)


def _rounded(df, precision):
    if precision is None:
        return df
    num = df.select_dtypes("float").columns
    return df.assign(**{c: df[c].round(precision) for c in num})


def _json(frames, precision, meta) -> str:
    import json
    import math

    def clean(v):
        if isinstance(v, float) and not math.isfinite(v):
            return None
        if hasattr(v, "item"):
            return clean(v.item())
        return v

    out = {"meta": {k: clean(v) for k, v in meta.items()}}
    for name, df in frames.items():
        recs = _rounded(df, precision).astype(object).where(df.notna(), None).to_dict(orient="records")
        out[name] = [{k: clean(v) for k, v in r.items()} for r in recs]
    return json.dumps(out, indent=1, ensure_ascii=False) + "\n"


def _fmt(v, precision) -> str:
    import math

    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    if isinstance(v, (bool,)) or type(v).__name__ == "bool_":
        return "yes" if v else ""
    if isinstance(v, float):
        if math.isinf(v):
            return "∞"
        return f"{v:.{precision}f}"
    return str(v)


def _rich(frames, precision, meta) -> str:
    import io
    import shutil

    import pandas as pd
    from rich.console import Console
    from rich.table import Table

    buf = io.StringIO()
    width = shutil.get_terminal_size((160, 24)).columns if sys.stdout.isatty() else 200
    console = Console(file=buf, width=width, color_system="auto" if sys.stdout.isatty() else None,
                      force_terminal=sys.stdout.isatty())
    for name, df in frames.items():
        if name == "systems":
            df = _systems_wide(df, precision)
        elif name == "summary":
            df = df.drop(columns=["measure", "variant"])  # the metric's name says both
        title = {"systems": "Systems: mean (rank) under each metric",
                 "summary": _summary_title(meta),
                 "pairs": "Pairs of runs: mean difference A − B, effect d_z, 95% interval, p-values",
                 "queries": "Queries"}.get(name, name)
        table = Table(title=title, title_justify="left", header_style="bold")
        for c in df.columns:
            numeric = pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c])
            table.add_column(str(c), justify="right" if numeric else "left")
        for row in df.itertuples(index=False):
            table.add_row(*(_fmt(v, precision) for v in row))
        console.print(table)
    return buf.getvalue()


def _summary_title(meta) -> str:
    sub = meta.get("subset", "all")
    sub = f"{sub} ({meta.get('subset_size')} queries)" if sub != "all" else f"all {meta.get('queries')} queries"
    return (f"Metrics on {meta.get('runs')} runs, {sub}: {meta.get('test')} test, {meta.get('correction')} "
            f"correction, α = {meta.get('alpha')}; τ and conflicts against the plain measure; "
            f"topics needed for Φ ≥ {meta.get('phi_target')}")


def _systems_wide(df, precision):
    """run x metric, 'mean (rank)', best run of the first metric first."""
    import pandas as pd

    metrics = list(dict.fromkeys(df["metric"]))
    runs = list(dict.fromkeys(df["run"]))
    cell = {(r, m): f"{v:.{precision}f} ({k})" for r, m, v, k in zip(df["run"], df["metric"], df["mean"], df["rank"])}
    first = df[df["metric"] == metrics[0]].set_index("run")["rank"]
    runs.sort(key=lambda r: (first[r], r))
    return pd.DataFrame({"run": runs, **{m: [cell[(r, m)] for r in runs] for m in metrics}})
