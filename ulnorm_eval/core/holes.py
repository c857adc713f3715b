"""Judgment holes: the smallest and largest value a measure can take over the grades of the
unjudged documents a run retrieved.

Per query, every retrieved document that the qrels do not list may be given any grade from 0 to
the qrels' largest grade G (the integers 0..floor(G), and G itself when it is not an integer); the
judged documents keep theirs.  A document given a grade becomes judged: inside the cutoff it changes
the run's gain, and at any rank it changes the ideal (IDCG) and R.  ``LB(M)`` is the minimum of M
over every such assignment, ``UB(M)`` the maximum.  Documents no run retrieved stay non-relevant
(the *closed* assumption every pooled qrels already makes); ``--holes open`` also lets any
number of unretrieved documents be relevant at the largest grade, which only lowers LB (UB is the
closed one: unretrieved relevant documents never raise a measure).

Each family's record names a *strategy* ``holes(h) -> (lo, hi)``: for every query, one assignment
(a grade per ranked element; read at the unjudged ones) that attains the minimum and one that
attains the maximum.  The values are then the family's own kernel on those assignments
(:func:`hole_bounds`), so LB/UB follow every rule of the kernel (ties, cutoffs, R from the qrels).
Why each strategy's assignment is the extreme is proven in docs/holes.md and checked against every
assignment of small random queries in tests/test_holes.py.  A family without a strategy has no hole
bounds and says why (``holes_note``); a measure whose parameters break a proof (``holes_check``)
is refused with the reason.

Nothing here imports the measure modules (they import the helpers below); families are looked up
in the registry at run time.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from .lazy import np

from .kernels import Judgements, Level, Ranking, rel_of, relevant
from .records import FAMILIES

__all__ = ["HoleContext", "best_count", "candidate_grades", "hole_bounds", "hole_values", "holes_reason", "assign",
           "monotone", "open_zero", "running", "HOLE_MODES"]

HOLE_MODES = ("closed", "open")


def candidate_grades(max_grade: float) -> np.ndarray:
    """The grades an unjudged document may take: 0, 1, ..., floor(G), and G when not an integer."""
    G = max(float(max_grade), 0.0)
    g = np.arange(int(np.floor(G)) + 1, dtype=np.float64)
    return g if G == np.floor(G) else np.append(g, G)


def running(rk: Ranking, x) -> np.ndarray:
    """Inclusive running sum of ``x`` within each row of ``rk``."""
    c = np.cumsum(np.asarray(x, dtype=np.float64))
    before = np.concatenate(([0.0], c))[rk.starts[:-1]]
    return c - before[rk.row]


@dataclass
class HoleContext:
    """What every strategy reads: the ranking, the qrels, the measure and the candidate grades."""

    rk: Ranking
    J: Judgements
    m: object
    level: float

    @cached_property
    def family(self):
        return FAMILIES[self.m.family]

    @cached_property
    def rel(self) -> float:
        return rel_of(self.m, self.level)

    @cached_property
    def unj(self) -> np.ndarray:
        """Ranked documents the qrels do not list (the holes)."""
        rk = self.rk
        return np.zeros(len(rk.row), bool) if rk.judged is None else ~np.asarray(rk.judged, bool)

    @cached_property
    def inc(self) -> np.ndarray:
        """Ranked documents within the measure's cutoff (all without one)."""
        if self.m.cutoff is None:
            return np.ones(len(self.rk.row), bool)
        return self.rk.pos < self.m.cutoff

    @cached_property
    def cands(self) -> np.ndarray:
        return candidate_grades(self.J.max_grade)

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

    def fill(self, g: float) -> np.ndarray:
        return np.full(len(self.rk.row), g, dtype=np.float64)

    def rowsum(self, x) -> np.ndarray:
        return self.rk.rowsum(np.asarray(x, dtype=np.float64))

    def running(self, x) -> np.ndarray:
        return running(self.rk, x)

    @cached_property
    def judged_relevant(self) -> np.ndarray:
        """Judged ranked documents relevant at the measure's level (fixed by every assignment)."""
        return relevant(self.rk, self.rel) & ~self.unj


def monotone(h: HoleContext):
    """Measures nondecreasing in every ranked document's gain and with no normaliser that an
    assignment changes (P, SP, DCG, RBP, RR, Success): every hole at the least gain, or at the largest."""
    return h.fill(h.g_lo), h.fill(h.g_hi)


def open_zero(h: HoleContext, lo) -> np.ndarray:
    """Measures divided by R (AP, recall, Rprec): with any number of unretrieved relevant documents
    R is unbounded and the infimum is 0."""
    return np.zeros(h.rk.nrows)


def assign(rk: Ranking, J: Judgements, assignments: list, depth: int | None = None) -> tuple:
    """A ranking and judgements with one copy of every query per assignment, its holes judged at
    the assigned grades (``assignments``: grade arrays over ``rk``'s elements, read at the holes).

    Copy ``a`` of query row r is row ``a * nrows + r`` of the ranking and query ``a * J.nq + base[r]``
    of the judgements, which hold the query's judgements plus its holes at their grades (in no
    particular order: only for kernels that count or sort the judgements themselves).  ``depth``: the
    ranking keeps only its first ``depth`` documents (a measure with that cutoff reads no more), the
    holes below still judged in the judgements.
    """
    A = len(assignments)
    unj = np.zeros(len(rk.row), bool) if rk.judged is None else ~np.asarray(rk.judged, bool)
    top = slice(None) if depth is None else rk.pos < depth  # the ranking's part a kernel with cutoff reads
    rows = np.concatenate([rk.row[top] + a * rk.nrows for a in range(A)])
    grades = np.concatenate([np.where(unj, g, rk.grade)[top] for g in assignments])
    base = np.concatenate([rk.base + a * J.nq for a in range(A)])
    out = Ranking(rows, grades, A * rk.nrows, base, np.ones(len(rows), bool))
    hr = rk.base[rk.row[unj]]
    jrow = np.concatenate([J.row + a * J.nq for a in range(A)] + [hr + a * J.nq for a in range(A)])
    jgrade = np.concatenate([J.grade] * A + [g[unj] for g in assignments])
    # not grouped by query: the holes follow every copy's judgements.  The kernels with hole strategies
    # read the judgements by counting (R) and sorting (IDCG), never by their order, and sorting here
    # cost as much as the kernels; tests/test_holes.py would catch a kernel that read the order
    J2 = Judgements(list(J.qids) * A, jrow, jgrade, J.max_grade)
    return out, J2


def _tiled_level(level, copies: int):
    present = getattr(level, "present", None)
    if not isinstance(level, Level):
        return level
    return Level(float(level), level.num_docs, level.rounding,
                 None if present is None else np.tile(np.asarray(present, bool), copies))


def holes_reason(m) -> str | None:
    """Why measure ``m`` has no hole bounds (None: it has them)."""
    if not getattr(m, "native", False):
        return f"{m}: computed through ir_measures, whose kernels the hole strategies cannot read"
    fam = FAMILIES[m.family]
    if fam.holes is None:
        return f"{fam.name}: {fam.holes_note or 'no exact extremes derived for this measure'}"
    if fam.holes_check is not None:
        why = fam.holes_check(m)
        if why:
            return f"{m}: {why}"
    return None


def hole_bounds(rk: Ranking, J: Judgements, m, level, mode: str = "closed") -> tuple:
    """(LB, UB) per row of a run's ranking: the family's kernel on its strategy's extreme assignments."""
    why = holes_reason(m)
    if why:
        raise ValueError(why)
    fam = FAMILIES[m.family]
    h = HoleContext(rk, J, m, level)
    if not h.unj.any():
        v = fam.kernel(rk, J, m, level)
        lb, ub, lo = v, v, h.fill(0.0)
    else:
        lo, hi = fam.holes(h)
        rk2, J2 = assign(rk, J, [lo, hi], m.cutoff)  # every family with hole bounds reads only the top k
        v = fam.kernel(rk2, J2, m, _tiled_level(level, 2))
        lb, ub = v[: rk.nrows], v[rk.nrows:]
    if mode == "open" and fam.holes_open is not None:
        lb = np.minimum(lb, fam.holes_open(h, lo))
    return lb, ub


def hole_values(rk: Ranking, J: Judgements, metrics: list, level, mode: str = "closed") -> dict:
    """Values of every LB/UB metric: each measure's bounds computed once."""
    from .records import VARIANTS

    out, done = {}, {}
    for metric in metrics:
        meas = metric.measure
        if meas not in done:
            done[meas] = hole_bounds(rk, J, meas, level, mode)
        out[metric] = done[meas][0 if VARIANTS[metric.variant].bound == "LB" else 1]
    return out


def best_count(rk: Ranking, mask, count, values, base, maximise: bool) -> np.ndarray:
    """Per row, the count c whose value is best: ``base`` (per row) is c = 0, each element in
    ``mask`` carries c = ``count`` and ``values``; ties go to the smallest c."""
    sign = 1.0 if maximise else -1.0
    best = sign * np.asarray(base, dtype=np.float64)
    r = rk.row[mask]
    v = sign * np.asarray(values, dtype=np.float64)[mask]
    c = np.asarray(count)[mask].astype(np.int64)
    top = np.full(rk.nrows, -np.inf)
    np.maximum.at(top, r, v)
    hit = v == top[r]
    first = np.full(rk.nrows, np.iinfo(np.int64).max)
    np.minimum.at(first, r[hit], c[hit])
    return np.where(top > best, first, 0)
