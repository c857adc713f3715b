"""Cell values shared by the formatters: a metric's printed name, numbers, NaN and Monte Carlo errors.

NaN marks a value that is undefined and was left out (``--undefined skip``): ``nan`` in trec output
(as trec_eval prints it), ``NaN`` in tsv/csv (read as missing by pandas, R and spreadsheets), ``null``
in json/jsonl, an empty cell in tables.
"""
from __future__ import annotations

import math

__all__ = ["metric_label", "isnan", "num_text", "json_value", "mean_stderr", "safe_text", "message_text", "csv_cell", "zscores", "zscored",
           "markdown_text", "latex_text", "terminal_styles", "UNDEFINED_MARK", "MEAN_MARK"]

# The table's marks for undefined variant values (docs/output.md): a per-query value left out of the
# mean (--undefined skip), and a mean over queries of which some were undefined.
UNDEFINED_MARK = "undef"
MEAN_MARK = "†"

_ESCAPES = {"\t": "\\t", "\n": "\\n", "\r": "\\r", "\\": "\\\\"}


def terminal_styles(stream=None) -> bool:
    """ANSI styles (colour, bold, dim) for ``stream`` (default stdout): only on a terminal, and not when
    ``NO_COLOR`` is set to anything (no-color.org) or ``TERM=dumb`` (a terminal without escapes)."""
    import os
    import sys

    stream = sys.stdout if stream is None else stream
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError, OSError):  # closed or not a file
        return False
    return bool(tty) and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"


def safe_text(text, backslash: bool = True) -> str:
    """``text`` with every character that does not print as itself escaped visibly, and the backslash
    doubled so that an escape cannot be forged: ``\\t``, ``\\n``, ``\\r``, ``\\\\``, else
    ``\\xNN`` / ``\\uNNNN`` / ``\\UNNNNNNNN``.

    Names (run files, query ids) are echoed into line- and tab-structured output and to terminals: a
    newline or tab in a file name must not forge or shift output lines, ESC or BEL must not drive
    the terminal, and an invisible character (U+FEFF, a zero-width or no-break space, the bidi
    controls such as U+202E that reorder what follows) must not make two ids look alike or a line say
    what it does not.  A literal backslash is doubled: a name ``a\\tb`` (backslash, t) must not look
    like ``a<TAB>b`` escaped.  Every text printed to a terminal or in a message goes through here.

    ``backslash=False`` (a whole message line, :func:`message_text`) leaves backslashes alone: the
    names in a message are escaped on their own (the file of an InputError, an id as its ``repr``,
    whose backslashes are already doubled), and doubling again would print ``'\\\\u200bq1'``.
    """
    text = str(text)
    if text.isprintable() and (not backslash or "\\" not in text):
        return text
    out = []
    for char in text:
        code = ord(char)
        if char == "\\" and not backslash:
            out.append(char)
        elif char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif char.isprintable():  # the space and every visible character
            out.append(char)
        elif code < 0x100:
            out.append(f"\\x{code:02x}" if code < 0x80 else f"\\u{code:04x}")
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    return "".join(out)


def message_text(text) -> str:
    """A one-line message for stderr: every invisible or control character escaped as by
    :func:`safe_text`, backslashes left as written (the names inside were escaped on their own)."""
    return safe_text(text, backslash=False)


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
    return "Z" + label if zscore and zscored(metric) else label


def zscores(result) -> bool:
    """True when ``result``'s per-query values were converted to z-scores (-Z FILE)."""
    return bool(getattr(getattr(result, "options", None), "zscore", None))


def zscored(metric) -> bool:
    """Whether -Z converts ``metric``: the plain numeric measures (pipeline/blocks.py zscore_values)."""
    rec = metric.measure.record
    return not metric.variant and (rec is None or rec.value != "text")


def isnan(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def num_text(value: float, precision: int | None, nan: str = "nan") -> str:
    if isinstance(value, str):  # a text measure (relstring, runid)
        return value
    if isnan(value):
        return nan
    if precision is None:
        return repr(float(value))
    return f"{value:.{precision}f}"


def json_value(value: float, precision: int | None):
    """A JSON number: None for NaN, rounded when a precision is given."""
    if isinstance(value, str):
        return value
    if isnan(value):
        return None
    value = float(value)
    return round(value, precision) if precision is not None else value


def mean_stderr(values, stderr) -> float:
    """Standard error of a mean of independent Monte Carlo estimates: sqrt(sum se_i^2) / n."""
    import numpy as np

    defined = ~np.isnan(values)
    count = int(defined.sum())
    return float(np.sqrt(np.sum(np.square(stderr[defined]))) / count) if count else float("nan")
