"""Short string docids as 64-bit fingerprints: a run's join with the judged docids and its check for
repeated (query, document) pairs without Arrow hashing the judged docids again for every run.

A docid of at most ``MAX_WORDS`` x 8 bytes is read as little-endian 64-bit words (zero past its end)
and its length, mixed by splitmix64's finaliser (Steele, Lea & Flood 2014).  No fingerprint is trusted
to be unique: a table is refused if two of its entries share one (:func:`pair_table`), a run
document is judged only if its query, length and words equal a judged pair's (:func:`pair_entries`),
and equal pair fingerprints send the caller to the strings (:func:`distinct_entries`).  Where a
function returns None the caller falls back to Arrow's encoding.
"""
from __future__ import annotations

import numpy as np

from ..hashing import GOLDEN, mix64
from .arrow import offsets

__all__ = ["MAX_WORDS", "words", "pair_table", "pair_entries", "distinct_entries"]

MAX_WORDS = 4  # docids up to 32 bytes (TREC, MS MARCO, ClueWeb ids); longer ones go to Arrow
# MASK[k]: the low k bytes of a word (a docid's last word, read past its end, is cut to its bytes)
_MASK = np.array([(1 << (8 * k)) - 1 for k in range(8)] + [(1 << 64) - 1], dtype=np.uint64)


def words(arr):
    """(list of uint64 word arrays, int64 byte lengths, uint64 fingerprints) of a pyarrow string array,
    or None for a null, another type, or a docid longer than ``MAX_WORDS`` words.  Word k of a docid
    holds its bytes 8k..8k+7, little-endian, zero past its end; its fingerprint mixes its length, then
    each of its words in turn: it depends on its own bytes only, not on the longest docid beside it."""
    import pyarrow as pa

    if arr.null_count or not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
        return None
    size, off = len(arr), offsets(arr)
    length = np.diff(off).astype(np.int64)
    hashes = length.astype(np.uint64) * GOLDEN
    nwords = (int(length.max()) + 7) // 8 if size else 0
    if nwords > MAX_WORDS:
        return None
    if nwords == 0:  # no docid, or every one empty
        return [], length, hashes
    first, last, shortest = int(off[0]), int(off[-1]), int(length.min())
    data = np.zeros(last - first + 8 * nwords + 8, np.uint8)
    data[:last - first] = np.frombuffer(arr.buffers()[2], np.uint8, count=last - first, offset=first)
    # every run of 8 x nwords bytes as an (unaligned) opaque item starting at byte i: one gather
    # copies all of a docid's words at once
    span = np.ndarray(shape=(len(data) - 8 * nwords + 1,), dtype=f"V{8 * nwords}", buffer=data, strides=(1,))
    block = np.ascontiguousarray(span[off[:-1].astype(np.intp) - first].view("<u8").reshape(size, nwords).T)
    out = []
    for word_index in range(nwords):
        word = block[word_index]
        if shortest < 8 * (word_index + 1):  # some docids end within (or before) this word
            word &= _MASK[np.clip(length - 8 * word_index, 0, 8)]
        out.append(word)
        mixed = mix64(hashes ^ word)
        hashes = mixed if shortest > 8 * word_index else np.where(length > 8 * word_index, mixed, hashes)
    return out, length, hashes


def _distinct(keys: np.ndarray) -> bool:
    """True when the uint64 ``keys`` (well mixed) are all distinct: counted into 4n slots (at most
    2^22) by their top bits, and only the keys sharing a slot (about a fifth) sorted and compared."""
    bits = min(22, max(4, (4 * len(keys)).bit_length()))
    slot = (keys >> np.uint64(64 - bits)).astype(np.intp)
    shared = np.sort(keys[np.bincount(slot, minlength=1 << bits)[slot] > 1])
    return not (shared[1:] == shared[:-1]).any()


def _slots(hashes: np.ndarray):
    """An open-addressing (linear probing) table of distinct fingerprints ``hashes``: (slots: index
    into ``hashes`` or -1, the shift from a fingerprint to its first slot, each slot's fingerprint,
    the mark of a free slot)."""
    bits = max(4, (2 * len(hashes)).bit_length() + 1)  # at most a quarter of the slots filled
    shift = np.uint64(64 - bits)
    slots = np.full((1 << bits) + 1, -1, np.int32)  # probes run past the last slot into the extra one
    pending = np.arange(len(hashes))
    pos = (hashes >> shift).astype(np.intp)
    while len(pending):  # each round fills the free slots, one entry per slot
        free = slots[pos] < 0
        slots[pos[free]] = pending[free]
        placed = np.zeros(len(pending), bool)
        placed[free] = slots[pos[free]] == pending[free]
        pending, pos = pending[~placed], pos[~placed] + 1
        if len(pos) and int(pos.max()) >= len(slots):
            slots = np.concatenate((slots, np.full(len(pending), -1, np.int32)))
    if slots[-1] >= 0:  # a probe always ends on a free slot
        slots = np.append(slots, -1)
    # each slot's fingerprint, a free slot holding one no judged docid has: a lookup reads one array
    free_mark = np.uint64(0)
    if (hashes == 0).any():
        small = np.arange(len(hashes) + 1, dtype=np.uint64)
        free_mark = small[~np.isin(small, hashes)][0]
    slot_hash = np.where(slots >= 0, hashes[slots], free_mark) if len(hashes) else np.full(len(slots), free_mark)
    return slots, shift, slot_hash, free_mark


def _find(slot_table, hashes: np.ndarray):
    """(positions in ``hashes`` whose fingerprint the table holds, the table's index of each): the
    candidates, to be verified by the caller (equal fingerprints are not equal strings)."""
    slots, shift, slot_hash, free_mark = slot_table
    pos = (hashes >> shift).astype(np.intp)
    held = slot_hash[pos]
    live = held != free_mark
    hit = live & (held == hashes)
    more = np.flatnonzero(live & ~hit)
    hit = np.flatnonzero(hit)
    hits = [hit]
    while len(more):  # the next slot, for those whose slot holds another fingerprint
        pos[more] += 1
        held = slot_hash[pos[more]]
        live = held != free_mark
        hit = live & (held == hashes[more])
        hits.append(more[hit])
        more = more[live & ~hit]
    matched = np.concatenate(hits) if len(hits) > 1 else hits[0]
    return matched, slots[pos[matched]].astype(np.int64)


def _pair(hashes: np.ndarray, query) -> np.ndarray:
    """The fingerprint of each (query number, docid) pair from the docid's fingerprint."""
    return mix64(hashes ^ (np.asarray(query).astype(np.uint64) * GOLDEN))


def pair_table(judged, query: np.ndarray, code: np.ndarray):
    """The lookup table of the distinct (query, judged docid) pairs of a qrels, entry ``e`` the pair
    (``query[e]``, ``judged[code[e]]``), ``query`` numbers in [0, 2^31), ``judged`` a pyarrow string
    array: (each entry's docid words, its query number x 2^32 + docid length, its pair fingerprint,
    open-addressing slots), or None when the docids are not short strings or two pairs share a
    fingerprint.  A run's document finds its judgement in one lookup (:func:`pair_entries`)."""
    query, code = np.asarray(query, np.int64), np.asarray(code, np.intp)
    if len(query) and not (0 <= int(query.min()) and int(query.max()) < 1 << 31):
        return None
    got = words(judged)
    if got is None:
        return None
    word_arrays, length, hashes = got
    hashes = _pair(hashes[code], query)
    if not _distinct(hashes):
        return None
    return [word[code] for word in word_arrays], (query << 32) | length[code], hashes, _slots(hashes)


def pair_entries(table, docid, query: np.ndarray):
    """(the :func:`pair_table` entry of each (``query[i]``, ``docid[i]``), -1 where the table has no
    such pair, a query number below 0 matching none; the docids' fingerprints), or None when the
    docids are not short strings.  An entry is taken only if its query, the docid's length and every
    one of its words are equal: equal pairs, exactly."""
    got = words(docid)
    if got is None:
        return None
    word_arrays, length, hashes = got
    entry_words, tag, entry_hashes, slot_table = table
    entry = np.full(len(hashes), -1, dtype=np.int64)
    if not len(entry_hashes):
        return entry, hashes
    query = np.asarray(query, np.int64)
    matched, index = _find(slot_table, _pair(hashes, query))
    same = tag[index] == ((query[matched] << 32) | length[matched])
    for judged_words, run_words in zip(entry_words, word_arrays):  # equal lengths: the shorter's words suffice
        same &= judged_words[index] == run_words[matched]
    entry[matched[same]] = index[same]
    return entry, hashes


def distinct_entries(qcode: np.ndarray, hashes: np.ndarray, entry: np.ndarray) -> bool:
    """True when the (query, docid) pairs of docids whose :func:`pair_entries` ``entry`` are known
    (one query number per query code ``qcode``) are all distinct; False when two may be equal (a
    repeat, or a shared fingerprint: the caller compares the strings).  Documents found in the table
    repeat a pair only by repeating an entry; the others only if their (query code, fingerprint)
    pairs do; a document of one kind never repeats one of the other."""
    found = entry >= 0
    if found.any() and np.bincount(entry[found]).max() > 1:
        return False
    rest = np.flatnonzero(~found)
    return _distinct(_pair(hashes[rest], np.asarray(qcode)[rest]))
