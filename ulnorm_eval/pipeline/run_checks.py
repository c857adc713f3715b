"""The checks every command makes on its runs (docs/errors.md), for the commands that hand loaded
runs to an analysis (compare, queries, nrg); eval makes the same checks on its results.

* a run sharing no query with the qrels is refused (``--allow-disjoint`` evaluates it anyway):
  almost always the wrong qrels, and a CI job would stay green on zeros;
* repeated run names get ``#1``, ``#2``... by position (``a/run.txt b/run.txt``);
* a value that overflows (``nDCG(dcg='exp-log2')`` with grades >= 1024: 2^1024 is not a double)
  is refused with the measure, instead of printing ``inf``/``nan`` as a number.

Nothing is imported at module level: the commands import this module before reading any input.
"""
from __future__ import annotations

__all__ = ["iter_runs", "load_runs", "require_shared_queries", "refuse_non_finite_frame", "refuse_non_finite_means",
           "require_finite_gains"]


def require_shared_queries(qrels, run, path: str, qrels_path: str, allow: bool = False) -> None:
    """Refuse a loaded ``run`` none of whose queries is in ``qrels`` (unless ``allow``).

    The run's queries are read from its query encoding (kept on the run), which its ranking needs
    anyway: compare's reader thread makes it here, and the scorer finds it made (a separate hash of
    the query ids cost ~1.4 ms per 50,000-line run, 0.2 s of compare's CPU on 150 runs)."""
    from ..inputs.checks import disjoint_error
    from .ordering import natural_order, qrels_queries, run_queries

    if allow or getattr(qrels, "letor", False):
        return
    judged = set(qrels_queries(qrels))
    ranked = set(run_queries(run)[0].to_pylist()) if len(run.qid) else set()
    if not judged or ranked & judged:
        return
    raise disjoint_error(path, qrels_path, natural_order(ranked), judged)


def iter_runs(qrels, paths, qrels_path: str, allow_disjoint: bool = False):
    """Read ``paths`` (each whole) one after the other, refusing a disjoint run as it comes: for
    an analysis that evaluates each run as it arrives (compare), with no run held longer."""
    from ..inputs.text import open_input
    from . import evaluate as api

    for path in paths:  # a missing or unreadable file is named now, not after the runs before it
        if isinstance(path, str) and path != "-":
            open_input(path).close()
    for path in paths:
        run = api.load_run(path, qrels)
        require_shared_queries(qrels, run, path, qrels_path, allow_disjoint)
        yield run


def load_runs(qrels, paths, qrels_path: str, allow_disjoint: bool = False, rename: bool = True) -> list:
    """Read ``paths`` (whole), refuse a disjoint run, and (``rename``) make the names unique."""
    from ..inputs.checks import unique_names

    runs = list(iter_runs(qrels, paths, qrels_path, allow_disjoint))
    if rename:
        for run, name in zip(runs, unique_names([run.name for run in runs])):
            run.name = name
    return runs


def require_finite_gains(qrels, measures, qrels_path: str, rel_level: float = 1) -> None:
    """Refuse, before evaluating, a measure whose gain of the qrels' largest grade is not a finite
    double (``2^grade - 1`` under ``dcg='exp-log2'`` for grades >= 1024): its values and bounds
    would be ``inf``/``nan``.  ``measures``: names or Metric objects (None: the defaults)."""
    import numpy as np

    from . import evaluate as api

    grade = np.asarray(getattr(qrels, "grade", []), dtype=np.float64)
    if not grade.size:
        return
    top = float(grade.max())
    for metric in api.resolve_metrics(measures, []):
        rec = metric.measure.record
        if rec is None or rec.gain is None:
            continue
        rel = metric.measure.get("rel")
        gain = np.asarray(rec.gain(np.array([top]), metric.measure, rel_level if rel is None else rel, top), dtype=np.float64)
        if not np.all(np.isfinite(gain)):
            _overflow(qrels_path, f"{metric.measure}: the gain of grade {top:g}")


def refuse_non_finite_means(cmp, qrels_path: str) -> None:
    """compare: a mean that is infinite, or NaN for a plain measure, came from an overflow."""
    import math

    plain = {str(entry) for entry in cmp.metrics if not entry.variant}
    systems = cmp.tables["systems"]
    for run, metric, mean in zip(systems["run"], systems["metric"], systems["mean"]):
        if math.isinf(mean) or (math.isnan(mean) and metric in plain):
            _overflow(qrels_path, f"{metric} of {run}")


def refuse_non_finite_frame(frame, columns, qrels_path: str) -> None:
    """queries: E, IUB, WLB or a run's mean that is not finite came from an overflow."""
    import numpy as np

    for column in columns:
        if column not in frame.columns:
            continue
        bad = ~np.isfinite(frame[column].to_numpy(dtype=np.float64))
        if bad.any():
            index = int(np.argmax(bad))
            _overflow(qrels_path,
                      f"{column} of {frame['measure'].iloc[index]} for query {frame['query'].iloc[index]!r}")


def _overflow(qrels_path: str, what: str):
    from ..inputs.errors import InputError

    raise InputError(qrels_path or "<qrels>", None, f"{what} overflows (grades too large for its gain or bounds; "
                                                    "the limits are in docs/errors.md)")
