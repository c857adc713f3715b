"""The process boundary: exit codes, signals and the last line of defence against tracebacks.

Exit codes (docs/errors.md): 0 success; 1 a CI gate (--fail-below, --baseline) failed and nothing
else; 2 a usage, input or output error, always as one ``ulnorm-eval: ...`` line on stderr; 130
interrupted (SIGINT, Ctrl-C); 143 terminated (SIGTERM); 129 hung up (SIGHUP); 141 the reader of
stdout went away (SIGPIPE, e.g. ``| head``).  A signal raises :class:`Interrupted` in the main
thread, so every ``finally`` runs: an output being written is removed (render/files.py).

Anything unexpected still ends as one line and exit 2 (``internal error``), never exit 1 (which a
CI job would read as a failed gate); ``ULNORM_EVAL_DEBUG=1`` shows the traceback instead.
"""
from __future__ import annotations

import os
import signal
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


class PipeClosed(Exception):
    """stdout's reader went away.  Raised in place of BrokenPipeError from a command (main.py's
    group), since click would turn an EPIPE into exit code 1, the code of a failed gate."""


def _raise(signum, frame):  # a signal handler: runs between bytecodes of the main thread
    raise Interrupted(128 + signum)


def _install():
    old = {}
    for name in _CODES:
        sig = getattr(signal, name, None)
        if sig is None:
            continue
        try:
            old[sig] = signal.signal(sig, _raise)
        except (ValueError, OSError):  # not the main thread (an embedding application)
            pass
    return old


def _is_input_error(exc) -> bool:
    # the inputs package imports numpy: looked up only once it is loaded (it raised the error), so that
    # `--help` stays instant
    mod = sys.modules.get("ulnorm_eval.inputs.errors")
    return mod is not None and isinstance(exc, mod.InputError)


def _say(msg: str) -> None:
    from ..render.values import safe_text  # control characters in a file name: escaped, one line

    try:
        click.echo(f"ulnorm-eval: {safe_text(msg)}", err=True)
    except (OSError, ValueError):
        pass


def guarded_main(run, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
    """Call click's ``main`` (``run``) in non-standalone mode and map every outcome to an exit code."""
    if not standalone_mode:
        return run(args, prog_name, complete_var, standalone_mode=False, **extra)
    from ..inputs.arrow import defer_pandas
    defer_pandas()  # the command's own process: pyarrow need not import pandas (inputs/arrow.py)
    old = _install()
    try:
        try:
            with warnings.catch_warnings():
                # numpy's overflow/invalid-value warnings: the results are checked for non-finite
                # values (inputs/checks.py) and refused with one line instead
                warnings.simplefilter("ignore", RuntimeWarning)
                rv = run(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.exceptions.Abort:  # click turns KeyboardInterrupt/EOF into Abort
            sys.exit(130)
        except click.ClickException as exc:
            # one line, like every other error: `ulnorm-eval: reason (see 'ulnorm-eval eval --help')`
            msg = " ".join(exc.format_message().split("\n"))
            hint = TREC_EVAL_FLAGS.get(getattr(exc, "option_name", None) or "")
            if isinstance(exc, click.NoSuchOption) and hint:
                msg = f"No such option {exc.option_name!r}: trec_eval's {exc.option_name} {hint}"
            ctx = getattr(exc, "ctx", None)
            if isinstance(exc, click.UsageError) and ctx is not None:
                sub = f" {ctx.info_name}" if ctx.parent is not None else ""
                msg += f" (see 'ulnorm-eval{sub} --help')"
            _say(msg)
            sys.exit(2)
        except KeyboardInterrupt:
            sys.exit(130)
        except (BrokenPipeError, PipeClosed):
            # stdout's reader went away: nothing more can be said there
            try:
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, sys.stdout.fileno())
            except (OSError, ValueError):
                pass
            sys.exit(141)
        except MemoryError:
            _say("out of memory (see the input limits in docs/errors.md)")
            sys.exit(2)
        except RecursionError:
            _say("input too deeply nested or too large to process")
            sys.exit(2)
        except OSError as exc:
            where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
            _say(f"{where}{(exc.strerror or str(exc)).lower()}")
            sys.exit(2)
        except (SystemExit, Interrupted):
            raise
        except Exception as exc:  # noqa: BLE001 - the last line of defence
            if _is_input_error(exc):
                _say(str(exc))
                sys.exit(2)
            if os.environ.get("ULNORM_EVAL_DEBUG"):
                raise
            _say(f"internal error: {type(exc).__name__}: {exc} (please report it; "
                 "ULNORM_EVAL_DEBUG=1 shows the traceback)".replace("\n", " "))
            sys.exit(2)
        sys.exit(rv if isinstance(rv, int) else 0)
    finally:
        for sig, handler in old.items():
            try:
                signal.signal(sig, handler)
            except (ValueError, OSError, TypeError):
                pass
