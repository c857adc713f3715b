"""ROUGE through ulnorm_eval.core.text_measures: parity with rouge-score on all of SummEval, and the
expected value (Feng 2023 eq. 9.1) and extractive oracle against brute-force enumeration."""
from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest

from rouge_score import rouge_scorer  # noqa: E402 - the summ extra; the test extra installs it

from ulnorm_eval.core import text_measures as tm  # noqa: E402
from ulnorm_eval.inputs.summaries import read_summaries  # noqa: E402

from conftest import SUMMEVAL, needs_summeval  # noqa: E402

DATA = SUMMEVAL
needs_data = needs_summeval  # skipped without the file, failed under CI (conftest)


@pytest.fixture(scope="module")
def summeval(summeval_file):
    return read_summaries(str(summeval_file))


class _Remembered:
    """rouge-score's own tokenizer, each text tokenized once: score_multi tokenizes a summary again for
    each of its 11 references and each reference again for each of the 16 summaries (half the test's
    time was Porter stemming of the same texts)."""

    def __init__(self, stem: bool):
        from rouge_score.tokenizers import DefaultTokenizer

        self.tokenizer, self.seen = DefaultTokenizer(stem), {}

    def tokenize(self, text):
        if text not in self.seen:
            self.seen[text] = self.tokenizer.tokenize(text)
        return self.seen[text]


@needs_data
@pytest.mark.parametrize("stem", [False, True])
def test_rouge_equals_rouge_score_on_all_summeval(summeval, stem):
    d = summeval
    assert len(d.doc_ids) == 100 and len(d.systems) == 16
    tok = tm.tokenizer(stem)
    rs = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], tokenizer=_Remembered(stem))
    n = 0
    for j in range(len(d.doc_ids)):
        doc = tm.encode_document(tok.tokenize(d.sources[j]), [tok.tokenize(r) for r in d.references[j]])
        cands = [tm.encode(doc.vocab, tok.tokenize(d.summaries[s][j])) for s in range(16)]
        ours = tm.rouge_scores(doc, cands, "max")
        for s in range(16):
            ref = rs.score_multi(d.references[j], d.summaries[s][j])
            for a, b in (("rouge1", "ROUGE-1"), ("rouge2", "ROUGE-2"), ("rougeL", "ROUGE-L")):
                assert tuple(ref[a]) == tuple(float(x[s]) for x in ours[b]), (j, s, a)
            n += 1
    assert n == 1600


class _Words:
    """A tokenizer for rouge-score's public scorer: the tokens given, joined by spaces."""

    @staticmethod
    def tokenize(text):
        return text.split()


_SCORERS = {n: rouge_scorer.RougeScorer([name], tokenizer=_Words()) for n, name in ((0, "rougeL"), (1, "rouge1"),
                                                                                     (2, "rouge2"))}


def _score(target, pred, n):
    """rouge-score's own scoring of token lists (n = 0: LCS)."""
    (score,) = _SCORERS[n].score(" ".join(target), " ".join(pred)).values()
    return tuple(score)


def _combine(scores, how):
    P, R, F = (np.array(x, dtype=float) for x in zip(*scores))
    if how == "max":
        k = int(np.argmax(F))
        return P[k], R[k], F[k]
    return P.mean(), R.mean(), F.mean()


def test_mean_and_pooled_combination_by_hand():
    # candidate "a b c d" against refs "a b" and "a x x x x x": overlaps 2 and 1
    doc = tm.encode_document(list("abcd"), [list("ab"), list("axxxxx")])
    c = [tm.encode(doc.vocab, list("abcd"))]
    p, r, f = (float(x[0]) for x in tm.rouge_scores(doc, c, "pooled")["ROUGE-1"])
    assert (p, r, f) == (3 / 8, 3 / 8, 2 * (3 / 8) * (3 / 8) / (3 / 4))
    p, r, f = (float(x[0]) for x in tm.rouge_scores(doc, c, "mean")["ROUGE-1"])
    assert p == pytest.approx((2 / 4 + 1 / 4) / 2) and r == pytest.approx((1 + 1 / 6) / 2)


TINY = [
    ("a b a c d", ["a a b e", "c a"]),
    ("x y y z", ["y z z"]),
    ("p q r p q p", ["p p p q", "r s", "q p r"]),
]


def _brute_expectation(source, refs, L, how, length="candidate"):
    """E over all |V|^L sequences with their unigram-model probabilities, scored by rouge-score."""
    src = source.split()
    cnt = Counter(src)
    words = sorted(cnt)
    prob = {w: cnt[w] / len(src) for w in words}
    R = [r.split() for r in refs]
    Ls = [len(r) for r in R] if length == "reference" else [L] * len(R)
    tot = np.zeros(3)
    # for per-reference lengths, draw one sequence of the longest length and score prefixes
    Lmax = max(Ls)
    for seq in itertools.product(words, repeat=Lmax):
        pr = np.prod([prob[w] for w in seq])
        tot += pr * np.array(_combine([_score(R[k], list(seq[:Ls[k]]), 1) for k in range(len(R))], how))
    return tot


@pytest.mark.parametrize("source,refs", TINY)
@pytest.mark.parametrize("L", [1, 2, 3, 4])
@pytest.mark.parametrize("how", ["mean", "pooled"])
def test_expected_rouge1_exact_equals_brute_force(source, refs, L, how):
    doc = tm.encode_document(source.split(), [r.split() for r in refs])
    exact = tm.expected_rouge1(doc, L, how)
    if how == "pooled":
        # pooled: E[sum M]/(nL), E[sum M]/sum m, 2E[sum M]/(nL + sum m); brute force on the same ratios
        src = source.split()
        cnt = Counter(src)
        words = sorted(cnt)
        R = [r.split() for r in refs]
        em = 0.0
        for seq in itertools.product(words, repeat=L):
            pr = np.prod([cnt[w] / len(src) for w in seq])
            em += pr * sum(sum((Counter(seq) & Counter(r)).values()) for r in R)
        tot = sum(len(r) for r in R)
        want = (em / (len(R) * L), em / tot, 2 * em / (len(R) * L + tot))
    else:
        want = _brute_expectation(source, refs, L, how)
    assert exact == pytest.approx(tuple(want), rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("source,refs", TINY)
def test_expected_rouge1_reference_length_equals_brute_force(source, refs):
    doc = tm.encode_document(source.split(), [r.split() for r in refs])
    exact = tm.expected_rouge1(doc, 0, "mean", length="reference")
    assert exact == pytest.approx(tuple(_brute_expectation(source, refs, 0, "mean", "reference")), rel=1e-12)


def test_single_reference_max_is_exact_too():
    doc = tm.encode_document("x y y z".split(), ["y z z".split()])
    assert tm.expected_rouge1(doc, 3, "max") == pytest.approx(
        tuple(_brute_expectation("x y y z", ["y z z"], 3, "max")), rel=1e-12)


@pytest.mark.parametrize("source,refs", TINY)
@pytest.mark.parametrize("how", ["max", "mean"])
def test_monte_carlo_all_types_within_4_se_of_brute_force(source, refs, how):
    doc = tm.encode_document(source.split(), [r.split() for r in refs])
    L = 4
    mc = tm.expected_mc(doc, [L], how, draws=4000, seed=7)
    R = [r.split() for r in refs]
    src = source.split()
    cnt = Counter(src)
    words = sorted(cnt)
    for t, n in (("ROUGE-1", 1), ("ROUGE-2", 2), ("ROUGE-L", 0)):
        want = np.zeros(3)
        for seq in itertools.product(words, repeat=L):
            pr = np.prod([cnt[w] / len(src) for w in seq])
            want += pr * np.array(_combine([_score(r, list(seq), n) for r in R], how))
        mean, se = mc[t][0][0], mc[t][1][0]
        assert np.all(np.abs(mean - want) <= 4 * se + 1e-12), (t, mean, want, se)
        assert np.all(se > 0) or np.all(want == 0)


def _brute_oracle(source, refs, L, how):
    src = source.split()
    R = [r.split() for r in refs]
    best = np.full(3, -1.0)
    filler = ["<none>"]
    for idx in itertools.combinations(range(len(src) + L), L):  # source positions, or filler
        seq = [src[i] if i < len(src) else filler[0] for i in idx]
        sc = [_score(r, seq, 1) for r in R]
        if how == "max":
            val = np.array(_combine(sc, "max"))
            if val[2] > best[2]:
                best = val
        else:
            best = np.maximum(best, np.array(_combine(sc, how)))
    return best


@pytest.mark.parametrize("source,refs", TINY)
@pytest.mark.parametrize("L", [1, 2, 3, 5, 7])
@pytest.mark.parametrize("how", ["max", "mean"])
def test_oracle_equals_brute_force(source, refs, L, how):
    doc = tm.encode_document(source.split(), [r.split() for r in refs])
    got = tm.oracle_rouge1(doc, L, how)
    assert got == pytest.approx(tuple(_brute_oracle(source, refs, L, how)), rel=1e-12)


def test_oracle_pooled_is_the_largest_summed_overlap():
    source, refs = "p q r p q p", ["p p p q", "r s", "q p r"]
    doc = tm.encode_document(source.split(), [r.split() for r in refs])
    for L in (1, 2, 4, 6):
        best = max(sum(sum((Counter(c) & Counter(r.split())).values()) for r in refs)
                   for c in itertools.combinations(source.split(), L))
        p, r, f = tm.oracle_rouge1(doc, L, "pooled")
        assert p == pytest.approx(best / (3 * L)) and r == pytest.approx(best / 9)


@needs_data
def test_expected_rouge1_exact_equals_monte_carlo_on_summeval(summeval):
    d = summeval
    tok = tm.tokenizer(False)
    for j in (0, 17, 42, 99):
        doc = tm.encode_document(tok.tokenize(d.sources[j]), [tok.tokenize(r) for r in d.references[j]])
        lengths = sorted({len(tok.tokenize(d.summaries[s][j])) for s in range(0, 16, 5)})
        mc = tm.expected_mc(doc, lengths, "mean", draws=2000, seed=j, types=("ROUGE-1",))
        for i, L in enumerate(lengths):
            exact = np.array(tm.expected_rouge1(doc, L, "mean"))
            mean, se = mc["ROUGE-1"][0][i], mc["ROUGE-1"][1][i]
            assert np.all(se > 0)
            assert np.all(np.abs(mean - exact) <= 4 * se), (j, L, mean, exact, se)


def _lcs_brute(x, y):
    """LCS of every prefix of x against y by the textbook table (-1 never matches)."""
    C = np.zeros((len(x) + 1, len(y) + 1), dtype=int)
    for i in range(1, len(x) + 1):
        for j in range(1, len(y) + 1):
            hit = x[i - 1] == y[j - 1] and x[i - 1] >= 0
            C[i, j] = C[i - 1, j - 1] + 1 if hit else max(C[i - 1, j], C[i, j - 1])
    return C[:, len(y)]


def test_lcs_prefix_by_rows_and_by_columns_equals_the_table():
    """lcs_prefix loops over the shorter side (candidate tokens, or reference tokens when the summaries
    are longer): both equal the textbook table for every prefix, with or without ``keep``."""
    rng = np.random.default_rng(3)
    for _ in range(300):
        D, W, R = rng.integers(1, 4), rng.integers(0, 14), rng.integers(1, 4)
        X = rng.integers(-1, 5, (D, W))
        refs = [rng.integers(0, 5, rng.integers(0, 14)) for _ in range(R)]
        got = tm.lcs_prefix(X, refs)
        for d in range(D):
            for r in range(R):
                assert (got[:, d, r] == _lcs_brute(X[d], refs[r])).all()
        keep = np.unique(rng.integers(0, W + 1, 3))
        assert (tm.lcs_prefix(X, refs, keep=keep) == got[keep]).all()


def test_rouge_l_of_a_huge_summary_is_refused_with_its_limit(tmp_path, monkeypatch):
    """A summary of a million characters made ROUGE-L's Monte Carlo E fill billions of LCS cells
    (111 s, 2.1 GB): refused per document, naming the limit and how to raise it; the plain score
    (--norm none needs no E) is computed, by reference tokens, in bounded time."""
    from click.testing import CliRunner
    from ulnorm_eval.cli.main import main

    words = [f"w{i}" for i in range(50)]
    rng = np.random.default_rng(0)
    ref = " ".join(rng.choice(words, 40))
    (tmp_path / "docs.tsv").write_text(f"d1\t{' '.join(rng.choice(words, 300))}\t{ref}\n")
    (tmp_path / "sys.tsv").write_text(f"d1\t{' '.join(rng.choice(words, 3000))}\n")
    monkeypatch.setattr(tm, "MAX_LCS_CELLS", 10_000_000)  # 3000 tokens x 200 draws x 40 = 2.4e7
    # E's draws as long as the summary (--length candidate; the default draws each reference's length)
    args = ["summ", "-f", "tsv", "-m", "ROUGE-L", "--length", "candidate", str(tmp_path / "docs.tsv"),
            str(tmp_path / "sys.tsv")]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 2 and res.stdout == "", res.output
    assert res.stderr == (f"ulnorm-eval: {tmp_path / 'docs.tsv'}: document 'd1': ROUGE-L of E's 200 Monte Carlo "
                          "draws (--draws) of 3,000 tokens against 1 reference(s) of up to 40 tokens needs 2.4e+07 "
                          "LCS cells, more than the limit of 1e+07 (ULNORM_EVAL_MAX_LCS_CELLS; time and memory "
                          "grow with it); longest summary: system 'sys', 3,000 tokens (a whole document given by "
                          "mistake?); raise the limit to compute it anyway\n")
    plain = CliRunner().invoke(main, args[:3] + ["--norm", "none"] + args[3:])
    assert plain.exit_code == 0, plain.output
    monkeypatch.setattr(tm, "MAX_LCS_CELLS", 10 ** 9)
    full = CliRunner().invoke(main, args[:3] + ["--norm", "e"] + args[3:])
    assert full.exit_code == 0, full.output
    # the same plain values with and without E computed next to them
    rows = lambda out: {tuple(x.split("\t")[:2]): x.split("\t")[2] for x in out.strip().split("\n")[1:]}
    assert rows(plain.stdout) == rows(full.stdout)
    monkeypatch.setattr(tm, "MAX_LCS_CELLS", 10_000)  # 3000 x 1 x 40 = 1.2e5: the plain score refused too
    res = CliRunner().invoke(main, args[:3] + ["--norm", "none"] + args[3:])
    assert res.exit_code == 2 and "ROUGE-L of 1 summaries of up to 3,000 tokens" in res.stderr
