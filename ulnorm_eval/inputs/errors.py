"""The one exception every reader raises for bad input (exit 2, one line: ``FILE[:LINE]: reason``)."""
from __future__ import annotations

__all__ = ["InputError"]


class InputError(Exception):
    """Bad input: carries the file, the 1-based line (or None) and the reason."""

    def __init__(self, path: str, line: int | None, reason: str):
        self.path, self.line, self.reason = str(path), line, reason
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {reason}")
