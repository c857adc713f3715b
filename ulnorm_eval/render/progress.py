"""A progress bar on stderr over the input files' bytes (rich, imported only when shown)."""
from __future__ import annotations

import contextlib
import os
import sys

__all__ = ["progress", "PROGRESS_MIN_BYTES"]


PROGRESS_MIN_BYTES = 4 << 20  # below a few MB reading is too quick for a bar to help


@contextlib.contextmanager
def progress(paths, enabled: bool):
    """A rich progress bar on stderr over the input files' bytes; yields ``step(description, path)``.

    ``step`` is called before each file is read (and evaluated) and advances the bar past the previous
    one; the bar is transient, so nothing is left on the terminal.  When disabled, or when the inputs
    total less than PROGRESS_MIN_BYTES, ``step`` does nothing and rich is not imported.
    """
    sizes = {p: (os.path.getsize(p) if p != "-" and os.path.isfile(p) else 0) for p in paths}
    if not enabled or sum(sizes.values()) < PROGRESS_MIN_BYTES:
        yield lambda description, path=None: None
        return
    from rich.console import Console
    from rich.progress import (BarColumn, DownloadColumn, Progress, SpinnerColumn, TextColumn,
                               TimeElapsedColumn)

    bar = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), DownloadColumn(),
                   TimeElapsedColumn(), console=Console(file=sys.stderr), transient=True)
    task = bar.add_task("", total=sum(sizes.values()))
    pending = [0]

    def step(description: str, path=None):
        bar.advance(task, pending[0])
        pending[0] = sizes.get(path, 0)
        bar.update(task, description=description)

    with bar:
        yield step
