"""Reading a query-grouped run in blocks of whole queries, in time linear in the input.

Each new chunk is scanned once, backwards, only as far as the previous scan reached, so that one
query (or a run of blank lines, or a decompression bomb) larger than a chunk costs linear time.
Each chunk is checked for NUL bytes and lines longer than ``MAX_LINE_BYTES``, and the buffer of one
query may not exceed ``MAX_INPUT_BYTES`` (text.py, docs/errors.md).
"""
from __future__ import annotations

from .errors import InputError
from . import text
from .text import READ_ERRORS, check_chunk, open_input

__all__ = ["query_blocks", "run_blocks", "block_bounds", "BLOCK_BYTES", "WHOLE_BYTES"]

# peak RSS grows with the block, at the same CPU time (docs/performance.md, "Block size")
BLOCK_BYTES = 4 << 20
# a run file of at most this size is one block: a typical TREC run (100 queries x 1000, ~5 MB) cut
# in two would pay every per-block cost (the qrels join of its query set, the judged table) twice
WHOLE_BYTES = 6 << 20


def whole_bytes(block_bytes: int) -> int:
    """The size up to which a file is one block: ``WHOLE_BYTES`` with the default blocks, else theirs."""
    return WHOLE_BYTES if block_bytes == BLOCK_BYTES else block_bytes


def _qid(line: bytes):
    parts = line.split(None, 1)
    if not parts or parts[0].startswith(b"#"):
        return None
    return parts[0].removeprefix(b"\xef\xbb\xbf")  # a UTF-8 BOM before the file's first qid


def _skip_blank(data, floor: int, pos: int) -> int:
    """The end (a line boundary) of the last line in ``data[floor:pos]`` that is not blank, else
    ``floor``, looked for in windows that double (64 bytes, 128, ...): a long run of blank lines
    costs a few copies of itself, not one Python step per line."""
    window, end = 64, pos
    while pos > floor:
        start = max(floor, pos - window)
        kept = len(bytes(data[start:pos]).rstrip())
        if kept:
            newline = data.find(b"\n", start + kept, end)
            return newline + 1 if newline >= 0 else end
        pos, window = start, window * 2
    return floor


def _skip_lines_of(data, floor: int, pos: int, qid: bytes) -> int:
    """The start of the run of lines before ``pos`` (a line boundary above ``floor``, itself one)
    that each begin with ``qid`` and a space or a tab, found by numpy in windows that double (8 KiB,
    16 KiB, ...); any other line (leading blanks, a comment, a blank line, another qid) stops it."""
    import numpy as np

    key, k = np.frombuffer(qid, np.uint8), len(qid)
    window = 8192
    while pos > floor:
        lo = max(floor, pos - window)
        a = np.frombuffer(bytes(data[lo:pos]), np.uint8)  # (a copy: numpy holds no export of the buffer)
        starts = np.flatnonzero(a[:-1] == 10) + 1  # the lines starting after a newline in the window
        if lo == floor:
            starts = np.concatenate((np.zeros(1, starts.dtype), starts))
        if not len(starts):  # no line starts in the window: one line longer than it
            window *= 2
            continue
        ends = np.append(starts[1:], len(a))
        room = np.flatnonzero(ends - starts > k)  # lines long enough for the qid and a delimiter
        at = starts[room]
        same = (a[at + k] == 32) | (a[at + k] == 9)
        for j in range(k):
            same &= a[at + j] == key[j]
        plain = np.zeros(len(starts), bool)
        plain[room[same]] = True
        other = np.flatnonzero(~plain)
        if len(other):
            return lo + int(ends[other[-1]])
        pos, window = lo + int(starts[0]), window * 2
    return floor


def _scan(data, floor: int, pos: int):
    """Scan the whole lines of ``data[floor:pos]`` backwards: (the qid of the last data line, that
    line's end, the end of the last data line of another query before it or None).  A run of blank
    lines and the lines plainly of that query are each passed in one step."""
    last = last_end = None
    while pos > floor:
        start = max(data.rfind(b"\n", floor, pos - 1) + 1, floor)
        line = bytes(data[start:pos])
        qid = _qid(line)
        if qid is None:  # a comment, or blank lines
            pos = start if line.strip() else _skip_blank(data, floor, start)
            continue
        if last is not None and qid != last:
            return last, last_end, pos
        if last is None:
            last, last_end = qid, pos
        pos = _skip_lines_of(data, floor, start, last)
    return last, last_end, None


def query_blocks(path: str, block_bytes: int = BLOCK_BYTES, *, whole: int = 0):
    """Yield (bytes, first line number) blocks, each holding whole queries' lines; an input of at most
    ``whole`` bytes as one block, without the scan for its trailing query (:func:`run_blocks`)."""
    handle = open_input(path)

    def read(size: int) -> bytes:
        try:
            return handle.read(size)
        except READ_ERRORS as exc:
            raise InputError(path, None, f"cannot read: {exc}") from None

    def chunks(held: bytes):
        # the input in chunks of block_bytes, as successive read(block_bytes) give them (``held``: read already)
        while True:
            if len(held) < block_bytes:
                held += read(block_bytes - len(held))
            if not held:
                return
            yield held[:block_bytes]
            held = held[block_bytes:]

    try:
        held = read(whole + 1) if whole else b""
        if whole and len(held) <= whole:  # a read stops short only at the end: the whole input, one block
            if b"\x00" in held:
                check_chunk(held, path, 1)
            _checked_end(held, path, 1)
            if held and not held.isspace():
                yield held, 1
            return
        yield from _cut(chunks(held), path)
    finally:
        if path != "-":
            handle.close()


def _cut(chunks, path: str):
    """(bytes, first line number) blocks of whole queries from ``chunks``: after each chunk, the buffer
    up to its trailing query (with the comment and blank lines before it).  Each chunk is scanned once
    (:func:`_scan` down to ``scanned``); a query new to the buffer starts after its last data line."""
    buf, line = bytearray(), 1  # line: the line number of buf[0]
    qid = last_end = None
    scanned = 0
    for chunk in chunks:
        if b"\x00" in chunk:
            check_chunk(chunk, path, line + buf.count(b"\n"))
        buf += chunk
        end = _checked_end(buf, path, line)
        found, found_end, cut = _scan(buf, scanned, end)
        if found is not None:
            if cut is None and qid is not None and found != qid:
                cut = last_end
            qid, last_end = found, found_end
        scanned = end
        if cut:
            with memoryview(buf) as view:  # one copy (bytes(buf[:cut]) makes two)
                block = bytes(view[:cut])
            del buf[:cut]
            scanned, last_end = scanned - cut, last_end - cut
            yield block, line
            line += _newlines(block)
    if bytes(buf).strip():
        yield bytes(buf), line


def _newlines(data: bytes) -> int:
    """``data.count(b"\\n")``, counted by numpy: bytes.count tests one byte at a time."""
    import numpy as np

    return int(np.count_nonzero(np.frombuffer(data, np.uint8) == 10))


def _checked_end(buf, path: str, line: int) -> int:
    """The end of the last whole line of ``buf`` (whose first line is line ``line``); refused: a line
    longer than ``MAX_LINE_BYTES``, a buffer (one query's lines) larger than ``MAX_INPUT_BYTES``."""
    end = buf.rfind(b"\n") + 1
    if len(buf) - end > text.MAX_LINE_BYTES:
        raise InputError(path, line + buf.count(b"\n", 0, end),
                         f"line longer than {text.MAX_LINE_BYTES} bytes (ULNORM_EVAL_MAX_LINE)")
    if len(buf) > text.MAX_INPUT_BYTES:
        raise InputError(path, line, f"one query's lines exceed {text.MAX_INPUT_BYTES} bytes (ULNORM_EVAL_MAX_INPUT)")
    return end


def run_blocks(path: str, block_bytes: int = BLOCK_BYTES):
    """:func:`query_blocks`, an input of up to :func:`whole_bytes` in one block."""
    return query_blocks(path, block_bytes, whole=whole_bytes(block_bytes))


def block_bounds(path: str, block_bytes: int = BLOCK_BYTES) -> list:
    """Byte offsets ``[0, b1, ..., size]`` of the blocks :func:`query_blocks` yields for an uncompressed
    regular file, found by reading only around each multiple of ``block_bytes``.

    query_blocks cuts the data read up to offset k * block_bytes before its last query, which
    depends only on the lines just before the offset.  Workers then read their blocks themselves
    (pipeline.parallel), the blocks (hence the notes and errors) those of :func:`run_blocks`.
    """
    import os

    size = os.path.getsize(path)
    bounds = [0]
    with open(path, "rb") as handle:
        for target in (*range(block_bytes, size, block_bytes), size):
            prev, width = bounds[-1], 1 << 16
            while True:
                floor = max(prev, target - width)
                handle.seek(floor)
                data = handle.read(target - floor)
                if floor > prev:  # start at a whole line: the partial first line's qid means nothing
                    newline = data.find(b"\n")
                    if newline < 0:
                        width *= 4
                        continue
                    floor, data = floor + newline + 1, data[newline + 1:]
                cut = _scan(data, 0, data.rfind(b"\n") + 1)[2] or 0  # where query_blocks would cut
                if cut == 0 and floor > prev:  # the last query reaches past the window
                    width *= 4
                    continue
                break
            if cut:
                bounds.append(floor + cut)
    if bounds[-1] != size:
        bounds.append(size)
    if len(bounds) > 2 and bounds[-1] <= whole_bytes(block_bytes):  # as run_blocks merges them
        bounds = [0, bounds[-1]]
    return bounds
