"""Writing output files without ever destroying an input or leaving a half-written file.

Policy (docs/files.md says the same for users):

* ``-o FILE`` (and ``--plot FILE``) is checked by :func:`check_outputs` before any input is read:
  an empty name, a missing or unwritable directory, a directory as FILE, and FILE being any input
  (qrels, a run, ``--baseline``, ``--prior``, ``--groups``, the LETOR ``QRELS.query`` file) are
  refused with one line and exit 2.  "Being an input" is decided by the file's identity
  (``st_dev``, ``st_ino``), so a symbolic link, a hard link or another spelling of the path is
  caught as well as the same name.
* A regular file is written to a temporary ``.ulnorm-*`` file in the same directory and renamed
  over FILE (:func:`atomic_path`): readers see the old or the new content, never a mix; on any
  error or signal (SIGINT, SIGTERM) the temporary file is removed and FILE is unchanged.
* The new file keeps the old file's permission bits (else ``0666`` less the umask).  Owner, group
  and ACLs are those of whoever runs the command: the rename creates a new inode, as ``sed -i``,
  ``rsync`` and editors that save atomically do.  A file owned by someone else is refused rather
  than silently changing hands.
* A symbolic link is written through (the link stays, its target gets the content) only when
  the target lies in the same directory as the link; a link into another directory is refused
  (give the target's path if that is what you mean).  A dangling link is refused too.
* Something that exists and is not a regular file (``/dev/null``, ``/dev/stdout``, a FIFO) is
  written directly: renaming over it would replace the device or pipe.
* Write errors (a full disk, ``/dev/full``, a directory turned read-only) become
  :class:`OutputError`: one line, exit 2.
"""
from __future__ import annotations

import contextlib
import os
import signal
import stat
import tempfile

from ..inputs.trec import InputError

__all__ = ["OutputError", "atomic_path", "write_atomic", "check_outputs", "same_file"]

TEMP_PREFIX = ".ulnorm-"
_SIGNALS = {getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, n)}


class OutputError(InputError):
    """An output that cannot or must not be written (exit 2 like any input error)."""

    def __init__(self, path: str, reason: str):
        super().__init__(path, None, reason)


def _identity(path: str):
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino)


def same_file(a: str, b: str) -> bool:
    """True when both paths name one existing file (through links or other spellings)."""
    ia = _identity(a)
    return ia is not None and ia == _identity(b)


def _resolve(path: str) -> str:
    """The path to write: ``path`` itself, or a symbolic link's target in the same directory."""
    if not os.path.islink(path):
        return path
    try:
        target = os.path.realpath(path, strict=True)
    except OSError as exc:
        if "loop" in str(exc).lower() or getattr(exc, "errno", None) == 40:
            raise OutputError(path, "symbolic link loop") from None
        raise OutputError(path, "is a dangling symbolic link (give the path to write)") from None
    here = os.path.realpath(os.path.dirname(os.path.abspath(path)))
    if os.path.dirname(target) != here:
        raise OutputError(path, f"is a symbolic link into another directory ({target}); "
                                "give that path if you mean to replace it")
    return target


def check_output(path, inputs=()) -> None:
    """Refuse an output path before anything is read (see the module docstring)."""
    if path is None:
        return
    path = os.fspath(path)
    if path == "":
        raise OutputError("-o", "empty file name")
    if path.endswith(os.sep):
        raise OutputError(path, "names a directory (ends with /), not a file")
    target = _resolve(path)
    for p in inputs:
        if p is None or p == "-":
            continue
        if same_file(target, os.fspath(p)) or os.path.abspath(target) == os.path.abspath(os.fspath(p)):
            what = "" if path == os.fspath(p) else f" ({p})"
            raise OutputError(path, f"is an input{what}: writing it would destroy it")
    try:
        st = os.stat(target)
    except FileNotFoundError:
        st = None
    except NotADirectoryError:
        raise OutputError(path, "a component of the path is a file, not a directory") from None
    except OSError as exc:
        raise OutputError(path, exc.strerror.lower() if exc.strerror else str(exc)) from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise OutputError(path, "is a directory")
    if st is not None and not stat.S_ISREG(st.st_mode):
        if not os.access(target, os.W_OK):
            raise OutputError(path, "permission denied")
        return  # a device or FIFO is written directly
    d = os.path.dirname(os.path.abspath(target))
    if not os.path.isdir(d):
        raise OutputError(path, f"directory {os.path.dirname(path) or d} does not exist")
    if not os.access(d, os.W_OK | os.X_OK):
        raise OutputError(path, f"directory {os.path.dirname(path) or d} is not writable")
    if st is not None and hasattr(os, "geteuid") and st.st_uid != os.geteuid():
        raise OutputError(path, "belongs to another user; replacing it would change its owner")


def check_outputs(params: dict) -> None:
    """:func:`check_output` for a command's ``output``, ``plot`` and ``summary_md`` (appended to)
    against its input parameters.

    ``params`` is a click context's parameter dict: ``qrels``, ``runs``, ``baseline``, ``priors``,
    ``groups``, summ's ``data`` and ``systems``, swaps' ``systems_a``/``systems_b`` and compare's
    ``query_sets`` (the files of --swap-between) are inputs (plus a LETOR qrels' default group file ``QRELS.query``).  Standard
    input (``-``) may be only one of them: it can be read once.
    """
    inputs = []
    for key in ("qrels", "runs", "baseline", "priors", "groups", "data", "systems", "systems_a", "systems_b",
                "query_sets"):
        v = params.get(key)
        if isinstance(v, (list, tuple)):
            inputs.extend(v)
        elif v is not None:
            inputs.append(v)
    if sum(os.fspath(p) == "-" for p in inputs) > 1:
        raise InputError("-", None, "standard input can be read once, and QRELS counts: "
                                    "give the other inputs as files")
    if params.get("qrels"):
        inputs.append(os.fspath(params["qrels"]) + ".query")
    outs = [params.get(k) for k in ("output", "plot")]
    for out in outs + [params.get("summary_md")]:
        check_output(out, inputs)
    if all(o is not None for o in outs) and (outs[0] == outs[1] or same_file(*map(os.fspath, outs))):
        raise OutputError(outs[0], "given to both -o and --plot")


@contextlib.contextmanager
def _signals_blocked():
    """Hold SIGINT/SIGTERM while a temporary file is created and recorded, so that a signal
    cannot arrive between its creation and the code that removes it."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


@contextlib.contextmanager
def atomic_path(path: str, suffix: str = ""):
    """Yield a path to write in place of ``path``; on success it becomes ``path`` by a rename, on
    any error or signal it is removed: never a half-written file.

    The file gets the permissions a plain ``open(path, 'w')`` would give (an existing file's mode, else
    0666 less the umask), not mkstemp's private 0600.  Something that exists and is not a regular file
    (``/dev/null``, ``/dev/stdout``, a FIFO) is yielded itself: renaming over it would replace it.
    A symbolic link is followed only to a target in its own directory (the link stays, the target is
    replaced); see the module docstring.  OS errors are raised as :class:`OutputError`.
    """
    path = _resolve(os.fspath(path))
    try:
        special = not stat.S_ISREG(os.stat(path).st_mode)
    except FileNotFoundError:
        special = False
    except OSError as exc:
        raise _error(path, exc) from None
    if special:
        try:
            yield path
        except OSError as exc:
            raise _error(path, exc) from None
        return
    d = os.path.dirname(path) or "."
    try:
        mode = os.stat(path).st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    tmp = None
    try:
        with _signals_blocked():
            fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, suffix=suffix, dir=d)
        os.close(fd)
        yield tmp
        os.chmod(tmp, mode)
        os.replace(tmp, path)
        tmp = None
    except OSError as exc:
        raise _error(path, exc) from None
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def _error(path: str, exc: OSError) -> OutputError:
    if isinstance(exc, OutputError):
        return exc
    reason = exc.strerror or str(exc) or type(exc).__name__
    return OutputError(path, f"cannot write: {reason[:1].lower() + reason[1:]}")


def write_atomic(path: str, text: str) -> None:
    """Write ``text`` to ``path`` atomically (see :func:`atomic_path`)."""
    with atomic_path(path) as target, open(target, "w", encoding="utf-8", newline="") as fh:
        fh.write(text)
        fh.flush()
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            return
        os.fsync(fh.fileno())
