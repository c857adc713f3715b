"""The record types of measure families (:class:`Family`, after ir_measures' ``measures/*.py``) and
variants (:class:`Variant`), and the registries that hold them; parsing, listing, output names, help,
docs and the brute-force tests' cases derive from them.  No numpy here: ``--help`` stays instant.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

__all__ = ["Param", "TrecName", "Family", "Variant", "Gains", "FAMILIES", "VARIANTS", "register", "TextFamily",
           "TEXT_FAMILIES", "register_text",
           "register_variant", "UnknownMeasure", "VARIANT_AGGREGATE", "BOUNDS", "SUMMARIES", "VARIANT_KINDS", "EXTREMES", "VALUES", "NICKNAMES", "TREC_ORDER"]

BOUNDS = ("exact", "montecarlo", "none")
SUMMARIES = ("mean", "sum", "gmean", "none", "run")
VALUES = ("float", "int", "text")
NICKNAMES = ("official", "set", "all_trec")  # trec_eval's -m nicknames
# trec_eval 10's measure table (measures.c te_trec_measures; dcg, ideal_dcg and yaap are in no nickname):
# -m all_trec and --names trec print in this order
TREC_ORDER = tuple(
    "runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank iprec_at_recall P relstring "
    "recall infAP gm_bpref Rprec_mult utility 11pt_avg binG G dcg ideal_dcg ndcg ndcg_rel Rndcg ndcg_cut map_cut "
    "relative_P success set_P set_relative_P set_recall set_map set_F num_nonrel_judged_ret yaap rbp rbp_resid "
    "unj".split())
NO_EXPECTATION = {"montecarlo": "Monte Carlo", "none": "none (no random-ranking bounds)"}  # Family.expectation_formula
EXTREMES = ("sorted", "ideal", "search")  # how IUB/WLB are found (Family.extremes)
VARIANT_KINDS = ("bound", "ratio", "distribution", "prior", "holes", "condensed")
# what a holes variant is: the extremes (LB, UB), or the bootstrap's mean and percentile interval
HOLE_BOUNDS = ("LB", "UB", "BS", "BSLO", "BSHI")
# The 'all' row of every variant: the mean of its per-query values, as Karmaker & Feng 2022 and Feng 2023
# average UL2 (docs/bounds.md, "Which 'all' row")
VARIANT_AGGREGATE = "mean"



# A browsing model whose seen(i) depends on the ranking: the searcher stops at the first item with
# gain (C/W/L's reciprocal rank, continuation C(i) = 1 - r_i): seen(i) = V(i) = prod_{j<i} (1 - G(d_j)),
# N = V+ = sum_i V(i), the ranks seen (Normalized Residual Gain (SIGIR-AP 2024) App. A: eq. 1 with
# G(d_i) = r_i, seen(i) = V(i), N = V+).  ``Family.browsing`` returns it as its seen.
SEEN_UNTIL_GAIN = "seen until the first item with gain"

@dataclass(frozen=True, kw_only=True)
class Param:
    """One parameter of a family: ``RBP(p=0.9)``."""

    name: str
    kind: str  # 'int', 'float', 'str', 'gains'
    default: object
    doc: str
    always_show: bool = False  # print even at its default (RBP's p defines the measure)
    choices: tuple = ()  # the allowed values, when they are a closed set
    at: bool = False  # written after @ (ir_measures' IPrec@0.2 sets recall); the family takes no cutoff


@dataclass(frozen=True, kw_only=True)
class TrecName:
    """One trec_eval name of a family and how its argument maps onto the measure (``arg``: 'none',
    'each', 'map', 'one' or 'raw'; every field in docs/architecture.md, "The records")."""

    base: str
    arg: str = "none"
    param: str = "cutoff"
    defaults: tuple = ()
    kind: str = "int"
    value_name: str = "value"  # what a 'map' maps a grade to, for messages: 'gain'
    fmt: str = ""  # format spec of a value in the output name: '.2f' prints iprec_at_recall_0.10
    nick: tuple = ()  # trec_eval nicknames that include it
    keys: tuple = ()  # 'map': parameters that may be given among the pairs (rbp.p=0.8)
    since: int = 9  # the first trec_eval version that has it (10: unj, rbp, rbp_resid; --trec-version 9 leaves it out)

    def output(self, value=None) -> str:
        """The name trec_eval prints for ``value`` (None: no argument)."""
        if value is None:
            return self.base
        if isinstance(value, dict):
            return self.base + "_" + ",".join(f"{key:g}={val:g}" for key, val in sorted(value.items()))
        spec = "" if isinstance(value, str) else self.fmt or ("g" if isinstance(value, float) else "")
        return f"{self.base}_{value:{spec}}"


@dataclass(frozen=True, kw_only=True)
class Family:
    """A measure family, declared once (every field in docs/architecture.md, "The records"): ``kernel(ranking,
    judgements, measure, level) -> values[rows]``; ``gain``, ``order``, ``reads`` take (grade or trec_eval's
    code, measure, rel, max_grade); ``expectation``, ``paper_ideal`` a ``RandomPool``; ``holes*`` a ``HoleContext``."""

    name: str
    params: tuple
    cutoff: str  # 'optional', 'required' or 'none'
    kernel: Callable
    gain: Callable
    bounds: str
    expectation: Callable | None = None
    formula: str = ""  # "": the first paragraph of the kernel's docstring
    expectation_formula: str = ""  # "": said by ``bounds`` when E has no closed form (NO_EXPECTATION)
    cite: str
    level: str  # 'rel' or 'gains'
    summary: str = "mean"
    trec: tuple = ()  # TrecName records, the first that fits a measure names it
    irm: str | None = None  # ir_measures' name of the family
    aliases: tuple = ()
    validate: Callable | None = None
    paper_ideal: Callable | None = None
    paper_params: tuple = ()  # (name, value) pairs
    paper_unless: tuple = ()  # parameter names whose presence keeps the measure as typed
    examples: tuple = ()
    browsing: Callable | None = None
    browsing_note: str = ""
    unique: bool = False
    better: str = "higher"
    value: str = "float"
    per_query: bool = True
    complete_summary: Callable | None = None
    trec_stale: Callable | None = None
    order: Callable | None = None
    extremes: object = "sorted"
    extremes_note: str = ""
    holes: Callable | None = None
    holes_outside: Callable | None = None
    holes_note: str = ""
    holes_check: Callable | None = None
    exact_for: Callable | None = None
    reads: Callable | None = None

    def __post_init__(self):
        # derived once, so that a record states only what its kernel's docstring and bounds do not
        if not self.formula:
            object.__setattr__(self, "formula", " ".join((self.kernel.__doc__ or "").strip().split("\n\n")[0].split()))
        if not self.expectation_formula:
            object.__setattr__(self, "expectation_formula", NO_EXPECTATION.get(self.bounds, ""))

    def bounds_of(self, measure) -> str:
        """'exact', 'montecarlo' or 'none' for ``measure``: the family's ``bounds``, except
        'montecarlo' for a measure of an 'exact' family whose ``exact_for`` rejects it."""
        if self.bounds == "exact" and self.exact_for is not None and not self.exact_for(measure):
            return "montecarlo"
        return self.bounds

    def extremes_of(self, measure) -> str:
        """How IUB and WLB of ``measure`` are found: 'sorted', 'ideal' or 'search' (see ``extremes``)."""
        return self.extremes(measure) if callable(self.extremes) else self.extremes

    @property
    def binary(self) -> bool:
        return self.level == "rel"

    def param(self, name: str) -> Param | None:
        return next((candidate for candidate in self.params if candidate.name == name), None)

    def check(self) -> list:
        """What this record lacks or gets wrong (empty when complete)."""
        exact = self.bounds == "exact"
        choices = {"bounds": BOUNDS, "value": VALUES, "summary": SUMMARIES, "level": ("rel", "gains"),
                   "better": ("higher", "lower"), "cutoff": ("optional", "required", "none")}
        problems = {
            "no kernel": not callable(self.kernel),
            "no gain": not callable(self.gain),
            "bounds='exact' needs an expectation": exact and not callable(self.expectation),
            "exact_for is a callable of an 'exact' family": self.exact_for is not None and not (exact and callable(self.exact_for)),
            "reads is a callable": self.reads is not None and not callable(self.reads),
            f"nicknames must be among {NICKNAMES}": any(n not in NICKNAMES for t in self.trec for n in t.nick),
            "a trec_eval measure in a nickname needs its place in TREC_ORDER": any(t.base not in TREC_ORDER
                                                                                  for t in self.trec if t.nick),
            f"extremes must be one of {EXTREMES}": not callable(self.extremes) and self.extremes not in EXTREMES,
            "no formula or citation": not (self.formula and self.cite),
        }
        return [f"{name} must be one of {allowed}" for name, allowed in choices.items() if getattr(self, name) not in allowed] \
            + [problem for problem, found in problems.items() if found]


@dataclass(frozen=True, kw_only=True)
class Variant:
    """A variant wraps a measure: ``UL2(nDCG@10)`` (every field in docs/architecture.md, "The records");
    its 'all' row is :data:`VARIANT_AGGREGATE` in every command."""

    name: str
    aliases: tuple
    formula: str
    cite: str
    rng: str  # the range of values
    kind: str
    undefined: str = ""  # when the variant is undefined for a query
    normalise: Callable | None = None
    bound: str | None = None
    below_random: float | None = None
    default: bool = False  # in the default variants of eval

    @property
    def random_ranking(self) -> bool:
        """Built on a measure's random-ranking bounds E, IUB, WLB (a bound, a ratio of them, or DB's
        distribution of random rankings): a measure without them refuses it, as does a geometric mean."""
        return self.kind in ("bound", "ratio", "distribution")

    def check(self) -> list:
        problems = {
            f"kind must be one of {VARIANT_KINDS}": self.kind not in VARIANT_KINDS,
            "a ratio variant needs a normalise callable": self.kind == "ratio" and not callable(self.normalise),
            "a bound variant names its bound (E, IUB or WLB)": self.kind == "bound" and self.bound not in ("E", "IUB", "WLB"),
            f"a holes variant names its bound (one of {', '.join(HOLE_BOUNDS)})": self.kind == "holes" and self.bound not in HOLE_BOUNDS,
        }
        return [problem for problem, found in problems.items() if found]


class Gains(dict):
    """A grade -> gain map that can sit in a frozen, hashable measure (never mutated)."""

    def __hash__(self):
        return hash(tuple(sorted(self.items())))


class UnknownMeasure(ValueError):
    """A measure name, parameter or input the measure cannot take (one line, for ``ulnorm-eval: ...``)."""


FAMILIES: dict[str, Family] = {}
VARIANTS: dict[str, Variant] = {}


def register(family: Family) -> Family:
    """Add a family; refuses a duplicate name, alias or trec_eval name, and an incomplete record."""
    taken, trec_taken = _family_names(), {t.base for other in FAMILIES.values() for t in other.trec}
    clash = [f"duplicate measure family {name}" for name in (family.name, *family.aliases) if name in taken]
    clash += [f"duplicate trec_eval name {t.base}" for t in family.trec if t.base in trec_taken]
    if clash:
        raise ValueError(clash[0])
    _refuse(f"measure family {family.name}", family.check())
    FAMILIES[family.name] = family
    return family


def _family_names() -> set:
    return {name for other in FAMILIES.values() for name in (other.name, *other.aliases)}


def _refuse(record: str, problems: list) -> None:
    """An incomplete or inconsistent record is refused with all its problems."""
    if problems:
        raise ValueError(f"{record}: {'; '.join(problems)}")


@dataclass(frozen=True, kw_only=True)
class TextFamily:
    """A summarisation measure (``ulnorm-eval summ``; a document plays a query, a system a run): ``scores``
    the ``score=`` choices (the first the default), ``default``: among ``summ``'s default measures."""

    name: str
    formula: str
    expectation_formula: str
    cite: str
    variants: tuple = ("E", "IUB", "UL1", "UL2", "EB", "EM")
    scores: tuple = ("f", "precision", "recall")
    default: bool = True


TEXT_FAMILIES: dict = {}  # name -> TextFamily, in registration order (core/text_families.py)


def register_text(family: TextFamily) -> TextFamily:
    """Add a summarisation measure; refuses a name taken by any measure or variant, and a variant
    that is not registered."""
    if family.name in _family_names() | set(TEXT_FAMILIES) | set(VARIANTS):
        raise ValueError(f"duplicate measure {family.name}")
    unknown = [variant for variant in family.variants if variant not in VARIANTS]
    if unknown:
        raise ValueError(f"summarisation measure {family.name}: unknown variants {unknown}")
    TEXT_FAMILIES[family.name] = family
    return family


def register_variant(variant: Variant) -> Variant:
    if variant.name in VARIANTS or any(variant.name in other.aliases for other in VARIANTS.values()):
        raise ValueError(f"duplicate variant {variant.name}")
    _refuse(f"variant {variant.name}", variant.check())
    VARIANTS[variant.name] = variant
    return variant

