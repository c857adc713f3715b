"""Cell values shared by the formatters: a metric's printed name, numbers, NaN and Monte Carlo errors.

NaN marks a value that is undefined and was left out (``--undefined skip``): ``nan`` in trec output
(as trec_eval prints it), ``NaN`` in tsv/csv (read as missing by pandas, R and spreadsheets), ``null``
in json/jsonl, an empty cell in tables."""
from __future__ import annotations

import math
import os
import sys

from ..inputs.errors import message_text, safe_text  # noqa: F401 - the one escaping, re-exported

__all__ = ["metric_label", "isnan", "num_text", "json_cell", "safe_text", "message_text", "csv_cell", "zscores",
           "markdown_text", "latex_text", "terminal_styles", "UNDEFINED_MARK", "MEAN_MARK"]

# The table's marks for undefined variant values (docs/output.md): a per-query value left out of the
# mean (--undefined skip), and a mean over queries of which some were undefined.
UNDEFINED_MARK = "undef"
MEAN_MARK = "†"

def terminal_styles(stream=None) -> bool:
    """ANSI styles (colour, bold, dim) for ``stream`` (default stdout): only on a terminal, and not when
    ``NO_COLOR`` is set to anything (no-color.org) or ``TERM=dumb`` (a terminal without escapes)."""
    stream = sys.stdout if stream is None else stream
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError, OSError):  # closed or not a file
        return False
    return bool(tty) and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"


# Markdown (CommonMark + GitHub's extensions) and the HTML it lets through: every ASCII punctuation
# character may be backslash-escaped and then renders as itself.  These are the ones that start
# formatting inside a line: emphasis (* _ ~), code (`), links and images ([ ] !; '(' after an escaped
# ']' is plain), raw HTML and autolinks (< > &: entities), math ($), emoji (:), headings and issue
# references (#), a table cell's end (|), the escape itself.
_MARKDOWN = frozenset("\\`*_{}[]<>#!|~&$:")


def markdown_text(text) -> str:
    """``text`` (a run, metric or file name) for a Markdown line or table cell, inert: control
    characters escaped (:func:`safe_text`), then every character that could start Markdown or HTML
    formatting backslash-escaped, so ``**x**``, `` `x` ``, ``[x](http://y)``, ``<img src=x>`` or ``a|b``
    in a name print as written in a GitHub job summary instead of formatting it."""
    text = safe_text(text)
    out = []
    for index, char in enumerate(text):
        # '_' between two letters or digits can neither open nor close emphasis (bm25_rm3 stays
        # readable); anywhere else it is escaped like the rest
        inert = char == "_" and 0 < index < len(text) - 1 and text[index - 1].isalnum() and text[index + 1].isalnum()
        out.append("\\" + char if char in _MARKDOWN and not inert else char)
    return "".join(out)


# LaTeX's special characters, and < > | ` (OT1 fonts print them as other glyphs: ¡ ¿ — ‘) in text mode
_TEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
        "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "<": r"\textless{}",
        ">": r"\textgreater{}", "|": r"\textbar{}", "`": r"\textasciigrave{}"}


def latex_text(text) -> str:
    """``text`` for LaTeX's text mode: control characters made visible first (:func:`safe_text`: a
    newline would end a table row), then LaTeX's specials escaped."""
    return "".join(_TEX.get(char, char) for char in safe_text(text))


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(text) -> str:
    """A text cell for CSV, safe to open in a spreadsheet: a cell starting (after spaces) with
    ``= + - @``, tab or CR is a formula there (OWASP "CSV injection"), so it gets a leading ``'``; numbers (``-0.5``)
    are left as they are.  Control characters are escaped (:func:`safe_text`)."""
    text = str(text)
    if text.lstrip(" ").startswith(_FORMULA_START):  # ' =x' is a formula to some spreadsheets too
        try:
            float(text)
        except ValueError:
            text = "'" + text
    return safe_text(text)


def metric_label(metric, names: str, zscore: bool = False) -> str:
    """The column name of ``metric``: canonical, or trec_eval's with ``names='trec'``; with ``zscore``
    (trec_eval's -Z, :func:`zscores`) a converted value is a z-score, not the measure's value, and is
    named as trec_eval names it: 'Z' before the measure's name (``ZP@10``, ``Zmap``)."""
    label = metric.trec_name() if names == "trec" else str(metric)
    return "Z" + label if zscore and metric.zscored else label


def zscores(result) -> bool:
    """True when ``result``'s per-query values were converted to z-scores (-Z FILE)."""
    return bool(getattr(getattr(result, "options", None), "zscore", None))


def isnan(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def num_text(value: float, precision: int | None, nan: str = "nan") -> str:
    """A number as every command prints it where ``--precision N`` applies (text, tsv, csv, Markdown,
    LaTeX): N fixed decimals (``%.Nf``: 0.30, -0.10), or with no precision its repr, the shortest text
    that reads back as the same double; NaN as ``nan``; text (relstring, runid) as it is."""
    if isinstance(value, str):
        return value
    if isnan(value):
        return nan
    return repr(float(value)) if precision is None else f"{value:.{precision}f}"


def json_cell(value, precision: int | None = None):
    """A number for JSON and jsonl: numpy scalars as Python's, a list cell by cell, NaN and infinities as
    null, a float rounded to ``precision`` decimals (Python's round, correctly rounded as
    :func:`num_text`) when one is given."""
    if isinstance(value, list):
        return [json_cell(item, precision) for item in value]
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float):
        return None if not math.isfinite(value) else value if precision is None else round(value, precision)
    return value
