"""Writing a command's outputs without ever destroying an input or leaving a half-written file
(docs/files.md): :func:`check_outputs` refuses a dangerous output before any input is read;
:func:`write_all` writes every output as one step, all or none: the regular files to temporary files
beside them (:func:`atomic_path`), then devices and standard output, and only then the renames;
:func:`remove_stale` clears what a SIGKILL left."""
from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import sys
from dataclasses import dataclass, field

from ..inputs.errors import InputError
from ..inputs.text import refuse_url

__all__ = ["OutputError", "atomic_path", "write_reason", "check_outputs", "remove_stale",
           "PICTURE_FORMATS", "picture_format", "View", "Output", "write_all", "write_stdout", "to_devnull", "STDOUT",
           "CLOSED"]

TEMP_PREFIX = ".ulnorm-"


class OutputError(InputError):
    """An output that cannot or must not be written (exit 2 like any input error)."""

    def __init__(self, path: str, reason: str):
        super().__init__(path, None, reason)


def _identity(path, devices: bool = True):
    """(st_dev, st_ino) of the file ``path`` (a path or a descriptor) names; None if there is none, or
    (``devices`` False) for a device such as a terminal or /dev/null, whose writing destroys nothing."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    if not devices and (stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode)):
        return None
    return (st.st_dev, st.st_ino)


def _place(path: str) -> str:
    """Where ``path`` would be created: its directory with links resolved, and its name (a file that
    does not exist yet has no identity; ``out.json`` and ``link-to-here/out.json`` are one place)."""
    a = os.path.abspath(path)
    return os.path.join(os.path.realpath(os.path.dirname(a)), os.path.basename(a))


def _special(path: str) -> bool:
    """``/dev/...`` and ``/proc/...`` (``/dev/stdout``, ``/dev/fd/3``, ``/proc/self/fd/1``): opened and
    written, never resolved or renamed over, whatever they point at (a terminal, a pipe, a file)."""
    a = os.path.abspath(path)
    return a.startswith(("/dev/", "/proc/"))


def _resolve(path: str) -> str:
    """The path to write: ``path`` itself, or a symbolic link's target in the same directory."""
    if _special(path) or not os.path.islink(path):
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


def check_output(path: str, inputs, stdin_id, append: bool, flag: str) -> None:
    """Refuse an output path before anything is read (docs/files.md); ``stdin_id``: the identity of the
    file behind ``-`` among the ``inputs``; ``append`` (``--summary-md``): links followed, the owner kept."""
    if path == "":
        raise OutputError(flag, "empty file name")
    refuse_url(path)
    if path.endswith(os.sep):
        raise OutputError(path, "names a directory (ends with /), not a file")
    target = path if append else _resolve(path)
    victim = _input_at(_identity(target), inputs, stdin_id, target)
    if victim is not None:
        what = "an input" + ("" if path == victim else f" ({victim})")
        raise OutputError(path, f"is {'the file behind standard input (-), an input' if victim == '-' else what}: "
                                "writing it would destroy it")
    st = _stat_output(path, target)
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise OutputError(path, "is a directory")
    if st is not None and (not stat.S_ISREG(st.st_mode) or _special(path)):
        if not os.access(target, os.W_OK):
            raise OutputError(path, "permission denied")
        return  # a device, FIFO or /dev/stdout is written directly
    d = os.path.dirname(os.path.abspath(target))
    if not os.path.isdir(d):
        raise OutputError(path, f"directory {os.path.dirname(path) or d} does not exist")
    if not os.access(d, os.W_OK | os.X_OK):
        raise OutputError(path, f"directory {os.path.dirname(path) or d} is not writable")
    if st is not None and not append and hasattr(os, "geteuid") and st.st_uid != os.geteuid():
        raise OutputError(path, "belongs to another user; replacing it would change its owner")


def _input_at(out_id, inputs, stdin_id, target: str | None = None):
    """The input that is the file ``out_id`` (``-``: the file behind standard input, ``stdin_id``) or,
    by its path, the output ``target`` not created yet; None when there is none."""
    for p in map(os.fspath, inputs):  # check_outputs' list: no None
        if out_id is not None and out_id == (stdin_id if p == "-" else _identity(p)):
            return p
        if target is not None and p != "-" and os.path.abspath(target) == os.path.abspath(p):
            return p
    return None


def _stat_output(path: str, target: str):
    """``os.stat(target)``, None when there is no such file; any other failure is the output's error."""
    try:
        return os.stat(target)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        raise OutputError(path, "a component of the path is a file, not a directory") from None
    except OSError as exc:
        raise OutputError(path, exc.strerror.lower() if exc.strerror else str(exc)) from None


INPUT_KEYS = ("qrels", "runs", "baseline", "priors", "groups", "data", "systems", "systems_a", "systems_b",
              "query_sets", "zscore_file")
OUTPUT_KEYS = (("output", "-o"), ("plot", "--plot"), ("summary_md", "--summary-md"))


def check_outputs(params: dict) -> None:
    """Refuse, before anything is read, every output (``params``: a click context's) that is an input or
    another output by identity (``st_dev``, ``st_ino``), a URL input, and ``-`` given twice."""
    inputs = []
    for key in (*INPUT_KEYS, *_path_inputs()):
        v = params.get(key)
        if isinstance(v, (list, tuple)):
            inputs.extend(v)
        elif v is not None:
            inputs.append(v)
    for p in inputs:
        refuse_url(os.fspath(p))
    stdin = sum(os.fspath(p) == "-" for p in inputs)
    if stdin > 1:
        raise InputError("-", None, "standard input can be read once, and QRELS counts: "
                                    "give the other inputs as files")
    remember_inputs(inputs)
    if params.get("qrels"):
        inputs.append(os.fspath(params["qrels"]) + ".query")
    stdin_id = _identity(0, devices=False) if stdin else None
    outs = [(flag, os.fspath(params[key])) for key, flag in OUTPUT_KEYS if params.get(key) is not None]
    for flag, out in outs:
        check_output(out, inputs, stdin_id, append=flag == "--summary-md", flag=flag)
    if params.get("plot") is not None:
        picture_format(params["plot"])  # .pgf would start LaTeX after everything else was written
    for i, (fa, a) in enumerate(outs):
        for fb, b in outs[i + 1:]:
            if a == b or _place(a) == _place(b) or _identity(a) == _identity(b) is not None:  # one file, two names
                raise OutputError(a, f"given to both {fa} and {fb}")
    if "output" in params and params.get("output") is None:
        _check_stdout(inputs, stdin_id)


# Each regular input file as it was before the command read it: (device, inode, size, mtime in ns) by
# absolute path.  A checksum printed with the numbers (-f json) is only of the bytes that were read if
# the file did not change in between (render/json_out.py sha256_file checks).
_INPUT_STATS: dict = {}


def _signature(st) -> tuple:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def remember_inputs(paths) -> None:
    """Record the signature of each regular input file (before anything reads it)."""
    for p in paths:
        p = os.fspath(p)
        if p == "-":
            continue
        try:
            st = os.stat(p)
        except OSError:
            continue  # reported when it is read
        if stat.S_ISREG(st.st_mode):
            _INPUT_STATS.setdefault(os.path.abspath(p), _signature(st))


def changed_since_start(path, st) -> bool:
    """Whether the file ``path`` (whose stat is ``st``) is not the one :func:`remember_inputs` saw."""
    seen = _INPUT_STATS.get(os.path.abspath(os.fspath(path)))
    return seen is not None and seen != _signature(st)


def _path_inputs() -> list:
    """The current click command's other file parameters (a ``click.Path`` that is not an output):
    an input is protected whatever its option, including one added after INPUT_KEYS was written."""
    import click

    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return []
    outs = {key for key, _ in OUTPUT_KEYS}
    return [p.name for p in ctx.command.params
            if isinstance(p.type, click.Path) and p.type.file_okay and p.name not in outs and p.name not in INPUT_KEYS]


def _check_stdout(inputs, stdin_id) -> None:
    """Standard output redirected into an input (``ulnorm-eval qrels run >> run``): refused."""
    try:
        st = os.fstat(1)
    except (OSError, ValueError):
        return  # closed: reported when written to
    # a terminal, a pipe or /dev/null destroys nothing
    victim = _input_at((st.st_dev, st.st_ino), inputs, stdin_id) if stat.S_ISREG(st.st_mode) else None
    if victim is not None:
        what = "the file behind standard input" if victim == "-" else "an input"
        raise OutputError(victim, f"is {what} and also standard output (> or >> onto an input): writing it "
                                  "would destroy it")


# A temporary file's name: .ulnorm-HOST-PID-XXXXXXXX[.EXT], HOST the first 8 hex digits of the SHA-1 of
# the host name, PID the writing process, XXXXXXXX mkstemp's random part.  Only SIGKILL (or a crash,
# or power loss) can leave one behind; the next write to that directory removes it (remove_stale).
_TEMP_NAME = re.compile(r"\.ulnorm-([0-9a-f]{8})-([0-9]+)-[a-z0-9_]{8}(\.[A-Za-z0-9]{1,8})?")
STALE_SECONDS = 600  # a temporary file untouched this long whose process has ended is stale


def _host_tag() -> str:
    import hashlib
    import socket

    return hashlib.sha1(socket.gethostname().encode("utf-8", "surrogateescape")).hexdigest()[:8]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True  # exists (another user's) or not a pid we can ask about: keep its file
    return True


def remove_stale(directory: str, now: float | None = None) -> list:
    """Remove the temporary files a killed ulnorm-eval left in ``directory`` (their names returned): ours by
    name and host, of a process gone, untouched for ``STALE_SECONDS``, regular and the user's (docs/files.md)."""
    import time

    now = time.time() if now is None else now
    host = _host_tag()
    removed = []
    try:
        names = [n for n in os.listdir(directory or ".") if n.startswith(TEMP_PREFIX)]
    except OSError:
        return removed
    for name in names:
        m = _TEMP_NAME.fullmatch(name)
        if m is None or m.group(1) != host:
            continue
        pid = int(m.group(2))
        if pid == os.getpid() or _alive(pid):
            continue
        full = os.path.join(directory or ".", name)
        try:
            st = os.lstat(full)
            if (not stat.S_ISREG(st.st_mode) or now - st.st_mtime < STALE_SECONDS
                    or (hasattr(os, "geteuid") and st.st_uid != os.geteuid())):
                continue
            os.unlink(full)
            removed.append(name)
        except OSError:
            continue
    return removed


PICTURE_FORMATS = ("png", "svg", "pdf")


def picture_format(path) -> str:
    """``--plot FILE``'s picture format from its extension: png, svg or pdf, png without one (``/dev/stdout``);
    anything else is refused before any input is read (matplotlib would start LaTeX for ``.pgf``)."""
    ext = os.path.splitext(os.fspath(path))[1].lstrip(".").lower()
    if ext == "":
        return "png"
    if ext not in PICTURE_FORMATS:
        raise OutputError(os.fspath(path), f"a picture cannot be written as .{ext} (--plot writes .png, .svg or .pdf)")
    return ext


@contextlib.contextmanager
def atomic_path(path: str):
    """Yield a temporary path that becomes ``path`` (a regular file, or none yet) by a rename on success and
    is removed on any error or signal, with ``open(path, 'w')``'s permissions (docs/files.md)."""
    path = _resolve(os.fspath(path))
    d = os.path.dirname(path) or "."
    try:
        mode = os.stat(path).st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    tmp = None
    remove_stale(d)
    try:
        from ..pipeline.parallel import signals_held  # here: a command that prints to stdout needs neither
        with signals_held():
            import tempfile

            fd, tmp = tempfile.mkstemp(prefix=f"{TEMP_PREFIX}{_host_tag()}-{os.getpid()}-", dir=d)
        os.close(fd)
        yield tmp
        os.chmod(tmp, mode)
        os.replace(tmp, path)
        tmp = None
    except BrokenPipeError:
        raise  # standard output's, written before the renames: a closed pipe stays itself
    except OSError as exc:
        raise OutputError(path, write_reason(exc)) from None
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def write_reason(exc: OSError) -> str:
    """An OS error as the reason a write failed: 'cannot write: no space left on device'."""
    reason = exc.strerror or str(exc) or type(exc).__name__
    return f"cannot write: {reason[:1].lower() + reason[1:]}"


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


def _in_place(path: str) -> bool:
    """Written in place, never renamed over: /dev/... and /proc/... (:func:`_special`) and what exists but
    is no regular file (a device, a FIFO)."""
    try:
        return _special(path) or not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False  # absent (created) or unreadable: atomic_path names the problem


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


def write_all(outputs) -> None:
    """Write every :class:`Output` (None: nothing to write; the module docstring says in which order, with
    which guarantees)."""
    with contextlib.ExitStack() as stack:
        later = []
        for output in filter(None, outputs):
            if output.path is None or _in_place(output.path):
                later.append(output)
                continue
            target = stack.enter_context(atomic_path(output.path))
            data = output.payload()
            if output.append and os.path.exists(output.path):
                with open(output.path, "rb") as handle:
                    old = handle.read()
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
                write_stdout(output.data)
                continue
            try:
                with open(output.path, "ab" if output.append else "wb") as handle:  # flushed as it closes
                    handle.write(output.payload())
            except OSError as exc:
                raise OutputError(output.path, write_reason(exc)) from None
