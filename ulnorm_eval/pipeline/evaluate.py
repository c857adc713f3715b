"""What an evaluation starts from and ends with: the qrels and runs read (:func:`load_qrels`,
:func:`load_run`), the metrics a request names (:func:`resolve_metrics`), the runs' shared holes
(:func:`with_runs_holes`) and :class:`Result`.  The evaluation itself is pipeline/orchestrator.py's."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace

import numpy as np

from ..core import registry
from ..core.holes import World, holes_reason, judge_next, yield_ceiling
from ..core.registry import Metric
from ..core.variants import HOLE_VARIANTS
from ..inputs.arrow import string_array, to_numpy
from ..inputs.letor import is_letor, read_letor, read_letor_scores
from ..inputs.trec import InputError, Qrels, Run, read_bytes, read_qrels, read_run
from .blocks import Options, RunResult, refuse_prior_variants
from .ordering import natural_order, qrels_queries, rank_run

__all__ = ["Options", "Result", "RunResult", "load_qrels", "load_run", "parse_run", "holes_note", "resolve_metrics",
           "with_runs_holes", "both_notes"]


@dataclass(kw_only=True)
class Result:
    """Everything an evaluation produced, in run order."""

    metrics: list
    runs: list
    options: Options
    qrels_path: str = ""
    run_paths: list = field(default_factory=list)
    setup_notes: list = field(default_factory=list)  # notes on the request (default variants)

    @property
    def notes(self) -> list:
        """Notes on the request (measures left without default variants), then every run's notes
        (stderr lines), in run order."""
        return list(self.setup_notes) + [note for run in self.runs for note in run.notes]

    @property
    def frame(self):
        """Wide DataFrame of the queries only (the 'all' rows are :meth:`summary`'s): index (run, query), a
        column per metric."""
        return self._frame(False)

    def _frame(self, all_rows: bool):
        """The per-query frame; ``all_rows``: each run's 'all' row (its means) after its queries."""
        import pandas as pd

        parts = []
        for run in self.runs:
            queries = list(run.qids) + (["all"] if all_rows else [])
            cols = {str(metric): np.append(run.values[metric], run.mean[metric]) if all_rows else np.asarray(run.values[metric])
                    for metric in self.metrics}
            index = pd.MultiIndex.from_arrays([[run.name] * len(queries), queries], names=["run", "query"])
            parts.append(pd.DataFrame(cols, index=index))
        return pd.concat(parts) if parts else pd.DataFrame()

    def wide(self, all_rows: bool = True):
        """Columns ``run, query`` and one per metric; ``all_rows`` keeps each run's ``all`` row (the mean)."""
        return self._frame(all_rows).reset_index()

    def tidy(self, all_rows: bool = True):
        """Columns ``run, query, measure, value`` (``all_rows``: with each run's ``all`` row, last)."""
        return self.wide(all_rows).melt(id_vars=["run", "query"], var_name="measure", value_name="value")

    @property
    def per_query(self) -> dict:
        """``{run: {metric: values}}``: per-query numpy arrays, in the order of :attr:`queries`."""
        return {run.name: {str(m): run.values[m] for m in self.metrics} for run in self.runs}

    @property
    def queries(self) -> dict:
        """``{run: [query ids]}``: the order of the per-query arrays (natural order)."""
        return {run.name: list(run.qids) for run in self.runs}

    @property
    def means(self) -> dict:
        """``{run: {metric: mean}}`` (the ``all`` row: each measure's summary rule)."""
        return {run.name: {str(m): run.mean[m] for m in self.metrics} for run in self.runs}

    def summary(self):
        """DataFrame of means: a row per run, a column per metric."""
        import pandas as pd

        return pd.DataFrame({str(metric): [run.mean[metric] for run in self.runs] for metric in self.metrics},
                            index=pd.Index([run.name for run in self.runs], name="run"))


# --------------------------------------------------------------------------- loading

def load_qrels(path: str, groups: str | None = None, trec_eval: bool = False) -> Qrels:
    """TREC qrels, LETOR rows (detected by their ``f:v`` columns) with an optional group file, or
    ``irds:DATASET_ID`` (ir_datasets, local data only); ``trec_eval``: TREC qrels read as trec_eval
    reads them (``read_qrels``)."""
    if isinstance(path, Qrels):
        return path
    if isinstance(path, str) and path.startswith("irds:"):
        _no_groups(groups, path)
        from ..inputs.irds import read_irds_qrels
        return read_irds_qrels(path)
    data = read_bytes(path)
    if is_letor(data):
        return read_letor(path, groups=groups, data=data)
    _no_groups(groups, path)
    return read_qrels(path, data=data, trec_eval=trec_eval)


def _no_groups(groups, path) -> None:
    """A group file given with qrels that are not LETOR rows would be ignored without a word."""
    if groups is not None:
        raise InputError(groups, None, f"a LETOR group file (--groups), but {path} holds TREC qrels, not LETOR "
                                       "rows: leave --groups out")


def load_run(path, qrels: Qrels | None = None, name: str | None = None) -> Run:
    """A TREC run; for LETOR qrels, a score file (one score a row, or RankLib ``qid idx score``).
    ``path`` is a local file or ``-`` (standard input); a URL is refused (inputs/text.py)."""
    if isinstance(path, Run):
        return path
    return parse_run(path, qrels, read_bytes(path), name)


def parse_run(path: str, qrels: Qrels | None, data: bytes, name: str | None = None) -> Run:
    """The run in ``data``, the bytes of ``path`` (decompressed): a LETOR score file for LETOR qrels."""
    if qrels is not None and qrels.letor:
        return read_letor_scores(path, qrels, name=name, data=data)
    return read_run(path, name=name, data=data)


def resolve_metrics(measures=None, variants=None, numeric_only: bool = False, warn=None,
                    default_variants=None, trec_version: str | int = 10) -> list:
    """Parse measure names and attach variants, in command-line order without duplicates: ``variants``
    (``['E', 'UL2']``) after each plain measure; ``UL2(AP)`` as given; ``numeric_only`` refuses text
    measures (relstring, runid).  ``variants=None``: the default variants (``default_variants``, else E and
    UL2), only for measures with exact bounds: a Monte Carlo E costs seconds to minutes per run, so it is
    computed only when named or listed; ``warn`` hears one line naming the measures left without them."""
    names = registry.expand_names(measures, trec_version) if measures else list(registry.DEFAULT_MEASURES)
    implicit = variants is None
    if implicit:
        variants = list(default_variants if default_variants is not None else registry.DEFAULT_VARIANTS)
    variants, out, no_default, geometric = list(variants), [], [], []
    for name in names:
        for metric in registry.parse_many(name):
            _refuse(metric, numeric_only)
            group = [metric] if metric.variant else [metric] + _kept(metric, variants, implicit, geometric, no_default)
            out += [item for item in dict.fromkeys(group) if item not in out]
    refuse_prior_variants(out)
    if no_default and warn is not None:
        warn(default_bounds_note(no_default, [variant for variant in variants if variant not in HOLE_VARIANTS]))
    if geometric and warn is not None:
        per = ", ".join(dict.fromkeys(_PER_QUERY.get(metric.family, metric.family) for metric in geometric))
        warn(f"no variants for {', '.join(map(str, dict.fromkeys(geometric)))}: the expected geometric mean of a random "
             f"ranking has no closed form; per query they are {per}: use theirs ('EM(GMAP)' says why)")
    return out


def _kept(metric: Metric, variants: list, implicit: bool, geometric: list, no_default: list) -> list:
    """The ``variants`` the plain measure ``metric`` takes: those whose needs it meets (:func:`_lacks`;
    ``geometric`` hears a geometric mean that lacks a closed form for them), and among the default
    variants (``implicit``) no Monte Carlo estimate nobody asked for (``no_default`` hears the measure)."""
    added = [registry.with_variant(metric, variant) for variant in variants]
    kept = [item for item in added if not _lacks(item)]
    if any(_lacks(item) == geometric_reason(metric.measure) for item in added):
        geometric.append(metric.measure)
    if implicit and metric.measure.bounds == "montecarlo" and not all(item.own_scale for item in kept):
        if metric.measure not in no_default:
            no_default.append(metric.measure)
        return [item for item in kept if registry.VARIANTS[item.variant].kind == "holes"]
    return kept


def _is_text(measure) -> bool:
    """A measure whose values are text (runid, relstring): printed, never averaged or normalised."""
    return measure.record is not None and measure.record.value == "text"


def _lacks(metric: Metric) -> str | None:
    """Why ``metric``'s measure lacks what its variant needs (as the variant record says: hole bounds,
    random-ranking bounds, an arithmetic mean, a number), or None."""
    rec, measure = registry.VARIANTS[metric.variant], metric.measure
    if rec.kind == "holes" and holes_reason(measure):
        return f"no hole bounds: {holes_reason(measure)}"
    if rec.random_ranking and measure.bounds == "none":
        return f"{measure.family} has no random-ranking bounds (a count, set-based or judged-fraction measure)"
    if rec.random_ranking and measure.summary == "gmean":
        return geometric_reason(measure)
    if _is_text(measure):
        return f"{measure} is text (trec_eval's {measure.trec_name()}), not a number a variant can take"
    return None


def _refuse(metric: Metric, numeric_only: bool) -> None:
    """UnknownMeasure when ``metric``'s measure lacks what its variant needs, or it is text and only
    numbers are wanted."""
    reason = _lacks(metric) if metric.variant else None
    if reason is None and numeric_only and _is_text(metric.measure):
        reason = f"a text measure (trec_eval's {metric.measure.trec_name()}); only eval prints it"
    if reason:
        raise registry.UnknownMeasure(f"{metric}: {reason}")


def holes_note(measures=None) -> str | None:
    """The one-line note of --holes: which measures get no LB/UB, and why."""
    plain = dict.fromkeys(metric.measure for name in (registry.expand_names(measures) if measures
                                                 else registry.DEFAULT_MEASURES)
                          for metric in registry.parse_many(name) if not metric.variant)
    # each family once (IPrec@0.0 .. IPrec@1.0 share their reason, which names the family), and the
    # families sharing a reason listed before it once
    by_reason: dict = {}
    for described in dict.fromkeys(described for described in (holes_reason(metric) for metric in plain) if described):
        name, _, reason = described.partition(": ")
        by_reason.setdefault(reason, []).append(name)
    why = [f"{', '.join(names)}: {reason}" for reason, names in by_reason.items()]
    return f"--holes: no hole bounds for {'; '.join(why)}" if why else None


_PER_QUERY = {"GMAP": "AP", "GMBpref": "Bpref"}  # a geometric-mean measure's values per query


def geometric_reason(measure) -> str:
    """Why a geometric-mean measure (GMAP, GMBpref) has no variants."""
    per = _PER_QUERY.get(measure.family, "the per-query measure")
    return (f"its 'all' row is a geometric mean over queries, and the expected geometric mean of a random "
            f"ranking's values is neither the geometric mean of their expectations nor the arithmetic mean a "
            f"variant's 'all' row would be (it depends on the whole distribution of each query's value; no "
            f"closed form); per query it is {per}: use the variants of {per}")


def default_bounds_note(measures: list, variants: list) -> str:
    """The stderr line for measures that got no default variants (their E is a Monte Carlo estimate)."""
    listed = ", ".join(family if count == 1 else f"{family} ({count})"
                       for family, count in Counter(metric.family for metric in measures).items())
    example = f"{variants[-1] if variants else 'UL2'}({measures[0]})"
    norm = ",".join(variant.lower() for variant in variants) or "e,ul2"
    return (f"no default variants for {len(measures)} measure{'s' if len(measures) != 1 else ''} whose E is a Monte "
            f"Carlo estimate ({listed}; seconds to minutes a run): name one, '{example}', or pass --norm {norm}")


# --------------------------------------------------------------------------- the runs' shared holes

def with_runs_holes(options: Options, qrels: Qrels, runs, metrics) -> Options:
    """``options`` with what the hole bounds read of every run (:func:`runs_documents`): over several runs
    or under -M, the closed world over the runs (per query, the distinct documents they retrieved that
    the qrels lack: docs/holes.md); open=est's ceilings; --holes-list's documents."""
    bounded = [metric.measure for metric in metrics if metric.variant in HOLE_VARIANTS]
    estimate, shared = World.parse(options.holes).estimate, len(runs) > 1 or options.depth is not None
    if qrels.letor or not bounded or not (estimate or options.holes_list or shared):
        return options
    qids, names, (query, doc, rank, judged, relevant), lengths = runs_documents(qrels, runs, options)
    changes = {}
    if estimate:
        caps = yield_ceiling(query, doc, rank, judged, relevant, lengths, len(qids))
        changes["holes_ceiling"] = tuple(zip(qids, caps.tolist()))
    if options.holes_list:
        cutoffs = [measure.cutoff for measure in dict.fromkeys(bounded)]
        listed = judge_next(query, doc, rank, judged, cutoffs, options.holes_list)
        changes["holes_listed"] = tuple((qids[q], names[d].as_py(), score, count, best)
                                        for q, d, score, count, best in listed)
    if shared:
        width = max(len(names), 1)
        counts = np.bincount(np.unique(query[~judged] * width + doc[~judged]) // width, minlength=len(qids))
        changes["holes_pool"] = tuple((qids[index], int(counts[index])) for index in np.flatnonzero(counts))
    return replace(options, **changes)


def runs_documents(qrels: Qrels, runs, options: Options) -> tuple:
    """Every run read and ranked (ties and precision as evaluated, without -M): the query set, the
    docids (Arrow strings; a document's code indexes them), one entry per (run, ranked document) (query index,
    document code, 1-based rank, judged, relevant at -l) and each run's ranking length per query."""
    import pyarrow as pa
    import pyarrow.compute as pc

    qids = natural_order(qrels_queries(qrels))
    parts, docids, lengths = [], [], []
    for source in runs:
        run = source.load(qrels) if hasattr(source, "load") else load_run(source, qrels)  # a plan's source, a Run, a path
        ranked = rank_run(run, qrels, qids, ties=options.ties, score_precision=options.score_precision)
        ranking = ranked.ranking
        judged = np.asarray(ranking.judged, bool)
        parts.append((ranking.row, ranking.pos + 1, judged, judged & (ranking.grade >= options.rel_level)))
        docids.append(pa.array(ranked.docid, pa.string()))
        lengths.append(ranking.length)
    if not parts:
        empty = np.zeros(0, np.int64)
        return qids, string_array([]), (empty, empty, empty, empty.astype(bool), empty.astype(bool)), []
    encoded = pc.dictionary_encode(pa.concat_arrays(docids))
    columns = [np.concatenate(column) for column in zip(*parts)]
    return qids, encoded.dictionary, (columns[0], to_numpy(encoded.indices), *columns[1:]), lengths


def both_notes(keep, warn):
    """A warn callback that keeps each note and passes it on to ``warn`` (if any)."""
    def hear(msg):
        keep(msg)
        if warn is not None:
            warn(msg)
    return hear
