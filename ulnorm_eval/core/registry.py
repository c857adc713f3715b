"""Measures and variants by name: the parser, and :class:`Measure`/:class:`Metric`, what it returns.
A *measure* is a family plus parameters (``nDCG(dcg='exp-log2')@10``), a *variant* wraps one
(``UL2(nDCG@10)``); each has one canonical string, printed and read back (ir_measures' syntax, and
trec_eval's names: ``ndcg_cut.10,20``, ``map``, ``P_10``), derived from the records.
"""
from __future__ import annotations

import ast
import contextlib
import dataclasses
import math
import re
from dataclasses import dataclass, field

from . import measures as _measures  # noqa: F401  (registers the native families)
from .records import (FAMILIES, NICKNAMES, TEXT_FAMILIES, TREC_ORDER, VARIANT_AGGREGATE, VARIANTS, Family, Gains, Param,
                      TrecName, UnknownMeasure, Variant)
from .variants import BOUND_VARIANTS, DEFAULT_MEASURES, DEFAULT_VARIANTS, PRIOR_VARIANTS

__all__ = [
    "temporary_records",
    "Param", "Family", "Measure", "Variant", "Metric", "FAMILIES", "VARIANTS", "parse",
    "parse_many", "trec_repeats", "UnknownMeasure", "DEFAULT_MEASURES", "DEFAULT_VARIANTS", "PRIOR_VARIANTS",
    "BOUND_VARIANTS", "ALIASES", "TREC_NAMES", "with_variant", "Gains", "expand_names", "NICKNAME_MEASURES",
    "paper_measure",
]


ALIASES = {a: f.name for f in FAMILIES.values() for a in f.aliases}
_VARIANT_ALIASES = {a: v.name for v in VARIANTS.values() for a in (v.name, *v.aliases)}
TREC_NAMES: dict[str, tuple] = {t.base: (f.name, t) for f in FAMILIES.values() for t in f.trec}
# ir_measures names offered as suggestions for a misspelt name (computed through ir_measures)
IRM_SUGGESTIONS = ("alpha_nDCG", "AP_IA", "nERR_IA", "SDCG", "StRecall")
_RANK = {b: i for i, b in enumerate(TREC_ORDER)}
# trec_eval's -m nicknames: every trec_eval name in the nickname, in trec_eval's table order
NICKNAME_MEASURES = {n: sorted((t.base for f in FAMILIES.values() for t in f.trec if n in t.nick), key=_RANK.get)
                     for n in NICKNAMES}


def _fmt(v) -> str:
    if isinstance(v, tuple):  # a discount vector: nDCG(discount=[1.0,0.5])
        return "[" + ",".join(_fmt(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ",".join(f"{_fmt(k)}:{_fmt(x)}" for k, x in sorted(v.items())) + "}"
    return repr(v)  # 0.0 stays a float: 'p=1.0'; a str is quoted


@dataclass(frozen=True, kw_only=True)
class Measure:
    """A measure: family name, parameters (a sorted tuple of pairs) and cutoff."""

    family: str
    params: tuple = ()
    cutoff: int | None = None
    foreign: object = None  # an ir_measures measure object, for families computed through it
    # trec_eval's output name as typed (ndcg.1=3.0,2=9 prints ndcg_1=3.0,2=9, set_F.0.50 set_F_0.50, as
    # trec_eval echoes its parameters); not part of the measure's identity
    typed: str = field(default="", compare=False, repr=False)

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
        given = dict(self.params)
        at = next((p for p in fam.params if p.at), None)
        if at is not None:  # ir_measures' IPrec@0.2: the parameter is written after @
            params = "(" + ",".join(f"{k}={_fmt(v)}" for k, v in self.params if k != at.name) + ")"
            return self.family + (params if params != "()" else "") + f"@{given.get(at.name, at.default):g}"
        values = [(p, given.get(p.name, p.default)) for p in fam.params]
        shown = [f"{p.name}={_fmt(value)}" for p, value in values if value != p.default or p.always_show]
        s = self.family + (f"({','.join(shown)})" if shown else "")
        return s + (f"@{self.cutoff}" if self.cutoff is not None else "")

    @property
    def record(self) -> Family | None:
        """The family record of a native measure (None for one computed through ir_measures)."""
        return FAMILIES.get(self.family) if self.foreign is None else None

    @property
    def bounds(self) -> str:
        """'exact', 'montecarlo' or 'none' (``Family.bounds_of``; ir_measures' measures: Monte Carlo)."""
        return self.record.bounds_of(self) if self.record else "montecarlo"

    @property
    def summary(self) -> str:
        return self.record.summary if self.record else "mean"

    @property
    def lower_better(self) -> bool:
        """Whether a smaller value is a better run (the family's ``better``; ir_measures' measures: higher)."""
        return self.record is not None and self.record.better == "lower"

    def trec_name(self) -> str:
        """trec_eval's output name (``ndcg_cut_10``): the first of the family's TrecName records that
        fits; else (an explicit rel=, say: trec_eval's level is the global -l) the canonical name."""
        fam = self.record
        if fam is None:
            return str(self)
        if self.typed:
            return self.typed
        given = {k: v for k, v in self.params if v != fam.param(k).default}
        for t in fam.trec:
            if t.param == "cutoff":
                ok = not given and (self.cutoff is None) == (t.arg == "none")
                value = self.cutoff
            else:
                ok = self.cutoff is None and set(given) <= {t.param}
                value = given.get(t.param) if t.arg in ("map", "one", "raw") else self.get(t.param)
            if ok:
                return t.output(None if t.arg == "none" else value)
        return str(self)


@dataclass(frozen=True)
class Metric:
    """What one output column holds: a measure, optionally wrapped in a variant."""

    measure: Measure
    variant: str | None = None

    def __str__(self) -> str:
        return f"{self.variant}({self.measure})" if self.variant else str(self.measure)

    @property
    def own_scale(self) -> bool:
        """The values are the measure's own under other judgments (the hole variants; CL): they take the
        measure's summary rule and number format (other variants only measures whose 'all' row is a mean)."""
        return not self.variant or VARIANTS[self.variant].kind in ("holes", "condensed")

    @property
    def summary(self) -> str:
        """How the 'all' row is formed: the family's rule for the measure and an :attr:`own_scale` variant
        (GMAP's LB a geometric mean), else records.VARIANT_AGGREGATE."""
        return self.measure.summary if self.own_scale else VARIANT_AGGREGATE

    def trec_name(self) -> str:
        base = self.measure.trec_name()
        return f"{self.variant.lower()}_{base}" if self.variant else base

    @property
    def zscored(self) -> bool:
        """Whether, under trec_eval's -Z, its values are z-scores and its name takes a 'Z': the plain numeric
        measures (pipeline/blocks.py zscore_values converts them)."""
        record = self.measure.record
        return not self.variant and (record is None or record.value != "text")


# --------------------------------------------------------------------------- parsing

def _build(family: str, params: dict, cutoff, text: str) -> Measure:
    fam = FAMILIES[family]
    params, cutoff = _keyword_cutoff(fam, params, cutoff, text)
    out = {}
    for k, v in params.items():
        p = fam.param(k)
        if p is None:
            raise UnknownMeasure(f"{text}: {family} has no parameter {k!r} (it takes: "
                                 f"{', '.join(x.name for x in fam.params) or 'none'})")
        out[k] = _coerce(p, v, text)
        if p.choices and (isinstance(out[k], str) or p.kind == "int") and out[k] not in p.choices:  # a discount may be a vector
            raise UnknownMeasure(f"{text}: {k} must be {' or '.join(repr(c) for c in p.choices)}")
    at = next((p for p in fam.params if p.at), None)
    if cutoff is not None and at is not None:  # IPrec@0.2 is IPrec(recall=0.2)
        if at.name in params:
            raise UnknownMeasure(f"{text}: {at.name} given twice")
        return _build(family, {**params, at.name: cutoff}, None, text)
    _check_cutoff(fam, cutoff, text)
    why = fam.validate(out, cutoff) if fam.validate else None
    if why:
        raise UnknownMeasure(f"{text}: {why}")
    # drop parameters given at their default and fill in the always-shown ones, so equal measures
    # print and hash alike (RBP == RBP(p=0.8))
    out = {k: v for k, v in out.items() if v != fam.param(k).default or fam.param(k).always_show}
    out = {p.name: p.default for p in fam.params if p.always_show} | out
    return Measure(family=family, params=tuple(sorted(out.items())), cutoff=cutoff)


def _keyword_cutoff(fam, params: dict, cutoff, text: str) -> tuple:
    """ir_measures' keyword: P(cutoff=5) is P@5 (for a family without a parameter named cutoff)."""
    if "cutoff" not in params or fam.param("cutoff") is not None:
        return params, cutoff
    if cutoff is not None:
        raise UnknownMeasure(f"{text}: cutoff given twice")
    params = dict(params)
    cutoff = params.pop("cutoff")
    if isinstance(cutoff, float) and cutoff.is_integer():
        cutoff = int(cutoff)
    return params, cutoff


def _check_cutoff(fam, cutoff, text: str) -> None:
    if cutoff is not None:
        if fam.cutoff == "none":
            raise UnknownMeasure(f"{text}: {fam.name} takes no @cutoff")
        if not isinstance(cutoff, int) or isinstance(cutoff, bool) or cutoff < 1:
            raise UnknownMeasure(f"{text}: the cutoff must be a positive integer")
    elif fam.cutoff == "required":
        raise UnknownMeasure(f"{text}: {fam.name} needs a cutoff, e.g. {fam.name}@10")


def _coerce(p: Param, v, text: str):
    if v is None and p.default is None:
        return None  # gains=None: the parameter's default, spelt out
    if p.kind == "discount":
        return _discount(p, v, text)
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
            gains = Gains({float(k): float(x) for k, x in v.items()})
    except (TypeError, ValueError, OverflowError):
        raise UnknownMeasure(f"{text}: bad value {v!r} for {p.name} ({p.kind})") from None
    if not all(map(math.isfinite, [*gains, *gains.values()])):  # an infinite gain makes DCG and its ideal inf/inf
        raise UnknownMeasure(f"{text}: {p.name}: grades and gains must be finite numbers")
    return Gains({int(k) if k.is_integer() else k: x for k, x in gains.items()})


def _discount(p: Param, v, text: str):
    """A named discount, or the factors of ranks 1, 2, ... (a tuple: hashable, printed as a list)."""
    if isinstance(v, str) and v in p.choices:
        return v
    if isinstance(v, (list, tuple)) and v and not any(isinstance(x, (bool, str)) for x in v):
        try:
            d = tuple(float(x) for x in v)
        except (TypeError, ValueError, OverflowError):
            d = ()
        if d and all(math.isfinite(x) and x >= 0 for x in d):
            return d
    raise UnknownMeasure(f"{text}: discount must be {' or '.join(map(repr, p.choices))}, or a list of finite "
                         "factors >= 0 for ranks 1, 2, ... (0 past its end), e.g. [1,0.63,0.5]")


def _from_ast(node, text: str):
    """(family or variant name, params, cutoff, inner) from a parsed expression."""
    cutoff = None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        if isinstance(node.right, ast.UnaryOp) and isinstance(node.right.operand, ast.Constant):
            raise UnknownMeasure(f"{text}: the cutoff must be a positive integer")  # nDCG@-1
        if not isinstance(node.right, ast.Constant):
            raise UnknownMeasure(f"{text}: the cutoff after @ must be a number")
        cutoff = node.right.value
        node = node.left
    if isinstance(node, ast.Name):
        return node.id, {}, cutoff, None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        params = {}
        for kw in node.keywords:
            if kw.arg is None or kw.arg in params:  # RBP(p=0.8,p=0.9): which one was meant?
                raise UnknownMeasure(f"{text}: parameter {kw.arg or '**'} given twice" if kw.arg
                                     else f"{text}: parameters must be named, e.g. p=0.9")
            try:
                params[kw.arg] = ast.literal_eval(kw.value)
            except ValueError:
                raise UnknownMeasure(f"{text}: parameter {kw.arg} must be a literal") from None
            if isinstance(kw.value, ast.Dict) and len(params[kw.arg]) < len(kw.value.keys):  # {1:2, 1:3}
                raise UnknownMeasure(f"{text}: a key of {kw.arg} is given twice")
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
    try:  # ir_measures checks parameters only when it computes, with an assert
        m.validate_params()
    except (AssertionError, TypeError, ValueError) as exc:
        if "<object object at 0x" not in str(exc):  # a value given and refused; a missing one is
            # left to the computation (after -l is checked), which refuses it in one line too
            raise UnknownMeasure(f"{text}: ir_measures refuses its parameters: {exc or 'invalid'}") from None
    return Measure(family=m.NAME, params=tuple(sorted((k, repr(v)) for k, v in m.params.items())), foreign=m)


def _known_names() -> list[str]:
    """Every name, each family followed by its aliases, in registration order (ties between equally
    close suggestions go to the earlier name)."""
    names = [n for f in FAMILIES.values() for n in (f.name, *f.aliases)] + list(VARIANTS) + list(TREC_NAMES)
    names += list(IRM_SUGGESTIONS)
    return list(dict.fromkeys(names))  # Rprec is both a family and a trec name: suggest it once


def _close(word: str, names: list, n: int = 3, cutoff: float = 0.5) -> list:
    """difflib's close matches, ties broken by the order of ``names`` (not by string order)."""
    import difflib  # only for an unknown name's suggestions: not at start-up

    m = difflib.SequenceMatcher()
    m.set_seq2(word)
    scored = []
    for i, x in enumerate(names):
        m.set_seq1(x)
        r = m.ratio()
        if r >= cutoff:
            scored.append((-r, i, x))
    return [x for _, _, x in sorted(scored)[:n]]


def _unknown_message(text: str) -> str:
    text = text.strip()
    head = re.split(r"[(@.]", text, maxsplit=1)[0]
    close = _close(head, _known_names())
    if not close:
        lower = {}
        for n in _known_names():
            lower.setdefault(n.lower(), n)
        close = [lower[c] for c in _close(head.lower(), list(lower))]
    hint = f"; did you mean {' or '.join(close)}?" if close else "; see 'ulnorm-eval measures'"
    return f"unknown measure {text!r}{hint}"


def _trec_value(t: TrecName, v: str, text: str):
    try:
        value = float(v)
    except ValueError:
        raise UnknownMeasure(f"{text}: {'cutoff' if t.param == 'cutoff' else t.param} {v!r} is not a number") from None
    return value if t.kind == "float" else int(value)  # trec_eval truncates non-integer values (ndcg_cut.23.4 -> 23)


def _trec_measure(fam: str, t: TrecName, value, text: str, typed: str = "") -> Metric:
    if t.param == "cutoff":
        return Metric(_build(fam, {}, value, text))
    m = _build(fam, {} if value is None else {t.param: value}, None, text)
    return Metric(dataclasses.replace(m, typed=typed) if typed else m)


def _parse_trec(text: str) -> list[Metric] | None:
    """trec_eval spellings, from the families' TrecName tables: ``ndcg_cut.10,20``, ``P.5``, ``map``,
    output names such as ``ndcg_cut_10``, and parameter maps such as ``ndcg.1=3,2=9``."""
    printed = _parse_trec_output_name(text)
    if printed is not None:
        return printed
    if text in NICKNAME_MEASURES:  # all_trec, official, set
        return [m for base in NICKNAME_MEASURES[text] for m in _parse_trec(base)]
    base, _, arg = text.partition(".")
    if base not in TREC_NAMES:
        return None
    fam, t = TREC_NAMES[base]
    if t.arg == "none" and arg:
        raise UnknownMeasure(f"{text}: {base} takes no parameters")
    if t.arg in ("none", "raw"):  # utility.2,-1,0,0 / 11pt_avg..25,.5: the text is the parameter
        return [_trec_measure(fam, t, arg or None, text)]
    if t.arg == "one":  # set_F.0.5 / relstring.20: one value, printed as typed
        return [_trec_measure(fam, t, _trec_value(t, arg, text) if arg else None, text, f"{base}_{arg}" if arg else "")]
    return (_trec_map if t.arg == "map" else _trec_values)(fam, t, (base, arg), text)


def _parse_trec_output_name(text: str) -> list[Metric] | None:
    """A name as trec_eval prints it: P_10, map_cut_100; set_F_0.50, ndcg_1=3,2=9, utility_2,-1,0,0
    (printed as typed); None for any other."""
    for base, (fam, t) in TREC_NAMES.items():  # an output name: P_10, map_cut_100
        if t.arg == "each" and text.startswith(base + "_"):
            rest = text[len(base) + 1:]
            if re.fullmatch(r"\d+" if t.kind == "int" else r"\d+(\.\d+)?", rest):
                return [_trec_measure(fam, t, int(rest) if t.kind == "int" else float(rest), text)]
    # the longest base first (ndcg_rel_1=3,2=1 is ndcg_rel's, not ndcg's)
    if text.partition(".")[0] in TREC_NAMES or text in NICKNAME_MEASURES:
        return None  # a trec_eval name itself (rbp_resid.p=0.7 is rbp_resid's, not rbp's)
    for base, (fam, t) in sorted(TREC_NAMES.items(), key=lambda kv: -len(kv[0])):
        if t.arg in ("one", "map", "raw") and text.startswith(base + "_") and len(text) > len(base) + 1:
            rest = text[len(base) + 1:]
            if (t.arg == "map" and "=" in rest) or (t.arg != "map" and re.fullmatch(r"[-+0-9.,eE]+", rest)):
                return _parse_trec(f"{base}.{rest}")
    return None


def _trec_map(fam, t, typed: tuple, text: str) -> list:
    """ndcg.1=3,2=9: a grade -> value map (rbp.p=0.8: a parameter among the pairs)."""
    base, arg = typed
    if not arg:
        return [_trec_measure(fam, t, None, text)]
    named = {}
    try:
        items = [a.split("=") for a in arg.split(",")]
        named = {k: float(v) for k, v in items if k in t.keys}
        pairs = {float(k): float(v) for k, v in items if k not in t.keys}
    except ValueError:
        raise UnknownMeasure(f"{text}: {base} takes grade={t.value_name} pairs, e.g. {base}.1=3,2=9") from None
    if len(named) + len(pairs) < len(items):
        raise UnknownMeasure(f"{text}: a grade is given twice")
    gains = {int(k) if k.is_integer() else k: v for k, v in pairs.items()} or None
    m = _build(fam, named | ({t.param: gains} if gains else {}), None, text)
    return [Metric(dataclasses.replace(m, typed=f"{base}_{arg}"))]


def _trec_values(fam, t, typed: tuple, text: str) -> list:
    """P.5,10 / ndcg_cut.10,20 (each value a measure; none: trec_eval's defaults)."""
    arg = typed[1]
    values = t.defaults if not arg else [_trec_value(t, v, text) for v in arg.split(",")]
    if t.param == "cutoff" and any(v < 1 for v in values):
        raise UnknownMeasure(f"{text}: cutoffs must be positive")
    if len(set(values)) != len(values):
        raise UnknownMeasure(f"{text}: a value is given twice")
    out = [_trec_measure(fam, t, v, text) for v in values]
    # trec_eval sorts a measure's values (P.5,7,3 prints P_3, P_5, P_7); drop-in output must too
    return sorted(out, key=lambda m: m.measure.cutoff if t.param == "cutoff" else m.measure.get(t.param))


def parse(text: str) -> Metric:
    """Parse one name into a Metric; raises UnknownMeasure (with a suggestion) when unknown."""
    got = parse_many(text)
    if len(got) != 1:
        raise UnknownMeasure(f"{text}: names {len(got)} measures, expected one")
    return got[0]


def parse_many(text: str) -> list[Metric]:
    """Parse a name that may stand for several measures (trec_eval's ``P.5,10``).  A name is read in any
    case when that is unambiguous (:func:`_parse_folded`: ``ndcg@10``, ``p@10``, ``rbp(p=0.8)``)."""
    text = text.strip()
    if not text:
        raise UnknownMeasure("empty measure name")
    try:
        return _parse_exact(text)
    except UnknownMeasure as exc:
        return _parse_folded(text, exc)


def _spellings() -> list[str]:
    """Every name as the records spell it: families and their aliases, trec_eval names, variants."""
    return list(dict.fromkeys([n for f in FAMILIES.values() for n in (f.name, *f.aliases)] + list(TREC_NAMES)
                              + list(_VARIANT_ALIASES)))


def _parse_folded(text: str, error: UnknownMeasure) -> list[Metric]:
    """``text`` whose leading name is a record's name in another case (``ndcg@10``), read with each spelling
    that fits, which must agree (``Rbp``: refused); none: ``error``, or the first spelling's own error."""
    found, errors = {}, []
    for name in _spellings():
        head, rest = text[:len(name)], text[len(name):]
        if head == name or head.casefold() != name.casefold() or rest[:1].isalnum():
            continue
        try:
            found.setdefault(tuple(_parse_exact(name + rest)), name + rest)
        except UnknownMeasure as exc:  # said of the text as typed
            errors.append(UnknownMeasure(str(exc).replace(name + rest, text)))
    if len(found) > 1:
        raise UnknownMeasure(f"{text!r} is ambiguous without its case: " + " or ".join(
            f"{spelt} ({', '.join(map(str, metrics))})" for metrics, spelt in found.items()))
    if found:
        return list(next(iter(found)))
    raise errors[0] if errors and str(error).startswith("unknown measure") else error


def _parse_exact(text: str) -> list[Metric]:
    """:func:`parse_many` for names spelt as the records spell them."""
    try:
        trec = _parse_trec(text)
        if trec is not None:
            return trec
        try:
            return [_parse_one(text)]
        except UnknownMeasure as exc:
            wrapped = _parse_wrapped(text)  # UL2(map), UL2(ndcg_cut.10), ul2_map: printed names
            if wrapped is None:
                raise exc from None
            return wrapped
    except UnknownMeasure:
        raise
    except Exception as exc:  # a value no check foresaw: still one line, never a traceback
        raise UnknownMeasure(f"{text}: {exc}") from None


_WRAPPED = re.compile(r"([A-Za-z][A-Za-z0-9]*)\((.+)\)")
_PREFIXED = re.compile(r"([A-Za-z][A-Za-z0-9]*)_(.+)")


def _parse_wrapped(text: str) -> list[Metric] | None:
    """A variant around any measure name, trec_eval's included (``UL2(map)``, ``E(P.5,10)``), or
    prefixed as ``--names trec`` prints it (``ul2_map``); None for neither form."""
    for pattern, whole in ((_WRAPPED, True), (_PREFIXED, False)):
        m = pattern.fullmatch(text)
        if m is None:
            continue
        v = _VARIANT_ALIASES.get(m.group(1)) or _VARIANT_ALIASES.get(m.group(1).upper())
        if v is None or (not whole and m.group(1) not in (v, v.lower(), m.group(1).lower())):
            continue
        try:
            inner = parse_many(m.group(2))
        except UnknownMeasure as exc:
            if whole:
                raise UnknownMeasure(f"{text}: {exc}") from None
            continue
        if any(x.variant for x in inner):
            raise UnknownMeasure(f"{text}: variants do not nest")
        return [Metric(x.measure, v) for x in inner]
    return None


def expand_names(names, trec_version: str | int = 10) -> list:
    """Names with trec_eval's nicknames expanded, in trec_eval's order, a measure given with parameters
    replacing it in a nickname (as trec_eval); ``trec_version`` 9: only what trec_eval 9 had (``since``)."""
    version = int(trec_version)
    out = []
    for n in names:
        base = n.strip().partition(".")[0]
        if base in TREC_NAMES and TREC_NAMES[base][1].since > version:
            raise UnknownMeasure(f"{n.strip()}: trec_eval {version} has no {base} (added in trec_eval "
                                 f"{TREC_NAMES[base][1].since}); leave out --trec-version {version}")
        out.extend(b for b in NICKNAME_MEASURES.get(n.strip(), [n])
                   if b not in TREC_NAMES or TREC_NAMES[b][1].since <= version)
    given = {n.partition(".")[0] for n in out if "." in n and n.partition(".")[0] in TREC_NAMES}
    from_nick = {b for n in names if n.strip() in NICKNAME_MEASURES for b in NICKNAME_MEASURES[n.strip()]}
    return list(dict.fromkeys(n for n in out if not (n in given and n in from_nick)))


def trec_repeats(names) -> str | None:
    """The error for a trec_eval measure given twice with different parameters (``-m P.5 -m P.10``;
    trec_eval silently keeps the first), or None."""
    first: dict = {}
    for n in names:
        base, dot, arg = n.strip().partition(".")
        if not dot or base not in TREC_NAMES:
            continue
        if base in first and first[base] != arg and parse_many(n) != parse_many(f"{base}.{first[base]}"):
            listed = (f"give the values in one -m ({base}.{first[base]},{arg})" if TREC_NAMES[base][1].arg == "each"
                      else "name each in canonical syntax")
            return (f"-m {n.strip()}: {base} is already given (-m {base}.{first[base]}); trec_eval keeps only the "
                    f"first and ignores this one: {listed}, or leave out --names trec")
        first.setdefault(base, arg)
    return None


def paper_measure(m: Measure) -> Measure:
    """The measure ``--expectation paper`` scores for ``m``: its family's ``paper_params`` unless ``m`` sets
    one of ``paper_unless`` (nDCG, DCG: the 2^R - 1 gains of Karmaker & Feng 2022 eq. 1, Feng 2023 eq. 3.1)."""
    fam = m.record
    if fam is None or not fam.paper_params:
        return m
    given = dict(m.params)
    if any(k in given for k in fam.paper_unless):
        return m
    return dataclasses.replace(m, params=tuple(sorted((given | dict(fam.paper_params)).items())), typed="")


def is_variant_list(text: str) -> bool:
    """Whether ``text`` is a --norm value: variant names (any case, aliases too), comma-separated, or
    'none' (the retired ``-n ul2`` left such a word where a file name is read)."""
    parts = [p.strip() for p in str(text).split(",")]
    return all(p and (p in _VARIANT_ALIASES or p.upper() in _VARIANT_ALIASES) for p in parts) or text in ("none", "plain")


def with_variant(metric: Metric, variant: str) -> Metric:
    v = _VARIANT_ALIASES.get(variant) or _VARIANT_ALIASES.get(variant.upper())
    if v is None:
        import difflib

        close = difflib.get_close_matches(variant.upper(), list(_VARIANT_ALIASES), n=2)
        hint = f"; did you mean {' or '.join(close)}?" if close else ""
        raise UnknownMeasure(f"unknown variant {variant!r} (known: {', '.join(VARIANTS)}){hint}")
    return Metric(metric.measure, v)


@contextlib.contextmanager
def temporary_records():
    """A scratch registry (docs/architecture.md's worked example, tests): the families, variants and
    summarisation families registered inside the block are gone after it, those it replaced back."""
    saved = [(table, dict(table)) for table in (FAMILIES, VARIANTS, TEXT_FAMILIES)]
    try:
        yield
    finally:
        for table, before in saved:
            table.clear()
            table.update(before)
