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
    for f in FAMILIES.values():
        trec = []
        for cut in ([None] if f.cutoff == "none" else [10] if f.cutoff == "required" else [None, 10]):
            m = Measure(f.name, (), cut)
            t = m.trec_name()
            if t != str(m) or t in [x.base for x in f.trec]:  # Rprec is spelt alike in both
                trec.append(f"`{t.replace('_10', '_k')}`")
        lines.append(f"| {f.name} | `{_md(syntax(f))}` | {', '.join(trec)} | {_md(f.formula)} | "
                     f"{_md(f.expectation_formula)} | {_md(f.cite)} |")
    return "\n".join(lines)


def syntax(f) -> str:
    """``RBP(p=0.8, rel=None)[@k]``: a family's parameters with their defaults and its cutoff."""
    params = ", ".join(f"{p.name}={p.default!r}" for p in f.params)
    cut = {"optional": "[@k]", "required": "@k", "none": ""}[f.cutoff]
    return f"{f.name}{'(' + params + ')' if params else ''}{cut}"


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


def holes_text(f) -> str:
    """Whether a family has judgment-hole bounds (LB/UB), as `measures` prints it."""
    if f.holes is None:
        return f"n/a: {f.holes_note or 'no exact extremes derived for this measure'}"
    return "exact (LB, UB; docs/holes.md)" + ("" if f.holes_check is None else
                                              "; not for a negative gain or an increasing discount")


def variants_markdown() -> str:
    """The README's variants table, generated from the registry."""
    from ..core.registry import VARIANTS

    lines = ["| variant | formula | range | bounds | source |", "|---|---|---|---|---|"]
    for v in VARIANTS.values():
        alias = f" (alias {', '.join(v.aliases)})" if v.aliases else ""
        if v.kind == "holes":  # LB and UB: one row, BS with its interval another (the README stays short)
            if v.bound == "LB":
                lines.append(f"| LB, UB | {_md(v.formula.replace('the smallest M', 'the smallest (largest) M'))} | "
                             f"[min M, max M] | {bounds_kind(v.name)} | {_md(v.cite)} |")
            elif v.bound == "BS":
                lines.append(f"| BS, BSLO, BSHI | {_md(v.formula)}; BSLO, BSHI: its 2.5th and 97.5th percentiles (their spread, not a 95% confidence interval: docs/holes.md) | "
                             f"{_md(v.rng)} | {bounds_kind(v.name)} | {_md(v.cite)} |")
            continue
        lines.append(f"| {v.name}{alias} | {_md(v.formula)} | {_md(v.rng)} | {bounds_kind(v.name)} | {_md(v.cite)} |")
    return "\n".join(lines)
