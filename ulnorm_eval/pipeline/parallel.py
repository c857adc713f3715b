"""Where the tasks of an evaluation run, behind one interface, ``imap(tasks)`` -> outcomes in task order:
:class:`Sequential` (``-j 1``), :class:`LocalPool` (``-j N``: a ProcessPoolExecutor, a bounded window of
tasks in flight) and :class:`DaskPool` (``--scheduler``: tasks retried, rescheduled when a worker dies).
A task needs the qrels (shipped to each worker once) and its input, and sends back per-query values: the
output is byte-identical for any number of workers.  Bad input comes back as a value, raised in order."""
from __future__ import annotations

import contextlib
import functools
import itertools
import logging
import os
import signal
import threading
import time
import uuid
from collections import deque

from ..inputs.trec import InputError

__all__ = ["ParallelError", "Sequential", "LocalPool", "DaskPool", "executor", "unwrap", "DASK_EXTRA", "AUTO",
           "usable_cores", "resolve_jobs", "signals_held", "COMMAND_SIGNALS"]

from ..extras import missing_message  # noqa: E402 - the extras' install lines, in one place

DASK_EXTRA = missing_message("dask", "distributed", "--scheduler")
CONNECT_TIMEOUT = 10.0  # seconds a Dask scheduler has to answer (--scheduler-timeout)
RETRIES = 3  # Dask retries of a task that raised (a lost worker is rescheduled by the scheduler itself)


class ParallelError(ValueError):
    """The parallel machinery cannot run: dask missing, no scheduler at the address."""


# --------------------------------------------------------------------------- tasks (run in the workers)

_QRELS = None  # a local worker's qrels, set once by the pool's initializer


def _init_worker(qrels, parent: int) -> None:
    global _QRELS
    _QRELS = qrels
    _end_with(parent)
    # the command alone answers these and kills its workers (LocalPool.__exit__): a worker stopped while
    # writing its result to the pipe left the command waiting for ever (docs/performance.md)
    for number in COMMAND_SIGNALS:
        signal.signal(number, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):  # held by the command while it forked (signals_held)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, COMMAND_SIGNALS)
    import pyarrow as pa

    pa.set_cpu_count(1)  # N worker processes already use the N cores: no parse threads on top


COMMAND_SIGNALS = {getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)}


@contextlib.contextmanager
def signals_held():
    """The signals the command answers (cli/guard.py) held, delivered after: while it forks its workers
    (raised in Python's after-fork hooks, the handler's exception would be dropped) and while
    render/files.py creates and records a temporary file (else left behind)."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, COMMAND_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _end_with(parent: int) -> None:
    """End this worker when the command ``parent`` dies uncaught (SIGKILL, the OOM killer), else it would
    wait on its queue for ever (it ignores the command's signals): a daemon thread checks the parent
    twice a second."""
    if os.getppid() != parent:
        os._exit(1)

    def watch():
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="ulnorm-eval-parent-watch", daemon=True).start()


def _guard(function, qrels, args, identity=None):
    """Run one task, bad input returned as a value; a Dask task first checks that its worker runs the
    command's ulnorm-eval (``identity``: a worker may join after :func:`_require_same_code`)."""
    if identity is not None and identity != code_identity():
        return ("code", code_identity())
    try:
        return ("ok", function(qrels, *args))
    except InputError as exc:
        return ("input", type(exc), exc.path, exc.line, exc.reason)


def _same_object(value):
    return value


def _local_task(function, args):
    return _guard(function, _QRELS, args)


def unwrap(outcome):
    """The value of a task's outcome, or its input error raised again."""
    if outcome[0] == "ok":
        return outcome[1]
    _, cls, path, line, reason = outcome
    raise cls(path, line, reason)


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
    forks = True  # the orchestrator builds the qrels' tables of a track before the workers fork (blocks.prepare)

    def __init__(self, qrels, jobs: int):
        super().__init__(qrels)
        self.workers = jobs
        self._pool = None
        self._children = []  # the workers (multiprocessing.Process, found by its public API), ended at once on an error

    def _start(self, size: int):
        """Fork the workers now, all of them, at most ``size``: before any run is evaluated, so no
        thread of ours is alive at the fork (docs/performance.md, "Forking is safe by construction")."""
        if self._pool is None:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            # fork: the workers inherit the parsed qrels and the imported modules (no pickling,
            # no re-import); spawn where fork is unavailable (only for an explicit -j N)
            method = "fork" if _fork_available() else "spawn"
            self.workers = max(1, min(self.workers, size))
            before = set(multiprocessing.active_children())
            with signals_held():
                self._pool = ProcessPoolExecutor(self.workers, multiprocessing.get_context(method),
                                                 initializer=_init_worker, initargs=(self.qrels, os.getpid()))
                self._pool.submit(_same_object, None)  # forks every worker here, not at the first task
            self._children = [child for child in multiprocessing.active_children() if child not in before]
        return self._pool

    def imap(self, tasks):
        """The outcomes of ``tasks`` in order; the workers are forked now, not at the first ``next``
        (what they share is built before, blocks.prepare: docs/performance.md, "-j auto")."""
        tasks = list(tasks)
        if not tasks:
            return iter(())
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
        if kind is not None:
            # an error, Ctrl-C or SIGTERM: the tasks in flight are of no use (they only read and
            # compute), so the workers are ended now rather than after their tasks; killed, since they
            # ignore the signals a terminal or a job control sends (_init_worker)
            for child in self._children:
                with contextlib.suppress(OSError, ValueError):  # gone already
                    child.kill()
        self.close()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


class DaskPool(Sequential):
    """``--scheduler ADDRESS``: the workers of a running Dask cluster; the qrels are broadcast once.
    The workers never read a path: the orchestrator sends the bytes the command reads (``remote``)."""

    sequential = False
    remote = True

    def __init__(self, qrels, address: str, timeout: float = CONNECT_TIMEOUT):
        super().__init__(qrels)
        start = time.monotonic()  # one budget of --scheduler-timeout for connecting and finding a worker
        self.client = _connect(address, timeout, start)
        # a scheduler lost is said once, by the ParallelError the command prints, not also by Dask's log
        logging.getLogger("distributed.client").setLevel(logging.CRITICAL)
        _require_workers(self.client, address, timeout, max(0.1, timeout - (time.monotonic() - start)))
        self.address, self.timeout = address, timeout
        self.identity = _require_same_code(self.client, address)
        self.workers = max(1, sum(self.client.nthreads().values()))
        # The qrels as the result of a task, not scattered data: Dask cannot recompute scattered data,
        # and a scatter "broadcast" reaches only the workers running at that moment, so the death of
        # the one worker holding it failed the whole evaluation ("lost scattered data").  A task's
        # result is recomputed from its spec (which holds the qrels) wherever it is lost; other
        # workers fetch it once from a worker that has it, as any task's input.
        self._qrels = self.client.submit(_same_object, qrels, pure=False, retries=RETRIES,
                                         key=f"ulnorm-eval-qrels-{uuid.uuid4().hex}")

    def imap(self, tasks):
        from distributed.scheduler import KilledWorker

        tasks, batch = enumerate(tasks), uuid.uuid4().hex  # keys unique to this call: a released key may linger

        def submit(position, task):
            return self.client.submit(_guard, task[0], self._qrels, task[1], self.identity, retries=RETRIES,
                                      pure=False, key=f"ulnorm-eval-{task[0].__name__}-{batch}-{position}")

        pending = {submit(*task) for task in itertools.islice(tasks, 4 * self.workers + 4)}
        done, nxt = {}, 0
        while pending:  # results stream back as they complete; yielded in task order
            for future in self._finished(pending):
                pending.discard(future)
                try:
                    outcome = future.result()
                except KilledWorker as exc:
                    raise ParallelError(f"Dask gave up on a task whose workers kept dying: {exc}") from None
                except TypeError as exc:  # the _guard of an ulnorm-eval older than the check takes no identity
                    if "_guard()" not in str(exc):
                        raise
                    _refuse_other_code(self.address, ["one without this check"])
                if outcome[0] == "code":
                    _refuse_other_code(self.address, [outcome[1]])
                done[int(future.key.rsplit("-", 1)[1])] = outcome  # the task's position ends its key
                future.release()
                pending.update(submit(*task) for task in itertools.islice(tasks, 1))  # keep the window full
            while nxt in done:
                yield done.pop(nxt)
                nxt += 1

    def _finished(self, pending):
        """The futures of ``pending`` that have finished, waited for while the cluster has a worker (Dask
        would wait for ever): without one for --scheduler-timeout seconds the command gives up."""
        from concurrent.futures import CancelledError

        from distributed import wait

        alone = None  # since when the cluster has had no worker
        while True:
            try:
                with self.client.as_current():  # wait() asks for the current client; ours is not the default
                    done = wait(pending, timeout=min(1.0, self.timeout), return_when="FIRST_COMPLETED").done
                if not any(future.cancelled() for future in done):
                    return done
                raise CancelledError
            except TimeoutError:
                pass
            except CancelledError:  # the client's connection lost: Dask cancels every future
                raise ParallelError(f"lost the connection to the Dask scheduler at {self.address}: "
                                    "the evaluation was not finished") from None
            try:
                workers = self.client.nthreads() if self.client.status == "running" else {}
            except Exception:  # noqa: BLE001 - the scheduler gone: its connection's error, whatever its type
                workers = {}
            alone = None if workers else (alone or time.monotonic())
            if alone is not None and time.monotonic() - alone >= self.timeout:
                raise ParallelError(f"the Dask scheduler at {self.address} lost its workers (none for "
                                    f"{self.timeout:g} s, --scheduler-timeout): the evaluation was not finished")

    def close(self) -> None:
        self.client.close()


def _connect(address: str, timeout: float, start: float):
    """A ``dask.distributed.Client`` of the scheduler at ``address``, or :class:`ParallelError` within about
    ``timeout`` seconds: made in a daemon thread and waited for, since Dask's own timeout does not bound
    a silent listener or a service that is not Dask's."""
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
        with contextlib.suppress(Exception):
            client.close()
        raise ParallelError(f"the Dask scheduler at {address} has no worker (none joined within {timeout:g} s, "
                            "--scheduler-timeout): start one with dask worker ADDRESS") from None


@functools.cache
def code_identity() -> str:
    """This installation of ulnorm-eval: a SHA-256 of its modules' bytes, the version's included (run
    by every Dask worker too: an installation that differs in any line may compute other numbers)."""
    import hashlib
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return f"sha256 {digest.hexdigest()[:12]}"


def _require_same_code(client, address: str) -> str:
    """Refuse a cluster whose workers run another ulnorm-eval than the command (each worker's own code
    computes the values: another version printed other numbers with exit 0); the command's identity,
    which each task checks again on its worker (:func:`_guard`)."""
    try:
        theirs = client.run(code_identity).values()  # every worker connected now
    except Exception:  # noqa: BLE001 - an older ulnorm-eval has no code_identity to run: another version
        theirs = ["one without this check"]
    return _refuse_other_code(address, theirs)


def _refuse_other_code(address: str, identities) -> str:
    mine = code_identity()
    other = sorted(set(identities) - {mine})
    if other:
        raise ParallelError(f"the Dask workers at {address} run another ulnorm-eval ({', '.join(other)}) than this "
                            f"command ({mine}): their numbers could differ; start them from the same installation")
    return mine


AUTO = 0  # -j auto (also -j 0): the usable cores, capped by the tasks (:func:`resolve_jobs`)


def usable_cores() -> int:
    """The cores this process may run on: its CPU affinity where the platform tells it (a container's
    or ``taskset``'s limit, not the machine's core count), else ``os.cpu_count()``."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def resolve_jobs(jobs: int, tasks: int | None = None, auto_pays: bool = True) -> int:
    """The worker count of ``-j JOBS`` for ``tasks`` tasks (None: unknown), capped by the tasks: ``AUTO``
    (0) is the usable cores, or 1 (no pool) without fork or when ``auto_pays`` is False (a command whose
    workers cost more than they save)."""
    auto = jobs == AUTO
    if auto:
        jobs = usable_cores() if auto_pays else 1
    jobs = max(1, jobs if tasks is None else min(jobs, tasks))
    if auto and jobs > 1 and not _fork_available():  # asked only when workers would start (it imports multiprocessing)
        jobs = 1
    return jobs


def _fork_available() -> bool:
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods()


def executor(qrels, jobs: int = 1, scheduler: str | None = None, timeout: float = CONNECT_TIMEOUT,
             tasks: int | None = None, auto_pays: bool = True):
    """The executor for ``-j JOBS`` (:func:`resolve_jobs`) or ``--scheduler ADDRESS`` (``timeout``: seconds
    the scheduler has to answer), for ``tasks`` tasks if known; a context manager."""
    if scheduler:
        return DaskPool(qrels, scheduler, timeout=timeout)
    jobs = resolve_jobs(jobs, tasks, auto_pays)
    return Sequential(qrels) if jobs <= 1 else LocalPool(qrels, jobs)
