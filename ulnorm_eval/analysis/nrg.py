"""Normalized Residual Gain (SIGIR-AP 2024): a measure re-scored on the gain that prior runs left over.

A measure of the browsing-model form S(R) = (1/N) sum_{i<=K} G(d_i) seen(i) (eq. 1) is re-scored
against a prior set of runs R_1..R_M with each document's residual gain (eq. 3)
G(d | prior) = G(d) prod_j (1 - seen(pos(d, R_j))) (pos = infinity beyond R_j's top K): NRG (eq. 4)
= (1/N) sum_{i<=K} G(d_i | prior) seen(i), N the ideal of the judged documents by *residual* gain
when the measure has one; an empty prior set gives the plain measure to the last bit.  UC(P@K) is
App. B's count of relevant documents in no prior run's top K.  Each family's G, seen and N (RR's
seen(i) = V(i) of App. A, from residual gains in the scored run), the measures refused (AP, SP, R,
Rprec) and the decisions where the paper is silent: docs/nrg.md.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..core import registry
from ..inputs.arrow import numeric_array, scalar, string_array, to_numpy
from ..pipeline.blocks import plain_values
from ..pipeline.evaluate import Result
from ..core.measures.common import safe
from ..core.summary import summarise
from ..core.records import SEEN_UNTIL_GAIN
from ..core.registry import FAMILIES, Metric, UnknownMeasure
from .eval_request import RequestBase

__all__ = ["BrowsingModel", "browsing_model", "seen_until_gain", "KeySpace", "key_space", "survival", "residual_factor",
           "residual_score", "prior_sets", "champions", "group_of", "resolve_nrg_metrics", "evaluate_nrg", "NRGResult",
           "NRGError", "NRGInputs", "PROTOCOLS"]

PROTOCOLS = ("fixed", "leave-one-out", "chronological", "group")


# --------------------------------------------------------------------------- browsing models

@dataclass(frozen=True, kw_only=True)
class BrowsingModel:
    """One instantiation of Normalized Residual Gain (SIGIR-AP 2024) eq. 1: G(d), seen(i) (0 beyond K; flat
    arrays, pos 0-based) and ``scale(raw)`` = raw / N for a constant N, as the plain kernel writes it (None:
    N = the ideal ranking of the judged documents by residual gain)."""

    gain: Callable[[np.ndarray], np.ndarray]
    seen: Callable[[np.ndarray], np.ndarray]
    depth: int | None  # K; None = every rank
    scale: Callable[[np.ndarray], np.ndarray] | None
    until_gain: bool = False  # seen(i) = V(i) = prod_{j<i} (1 - G(d_j)) of the ranking, N = sum V (RR)


def browsing_model(metric: Metric, rel_level: float, max_grade: float) -> BrowsingModel:
    """The eq. 1 instantiation of ``metric``'s measure (NRG(M) or UC(P@K)), from its family record's
    ``browsing``; UnknownMeasure otherwise."""
    m = metric.measure
    fam, k = m.record, m.cutoff
    if metric.variant == "UC":
        if fam is None or not fam.unique:
            raise UnknownMeasure(f"{metric}: UC counts relevant documents in the top K that no prior run has in "
                                 "its top K; write it UC(P@K), K = the pool depth (Normalized Residual Gain "
                                 "(SIGIR-AP 2024) App. B)")
    elif fam is None or fam.browsing is None:
        why = (fam.browsing_note if fam is not None and fam.browsing_note
               else "it has no fixed seen(i) of Normalized Residual Gain (SIGIR-AP 2024) eq. 1")
        raise UnknownMeasure(f"{metric}: NRG is defined for measures of the browsing-model form of Normalized "
                             f"Residual Gain (SIGIR-AP 2024) eq. 1 ({', '.join(supported())}); {m} is not one: {why}")
    rel = rel_level if m.get("rel") is None else m.get("rel")
    seen, scale = fam.browsing(m)
    until_gain = isinstance(seen, str) and seen == SEEN_UNTIL_GAIN
    if until_gain:  # seen(pos) is then only the cutoff; V(i) comes from the ranking's gains
        seen = lambda pos: np.ones(len(pos))  # noqa: E731

    def cut(pos):
        return 1.0 if k is None else pos < k

    def gain(grade):
        return FAMILIES[m.family].gain(grade, m, rel, max_grade)

    # UC(P@K): binary gain, seen = 1 within K, N = 1: the unique-contribution count
    return BrowsingModel(gain=gain, seen=lambda pos: seen(pos) * cut(pos), depth=k,
                         scale=(lambda raw: raw) if metric.variant == "UC" else scale, until_gain=until_gain)


def seen_until_gain(row, pos, g, within) -> np.ndarray:
    """V(i) = prod_{j<i} (1 - g_j) over the earlier ranks of the same query, for the ranks ``within``
    K (0 beyond): the survival of a searcher who stops at the first item with gain (C/W/L's RR).
    Exact for gains in {0, 1}: a factor 0 is counted, not logged."""
    order = np.lexsort((pos, row))
    r = row[order]
    keep = 1.0 - np.where(within[order], g[order], 0.0)
    zero = (keep <= 0).astype(np.int64)
    logk = np.log(np.where(keep <= 0, 1.0, keep))
    start = np.flatnonzero(np.r_[True, r[1:] != r[:-1]]) if len(r) else np.zeros(0, np.int64)
    first = np.repeat(start, np.diff(np.r_[start, len(r)]))
    cz, cl = np.cumsum(zero) - zero, np.cumsum(logk) - logk  # exclusive running sums
    cz, cl = cz - cz[first], cl - cl[first]
    v = np.where(cz == 0, np.exp(cl), 0.0) * within[order]
    out = np.empty(len(v))
    out[order] = v
    return out


def supported() -> list:
    """The families with a browsing model (NRG applies to them)."""
    return [f.name for f in FAMILIES.values() if f.browsing is not None]


# --------------------------------------------------------------------------- one key space

@dataclass(kw_only=True)
class KeySpace:
    """The judged documents (``judged_*``: the qrels of the query set) and the ranked documents of every run
    (``run_*[j]``: row = query index, pos = 0-based rank, grade as joined by ``ordering.rank_run``, to the
    deepest K any measure asked for) as integer ids of (query, docid)."""

    nkeys: int
    nq: int
    judged_row: np.ndarray
    judged_grade: np.ndarray
    judged_key: np.ndarray
    run_row: list
    run_pos: list
    run_grade: list
    run_key: list


def key_space(qrels, qids: list, ranked: list, depth: int | None) -> KeySpace:
    """Map judged and ranked (query, docid) pairs to one integer id each (one dictionary encoding)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    # string_array, scalar and to_numpy, not pa.array, a Python str converted by pyarrow.compute, nor
    # Array.to_numpy: each imports pandas (inputs/arrow.py)
    sep = scalar("\x1f", pa.string())
    qset = string_array(qids)
    qi = pc.index_in(qrels.qid, value_set=qset)
    keep = to_numpy(pc.is_valid(qi))
    jrow = to_numpy(pc.filter(qi, numeric_array(keep))).astype(np.int64)
    parts = [pc.binary_join_element_wise(pc.filter(qrels.qid, numeric_array(keep)),
                                         pc.filter(qrels.docid, numeric_array(keep)), sep)]
    rows, poss, grades = [], [], []
    for rr in ranked:
        rk = rr.ranking
        sel = np.ones(len(rk.row), bool) if depth is None else rk.pos < depth
        rows.append(rk.row[sel])
        poss.append(rk.pos[sel])
        grades.append(rk.grade[sel])
        docid = rr.docid if sel.all() else rr.docid.filter(numeric_array(sel))
        parts.append(pc.binary_join_element_wise(qset.take(numeric_array(rows[-1])), docid, sep))
    enc = pc.dictionary_encode(pa.concat_arrays([p.cast(pa.string()) for p in parts]))
    ids = to_numpy(enc.indices).astype(np.int64)
    bounds = np.cumsum([0] + [len(p) for p in parts])
    keys = [ids[bounds[i]:bounds[i + 1]] for i in range(len(parts))]
    return KeySpace(nkeys=len(enc.dictionary), nq=len(qids), judged_row=jrow, judged_grade=qrels.grade[keep],
                    judged_key=keys[0], run_row=rows, run_pos=poss, run_grade=grades, run_key=keys[1:])


# --------------------------------------------------------------------------- eq. 3 and eq. 4

def survival(space: KeySpace, model: BrowsingModel) -> list:
    """Per run j: (keys, 1 - seen(pos)) of its documents within K, once per measure for every prior set;
    sorted by key, so that :func:`residual_factor`'s scatter walks memory forwards."""
    out = []
    for key, pos, row, grade in zip(space.run_key, space.run_pos, space.run_row, space.run_grade):
        order = np.argsort(key, kind="stable")
        seen = model.seen(pos)
        if model.until_gain:  # a prior ranking scanned on its own: V_j from its own gains
            seen = seen_until_gain(row, pos, model.gain(grade), seen > 0)
        out.append((key[order], 1.0 - seen[order]))
    return out


def residual_factor(nkeys: int, surv: list, priors) -> np.ndarray:
    """prod_j (1 - seen(pos(d, R_j))) for every key d (Normalized Residual Gain (SIGIR-AP 2024) eq. 3); 1 for
    an empty prior set.  A run ranks a document once per query (read so), so a fancy-index product is exact."""
    f = np.ones(nkeys)
    for j in priors:
        key, keep = surv[j]
        f[key] *= keep
    return f


def residual_score(space: KeySpace, model: BrowsingModel, target: int, factor: np.ndarray) -> np.ndarray:
    """Per-query NRG of run ``target`` given the residual factors (Normalized Residual Gain (SIGIR-AP 2024)
    eq. 4), in the kernels' operations: a factor of 1 gives the plain measure bit for bit."""
    row, pos = space.run_row[target], space.run_pos[target]
    g = model.gain(space.run_grade[target]) * factor[space.run_key[target]]
    if model.until_gain:  # V from the residual gains; N = V+ (RR: 1/f, as the kernel writes it)
        v = seen_until_gain(row, pos, g, model.seen(pos) > 0)
        raw = np.bincount(row, weights=g * v, minlength=space.nq)[: space.nq]
        return safe(raw, np.bincount(row, weights=v, minlength=space.nq)[: space.nq])
    raw = np.bincount(row, weights=g * model.seen(pos), minlength=space.nq)[: space.nq]
    if model.scale is None:
        return safe(raw, ideal_residual(space, model, factor))
    return model.scale(raw)


def ideal_residual(space: KeySpace, model: BrowsingModel, factor: np.ndarray) -> np.ndarray:
    """N: the raw score of the query's judged documents sorted by residual gain, depth K (Normalized Residual Gain (SIGIR-AP 2024) §2)."""
    g = model.gain(space.judged_grade) * factor[space.judged_key]
    order = np.lexsort((-g, space.judged_row))
    row = space.judged_row[order]
    starts = np.searchsorted(row, np.arange(space.nq + 1))
    pos = np.arange(len(row)) - starts[row]
    return np.bincount(row, weights=g[order] * model.seen(pos), minlength=space.nq)[: space.nq]


# --------------------------------------------------------------------------- prior sets

class NRGError(ValueError):
    """A prior-set request that cannot be met (bad --group-by, clashing run names)."""


# the command line's words, for the library too (api.nrg)
NO_PRIOR = ("no prior run: NRG would equal the measure.  Give --prior RUN (repeatable), or "
            "--leave-one-out, --chronological or --group-by REGEX to take them from the RUNs")


def drop_repeated_priors(priors: list, note) -> list:
    """``priors`` ((RunResult with its ranking, path) pairs) without a run ranking as an earlier one
    (each query's documents in the same order, under any name: the residual gain reads nothing else of
    a prior run): a prior given twice would discount its documents twice (NRG 0.1730, 0.1244, 0.0941
    with 1, 2 and 3 copies of one prior); ``note`` says which were dropped."""
    def same(a, b):
        return (np.array_equal(a.ranking.row, b.ranking.row) and np.array_equal(a.present, b.present)
                and a.docid.equals(b.docid))

    kept = []
    for run, path in priors:
        twin = next((k for k in kept if same(k[0].ranked, run.ranked)), None)
        if twin is None:
            kept.append((run, path))
        else:
            note(f"prior {run.name} ({path}) is the same run as {twin[0].name} ({twin[1]}): counted once")
    return kept


def champions(groups: list, best: list) -> dict:
    """Group -> index of its best run (largest ``best``; the first listed on a tie)."""
    out = {}
    for j, g in enumerate(groups):
        if g not in out or best[j] > best[out[g]]:
            out[g] = j
    return out


def group_of(names: list, pattern: str) -> list:
    """The group of each run name: ``re.search(pattern)``'s first capture group, or the whole match."""
    try:
        rx = re.compile(pattern)
    except re.error as exc:
        raise NRGError(f"--group-by {pattern!r}: {exc}") from None
    out = []
    for n in names:
        m = rx.search(n)
        if m is None:
            raise NRGError(f"run {n!r} does not match --group-by {pattern!r}")
        out.append((m.group(1) if rx.groups else m.group(0)) or "")
    return out


def prior_sets(n: int, protocol: str, fixed=(), groups=None, best=None) -> list:
    """The prior set of each of ``n`` scored runs, as lists of run indices.

    'fixed': only ``fixed`` (indices of the --prior runs, which are added to every protocol);
    'leave-one-out': every other run (Normalized Residual Gain (SIGIR-AP 2024) Fig. 1b); 'chronological': the runs listed before
    (Fig. 1a); 'group': the best run (largest ``best`` value; the first listed on a tie) of every
    group other than the run's own (§4).  A run is never in its own prior set.
    """
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {', '.join(PROTOCOLS)}")
    champ = champions(groups, best) if protocol == "group" else {}
    own = {"fixed": lambda i: (), "leave-one-out": lambda i: (j for j in range(n) if j != i),
           "chronological": range, "group": lambda i: (c for g, c in champ.items() if g != groups[i])}[protocol]
    return [sorted(set(own(i)) | set(fixed)) for i in range(n)]


# --------------------------------------------------------------------------- metrics

def resolve_nrg_metrics(measures=None, unique: bool = False) -> list:
    """Output columns: each plain measure followed by NRG(measure), or UC(measure) with ``unique``.

    A name that already carries NRG or UC (``NRG(RBP(p=0.9))``, ``UC(P@10)``) is kept and its plain
    measure put before it.  Default: nDCG@10 (P@10 with ``unique``).
    """
    names = list(measures) if measures else (["P@10"] if unique else ["nDCG@10"])
    out: list[Metric] = []
    for name in names:
        for m in registry.parse_many(name):
            if m.variant and m.variant not in registry.PRIOR_VARIANTS:
                raise UnknownMeasure(f"{m}: the nrg command computes {' and '.join(registry.PRIOR_VARIANTS)}; "
                                     f"{m.variant} belongs to 'ulnorm-eval eval'")
            wrapped = m if m.variant else Metric(m.measure, "UC" if unique else "NRG")
            browsing_model(wrapped, 1, 1.0)  # refuse unsupported measures before reading any file
            for x in (Metric(m.measure), wrapped):
                if x not in out:
                    out.append(x)
    return out


# --------------------------------------------------------------------------- evaluation

@dataclass(kw_only=True)
class NRGResult(Result):
    """An :class:`api.Result` (same ``frame``/``tidy()``/``summary()`` and output formats) plus the prior sets."""

    priors: dict = field(default_factory=dict)  # run name -> names of its prior runs
    protocol: str = "fixed"
    group_notes: list = field(default_factory=list)  # which run is each group's best

    @property
    def notes(self) -> list:
        """The runs' input notes, then the group notes, in the order they arose."""
        return [n for rr in self.runs for n in rr.notes] + list(self.group_notes)


@dataclass(frozen=True, kw_only=True)
class NRGSettings:
    """How :func:`evaluate_nrg` builds each scored run's prior set: ``protocol`` 'fixed' (every run
    against the priors), 'leave-one-out', 'chronological' or 'group' (needs ``group_by``, a regular
    expression over run names; the best run of a group is chosen by ``best_by``, default the first
    measure); ``unique``: UC, the unique relevant contributions, instead of NRG."""

    protocol: str = "fixed"
    group_by: str | None = None
    best_by: str | None = None
    unique: bool = False

    def __post_init__(self):
        if self.protocol not in PROTOCOLS:
            raise ValueError(f"protocol must be one of {', '.join(PROTOCOLS)}")
        if (self.protocol == "group") != (self.group_by is not None):
            raise NRGError("group_by is given exactly with protocol='group'")


@dataclass(frozen=True, kw_only=True)
class NRGInputs:
    """How :func:`evaluate_nrg` takes its runs: ``rename``, repeated run names get ``#1``, ``#2`` by
    position across runs and priors (as every command names them); ``refuse_disjoint``, a run sharing
    no query with the qrels is refused."""

    rename: bool = False
    refuse_disjoint: bool = False


@dataclass(kw_only=True)
class _Ranked:
    """The runs of one :func:`evaluate_nrg` call, evaluated with their rankings kept (orchestrator.py),
    the ``scored`` runs first, then the prior-only runs; their rankings put on the qrels' query set ``qids``."""

    qrels: object
    qids: list
    judged: object  # ordering.judgements of the qrels over qids
    results: list  # each run's RunResult, its values over its queries
    ranked: list  # each run's ranking over qids (_on_queries)
    paths: list
    scored: int
    keep: list  # per run, the queries of qids it is evaluated on (all, or --run-queries-only its own)

    @property
    def names(self) -> list:
        return [r.name for r in self.results]


def evaluate_nrg(qrels, runs, priors=(), measures=None, *, options=None, warn=None, executor=None,
                 **kw) -> NRGResult:
    """Score ``runs`` with each plain measure and its NRG (or UC) against prior sets of runs.

    ``qrels``, ``runs`` and ``priors`` (joining every prior set, not scored) are paths or loaded objects;
    keywords set :class:`NRGSettings`, :class:`NRGInputs` and ``Options`` fields (unless ``options``);
    ``executor``: a parallel.py executor holding the same qrels (same values)."""
    from ..core.keywords import split_keywords
    from ..pipeline.evaluate import Options, both_notes, load_qrels
    from ..pipeline.orchestrator import tell

    settings, given, inputs = split_keywords(kw, NRGSettings, Options, NRGInputs, where="evaluate_nrg")
    options = options or given
    group_notes: list = []
    note = both_notes(group_notes.append, warn)  # collected on the result; warn hears each as it arises
    metrics = resolve_nrg_metrics(measures, settings.unique)
    if isinstance(runs, str) or not hasattr(runs, "__iter__"):
        runs = [runs]
    plain_ms = list(dict.fromkeys(m.measure for m in metrics))
    s = _read_and_rank(load_qrels(qrels), (runs, priors, inputs), (plain_ms, options), executor, note)
    for result in s.results[:s.scored]:
        tell(result, warn)
    plain = [{m: r.values[Metric(m)] for m in plain_ms} for r in s.results[:s.scored]]
    groups = best = None
    if settings.protocol == "group":
        groups, best = _group_best(s, settings, (plain, plain_ms), options, note)
    sets = prior_sets(s.scored, settings.protocol, range(s.scored, len(s.results)), groups, best)
    values = _nrg_values(s, metrics, plain, sets, options)
    results = [_run_result(s, i, values[i]) for i in range(s.scored)]
    names = s.names
    return NRGResult(metrics=metrics, runs=results, options=options, qrels_path=s.qrels.path,
                     run_paths=s.paths[:s.scored], priors={names[i]: [names[j] for j in p] for i, p in enumerate(sets)},
                     protocol=settings.protocol, group_notes=group_notes)


def _read_and_rank(qrels, given, asked, executor, dropped) -> _Ranked:
    """Evaluate the scored and prior runs of ``given`` = (runs, priors, NRGInputs) on the plain measures
    of ``asked`` = (measures, options), their rankings kept; drop repeated prior runs (told to
    ``dropped``) and refuse two runs of one name."""
    from ..inputs.checks import rename_runs
    from ..pipeline.orchestrator import evaluate_runs
    from ..pipeline.ordering import judgements, natural_order, qrels_queries

    runs, priors, inputs = list(given[0]), list(given[1]), given[2]
    (plain_ms, options), qids = asked, natural_order(qrels_queries(qrels))
    done = evaluate_runs(qrels, runs + priors, [Metric(m) for m in plain_ms], options, executor, ranked=True,
                         refuse_disjoint=inputs.refuse_disjoint)
    results = list(done)
    if inputs.rename:
        rename_runs(results)
    every = [(result, source.path) for result, source in zip(results, done.sources)]
    every = every[:len(runs)] + drop_repeated_priors(every[len(runs):], dropped)
    names = [r.name for r, _ in every]
    for i, nm in enumerate(names):
        if nm in names[:i]:
            raise NRGError(f"two runs are named {nm!r} ({every[names.index(nm)][1]}, {every[i][1]}): "
                           "prior sets need distinct names")
    ranked, keep = zip(*(_on_queries(result, qids) for result, _ in every))
    return _Ranked(qrels=qrels, qids=qids, judged=judgements(qrels, qids), results=[result for result, _ in every],
                   ranked=list(ranked), paths=[path for _, path in every], scored=len(runs), keep=list(keep))


def _on_queries(result, qids: list) -> tuple:
    """(ranking, mask): ``result``'s ranking on the query set ``qids`` (its own queries are among them, in
    the same order: ``--run-queries-only`` evaluates a run on its own), empty for the others, and the
    mask of its own queries among ``qids``."""
    import dataclasses

    from ..core.kernels import Ranking

    keep = np.isin(np.asarray(qids, dtype=object), np.asarray(result.qids, dtype=object))
    rr, rk, at = result.ranked, result.ranked.ranking, np.flatnonzero(keep)
    if keep.all():
        return rr, keep
    present = np.zeros(len(qids), bool)
    present[at] = rr.present
    ranking = Ranking(at[rk.row], rk.grade, len(qids), np.arange(len(qids)), rk.judged)
    return dataclasses.replace(rr, ranking=ranking, present=present), keep


def _group_best(s: _Ranked, settings: NRGSettings, plain_of: tuple, options, tell) -> tuple:
    """The group of each scored run (``settings.group_by``) and the summary of its ``best_by`` measure
    (default: the first measure) that picks each group's best run; each group's choice is told."""
    plain, plain_ms = plain_of
    n = s.scored
    groups = group_of(s.names[:n], settings.group_by)
    sel = plain_ms[0]
    if settings.best_by:
        got = registry.parse(settings.best_by)
        if got.variant or not got.measure.native:
            raise UnknownMeasure(f"--best-by {settings.best_by}: name a plain measure computed natively, e.g. nDCG@10")
        sel = got.measure
    sel_vals = ([p[sel] for p in plain] if sel in plain_ms
                else [plain_values(rr, s.judged, sel, s.qrels, options)[k] for rr, k in zip(s.ranked[:n], s.keep)])
    best = [summarise(v) for v in sel_vals]  # ranks runs only: no order needed
    champ = champions(groups, best)
    for g, j in champ.items():
        tell(f"group {g!r}: best run {s.names[j]} ({sel} = {best[j]:.4f})")
    if len(champ) == 1:
        tell("every run is in one group: the prior sets hold only --prior runs")
    return groups, best


def _nrg_values(s: _Ranked, metrics, plain: list, sets: list, options) -> list:
    """Per scored run, metric -> values on its queries: the plain values, and each variant's residual
    score against the run's prior set (``sets``)."""
    depths = [browsing_model(m, options.rel_level, s.judged.max_grade).depth for m in metrics if m.variant]
    space = key_space(s.qrels, s.qids, s.ranked, None if None in depths else max(depths))
    values = [dict() for _ in range(s.scored)]
    for metric in metrics:
        if not metric.variant:
            for i in range(s.scored):
                values[i][metric] = plain[i][metric.measure]
            continue
        model = browsing_model(metric, options.rel_level, s.judged.max_grade)
        surv = survival(space, model)
        for i, prior in enumerate(sets):
            values[i][metric] = residual_score(space, model, i, residual_factor(space.nkeys, surv, prior))[s.keep[i]]
    return values


def _run_result(s: _Ranked, i: int, values: dict):
    """The RunResult of scored run ``i``: its queries' values and their summaries, summed in the main
    command's order."""
    from ..pipeline.evaluate import RunResult

    run = s.results[i]
    order = np.argsort(np.asarray(run.qids, dtype=object), kind="stable")  # the main command's summation order
    return RunResult(name=run.name, qids=list(run.qids), values=values,
                     mean={m: summarise(v, order, m.summary) for m, v in values.items()},
                     float32_ties=run.float32_ties,
                     missing_qids=run.missing_qids, ignored_qids=run.ignored_qids, notes=run.notes, tag=run.tag)


# --------------------------------------------------------------------------- the command's request


@dataclass(frozen=True, kw_only=True)
class NRGRequest(RequestBase, NRGSettings):
    """What `ulnorm-eval nrg` asks for (docs/nrg.md): :class:`RequestBase`'s fields (the runs scored;
    measures None: nDCG@10, or P@10 with ``unique``), the prior runs and :class:`NRGSettings`."""

    priors: tuple = ()


class NRGUsageError(NRGError):
    """The command's usage error: no prior run at all, or one run under a protocol scoring each against the others."""


def nrg_for_request(request: NRGRequest, notes: list) -> NRGResult:
    """Read the qrels and runs of ``request`` (refusing a run sharing no query with the qrels, gains
    that overflow), then :func:`evaluate_nrg`; notes for stderr are appended to ``notes``."""
    from ..inputs.checks import require_finite
    from ..pipeline import evaluate as api
    from ..pipeline.parallel import executor
    from ..pipeline.run_checks import require_finite_gains

    q = api.load_qrels(request.qrels)
    if q.skipped:
        notes.append(f"{request.qrels}: skipped {q.skipped} comment or blank lines")
    plain = [n for n in (request.measures or []) if not n.upper().startswith(("NRG(", "UC("))]
    require_finite_gains(q, plain or None, request.qrels, request.options.rel_level)
    runs, priors = list(request.runs), list(request.priors)
    if request.protocol == "fixed" and not priors:  # without prior runs NRG is the measure
        raise NRGUsageError(NO_PRIOR)
    if request.protocol in ("leave-one-out", "group") and len(runs) < 2 and not priors:
        flag = {"leave-one-out": "--leave-one-out", "group": "--group-by"}[request.protocol]
        raise NRGUsageError(f"{flag} needs at least two RUNs (one run has no other to be scored against)")
    # -j auto: sequential (every ranking comes back from the workers: measured slower)
    with executor(q, request.jobs, request.scheduler, request.scheduler_timeout, len(runs) + len(priors), False) as ex:
        res = evaluate_nrg(q, runs, priors, request.measures, protocol=request.protocol, group_by=request.group_by,
                           best_by=request.best_by, unique=request.unique, options=request.options, warn=notes.append,
                           executor=ex, rename=True, refuse_disjoint=not request.allow_disjoint)
    require_finite(res)
    return res
