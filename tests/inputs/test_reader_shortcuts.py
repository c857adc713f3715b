"""The large-input reader's shortcuts equal the straightforward computations they replace.

inputs/trec.py checks a parsed block for a comment line (a first field starting with '#') and for
the reserved query id ('all') with numpy on the Arrow buffers instead of Arrow's ``starts_with`` and
``is_in``, and takes a one-chunk column as it is (two chunks joined).  Each is compared here with the plain Python
answer on random string arrays (sliced, large strings, ids that share a first byte or a length
with 'all'), and through read_run with the careful parser's answer.
"""
from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pytest

# private throughout: each shortcut of the reader against the plain computation it replaces
from ulnorm_eval.inputs import trec

ALPHABET = ["a", "l", "#", "x", "1", "al", "all", "alll", "lla", "é", "\t"]


def _random_strings(rng: random.Random, n: int, empty: bool) -> list:
    out = []
    for _ in range(n):
        k = rng.randint(0 if empty else 1, 4)
        out.append("".join(rng.choice(ALPHABET) for _ in range(k)) or ("" if empty else "a"))
    return out


def _arrays(rng: random.Random, empty: bool):
    """Random string arrays in the layouts Arrow hands back: plain, sliced, large strings."""
    for _ in range(60):
        strings = _random_strings(rng, rng.randint(1, 40), empty)
        for typ in (pa.string(), pa.large_string()):
            arr = pa.array(strings, typ)
            yield strings, arr
            lo = rng.randint(0, len(strings) - 1)
            hi = rng.randint(lo + 1, len(strings))
            yield strings[lo:hi], arr.slice(lo, hi - lo)


@pytest.mark.parametrize("seed", range(4))
def test_first_bytes_are_each_strings_first_byte(seed):
    rng = random.Random(seed)
    for strings, arr in _arrays(rng, empty=False):
        assert trec._first_bytes(arr).tolist() == [s.encode()[0] for s in strings]


def test_a_run_parsed_in_two_blocks_keeps_every_value_of_both():
    """``halves``: Arrow parses 600 kB in two blocks, each column two chunks joined into one array."""
    lines = [(str(i // 1000), f"d{i}", 1000 - i % 1000, 1 / (i + 1)) for i in range(20_000)]
    data = "".join(f"{q} Q0 {d} {r} {s!r} tag\n" for q, d, r, s in lines).encode()
    run = trec.read_run("r", data=data, halves=True)
    assert run.line is None  # the fast path read it
    assert run.qid.to_pylist() == [q for q, _, _, _ in lines] and run.docid.to_pylist() == [d for _, d, _, _ in lines]
    assert run.rank.to_pylist() == [str(r) for _, _, r, _ in lines] and run.score.tolist() == [s for *_, s in lines]


@pytest.mark.parametrize("seed", range(3))
def test_fast_path_refuses_comments_and_finds_all_as_the_careful_parser(seed, tmp_path):
    """Random clean runs, some with a line whose qid starts with '#' (a comment to the careful
    parser) or is 'all' (refused, naming its line): the fast path's answer (None, or the error)
    is the careful parser's."""
    rng = random.Random(seed)
    qids = ["1", "al", "all", "#c", "a#", "alll", "10", "lla"]
    for case in range(40):
        lines = []
        for i in range(rng.randint(1, 30)):
            q = rng.choice(qids) if rng.random() < 0.3 else rng.choice(["1", "2", "30"])
            lines.append(f"{q} Q0 d{rng.randint(0, 9)}-{i} {i + 1} {rng.random():.4f} t\n")
        data = "".join(lines).encode()
        cols = trec._fast_columns(data, 6, (4,))
        first = [ln.split()[0] for ln in lines]
        assert (cols is None) == any(q.startswith("#") for q in first), lines
        want = next((i + 1 for i, q in enumerate(first) if q == "all" and not any(
            p.startswith("#") for p in first)), None)
        if cols is None:
            continue
        path = str(tmp_path / f"r{case}")
        if want is None:
            assert trec.read_run(path, data=data).qid.to_pylist() == first
        else:
            with pytest.raises(trec.InputError) as err:
                trec.read_run(path, data=data)
            assert err.value.line == want and "'all' is reserved" in err.value.reason


def test_read_run_on_a_multi_chunk_file_equals_the_careful_parser(tmp_path):
    """A run of several Arrow blocks (more than 4 MiB, one read): the columns joined from their
    chunks equal the careful parser's (which reads line by line)."""
    rng = np.random.default_rng(1)
    n = 130_000
    q = rng.integers(1, 300, n)
    body = "".join(f"{q[i]} Q0 D{rng.integers(0, 10**9)} {i} {rng.random():.6f} tag\n" for i in range(n)).encode()
    assert len(body) > (4 << 20)
    import pyarrow.csv as pacsv

    fast = trec._fast_columns(body, 6, (4,))
    chunks = pacsv.read_csv(pa.py_buffer(body), read_options=pacsv.ReadOptions(autogenerate_column_names=True,
                            block_size=1 << 22), parse_options=pacsv.ParseOptions(delimiter=" "))
    assert chunks.column(0).num_chunks > 1  # the joined path is the one tested
    slow, lines, _, _ = trec._slow_columns(body, 6, "r", "qid Q0 docid rank score tag", True)
    assert fast is not None
    for i in (0, 2, 3, 5):
        assert fast[i].to_pylist() == slow[i].to_pylist()
    assert np.array_equal(fast[4].to_numpy(), trec.to_float(slow[4], "r", lines, "score"))


@pytest.mark.parametrize("seed", range(6))
def test_tail_scan_skipping_a_querys_plain_lines_cuts_where_the_line_by_line_scan_cuts(seed, tmp_path, monkeypatch):
    """The streamed reader passes a query's plain lines ('QID ' or 'QID\\t' at the line start) in
    numpy windows instead of one Python step each: the blocks (bytes and first line numbers) are
    those of the line-by-line scan, on long random runs of queries whose ids prefix each other
    (q1, q10), with tabs, leading blanks, CRLF, a BOM, lines holding only the qid, comments, blank
    lines, and queries longer than a block."""
    from ulnorm_eval.inputs import block_reader as blocks

    rng = random.Random(seed)
    forms = ["{q} Q0 d{i} 1 1.5 A", "{q}\tQ0\td{i}\t1\t1.5\tA", "  {q} Q0 d{i} 1 1 A", "{q} Q0 d{i} 1 1 A\r",
             "{q}", "\t{q} Q0 d 1 1 A", "# {q} comment", "", "   ", "{q}x Q0 d 1 1 A", "{q}  Q0 d 1 1 A"]
    lines = []
    for _ in range(rng.randint(5, 40)):
        q = rng.choice(["q1", "q10", "q100", "Q1", "1", "10", "é"])
        for i in range(rng.choice([1, 3, 50, 400, 3000])):
            form = forms[0] if rng.random() < 0.9 else rng.choice(forms)
            lines.append(form.format(q=q, i=i))
    data = ("\ufeff" if seed % 2 else "") + "\n".join(lines) + ("\n" if seed % 3 else "")
    p = tmp_path / "r"
    p.write_bytes(data.encode())
    for block in (97, 4096, 65536, 1 << 20):
        fast = list(blocks.query_blocks(str(p), block_bytes=block))
        with monkeypatch.context() as m:
            m.setattr(blocks, "_skip_lines_of", lambda data, floor, pos, qid: pos)
            slow = list(blocks.query_blocks(str(p), block_bytes=block))
        assert fast == slow
        assert b"".join(b for b, _ in fast) == data.encode().rstrip() or b"".join(b for b, _ in fast) == data.encode()


def test_skip_lines_of_stops_at_the_first_other_line():
    """_skip_lines_of on a hand-made buffer: where each kind of line stops the run."""
    # private: where the block reader's skip stops, on hand-made buffers
    from ulnorm_eval.inputs.block_reader import _skip_lines_of

    plain = b"q1 a\nq1\tb\n"
    for stop in (b"q10 x\n", b" q1 x\n", b"q1\n", b"# q1\n", b"\n", b"q2 x\n", b"\xef\xbb\xbfq1 x\n"):
        data = b"q2 y\n" + stop + plain
        assert _skip_lines_of(data, 0, len(data), b"q1") == 5 + len(stop)
    data = b"q1 a\n" * 5000  # longer than the first windows: the whole buffer, down to the floor
    assert _skip_lines_of(data, 0, len(data), b"q1") == 0
    assert _skip_lines_of(data, 10, len(data), b"q1") == 10
