"""Progress bars on stderr with the time left (rich, imported only when shown): the inputs' bytes, the
Monte Carlo bounds, the long steps of summ, compare and stability.  Shown on a terminal or with
``ULNORM_EVAL_PROGRESS=always`` (:func:`shown`); one display at a time, which later bars join."""
from __future__ import annotations

import contextlib
import os
import signal
import sys
import time

__all__ = ["progress", "step_bar", "work_bar", "shown", "base_name", "PROGRESS_MIN_BYTES",
           "MONTE_CARLO_DELAY", "PROGRESS_ENV"]

PROGRESS_ENV = "ULNORM_EVAL_PROGRESS"  # always: bars on stderr even when it is not a terminal; never: none


PROGRESS_MIN_BYTES = 4 << 20  # below a few MB reading is too quick for a bar to help
MONTE_CARLO_DELAY = 1.0  # seconds of Monte Carlo work before its bar appears


_MODES = {"always": True, "1": True, "yes": True, "on": True, "never": False, "0": False, "no": False, "off": False, "": None}


def progress_mode() -> bool | None:
    """ULNORM_EVAL_PROGRESS: True (always), False (never) or None (unset: bars on a terminal only);
    ValueError for anything else (a setting silently ignored would change what stderr gets)."""
    text = os.environ.get(PROGRESS_ENV, "")
    if text.strip().lower() not in _MODES:
        raise ValueError(f"{PROGRESS_ENV}={text!r}: expected always or never (1/yes/on, 0/no/off), or unset it for "
                         "bars on a terminal only")
    return _MODES[text.strip().lower()]


def forced() -> bool:
    """ULNORM_EVAL_PROGRESS=always: every bar is shown at once, whatever stderr is (a log, a test)."""
    return progress_mode() is True


def shown(wanted: bool = True) -> bool:
    """Whether progress bars go to stderr: ``wanted`` (no --no-progress), not ULNORM_EVAL_PROGRESS=never,
    and stderr a terminal or ULNORM_EVAL_PROGRESS=always."""
    if not wanted or progress_mode() is False:
        return False
    return forced() or sys.stderr.isatty()


_ACTIVE: list = []  # the display on screen: rich allows one live display at a time, later bars join it


def base_name(path: str) -> str:
    """A progress label's name of ``path``: its last component (the path itself when that is empty)."""
    return os.path.basename(path) or path


class _Bar:
    """One bar, called as ``bar(units=1, total=None, description=None)``: it counts the units done and
    appears (joining the display on screen) once it has a positive ``total`` (a number, or a function
    asked then) and work has run for ``delay`` seconds; never past its total."""

    def __init__(self, label: str, total=None, delay: float = 0.0):
        self.label, self.total, self.delay = label, total, delay
        self.done, self.start, self.shared, self.task = 0.0, None, None, None

    def __call__(self, units: float = 1.0, total=None, description=None) -> None:
        self.done += units
        if total is not None:
            self.total = total
        if self.shared is None:
            self.start = time.monotonic() if self.start is None else self.start
            if time.monotonic() - self.start < self.delay and not forced():
                return
            self.total = float((self.total() if callable(self.total) else self.total) or 0)
            if self.total <= 0:
                return
            self.shared = _Shared()
            self.task = self.shared.bar.add_task(self.label, total=self.total)
        # a new description is drawn at once: rich's own refresh (10 Hz) may come after a short step has ended
        described = {} if description is None else {"description": description, "refresh": True}
        self.shared.bar.update(self.task, total=float(self.total), completed=min(self.done, self.total), **described)

    def close(self) -> None:
        if self.shared is not None:
            self.shared.close(self.task)


@contextlib.contextmanager
def progress(paths, enabled: bool, monte_carlo: float = 0):
    """Progress bars on stderr (transient; rich is not imported when disabled); yields ``step(description,
    path)``, called before each file is read: the bytes bar, shown when the inputs total
    PROGRESS_MIN_BYTES, and a Monte Carlo bar with the time left, once ``monte_carlo`` units of work
    (a number, or a function asked when the bar appears) have run for MONTE_CARLO_DELAY seconds."""
    sizes = {p: (os.path.getsize(p) if p != "-" and os.path.isfile(p) else 0) for p in paths}
    show_bytes = sum(sizes.values()) >= PROGRESS_MIN_BYTES or (forced() and any(sizes.values()))
    if not enabled or (not show_bytes and not monte_carlo):
        yield lambda description, path=None: None
        return
    from ..core.permutations import monte_carlo_listener

    read = _Bar("", sum(sizes.values()) if show_bytes else 0)
    bars = (_Bar("Monte Carlo bounds (no closed-form E)", monte_carlo, MONTE_CARLO_DELAY), read)
    pending = [0.0]  # the bytes of the file being read: done when the next step starts

    def step(description: str, path=None) -> None:
        read(pending[0], description=description)
        pending[0] = sizes.get(path, 0)

    try:
        read(0)
        with monte_carlo_listener(bars[0]):
            yield step
    finally:
        for bar in bars:  # the Monte Carlo bar first: it may have joined the bytes bar's display
            bar.close()


def _rich_bar():
    """The one look of every bar: a transient rich display on stderr with the time left.  stdout is
    never redirected into it (rich would send what the command prints to stderr while a bar is up)."""
    from rich.console import Console
    from rich.progress import (BarColumn, Progress, SpinnerColumn, TaskProgressColumn, TextColumn,
                               TimeElapsedColumn, TimeRemainingColumn)

    return Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(),
                    TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                    console=Console(file=sys.stderr, force_terminal=True if forced() else None), transient=True,
                    redirect_stdout=False)


# Signals whose default action ends the process with no Python exception (SIGINT, SIGTERM and SIGHUP
# raise one, and every display's close runs: cli/guard.py): while a display hides the cursor, each
# first takes the display down (the cursor shown again), then ends the process as it would have.
FATAL_SIGNALS = ("SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGALRM", "SIGVTALRM", "SIGPROF", "SIGXCPU")


def _restore_then_end(signum, frame):
    for display in list(_ACTIVE):
        with contextlib.suppress(Exception):
            display.bar.stop()
        if display.bar.console.is_terminal:  # what stop() wrote may sit in the buffer of a print it interrupted
            with contextlib.suppress(Exception):
                os.write(display.bar.console.file.fileno(), b"\x1b[?25h")
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


class _Shared:
    """A display for the bars: the one on screen if there is one, else its own."""

    def __init__(self):
        self.own = not _ACTIVE
        self.bar = _rich_bar() if self.own else _ACTIVE[-1].bar
        self.handlers = {}
        if self.own:
            self.bar.start()
            _ACTIVE.append(self)
            for name in FATAL_SIGNALS:  # those left at their default (an ignored one stays ignored)
                with contextlib.suppress(AttributeError, ValueError, OSError):  # no such signal; not the main thread
                    if signal.getsignal(getattr(signal, name)) == signal.SIG_DFL:
                        self.handlers[name] = signal.signal(getattr(signal, name), _restore_then_end)

    def close(self, task=None):
        """Stop the display if it is this one's own, else take ``task`` off the one it joined."""
        if not self.own and task is not None:
            self.bar.remove_task(task)
        if self.own:
            self.bar.stop()
            _ACTIVE.remove(self)
            for name, handler in self.handlers.items():
                signal.signal(getattr(signal, name), handler)


@contextlib.contextmanager
def work_bar(enabled: bool, label: str, total: float | None = None):
    """One bar, with the time left, of a long step: yields ``advance(units=1, total=None)``; the
    total is given here or by the first ``advance(0, total=N)`` (a library that knows it only once it
    has started), and the bar appears then.  Disabled: ``advance`` does nothing and rich is not
    imported.  Inside another display (compare's bytes bar) the bar joins it, and leaves it on exit."""
    if not enabled:
        yield lambda units=1.0, total=None: None
        return
    bar = _Bar(label, total)
    try:
        bar(0)
        yield bar
    finally:
        bar.close()


@contextlib.contextmanager
def step_bar(label: str):
    """One transient rich bar, with the time left, for a long step whose work a library reports through
    tqdm: yields ``wrap(iterable)``, a stand-in for ``tqdm(iterable)`` that advances the bar (each
    iterable in turn: its length is the bar's total) and prints nothing."""
    shared, stage = _Shared(), [0]

    def wrap(iterable, *a, **kw):
        items = list(iterable)
        stage[0] += 1
        bar = _Bar(f"{label} ({stage[0]})", len(items))
        try:
            bar(0)
            for item in items:
                yield item
                bar()
        finally:
            bar.close()

    try:
        yield wrap
    finally:
        shared.close()
