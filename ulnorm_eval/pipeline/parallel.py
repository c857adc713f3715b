"""Parallel and distributed evaluation: runs x query blocks on local worker processes or a Dask cluster.

The work of an evaluation is partitioned into tasks that need nothing but the qrels and their own
input: a whole run (read and evaluated where it lies: a local path, on a file system the workers share), or one query
block of a large uncompressed run (a byte range whose bounds are those of the sequential streamed
read, :func:`.stream.block_bounds`).  The qrels are parsed once by the caller and shipped to each
worker once (the local pool's initializer; on Dask the result of one task, which the workers fetch
and Dask recomputes if the workers holding it die); tasks send
back per-query values only (a :class:`.blocks.RunResult` or a :class:`.stream.BlockOut`), which
are merged in run and query order by the same code as the sequential path.  Per-query values do not
depend on the blocking (Monte Carlo draws are keyed by seed, query and repetition), so the output
is byte-identical for any number of workers.

Three executors share one interface, ``imap(tasks)`` -> outcomes in task order:

* :class:`Sequential` (``-j 1``): the caller's own process, no pool;
* :class:`LocalPool` (``-j N``): ``concurrent.futures.ProcessPoolExecutor``, a bounded window of
  tasks in flight (memory stays bounded whatever the number of tasks);

  the command line's default, ``-j auto`` (:func:`resolve_jobs`), is a local pool of one worker per
  usable core, at most one per run, and the sequential path for one run or one core;
* :class:`DaskPool` (``--scheduler ADDRESS``): a ``dask.distributed.Client``; tasks are pure (they
  read files and compute), submitted with ``retries``, and a task whose worker died is rescheduled by
  Dask; results stream back with ``as_completed`` and are yielded in task order.

A task raises nothing across the process boundary for bad input: :class:`~ulnorm_eval.inputs.trec.InputError`
comes back as a value (Dask does not retry it) and is raised again, in order, by the caller.
"""
from __future__ import annotations

import contextlib
import os
import signal
from collections import deque

from ..inputs.trec import InputError
from .blocks import Options
from .stream import BLOCK_BYTES, NotGrouped, block_bounds, evaluate_files, evaluate_stream, score_query_block

__all__ = ["ParallelError", "Sequential", "LocalPool", "DaskPool", "executor", "evaluate_paths", "evaluate_runs",
           "map_runs", "DASK_EXTRA", "AUTO", "usable_cores", "others_busy", "resolve_jobs", "run_tasks"]

from ..extras import missing_message  # noqa: E402 - the extras' install lines, in one place

DASK_EXTRA = missing_message("dask", "distributed", "--scheduler")
CONNECT_TIMEOUT = 10.0  # seconds a Dask scheduler has to answer (--scheduler-timeout)
RETRIES = 3  # Dask retries of a task that raised (a lost worker is rescheduled by the scheduler itself)
_MAGIC = ((b"\x1f\x8b", "gzip"), (b"BZh", "bz2"), (b"\xfd7zXZ\x00", "lzma"))


class ParallelError(ValueError):
    """The parallel machinery cannot run: dask missing, no scheduler at the address."""


# --------------------------------------------------------------------------- tasks (run in the workers)

_QRELS = None  # a local worker's qrels, set once by the pool's initializer


def _init_worker(qrels, parent: int | None = None) -> None:
    global _QRELS
    _QRELS = qrels
    import signal

    if parent is not None:
        _end_with(parent)

    # Ctrl-C reaches the whole process group, SIGTERM may too: the command alone answers them and
    # kills its workers (LocalPool.__exit__).  A worker that took them itself (the command's handlers,
    # inherited by fork, raise SystemExit) could be stopped in the middle of writing its result to a
    # pipe nobody reads any more, and the command waited for it forever (2 runs in 6, -j 2, 17 runs).
    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):  # held by the command while it forked (_signals_held)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _HELD)
    _steady_heap()
    import pyarrow as pa

    pa.set_cpu_count(1)  # N worker processes already use the N cores: no parse threads on top


_MMAP_THRESHOLD = 32 << 20  # glibc's largest dynamic mmap threshold on 64 bits (DEFAULT_MMAP_THRESHOLD_MAX)
_MALLOC_VARIABLES = ("MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TOP_PAD_", "MALLOC_MMAP_MAX_")


def _steady_heap() -> None:
    """A worker's heap kept between its tasks (glibc): ``mallopt`` fixes the mmap threshold at 32 MiB and
    the trim threshold at twice that, the values glibc's dynamic rule reaches at its upper bound.

    With the dynamic rule a forked worker gave its heap back to the system after some tasks and
    faulted it in again at the next one: on the 17 TREC 2003 Robust runs (-j 2) one of the two workers
    took about 5,000 page faults (20 MB) a run, 39,000-47,000 in all against 16,000-23,000 for the
    other, and about 0.1 s more system time; fixed, both took 17,000, the first run's.  A worker lives
    for one command, so what it keeps is freed when the command ends.  Left alone when the user set
    one of glibc's malloc variables or tunables, and where the C library has no ``mallopt`` (not glibc)."""
    from ..malloc import M_MMAP_THRESHOLD, M_TRIM_THRESHOLD, set_malloc

    set_malloc(((M_MMAP_THRESHOLD, _MMAP_THRESHOLD), (M_TRIM_THRESHOLD, 2 * _MMAP_THRESHOLD)), _MALLOC_VARIABLES,
               "glibc.malloc")


_HELD = {getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)}


@contextlib.contextmanager
def _signals_held():
    """The signals the command answers (cli/guard.py) held while it forks its workers, delivered after.

    The command's handler raises; raised inside the after-fork hooks that Python runs in the parent
    (logging's lock release), the exception is printed as 'Exception ignored' and dropped, and the
    command went on: Ctrl-C at that instant exited 2 with a traceback, SIGTERM exited 0 (test_parallel's
    signal test, 1-2 runs in 3 at load 9).  Held, it arrives once the forks are done and ends the
    command as anywhere else; the workers unblock it and ignore it (_init_worker)."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _end_with(parent: int) -> None:
    """End this worker when the command ``parent`` dies in a way it cannot catch (SIGKILL, the OOM
    killer): the worker ignores the signals the command answers (:func:`_init_worker`) and would
    otherwise wait for a task on its queue for ever.  Linux: the kernel sends it SIGKILL when its
    parent dies (``prctl(PR_SET_PDEATHSIG)``); the parent may have died before that call, so its pid
    is checked after it.  Elsewhere, a daemon thread of the worker checks the parent's pid twice a
    second (an orphan's parent is another process)."""
    import signal
    import sys

    if sys.platform.startswith("linux"):
        try:
            import ctypes

            if ctypes.CDLL(None).prctl(1, int(signal.SIGKILL), 0, 0, 0) == 0:  # 1: PR_SET_PDEATHSIG
                if os.getppid() != parent:
                    os._exit(1)
                return
        except (OSError, AttributeError):
            pass
    import threading
    import time

    def watch():
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="ulnorm-eval-parent-watch", daemon=True).start()


def _guard(function, qrels, args):
    """Run one task; bad input comes back as a value, so that it is raised once, in order, by the caller."""
    try:
        return ("ok", function(qrels, *args))
    except InputError as exc:
        return ("input", type(exc), exc.path, exc.line, exc.reason)


def _same_object(value):
    return value


class Shipped:
    """A local input file's bytes (decompressed), sent to a Dask worker in place of its path: a worker
    on another machine, or started in another directory, would read a different file or none (a
    relative path gave P@10 0.1500 for 0.0000, with the client's checksum in the JSON)."""

    __slots__ = ("path", "data")

    def __init__(self, path: str, data: bytes):
        self.path, self.data = path, data

    def __reduce__(self):
        return (Shipped, (self.path, self.data))


def _ship(arg):
    """``arg`` with every local file path (also inside a tuple) replaced by its :class:`Shipped` bytes."""
    from ..inputs.text import read_bytes

    if isinstance(arg, str) and arg != "-" and os.path.isfile(arg):
        return Shipped(arg, read_bytes(arg))
    if isinstance(arg, tuple):
        return tuple(_ship(item) for item in arg)
    return arg


def _unship(arg, qrels):
    """On the worker: a :class:`Shipped` file parsed as the run it holds (as ``load_run`` reads a path)."""
    if isinstance(arg, Shipped):
        from ..inputs.letor import read_letor_scores
        from ..inputs.trec import read_run

        if qrels is not None and qrels.letor:
            return read_letor_scores(arg.path, qrels, data=arg.data)
        return read_run(arg.path, data=arg.data)
    if isinstance(arg, tuple):
        return tuple(_unship(item, qrels) for item in arg)
    return arg


def _shipped_task(function, qrels, args):
    """A Dask task whose file arguments came as bytes (:func:`_ship`)."""
    try:
        args = tuple(_unship(item, qrels) for item in args)
    except InputError as exc:
        return ("input", type(exc), exc.path, exc.line, exc.reason)
    return _guard(function, qrels, args)


def data_block(qrels, path, data, metrics, options):
    """Task: a query block whose bytes the client read (:func:`range_block` for a Dask worker)."""
    return score_query_block(qrels, path, data, metrics, options)


def _local_task(function, args):
    return _guard(function, _QRELS, args)


def unwrap(outcome):
    """The value of a task's outcome, or its input error raised again."""
    if outcome[0] == "ok":
        return outcome[1]
    _, cls, path, line, reason = outcome
    raise cls(path, line, reason)


def whole_run(qrels, run, metrics, options, stream):
    """Task: one run (a path or loaded Run) evaluated whole, as ``evaluate_path`` does."""
    from .evaluate import evaluate_path

    return evaluate_path(qrels, run, metrics, options, stream=stream)


def range_block(qrels, path, start, stop, metrics, options):
    """Task: the query block at bytes [start, stop) of an uncompressed run file, read by the worker."""
    return score_query_block(qrels, path, _read_range(path, start, stop), metrics, options)


def block_run(qrels, path, start, stop, metrics, options, stream):
    """Task: a run file that is one query block, bytes [start, stop), evaluated and finished here, as
    the caller does with a run's blocks (:func:`evaluate_paths`): its 'all' row, bootstrap intervals and
    notes are computed by the worker that scored it, not by the command while the workers run (about
    10 ms a TREC 2003 Robust run of the defaults, on the command's core).  The same functions on the
    same block: the same RunResult; a block's input error is raised here, with the caller's line
    numbers (the block starts at line 1); a run whose queries are not contiguous is read whole, or
    refused under ``stream=True``, as :func:`evaluate_paths` does."""
    def block():
        yield range_block(qrels, path, start, stop, metrics, options)

    return _stream_or_whole(qrels, path, metrics, options, stream, block())


def _stream_or_whole(qrels, path, metrics, options, stream, blocks, drop=None):
    """:func:`evaluate_stream` of a run's scored ``blocks``; a run whose queries turn out not to be
    contiguous is read whole, or refused with ``stream=True``, as ``evaluate_path`` does (``drop``, if
    given, first discards the run's blocks not taken yet)."""
    from .evaluate import evaluate_run, load_run

    try:
        return evaluate_stream(qrels, path, metrics, options, blocks=blocks)
    except NotGrouped:
        if drop is not None:
            drop()
        if stream:
            raise
        return evaluate_run(qrels, load_run(path, qrels), metrics, options)


def _read_range(path, start, stop) -> bytes:
    try:
        with open(path, "rb") as handle:
            handle.seek(start)
            return handle.read(stop - start)
    except OSError as exc:
        raise InputError(path, None, f"cannot read: {exc}") from None


def _prepare(qrels, tasks) -> None:
    """Before the fork: the qrels' tables for the query set of a whole run (:func:`.blocks.prepare`),
    when the tasks evaluate two or more runs (a track), so that no worker builds them again.  The
    query blocks of one large run each have their own query set: nothing to share there."""
    asked = []  # (run, metrics, options) of each task
    for function, args in tasks:
        if function is whole_run:
            asked.append((args[0], args[1], args[2]))
        elif function is range_block or function is block_run:
            asked.append((args[0], args[3], args[4]))
        else:
            return
    if len({run if isinstance(run, str) else id(run) for run, _, _ in asked}) < 2:
        return
    from .blocks import prepare

    prepare(qrels, asked[0][1], asked[0][2])


# --------------------------------------------------------------------------- executors

class Sequential:
    """``-j 1``: every task in the calling process, in order."""

    sequential = True
    workers = 1

    def __init__(self, qrels):
        self.qrels = qrels

    def imap(self, tasks):
        for function, args in tasks:
            yield ("ok", function(self.qrels, *args))

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class LocalPool(Sequential):
    """``-j N``: N local worker processes, each given the qrels once by its initializer."""

    sequential = False
    finishes_runs = True  # a run file of one query block is one task that returns its RunResult (block_run)

    def __init__(self, qrels, jobs: int):
        super().__init__(qrels)
        self.workers = jobs
        self._pool = None

    def _start(self, size: int):
        """Fork the workers now, all of them (a fork-context pool forks every worker at its first
        submit, before its manager thread starts), at most ``size``.  Called by :meth:`imap` as it is
        called, before the caller reads any run: eval asks for the outcomes right after reading the
        qrels (and --holes' reading of the runs, which starts no thread), before it reads standard
        input, so no thread of ours is alive at the fork: the read-ahead thread, the one that can be
        inside Arrow's parser holding its locks, runs only in the sequential path.  Arrow's own idle
        CPU pool is rebuilt by Arrow in a forked child."""
        if self._pool is None:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            # fork: the workers inherit the parsed qrels and the imported modules (no pickling,
            # no re-import); spawn where fork is unavailable (only for an explicit -j N)
            method = "fork" if _fork_available() else "spawn"
            self.workers = max(1, min(self.workers, size))
            with _signals_held():
                self._pool = ProcessPoolExecutor(self.workers, multiprocessing.get_context(method),
                                                 initializer=_init_worker, initargs=(self.qrels, os.getpid()))
                self._pool.submit(_same_object, None)  # forks every worker here, not at the first task
        return self._pool

    def imap(self, tasks):
        """The outcomes of ``tasks`` in order; the workers are forked now, not at the first ``next``.

        Every task is a worker's: what a process builds once for the qrels and a query set (the
        join of the judged documents, the fingerprint table, the judgements by query, the lazy
        imports) is built here before the fork (:func:`_prepare`) and inherited.  (The command used
        to do the first task itself before forking, when that did not delay the last outcome, for
        the workers to inherit those tables; with them prepared it only added to the serial part:
        17 TREC 2003 Robust runs, defaults, -j 2: the command's CPU time up to the fork 0.51-0.58 s
        with it, 0.42-0.48 s without, and 5,000 fewer page faults, load 7-9.)"""
        tasks = list(tasks)
        if not tasks:
            return iter(())
        if self._pool is None:
            _prepare(self.qrels, tasks)
        return self._outcomes(self._start(len(tasks)), tasks)

    def _outcomes(self, pool, tasks):
        from concurrent.futures.process import BrokenProcessPool

        window = 2 * self.workers  # tasks in flight: bounds the memory of results waiting their turn
        pending = deque()
        try:
            for function, args in tasks:
                pending.append(pool.submit(_local_task, function, args))
                if len(pending) >= window:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        except BrokenProcessPool:
            raise ParallelError("a worker process died (out of memory?); run with -j 1, or --scheduler for "
                                "a cluster that retries lost workers") from None

    def __exit__(self, kind, *exc):
        if kind is not None and self._pool is not None:
            # an error, Ctrl-C or SIGTERM: the tasks in flight are of no use (they only read and
            # compute), so the workers are ended now rather than after their tasks (a second or more);
            # killed, since they ignore the signals a terminal or a job control sends (_init_worker)
            for process in list((getattr(self._pool, "_processes", None) or {}).values()):
                try:
                    process.kill()
                except (OSError, AttributeError):
                    pass
        self.close()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


class DaskPool(Sequential):
    """``--scheduler ADDRESS``: the workers of a running Dask cluster; the qrels are broadcast once."""

    sequential = False

    def __init__(self, qrels, address: str, retries: int = RETRIES, timeout: float = CONNECT_TIMEOUT):
        super().__init__(qrels)
        import time

        start = time.monotonic()  # one budget of --scheduler-timeout for connecting and finding a worker
        self.client = _connect(address, timeout, start)
        _require_workers(self.client, address, timeout, max(0.1, timeout - (time.monotonic() - start)))
        self.retries = retries
        self.workers = max(1, sum(self.client.nthreads().values()))
        # The qrels as the result of a task, not scattered data: Dask cannot recompute scattered data,
        # and a scatter "broadcast" reaches only the workers running at that moment, so the death of
        # the one worker holding it failed the whole evaluation ("lost scattered data").  A task's
        # result is recomputed from its spec (which holds the qrels) wherever it is lost; other
        # workers fetch it once from a worker that has it, as any task's input.
        import uuid

        self._qrels = self.client.submit(_same_object, qrels, pure=False, retries=self.retries,
                                         key=f"ulnorm-eval-qrels-{uuid.uuid4().hex}")

    def imap(self, tasks):
        from dask.distributed import as_completed
        from distributed.scheduler import KilledWorker

        import uuid

        tasks = iter(tasks)
        index, done, nxt = {}, {}, 0
        batch = uuid.uuid4().hex  # keys unique to this call: a released key may linger on the scheduler

        def submit(position, function, args):
            # the workers get the bytes the client reads, never a path (they may see other files)
            if function is range_block:
                path, start, stop, *rest = args
                function, args = data_block, (path, _read_range(path, start, stop), *rest)
            else:
                args = _ship(args)
            future = self.client.submit(_shipped_task, function, self._qrels, args, retries=self.retries, pure=False,
                                   key=f"ulnorm-eval-{function.__name__}-{batch}-{position}")
            index[future.key] = position
            return future

        window = 4 * self.workers + 4
        first = [submit(position, function, args) for position, (function, args) in zip(range(window), tasks)]
        count = len(first)
        if not first:
            return
        completed = as_completed(first, loop=self.client.loop)
        for future in completed:  # results stream back as they complete; yielded in task order
            try:
                done[index.pop(future.key)] = future.result()
            except KilledWorker as exc:
                raise ParallelError(f"Dask gave up on a task whose workers kept dying: {exc}") from None
            future.release()
            for function, args in tasks:  # keep the window full
                completed.add(submit(count, function, args))
                count += 1
                break
            while nxt in done:
                yield done.pop(nxt)
                nxt += 1

    def close(self) -> None:
        self.client.close()


def _connect(address: str, timeout: float, start: float | None = None):
    """A ``dask.distributed.Client`` of the scheduler at ``address``, or :class:`ParallelError` within
    about ``timeout`` seconds.

    Dask's own ``timeout`` does not bound every way a connection can fail: a listener that accepts
    and says nothing held the client for minutes, and a service that is not Dask's (an HTTP server)
    is read as a frame of exabytes (MemoryError).  So the client is made in a daemon thread, waited
    for ``timeout`` seconds (plus Dask's own attempt's slack), and any failure becomes one line naming
    the address.  The finalizer of a client that never connected is kept quiet (:func:`_quiet_client_del`).
    """
    import threading
    import time

    start = time.monotonic() if start is None else start  # importing Dask (about 2 s) counts too
    try:
        from dask.distributed import Client
    except ImportError:
        raise ParallelError(DASK_EXTRA) from None
    box = {}

    def connect():
        try:
            box["client"] = Client(address, timeout=f"{timeout}s", set_as_default=False)
        except BaseException as exc:  # noqa: BLE001 - reported by the caller, as one line
            box["error"] = exc

    _quiet_client_del()
    thread = threading.Thread(target=connect, name="ulnorm-eval-dask-connect", daemon=True)
    thread.start()
    thread.join(max(0.1, timeout - (time.monotonic() - start)))  # the bound is --scheduler-timeout itself
    if thread.is_alive():
        raise ParallelError(f"no Dask scheduler answered at {address} within {timeout:g} s "
                            "(--scheduler-timeout): is that a Dask scheduler's address?")
    exc = box.get("error")
    if exc is None:
        return box["client"]
    if isinstance(exc, (TimeoutError, OSError)) and "timed out" in str(exc).lower():
        reason = f"no answer within {timeout:g} s (--scheduler-timeout)"
        if "refused" in str(exc).lower():
            reason += ": connection refused"
    elif isinstance(exc, (MemoryError, ValueError)) or "protocol" in str(exc).lower():
        # a service that is not Dask's: its bytes read as a frame of exabytes (MemoryError) or with
        # impossible sizes (msgpack's 'Maximum allowed dimension exceeded', a ValueError)
        reason = "what answered there does not speak Dask's protocol (is it a Dask scheduler's address?)"
    elif isinstance(exc, (OSError, ValueError, TypeError, TimeoutError)):
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    elif isinstance(exc, (KeyboardInterrupt, SystemExit)):
        raise exc
    else:
        reason = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}".rstrip(": ")
    raise ParallelError(f"cannot connect to a Dask scheduler at {address}: {reason}")


def _require_workers(client, address: str, timeout: float, left: float) -> None:
    """Wait at most ``timeout`` seconds for a scheduler without workers to get one: its tasks would
    otherwise wait forever (--scheduler-timeout covered only the connection)."""
    if client.nthreads():
        return
    try:
        client.wait_for_workers(1, timeout=left)
    except Exception:  # noqa: BLE001 - dask's TimeoutError (asyncio's or its own), or a lost connection
        try:
            client.close()
        except Exception:  # noqa: BLE001
            pass
        raise ParallelError(f"the Dask scheduler at {address} has no worker (none joined within {timeout:g} s, "
                            "--scheduler-timeout): start one with dask worker ADDRESS") from None


def _quiet_client_del() -> None:
    """Drop the 'Exception ignored in Client.__del__' traceback a client that never connected prints
    when collected (it tries to close a connection it never had); every other unraisable error is
    still reported."""
    import sys

    old = sys.unraisablehook
    if getattr(old, "_ulnorm_eval", False):
        return

    def hook(unraisable):
        obj = unraisable.object
        if getattr(obj, "__qualname__", "") == "Client.__del__" and "distributed" in getattr(obj, "__module__", ""):
            return
        old(unraisable)

    hook._ulnorm_eval = True
    sys.unraisablehook = hook


AUTO = 0  # -j auto (also -j 0): the usable cores, capped by the tasks (:func:`resolve_jobs`)


def usable_cores() -> int:
    """The cores this process may run on: its CPU affinity where the platform tells it (a container's
    or ``taskset``'s limit, not the machine's core count), else ``os.cpu_count()``."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def resolve_jobs(jobs: int, tasks: int | None = None, auto_pays: bool = True) -> int:
    """The worker count of ``-j JOBS`` for ``tasks`` tasks (None: unknown): ``AUTO`` (0) is the usable
    cores less those other work keeps busy now (:func:`others_busy`, rounded), capped by the tasks,
    and 1 (the sequential path, no pool) when there is one task or one free core, or when
    ``auto_pays`` is False (a command whose workers cost more than they save); an explicit N is
    capped by the tasks only (a worker without a task would be forked for nothing)."""
    if jobs == AUTO:
        jobs = usable_cores() if auto_pays else 1
        if tasks is not None:
            jobs = min(jobs, max(1, tasks))
        if jobs > 1:  # the cores other work keeps busy now are not free for workers (others_busy)
            jobs = max(1, min(jobs, int(usable_cores() - others_busy() + 0.5)))
        # asked only when workers would start: the check imports multiprocessing (13 ms of -X
        # importtime in a fresh process), which one run or one core never needs
        if jobs > 1 and not _fork_available():  # spawn re-imports and re-reads in every worker: not worth it unasked
            jobs = 1
    if tasks is not None:
        jobs = min(jobs, max(1, tasks))
    return max(1, jobs)


def others_busy(text: str | None = None) -> float:
    """How many of this process's usable cores other work keeps busy now (Linux's /proc/loadavg; 0
    where there is none): the smaller of the threads runnable at this instant besides this one and
    the 1-minute load average, both machine-wide, times the share of the machine's cores this process
    may use.  Each alone misleads: the instant count catches a process passing by on a quiet machine,
    and the load average still counts this command's own runs of the last minute (a benchmark's loop);
    the smaller is work that has lasted and is there now (docs/performance.md, "-j auto").  ``text``:
    /proc/loadavg's line as read (the tests)."""
    try:
        if text is None:
            with open("/proc/loadavg") as handle:
                text = handle.read()
        fields = text.split()
        load, running = float(fields[0]), int(fields[3].split("/")[0]) - 1  # this thread is running
    except (OSError, ValueError, IndexError):
        return 0.0
    return max(0.0, min(float(running), load)) * usable_cores() / max(1, os.cpu_count() or 1)


def run_tasks(runs) -> int:
    """How many of ``runs`` (paths or loaded runs) would be worker tasks: every one but standard
    input, which the command reads itself.  ``-j auto`` counts runs, not query blocks: a single large
    run stays in one process (docs/performance.md, "-j auto")."""
    return sum(1 for run in runs if not (isinstance(run, str) and run == "-"))


def _fork_available() -> bool:
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods()


def executor(qrels, jobs: int = 1, scheduler: str | None = None, timeout: float = CONNECT_TIMEOUT,
             tasks: int | None = None, auto_pays: bool = True):
    """The executor for ``-j JOBS`` (``AUTO``, 0: the usable cores, :func:`resolve_jobs`) or ``--scheduler
    ADDRESS`` (``timeout``: seconds the scheduler has to answer), for ``tasks`` tasks if known (at most
    that many workers; ``auto_pays``: whether ``AUTO`` may start workers at all); use it as a context
    manager, which starts the local workers on entry."""
    if scheduler:
        return DaskPool(qrels, scheduler, timeout=timeout)
    jobs = resolve_jobs(jobs, tasks, auto_pays)
    return Sequential(qrels) if jobs <= 1 else LocalPool(qrels, jobs)


# --------------------------------------------------------------------------- evaluation

def map_runs(executor, function, items, *args) -> list:
    """``[fn(qrels, item, *args) for item in items]``, each call a task of ``executor`` (``function`` at module level)."""
    return [unwrap(outcome) for outcome in executor.imap([(function, (item, *args)) for item in items])]


def evaluate_runs(executor, runs, metrics, options: Options, warn=None):
    """Yield the RunResult of each run (path or Run) read whole, in order; ``warn`` hears each note."""
    for outcome in executor.imap([(whole_run, (run, metrics, options, False)) for run in runs]):
        res = unwrap(outcome)
        for note in res.notes if warn else ():
            warn(note)
        yield res


def _splittable(path) -> bool:
    """An uncompressed regular local file: workers can read its query blocks by byte range."""
    if not isinstance(path, str) or path == "-" or not os.path.isfile(path):
        return False
    with open(path, "rb") as handle:
        head = handle.read(6)
    return not any(head.startswith(magic) for magic, _ in _MAGIC)


def _plan(executor, path, metrics, options: Options, stream, block_bytes) -> tuple[str, list]:
    """How :func:`evaluate_paths` evaluates one run: ("here", []) for standard input (read by the command),
    ("blocks", one task per query block) for a file split by byte range, else ("whole", [one task]) (a
    file of one block is finished by its worker when the executor can: ``finishes_runs``)."""
    if path == "-":
        return "here", []
    if stream is not False and not executor.qrels.letor and _splittable(path):
        bounds = block_bounds(path, block_bytes)
        if len(bounds) == 2 and getattr(executor, "finishes_runs", False):  # one block: finished by the worker
            return "whole", [(block_run, (path, bounds[0], bounds[1], metrics, options, stream))]
        return "blocks", [(range_block, (path, start, end, metrics, options)) for start, end in zip(bounds, bounds[1:])]
    return "whole", [(whole_run, (path, metrics, options, stream))]


def evaluate_paths(executor, paths, metrics, options: Options, stream: bool | None = None,
                   block_bytes: int = BLOCK_BYTES):
    """Yield the RunResult of each run file, in order, as ``evaluate_path(..., stream=stream)`` gives it.

    Tasks: an uncompressed run file is split into its query blocks (each a task; the blocks and
    hence the notes and errors are those of the sequential streamed read); any other run (compressed,
    LETOR scores, or ``stream=False``) is one task.  Standard input is read here.  A run whose
    queries turn out not to be contiguous is read whole, as ``evaluate_path`` does (or refused with
    ``stream=True``).
    """
    from .evaluate import evaluate_path, evaluate_run, load_run

    qrels = executor.qrels
    if executor.sequential:
        paths = list(paths)
        if (len(paths) > 1 and stream is not False and not qrels.letor
                and all(isinstance(path, str) and path != "-" and os.path.isfile(path) for path in paths)):
            # several run files: the next one is read and parsed while this one is scored
            yield from evaluate_files(qrels, paths, metrics, options,
                                      lambda path: evaluate_run(qrels, load_run(path, qrels), metrics, options),
                                      stream, block_bytes)
            return
        for path in paths:
            yield evaluate_path(qrels, path, metrics, options, stream=stream)
        return
    plans = [_plan(executor, path, metrics, options, stream, block_bytes) for path in paths]
    outcomes = executor.imap([task for _, tasks_ in plans for task in tasks_])
    for path, (kind, tasks_) in zip(paths, plans):
        if kind == "here":
            yield evaluate_path(qrels, path, metrics, options, stream=stream)
            continue
        if kind == "whole":
            yield unwrap(next(outcomes))
            continue
        taken = [0]

        def outs(count=len(tasks_)):
            for _ in range(count):
                taken[0] += 1
                yield unwrap(next(outcomes))

        def drop(count=len(tasks_)):
            for _ in range(count - taken[0]):  # this run's other blocks are of no use now
                next(outcomes)

        yield _stream_or_whole(qrels, path, metrics, options, stream, outs(), drop)
