"""The one exception every reader raises for bad input (exit 2, one line: ``FILE[:LINE]: reason``), a command's
two other refusals said in one line (:class:`OptionError`, :class:`RefusedAlone`), and the one escaping of the names and messages printed (:func:`safe_text`: a file name, a query id, an error line)."""
from __future__ import annotations

__all__ = ["InputError", "OptionError", "RefusedAlone", "env_limit", "finite_float", "message_text", "safe_text"]

_ESCAPES = {"\t": "\\t", "\n": "\\n", "\r": "\\r", "\\": "\\\\"}


class InputError(Exception):
    """Bad input: carries the file, the 1-based line (or None) and the reason."""

    def __init__(self, path: str, line: int | None, reason: str):
        self.path, self.line, self.reason = str(path), line, reason
        shown = safe_text(self.path)  # a backslash or an invisible character in the name: visible
        where = f"{shown}:{line}" if line is not None else shown
        super().__init__(f"{where}: {reason}")


class OptionError(ValueError):
    """Options that contradict each other, found before any input is read (the command's usage error)."""


class RefusedAlone(ValueError):
    """An error reported alone: the notes gathered so far would mislead (e.g. a run that shares no query
    with the qrels, evaluated against what is almost surely the wrong qrels)."""


def safe_text(text, backslash: bool = True) -> str:
    """``text`` with every character that does not print as itself escaped visibly (``\\t``, ``\\n``,
    ``\\r``, else ``\\xNN`` / ``\\uNNNN`` / ``\\UNNNNNNNN``) and the backslash doubled, so that a name
    cannot forge or shift an output line, drive a terminal, or look like another (U+FEFF, zero-width
    spaces, bidi controls).  Every text printed goes through here.  ``backslash=False`` (a whole message
    line, :func:`message_text`) leaves backslashes alone: its names are escaped on their own."""
    text = str(text)
    if text.isprintable() and (not backslash or "\\" not in text):
        return text
    return "".join(char if char.isprintable() and (char != "\\" or not backslash)
                   else _ESCAPES.get(char) or _escaped(ord(char)) for char in text)


def _escaped(code: int) -> str:
    return f"\\x{code:02x}" if code < 0x80 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def message_text(text) -> str:
    """A one-line message for stderr: every invisible or control character escaped as by
    :func:`safe_text`, backslashes left as written (the names inside were escaped on their own)."""
    return safe_text(text, backslash=False)


def env_limit(name: str, default: int) -> int:
    """The limit in the environment variable ``name`` (a whole number > 0: ``1048576``, ``1e9``), else
    ``default``.  Anything else is refused (InputError naming the variable): a limit that is silently
    ignored, or a negative one that refuses every line, would change what is read without saying so."""
    import os

    text = os.environ.get(name)
    if text is None:
        return default
    try:
        value = finite_float(text.strip(), name, None, "limit")  # '1_0', 'inf': no number here
    except InputError:
        value = 0.0
    if not (value >= 1 and value == int(value)):
        raise InputError(name, None, f"{text!r} is not a whole number >= 1 (a limit in the environment; "
                                     "unset it for the default)")
    return int(value)


def finite_float(text, path: str, line, what: str) -> float:
    """float(``text``), finite, else an InputError naming ``what``.  Python's digit separators are
    refused: ``1_0`` is 10 to Python and not a number to trec_eval (atof reads 1) or Arrow's readers."""
    import math

    shown = text.decode(errors="replace") if isinstance(text, bytes) else text
    try:
        if isinstance(shown, str) and "_" in shown:
            raise ValueError(shown)
        value = float(text)
    except (TypeError, ValueError):
        raise InputError(path, line, f"{what} {shown!r} is not a number") from None
    if not math.isfinite(value):
        raise InputError(path, line, f"{what} {shown!r} is not a finite number")
    return value
