"""The summarisation measures as records (``ulnorm-eval summ``): ROUGE-1/2/L and BERTScore, their E,
citations and variants; the maths in core/text_measures.py and core/bertscore.py (no numpy here)."""
from __future__ import annotations

from . import variants as _variants  # noqa: F401  (the variant records the families name)
from .records import TEXT_FAMILIES, VARIANTS, TextFamily, register_text

__all__ = ["TEXT_FAMILIES", "SUMM_DEFAULT_VARIANTS", "summ_variants", "score_choices", "summ_help"]

_ROUGE = "Lin 2004; rouge-score (Google's re-implementation of ROUGE-1.5.5); E: Feng 2023 §9.1, eq. 9.1"
_UNIGRAM = ("E over summaries of the candidate's (or each reference's) length drawn i.i.d. from the source's "
            "unigram model p(w) = c(w) / sum c (Feng 2023 eq. 9.1)")

register_text(TextFamily(
    name="ROUGE-1", formula="clipped unigram overlap M of summary and reference: P = M/L, R = M/m, F = 2PR/(P+R)",
    expectation_formula=_UNIGRAM + ": exact for one reference, mean or pooled (E[M] = sum_w sum_j P(Bin(L, p_w) >= j)); "
    "Monte Carlo under max", cite=_ROUGE))
register_text(TextFamily(
    name="ROUGE-2", formula="clipped bigram overlap, P, R and F as ROUGE-1's", expectation_formula=_UNIGRAM + ": Monte Carlo (seeded draws)",
    cite=_ROUGE))
register_text(TextFamily(
    name="ROUGE-L", formula="longest common subsequence M: P = M/L, R = M/m, F = 2PR/(P+R)",
    expectation_formula=_UNIGRAM + ": Monte Carlo (seeded draws)", cite=_ROUGE))
register_text(TextFamily(
    name="BERTScore", formula="greedy cosine matching of contextual token embeddings: R = mean_i max_j x_i . x^_j, "
                 "P = mean_j max_i, F = 2PR/(P+R)",
    expectation_formula="BERTScore of the expected summary: the k source tokens least similar to the document's mean embedding "
    "(Feng 2023 §8.2, Algorithm 1)", cite="Zhang et al. 2020; bert-score; E: Feng 2023 Algorithm 1", default=False))

# summ's --norm default: the bounds and Feng 2023's UE1, UE2 (summ's names of UL1, UL2)
SUMM_DEFAULT_VARIANTS = ("E", "IUB", "UE1", "UE2")


def summ_variants() -> dict:
    """summ's name of each variant the summarisation families take -> the record's name: its alias if
    any (UL1, UL2 are Feng 2023's UE1, UE2 for summaries)."""
    names = dict.fromkeys(v for f in TEXT_FAMILIES.values() for v in f.variants)
    return {(VARIANTS[n].aliases[0] if VARIANTS[n].aliases else n): n for n in names}


def score_choices() -> str:
    """The ``score=`` choices of the families, the default (each family's first) last: precision|recall|f."""
    scores = list(dict.fromkeys(s for f in TEXT_FAMILIES.values() for s in f.scores))
    defaults = list(dict.fromkeys(f.scores[0] for f in TEXT_FAMILIES.values()))
    return "|".join([s for s in scores if s not in defaults] + defaults)


def summ_help() -> dict:
    """summ's help of -m and --norm, from the records (a family or variant registered shows up)."""
    shown = summ_variants()
    aliases = [name.lower() for s, name in shown.items() if s != name]
    defaults = [name for name, f in TEXT_FAMILIES.items() if f.default]
    return {
        "measure": f"{', '.join(TEXT_FAMILIES)}, optionally (score={score_choices()}), or a variant of one "
                   f"({', '.join(shown)}, Hetero(BERTScore)).  Default: {' '.join(defaults)}.",
        "norm": f"Variants added to every measure ({', '.join(s.lower() for s in shown)}"
                + (f"; {'/'.join(aliases)} are aliases" if aliases else "")
                + f") or 'none'. Default: {','.join(SUMM_DEFAULT_VARIANTS).lower()}.",
    }
