"""The summarisation measures as records (``ulnorm-eval summ``; ``ulnorm-eval measures`` lists them):
ROUGE-1/2/L and BERTScore, their expected value under a random summary of the source, citations and
the variants they take.  The maths are in core/text_measures.py (ROUGE) and core/bertscore.py; this
module is light (no numpy), so that listing the measures imports nothing heavy."""
from __future__ import annotations

from . import variants as _variants  # noqa: F401  (the variant records the families name)
from .records import TEXT_FAMILIES, TextFamily, register_text

__all__ = ["TEXT_FAMILIES"]

_ROUGE = "Lin 2004; rouge-score (Google's re-implementation of ROUGE-1.5.5); E: Feng 2023 §9.1, eq. 9.1"
_UNIGRAM = ("E over summaries of the candidate's (or each reference's) length drawn i.i.d. from the source's "
            "unigram model p(w) = c(w) / sum c (Feng 2023 eq. 9.1)")

register_text(TextFamily(
    "ROUGE-1", "clipped unigram overlap M of summary and reference: P = M/L, R = M/m, F = 2PR/(P+R)",
    _UNIGRAM + ": exact for one reference, mean or pooled (E[M] = sum_w sum_j P(Bin(L, p_w) >= j)); "
    "Monte Carlo under max", _ROUGE))
register_text(TextFamily(
    "ROUGE-2", "clipped bigram overlap, P, R and F as ROUGE-1's", _UNIGRAM + ": Monte Carlo (seeded draws)",
    _ROUGE))
register_text(TextFamily(
    "ROUGE-L", "longest common subsequence M: P = M/L, R = M/m, F = 2PR/(P+R)",
    _UNIGRAM + ": Monte Carlo (seeded draws)", _ROUGE))
register_text(TextFamily(
    "BERTScore", "greedy cosine matching of contextual token embeddings: R = mean_i max_j x_i . x^_j, "
                 "P = mean_j max_i, F = 2PR/(P+R)",
    "BERTScore of the expected summary: the k source tokens least similar to the document's mean embedding "
    "(Feng 2023 §8.2, Algorithm 1)", "Zhang et al. 2020; bert-score; E: Feng 2023 Algorithm 1", default=False))
