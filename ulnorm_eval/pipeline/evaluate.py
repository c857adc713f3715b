"""The public evaluation API: qrels + runs + measure names -> per-query and mean values.

>>> from ulnorm_eval import evaluate
>>> res = evaluate("qrels.txt", ["run1.gz", "run2.gz"], ["nDCG@10", "AP"], variants=["UL2"])
>>> res.frame          # one row per (run, query) plus the 'all' row, one column per metric
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..core import registry
from ..inputs.trec import Qrels, Run, read_bytes, read_qrels, read_run
from ..inputs.letor import is_letor, read_letor, read_letor_scores
from ..core.kernels import Judgements
from ..core.measures import compute
from ..core.summary import summarise
from .ordering import RankedRun, judgements, natural_order, rank_run
from ..core.registry import Metric

__all__ = ["Options", "Result", "evaluate", "load_qrels", "load_run", "resolve_metrics"]


@dataclass
class Options:
    """Every knob that changes a number; stored in the output's meta."""

    rel_level: float = 1
    depth: int | None = None
    ties: str = "score"
    score_precision: str = "float64"
    run_queries_only: bool = False
    pool: str = "qrels"
    expectation: str = "exact"
    undefined: str = "zero"
    permutations: int = 1000
    seed: int = 0


@dataclass
class RunResult:
    name: str
    qids: list
    values: dict  # Metric -> per-query np.ndarray (NaN = undefined and skipped)
    mean: dict  # Metric -> float
    stderr: dict = field(default_factory=dict)  # Metric -> per-query Monte Carlo standard error
    missing: int = 0  # query-set queries the run did not retrieve anything for
    ignored: int = 0  # run queries absent from the qrels
    undefined: dict = field(default_factory=dict)  # Metric -> count of undefined queries
    float32_ties: int = 0
    missing_qids: list = field(default_factory=list)  # the `missing` queries, in query order
    ignored_qids: list = field(default_factory=list)  # the `ignored` run queries, in natural order


@dataclass
class Result:
    """Everything an evaluation produced, in run order."""

    metrics: list
    runs: list
    options: Options
    qrels_path: str = ""
    run_paths: list = field(default_factory=list)

    @property
    def frame(self):
        """Wide DataFrame: index (run, query) with the ``all`` row last per run; a column per metric."""
        import pandas as pd

        parts = []
        for rr in self.runs:
            cols = {str(m): np.append(rr.values[m], rr.mean[m]) for m in self.metrics}
            idx = pd.MultiIndex.from_arrays([[rr.name] * (len(rr.qids) + 1), list(rr.qids) + ["all"]],
                                            names=["run", "query"])
            parts.append(pd.DataFrame(cols, index=idx))
        return pd.concat(parts) if parts else pd.DataFrame()

    def tidy(self):
        """Long DataFrame: columns run, query, measure, value."""
        f = self.frame
        out = f.reset_index().melt(id_vars=["run", "query"], var_name="measure", value_name="value")
        return out

    def summary(self):
        """DataFrame of means: a row per run, a column per metric."""
        import pandas as pd

        return pd.DataFrame({str(m): [rr.mean[m] for rr in self.runs] for m in self.metrics},
                            index=pd.Index([rr.name for rr in self.runs], name="run"))


# --------------------------------------------------------------------------- loading

def load_qrels(path: str, groups: str | None = None) -> Qrels:
    """TREC qrels, or LETOR rows (detected by their ``f:v`` columns) with an optional group file."""
    if isinstance(path, Qrels):
        return path
    data = read_bytes(path)
    if is_letor(data):
        return read_letor(path, groups=groups, data=data)
    return read_qrels(path, data=data)


def load_run(path, qrels: Qrels | None = None, name: str | None = None) -> Run:
    """A TREC run; for LETOR qrels, a score file (one score a row, or RankLib ``qid idx score``)."""
    if isinstance(path, Run):
        return path
    data = read_bytes(path)
    if qrels is not None and qrels.letor:
        return read_letor_scores(path, qrels, name=name, data=data)
    return read_run(path, name=name, data=data)


def resolve_metrics(measures=None, variants=None) -> list:
    """Parse measure names and attach variants, in command-line order without duplicates.

    ``variants`` (e.g. ``['E', 'UL2']``) are added after each plain measure; a name that already
    carries a variant (``UL2(AP)``) is kept as given.
    """
    names = list(measures) if measures else list(registry.DEFAULT_MEASURES)
    variants = list(registry.DEFAULT_VARIANTS) if variants is None else list(variants)
    out: list[Metric] = []
    for name in names:
        for m in registry.parse_many(name):
            group = [m] if m.variant else [m] + [registry.with_variant(m, v) for v in variants]
            for x in group:
                if x not in out:
                    out.append(x)
    _refuse_prior_variants(out)
    return out


def _refuse_prior_variants(metrics) -> None:
    """NRG/UC score a run against other runs (nrg.py), which a one-run evaluation cannot supply."""
    prior = [m for m in metrics if m.variant in registry.PRIOR_VARIANTS]
    if prior:
        raise registry.UnknownMeasure(f"{prior[0]} needs prior runs: use 'ulnorm-eval nrg QRELS RUN --prior RUN'")


# --------------------------------------------------------------------------- evaluation

def evaluate(qrels, runs, measures=None, variants=None, options: Options | None = None,
             warn=None, progress=None, **kw) -> Result:
    """Evaluate runs against qrels.

    ``qrels``: a path or :class:`Qrels`; ``runs``: paths or :class:`Run` objects (or one of either);
    ``measures``: names (default nDCG@10, AP, RBP(p=0.8)); ``variants``: names added to every measure
    (default E, IUB, UL1, UL2; ``[]`` for plain values only).  Keyword arguments set
    :class:`Options` fields.  ``warn(msg)`` receives one-line notes (missing queries, ...).
    """
    options = options or Options(**kw)
    warn = warn or (lambda msg: None)
    metrics = resolve_metrics(measures, variants)
    if isinstance(runs, (str, Run)) or hasattr(runs, "__fspath__"):
        runs = [runs]
    qrels = load_qrels(qrels)
    results = []
    for r in runs:
        r = r if isinstance(r, Run) else str(r)
        results.append(evaluate_path(qrels, r, metrics, options, warn))
    return Result(metrics, results, options, qrels.path, [getattr(r, "path", str(r)) for r in runs])


def query_set(qrels: Qrels, run: Run, options: Options) -> list:
    import pyarrow.compute as pc

    from .ordering import qrels_queries

    qids = qrels_queries(qrels)
    if options.run_queries_only:
        have = set(pc.unique(run.qid).to_pylist())
        qids = [q for q in qids if q in have]
    return natural_order(qids)


def evaluate_run(qrels: Qrels, run: Run, metrics: list, options: Options, warn) -> RunResult:
    """Per-query values of every metric for one run."""
    qids = query_set(qrels, run, options)
    J = judgements(qrels, qids)
    rr = rank_run(run, qrels, qids, ties=options.ties, score_precision=options.score_precision,
                  depth=options.depth)
    missing = int((~rr.present).sum())
    input_notes(warn, run.name, run.path, nq=len(qids), missing=missing, ignored=rr.ignored_queries,
                float32_ties=rr.float32_ties, skipped=run.skipped, extra=run.meta.get("extra_fields", 0))

    values, stderr, undefined = metric_values(rr, J, metrics, qrels, options)
    byte_order = np.argsort(np.asarray(qids, dtype=object), kind="stable")  # str order = UTF-8 byte order
    mean = {m: summarise(values[m], byte_order, m.summary) for m in metrics}
    undefined_notes(warn, run.name, undefined, options)
    missing_qids = [q for q, p in zip(qids, rr.present) if not p]
    ignored_qids = []
    if rr.ignored_queries:
        import pyarrow.compute as pc
        ignored_qids = natural_order(set(pc.unique(run.qid).to_pylist()) - set(qids))
    return RunResult(run.name, qids, values, mean, stderr, missing, rr.ignored_queries, undefined,
                     rr.float32_ties, missing_qids, ignored_qids)


def evaluate_path(qrels: Qrels, path, metrics: list, options: Options, warn, stream: bool | None = None) -> RunResult:
    """Read and evaluate one run file.

    ``stream=True`` evaluates it block by block in bounded memory and refuses a run whose queries are
    not contiguous; ``False`` reads it whole; ``None`` (default) streams a regular file and falls
    back to reading it whole when its queries turn out not to be contiguous.  The numbers are the
    same either way, Monte Carlo estimates included (their draws are keyed by query id).
    """
    import os

    from .stream import NotGrouped, evaluate_stream

    if isinstance(path, Run) or qrels.letor:
        return evaluate_run(qrels, load_run(path, qrels), metrics, options, warn)
    if stream or (stream is None and path != "-" and os.path.isfile(path)):
        held = []
        try:
            result = evaluate_stream(qrels, path, metrics, options, held.append)
        except NotGrouped:
            if stream:
                raise
        else:
            for w in held:
                warn(w)
            return result
    return evaluate_run(qrels, load_run(path, qrels), metrics, options, warn)


def input_notes(warn, name: str, path: str, *, nq: int, missing: int = 0, ignored: int = 0,
                float32_ties: int = 0, skipped: int = 0, extra: int = 0) -> None:
    """The one-line stderr notes about a run's input: nothing is dropped without a count."""
    if missing:
        warn(f"{name}: {missing} of {nq} qrels queries have no ranked documents and score 0"
             " (--run-queries-only leaves them out)")
    if ignored:
        warn(f"{name}: {ignored} run queries are not in the qrels and were ignored")
    if float32_ties:
        warn(f"{name}: {float32_ties} adjacent documents tie only after rounding scores to float32")
    if skipped:
        warn(f"{path}: skipped {skipped} comment or blank lines")
    if extra:
        warn(f"{path}: ignored the fields after the 6th on {extra} lines (as trec_eval does)")


def _and(words: list) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def undefined_notes(warn, name: str, undefined: dict, options: Options) -> None:
    """One stderr line per run: which variants were undefined for how many queries, by measure."""
    by_measure: dict = {}
    for m, n in undefined.items():
        if n:
            by_measure.setdefault(str(m.measure), {}).setdefault(n, []).append(m.variant)
    if not by_measure:
        return
    parts = [f"{_and(vs)} of {meas} for {n} queries"
             for meas, counts in by_measure.items() for n, vs in counts.items()]
    how = "scored 0" if options.undefined == "zero" else "left out of the mean"
    warn(f"{name}: undefined ({how}; --undefined): {'; '.join(parts)}")


def metric_values(rr: RankedRun, J: Judgements, metrics: list, qrels: Qrels, options: Options):
    """Per-query values of every metric for a ranked run: (values, standard errors, undefined counts)."""
    _refuse_prior_variants(metrics)
    values, stderr, undefined = {}, {}, {}
    plain = {}
    for m in metrics:
        if m.measure not in plain:
            plain[m.measure] = plain_values(rr, J, m.measure, qrels, options)
    if any(m.variant for m in metrics):
        from ..core.expectations import variant_values
        vv, se, und = variant_values(rr, J, [m for m in metrics if m.variant], plain, options)
        values.update(vv)
        stderr.update(se)
        undefined.update(und)
    for m in metrics:
        if not m.variant:
            values[m] = plain[m.measure]
    return values, stderr, undefined


def plain_values(rr: RankedRun, J: Judgements, m, qrels: Qrels, options: Options) -> np.ndarray:
    if m.native:
        return compute(rr.ranking, J, m, options.rel_level)
    from ..core.irm_adapter import foreign_values
    return foreign_values(rr, J, m, qrels, options)
