"""ROUGE-1/2/L of summaries (Lin 2004, as rouge-score over its tokens), their expected value under the
source's unigram model (Feng 2023 §9.1, eq. 9.1) and ROUGE-1's extractive oracle; the formulas and
their proofs are in docs/summarisation.md, "The maths".  A summary of L tokens against a reference of
m: M = the clipped n-gram overlap (the LCS for ROUGE-L), P = M / max(L', 1), R = M / max(m', 1),
F = 2PR / (P + R); references combined by ``max`` (rouge-score's ``score_multi``), ``mean`` or
``pooled`` (Feng 2023 eq. 3.5: P = sum_r M_r / (n L'), R = sum_r M_r / sum_r m_r').
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["ROUGE_TYPES", "tokenizer", "DocTokens", "encode_document", "encode",
           "overlap_counts", "lcs_prefix", "lcs_cells", "MAX_LCS_CELLS", "prf", "combine", "rouge_scores", "expected_rouge1",
           "expected_mc", "oracle_rouge1", "binom_sf_upto"]

ROUGE_TYPES = ("ROUGE-1", "ROUGE-2", "ROUGE-L")


def tokenizer(stem: bool = False):
    """rouge-score's DefaultTokenizer (the one ``RougeScorer(use_stemmer=stem)`` uses)."""
    from rouge_score import tokenizers

    return tokenizers.DefaultTokenizer(use_stemmer=stem)


@dataclass(kw_only=True)
class DocTokens:
    """One document's tokens as ids: references' tokens get ids 0..n_ref_vocab-1, other source tokens
    the following ids; a summary's token in neither is -1 (it can never match)."""

    vocab: dict
    n_ref_vocab: int
    source: np.ndarray
    refs: list


def encode_document(source_tokens, refs_tokens) -> DocTokens:
    vocab = {token: index for index, token in enumerate(dict.fromkeys(token for toks in refs_tokens for token in toks))}
    n_ref = len(vocab)
    for token in source_tokens:
        vocab.setdefault(token, len(vocab))
    return DocTokens(vocab=vocab, n_ref_vocab=n_ref, source=encode(vocab, source_tokens),
                     refs=[encode(vocab, ref) for ref in refs_tokens])


def encode(vocab: dict, tokens) -> np.ndarray:
    return np.fromiter((vocab.get(token, -1) for token in tokens), dtype=np.int64, count=len(tokens))


def _codes(seqs: np.ndarray, n: int, V: int) -> np.ndarray:
    """n-gram codes of padded id sequences (rows); -1 where the n-gram has a -1 (pad or unknown)."""
    if n == 1:
        return seqs
    first, second = seqs[:, :-1], seqs[:, 1:]
    return np.where((first >= 0) & (second >= 0), first * V + second, -1)


def _pad(seqs, fill=-1) -> np.ndarray:
    width = max((len(seq) for seq in seqs), default=0)
    out = np.full((len(seqs), max(width, 1)), fill, dtype=np.int64)
    for index, seq in enumerate(seqs):
        out[index, :len(seq)] = seq
    return out


def overlap_counts(cands: np.ndarray, refs, n: int, V: int) -> np.ndarray:
    """Clipped n-gram overlap M[c, r] = sum_g min(c_cand(g), c_ref(g)) of padded candidate rows (-1 pad)."""
    ref_codes = _codes(_pad(refs), n, V)
    valid = ref_codes >= 0
    rows = np.broadcast_to(np.arange(ref_codes.shape[0])[:, None], ref_codes.shape)[valid]
    uniq, inv = np.unique(ref_codes[valid], return_inverse=True)
    n_unique = len(uniq)
    refc = np.zeros((len(refs), max(n_unique, 1)), dtype=np.int64)
    np.add.at(refc, (rows, inv), 1)
    cand_codes = _codes(cands, n, V)
    if n_unique == 0 or cand_codes.size == 0:
        return np.zeros((cands.shape[0], len(refs)), dtype=np.int64)
    pos = np.searchsorted(uniq, cand_codes)
    pos_c = np.minimum(pos, n_unique - 1)
    hit = (cand_codes >= 0) & (uniq[pos_c] == cand_codes)
    crow = np.broadcast_to(np.arange(cand_codes.shape[0])[:, None], cand_codes.shape)[hit]
    candc = np.zeros((cand_codes.shape[0], n_unique), dtype=np.int64)
    np.add.at(candc, (crow, pos_c[hit]), 1)
    return np.minimum(candc[:, None, :], refc[None, :, :]).sum(-1)


# LCS table cells (candidate tokens x candidates x references x reference tokens) one document's ROUGE-L
# may fill, its plain score and E's draws each (the default of ULNORM_EVAL_MAX_LCS_CELLS; docs/errors.md)
MAX_LCS_CELLS = 1_000_000_000


def lcs_cells(width: int, rows: int, refs) -> int:
    """The cells :func:`lcs_prefix` fills for ``rows`` candidates of ``width`` tokens against ``refs``."""
    return int(width) * int(rows) * len(refs) * max((len(ref) for ref in refs), default=0)


def lcs_prefix(cands: np.ndarray, refs, keep=None) -> np.ndarray:
    """LCS lengths T[i, c, r] of the first i tokens of candidate row c against reference r, i in ``keep``
    (sorted; None: 0..width), by :func:`_lcs_sweep` along the shorter side; -1 and -2 (pads) never match."""
    ref_matrix = _pad(refs, fill=-2).astype(np.int32)
    cand_matrix = cands.astype(np.int32)
    D, W = cands.shape
    R, M = ref_matrix.shape
    rows = np.arange(W + 1) if keep is None else np.asarray(keep, dtype=np.int64)
    cell_type = np.int16 if min(W, M) < 32000 else np.int32  # LCS <= min(W, M); small ints halve the traffic
    if W > M:
        matches = (cand_matrix[:, None, :] == ref_matrix[:, position][None, :, None] for position in range(M))
        last = _lcs_sweep(matches, (D, R, W), cell_type)
        return np.ascontiguousarray(np.moveaxis(last[:, :, rows], 2, 0), dtype=np.int32)
    slot = np.full(W + 1, -1, dtype=np.int64)
    slot[rows] = np.arange(len(rows))
    out = np.zeros((len(rows), D, R), dtype=np.int32)  # row 0 (the empty prefix) stays 0

    def record(step, state):
        if slot[step + 1] >= 0:
            out[slot[step + 1]] = state[:, :, -1]

    matches = (ref_matrix[None, :, :] == cand_matrix[:, index][:, None, None] for index in range(W))
    _lcs_sweep(matches, (D, R, M), cell_type, record)
    return out


def _lcs_sweep(matches, shape: tuple, cell_type, record=None) -> np.ndarray:
    """The LCS recurrence along one side: T_j = C_prev[j-1] + 1 where the step's token matches position j
    (``matches``: a (D, R, width) mask a step), else C_prev[j]; C = the running maximum of T along j.
    ``record(step, C)`` after each step; returns the last C (D, R, width + 1)."""
    prev = np.zeros((*shape[:2], shape[2] + 1), dtype=cell_type)
    cur = np.zeros_like(prev)
    token = np.empty(shape, dtype=cell_type)
    inc = np.empty(shape, dtype=cell_type)
    for step, match in enumerate(matches):
        np.copyto(token, prev[:, :, 1:])
        np.add(prev[:, :, :-1], 1, out=inc)
        np.copyto(token, inc, where=match)
        np.maximum.accumulate(token, axis=2, out=cur[:, :, 1:])
        if record is not None:
            record(step, cur)
        prev, cur = cur, prev
    return prev


def prf(M, n_cand, n_ref):
    """rouge-score's P = M/max(L',1), R = M/max(m',1), F = 2PR/(P+R) (0 if P+R = 0), elementwise."""
    M = np.asarray(M, dtype=np.float64)
    p = M / np.maximum(np.asarray(n_cand, dtype=np.float64), 1.0)
    r = M / np.maximum(np.asarray(n_ref, dtype=np.float64), 1.0)
    seq = p + r
    with np.errstate(invalid="ignore", divide="ignore"):
        f = np.where(seq > 0, 2 * p * r / np.where(seq > 0, seq, 1.0), 0.0)
    return p, r, f


def combine(M, n_cand, n_ref, how: str):
    """Scores (P, R, F) over references (the last axis of M) combined by ``how``; ``n_cand`` broadcasts
    against M, ``n_ref`` is per reference."""
    M = np.asarray(M, dtype=np.float64)
    n_cand = np.broadcast_to(np.asarray(n_cand, dtype=np.float64), M.shape)
    n_ref = np.asarray(n_ref, dtype=np.float64)
    if how == "pooled":
        return prf(M.sum(-1), n_cand.sum(-1), n_ref.sum())
    p, r, f = prf(M, n_cand, n_ref)
    if how == "mean":
        return p.mean(-1), r.mean(-1), f.mean(-1)
    if how == "max":
        best = np.argmax(f, axis=-1)[..., None]
        return tuple(np.take_along_axis(part, best, -1)[..., 0] for part in (p, r, f))
    raise ValueError(f"unknown combination {how!r}")


def _lengths(n: int, lengths):
    return np.maximum(np.asarray(lengths, dtype=np.int64) - (n - 1), 0)


def rouge_scores(doc: DocTokens, cands, how: str = "max", types=ROUGE_TYPES):
    """{'ROUGE-1'|'ROUGE-2'|'ROUGE-L': (P, R, F)} arrays over the candidate id sequences ``cands``
    (the ``types`` asked for)."""
    cand_matrix = _pad(cands)
    cand_lengths = np.array([len(cand) for cand in cands], dtype=np.int64)
    ref_lengths = np.array([len(ref) for ref in doc.refs], dtype=np.int64)
    V = len(doc.vocab)
    out = {}
    for n, name in ((1, "ROUGE-1"), (2, "ROUGE-2")):
        if name in types:
            out[name] = combine(overlap_counts(cand_matrix, doc.refs, n, V), _lengths(n, cand_lengths)[:, None],
                                _lengths(n, ref_lengths), how)
    if "ROUGE-L" in types:
        keep = np.unique(cand_lengths)
        T = lcs_prefix(cand_matrix, doc.refs, keep=keep)
        out["ROUGE-L"] = combine(T[np.searchsorted(keep, cand_lengths), np.arange(len(cands))],
                                 cand_lengths[:, None], ref_lengths, how)
    return out


def binom_sf_upto(L, p, cmax: int) -> np.ndarray:
    """S[..., j-1] = P(Bin(L, p) >= j) for j = 1..cmax (elementwise over broadcast L, p)."""
    from scipy.stats import binom

    position = np.arange(1, cmax + 1)
    L = np.asarray(L)[..., None]
    p = np.asarray(p, dtype=np.float64)[..., None]
    return binom.sf(position - 1, L, p)


def expected_overlap1(doc: DocTokens, lengths) -> np.ndarray:
    """E[M_r] of a length-L_r unigram draw against each reference r (Feng 2023 eq. 9.1 model), exactly:
    E[M_r] = sum_w sum_{j=1..c_r(w)} P(Bin(L_r, p_w) >= j)."""
    N = len(doc.source)
    R = len(doc.refs)
    lengths = np.broadcast_to(np.asarray(lengths, dtype=np.int64), (R,))
    if N == 0:
        return np.zeros(R)
    V = doc.n_ref_vocab
    source_share = np.bincount(doc.source[doc.source < V], minlength=V)[:V] / N
    out = np.zeros(R)
    for ref_index, ref in enumerate(doc.refs):
        ref_counts = np.bincount(ref, minlength=V)
        shared = np.nonzero((ref_counts > 0) & (source_share > 0))[0]
        if len(shared) == 0 or lengths[ref_index] == 0:
            continue
        S = binom_sf_upto(lengths[ref_index], source_share[shared], int(ref_counts[shared].max()))
        keep = np.arange(1, S.shape[-1] + 1)[None, :] <= ref_counts[shared][:, None]
        out[ref_index] = float((S * keep).sum())
    return out


def expected_rouge1(doc: DocTokens, L: int, how: str = "mean", length: str = "candidate"):
    """Exact E[(P, R, F)] of ROUGE-1 for a draw of L tokens (``length='reference'``: each reference's
    length) from the source's unigram model, references combined by ``mean`` or ``pooled``."""
    if how == "max" and len(doc.refs) > 1:
        raise ValueError("E[ROUGE-1] with max over several references has no closed form; use expected_mc")
    ref_lengths = np.array([len(r) for r in doc.refs], dtype=np.float64)
    lengths_int = ref_lengths.astype(np.int64) if length == "reference" else np.full(len(doc.refs), int(L))
    M, n_c, n_r = expected_overlap1(doc, lengths_int), lengths_int.astype(np.float64), ref_lengths
    if how == "pooled":  # the sums over references (n L for a common L)
        M, n_c, n_r = (np.array([part.sum()]) for part in (M, n_c, n_r))
    p = M / np.maximum(n_c, 1.0)
    r = M / np.maximum(n_r, 1.0)
    f = np.where(n_c + n_r > 0, 2 * M / np.maximum(n_c + n_r, 1.0), 0.0)
    return float(p.mean()), float(r.mean()), float(f.mean())


def expected_mc(doc: DocTokens, lengths, how: str = "max", draws: int = 200, seed: int = 0,
                length: str = "candidate", types=ROUGE_TYPES):
    """Monte Carlo E and its standard error of ROUGE-1/2/L for each length in ``lengths`` (``length=
    'reference'``: each reference's own, one row), from ``draws`` i.i.d. sequences of the longest:
    {type: (mean[len, 3], se[len, 3])}, columns P, R, F."""
    rng = np.random.default_rng(seed)
    ref_lengths = np.array([len(ref_index) for ref_index in doc.refs], dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64).reshape(-1)
    if length == "reference":
        lengths = np.zeros(1, dtype=np.int64)
    Lmax = int(max(lengths.max(initial=0), ref_lengths.max(initial=0) if length == "reference" else 0))
    res = {family: (np.zeros((len(lengths), 3)), np.zeros((len(lengths), 3))) for family in types}
    if len(doc.source) == 0 or Lmax == 0:
        return res
    seqs = doc.source[rng.integers(0, len(doc.source), size=(draws, Lmax))]
    # ids beyond the references' vocabulary never match: map them to -1 so codes stay small
    seqs = np.where(seqs < doc.n_ref_vocab, seqs, -1)
    V = doc.n_ref_vocab
    keep = np.unique(np.concatenate([lengths, ref_lengths] if length == "reference" else [lengths]))
    # ROUGE-L: only the prefix lengths scored are kept: memory does not grow with the longest summary
    table = lcs_prefix(seqs, doc.refs, keep=keep) if "ROUGE-L" in types else None

    def T(L):  # the LCS table of the prefixes of length L (one of those kept)
        return table[int(np.searchsorted(keep, L))]
    for length_index, L in enumerate(lengths):
        for family in types:
            n = {"ROUGE-1": 1, "ROUGE-2": 2, "ROUGE-L": 0}[family]
            if length == "reference":
                M = np.stack([_matches(seqs, doc.refs, int(ref_lengths[r]), n, V, T, [r])[:, 0] for r in range(len(doc.refs))],
                             axis=-1)
                scores = combine(M, _lengths(max(n, 1), ref_lengths), _lengths(max(n, 1), ref_lengths), how)
            else:
                M = _matches(seqs, doc.refs, L, n, V, T, list(range(len(doc.refs))))
                scores = combine(M, _lengths(max(n, 1), [L])[0], _lengths(max(n, 1), ref_lengths), how)
            S = np.stack(scores, axis=-1)
            res[family][0][length_index] = S.mean(0)
            res[family][1][length_index] = S.std(0, ddof=1) / np.sqrt(draws) if draws > 1 else np.nan
    return res


def _matches(seqs, refs, L, n, V, T, which: list) -> np.ndarray:
    """M (draws x the references ``which``) of the draws' prefixes of length L: the LCS (n = 0, from
    the table ``T``) or the clipped n-gram overlap."""
    if n == 0:
        return T(L)[:, which]
    if L == 0:
        return np.zeros((seqs.shape[0], len(which)))
    return overlap_counts(seqs[:, :L], [refs[r] for r in which], n, V)


def _oracle_sum(C, source_counts, L, weights) -> np.ndarray:
    """Overlaps per reference of the x (sum x = L, x_w <= c_s(w)) maximising sum_r weights_r M_r(x): the
    L largest gains sum_r weights_r [c_r(w) >= j] of a j-th copy of w (separable and concave)."""
    jmax = int(min(source_counts.max(initial=0), C.max(initial=0)))
    if jmax == 0 or L == 0:
        return np.zeros(C.shape[0])
    position = np.arange(1, jmax + 1)
    gain = np.einsum("r,rwj->wj", weights, (C[:, :, None] >= position[None, None, :]).astype(np.float64))
    gain = np.where(position[None, :] <= source_counts[:, None], gain, 0.0)
    flat = gain.ravel()
    take = np.argsort(-flat, kind="stable")[:L]
    take = take[flat[take] > 0]
    taken = np.zeros(C.shape[1], dtype=np.int64)
    np.add.at(taken, take // jmax, 1)
    return np.minimum(C, taken[None, :]).sum(1)


def oracle_rouge1(doc: DocTokens, L: int, how: str = "max"):
    """(P, R, F) of the extractive ROUGE-1 oracle of length L: ``max``, each reference's own oracle
    min(L, sum_w min(c_r(w), c_s(w))) scored as ``score_multi``; ``mean``, each of P, R, F maximised on
    its own (weights 1, 1/m_r, 2/(L+m_r)); ``pooled``, by the largest summed overlap."""
    L = int(L)
    V = doc.n_ref_vocab
    ref_lengths = np.array([len(r) for r in doc.refs], dtype=np.int64)
    source_counts = np.bincount(doc.source[doc.source < V], minlength=V)[:V]
    C = np.stack([np.bincount(ref, minlength=V)[:V] for ref in doc.refs])
    if how == "max" or len(doc.refs) == 1:
        M = np.minimum(L, np.minimum(C, source_counts[None, :]).sum(1))
    elif how == "pooled":
        M = _oracle_sum(C, source_counts, L, np.ones(len(ref_lengths)))
    else:  # mean: each of P, R, F maximised on its own
        lrf = ref_lengths.astype(np.float64)
        schemes = (np.ones(len(ref_lengths)), 1.0 / np.maximum(lrf, 1.0), 2.0 / np.maximum(L + lrf, 1.0))
        return tuple(float(combine(_oracle_sum(C, source_counts, L, weights)[None, :], L, ref_lengths, "mean")[scheme][0])
                     for scheme, weights in enumerate(schemes))
    return tuple(float(part[0]) for part in combine(M[None, :], L, ref_lengths, how))
