"""stream.read_ahead tells its producer whether the caller had to wait for an item: a streamed run's
reader then parses a block on two threads only when it, not the scorer, sets the pace."""
from __future__ import annotations

import time

from ulnorm_eval.pipeline import stream


def _seen(produce_s: float, consume_s: float, n: int = 6) -> list:
    waited = [True]
    flags = []

    def items():
        for k in range(n):
            flags.append(waited[0])  # what the producer sees as it starts item k
            time.sleep(produce_s)
            yield k

    got = []
    for item in stream.read_ahead(items(), waited):
        got.append(item)
        time.sleep(consume_s)
    assert got == list(range(n))
    return flags


def test_a_slow_reader_is_told_the_caller_waits():
    flags = _seen(0.05, 0.0)
    assert flags[0] and all(flags[2:])


def test_a_fast_reader_is_told_the_caller_does_not_wait():
    flags = _seen(0.0, 0.05)
    assert flags[0] and not any(flags[3:])


def test_streamed_blocks_parsed_in_halves_or_not_give_the_same_run(tmp_path):
    lines = [f"{q} Q0 d{q}-{i} {i} {100 - i * 0.5} t" for q in range(1, 40) for i in range(60)]
    data = ("\n".join(lines) + "\n").encode()
    whole, _ = stream.parse_block("r", data, halves=False)
    halves, _ = stream.parse_block("r", data, halves=True)
    for column in ("qid", "docid"):
        assert getattr(whole, column).equals(getattr(halves, column))
    assert (whole.score == halves.score).all()
