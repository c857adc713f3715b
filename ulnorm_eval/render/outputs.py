"""Every output of a command written as one step, all or none (docs/files.md): the regular files to their
temporary files, then devices and standard output, and only then the renames (:func:`write_all`)."""
from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
from dataclasses import dataclass, field

from .files import OutputError, atomic_path, write_reason

__all__ = ["View", "Output", "write_all", "write_stdout", "to_devnull", "STDOUT", "CLOSED"]

STDOUT = "standard output"
CLOSED = "closed (>&-): nothing was written; give -o FILE"


@dataclass(frozen=True, kw_only=True)
class View:
    """How a command shows its outcome (eval, compare, repro): the format and what shapes its text, and
    where it goes (-o FILE, --summary-md FILE, --plot FILE; None: not written)."""

    fmt: str
    precision: int | None = None
    output: str | None = None  # -o FILE (None: stdout)
    summary_md: str | None = None
    plot: str | None = None
    tables: tuple = ()  # compare --table
    per_query: bool = False
    nosummary: bool = False
    names: str = "canonical"
    layout: dict = field(default_factory=dict)  # -f table's width and colours (cli.support.table_layout)

    @property
    def paper(self) -> bool:
        """compare -f latex/markdown: the systems x metrics table for a paper."""
        return self.fmt in ("latex", "markdown")


class Output:
    """One thing to write: ``data`` (str, written as UTF-8, or bytes) to ``path`` (None: stdout),
    replacing it or, with ``append``, after its content (a blank line between)."""

    __slots__ = ("path", "data", "append")

    def __init__(self, path, data, append: bool = False):
        self.path = None if path is None else os.fspath(path)
        self.data = data
        self.append = append

    def payload(self) -> bytes:
        return self.data if isinstance(self.data, bytes) else self.data.encode("utf-8")


def _special(path: str) -> bool:
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False  # absent (created) or unreadable: atomic_path names the problem


def _old_content(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        return b""


def to_devnull(descriptor: int = 1) -> None:
    """Point ``descriptor`` at /dev/null after a failed write, so that the next flush (the interpreter's at
    exit: 'Exception ignored', exit 120) neither fails again nor writes the rest."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, descriptor)
        os.close(devnull)
    except (OSError, ValueError):
        pass


def _discard(out) -> None:
    with contextlib.suppress(OSError, ValueError, AttributeError):
        to_devnull(out.fileno())


def write_stdout(text) -> None:
    """``text`` to standard output, flushed; an OS error but a closed pipe is an :class:`OutputError`."""
    out = sys.stdout
    try:
        if isinstance(text, bytes):
            out.flush()
            out.buffer.write(text)
        else:
            out.write(text)
        out.flush()
    except BrokenPipeError:
        raise
    except UnicodeEncodeError as exc:  # a ValueError, not a closed stream: the encoding (before any byte went out)
        _discard(out)
        bad = exc.object[exc.start:exc.end]
        raise OutputError(STDOUT, f"cannot write {ascii(bad)} in its encoding {exc.encoding} (PYTHONIOENCODING or the "
                                  "locale): nothing was written; set PYTHONIOENCODING=utf-8 or give -o FILE (UTF-8)"
                          ) from None
    except OSError as exc:
        _discard(out)
        if exc.errno == errno.EPIPE:
            raise BrokenPipeError(*exc.args) from None
        if exc.errno == errno.EBADF:  # fd 1 closed at start (cli/guard.py gives it a read-only /dev/null)
            raise OutputError(STDOUT, CLOSED) from None
        raise OutputError(STDOUT, write_reason(exc)) from None
    except (AttributeError, ValueError):  # sys.stdout None or closed: fd 1 closed at start
        raise OutputError(STDOUT, CLOSED) from None


class _PipeGone(Exception):
    """Carries a BrokenPipeError past atomic_path, which would report it as the file's error."""


def write_all(outputs) -> None:
    """Write every :class:`Output` (see the module docstring for the order and the guarantees)."""
    try:
        _write_all([output for output in outputs if output is not None])
    except _PipeGone as gone:
        raise gone.args[0] from None


def _write_all(outputs) -> None:
    with contextlib.ExitStack() as stack:
        later = []
        for output in outputs:
            if output.path is None or _special(output.path):
                later.append(output)
                continue
            target = stack.enter_context(atomic_path(output.path))
            data = output.payload()
            if output.append:
                old = _old_content(output.path)
                data = old + (b"\n" if old else b"") + data
            try:
                with open(target, "wb") as handle:
                    handle.write(data)
                    handle.flush()
                    os.fsync(handle.fileno())
            except OSError as exc:
                raise OutputError(output.path, write_reason(exc)) from None
        for output in sorted(later, key=lambda output: output.path is None):  # devices first, standard output last
            if output.path is None:
                try:
                    write_stdout(output.data)
                except BrokenPipeError as exc:
                    raise _PipeGone(exc) from None
                continue
            try:
                with open(output.path, "ab" if output.append else "wb") as handle:  # flushed as it closes
                    handle.write(output.payload())
            except OSError as exc:
                raise OutputError(output.path, write_reason(exc)) from None
