"""The variant records: bounds, normalisations, the distribution-based percentile, prior-run variants.
A normalisation is a record below plus its array function in :mod:`ulnorm_eval.core.normalise`.
"""
from __future__ import annotations

from .records import VARIANTS, Variant, register_variant

__all__ = ["VARIANTS", "DEFAULT_VARIANTS", "PRIOR_VARIANTS", "BOUND_VARIANTS", "HOLE_VARIANTS", "BOOTSTRAP_VARIANTS", "CONDENSED_VARIANTS", "variant_names",
           "DB_ENUMERATE_LIMIT", "DB_ENUMERATE_ELEMENTS", "db_method"]

# DB is enumerated within these limits, else Monte Carlo (core/permutations.py; `measures` prints them)
DB_ENUMERATE_LIMIT = 5040
DB_ENUMERATE_ELEMENTS = 1_000_000


def db_method() -> str:
    """How DB is obtained, from the limits the implementation applies."""
    return (f"DB exact (enumerated) when the pool's gain classes have at most {DB_ENUMERATE_LIMIT:,} distinct "
            f"arrangements (and arrangements x pool size <= {DB_ENUMERATE_ELEMENTS:,}), "
            "else Monte Carlo (--permutations, --seed)")

_BEYOND = " (--pool run: A is an ordering of the pool; other pools: beyond where A < W or A > I)"  # A below the worst ordering of a pool the run is not an ordering of
_UNDEF = "every ranking of the pool scores alike (I = E)"


def _deferred(name: str):
    """The normalisation ``name`` of core/normalise.py, imported when first applied: this module stays
    light (the registry, --help and the docs list the variants without numpy)."""
    def normalise(A, I, E, W):
        from . import normalise as module

        return getattr(module, name)(A, I, E, W)

    normalise.__name__ = name
    return normalise


register_variant(Variant(
    name="E", aliases=(), formula="E[M] under a uniformly random permutation of the pool",
    cite="Karmaker & Feng 2022 RLB; Feng 2023 REB", rng="[W, I]", kind="bound", bound="E", default=True))
register_variant(Variant(
    name="IUB", aliases=(), formula="the maximum of M over the orderings of the pool (the pool sorted by gain, descending, where "
    "the measure's record proves it; else enumerated)",
    cite="Karmaker & Feng 2022 §4; Feng 2023", rng="[0, 1] for normalised M", kind="bound", bound="IUB"))
register_variant(Variant(
    name="WLB", aliases=(), formula="the minimum of M over the orderings of the pool (the pool sorted by gain, ascending, where "
    "the measure's record proves it; else enumerated)",
    cite="Westerborg 2022 §3.1", rng=">= 0", kind="bound", bound="WLB"))
register_variant(Variant(
    name="UL1", aliases=("UE1",), formula="(A/I) * (A/(A+E))", cite="Karmaker & Feng 2022 eq. 5; Feng 2023 eq. 5.1", rng="[0, 1]", kind="ratio",
    undefined=_UNDEF + ", I = 0 or A + E = 0", normalise=_deferred("ul1")))
register_variant(Variant(
    name="UL2", aliases=("UE2",), formula="(A-E)/(I-E) if A >= E else (A-E)/E", cite="Karmaker & Feng 2022 eq. 6; Feng 2023 eq. 5.2",
    rng="[-1, 1]", kind="ratio", undefined=_UNDEF + ", or A < E = 0", normalise=_deferred("ul2"), below_random=0.0))
register_variant(Variant(
    name="MM", aliases=(), formula="(A-W)/(I-W) (min-max with the worst ranking)", cite="Westerborg 2022 eq. 3.1", rng="[0, 1]" + _BEYOND, kind="ratio",
    undefined=_UNDEF, normalise=_deferred("mm")))
register_variant(Variant(
    name="EB", aliases=(), formula="A/E (expectation-based)", cite="Westerborg 2022 eq. 3.6", rng="[0, I/E]", kind="ratio", undefined=_UNDEF + " or E = 0",
    normalise=_deferred("eb"), below_random=1.0))
register_variant(Variant(
    name="EM", aliases=(), formula="(A-E)/(I-E) (expectation-max; UL2 at and above E)", cite="Westerborg 2022 eq. 3.11",
    rng="[(W-E)/(I-E), 1]" + _BEYOND, kind="ratio", undefined=_UNDEF, normalise=_deferred("em"), below_random=0.0,
    default=True))  # the default: its per-query mean is 0 for a random ordering (docs/bounds.md, "The decision")
register_variant(Variant(
    name="DB", aliases=(), formula="Pr[M(random permutation) <= A] (distribution-based percentile)", cite="Westerborg 2022 eq. 3.12",
    rng="[0, 1]", kind="distribution", undefined=_UNDEF))
register_variant(Variant(
    name="UEW", aliases=(), formula="(A-E)/(I-E) if A >= E else (A-E)/(E-W): -1 worst, 0 random, 1 ideal",
    cite="beyond the papers cited", rng="[-1, 1]" + _BEYOND, kind="ratio", undefined=_UNDEF + ", or A < E = W", normalise=_deferred("uew"), below_random=0.0))
register_variant(Variant(
    name="NRG", aliases=(), formula="M with residual gains G(d) prod_j (1 - seen(pos(d, R_j))) over prior runs R_j, "
    "normalised by the ideal of the judged documents by residual gain (ulnorm-eval nrg)",
    cite="Normalized Residual Gain (SIGIR-AP 2024) eq. 3-4", rng="[0, 1] for nDCG, P, RBP", kind="prior"))
register_variant(Variant(
    name="UC", aliases=(), formula="unique contributions: relevant documents in the top K that no prior run has in its "
    "top K; UC(P@K) = K * NRG(P@K) (ulnorm-eval nrg --unique)",
    cite="Normalized Residual Gain (SIGIR-AP 2024) App. B", rng="[0, K]", kind="prior"))

_HOLES = ("M over every grade 0..G (the qrels' largest) of the unjudged documents the runs of the command retrieved (one "
          "grade each, shared by the runs), judged ones fixed; IDCG and R change with the assignment (--holes: open=est by "
          "default, closed, open, open=N or open=P% says which other documents may be relevant)")
_NO_HOLES = "the measure has no hole bounds (ulnorm-eval measures)"
register_variant(Variant(
    name="LB", aliases=(), formula="the smallest " + _HOLES, cite="beyond the papers cited (docs/holes.md)",
    rng="[min M, M]", kind="holes", undefined=_NO_HOLES, bound="LB"))
register_variant(Variant(
    name="UB", aliases=(), formula="the largest " + _HOLES, cite="beyond the papers cited (docs/holes.md)",
    rng="[M, max M]", kind="holes", undefined=_NO_HOLES, bound="UB"))

_BOOT = ("grades of the unjudged documents within the cutoff drawn from a prior (--holes-prior: the query's "
         "judgments (default), the run's judged documents within the cutoff, or their mix), --holes-samples samples seeded by --seed")
_BOOT_CITE = "Froebe, Gienapp, Potthast & Hagen 2023 (bootstrapped nDCG; docs/holes.md says where we depart)"
register_variant(Variant(
    name="BS", aliases=(), formula="the mean of M over bootstrap samples: " + _BOOT, cite=_BOOT_CITE, rng="[LB(M), UB(M)]", kind="holes",
    undefined=_NO_HOLES, bound="BS"))
register_variant(Variant(
    name="BSLO", aliases=(), formula="the 2.5th percentile of M over the bootstrap samples of BS (with BSHI the samples' spread, not a "
    "confidence interval: how often it holds later judgments differs by measure and collection, docs/holes.md)", cite=_BOOT_CITE,
    rng="[LB(M), UB(M)]", kind="holes", undefined=_NO_HOLES, bound="BSLO"))
register_variant(Variant(
    name="BSHI", aliases=(), formula="the 97.5th percentile of M over the bootstrap samples of BS (with BSLO the samples' spread, not a "
    "confidence interval; docs/holes.md)", cite=_BOOT_CITE, rng="[LB(M), UB(M)]", kind="holes", undefined=_NO_HOLES, bound="BSHI"))

register_variant(Variant(
    name="CL", aliases=("Condensed",), formula="M on the condensed list: the ranking without its unjudged documents (not in the qrels, "
    "or judged with a negative grade), ranks closed up (trec_eval -J for one measure)",
    cite="Sakai 2007 (condensed lists: AP', nDCG')", rng="as M", kind="condensed"))

DEFAULT_MEASURES = ("nDCG@10", "AP", "RBP(p=0.8)")  # without -m (here: --help needs them without numpy)
DEFAULT_WORLD = "open=est"  # --holes alone and the library's: the world whose bounds held on docs/holes.md's benchmarks
DEFAULT_VARIANTS = tuple(variant.name for variant in VARIANTS.values() if variant.default)
PRIOR_VARIANTS = tuple(variant.name for variant in VARIANTS.values() if variant.kind == "prior")  # computed by analysis.nrg
BOUND_VARIANTS = tuple(variant.name for variant in VARIANTS.values() if variant.kind == "bound")
HOLE_VARIANTS = tuple(variant.name for variant in VARIANTS.values() if variant.kind == "holes")  # core.holes
BOOTSTRAP_VARIANTS = tuple(variant.name for variant in VARIANTS.values() if variant.kind == "holes" and variant.bound not in ("LB", "UB"))
CONDENSED_VARIANTS = tuple(variant.name for variant in VARIANTS.values() if variant.kind == "condensed")  # pipeline.blocks


def variant_names(kinds=("bound", "ratio", "distribution")) -> str:
    """'e, iub, wlb, ...': the variants of the given kinds, lower case, for help texts."""
    return ", ".join(variant.name.lower() for variant in VARIANTS.values() if variant.kind in kinds)
