"""inputs/fingerprints.py: the run's join with the judged docids and its check for repeats by 64-bit
fingerprints give exactly what Arrow's encoding of the strings gives, whatever the docids (lengths
0-32 bytes, NUL and non-ASCII bytes, sliced arrays, large strings), and fall back to it when they
cannot decide (long docids, a shared fingerprint, a repeated pair)."""
import numpy as np
import pyarrow as pa
import pytest

import pyarrow.compute as pc
from ulnorm_eval.hashing import GOLDEN, mix64
from ulnorm_eval.inputs import fingerprints as fp
from ulnorm_eval.inputs.trec import InputError, Qrels, Run
from ulnorm_eval.pipeline import ordering


def _strings(rng, n, longest=31):
    """n random strings of at most ``longest`` bytes in UTF-8 (é takes two)."""
    alphabet = ["a", "b", "\x00", "é", "-", "0", "9", "Z"]
    out = ["".join(rng.choice(alphabet, int(rng.integers(0, longest + 1)))) for _ in range(n)]
    return [s for s in out if len(s.encode()) <= longest]


def _arrow_codes(judged, docid):
    """The reference: Arrow's index of each docid in the judged docids, len(judged) when absent."""
    return pc.fill_null(pc.index_in(docid, value_set=judged), len(judged)).to_numpy(zero_copy_only=False)


def judged_table(judged):
    """The pairs' table of the judged docids, each judged for query 0: a table of the docids."""
    return fp.pair_table(judged, np.zeros(len(judged), np.int64), np.arange(len(judged)))


def judged_codes(table, docid, none):
    """(each docid's index in the judged docids, ``none`` where absent; the docids' fingerprints)."""
    got = fp.pair_entries(table, docid, np.zeros(len(docid), np.int64))
    return None if got is None else (np.where(got[0] >= 0, got[0], none), got[1])


def distinct_pairs(qcode, hashes):
    """distinct_entries of docids none of which is in a table: their (query, fingerprint) pairs decide."""
    return fp.distinct_entries(qcode, hashes, np.full(len(hashes), -1))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("large", [False, True])
def test_judged_codes_equal_arrow_lookup(seed, large):
    rng = np.random.default_rng(seed)
    typ = pa.large_string() if large else pa.string()
    pool = list(dict.fromkeys(_strings(rng, 400, longest=int(rng.integers(1, 32)))))
    judged = pa.array(pool[: len(pool) // 2], typ)
    # run docids: judged ones, others, and near misses (a byte more, a byte less, a NUL appended)
    near = [s + "\x00" for s in pool[:20]] + [s[:-1] for s in pool[:20] if s] + [s + "a" for s in pool[:20]]
    run = [str(x) for x in rng.choice(pool + near, 2000)]
    docid = pa.array(["pad", *run, "pad"], typ).slice(1, len(run))  # a slice: a nonzero offset
    table = judged_table(judged)
    assert table is not None
    code, h = judged_codes(table, docid, len(judged))
    assert np.array_equal(code, _arrow_codes(judged, docid))
    # equal strings, equal fingerprints; a fingerprint does not depend on the array's longest string
    alone = judged_codes(table, pa.array(run[:1], typ), len(judged))[1]
    assert alone[0] == h[0]


def test_words_are_the_bytes_little_endian():
    ws, length, _ = fp.words(pa.array(["", "ab", "abcdefgh", "abcdefghi"]))
    assert list(length) == [0, 2, 8, 9]
    assert [int(w) for w in ws[0]] == [0, 0x6261, int.from_bytes(b"abcdefgh", "little"),
                                       int.from_bytes(b"abcdefgh", "little")]
    assert [int(w) for w in ws[1]] == [0, 0, 0, ord("i")]


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("large", [False, True])
def test_words_equal_the_bytes_of_each_docid(seed, large):
    """words() of random docids (0 to 32 bytes in UTF-8, NUL and non-ASCII bytes; every docid empty;
    a slice) against each docid's bytes read in 8-byte little-endian words, zero past its end, and
    each fingerprint against its length mixed with each of its own words in turn."""
    rng = np.random.default_rng(seed)
    typ = pa.large_string() if large else pa.string()
    for longest in (0, 1, 7, 8, 9, 16, 17, 24, 31, 32):
        strings = _strings(rng, int(rng.integers(1, 300)), longest=longest)
        if longest == 32:
            strings.append("x" * 32)
        arr = pa.array(["pad", *strings, "pad"], typ).slice(1, len(strings))
        ws, length, hashes = fp.words(arr)
        raw = [text.encode() for text in strings]
        assert length.tolist() == [len(b) for b in raw]
        nwords = (max(map(len, raw), default=0) + 7) // 8
        assert len(ws) == nwords and all(w.dtype == np.uint64 and w.flags.c_contiguous for w in ws)
        for k, w in enumerate(ws):
            assert w.tolist() == [int.from_bytes(b[8 * k:8 * k + 8], "little") for b in raw]
        want = []
        for b in raw:
            h = np.array([len(b)], np.uint64) * GOLDEN
            for k in range((len(b) + 7) // 8):
                h = mix64(h ^ np.array([int.from_bytes(b[8 * k:8 * k + 8], "little")], np.uint64))
            want.append(int(h[0]))
        assert hashes.tolist() == want


def test_long_docids_and_nulls_are_left_to_arrow():
    assert fp.words(pa.array(["x" * 33])) is None
    assert fp.words(pa.array(["x" * 32])) is not None
    assert fp.words(pa.array(["a", None])) is None
    assert fp.words(pa.array([1, 2])) is None


def test_distinct_pairs():
    h = np.array([5, 6, 5], dtype=np.uint64)
    assert distinct_pairs(np.array([0, 0, 1]), h)
    assert not distinct_pairs(np.array([0, 0, 0]), h)


def _qrels_run(docids, qids=None):
    judged = ["FBIS3-1", "FBIS3-22", "LA010189-0001", "FR940104-0-00001"]
    qrels = Qrels(qid=pa.array(["1"] * 4 + ["2"] * 4), docid=pa.array(judged * 2),
                  grade=np.array([1, 0, 2, 1, 0, 1, 1, 3], dtype=float), path="q")
    qids = qids or ["1"] * len(docids)
    run = Run(qid=pa.array(qids), docid=pa.array(docids), score=np.arange(len(docids), 0, -1, dtype=float), rank=None,
              name="r", path="r")
    return qrels, run


def test_rank_run_does_not_hash_short_string_docids(monkeypatch):
    qrels, run = _qrels_run(["LA010189-0001", "XIE19960101.0001", "FBIS3-1", "FBIS3-22"], ["1", "1", "2", "2"])
    expect = ordering.rank_run(run, qrels, ["1", "2"])
    calls = []
    real = pc.dictionary_encode
    monkeypatch.setattr(pc, "dictionary_encode", lambda a: calls.append(a.to_pylist()) or real(a))
    qrels2, run2 = _qrels_run(["LA010189-0001", "XIE19960101.0001", "FBIS3-1", "FBIS3-22"], ["1", "1", "2", "2"])
    got = ordering.rank_run(run2, qrels2, ["1", "2"])
    assert np.array_equal(got.ranking.grade, expect.ranking.grade)
    assert list(got.ranking.grade) == [2, 0, 0, 1]
    assert calls and not any("XIE19960101.0001" in c for c in calls)  # the run's docids: no Arrow hash


def _fingerprinted_by(monkeypatch, fingerprint):
    """fp.words giving ``fingerprint(words, lengths)`` as the docids' fingerprints (to make them collide)."""
    real = fp.words

    def words(arr):
        got = real(arr)
        return None if got is None else (got[0], got[1], fingerprint(got[0], got[1]))

    monkeypatch.setattr(fp, "words", words)


def test_shared_fingerprints_fall_back_to_arrow(monkeypatch):
    """Every docid given one fingerprint: the judged table is refused, Arrow's encoding joins."""
    qrels, run = _qrels_run(["LA010189-0001", "nope", "FBIS3-22"])
    _fingerprinted_by(monkeypatch, lambda ws, length: np.zeros(len(length), np.uint64))
    got = ordering.rank_run(run, qrels, ["1"])
    assert list(got.ranking.grade) == [2, 0, 0]
    assert list(got.ranking.judged) == [True, False, True]


def test_repeated_document_is_refused_with_its_line():
    qrels, run = _qrels_run(["FBIS3-1", "other", "FBIS3-1"])
    run.line = np.array([3, 5, 9])
    with pytest.raises(InputError) as e:
        ordering.rank_run(run, qrels, ["1"])
    assert e.value.line == 9 and "duplicate document 'FBIS3-1' for query '1'" in e.value.reason


def test_equal_fingerprints_of_different_docids_are_not_a_match(monkeypatch):
    """A run docid whose fingerprint is a judged docid's, but whose bytes differ, is not judged."""
    weak = lambda ws, length: ws[0] * np.uint64(31) + length.astype(np.uint64)  # first word and length only
    _fingerprinted_by(monkeypatch, weak)
    judged = pa.array(["FBIS3-10001", "LA010189-0001"])
    table = judged_table(judged)
    assert table is not None
    docid = pa.array(["FBIS3-10009", "FBIS3-10001", "LA010189-0002", "LA010189-0001"])
    code, h = judged_codes(table, docid, 2)
    assert h[0] == h[1] and h[2] == h[3]
    assert list(code) == [2, 0, 2, 1]


def test_judged_empty_docid_and_fingerprints_near_the_free_slot_mark():
    """The empty docid's fingerprint is 0, the value a free slot of the table holds by default: it
    is then marked by another value, and 0, that value and every other docid are still found."""
    judged = pa.array(["", "a", "FBIS3-1"])
    table = judged_table(judged)
    docid = pa.array(["FBIS3-1", "", "b", "a", ""])
    assert list(judged_codes(table, docid, 3)[0]) == list(_arrow_codes(judged, docid)) == [2, 0, 3, 1, 0]
    assert list(judged_codes(judged_table(pa.array(["a"])), docid, 1)[0]) == [1, 1, 1, 0, 1]
    empty = judged_table(pa.array([], pa.string()))
    assert list(judged_codes(empty, docid, 0)[0]) == [0] * 5


def test_distinct_pairs_finds_one_repeat_among_many():
    """One repeated (query, document) pair among thousands is found, whatever the other rows; the
    same docids under other queries are no repeat."""
    rng = np.random.default_rng(5)
    for repeat in (False, True):
        run = [f"D{i}" for i in rng.permutation(100_000)[:3000]]
        qcode = np.repeat(np.arange(3), 1000).astype(np.int32)
        if repeat:
            run[1500] = run[1400]  # query 1 holds a document twice
        _, hashes = judged_codes(judged_table(pa.array(["D1"])), pa.array(run), 1)
        assert distinct_pairs(qcode, hashes) is (not repeat)
        assert distinct_pairs(np.zeros(3000, np.int32), hashes) is (len(set(run)) == len(run))
        assert distinct_pairs(np.arange(3000), hashes)  # every row its own query: nothing repeats


def _pairs_case(rng, large, nq):
    """Judged (query, docid) pairs of random odd strings, some docids judged for several queries,
    and the table's inputs: the distinct judged docids, and each pair's query number and docid code."""
    typ = pa.large_string() if large else pa.string()
    pool = list(dict.fromkeys(_strings(rng, 300, longest=int(rng.integers(1, 33)))))
    judged_docs = pool[: len(pool) // 2]
    pairs = sorted({(int(rng.integers(0, nq)), str(d)) for d in rng.choice(judged_docs, 3 * len(judged_docs))})
    names = sorted({d for _, d in pairs})
    judged = pa.array(["pad", *names], typ).slice(1)  # a slice: a nonzero offset
    code = np.array([names.index(d) for _, d in pairs], np.int64)
    query = np.array([q for q, _ in pairs], np.int64)
    return typ, pool, pairs, judged, query, code


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("large", [False, True])
def test_pair_entries_equal_a_lookup_of_the_pairs(seed, large):
    """Each run (query, docid) finds the entry of that very pair, or -1: docids judged for another
    query only, near misses (a NUL or a byte more, a byte less), queries without judgements and
    the query number -1 (a query outside the query set), repeated pairs."""
    rng = np.random.default_rng(seed)
    nq = int(rng.integers(1, 8))
    typ, pool, pairs, judged, query, code = _pairs_case(rng, large, nq)
    table = fp.pair_table(judged, query, code)
    assert table is not None
    near = [s + "\x00" for s in pool[:20]] + [s[:-1] for s in pool[:20] if s] + [s + "a" for s in pool[:20]]
    run = [str(x) for x in rng.choice(pool + near, 3000)]
    run_query = rng.integers(-1, nq + 1, len(run))
    docid = pa.array(["pad", *run, "pad"], typ).slice(1, len(run))
    entry, hashes = fp.pair_entries(table, docid, run_query)
    index = {pair: e for e, pair in enumerate(pairs)}
    want = [index.get((int(q), d), -1) for q, d in zip(run_query, run)]
    assert entry.tolist() == want
    assert (entry >= 0).sum() > 100 and (entry < 0).sum() > 100
    assert np.array_equal(hashes, judged_codes(judged_table(judged), docid, len(judged))[1])
    empty = fp.pair_table(judged, query[:0], code[:0])
    assert fp.pair_entries(empty, docid, run_query)[0].tolist() == [-1] * len(run)


def test_pair_entries_compare_query_length_and_every_word(monkeypatch):
    """Pairs whose fingerprints are equal are an entry only if the query, the length and every word
    are: a weak fingerprint (the first word only, whatever the length and the query) makes 'ab' and
    'ab' + NUL, two docids differing in the second word, and one docid under two queries collide."""
    _fingerprinted_by(monkeypatch, lambda ws, length: ws[0].copy())
    monkeypatch.setattr(fp, "_pair", lambda hashes, query: hashes)
    judged = pa.array(["ab", "FBIS3-10001x", "LA010189"])
    table = fp.pair_table(judged, np.array([0, 1, 2]), np.array([0, 1, 2]))
    assert table is not None
    docid = pa.array(["ab\x00", "ab", "FBIS3-10001y", "FBIS3-10001x", "LA010189", "LA010189"])
    entry, _ = fp.pair_entries(table, docid, np.array([0, 0, 1, 1, 1, 2]))
    assert entry.tolist() == [-1, 0, -1, 1, -1, 2]


def test_pair_table_refuses_what_it_cannot_decide(monkeypatch):
    """None for long docids, query numbers outside [0, 2^31), and two pairs sharing a fingerprint."""
    assert fp.pair_table(pa.array(["x" * 33]), np.array([0]), np.array([0])) is None
    assert fp.pair_table(pa.array(["x"]), np.array([1 << 31]), np.array([0])) is None
    assert fp.pair_table(pa.array(["x"]), np.array([-1]), np.array([0])) is None
    assert fp.pair_table(pa.array(["x", "y"]), np.array([0, (1 << 31) - 1]), np.array([0, 1])) is not None
    monkeypatch.setattr(fp, "_pair", lambda hashes, query: np.zeros(len(hashes), np.uint64))
    assert fp.pair_table(pa.array(["x", "y"]), np.array([0, 0]), np.array([0, 1])) is None


def _ragged_qrels_and_runs(rng, numeric):
    """A qrels (negative grades, queries judged by no run) and runs (queries the qrels lack, ties
    of scores, numbers or TREC-like strings as docids) for rank_run."""
    nq = int(rng.integers(1, 9))
    docs = ([str(i) for i in range(200)] if numeric else
            [f"{rng.choice(['FBIS3-', 'LA0101', 'FR9401-0-', ''])}{i}" for i in range(200)])
    rows = {(str(q), d): float(rng.integers(-1, 4)) for q in range(nq)
            for d in rng.choice(docs, int(rng.integers(0, 60)), replace=False)}
    items = list(rows.items())
    rng.shuffle(items)
    qrels = Qrels(qid=pa.array([k[0] for k, _ in items], pa.string()),
                  docid=pa.array([k[1] for k, _ in items], pa.string()), grade=np.array([g for _, g in items]),
                  path="q")
    runs = []
    for _ in range(4):
        runq, rund = [], []
        for q in rng.choice(nq + 3, int(rng.integers(1, nq + 3)), replace=False):
            ds = list(rng.choice(docs, int(rng.integers(0, 80)), replace=False))
            runq += [str(q)] * len(ds)
            rund += ds
        score = rng.integers(0, 12, len(runq)).astype(float)  # many ties
        runs.append(Run(qid=pa.array(runq, pa.string()), docid=pa.array(rund, pa.string()), score=score,
                        rank=None, name="r", path="r"))
    qids = ordering.natural_order({str(q) for q in range(nq)} | ({str(nq)} if rng.random() < 0.5 else set()))
    return qrels, runs, qids


@pytest.mark.parametrize("seed", range(8))
def test_rank_run_on_the_pairs_table_equals_the_docid_join(seed, monkeypatch):
    """rank_run joins short string docids on the (query, docid) pairs' table: the ranking, its
    judgements, the order, the notes' counts and a repeated document's error are those of the join
    by judged codes (the pairs' table refused), under each tie rule, -M and float32 scores."""
    rng = np.random.default_rng(seed)
    qrels, runs, qids = _ragged_qrels_and_runs(rng, numeric=seed % 4 == 3)
    used = []
    real = fp.pair_entries
    monkeypatch.setattr(fp, "pair_entries", lambda *a, **k: used.append(len(a) > 2) or real(*a, **k))  # with queries
    for run in runs:
        for kw in ({}, {"depth": 5}, {"score_precision": "float32"}, {"ties": "file"}):
            got = ordering.rank_run(run, qrels, qids, **kw)
            with monkeypatch.context() as m:
                m.setattr(ordering, "_pair_table", lambda *a, **k: None)
                want = ordering.rank_run(run, Qrels(qid=qrels.qid, docid=qrels.docid, grade=qrels.grade, path="q"), qids, **kw)
            for name in ("row", "grade", "judged"):
                assert np.array_equal(getattr(got.ranking, name), getattr(want.ranking, name)), (name, kw)
            # private: the rows kept, compared between the two join routes (the values above could agree by chance)
            assert np.array_equal(got._take, want._take) and np.array_equal(got.present, want.present)
            assert (got.ignored_queries, got.float32_ties) == (want.ignored_queries, want.float32_ties)
    assert any(used) == (seed % 4 != 3)  # numbers are joined without fingerprints
    if seed % 4 != 3:
        run = runs[0]
        repeated = Run(qid=pa.array(run.qid.to_pylist() + ["0"]), docid=pa.array(run.docid.to_pylist() + ["again"] * 1),
                       score=np.append(run.score, 1.0), rank=None, name="r", path="r")
        doubled = Run(qid=pa.array(repeated.qid.to_pylist() + ["0"]),
                      docid=pa.array(repeated.docid.to_pylist() + ["again"]), score=np.append(repeated.score, 2.0),
                      rank=None, name="r", path="r", line=np.arange(1, len(repeated.score) + 2) * 2)
        with pytest.raises(InputError) as e:
            ordering.rank_run(doubled, qrels, qids)
        assert e.value.line == 2 * len(doubled.score) and "duplicate document 'again' for query '0'" in e.value.reason


@pytest.mark.parametrize("seed", range(6))
def test_distinct_entries_finds_every_repeat(seed):
    """distinct_entries answers whether the (query, docid) pairs are distinct, as a set of the
    pairs does: repeats of a judged pair (one entry twice), of an unjudged one, under a query
    outside the query set (number -1, its own query code), and none."""
    rng = np.random.default_rng(seed)
    nq = int(rng.integers(1, 6))
    typ, pool, pairs, judged, query, code = _pairs_case(rng, False, nq)
    table = fp.pair_table(judged, query, code)
    to_q = np.append(np.arange(nq), [-1, -1])  # query codes nq and nq + 1: outside the query set
    seen = 0
    for k in range(40):
        qcode = rng.integers(0, nq + 2, int(rng.integers(1, 60)))
        run = [str(x) for x in rng.choice(pool[:25], len(qcode))]
        keys = list(zip(qcode.tolist(), run))
        if k % 2:  # drop the repeats: a distinct run
            first = {key: i for i, key in reversed(list(enumerate(keys)))}
            keep = sorted(first.values())
            qcode, run = qcode[keep], [run[i] for i in keep]
            keys = list(zip(qcode.tolist(), run))
        docid = pa.array(run, typ)
        entry, hashes = fp.pair_entries(table, docid, to_q[qcode])
        want = len(set(keys)) == len(keys)
        assert fp.distinct_entries(qcode, hashes, entry) is want
        assert distinct_pairs(qcode, hashes) is want
        seen += not want
    assert seen > 5


def test_distinct_entries_checks_judged_and_unjudged_repeats():
    """A repeated judged pair is found by its entry, a repeated unjudged one by its fingerprints;
    the same docid under two query codes outside the query set is no repeat."""
    judged = pa.array(["a", "b"])
    table = fp.pair_table(judged, np.array([0, 1]), np.array([0, 1]))
    to_q = np.array([0, 1, -1, -1])

    def answer(qcode, run):
        qcode = np.array(qcode)
        entry, hashes = fp.pair_entries(table, pa.array(run), to_q[qcode])
        return fp.distinct_entries(qcode, hashes, entry)
    assert answer([0, 1, 0], ["a", "b", "b"])
    assert not answer([0, 1, 0], ["a", "b", "a"])  # judged (0, a) twice
    assert not answer([1, 0, 1], ["x", "b", "x"])  # unjudged (1, x) twice
    assert answer([2, 3, 0], ["a", "a", "a"])
    assert not answer([2, 3, 2], ["x", "a", "x"])  # outside the query set, one query code twice
