"""The one registry of measures and variants, and the parser for their names.

A *measure* is a family plus parameters (``nDCG(dcg='exp-log2')@10``); a *variant* wraps a measure
(``UL2(nDCG@10)``).  Each has one canonical string, which is what every output prints and what
``parse`` reads back.  Names follow ir_measures' syntax; trec_eval's names (``ndcg_cut.10,20``,
``map``, ``P_10``) are accepted too and can be printed with ``--names trec``.

Nothing here computes anything: the CLI's help, ``ulnorm-eval measures`` and the README tables are
generated from these records, so they cannot disagree with what is computed.
"""
from __future__ import annotations

import ast
import difflib
import re
from dataclasses import dataclass

__all__ = [
    "Param", "Family", "Measure", "VariantSpec", "Metric", "FAMILIES", "VARIANTS", "parse",
    "parse_many", "UnknownMeasure", "DEFAULT_MEASURES", "DEFAULT_VARIANTS",
]


class UnknownMeasure(ValueError):
    """A name that is neither a registered measure nor one ir_measures knows."""


@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # 'int', 'float', 'str', 'gains'
    default: object
    doc: str
    always_show: bool = False  # print even at its default (RBP's p defines the measure)


@dataclass(frozen=True)
class Family:
    """A measure family: its parameters, formula and citations (no code)."""

    name: str
    params: tuple
    cutoff: str  # 'optional', 'required' or 'none'
    formula: str
    expectation: str  # formula of E(M) under a random permutation, or 'Monte Carlo'
    cite: str
    binary: bool  # reads relevance at a level (-l / rel=) rather than graded gains
    trec: str | None = None  # trec_eval base name, e.g. 'ndcg_cut'

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)


REL = Param("rel", "int", None, "minimum grade counted relevant (default: -l/--rel-level, 1)")
DCG = Param("dcg", "str", "log2", "gain/discount: 'log2' (gain = grade, trec_eval) or 'exp-log2' (gain = 2^grade - 1, seeds)")
GAINS = Param("gains", "gains", None, "explicit gain for some grades, e.g. {0:0,1:1,2:3}; a grade not listed "
              "keeps gain = grade (negative: 0), as trec_eval's ndcg.L=G and ir_measures do")


class Gains(dict):
    """A grade -> gain map that can sit in a frozen, hashable :class:`Measure` (never mutated)."""

    def __hash__(self):
        return hash(tuple(sorted(self.items())))

FAMILIES: dict[str, Family] = {}


def _family(f: Family) -> None:
    if f.name in FAMILIES:
        raise ValueError(f"duplicate measure family {f.name}")
    FAMILIES[f.name] = f


_family(Family(
    "nDCG", (DCG, GAINS), "optional",
    "DCG@k / IDCG@k, DCG@k = sum_{i<=k} gain(d_i) / log2(i+1); IDCG from the query's judged documents sorted by gain",
    "mean(gain over pool) * sum_{i<=min(k,n)} 1/log2(i+1) / IDCG@k (exact, linearity)",
    "Jarvelin & Kekalainen 2002; seed 000 eq. 1-2; seed 003 §2", False, "ndcg_cut"))
_family(Family(
    "DCG", (DCG, GAINS), "optional",
    "sum_{i<=k} gain(d_i) / log2(i+1)",
    "mean(gain over pool) * sum_{i<=min(k,n)} 1/log2(i+1) (exact, linearity)",
    "Jarvelin & Kekalainen 2002; seed 000 eq. 1", False, None))
_family(Family(
    "AP", (REL,), "optional",
    "SP@k / R, R = relevant judged documents of the query (trec_eval map / map_cut)",
    "E[SP@k] / R (exact)", "seed 000 eq. 3-4; seed 004 §2", True, "map_cut"))
_family(Family(
    "SP", (REL,), "optional",
    "sum_{i<=k, d_i relevant} P@i (sum of precision)",
    "(P/n) H_m + P(P-1)/(n(n-1)) (m - H_m), m = min(k, n) (exact; the seeds' k(P/n)^2 with --expectation paper)",
    "seed 000 eq. 4", True, None))
_family(Family(
    "P", (REL,), "required", "|relevant in top k| / k",
    "(P/n) * min(k, n) / k (exact)", "trec_eval P", True, "P"))
_family(Family(
    "R", (REL,), "required", "|relevant in top k| / R",
    "(P/n) * min(k, n) / R (exact)", "trec_eval recall", True, "recall"))
_family(Family(
    "RR", (REL,), "optional", "1 / rank of the first relevant document (0 if none in the top k)",
    "sum_{i<=m} (1/i) C(n-P, i-1)/C(n, i-1) * P/(n-i+1) (exact)", "trec_eval recip_rank", True, "recip_rank"))
_family(Family(
    "Rprec", (REL,), "none", "|relevant in top R| / R",
    "(P/n) * min(R, n) / R (exact)", "trec_eval Rprec", True, "Rprec"))
_family(Family(
    "RBP", (Param("p", "float", 0.8, "persistence", always_show=True), REL, GAINS), "optional",
    "(1-p) sum_{i<=k} p^(i-1) gain(d_i); gain = [grade >= rel] when rel is given, else grade / the largest grade in the qrels",
    "(1-p) mean(gain over pool) sum_{i<=min(k,n)} p^(i-1) (exact)",
    "Moffat & Zobel 2008; seed 004 §2", False, None))

ALIASES = {"MAP": "AP", "MRR": "RR", "NDCG": "nDCG", "Recall": "R", "SumP": "SP"}


@dataclass(frozen=True)
class VariantSpec:
    name: str
    aliases: tuple
    formula: str
    cite: str
    rng: str  # the range of values


VARIANTS: dict[str, VariantSpec] = {v.name: v for v in (
    VariantSpec("E", (), "E[M] under a uniformly random permutation of the pool", "seed 000 RLB; seed 003 REB", "[W, I]"),
    VariantSpec("IUB", (), "M of the ideal ranking of the pool (sorted by gain, descending)", "seed 000 §3.1; seed 003", "[0, 1] for normalised M"),
    VariantSpec("WLB", (), "M of the worst ranking of the pool (sorted by gain, ascending)", "seed 004 §3.1", ">= 0"),
    VariantSpec("UL1", ("UE1",), "(A/I) * (A/(A+E))", "seed 000 eq. 5; seed 003 eq. 5.1", "[0, 1]"),
    VariantSpec("UL2", ("UE2",), "(A-E)/(I-E) if A >= E else (A-E)/E", "seed 000 eq. 6; seed 003 eq. 5.2", "[-1, 1]"),
    VariantSpec("MM", (), "(A-W)/(I-W) (min-max with the worst ranking)", "seed 004 eq. 3.1", "[0, 1]"),
    VariantSpec("EB", (), "A/E (expectation-based)", "seed 004 eq. 3.6", "[0, I/E]"),
    VariantSpec("EM", (), "(A-E)/(I-E) (expectation-max)", "seed 004 eq. 3.11", "(-inf, 1]"),
    VariantSpec("DB", (), "Pr[M(random permutation) <= A] (distribution-based percentile)", "seed 004 eq. 3.12", "[0, 1]"),
    VariantSpec("UEW", (), "(A-E)/(I-E) if A >= E else (A-E)/(E-W): -1 worst, 0 random, 1 ideal", "beyond the seeds", "[-1, 1]"),
    VariantSpec("NRG", (), "M with residual gains G(d) prod_j (1 - seen(pos(d, R_j))) over prior runs R_j, "
                "normalised by the ideal of the judged documents by residual gain (ulnorm-eval nrg)",
                "seed 002 eq. 3-4", "[0, 1] for nDCG, P, RBP"),
    VariantSpec("UC", (), "unique contributions: relevant documents in the top K that no prior run has in its "
                "top K; UC(P@K) = K * NRG(P@K) (ulnorm-eval nrg --unique)", "seed 002 App. B", "[0, K]"),
)}
PRIOR_VARIANTS = ("NRG", "UC")  # need a prior set of runs: computed by nrg.py, not by bounds.py
_VARIANT_ALIASES = {a: v.name for v in VARIANTS.values() for a in (v.name, *v.aliases)}

DEFAULT_MEASURES = ("nDCG@10", "AP", "RBP(p=0.8)")
DEFAULT_VARIANTS = ("E", "IUB", "UL1", "UL2")


def _fmt(v) -> str:
    if isinstance(v, dict):
        return "{" + ",".join(f"{_fmt(k)}:{_fmt(x)}" for k, x in sorted(v.items())) + "}"
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e15:
        return repr(v)  # 0.0 stays a float: 'p=1.0'
    if isinstance(v, str):
        return repr(v)
    return repr(v)


@dataclass(frozen=True)
class Measure:
    """A measure: family name, parameters (a sorted tuple of pairs) and cutoff."""

    family: str
    params: tuple = ()
    cutoff: int | None = None
    foreign: object = None  # an ir_measures measure object, for families computed through it

    def get(self, name: str, default=None):
        for k, v in self.params:
            if k == name:
                return v
        fam = FAMILIES.get(self.family)
        p = fam.param(name) if fam else None
        return p.default if p is not None and default is None else default

    @property
    def native(self) -> bool:
        return self.foreign is None

    def __str__(self) -> str:
        if self.foreign is not None:
            return str(self.foreign)
        fam = FAMILIES[self.family]
        shown = []
        given = dict(self.params)
        for p in fam.params:
            if p.name in given and (given[p.name] != p.default or p.always_show):
                shown.append(f"{p.name}={_fmt(given[p.name])}")
            elif p.name not in given and p.always_show:
                shown.append(f"{p.name}={_fmt(p.default)}")
        s = self.family + (f"({','.join(shown)})" if shown else "")
        return s + (f"@{self.cutoff}" if self.cutoff is not None else "")

    def trec_name(self) -> str:
        """trec_eval's output name where one exists (``ndcg_cut_10``), else the canonical name."""
        fam = FAMILIES.get(self.family)
        # an explicit rel= is not trec_eval's measure (its level is the global -l): keep our name,
        # so `-m AP -m 'AP(rel=2)'` cannot print two `map` rows
        extra = [k for k, v in self.params if v != (fam.param(k).default if fam else None)]
        if self.family == "nDCG" and extra == ["gains"] and self.cutoff is None:
            # trec_eval names a gain-parameterised ndcg by its parameter: ndcg_1=3,2=9,4=4.5
            return "ndcg_" + ",".join(f"{k:g}={v:g}" for k, v in sorted(self.get("gains").items()))
        if fam is None or fam.trec is None or extra:
            return str(self)
        if self.family == "nDCG":
            return "ndcg" if self.cutoff is None else f"ndcg_cut_{self.cutoff}"
        if self.family == "AP":
            return "map" if self.cutoff is None else f"map_cut_{self.cutoff}"
        if self.family == "RR" and self.cutoff is not None:
            return str(self)
        if fam.cutoff == "required":
            return f"{fam.trec}_{self.cutoff}"
        return fam.trec


@dataclass(frozen=True)
class Metric:
    """What one output column holds: a measure, optionally wrapped in a variant."""

    measure: Measure
    variant: str | None = None

    def __str__(self) -> str:
        return f"{self.variant}({self.measure})" if self.variant else str(self.measure)

    def trec_name(self) -> str:
        base = self.measure.trec_name()
        return f"{self.variant.lower()}_{base}" if self.variant else base


# --------------------------------------------------------------------------- parsing

_TREC_DEFAULT_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
_TREC = {  # trec_eval base name -> (family, takes cutoffs)
    "map": ("AP", False), "map_cut": ("AP", True), "ndcg": ("nDCG", False),
    "ndcg_cut": ("nDCG", True), "P": ("P", True), "recall": ("R", True),
    "recip_rank": ("RR", False), "Rprec": ("Rprec", False),
}
_TREC_OUT = re.compile(r"^(map_cut|ndcg_cut|P|recall)_(\d+)$")


def _build(family: str, params: dict, cutoff, text: str) -> Measure:
    fam = FAMILIES[family]
    out = {}
    for k, v in params.items():
        p = fam.param(k)
        if p is None:
            raise UnknownMeasure(f"{text}: {family} has no parameter {k!r} (it takes: "
                                 f"{', '.join(x.name for x in fam.params) or 'none'})")
        out[k] = _coerce(p, v, text)
    if cutoff is not None:
        if fam.cutoff == "none":
            raise UnknownMeasure(f"{text}: {family} takes no @cutoff")
        if not isinstance(cutoff, int) or isinstance(cutoff, bool) or cutoff < 1:
            raise UnknownMeasure(f"{text}: the cutoff must be a positive integer")
    elif fam.cutoff == "required":
        raise UnknownMeasure(f"{text}: {family} needs a cutoff, e.g. {family}@10")
    if family == "nDCG" or family == "DCG":
        if out.get("dcg", "log2") not in ("log2", "exp-log2"):
            raise UnknownMeasure(f"{text}: dcg must be 'log2' or 'exp-log2'")
    if family == "RBP" and not (0 < out.get("p", 0.8) < 1):
        raise UnknownMeasure(f"{text}: p must lie strictly between 0 and 1")
    # drop parameters given at their default and fill in the always-shown ones, so equal measures
    # print and hash alike (RBP == RBP(p=0.8))
    out = {k: v for k, v in out.items() if v != fam.param(k).default or fam.param(k).always_show}
    out = {p.name: p.default for p in fam.params if p.always_show} | out
    return Measure(family, tuple(sorted(out.items())), cutoff)


def _coerce(p: Param, v, text: str):
    try:
        if p.kind == "int":
            if isinstance(v, float) and not v.is_integer():
                raise ValueError
            return int(v)
        if p.kind == "float":
            return float(v)
        if p.kind == "str":
            if not isinstance(v, str):
                raise ValueError
            return v
        if p.kind == "gains":
            if not isinstance(v, dict):
                raise ValueError
            return Gains({int(k) if float(k).is_integer() else float(k): float(x) for k, x in v.items()})
    except (TypeError, ValueError):
        pass
    raise UnknownMeasure(f"{text}: bad value {v!r} for {p.name} ({p.kind})")


def _from_ast(node, text: str):
    """(family or variant name, params, cutoff, inner) from a parsed expression."""
    cutoff = None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        if not isinstance(node.right, ast.Constant):
            raise UnknownMeasure(f"{text}: the cutoff after @ must be a number")
        cutoff = node.right.value
        node = node.left
    if isinstance(node, ast.Name):
        return node.id, {}, cutoff, None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        params = {}
        for kw in node.keywords:
            try:
                params[kw.arg] = ast.literal_eval(kw.value)
            except ValueError:
                raise UnknownMeasure(f"{text}: parameter {kw.arg} must be a literal") from None
        inner = node.args[0] if len(node.args) == 1 else None
        if len(node.args) > 1:
            raise UnknownMeasure(f"{text}: at most one positional argument (the measure of a variant)")
        return node.func.id, params, cutoff, inner
    raise UnknownMeasure(f"{text}: not a measure name")


def _parse_one(text: str, node=None) -> Metric:
    if node is None:
        try:
            node = ast.parse(text.strip(), mode="eval").body
        except SyntaxError:
            raise UnknownMeasure(_unknown_message(text)) from None
    name, params, cutoff, inner = _from_ast(node, text)
    vname = _VARIANT_ALIASES.get(name) or _VARIANT_ALIASES.get(name.upper())
    if inner is not None:
        if vname is None:
            raise UnknownMeasure(f"{text}: {name} is not a variant ({', '.join(VARIANTS)})")
        if params or cutoff is not None:
            raise UnknownMeasure(f"{text}: a variant takes only the measure, e.g. UL2(nDCG@10)")
        m = _parse_one(ast.unparse(inner), inner)
        if m.variant:
            raise UnknownMeasure(f"{text}: variants do not nest")
        return Metric(m.measure, vname)
    fam = ALIASES.get(name, name)
    if fam in FAMILIES:
        return Metric(_build(fam, params, cutoff, text))
    return Metric(_foreign(text))


def _foreign(text: str) -> Measure:
    """A measure ir_measures knows but we do not compute natively (ERR, Bpref, infAP, ...)."""
    try:
        import ir_measures
        m = ir_measures.parse_measure(text)
    except Exception:
        raise UnknownMeasure(_unknown_message(text)) from None
    return Measure(m.NAME, tuple(sorted((k, repr(v)) for k, v in m.params.items())), None, foreign=m)


def _known_names() -> list[str]:
    names = list(FAMILIES) + list(ALIASES) + list(VARIANTS) + list(_TREC)
    names += ["ERR", "Bpref", "infAP", "Success", "Judged", "NumRel", "NumRet", "alpha_nDCG"]
    return list(dict.fromkeys(names))  # Rprec is both a family and a trec name: suggest it once


def _unknown_message(text: str) -> str:
    head = re.split(r"[(@.]", text.strip(), maxsplit=1)[0]
    close = difflib.get_close_matches(head, _known_names(), n=3, cutoff=0.5)
    if not close:
        close = difflib.get_close_matches(head.lower(), [n.lower() for n in _known_names()], n=3, cutoff=0.5)
        lower = {n.lower(): n for n in _known_names()}
        close = [lower[c] for c in close]
    hint = f"; did you mean {' or '.join(close)}?" if close else "; see 'ulnorm-eval measures'"
    return f"unknown measure {text!r}{hint}"


def _parse_trec(text: str) -> list[Metric] | None:
    """trec_eval spellings: ``ndcg_cut.10,20``, ``P.5``, ``map``, ``ndcg_cut_10``, ``ndcg.1=3,2=9``."""
    m = _TREC_OUT.match(text)
    if m:
        fam = _TREC[m.group(1)][0]
        return [Metric(_build(fam, {}, int(m.group(2)), text))]
    base, _, arg = text.partition(".")
    if base not in _TREC:
        return None
    fam, cuts = _TREC[base]
    if base == "ndcg" and arg:  # ndcg.1=3,2=9: a gain map
        try:
            gains = {float(a.split("=")[0]): float(a.split("=")[1]) for a in arg.split(",")}
        except (ValueError, IndexError):
            raise UnknownMeasure(f"{text}: ndcg takes grade=gain pairs, e.g. ndcg.1=3,2=9") from None
        gains = {int(k) if k.is_integer() else k: v for k, v in gains.items()}
        return [Metric(_build(fam, {"gains": gains}, None, text))]
    if not cuts:
        if arg:
            raise UnknownMeasure(f"{text}: {base} takes no parameters")
        return [Metric(_build(fam, {}, None, text))]
    values = _TREC_DEFAULT_CUTOFFS if not arg else arg.split(",")
    out = []
    for v in values:
        try:
            f = float(v)
        except ValueError:
            raise UnknownMeasure(f"{text}: cutoff {v!r} is not a number") from None
        if not f.is_integer() or f < 1:
            # trec_eval truncates non-integer cutoffs (ndcg_cut.23.4 -> 23)
            f = float(int(f))
        out.append(Metric(_build(fam, {}, int(f), text)))
    # trec_eval sorts a measure's cutoffs (P.5,7,3 prints P_3, P_5, P_7); drop-in output must too
    return sorted(out, key=lambda m: m.measure.cutoff)


def parse(text: str) -> Metric:
    """Parse one name into a Metric; raises UnknownMeasure (with a suggestion) when unknown."""
    got = parse_many(text)
    if len(got) != 1:
        raise UnknownMeasure(f"{text}: names {len(got)} measures, expected one")
    return got[0]


def parse_many(text: str) -> list[Metric]:
    """Parse a name that may stand for several measures (trec_eval's ``P.5,10``)."""
    text = text.strip()
    if not text:
        raise UnknownMeasure("empty measure name")
    trec = _parse_trec(text)
    if trec is not None:
        return trec
    return [_parse_one(text)]


def with_variant(metric: Metric, variant: str) -> Metric:
    v = _VARIANT_ALIASES.get(variant) or _VARIANT_ALIASES.get(variant.upper())
    if v is None:
        close = difflib.get_close_matches(variant.upper(), list(_VARIANT_ALIASES), n=2)
        hint = f"; did you mean {' or '.join(close)}?" if close else ""
        raise UnknownMeasure(f"unknown variant {variant!r} (known: {', '.join(VARIANTS)}){hint}")
    return Metric(metric.measure, v)
