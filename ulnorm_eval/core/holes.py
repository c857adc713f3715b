"""Judgment holes: ``LB(M)`` and ``UB(M)``, the least and largest value of a measure over the grades
0..G the unjudged documents a run retrieved may take within a :class:`World`, a family's ``holes(h)
-> (lo, hi)`` naming one extreme assignment per query (docs/holes.md: worlds, strategies, proofs)."""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .kernels import Judgements, Level, Ranking, rel_of, relevant
from .draws import Keys
from .records import FAMILIES, VARIANTS
from .variants import DEFAULT_WORLD

__all__ = ["World", "DEFAULT_WORLD", "EST_LEVEL", "yield_ceiling", "judge_next", "HoleContext", "best_count", "candidate_grades", "hole_bounds", "hole_values", "holes_reason", "assign",
           "monotone", "outside_by_r", "outside_written", "REACH", "BOOT_PRIORS", "BOOT_INTERVAL", "BOOT_WITHHELD", "withheld_note", "bootstrap",
           "grade_prior", "grade_index", "boot_grades"]

BOOT_PRIORS = ("run", "pool", "mix")  # --holes-prior
BOOT_INTERVAL = (2.5, 97.5)  # BSLO, BSHI: the percentiles of the bootstrap values (a 95% interval)
BOOT_SMOOTHING = 1e-4  # the least probability of a grade (Froebe et al.'s count estimator floors at 1e-4)
BOOT_BATCH = 2_000_000  # ranked + judged elements per batch of bootstrap samples (bounds memory)
BOOT_SALT = 0xB0075  # the draws' stream: never the keys of DB's Monte Carlo permutations
# the families whose [BSLO, BSHI] held the later judgments for under half the (run, topic) pairs on every
# benchmark of docs/holes.md: --holes-samples does not add the bootstrap to them (named, it is computed)
BOOT_WITHHELD = ("AP", "GMAP", "Rprec")


def withheld_note(families, then: str = "name one to have it (e.g. -m 'BS(AP)')") -> str:
    """The note that --holes-samples left the bootstrap out for ``families`` (of BOOT_WITHHELD), and ``then``."""
    return (f"--holes-samples: no bootstrap for {', '.join(families)}: its [BSLO, BSHI] held the later judgments for "
            f"less than half the (run, topic) pairs on every benchmark of docs/holes.md; {then}")


@dataclass(frozen=True, kw_only=True)
class World:
    """Which documents a hole bound ranges over (docs/holes.md, "Worlds"): the runs' holes and beyond
    them nothing ('closed'), any number ('open'), at most N per query ('open=N'), P% of R ('open=P%')
    or an estimated ceiling ('open=est', :func:`yield_ceiling`) of relevant documents."""

    mode: str = "closed"
    ceiling: float | None = None  # open with a ceiling: at most this many (relative: a fraction of R)
    relative: bool = False
    estimate: bool = False  # the ceiling is each query's estimate (yield_ceiling)

    @classmethod
    def parse(cls, text) -> "World":
        if isinstance(text, World):
            return text
        stripped = str(text).strip()
        if stripped in ("closed", "open"):
            return cls(mode=stripped)
        if stripped == "open=est":
            return cls(mode="open", ceiling=EST_LEVEL, estimate=True)
        head, sep, number = stripped.partition("=")
        if head == "open" and sep:
            rel = number.endswith("%")
            try:
                value = float(number[:-1] if rel else number) if "_" not in number else float("nan")  # Python reads 1_0 as 10
            except ValueError:
                value = float("nan")
            if value == value and value >= 0 and value != float("inf") and (rel or value == int(value)):
                return cls(mode="open", ceiling=value / 100.0 if rel else value, relative=rel)
        raise ValueError(f"--holes {stripped!r}: the world is closed, open, open=N (at most N unjudged documents per "
                         "query, retrieved or not, are relevant; N a whole number), open=P% (at most P% of the "
                         "query's judged relevant documents) or open=est (at most an estimate per query)")

    def __str__(self) -> str:
        if self.ceiling is None:
            return self.mode
        if self.estimate:
            return "open=est"
        return f"open={self.ceiling * 100:g}%" if self.relative else f"open={self.ceiling:g}"

    def words(self, runs: int = 1) -> str:
        """The assumption in plain words, for every line that prints a bound or a claim."""
        held = ("whatever grades the unjudged documents the run retrieved take" if runs <= 1 else
                f"whatever grades the unjudged documents any of the {runs} runs retrieved take (one grade "
                "per document, shared by the runs)")
        if self.mode == "closed":
            return held + ", documents no run retrieved being non-relevant"
        if self.ceiling is None:
            return held + ", and however many documents no run retrieved are relevant"
        noun = (f"the query's estimated ceiling ({self.ceiling * 100:g}% upper limit of a yield curve fitted to "
                "the runs' judged documents, docs/holes.md)" if self.estimate else
                f"{self.ceiling * 100:g}% of the query's judged relevant documents (rounded up)" if self.relative
                else f"{self.ceiling:g} per query")
        return (held.replace("whatever grades", "whichever grades", 1) +
                f", if at most {noun} of the unjudged documents, retrieved or not, are relevant")

    def outside(self, n_relevant: np.ndarray, estimated=None) -> np.ndarray:
        """Per row, how many documents no run retrieved may be relevant (R: judged relevant per row;
        ``estimated``: per row, the estimated ceiling of open=est, None: none could be made, open)."""
        if self.mode == "closed":
            return np.zeros(len(n_relevant))
        if self.ceiling is None or (self.estimate and estimated is None):
            return np.full(len(n_relevant), np.inf)
        if self.estimate:
            return np.asarray(estimated, dtype=np.float64)
        return np.ceil(self.ceiling * np.asarray(n_relevant, dtype=np.float64) - 1e-9) if self.relative else \
            np.full(len(n_relevant), float(self.ceiling))


EST_LEVEL = 0.95  # open=est: the ceiling is this quantile of the predictive distribution (yield_ceiling)
HORIZON = 1000  # open=est: every run's ranking is taken to go on to this depth (trec_eval's usual -M)


def yield_ceiling(query, doc, rank, judged, relevant, lengths, nq: int, level: float = EST_LEVEL) -> np.ndarray:
    """Per query, the ``level`` quantile of the relevant documents among the runs' holes under a yield
    curve p = a_q j^-b at a document's best rank j (Zobel 1998; b by profile likelihood, a_q Gamma by
    moments: negative binomial, Greenwood & Yule 1920; docs/holes.md, "The estimated ceiling").
    Inputs per (run, ranked document): query, document code, 1-based rank, judged, judged relevant;
    ``lengths``: each run's ranking length per query.  Infinite without a judged relevant document."""
    from scipy.optimize import minimize_scalar
    from scipy.special import nbdtrik

    query, doc, rank = (np.asarray(x, dtype=np.int64) for x in (query, doc, rank))
    width = int(doc.max(initial=0)) + 1
    unique, inverse, best = _documents(query, doc, rank, width)
    is_judged, is_relevant = np.zeros(len(unique), bool), np.zeros(len(unique), bool)
    is_judged[inverse] = np.asarray(judged, bool)
    is_relevant[inverse] = np.asarray(relevant, bool)
    row = unique // width  # the query of each (_documents' key)
    log_rank = np.log(best.astype(np.float64))
    R = np.bincount(row[is_relevant], minlength=nq).astype(np.float64)
    if not R.any():
        return np.full(nq, np.inf)

    def sums(b, mask):
        return np.bincount(row[mask], weights=np.exp(-b * log_rank[mask]), minlength=nq).astype(np.float64)

    def minus_profile(b):
        W = sums(b, is_judged)
        have = R > 0
        return -(R[have] * np.log(R[have] / W[have])).sum() + b * log_rank[is_relevant].sum()

    b = minimize_scalar(minus_profile, bounds=(0.0, 3.0), method="bounded").x
    W, H = sums(b, is_judged), sums(b, ~is_judged)
    prefix = np.concatenate(([0.0], np.cumsum(np.arange(1.0, HORIZON + 1) ** -b)))
    for length in lengths:
        H += prefix[-1] - prefix[np.minimum(np.asarray(length, dtype=np.int64), HORIZON)]
    seen = W > 0
    rates = R[seen] / W[seen]
    alpha, beta = 0.5, 0.0
    if seen.sum() >= 5:
        mean = rates.mean()
        spread = max(rates.var() - (rates / W[seen]).mean(), 1e-3 * mean * mean)
        alpha, beta = mean * mean / spread, mean / spread
    with np.errstate(divide="ignore", invalid="ignore"):
        ceiling = np.ceil(nbdtrik(level, alpha + R, (beta + W) / (beta + W + H)) - 1e-9)
    return np.where(H > 0, np.nan_to_num(ceiling, nan=np.inf, posinf=np.inf), 0.0)


def _documents(query, doc, rank, width) -> tuple:
    """The distinct (query, document) pairs of the entries as keys query * width + doc (``width``: more than
    the largest document code), each entry's index among them, and each pair's best (least) rank."""
    unique, inverse = np.unique(query * width + doc, return_inverse=True)
    best = np.full(len(unique), np.iinfo(np.int64).max)
    np.minimum.at(best, inverse, rank)
    return unique, inverse, best


ALL_GRADES = 64  # up to this largest grade every grade 0..G is a candidate; above, only the deciding ones


def candidate_grades(max_grade: float, values=None) -> np.ndarray:
    """The grades an unjudged document may take: 0, 1, ..., floor(G), and G when not an integer; with
    ``values`` (judged grades, their gains, a gain map's grades) and G above ``ALL_GRADES``, only those
    that can decide an extreme (docs/holes.md, "Large grades")."""
    G = max(float(max_grade), 0.0)
    top = int(np.floor(G))
    if values is None or top <= ALL_GRADES:
        grades = np.arange(top + 1, dtype=np.float64)
    else:
        flat = np.asarray(values, dtype=np.float64).ravel()
        flat = np.clip(flat[np.isfinite(flat)], 0.0, float(top))
        near = np.concatenate([np.floor(flat), np.ceil(flat), np.floor(flat) - 1, np.ceil(flat) + 1, np.arange(3.0),
                               [top - 2.0, top - 1.0, top]])
        grades = np.unique(near[(near >= 0) & (near <= top)])
    return grades if G == top else np.append(grades, G)


@dataclass(kw_only=True)
class HoleContext:
    """What every strategy reads: the ranking, the qrels, the measure and the candidate grades."""

    rk: Ranking
    J: Judgements
    m: object
    level: float
    outside: object = 0.0  # per row: relevant documents outside the ranking besides the judged (:func:`outside_by_r`)

    @cached_property
    def family(self):
        return FAMILIES[self.m.family]

    @cached_property
    def rel(self) -> float:
        return rel_of(self.m, self.level)

    @cached_property
    def unj(self) -> np.ndarray:
        """Ranked documents the qrels do not list (the holes)."""
        return np.zeros(len(self.rk.row), bool) if self.rk.judged is None else ~np.asarray(self.rk.judged, bool)

    @cached_property
    def inc(self) -> np.ndarray:
        """Ranked documents within the measure's cutoff (all without one)."""
        return self.rk.pos < (np.inf if self.m.cutoff is None else self.m.cutoff)

    @cached_property
    def cands(self) -> np.ndarray:
        """The candidate grades of a hole (:func:`candidate_grades`; for a large G only the deciding ones)."""
        G = self.J.max_grade
        gains = self.m.get("gains") if hasattr(self.m, "get") else None
        keys = np.asarray(sorted(gains), dtype=np.float64) if gains else np.zeros(0)
        grades = np.unique(np.asarray(self.J.grade, dtype=np.float64))
        vals = np.asarray(self.family.gain(grades, self.m, self.rel, G), dtype=np.float64)
        return candidate_grades(G, np.concatenate([grades, vals, keys, [float(self.rel)]]))

    @cached_property
    def cgain(self) -> np.ndarray:
        """The family's gain of each candidate grade (binary families: 1 if relevant)."""
        return np.asarray(self.family.gain(self.cands, self.m, self.rel, self.J.max_grade), dtype=np.float64)

    @property
    def g_lo(self) -> float:
        """A grade of least gain (binary families: a non-relevant grade when there is one)."""
        return float(self.cands[int(np.argmin(self.cgain))])

    @property
    def g_hi(self) -> float:
        """A grade of largest gain (binary families: a relevant grade when there is one)."""
        return float(self.cands[int(np.argmax(self.cgain))])

    @property
    def forced(self) -> bool:
        """Every candidate grade has the same gain: the holes cannot move the measure's input."""
        return bool(self.cgain.min() == self.cgain.max())

    def fill(self, grade: float) -> np.ndarray:
        return np.full(len(self.rk.row), grade, dtype=np.float64)

    @cached_property
    def R(self) -> np.ndarray:
        """Per row, the judged relevant documents at the measure's level plus :attr:`outside`."""
        return self.J.n_relevant(self.rel)[self.rk.base] + self.outside

    @cached_property
    def judged_relevant(self) -> np.ndarray:
        """Judged ranked documents relevant at the measure's level (fixed by every assignment)."""
        return relevant(self.rk, self.rel) & ~self.unj


def monotone(holes: HoleContext):
    """Measures nondecreasing in every ranked document's gain and with no normaliser that an
    assignment changes (P, SP, DCG, RBP, RR, Success): every hole at the least gain, or at the largest."""
    return holes.fill(holes.g_lo), holes.fill(holes.g_hi)


def assign(ranking: Ranking, judgements: Judgements, assignments: list, depth: int | None = None) -> tuple:
    """A ranking and judgements with one copy of every query per assignment (grades at the holes): copy
    ``a`` of row r is row ``a * nrows + r``, of query ``a * J.nq + base[r]``, whose judgements add its
    holes at their grades, unordered.  ``depth``: only the first ``depth`` ranks are kept."""
    n_assignments = len(assignments)
    unj = np.zeros(len(ranking.row), bool) if ranking.judged is None else ~np.asarray(ranking.judged, bool)
    top = slice(None) if depth is None else ranking.pos < depth  # the ranking's part a kernel with cutoff reads
    rows = np.concatenate([ranking.row[top] + assignment * ranking.nrows for assignment in range(n_assignments)])
    grades = np.concatenate([np.where(unj, grade, ranking.grade)[top] for grade in assignments])
    base = np.concatenate([ranking.base + assignment * judgements.nq for assignment in range(n_assignments)])
    out = Ranking(rows, grades, n_assignments * ranking.nrows, base, np.ones(len(rows), bool))
    hole_rows = ranking.base[ranking.row[unj]]
    jrow = np.concatenate([judgements.row + assignment * judgements.nq for assignment in range(n_assignments)] + [hole_rows + assignment * judgements.nq for assignment in range(n_assignments)])
    jgrade = np.concatenate([judgements.grade] * n_assignments + [grade[unj] for grade in assignments])
    tiled = Judgements(list(judgements.qids) * n_assignments, jrow, jgrade, judgements.max_grade)
    return out, tiled


def _tiled_level(level, copies: int, rows=None):
    """The level for ``copies`` copies of a ranking (of its ``rows`` only, if given): ``present``
    follows the rows; every other flag is kept."""
    if not isinstance(level, Level) or level.present is None:
        return level
    present = np.asarray(level.present, bool)
    present = np.tile(present if rows is None else present[rows], copies)
    return Level(float(level), level.num_docs, level.rounding, present, level.trec_nan, level.judged_only)


def holes_reason(measure) -> str | None:
    """Why ``measure`` has no hole bounds (None: it has them)."""
    if not getattr(measure, "native", False):
        return f"{measure}: computed through ir_measures, whose kernels the hole strategies cannot read"
    fam = FAMILIES[measure.family]
    if fam.holes is None:
        return f"{fam.name}: {fam.holes_note or 'no exact extremes derived for this measure'}"
    if fam.holes_check is not None:
        why = fam.holes_check(measure)
        if why:
            return f"{measure}: {why}"
    return None


def hole_bounds(ranking: Ranking, judgements: Judgements, measure, level, mode="closed", others=None,
                estimated=None) -> tuple:
    """(LB, UB) per row of a run's ranking: the family's kernel on its strategy's extreme assignments.
    ``mode``: a :class:`World` (or its text); ``others`` (per row): unjudged documents outside the
    ranking (other runs' holes, those below -M) that may take a grade in the closed world;
    ``estimated`` (per row): open=est's ceiling.  Outside documents move only R and the ideal: the
    family's ``holes_outside(h, extra)`` gives the least value (Rprec: also the largest) with up to
    ``extra[r]`` (possibly inf) of them relevant.  Under -l 0 a ceiling bounds nothing (docs/holes.md)."""
    why = holes_reason(measure)
    if why:
        raise ValueError(why)
    world = World.parse(mode)
    fam = FAMILIES[measure.family]
    holes = HoleContext(rk=ranking, J=judgements, m=measure, level=level)
    if not holes.unj.any():
        lower = upper = fam.kernel(ranking, judgements, measure, level)
    else:
        rk2, tiled = assign(ranking, judgements, list(fam.holes(holes)),
                            measure.cutoff)  # every family with hole bounds reads only the top k
        values = fam.kernel(rk2, tiled, measure, _tiled_level(level, 2))
        lower, upper = values[: ranking.nrows], values[ranking.nrows:]
    if fam.holes_outside is None or not holes.cgain.max() > 0:
        return lower, upper  # documents outside the ranking cannot move the measure
    free = world.ceiling is not None and holes.cgain.min() > 0  # -l 0: grade 0 is relevant and uncounted
    cap = np.full(ranking.nrows, np.inf) if free else world.outside(judgements.n_relevant(holes.rel)[ranking.base],
                                                                    estimated)
    extra = cap + (0.0 if others is None else np.asarray(others, dtype=np.float64))
    if extra.any():
        low_x, high_x = fam.holes_outside(holes, extra)
        lower = np.minimum(lower, low_x)
        upper = upper if high_x is None else np.maximum(upper, high_x)
    if world.ceiling is None or free:
        return lower, upper
    # the least value spends the whole ceiling outside, every hole at the least gain (docs/holes.md,
    # "Worlds"); UB is the one above (no ceiling on the holes): true, possibly wider than it allows
    rk0, filled = assign(ranking, judgements, [holes.fill(holes.g_lo)])
    least = fam.holes_outside(HoleContext(rk=rk0, J=filled, m=measure, level=level), cap)[0]
    return np.minimum(least, fam.kernel(rk0, filled, measure, _tiled_level(level, 1))), upper


REACH = 100_000  # outside documents written out per query at most (nDCG without a cutoff; past it, LB 0)


def outside_by_r(holes: HoleContext, extra) -> tuple:
    """Measures whose value is X / R (AP, GMAP, R@k): with ``extra`` more relevant documents outside the
    ranking, an assignment's kernel value times R_a / (R_a + extra) (R_a: its relevant documents), the
    least assignment the family's strategy reading R + extra (:attr:`HoleContext.R`)."""
    fam, ranking = holes.family, holes.rk
    extra = np.asarray(extra, dtype=np.float64)
    low = fam.holes(HoleContext(rk=ranking, J=holes.J, m=holes.m, level=holes.level, outside=extra))[0] if holes.unj.any() \
        else holes.fill(holes.g_lo)
    rk2, tiled = assign(ranking, holes.J, [low], holes.m.cutoff)
    values = np.asarray(fam.kernel(rk2, tiled, holes.m, _tiled_level(holes.level, 1)), dtype=np.float64)
    judged = np.asarray(fam.gain(low, holes.m, holes.rel, holes.J.max_grade)) > 0
    R = holes.J.n_relevant(holes.rel)[ranking.base] + ranking.rowsum(holes.unj & judged)
    with np.errstate(invalid="ignore"):
        scale = np.where(np.isinf(extra), 0.0, R / np.maximum(R + extra, 1.0))
    return values * scale, None


def outside_written(holes: HoleContext, extra, reach=None) -> tuple:
    """The least value with ``extra`` documents outside the ranking at the largest gain, written into the
    judgements (nDCG: they enter the ideal), at most ``reach`` of them (IDCG@k reads k); without one, a
    row with more than :data:`REACH` gets 0 (true, and the ideal is not summed over them)."""
    extra = np.asarray(extra, dtype=np.float64)
    if reach is not None:
        extra = np.minimum(extra, float(reach))
    beyond = extra > REACH
    # the judgements plus extra[r] documents outside the ranking at the largest gain for row r's query
    # (not grouped by query: the kernels with hole strategies count and sort the judgements)
    rows = np.repeat(holes.rk.base, np.where(beyond, 0.0, extra).astype(np.int64))
    more = Judgements(holes.J.qids, np.concatenate([holes.J.row, rows]),
                      np.concatenate([holes.J.grade, np.full(len(rows), holes.g_hi)]), holes.J.max_grade)
    context = HoleContext(rk=holes.rk, J=more, m=holes.m, level=holes.level)
    low = holes.family.holes(context)[0] if context.unj.any() else context.fill(holes.g_lo)
    rk2, tiled = assign(holes.rk, more, [low], holes.m.cutoff)
    return np.where(beyond, 0.0, holes.family.kernel(rk2, tiled, holes.m, _tiled_level(holes.level, 1))), None


def hole_values(ranking: Ranking, judgements: Judgements, metrics: list, level, options, stderr: dict | None = None,
                others=None, estimated=None) -> dict:
    """Values of every LB/UB/BS/BSLO/BSHI metric, each measure's bounds and bootstrap computed once
    (``options``: ``holes``, ``holes_samples``, ``seed``, ``holes_prior``; ``others``, ``estimated``:
    :func:`hole_bounds`).  ``stderr`` (if given) receives each BS metric's Monte Carlo standard error."""
    out, done, boot = {}, {}, {}
    for metric in metrics:
        meas, which = metric.measure, VARIANTS[metric.variant].bound
        if which in ("LB", "UB"):
            if meas not in done:
                done[meas] = hole_bounds(ranking, judgements, meas, level, options.holes, others, estimated)
            out[metric] = done[meas][0 if which == "LB" else 1]
            continue
        if meas not in boot:
            cap = sample_ceiling(HoleContext(rk=ranking, J=judgements, m=meas, level=level), World.parse(options.holes),
                                 estimated)
            boot[meas] = bootstrap(ranking, judgements, meas, level, options.holes_samples, options.seed,
                                   options.holes_prior, cap)
        out[metric] = boot[meas][which]
        if which == "BS" and stderr is not None:
            stderr[metric] = boot[meas]["se"]
    return out


def best_count(ranking: Ranking, mask, count, values, base, maximise: bool) -> np.ndarray:
    """Per row, the count c whose value is best: ``base`` (per row) is c = 0, each element in
    ``mask`` carries c = ``count`` and ``values``; ties go to the smallest c."""
    sign = 1.0 if maximise else -1.0
    best = sign * np.asarray(base, dtype=np.float64)
    rows = ranking.row[mask]
    signed = sign * np.asarray(values, dtype=np.float64)[mask]
    counts = np.asarray(count)[mask].astype(np.int64)
    top = np.full(ranking.nrows, -np.inf)
    np.maximum.at(top, rows, signed)
    hit = signed == top[rows]
    first = np.full(ranking.nrows, np.iinfo(np.int64).max)
    np.minimum.at(first, rows[hit], counts[hit])
    return np.where(top > best, first, 0)


# --------------------------------------------------------------------------- bootstrap

def grade_index(grade, cands) -> np.ndarray:
    """Index of the largest candidate grade <= ``grade`` (clipped to [0, G]): where a judged grade
    falls among the grades a hole can take (negative grades count as 0)."""
    grades = np.clip(np.asarray(grade, dtype=np.float64), 0.0, cands[-1])
    return np.searchsorted(cands, grades, side="right") - 1


def boot_grades(judgements: Judgements) -> np.ndarray:
    """The grades a bootstrap draw can give, ascending: 0, the qrels' largest grade G and every judged
    grade, each as the candidate grade it counts for (negative grades count as 0)."""
    G = max(float(judgements.max_grade), 0.0)
    grades = np.clip(np.asarray(judgements.grade, dtype=np.float64), 0.0, G)
    return np.unique(np.concatenate([[0.0, G], np.where(grades >= G, G, np.floor(grades))]))


def grade_prior(holes: HoleContext, prior: str = "pool") -> np.ndarray:
    """Per row, the probability of each grade of :func:`boot_grades` for a hole (rows x grades), Froebe
    et al. 2023's priors (docs/holes.md, "The priors"): 'run', 'pool' or 'mix'; the query's grades, 0
    and G floored at ``BOOT_SMOOTHING``, the others 0, then renormalised."""
    if prior not in BOOT_PRIORS:
        raise ValueError(f"{prior!r}: the prior is one of {', '.join(BOOT_PRIORS)}")
    ranking, judgements = holes.rk, holes.J
    grades = boot_grades(judgements)
    n_grades = len(grades)
    pool = np.bincount(judgements.row * n_grades + grade_index(judgements.grade, grades),
                       minlength=judgements.nq * n_grades).reshape(judgements.nq, n_grades)
    pool = pool[ranking.base].astype(np.float64)
    support = pool > 0
    support[:, 0] = True
    support[:, -1] = True

    def freq(counts):
        tot = counts.sum(axis=1, keepdims=True)
        probabilities = np.where(support, np.maximum(counts / np.maximum(tot, 1.0), BOOT_SMOOTHING), 0.0)
        return probabilities / probabilities.sum(axis=1, keepdims=True)

    if prior == "pool":
        return freq(pool)
    sel = ~holes.unj & holes.inc
    run = np.bincount(ranking.row[sel] * n_grades + grade_index(ranking.grade[sel], grades),
                      minlength=ranking.nrows * n_grades).reshape(ranking.nrows, n_grades).astype(np.float64)
    empty = run.sum(axis=1) == 0
    run[empty] = pool[empty]
    return freq(run) if prior == "run" else 0.5 * (freq(run) + freq(pool))


def judge_next(query, doc, rank, judged, cutoffs, n: int) -> list:
    """The ``n`` unjudged documents whose grades move the most bounds, best first, as (query, document
    code, weight, runs, best rank): weight = the sum over runs and ``cutoffs`` (None: none) of 1/r at
    its rank r within the cutoff (its share of AP's and RR's sums); ties: more runs, lower query, code."""
    query, doc, rank = (np.asarray(x, dtype=np.int64) for x in (query, doc, rank))
    hole = ~np.asarray(judged, bool)
    reach = sum((rank[hole] <= (np.inf if cutoff is None else cutoff)) for cutoff in cutoffs)
    width = int(doc.max(initial=0)) + 1
    unique, inverse, best = _documents(query[hole], doc[hole], rank[hole], width)
    weight = np.bincount(inverse, weights=reach / rank[hole], minlength=len(unique))
    runs = np.bincount(inverse, minlength=len(unique))
    order = np.lexsort((unique, -runs, -weight))[: int(n)]
    order = order[weight[order] > 0]
    return [(int(unique[i] // width), int(unique[i] % width), float(weight[i]), int(runs[i]), int(best[i]))
            for i in order]


def sample_ceiling(holes: HoleContext, world: World, estimated=None):
    """Per row, how many holes a bootstrap sample may give a grade above 0 under ``world``'s ceiling
    (None: no ceiling, or -l 0, where the ceiling bounds nothing)."""
    if world.ceiling is None or holes.cgain.min() > 0:
        return None
    return world.outside(holes.J.n_relevant(holes.rel)[holes.rk.base], estimated)


def capped(grades: np.ndarray, row: np.ndarray, cap: np.ndarray, order: np.ndarray) -> np.ndarray:
    """``grades`` (samples x holes, the holes of ``row``) with at most ``cap[row]`` grades above 0 in
    each sample's row: those of least ``order`` kept, the others set to 0."""
    size, n_holes = grades.shape
    group = (np.arange(size)[:, None] * (int(row.max(initial=0)) + 1) + row[None, :]).ravel()
    positive = grades.ravel() > 0
    sort = np.lexsort((order.ravel(), ~positive, group))
    first = np.searchsorted(group[sort], group[sort], side="left")  # each group's first place (sorted)
    limit = np.tile(cap[row], size)
    keep = np.empty(len(sort), bool)
    keep[sort] = ~positive[sort] | (np.arange(len(sort)) - first < limit[sort])
    return np.where(keep.reshape(size, n_holes), grades, 0.0)


def bootstrap(ranking: Ranking, judgements: Judgements, measure, level, samples: int = 1000,
              seed: int = 0, prior: str = "pool", cap=None) -> dict:
    """Bootstrapped estimate of ``measure`` per row (Froebe, Gienapp, Potthast & Hagen 2023, Sect. 4):
    ``samples`` samples grade every hole within the cutoff from the row's prior (:func:`grade_prior`),
    at most ``cap`` above 0; ``BS`` their values' mean, ``BSLO``/``BSHI`` their 2.5th and 97.5th
    percentiles, ``se`` sd / sqrt(samples).  Draw s of the hole at rank p of query q: u(seed, q, s, p)."""
    why = holes_reason(measure)
    if why:
        raise ValueError(why)
    fam = FAMILIES[measure.family]
    holes = HoleContext(rk=ranking, J=judgements, m=measure, level=level)
    plain = np.asarray(fam.kernel(ranking, judgements, measure, level), dtype=np.float64)
    # the holes within the cutoff; all of them where every grade has a positive gain (-l 0: a hole left
    # unjudged past the cutoff would be no assignment of the world, in which every hole is relevant)
    samp = holes.unj & (holes.inc | (holes.cgain.min() > 0))
    need = np.zeros(ranking.nrows, bool)
    need[ranking.row[samp]] = True
    out = {"BS": plain.copy(), "BSLO": plain.copy(), "BSHI": plain.copy(), "se": np.zeros(ranking.nrows)}
    if not need.any():
        return out
    cum = np.cumsum(grade_prior(holes, prior), axis=1)
    drawable = boot_grades(judgements)  # the grades a draw gives, as the columns of cum
    # only the rows with holes are copied, with only their queries' judgements
    rows = np.flatnonzero(need)
    keep = need[ranking.row]
    newrow = np.cumsum(need) - 1
    qsel = np.zeros(judgements.nq, bool)
    qsel[ranking.base[rows]] = True
    qnew = np.cumsum(qsel) - 1
    jkeep = qsel[judgements.row]
    sampled = Judgements([judgements.qids[index] for index in np.flatnonzero(qsel)], qnew[judgements.row[jkeep]],
                         judgements.grade[jkeep], judgements.max_grade)
    hole = samp[keep]
    rks = Ranking(newrow[ranking.row[keep]], ranking.grade[keep], len(rows), qnew[ranking.base[rows]], ~hole)
    hrow = rks.row[hole]
    hole_query = ranking.base[ranking.row[samp]]  # the query of each hole in J: the key of its draws
    hpos = rks.pos[hole]
    thresholds = cum[rows][hrow][:, :-1]
    n_holes = int(hole.sum())
    per = (len(rks.row) if measure.cutoff is None else int((rks.pos < measure.cutoff).sum())) + len(sampled.row) + n_holes
    batch = max(1, min(samples, BOOT_BATCH // max(per, 1)))
    keys = Keys(seed, judgements.qids)
    vals = np.empty((samples, len(rows)))
    for start in range(0, samples, batch):
        size = min(batch, samples - start)
        reps = np.repeat(np.arange(start, start + size, dtype=np.uint64), n_holes)
        uniforms = keys.at(np.tile(hole_query, size), reps, np.tile(hpos, size), BOOT_SALT).reshape(size, n_holes)
        grades = drawable[(uniforms[:, :, None] >= thresholds[None, :, :]).sum(axis=2)]
        if cap is not None:
            order = keys.at(np.tile(hole_query, size), reps, np.tile(hpos, size), BOOT_SALT + 1).reshape(size, n_holes)
            grades = capped(grades, hrow, cap[rows], order)
        full = np.repeat(rks.grade[None, :], size, axis=0)
        full[:, hole] = grades
        rk2, tiled = assign(rks, sampled, list(full), measure.cutoff)
        values = fam.kernel(rk2, tiled, measure, _tiled_level(level, size, rows))
        vals[start:start + size] = np.asarray(values, dtype=np.float64).reshape(size, len(rows))
    out["BS"][rows] = vals.mean(axis=0)
    low, high = np.percentile(vals, BOOT_INTERVAL, axis=0)
    out["BSLO"][rows], out["BSHI"][rows] = low, high
    out["se"][rows] = vals.std(axis=0, ddof=1) / np.sqrt(samples) if samples > 1 else 0.0
    return out
