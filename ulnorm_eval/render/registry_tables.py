"""The measures and variants tables (``ulnorm-eval measures --markdown``, the README), from the records."""
from __future__ import annotations

import fnmatch
import textwrap

from ..core.registry import FAMILIES, VARIANTS, Measure
from ..core.text_families import TEXT_FAMILIES
from ..core.variants import db_method

__all__ = ["BOUNDS_TEXT", "measures_markdown", "variants_markdown", "syntax", "bounds_kind", "holes_text",
           "measures_overview", "measures_details"]

BOUNDS_TEXT = {  # a family's bounds declaration, as `measures` prints it (DB's limits from core.variants)
    "exact": "exact: E, IUB, WLB in closed form; " + db_method(),
    "montecarlo": "Monte Carlo E (--permutations, --seed); IUB, WLB by sorting the pool; " + db_method(),
    "none": "none (no random-ranking bounds: no E/IUB/UL columns)",
}


CUTOFF = {"optional": "[@k]", "required": "@k", "none": ""}  # a family's cutoff, as its syntax writes it


def _md(text: str) -> str:
    return str(text).replace("|", "\\|")


def measures_markdown() -> str:
    """The README's measures table, generated from the registry."""
    lines = ["| family | syntax | trec_eval name | formula | E under a random ranking | source |",
             "|---|---|---|---|---|---|"]
    for family in FAMILIES.values():
        trec = []
        for cut in ([None] if family.cutoff == "none" else [10] if family.cutoff == "required" else [None, 10]):
            measure = Measure(family=family.name, cutoff=cut)
            trec_text = measure.trec_name()
            if trec_text != str(measure) or trec_text in [trec_name.base for trec_name in family.trec]:  # Rprec is spelt alike in both
                trec.append(f"`{trec_text.replace('_10', '_k')}`")
        lines.append(f"| {family.name} | `{_md(syntax(family))}` | {', '.join(trec)} | {_md(family.formula)} | "
                     f"{_md(family.expectation_formula)} | {_md(family.cite)} |")
    return "\n".join(lines)


def syntax(family) -> str:
    """``RBP(p=0.8, rel=None)[@k]``: a family's parameters with their defaults and its cutoff."""
    params = ", ".join(f"{param.name}={param.default!r}" for param in family.params)
    return f"{family.name}{'(' + params + ')' if params else ''}{CUTOFF[family.cutoff]}"


def bounds_kind(variant: str) -> str:
    """How a variant's random-ranking bounds are obtained (from its record's kind)."""
    kind = VARIANTS[variant].kind
    if kind == "distribution":
        return db_method()
    if kind in ("bound", "ratio"):
        return "exact for the measures above; Monte Carlo for other ir_measures measures"
    if kind == "holes" and VARIANTS[variant].bound in ("LB", "UB"):
        return "exact extremes (docs/holes.md) for the families `ulnorm-eval measures` marks 'holes: exact'"
    if kind == "holes":
        return "seeded Monte Carlo over the grades of the holes, for the same families as LB, UB"
    return "none needed (no random-ranking bound)"


def holes_text(family) -> str:
    """Whether a family has judgment-hole bounds (LB/UB), as `measures` prints it."""
    if family.holes is None:
        return f"n/a: {family.holes_note or 'no exact extremes derived for this measure'}"
    return "exact (LB, UB; docs/holes.md)" + ("" if family.holes_check is None else
                                              "; not for a negative gain or an increasing discount")


def variants_markdown() -> str:
    """The README's variants table, generated from the registry."""
    lines = ["| variant | formula | range | bounds | source |", "|---|---|---|---|---|"]
    for variant in VARIANTS.values():
        alias = f" (alias {', '.join(variant.aliases)})" if variant.aliases else ""
        if variant.kind == "holes":  # LB and UB: one row, BS with its interval another (the README stays short)
            if variant.bound == "LB":
                lines.append(f"| LB, UB | {_md(variant.formula.replace('the smallest M', 'the smallest (largest) M'))} | "
                             f"[min M, max M] | {bounds_kind(variant.name)} | {_md(variant.cite)} |")
            elif variant.bound == "BS":
                lines.append(f"| BS, BSLO, BSHI | {_md(variant.formula)}; BSLO, BSHI: its 2.5th and 97.5th percentiles (their spread, not a 95% confidence interval: docs/holes.md) | "
                             f"{_md(variant.rng)} | {bounds_kind(variant.name)} | {_md(variant.cite)} |")
            continue
        lines.append(f"| {variant.name}{alias} | {_md(variant.formula)} | {_md(variant.rng)} | {bounds_kind(variant.name)} | {_md(variant.cite)} |")
    return "\n".join(lines)


GROUPS = {  # `measures`' groups of families, by their bounds declaration
    "exact": "E, IUB, WLB exact (E and UL2 by default)",
    "montecarlo": "E by Monte Carlo (variants only when named, UL2(IPrec@0.5), or by --norm)",
    "none": "no random-ranking bounds (counts, sets, judged fractions)",
}


def _wrapped(head: str, names, indent: str = "  ") -> list:
    return textwrap.wrap(", ".join(names), 100, initial_indent=f"{indent}{head}: ", subsequent_indent="    ",
                         break_on_hyphens=False)


def measures_overview() -> str:
    """`ulnorm-eval measures`: the families grouped by their bounds, the variants, the summarisation
    measures, and how to see one's parameters (:func:`measures_details`)."""
    out = ["Measures (ir_measures syntax, any case; any other ir_measures name is computed through ir_measures):"]
    for bounds, head in GROUPS.items():
        out += _wrapped(head, [f"{f.name}{CUTOFF[f.cutoff]}" for f in FAMILIES.values() if f.bounds == bounds])
    out += _wrapped("Variants (wrap a measure, UL2(nDCG@10), or add to every measure, --norm ul2)",
                    [variant.name + (f" ({', '.join(variant.aliases)})" if variant.aliases else "")
                     for variant in VARIANTS.values()], "")
    out += _wrapped("Summarisation measures (ulnorm-eval summ)", list(TEXT_FAMILIES), "")
    out += ["", "Parameters, defaults, formula, E, bounds, trec_eval name and citation: ulnorm-eval measures PATTERN",
            "(the names containing PATTERN, any case, e.g. 'ulnorm-eval measures ndcg'; '*' for every one)."]
    return "\n".join(out)


def _matches(pattern: str, names) -> bool:
    """``pattern`` contained in a name, in any case (a shell pattern when it holds * ? or [)."""
    glob = any(char in pattern for char in "*?[")
    return any(fnmatch.fnmatch(n.lower(), pattern.lower()) if glob else pattern.lower() in n.lower() for n in names)


def measures_details(pattern: str) -> str | None:
    """Everything the records say of the families, variants and summarisation measures a name of which
    matches ``pattern`` (:func:`_matches`), in listing order; None when none matches."""
    out = []
    for family in FAMILIES.values():
        if _matches(pattern, [family.name, *family.aliases, *(t.base for t in family.trec)]):
            out += _family_lines(family)
    for variant in VARIANTS.values():
        if _matches(pattern, [variant.name, *variant.aliases]):
            alias = f" (alias {', '.join(variant.aliases)})" if variant.aliases else ""
            out += [f"\n  {variant.name}{alias}: {variant.formula}",
                    f"    variant: wrap a measure, {variant.name}(nDCG@10), or --norm {variant.name.lower()}",
                    f"    range {variant.rng}; {bounds_kind(variant.name)}; cite: {variant.cite}"]
    for family in TEXT_FAMILIES.values():
        if _matches(pattern, [family.name]):
            names = [next((alias for alias in VARIANTS[name].aliases if alias.startswith("UE")), name)
                     for name in family.variants]
            out += [f"\n  {family.name}(score={'|'.join(family.scores)}) (default score={family.scores[0]}): "
                    f"{family.formula}", "    summarisation (ulnorm-eval summ)",
                    f"    E: {family.expectation_formula}", f"    variants: {', '.join(names)}; cite: {family.cite}"]
    return "\n".join(out).lstrip("\n") if out else None


def _family_lines(family) -> list:
    out = [f"\n  {syntax(family)}" + (f" (alias {', '.join(family.aliases)})" if family.aliases else "")]
    out += [f"    {param.name} (default {param.default!r}): {param.doc}" for param in family.params]
    out += [f"    formula: {family.formula}", f"    E: {family.expectation_formula}",
            f"    bounds: {BOUNDS_TEXT[family.bounds]}"
            + ("; Monte Carlo E for parameters outside the closed form (see E)" if family.exact_for else ""),
            f"    holes: {holes_text(family)}"]
    if family.summary != "mean":
        out.append(f"    summary ('all' row): {family.summary}")
    if family.binary:
        out.append("    relevance: at -l/--rel-level (or rel=)")
    trec = ", ".join(trec_name.base for trec_name in family.trec)
    return out + [f"    cite: {family.cite}" + (f"; trec_eval: {trec}" if trec else "")]
