"""Seeded generator of an MS MARCO-scale qrels/run pair.

    python benchmarks/generate.py OUTDIR --queries 7000 --depth 1000 --seed 1

Per query: about ``judged`` judged documents (Poisson, grades 0-3 with most of them 0), about 90% of
them retrieved at random positions of a ``depth``-long ranking whose other documents are unjudged.
Document ids are passage numbers of the MS MARCO passage corpus (0 .. 8,841,822), or strings made
from them (``--ids msmarco-doc``: ``D2573``; ``--ids trec``: ``XX-1234-5678``), query ids are
distinct 7-digit numbers, and both files are grouped by query in ascending query id order (so
``--stream`` can read the run).  Scores decrease with rank and carry 6 decimals, as real runs do
(so float32 creates some ties).

The same (queries, depth, judged, seed) always gives byte-identical files.  Everything is drawn
with numpy a block of queries at a time and formatted with pyarrow's string kernels, so 7M run
lines take seconds, and memory stays bounded at any size.  Files are written under a temporary
name and renamed, so an interrupted run never leaves a truncated file that looks complete.
"""
from __future__ import annotations

import argparse
import os

import numpy as np

N_DOCS = 8_841_823            # passages in the MS MARCO v1 passage corpus
GRADES = np.array([0, 1, 2, 3])
GRADE_P = [0.6, 0.2, 0.12, 0.08]
IN_RUN = 0.9                  # share of the judged documents that the run retrieves
BLOCK = 1000                  # queries drawn and written per block; part of the seeded stream


def _distinct_rows(rng: np.random.Generator, rows: int, width: int) -> np.ndarray:
    """``rows`` x ``width`` document ids, distinct within each row.

    Independent draws collide in about 5% of 1,000-document rows; only those rows are redrawn.
    """
    docs = rng.integers(0, N_DOCS, size=(rows, width))
    s = np.sort(docs, axis=1)
    for i in np.flatnonzero((s[:, 1:] == s[:, :-1]).any(axis=1)):
        docs[i] = rng.choice(N_DOCS, size=width, replace=False)
    return docs


def _block(rng: np.random.Generator, qids: np.ndarray, depth: int, judged: int):
    """Qrels columns (qid, doc, grade) and the run matrices (docs, scores) of one block of queries."""
    c = len(qids)
    nj = np.clip(rng.poisson(judged, size=c), 1, depth)
    k = int(nj.max())
    docs = _distinct_rows(rng, c, k + depth)       # first k columns: judged pool; the rest: unjudged
    is_judged = np.arange(k) < nj[:, None]
    judged_docs = docs[:, :k][is_judged]           # row-major, so grouped by query
    grades = rng.choice(GRADES, size=len(judged_docs), p=GRADE_P)

    in_run = np.zeros((c, k), dtype=bool)
    in_run[is_judged] = rng.random(len(judged_docs)) < IN_RUN
    ranked = docs[:, k:].copy()                    # depth unjudged documents per query ...
    rows, _ = np.nonzero(in_run)
    ranked[rows, np.cumsum(in_run, axis=1)[in_run] - 1] = docs[:, :k][in_run]   # ... some replaced
    ranked = np.take_along_axis(ranked, np.argsort(rng.random((c, depth)), axis=1), axis=1)
    scores = np.sort(rng.gamma(2.0, 3.0, size=(c, depth)), axis=1)[:, ::-1]
    return (np.repeat(qids, nj), judged_docs, grades), (ranked, scores)


def _lines(*columns) -> bytes:
    """Space-separated lines of equal-length columns (arrays, or str constants), as one buffer."""
    import pyarrow as pa
    import pyarrow.compute as pc

    cols = [c if isinstance(c, (str, pa.Array)) else pc.cast(pa.array(c), pa.string()) for c in columns]
    last = cols[-1] + "\n" if isinstance(cols[-1], str) else pc.binary_join_element_wise(cols[-1], "\n", "")
    joined = pc.binary_join_element_wise(*cols[:-1], last, " ")
    # the joined strings are contiguous in the array's data buffer: that buffer is the file text
    offsets = np.frombuffer(joined.buffers()[1], dtype=np.int32)[joined.offset:joined.offset + len(joined) + 1]
    return joined.buffers()[2].to_pybytes()[offsets[0]:offsets[-1]]


def _fixed6(x: np.ndarray):
    """Non-negative floats as strings with exactly 6 decimals ('%.6f'), vectorised."""
    import pyarrow as pa
    import pyarrow.compute as pc

    micro = np.rint(x * 1e6).astype(np.int64)
    whole = pc.cast(pa.array(micro // 1_000_000), pa.string())
    frac = pc.utf8_lpad(pc.cast(pa.array(micro % 1_000_000), pa.string()), 6, "0")
    return pc.binary_join_element_wise(whole, frac, ".")


IDS = ("numeric", "msmarco-doc", "trec")


def _docids(docs: np.ndarray, ids: str):
    """Document ids of the passage numbers ``docs``: the numbers ('numeric'), MS MARCO document
    style ``D2573`` ('msmarco-doc'), or TREC style ``XX-1234-5678`` ('trec': two letters, then the
    number's digits in two groups of four); distinct numbers give distinct ids in every style."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if ids == "numeric":
        return docs
    num = pc.cast(pa.array(docs), pa.string())
    if ids == "msmarco-doc":
        return pc.binary_join_element_wise("D", num, "")
    if ids != "trec":
        raise ValueError(f"ids must be one of {IDS}")
    pairs = pa.array([chr(65 + i // 26) + chr(65 + i % 26) for i in range(676)], pa.string())
    letters = pairs.take(pa.array(docs % 676))
    hi = pc.utf8_lpad(pc.cast(pa.array(docs // 10_000), pa.string()), 4, "0")
    lo = pc.utf8_lpad(pc.cast(pa.array(docs % 10_000), pa.string()), 4, "0")
    return pc.binary_join_element_wise(letters, hi, lo, "-")


def generate(outdir: str, queries: int = 7000, depth: int = 1000, judged: int = 30, seed: int = 1,
             name: str | None = None, ids: str = "numeric") -> tuple[str, str]:
    """Write ``NAME.qrels`` and ``NAME.run`` (``queries * depth`` lines) into ``outdir``; return their paths.

    ``ids`` (see :func:`_docids`) changes only how document ids are written: the same seed gives
    the same judgements and rankings in every style."""
    rng = np.random.default_rng(seed)
    os.makedirs(outdir, exist_ok=True)
    name = name or f"q{queries}_d{depth}"
    qrels_path = os.path.join(outdir, f"{name}.qrels")
    run_path = os.path.join(outdir, f"{name}.run")
    qids = np.sort(rng.choice(9_000_000, size=queries, replace=False) + 1_000_000)
    ranks = np.tile(np.arange(1, depth + 1), BLOCK)
    with open(qrels_path + ".part", "wb") as qf, open(run_path + ".part", "wb") as rf:
        for start in range(0, queries, BLOCK):
            q = qids[start:start + BLOCK]
            (jq, jd, jg), (docs, scores) = _block(rng, q, depth, judged)
            qf.write(_lines(jq, "0", _docids(jd, ids), jg))
            rf.write(_lines(np.repeat(q, depth), "Q0", _docids(docs.ravel(), ids), ranks[:docs.size],
                            _fixed6(scores.ravel()), "bench"))
    os.replace(qrels_path + ".part", qrels_path)
    os.replace(run_path + ".part", run_path)
    return qrels_path, run_path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir")
    ap.add_argument("--queries", type=int, default=7000)
    ap.add_argument("--depth", type=int, default=1000)
    ap.add_argument("--judged", type=int, default=30)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--name", help="file stem (default q{queries}_d{depth})")
    ap.add_argument("--ids", choices=IDS, default="numeric",
                    help="document ids: numbers, D + number (MS MARCO documents), XX-1234-5678 (TREC)")
    a = ap.parse_args()
    print(*generate(a.outdir, a.queries, a.depth, a.judged, a.seed, a.name, a.ids))


if __name__ == "__main__":
    main()
