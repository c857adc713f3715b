"""From parsed files to rankings: the query set, trec_eval's ordering, depth, and the qrels join."""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ..inputs.arrow import numeric_array, scalar, to_numpy
from ..inputs.trec import InputError, Qrels, Run, check_duplicates, numeric_ids
from ..core.kernels import Judgements, Ranking, spans

__all__ = ["natural_order", "judgements", "rank_run", "RankedRun", "run_queries", "trec_order", "prepare_join"]


def _natural_key(text: str):
    # ASCII digit runs compare as numbers by (length, digits) after leading zeros: no int(), which
    # fails on '²' (a digit to str.isdigit) and on 5,000-digit ids (Python's int-string limit)
    if text.isascii() and text.isdigit():  # most query ids: one digit run, without the regex
        digits = text.lstrip("0")
        return ((0, len(digits), digits),)
    return tuple((0, len(digits.lstrip("0")), digits.lstrip("0")) if digits[0] in "0123456789" else (1, 0, digits)
                 for digits in re.findall(r"[0-9]+|[^0-9]+", text))


def natural_order(qids) -> list:
    """Query ids in natural order: digit runs compare as numbers (2 < 10), the rest as text."""
    return sorted(qids, key=lambda qid: (_natural_key(qid), qid))


def _checked_encoding(qrels: Qrels, key: str, column):
    """The encoding of ``column`` that read_qrels' check for repeats left in the cache (``key``), or
    None: taken out on first use (each serves one build), and used only if the qrels still hold the
    array it encoded (a copy or an in-place change of the arrays makes it stale)."""
    made = qrels.cache.pop(key, None)
    return made[1] if made is not None and made[0] is column else None


def _groups(qrels: Qrels):
    """qrels rows grouped by query, built once per qrels: (qid -> group index, group starts, row order),
    so that a lookup of some queries' judgements (once per streamed block) costs their size."""
    import pyarrow.compute as pc

    if "groups" not in qrels.cache:
        enc = _checked_encoding(qrels, "qid_encoding", qrels.qid)
        if enc is None:
            enc = pc.dictionary_encode(qrels.qid)
        codes = to_numpy(enc.indices)
        order = np.argsort(codes, kind="stable")
        starts = np.concatenate(([0], np.cumsum(np.bincount(codes, minlength=len(enc.dictionary)))))
        index = {qid: position for position, qid in enumerate(enc.dictionary.to_pylist())}
        qrels.cache["groups"] = (index, starts, order)
    return qrels.cache["groups"]


def run_queries(run: Run):
    """The run's distinct query ids (pyarrow strings, first-appearance order) and each row's index into
    them (int32), computed once per run."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if "queries" not in run.cache:
        qid = run.qid.combine_chunks() if isinstance(run.qid, pa.ChunkedArray) else run.qid
        # only the first row of each stretch of one query is hashed (a run lists a query's lines
        # together): each value first appears at such a row, so the codes are the same
        new = np.ones(len(qid), bool)
        if len(qid) > 1:
            new[1:] = to_numpy(pc.not_equal(qid.slice(1), qid.slice(0, len(qid) - 1)))
        heads = np.flatnonzero(new)
        enc = pc.dictionary_encode(pc.take(qid, numeric_array(heads)))
        run.cache["queries"] = (enc.dictionary, np.repeat(to_numpy(enc.indices), np.diff(np.append(heads, len(qid)))))
    return run.cache["queries"]


def qrels_queries(qrels: Qrels) -> list:
    """The distinct query ids of the qrels (first-appearance order), computed once."""
    return list(_groups(qrels)[0])


def qrels_rows(qrels: Qrels, qids: list):
    """(rows of the qrels judging ``qids``, position in ``qids`` of each row's query)."""
    index, starts, order = _groups(qrels)
    group = np.asarray([index.get(qid, -1) for qid in qids], dtype=np.int64)
    have = group >= 0
    start = np.where(have, starts[np.maximum(group, 0)], 0)
    count = np.where(have, starts[np.maximum(group, 0) + 1] - start, 0)
    owner = np.repeat(np.arange(len(qids)), count)
    rows = order[spans(start, count)[0]]
    return rows, owner


def judgements(qrels: Qrels, qids: list) -> Judgements:
    """The qrels of ``qids`` by query, grades descending (the ideal ordering); kept on the qrels for the
    last query set, so that every run shares one Judgements and the arrays cached on it (ideal DCG, R)."""
    key = tuple(qids)
    hit = qrels.cache.get("judgements")
    if hit is not None and hit[0] == key:
        return hit[1]
    rows, row = qrels_rows(qrels, qids)
    grade = qrels.grade[rows]
    order = np.lexsort((-grade, row))
    if "max_grade" not in qrels.cache:
        qrels.cache["max_grade"] = float(qrels.grade.max()) if len(qrels.grade) else 0.0
    judged = Judgements(list(qids), row[order], grade[order], qrels.cache["max_grade"])
    qrels.cache["judgements"] = (key, judged)
    return judged


def _join_index(qrels: Qrels, qids: list):
    """The qrels side of the join for a query set: (distinct judged docids, sorted integer keys query
    position x len(docids) + docid code, the qrels row of each key); kept on the qrels for the last
    query set, which every run of an evaluation asks for."""
    import pyarrow.compute as pc

    key = tuple(qids)
    hit = qrels.cache.get("join")
    if hit is None or hit[0] != key:
        rows, owner = qrels_rows(qrels, qids)
        enc = _checked_encoding(qrels, "docid_encoding", qrels.docid)
        if enc is not None and len(rows) == len(qrels):
            # the query set judges every row: the encoding of the whole column is the one needed
            code = to_numpy(enc.indices).astype(np.int64)[rows]
        else:
            enc = pc.dictionary_encode(pc.take(qrels.docid, numeric_array(rows)))
            code = to_numpy(enc.indices).astype(np.int64)
        keys = owner.astype(np.int64) * len(enc.dictionary) + code
        srt = np.argsort(keys, kind="stable")
        hit = (key, enc.dictionary, keys[srt], rows[srt])
        qrels.cache["join"] = hit
    return hit[1:]


def _join_rows(query: np.ndarray, code: np.ndarray, jkeys: np.ndarray, jrows: np.ndarray, n_judged: int) -> np.ndarray:
    """The qrels row judging each ranked (query ``query``, docid code ``code``), -1 where none does: the
    keys ``query * n_judged + code`` binary-searched in the sorted judged keys ``jkeys``."""
    row = np.full(len(query), -1, dtype=np.int64)
    rest = np.flatnonzero(code < n_judged)  # docids judged for some query of the set
    if len(rest) and len(jkeys):
        keys = query[rest].astype(np.int64) * n_judged + code[rest]
        position = np.minimum(np.searchsorted(jkeys, keys), len(jkeys) - 1)
        found = jkeys[position] == keys
        row[rest[found]] = jrows[position[found]]
    return row


@dataclass(kw_only=True)
class RankedRun:
    """A run ordered and joined to the qrels: one row of the ranking per query of the query set."""

    name: str
    ranking: Ranking
    present: np.ndarray  # bool per query: the run retrieved something for it
    ignored_queries: int  # distinct run queries absent from the qrels
    # ranked documents that change place between float32 and float64 scores (ties 'score'), or between
    # the tie rule and trec_eval's order (ties 'rank', 'file')
    float32_ties: int = 0
    _docid: object = None  # the run's docids (file order) ...
    _take: np.ndarray | None = None  # ... and the file row of each ranked element
    judged: tuple = (0, 0)  # (ranked documents within -M, of which in the qrels): a note when none is

    @property
    def docid(self):
        """pyarrow strings in ranking order (built on demand: only NRG and the ir_measures bridge need it)."""
        import pyarrow.compute as pc

        return pc.take(self._docid, numeric_array(self._take))


RANK_PATTERN = r"^[+-]?[0-9]+$"  # a decimal integer in ASCII digits, as C's strtol reads it without a base


def rank_values(run: Run) -> np.ndarray:
    """The rank column as integers (``--ties rank``): decimal ASCII digits with an optional sign, within
    ±2^63 (Arrow's cast reads ``0x9``, Python's ``int`` ``1_0`` and ``٣``: the pattern decides)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if run.rank is None:
        raise InputError(run.path, None, "--ties rank needs a rank column")
    if isinstance(run.rank, np.ndarray):
        return run.rank
    rank = run.rank
    if not pa.types.is_string(rank.type) and not pa.types.is_large_string(rank.type):
        rank = pc.cast(rank, pa.string())
    valid = pc.match_substring_regex(rank, RANK_PATTERN)
    bad = None if valid.null_count == 0 and pc.all(valid).as_py() in (True, None) else \
        int(np.flatnonzero(~to_numpy(pc.fill_null(valid, scalar(False, pa.bool_()))))[0])
    if bad is None:
        try:
            return to_numpy(pc.cast(pc.replace_substring_regex(rank, r"^\+", ""), pa.int64()))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):  # only an overflow is left
            big = [index for index, value in enumerate(rank.to_pylist()) if not -(1 << 63) <= int(value) < 1 << 63]
            why, bad = "is too large", big[0]
    else:
        why = "is not a decimal integer (ASCII digits, optional sign)"
    line = int(run.line[bad]) if run.line is not None else bad + 1
    raise InputError(run.path, line, f"rank {rank[bad].as_py()!r} {why} (--ties rank)")


_MAX_TIED = 0.25  # share of tied pairs above which trec_order sorts all rows with Arrow (measured)
# trec_eval's order (query key, score descending, docid descending): the one place that says so
_ORDER = [("q", "ascending"), ("s", "descending"), ("d", "descending")]


def _arrow_order(qkey: np.ndarray, score: np.ndarray, docid):
    """The reference: Arrow's stable sort by (query key ascending, score descending, docid descending)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    return to_numpy(pc.sort_indices(pa.table({"q": numeric_array(qkey), "s": numeric_array(score), "d": docid}),
                                    sort_keys=_ORDER))


def _score_sort(qkey: np.ndarray, score: np.ndarray, same: np.ndarray) -> np.ndarray:
    """The rows by (query key ascending, score descending), ties in no set order: each query block's
    scores sorted on their own (:func:`_query_blocks`), else one unstable numpy sort of the scores, then
    a stable sort of the query keys (a radix sort for 16-bit keys).  The score sort is the costly step,
    and its cost depends on the CPU (docs/performance.md): runs already in score order within each
    query never reach this function."""
    by_block = _query_blocks(qkey, same, score)
    if by_block is not None:
        return by_block
    order = np.argsort(score)[::-1]
    top = int(qkey.max()) if len(qkey) else 0
    key = qkey.astype(np.uint16) if 0 <= top < 1 << 16 else qkey
    return order[np.argsort(key[order], kind="stable")]


_BLOCK_ROWS = 256  # mean rows per query block from which each block's scores are sorted on their own


def _query_blocks(qkey: np.ndarray, same: np.ndarray, score: np.ndarray | None = None) -> np.ndarray | None:
    """The permutation that puts the contiguous query blocks of a run written query by query in
    ascending key order, each kept in file order (DL-HARD's bm25 lists its queries unsorted) or, given
    ``score``, sorted by it descending (blocks of ``_BLOCK_ROWS`` rows or more on average: a block's
    scores sort in cache); None when some key has rows in two places, or the blocks are too small.
    ``same``: ``qkey[1:] == qkey[:-1]``."""
    start = np.concatenate(([0], np.flatnonzero(~same) + 1))
    if score is not None and len(start) * _BLOCK_ROWS > len(qkey):
        return None
    key = qkey[start]
    perm = np.argsort(key, kind="stable")
    if (key[perm][1:] == key[perm][:-1]).any():  # a query in two places: not blocks
        return None
    end = np.append(start[1:], len(qkey))
    if score is None:
        return spans(start[perm], (end - start)[perm])[0]
    return np.concatenate([first + np.argsort(score[first:last])[::-1]
                           for first, last in zip(start[perm].tolist(), end[perm].tolist())])


def trec_order(qkey: np.ndarray, score: np.ndarray, docid) -> np.ndarray:
    """The rows in trec_eval's order: query key ascending, score descending, ties by docid descending
    in ``strcmp`` (unsigned byte) order; -0.0 and 0.0 are equal scores.  Instead of a three-key sort: a
    run already in order is recognised in one pass, its query blocks put in order (:func:`_query_blocks`),
    else :func:`_score_sort`; then the groups of tied scores sorted by docid in one Arrow sort (all rows
    by :func:`_arrow_order` beyond ``_MAX_TIED`` tied pairs)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    n_rows = len(qkey)
    same = qkey[1:] == qkey[:-1]
    descending = ((score[1:] <= score[:-1]) | ~same).all()
    order = None
    if descending and (qkey[1:] >= qkey[:-1]).all():
        sorted_query, sorted_score = qkey, score
    elif descending and (order := _query_blocks(qkey, same)) is not None:
        sorted_query, sorted_score = qkey[order], score[order]
        same = sorted_query[1:] == sorted_query[:-1]
    else:
        order = _score_sort(qkey, score, same)
        sorted_query, sorted_score = qkey[order], score[order]
        same = sorted_query[1:] == sorted_query[:-1]
    tied = np.flatnonzero(same & (sorted_score[1:] == sorted_score[:-1]))  # tied pairs (t, t + 1) of positions
    if len(tied) > _MAX_TIED * n_rows:
        return _arrow_order(qkey, score, docid)
    order = np.arange(n_rows) if order is None else order
    if len(tied) == 0:
        return order
    first = np.ones(len(tied), dtype=bool)
    first[1:] = tied[1:] != tied[:-1] + 1  # the pair opens a new tie group
    size = np.diff(np.append(np.flatnonzero(first), len(tied))) + 1  # rows per group
    pos, _ = spans(tied[first], size)
    rows = order[pos]  # each group's rows sorted by docid in one sort (a query repeats no docid)
    group = numeric_array(np.repeat(np.arange(len(size)), size))
    order[pos] = rows[to_numpy(pc.sort_indices(pa.table({"g": group, "d": pc.take(docid, numeric_array(rows))}),
                                               sort_keys=[("g", "ascending"), _ORDER[2]]))]
    return order


def _checked_numeric_ids(run: Run, docid, qcode) -> np.ndarray | None:
    """The run's docids as numbers (:func:`numeric_ids`), the run checked for repeated (query, document)
    pairs on them; None for other docids.  Kept in ``run.cache`` while the run holds the same Arrow
    arrays: a loaded run evaluated again does not cast and sort its docids again."""
    import pyarrow as pa

    made = run.cache.get("numeric_ids")
    if made is not None and made[0] is run.qid and made[1] is run.docid:
        return made[2]
    ids = numeric_ids(docid)
    if ids is not None:
        check_duplicates(run.qid, docid, run.path, run.line, "the run", qcode=qcode, dcode=ids)
    if isinstance(run.qid, (pa.Array, pa.ChunkedArray)) and isinstance(run.docid, (pa.Array, pa.ChunkedArray)):
        run.cache["numeric_ids"] = (run.qid, run.docid, ids)
    return ids


def _judged_codes(run: Run, docid, jdict) -> np.ndarray:
    """Each of the run's docids' code among the judged docids ``jdict`` (``len(jdict)``: judged for no
    query of the set), kept in ``run.cache`` beside :func:`_checked_numeric_ids`'s numbers for the last
    ``jdict`` (the join's, kept per query set): a loaded run evaluated again looks nothing up again."""
    import pyarrow as pa
    import pyarrow.compute as pc

    made = run.cache.get("judged_codes")
    if made is None or made[0] is not run.docid or made[1] is not jdict:
        codes = to_numpy(pc.fill_null(pc.index_in(docid, value_set=jdict), scalar(len(jdict), pa.int32())))
        made = (run.docid, jdict, codes)
        if isinstance(run.docid, (pa.Array, pa.ChunkedArray)):
            run.cache["judged_codes"] = made
    return made[2]


def _pair_table(qrels: Qrels, jdict, jkeys: np.ndarray):
    """:func:`..inputs.fingerprints.pair_table` of the join's judged (query, docid) keys ``jkeys``
    (:func:`_join_index`; entry ``e`` is key ``jkeys[e]``), kept on the qrels for the last ``jkeys``
    (None: the fingerprints cannot decide)."""
    from ..inputs import fingerprints as fp

    made = qrels.cache.get("pair_table")
    if made is None or made[0] is not jkeys:
        n_judged = len(jdict)
        query, code = (jkeys // n_judged, jkeys % n_judged) if n_judged else (jkeys, jkeys)
        made = (jkeys, fp.pair_table(jdict, query, code))
        qrels.cache["pair_table"] = made
    return made[1]


def _pair_entries(qrels: Qrels, jdict, jkeys: np.ndarray, docid, query: np.ndarray):
    """(the join's entry of each run document, -1 where the qrels do not judge it for its query, ``query``
    its query-set index or -1; the docids' fingerprints), found in one lookup of (query, docid) pairs by
    fingerprints (:func:`..inputs.fingerprints.pair_entries`); None when the fingerprints cannot decide
    (long docids, a shared fingerprint): the caller then joins on Arrow's codes."""
    from ..inputs import fingerprints as fp

    table = _pair_table(qrels, jdict, jkeys)
    return None if table is None else fp.pair_entries(table, docid, query)


def prepare_join(qrels: Qrels, qids: list) -> None:
    """Build now the qrels' side of the join for the query set ``qids`` (the join index and, for string
    docids, the fingerprint table of the judged pairs), for forked workers to inherit (blocks.prepare)."""
    jdict, jkeys, _ = _join_index(qrels, qids)
    if len(jdict) and numeric_ids(jdict) is None:
        _pair_table(qrels, jdict, jkeys)


def _docids_like(run: Run, jdict):
    """The run's docids as one array of the judged docids' type (string or large string), so that
    lookups and casts compare like with like."""
    import pyarrow as pa
    import pyarrow.compute as pc

    docid = run.docid.combine_chunks() if isinstance(run.docid, pa.ChunkedArray) else run.docid
    return pc.cast(docid, jdict.type) if docid.type != jdict.type else docid


def _query_index(qdict, qids: list) -> np.ndarray:
    """Each run query's index in ``qids`` (-1: not one of them): a dict lookup of a few hundred ids
    costs less than building Arrow's hash table of ``qids`` for them."""
    at = {qid: index for index, qid in enumerate(qids)}
    return np.array([at.get(qid, -1) for qid in qdict.to_pylist()], dtype=np.int64)


def precision_swaps(score64, order, query, qkey, docid, score_precision: str, depth=None) -> int:
    """Documents ranked at another place (within -M ``depth``) had the scores been read in the other
    precision (trec_eval 10 reads doubles; trec_eval <= 9.0.8, pytrec_eval, ir_measures floats).
    ``order``: the run in the chosen precision's trec order, ``query`` its query index per row.  Rounding
    is monotone, so the orders differ only where adjacent documents of a query have equal floats and
    different doubles: only then is the other order computed and compared."""
    s64 = score64[order]
    s32 = s64.astype(np.float32)
    if not ((query[1:] == query[:-1]) & (s32[1:] == s32[:-1]) & (s64[1:] != s64[:-1])).any():
        return 0
    other = score64.astype(np.float32).astype(np.float64) if score_precision == "float64" else score64
    return _moved(trec_order(qkey, other, docid)[:len(order)], order, query, depth)


def _moved(alt, order, query, depth=None) -> int:
    """Ranked documents (within -M ``depth``) whose place differs between two orders of the same rows
    (``q``: the query index per row of ``order``, ascending)."""
    moved = alt != order
    if depth is not None and len(query):
        starts = np.searchsorted(query, np.arange(int(query.max()) + 2))
        moved &= (np.arange(len(query)) - starts[query]) < depth
    return int(moved.sum())


def rank_run(run: Run, qrels: Qrels, qids: list, *, ties: str = "score", score_precision: str = "float64",
             depth: int | None = None) -> RankedRun:
    """Order a run as trec_eval does and join it to the qrels.  ties='score': score descending, then
    docid descending in byte order (trec_eval); 'rank': the rank column ascending, then file order;
    'file': file order.  score_precision='float32' first rounds the scores to single precision
    (trec_eval <= 9.0.8, pytrec_eval, ir_measures); ``depth``: trec_eval's -M."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if score_precision not in ("float64", "float32"):
        raise ValueError("score_precision must be 'float64' or 'float32'")
    if ties not in ("score", "rank", "file"):
        raise ValueError("ties must be 'score', 'rank' or 'file'")
    qdict, qcode = run_queries(run)
    jdict, jkeys, jrows = _join_index(qrels, qids)
    n_judged = len(jdict)
    docid = _docids_like(run, jdict)
    to_q = _query_index(qdict, qids)  # run query code -> query-set index (-1: not in the qrels, ignored)
    n_ignored = int((to_q < 0).sum())
    q_all = to_q[qcode]
    ids = _checked_numeric_ids(run, docid, qcode)
    joined = dcode = None  # the qrels row of each run row (file order), or each docid's judged code
    if ids is not None:
        # Numeric docids: repeats are found on the numbers, and a lookup in the (small, per query
        # set) judged docids finds each one's judged code; no table of every run docid is built.
        dcode = _judged_codes(run, docid, jdict)
    elif (found := _pair_entries(qrels, jdict, jkeys, docid, q_all)) is not None:
        from ..inputs.fingerprints import distinct_entries

        entry, hashes = found
        if distinct_entries(qcode, hashes, entry):  # else a repeat or a shared fingerprint: the strings decide
            joined = np.full(len(entry), -1, dtype=np.int64)
            joined[entry >= 0] = jrows[entry[entry >= 0]]
    if joined is None and dcode is None:
        # One hash of the judged docids followed by the run's: the judged ones are distinct, so a
        # run document's code below len(jdict) is its judged docid's code, and the same codes find
        # repeated documents (integer keys, not a string sort).
        dcode = to_numpy(pc.dictionary_encode(pa.concat_arrays([jdict, docid])).indices)[n_judged:]
        check_duplicates(run.qid, docid, run.path, run.line, "the run", qcode=qcode, dcode=dcode)

    score = run.score
    if score_precision == "float32":
        score = score.astype(np.float32).astype(np.float64)
    qkey = np.where(q_all < 0, len(qids), q_all)  # rows of ignored queries sort last and are cut off below
    if ties == "score":
        order = trec_order(qkey, score, docid)
    elif ties == "rank":
        order = np.lexsort((np.arange(len(q_all)), rank_values(run), qkey))
    else:
        order = np.argsort(qkey, kind="stable")
    nkeep = int((q_all >= 0).sum())
    order = order[:nkeep]
    query = q_all[order]

    if ties == "score":
        f32_ties = precision_swaps(run.score, order, query, qkey, docid, score_precision, depth)
    else:  # the same count for the tie rule chosen: documents at another place than in trec_eval's order
        f32_ties = _moved(trec_order(qkey, score, docid)[:nkeep], order, query, depth)

    n_queries = len(qids)
    starts = np.searchsorted(query, np.arange(n_queries + 1))
    if depth is not None:
        keep = (np.arange(len(query)) - starts[query]) < depth
        if not keep.all():
            query, order = query[keep], order[keep]

    # Join to the judgements of the evaluated queries only (a streamed block's, not the whole
    # qrels'): integer (query, docid code) keys of the judged candidates find their judgements.
    row = joined[order] if joined is not None else _join_rows(query, dcode[order], jkeys, jrows, n_judged)
    judged = row >= 0
    grade = np.zeros(len(query))
    grade[judged] = qrels.grade[row[judged]]

    present = np.bincount(query, minlength=n_queries)[:n_queries] > 0
    ranking = Ranking(query, grade, n_queries, np.arange(n_queries), judged)
    return RankedRun(name=run.name, ranking=ranking, present=present, ignored_queries=n_ignored, float32_ties=f32_ties,
                     _docid=run.docid, _take=order, judged=(len(judged), int(np.count_nonzero(judged))))
