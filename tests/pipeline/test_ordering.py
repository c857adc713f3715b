"""trec_eval's ordering (pipeline.ordering.trec_order) against the plain Arrow three-key sort it
replaces, on generated adversarial runs: the kept rows must come out in the identical permutation."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from ulnorm_eval.inputs import fingerprints
from ulnorm_eval.inputs.trec import Qrels, Run
from ulnorm_eval.pipeline import ordering
from ulnorm_eval.pipeline.ordering import rank_run, trec_order

# docids that differ only in byte order: case, a prefix, a multi-byte character, a NUL-free digit run
DOCS = ["a", "B", "b", "é", "e", "d1", "d10", "d2", "D1", "z", "Z9", "aa", "a0", "ü", "10", "9", "", "~"]


def reference(qkey, score, docid):
    """Arrow's stable sort by (query key ascending, score descending, docid descending)."""
    return pc.sort_indices(pa.table({"q": qkey, "s": score, "d": docid}),
                           sort_keys=[("q", "ascending"), ("s", "descending"), ("d", "descending")]).to_numpy()


def reference_rank(run, qids, score_precision="float64", depth=None):
    """The file rows of each query of ``qids`` in trec_eval's order, by the reference sort."""
    nq = len(qids)
    where = {q: i for i, q in enumerate(qids)}
    qkey = np.array([where.get(q, nq) for q in run.qid.to_pylist()], dtype=np.int64)
    score = run.score.astype(np.float32).astype(np.float64) if score_precision == "float32" else run.score
    order = reference(qkey, score, run.docid)
    order = order[qkey[order] < nq]
    if depth is not None:
        q = qkey[order]
        rank = np.arange(len(q)) - np.searchsorted(q, q)
        order = order[rank < depth]
    return order


def make_run(rng, kind: str):
    """A run of a few queries with distinct docids per query; ``kind`` chooses the adversary."""
    nq = int(rng.integers(1, 6))
    queries = [str(q) for q in rng.choice(12, nq, replace=False)]  # some absent from the qrels
    pool = list(dict.fromkeys(DOCS + [f"d{i}" for i in range(int(rng.integers(0, 40)))]))
    rows = []
    for q in queries:
        k = int(rng.integers(1, min(len(pool), 30) + 1)) if kind != "single" else 1
        for d in rng.choice(len(pool), k, replace=False):
            rows.append((q, pool[d]))
    n = len(rows)
    if kind in ("ties", "single", "interleaved", "sorted", "reversed", "asc_ties", "desc_ties"):
        score = rng.integers(-2, 3, n).astype(np.float64)  # heavy ties
    elif kind == "zeros":
        score = rng.choice([0.0, -0.0, 1.0, -1.0], n)
    elif kind == "close":  # ties that appear only after rounding to float32
        score = 1.0 + rng.integers(0, 3, n) * 2.0 ** -30
    else:
        score = rng.normal(size=n).round(int(rng.integers(0, 4)))
    qid = np.array([r[0] for r in rows], dtype=object)
    doc = np.array([r[1] for r in rows], dtype=object)
    perm = rng.permutation(n)
    if kind in ("sorted", "asc_ties", "desc_ties", "reversed"):
        # grouped by query in file order, scores descending, ties in a chosen docid order
        tie = pa.array(list(doc), pa.string())
        keys = [("q", "ascending"), ("s", "descending"),
                ("d", "ascending" if kind == "asc_ties" else "descending")]
        qk = np.array([queries.index(q) for q in qid])
        perm = pc.sort_indices(pa.table({"q": qk, "s": score, "d": tie}), sort_keys=keys).to_numpy()
        if kind == "reversed":
            perm = perm[::-1]
    elif kind == "interleaved":
        perm = np.arange(n)
    qid, doc, score = qid[perm], doc[perm], score[perm]
    return Run(qid=pa.array(list(qid), pa.string()), docid=pa.array(list(doc), pa.string()),
               score=np.ascontiguousarray(score), rank=None)


KINDS = ["random", "ties", "single", "interleaved", "sorted", "reversed", "asc_ties", "desc_ties", "zeros", "close"]


def no_fallback(monkeypatch):
    """Make trec_order fix every tie itself, however many (it would sort all rows with Arrow)."""
    def refuse(*a):
        raise AssertionError("fell back to the full sort")

    monkeypatch.setattr(ordering, "_MAX_TIED", 1.0)
    monkeypatch.setattr(ordering, "_arrow_order", refuse)


@pytest.mark.parametrize("fallback", [True, False])
def test_trec_order_is_the_arrow_sort_permutation(fallback, monkeypatch):
    """Keys, scores and docids drawn to collide; every kept row in the identical position."""
    if not fallback:
        no_fallback(monkeypatch)
    rng = np.random.default_rng(26)
    for it in range(3000):
        n = int(rng.integers(0, 60))
        nq = int(rng.integers(1, 5))
        qkey = rng.integers(0, nq + 1, n).astype(np.int64)  # nq: the ignored queries' key
        if it % 3 == 0:
            qkey.sort()
        score = rng.choice([0.0, -0.0, 1.5, -2.0, 3.0], n) if it % 2 else rng.integers(0, 4, n).astype(float)
        doc = rng.choice(DOCS, n)
        # distinct docids within each kept key (rank_run refuses repeats); the ignored key may repeat
        seen, d = set(), []
        for k, x in zip(qkey, doc):
            while k < nq and (k, x) in seen:
                x = x + "x"
            seen.add((k, x))
            d.append(x)
        docid = pa.array(d, pa.string())
        if it % 4 == 1:  # already in order: the one-pass path
            o = reference(qkey, score, docid)
            qkey, score, docid = qkey[o], score[o], docid.take(pa.array(o))
        got, want = trec_order(qkey, score, docid), reference(qkey, score, docid)
        keep = int((qkey < nq).sum())
        assert np.array_equal(got[:keep], want[:keep]), (it, qkey, score, d)
        assert np.array_equal(np.sort(got), np.arange(n))  # a permutation


@pytest.mark.parametrize("fallback", [True, False])
@pytest.mark.parametrize("kind", KINDS)
def test_rank_run_orders_as_the_reference(kind, fallback, monkeypatch):
    """rank_run's ranked rows (and their joined grades) against the reference sort, every option."""
    if not fallback:
        no_fallback(monkeypatch)
    rng = np.random.default_rng(KINDS.index(kind))
    qrels_rows = [(str(q), d, float(rng.integers(0, 3))) for q in range(0, 12, 2) for d in DOCS[::2]]
    qrels = Qrels(qid=pa.array([r[0] for r in qrels_rows]), docid=pa.array([r[1] for r in qrels_rows]),
                  grade=np.array([r[2] for r in qrels_rows]))
    grade = {(q, d): g for q, d, g in qrels_rows}
    qids = [str(q) for q in range(0, 12, 2)] + ["1"]  # "1" has no judgements; odd queries are ignored
    for _ in range(150):
        run = make_run(rng, kind)
        for precision in ("float64", "float32"):
            for depth in (None, 1, 3):
                rr = rank_run(run, qrels, qids, score_precision=precision, depth=depth)
                want = reference_rank(run, qids, precision, depth)
                assert np.array_equal(rr._take, want), (kind, precision, depth)
                qs, ds = run.qid.to_pylist(), run.docid.to_pylist()
                exp = [grade.get((qs[i], ds[i])) for i in want]
                assert np.array_equal(rr.ranking.judged, [g is not None for g in exp])
                assert np.array_equal(rr.ranking.grade, [g or 0.0 for g in exp])


def test_few_ties_do_not_fall_back_to_the_full_sort(monkeypatch):
    """The fix-up paths themselves are exercised: with few ties the plain sort is never called."""
    def refuse(*a):
        raise AssertionError("fell back to the full sort")

    monkeypatch.setattr(ordering, "_arrow_order", refuse)  # the default _MAX_TIED
    rng = np.random.default_rng(7)
    for case in range(200):
        n = 400
        qkey = np.sort(rng.integers(0, 5, n)).astype(np.int64)
        score = rng.normal(size=n)
        tied = rng.choice(n, 40, replace=False)
        score[tied] = score[tied].round(0)  # few exact ties, some -0.0
        docid = pa.array([f"d{i}" if i % 3 else f"D{i}é" for i in rng.permutation(n)], pa.string())
        if case % 4:  # in (query, score) order already, ties in descending, ascending or mixed docid order
            tie_order = {1: "descending", 2: "ascending"}.get(case % 4)
            if tie_order:
                o = pc.sort_indices(pa.table({"q": qkey, "s": score, "d": docid}),
                                    sort_keys=[("q", "ascending"), ("s", "descending"), ("d", tie_order)]).to_numpy()
            else:
                o = np.lexsort((-score, qkey))  # ties in file (random docid) order
            qkey, score, docid = qkey[o], score[o], docid.take(pa.array(o))
        assert np.array_equal(trec_order(qkey, score, docid), reference(qkey, score, docid))


def test_heavy_ties_use_the_full_sort(monkeypatch):
    """Ties on most rows (integer scores): the plain sort, the same permutation."""
    calls = []
    full = ordering._arrow_order
    monkeypatch.setattr(ordering, "_arrow_order", lambda *a: calls.append(1) or full(*a))
    n = 1000
    qkey = np.repeat(np.arange(4), n // 4).astype(np.int64)
    score = (np.arange(n) % 3).astype(float)
    docid = pa.array([str(i) for i in range(n)], pa.string())
    assert np.array_equal(trec_order(qkey, score, docid), reference(qkey, score, docid))
    assert calls == [1]


def test_query_keys_beyond_16_bits(monkeypatch):
    """More than 65,535 queries: the stable sort of the keys is not the 16-bit radix one."""
    no_fallback(monkeypatch)
    rng = np.random.default_rng(3)
    n = 3000
    qkey = rng.integers(65530, 65540, n).astype(np.int64)
    score = rng.integers(0, 40, n).astype(float)
    docid = pa.array([f"d{i}" for i in rng.permutation(n)], pa.string())
    assert np.array_equal(trec_order(qkey, score, docid), reference(qkey, score, docid))


@pytest.mark.parametrize("pairs", [False, True])
def test_join_finds_every_judgement(pairs, monkeypatch):
    """The join against a dictionary of the judgements: docids judged for one query, several, every
    query; queries without judgements; run docids judged only for other queries, or not at all; numeric
    and text docids.  Text docids are joined on the (query, docid) pairs' fingerprint table
    (``pairs``), or, with that table refused, on Arrow's codes and a binary search of the judged keys."""
    if not pairs:
        monkeypatch.setattr(fingerprints, "pair_table", lambda *a: None)
    rng = np.random.default_rng(int(pairs))
    for case in range(60):
        nq = int(rng.integers(1, 9))
        numeric = case % 3 == 0
        docs = [str(i) for i in range(30)] if numeric else DOCS + [f"x{i}" for i in range(12)]
        judged = {}
        for q in range(nq):
            if rng.random() < 0.2:
                continue  # a query without judgements
            for d in rng.choice(len(docs), int(rng.integers(1, len(docs))), replace=False):
                judged[(str(q), docs[d])] = float(rng.integers(0, 4))
        for d in docs[:3]:  # judged for every query
            for q in range(nq):
                judged[(str(q), d)] = 1.0
        rows = list(judged.items())
        rng.shuffle(rows)
        qrels = Qrels(qid=pa.array([k[0] for k, _ in rows], pa.string()),
                      docid=pa.array([k[1] for k, _ in rows], pa.string()), grade=np.array([g for _, g in rows]))
        qids = [str(q) for q in range(nq)]
        for call in range(3):  # every run of the query set shares the qrels side of the join
            runq, rund = [], []
            for q in range(nq + 1):  # query nq: not in the qrels
                ds = list(rng.choice(docs + ["zz", "999"], int(rng.integers(0, 20)), replace=False))
                runq += [str(q)] * len(ds)
                rund += ds
            run = Run(qid=pa.array(runq, pa.string()), docid=pa.array(rund, pa.string()),
                      score=rng.normal(size=len(runq)), rank=None)
            rr = rank_run(run, qrels, qids)
            want = [judged.get((runq[i], rund[i])) for i in rr._take]
            assert np.array_equal(rr.ranking.judged, [g is not None for g in want]), (case, call)
            assert np.array_equal(rr.ranking.grade, [g or 0.0 for g in want]), (case, call)
            if ordering.numeric_ids(run.docid) is None:  # text docids: the pairs' table, built by the first text run
                assert (qrels.cache["pair_table"][1] is not None) == pairs, call


def test_spans_by_hand():
    """core.kernels.spans, the CSR selection the join, the tie fix-up and trec_gains share."""
    from ulnorm_eval.core.kernels import spans

    pos, off = spans(np.array([5, 0, 9]), np.array([2, 0, 3]))
    assert pos.tolist() == [5, 6, 9, 10, 11] and off.tolist() == [0, 1, 0, 1, 2]
    pos, off = spans(np.zeros(0, np.int64), np.zeros(0, np.int64))
    assert pos.tolist() == [] and off.tolist() == []


def test_query_blocks_in_any_order_are_not_sorted(monkeypatch):
    """A run written query by query, scores descending, its queries in an order of its own (DL-HARD's
    bm25): the blocks are put in order without sorting the rows (``_score_sort`` is never called),
    ties still by docid descending; a query split in two places is sorted, with the same result."""
    calls = []
    full = ordering._score_sort
    monkeypatch.setattr(ordering, "_score_sort", lambda *a: calls.append(1) or full(*a))
    rng = np.random.default_rng(39)
    for case in range(300):
        nq = int(rng.integers(2, 7))
        sizes = rng.integers(1, 30, nq)
        qkey = np.repeat(rng.permutation(nq), sizes).astype(np.int64)
        score = rng.integers(0, 6, len(qkey)).astype(float) if case % 2 else rng.normal(size=len(qkey))
        start = np.concatenate(([0], np.cumsum(sizes)[:-1]))
        for a, k in zip(start, sizes):
            score[a:a + k] = np.sort(score[a:a + k])[::-1]  # descending within each block
        docid = pa.array([f"d{i}" for i in rng.permutation(len(qkey))], pa.string())
        split = case % 5 == 0  # the first block's query again at the end: not blocks
        if split:
            qkey = np.append(qkey, qkey[0])
            score = np.append(score, score[-1] - 1.0)
            docid = pa.concat_arrays([docid, pa.array(["zz"], pa.string())])
        calls.clear()
        got = trec_order(qkey, score, docid)
        want = reference(qkey, score, docid)
        assert np.array_equal(got, want), case
        assert calls == ([1] if split else []), case


def _numeric_run(rng, dup: bool = False):
    q = np.repeat(["3", "1", "2"], 20)
    d = [str(i) for i in rng.permutation(100)[:60]]
    if dup:
        d[5] = d[4]  # query "3" lists one document twice
    return Run(qid=pa.array(list(q), pa.string()), docid=pa.array(d, pa.string()),
               score=-np.tile(np.arange(20.0), 3), rank=None, path="r.txt")


def test_numeric_ids_of_a_loaded_run_are_checked_once(monkeypatch):
    """A loaded run evaluated again does not cast and check its docids again; a run whose docid
    array was replaced since (a repeat introduced) is checked again and refused."""
    from ulnorm_eval.inputs.trec import InputError

    calls = []
    real = ordering.numeric_ids
    monkeypatch.setattr(ordering, "numeric_ids", lambda d: calls.append(1) or real(d))
    rng = np.random.default_rng(5)
    run = _numeric_run(rng)
    qrels = Qrels(qid=pa.array(["1", "2", "3"]), docid=pa.array(run.docid.to_pylist()[:3]), grade=np.ones(3))
    first = rank_run(run, qrels, ["1", "2", "3"])
    second = rank_run(run, qrels, ["1", "2", "3"])
    assert calls == [1]
    assert np.array_equal(first._take, second._take)
    assert np.array_equal(first.ranking.grade, second.ranking.grade)
    run.docid = _numeric_run(np.random.default_rng(5), dup=True).docid
    with pytest.raises(InputError, match="duplicate document"):
        rank_run(run, qrels, ["1", "2", "3"])
    assert calls == [1, 1]


@pytest.mark.parametrize("fallback", [True, False])
def test_query_blocks_with_unsorted_scores_are_sorted_block_by_block(fallback, monkeypatch):
    """A run written query by query (queries in any order) with its scores out of order: each
    block's scores are sorted on their own (_query_blocks given the scores), and the order is the reference's,
    ties by docid descending; a query in two places, or blocks below _BLOCK_ROWS rows on average,
    take the one sort of every row."""
    if not fallback:
        no_fallback(monkeypatch)
    used = []
    real = ordering._query_blocks
    monkeypatch.setattr(ordering, "_query_blocks", lambda *a: (len(a) > 2 and used.append(real(*a) is not None)) or real(*a))
    rng = np.random.default_rng(41)
    for case in range(600):
        monkeypatch.setattr(ordering, "_BLOCK_ROWS", 1 if case % 3 else 1000)
        nq = int(rng.integers(1, 7))
        sizes = rng.integers(1, 40, nq)
        qkey = np.repeat(rng.permutation(nq), sizes).astype(np.int64)
        score = rng.choice([0.0, -0.0, 1.5, 2.0, 3.0], len(qkey)) if case % 2 else rng.normal(size=len(qkey))
        docid = pa.array([f"d{i}" for i in rng.permutation(len(qkey))], pa.string())
        if case % 7 == 0:  # the first query again at the end: not blocks
            qkey = np.append(qkey, qkey[0])
            score = np.append(score, 0.25)
            docid = pa.concat_arrays([docid, pa.array(["zz"], pa.string())])
        used.clear()
        got = trec_order(qkey, score, docid)
        assert np.array_equal(got, reference(qkey, score, docid)), case
        blocks = case % 7 != 0 and case % 3 != 0
        assert used == ([] if not used else [blocks]) or not blocks
        if blocks and len(qkey) > 1 and not ((qkey[1:] >= qkey[:-1]).all() and ((score[1:] <= score[:-1]) | (qkey[1:] != qkey[:-1])).all()):
            assert used == [True], case
