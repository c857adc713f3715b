"""The one exception every reader raises for bad input (exit 2, one line: ``FILE[:LINE]: reason``)."""
from __future__ import annotations

__all__ = ["InputError", "env_limit", "strict_float", "strict_int"]


class InputError(Exception):
    """Bad input: carries the file, the 1-based line (or None) and the reason."""

    def __init__(self, path: str, line: int | None, reason: str):
        self.path, self.line, self.reason = str(path), line, reason
        from ..render.values import safe_text  # a backslash or an invisible character in the name: visible

        shown = safe_text(self.path)
        where = f"{shown}:{line}" if line is not None else shown
        super().__init__(f"{where}: {reason}")


def env_limit(name: str, default: int) -> int:
    """The limit in the environment variable ``name`` (a whole number > 0: ``1048576``, ``1e9``), else
    ``default``.  Anything else is refused (InputError naming the variable): a limit that is silently
    ignored, or a negative one that refuses every line, would change what is read without saying so."""
    import math
    import os

    text = os.environ.get(name)
    if text is None:
        return default
    try:
        value = float(text.strip()) if "_" not in text else math.nan  # 1_0 is not a number here
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value >= 1 and value == int(value)):
        raise InputError(name, None, f"{text!r} is not a whole number >= 1 (a limit in the environment; "
                                     "unset it for the default)")
    return int(value)


def strict_float(text) -> float:
    """float(``text``) without Python's digit separators: ``1_0`` is 10 to Python and not a number to
    trec_eval (atof reads 1) or Arrow's readers, so it is refused (ValueError) rather than read as 10."""
    if (b"_" if isinstance(text, bytes) else "_") in text:
        raise ValueError(f"could not convert string to float: {text!r}")
    return float(text)


def strict_int(text) -> int:
    """int(``text``) without digit separators (see :func:`strict_float`)."""
    if (b"_" if isinstance(text, bytes) else "_") in text:
        raise ValueError(f"invalid literal for int(): {text!r}")
    return int(text)
