"""The measures and variants tables (``ulnorm-eval measures --markdown``, the README), from the records."""
from __future__ import annotations

__all__ = ["BOUNDS_TEXT", "measures_markdown", "variants_markdown", "syntax", "bounds_kind", "holes_text"]


from ..core.variants import db_method

BOUNDS_TEXT = {  # a family's bounds declaration, as `measures` prints it (DB's limits from core.variants)
    "exact": "exact: E, IUB, WLB in closed form; " + db_method(),
    "montecarlo": "Monte Carlo E (--permutations, --seed); IUB, WLB by sorting the pool; " + db_method(),
    "none": "none (no random-ranking bounds: no E/IUB/UL columns)",
}


def _md(text: str) -> str:
    return str(text).replace("|", "\\|")


def measures_markdown() -> str:
    """The README's measures table, generated from the registry."""
    from ..core.registry import FAMILIES, Measure

    lines = ["| family | syntax | trec_eval name | formula | E under a random ranking | source |",
             "|---|---|---|---|---|---|"]
    for family in FAMILIES.values():
        trec = []
        for cut in ([None] if family.cutoff == "none" else [10] if family.cutoff == "required" else [None, 10]):
            measure = Measure(family.name, (), cut)
            trec_text = measure.trec_name()
            if trec_text != str(measure) or trec_text in [trec_name.base for trec_name in family.trec]:  # Rprec is spelt alike in both
                trec.append(f"`{trec_text.replace('_10', '_k')}`")
        lines.append(f"| {family.name} | `{_md(syntax(family))}` | {', '.join(trec)} | {_md(family.formula)} | "
                     f"{_md(family.expectation_formula)} | {_md(family.cite)} |")
    return "\n".join(lines)


def syntax(family) -> str:
    """``RBP(p=0.8, rel=None)[@k]``: a family's parameters with their defaults and its cutoff."""
    params = ", ".join(f"{param.name}={param.default!r}" for param in family.params)
    cut = {"optional": "[@k]", "required": "@k", "none": ""}[family.cutoff]
    return f"{family.name}{'(' + params + ')' if params else ''}{cut}"


def bounds_kind(variant: str) -> str:
    """How a variant's random-ranking bounds are obtained (from its record's kind)."""
    from ..core.records import VARIANTS

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
    from ..core.registry import VARIANTS

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
