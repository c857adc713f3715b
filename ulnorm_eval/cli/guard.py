"""The process boundary: exit codes, signals, closed or unbuffered standard streams, and no traceback
(docs/errors.md).  A signal raises :class:`Interrupted` in the main thread, so every ``finally`` runs (a
partial output is removed); anything unexpected ends as one line and exit 2 (``ULNORM_EVAL_DEBUG=1``
adds the traceback)."""
from __future__ import annotations

import errno
import io
import os
import signal
import stat
import sys
import warnings

import click

__all__ = ["Interrupted", "PipeClosed", "guarded_main"]

# trec_eval's flags that ulnorm-eval does not have, and what to use instead (shown when one is given)
TREC_EVAL_FLAGS = {
    "--Judged_docs_only": "is -J/--judged-only here",
    "--Number_docs_in_coll": "is -N/--num-docs here",
    "--Debug_level": "is -D here (0 only)",
    "--Rel_info_format": "is -R here (qrels only)",
    "--Results_format": "is -T here (trec_results only)",
    "--Zscore": "is -Z here",
    "--query_eval_wanted": "is -q here",
    "--measure": "is -m here (trec_eval names work: -m map -m P.5,10)",
    "--complete_rel_info_wanted": "is the default here (-c is accepted)",
    "--level_for_rel": "is -l here",
    "--Max_retrieved_per_topic": "is -M here",
    "-v": "(version) is --version here",
    "-a": "(all trec measures) has no equivalent: name measures with -m (see 'ulnorm-eval measures')",
}

_CODES = {"SIGINT": 130, "SIGTERM": 143, "SIGHUP": 129}


class Interrupted(SystemExit):
    """A signal ended the run; ``code`` is 128 + the signal number."""


class InputEnded(Exception):
    """An EOFError from a command (a stream cut short): an input error, which click would call an interruption."""


class PipeClosed(Exception):
    """stdout's reader went away: a BrokenPipeError, which click would turn into exit 1, a failed gate's code."""


def _raise(signum, frame):  # a signal handler: runs between bytecodes of the main thread
    raise Interrupted(128 + signum)


def _install():
    old = {}
    for name in _CODES:
        sig = getattr(signal, name, None)
        if sig is None:
            continue
        try:
            # a signal the parent set to be ignored (nohup, trap '' INT TERM, a background job's
            # SIGINT) stays ignored: the user asked for the run to survive it
            if signal.getsignal(sig) == signal.SIG_IGN:
                continue
            old[sig] = signal.signal(sig, _raise)
        except (ValueError, OSError):  # not the main thread (an embedding application)
            pass
    return old


def _say(msg: str) -> None:
    from ..render.values import message_text  # control characters in a file name: escaped, one line

    try:
        click.echo(f"ulnorm-eval: {message_text(msg)}", err=True)
    except (OSError, ValueError):
        pass


_CLOSED = set()  # standard descriptors found closed at start (0, 1, 2)


class _Lossy(io.FileIO):
    """stderr, whose messages are dropped once nobody can read them: the outputs and the exit code stay
    what they would have been (``2>&1 >/dev/null | true``: a failed gate still exits 1)."""

    def write(self, data) -> int:
        view = memoryview(data).cast("B")
        try:
            while view:
                view = view[super().write(view) or len(view):]
        except OSError:
            pass
        return len(data)


def _own_streams() -> None:
    """Hold closed descriptors 0-2 with /dev/null (no later file takes their number); rewrap an
    unbuffered stdout, whose text layer drops the rest of a short write.  The command's own process only."""
    for descriptor in (0, 1, 2):
        try:
            os.fstat(descriptor)
            continue
        except OSError:
            pass
        # stdin and stdout: read-only /dev/null, so that a read or write fails (EBADF) as on a closed
        # descriptor; stderr: writable /dev/null, where the messages nobody can read are dropped
        nfd = os.open(os.devnull, os.O_WRONLY if descriptor in (0, 2) else os.O_RDONLY)
        if nfd != descriptor:
            os.dup2(nfd, descriptor)
            os.close(nfd)
        _CLOSED.add(descriptor)
        if descriptor == 1:
            sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8")
        elif descriptor == 2:
            sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8",
                                          errors="backslashreplace", write_through=True)
    err = sys.stderr
    if 2 not in _CLOSED and getattr(err, "fileno", lambda: None)() == 2:
        sys.stderr = io.TextIOWrapper(_Lossy(2, "w", closefd=False), encoding=err.encoding, errors="backslashreplace",
                                      write_through=True)
    out = sys.stdout
    if 1 not in _CLOSED and isinstance(getattr(out, "buffer", None), io.FileIO):  # PYTHONUNBUFFERED / -u
        try:
            tty = out.isatty()
        except (OSError, ValueError):
            tty = False
        sys.stdout = io.TextIOWrapper(io.BufferedWriter(io.FileIO(out.fileno(), "w", closefd=False)),
                                      encoding=out.encoding, errors=out.errors, line_buffering=tty)


def _to_devnull() -> None:
    from ..render.files import to_devnull

    to_devnull(1)


def _finish_stdout(code):
    """Flush stdout (and sync it when it is a regular file) before exiting with ``code``; a failure changes it."""
    out = sys.stdout
    if out is None:
        return code
    try:
        out.flush()
        descriptor = out.fileno()
        if stat.S_ISREG(os.fstat(descriptor).st_mode):
            os.fsync(descriptor)
    except BrokenPipeError:
        _to_devnull()
        return 141
    except (io.UnsupportedOperation, AttributeError, ValueError):
        return code  # not a real descriptor (an embedding application, a test runner)
    except OSError as exc:
        if exc.errno in (errno.EINVAL, errno.EROFS):  # fsync not supported there: the flush succeeded
            return code
        _to_devnull()
        _say(_stdout_error(exc))
        return 1 if code == 1 else 2
    return code


def _stdout_failed() -> bool:
    """Whether flushing stdout fails (click's --help on a full disk); it then goes to /dev/null."""
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
        return False
    except (OSError, ValueError):
        _to_devnull()
        return True


def _stdout_error(exc: OSError) -> str:
    from ..render.files import CLOSED, STDOUT, write_reason

    return f"{STDOUT}: {CLOSED}" if exc.errno == errno.EBADF and 1 in _CLOSED else f"{STDOUT}: {write_reason(exc)}"


def lean_process() -> None:
    """Before numpy and pyarrow load, unless the user set them (docs/performance.md): one BLAS thread (the
    matrix products are small) and Arrow on the C allocator (which gives freed blocks back)."""
    if "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    if "pyarrow" not in sys.modules:
        os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")


def guarded_main(run, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
    """Call click's ``main`` (``run``) in non-standalone mode and map every outcome to an exit code."""
    if not standalone_mode:
        return run(args, prog_name, complete_var, standalone_mode=False, **extra)
    real = _real_stdout()
    if real:
        _own_streams()
        lean_process()
    old = _install()
    try:
        try:
            _guarded(run, args, prog_name, complete_var, **extra)
        except SystemExit as exc:  # a signal's Interrupted too: every finally has run (temporary files removed)
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
            final = _finish_stdout(code) if real and not isinstance(exc, Interrupted) else code
            if real and _own_process():
                _exit_now(final)
            if final != exc.code:
                raise SystemExit(final) from None
            raise
    finally:
        for sig, handler in old.items():
            try:
                signal.signal(sig, handler)
            except (ValueError, OSError, TypeError):
                pass


def _own_process() -> bool:
    """Whether this process was started to run the command (the script or ``python -m ulnorm_eval``), not
    a program that embeds it and goes on afterwards (that one gets SystemExit)."""
    main_file = (getattr(sys.modules.get("__main__"), "__file__", None) or "").replace("\\", "/")
    return os.path.basename(main_file).startswith("ulnorm-eval") or main_file.endswith("ulnorm_eval/__main__.py")


def _exit_now(code: int) -> None:
    """Leave with ``code``, flushed, without the interpreter's shutdown, where an Arrow thread can abort
    the process (apache/arrow#34314; docs/errors.md, "Process exit is deterministic")."""
    for stream in (sys.stderr, sys.stdout):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    os._exit(code)


def _real_stdout() -> bool:
    """True when sys.stdout is the process's descriptor 1 (or it is closed), not a test runner's buffer."""
    if sys.stdout is None:
        return True
    try:
        return sys.stdout.fileno() == 1
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        return False


def _usage_line(exc) -> str:
    """click's error as one line, like every other error: `ulnorm-eval: reason (see 'ulnorm-eval eval --help')`;
    a trec_eval flag we do not take says what to use instead."""
    msg = " ".join(exc.format_message().split("\n"))
    hint = TREC_EVAL_FLAGS.get(getattr(exc, "option_name", None) or "")
    if isinstance(exc, click.NoSuchOption) and hint:
        msg = f"No such option {exc.option_name!r}: trec_eval's {exc.option_name} {hint}"
    ctx = getattr(exc, "ctx", None)
    if isinstance(exc, click.UsageError) and ctx is not None:
        sub = f" {ctx.info_name}" if ctx.parent is not None else ""
        msg += f" (see 'ulnorm-eval{sub} --help')"
    return msg


_FIXED = ((InputEnded, "unexpected end of input: {}"), (MemoryError, "out of memory (see the input limits in "
          "docs/errors.md)"), (RecursionError, "input too deeply nested or too large to process"))


def _error_line(exc: Exception) -> str:
    """Every error no layer turned into a message, as one line (exit 2, never the gate's 1): click's usage
    error, a stream cut short, an OS error, bad input, a missing extra (extras.py), else an internal error."""
    errors = sys.modules.get("ulnorm_eval.inputs.errors")  # loaded if it raised one: --help imports no inputs
    if isinstance(exc, click.ClickException):
        return _usage_line(exc)
    for kind, line in _FIXED:
        if isinstance(exc, kind):
            return line.format(exc)
    if isinstance(exc, OSError):
        if _stdout_failed() or (exc.errno == errno.EBADF and 1 in _CLOSED and not getattr(exc, "filename", None)):
            return _stdout_error(exc)  # click's own output (--help, --version) to a closed or full stdout
        where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
        return where + (exc.strerror or str(exc)).lower()
    if errors is not None and isinstance(exc, errors.InputError):
        return str(exc)
    from ..extras import MissingExtra, extra_for

    missing = str(exc) if isinstance(exc, MissingExtra) else extra_for(exc)
    if missing:
        return missing
    if os.environ.get("ULNORM_EVAL_DEBUG"):
        import traceback

        traceback.print_exc()
    return (f"internal error: {type(exc).__name__}: {exc} (please report it; "
            "ULNORM_EVAL_DEBUG=1 shows the traceback)".replace("\n", " "))


def _guarded(run, args, prog_name, complete_var, **extra):
    """click's ``main`` with every outcome mapped to ``sys.exit(code)``."""
    from ..render.progress import progress_mode

    try:
        progress_mode()  # the environment's setting, refused before any command runs
    except ValueError as exc:
        _say(str(exc))
        sys.exit(2)
    try:
        with warnings.catch_warnings():
            # numpy's overflow/invalid-value warnings: the results are checked for non-finite
            # values (inputs/checks.py) and refused with one line instead
            warnings.simplefilter("ignore", RuntimeWarning)
            returned = run(args, prog_name, complete_var, standalone_mode=False, **extra)
    except click.exceptions.Abort:  # click's KeyboardInterrupt (a signal here raises Interrupted)
        sys.exit(130)
    except (BrokenPipeError, PipeClosed):  # stdout's reader went away: nothing more can be said there
        _to_devnull()
        sys.exit(141)
    except Exception as exc:  # noqa: BLE001 - the last line of defence (SystemExit and Interrupted pass)
        _say(_error_line(exc))
        sys.exit(2)
    sys.exit(returned if isinstance(returned, int) else 0)
