"""Streamed runs are read in BLOCK_BYTES blocks of whole queries (peak RSS grows with them), and a run
file of up to WHOLE_BYTES in one piece (each block pays the qrels join of its query set again)."""
from ulnorm_eval.inputs import block_reader as blocks


def _run(path, size):
    """A run of about ``size`` bytes, 1000 lines a query."""
    line = "{q} Q0 LA0101-{d:05d} {r} {s:.6f} tag\n"
    out, q = [], 0
    total = 0
    while total < size:
        q += 1
        part = "".join(line.format(q=q, d=d, r=d + 1, s=1000 - d) for d in range(1000))
        out.append(part)
        total += len(part)
    path.write_text("".join(out))
    return path.stat().st_size


def test_a_long_run_is_read_in_4_mib_blocks(tmp_path):
    assert blocks.BLOCK_BYTES == 4 << 20 and blocks.WHOLE_BYTES == 6 << 20
    p = tmp_path / "long.run"
    size = _run(p, 9 << 20)
    got = [len(b) for b, _ in blocks.run_blocks(str(p))]
    # each block ends before the last query read so far: the first within 4 MiB, every one within 4 MiB
    # and a query of the last
    assert got[0] <= blocks.BLOCK_BYTES and max(got) < blocks.BLOCK_BYTES + 100_000 and sum(got) == size
    assert len(got) >= 3
    bounds = [0]
    for n in got:
        bounds.append(bounds[-1] + n)
    assert blocks.block_bounds(str(p)) == bounds


def test_a_run_of_up_to_6_mib_is_one_block(tmp_path):
    p = tmp_path / "robust-sized.run"
    size = _run(p, 5 << 20)  # a TREC run of 100 queries x 1000: more than one block, less than WHOLE_BYTES
    assert blocks.BLOCK_BYTES < size <= blocks.WHOLE_BYTES
    got = [len(b) for b, _ in blocks.run_blocks(str(p))]
    assert got == [size]
    assert blocks.block_bounds(str(p)) == [0, size]
    # smaller blocks asked for explicitly are given (the tests' multi-block runs)
    assert len(list(blocks.run_blocks(str(p), 1 << 20))) > 1
