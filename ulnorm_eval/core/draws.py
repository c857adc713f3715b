"""Counter-based uniform numbers: the draws of every seeded procedure (Monte Carlo permutations, the
bootstrap of judgment holes), keyed by seed, query id, repetition and position."""
from __future__ import annotations

import numpy as np

from ..hashing import GOLDEN, mix64

__all__ = ["Keys", "as_keys"]

_C1, _C2, _C3 = GOLDEN, np.uint64(0xD1B54A32D192ED03), np.uint64(0x8CB92BA72F3D8DD7)
_S11 = np.uint64(11)


def _unit(hashes: np.ndarray) -> np.ndarray:
    """The top 53 bits of 64-bit hashes as uniforms in [0, 1)."""
    hashes >>= _S11
    uniform = hashes.astype(np.float64)
    uniform *= 2.0 ** -53
    return uniform


def _hash_text(text: str) -> int:
    import hashlib

    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little")


class Keys:
    """Counter-based uniform numbers u(seed, query id, repetition, position, attempt): a query's draws
    depend on the seed and its own id only, not on the queries beside it or a stream's blocks."""

    def __init__(self, seed: int, qids=None):
        self.seed = np.uint64(int(seed) % 2 ** 64)
        self.qhash = None if qids is None else np.array([_hash_text(str(qid)) for qid in qids], dtype=np.uint64)

    def _hashes(self, base, rep, attempt: int) -> np.ndarray:
        base = np.asarray(base, dtype=np.int64)
        query_hash = self.qhash[base] if self.qhash is not None else mix64(base.astype(np.uint64) + _C3)
        salt = np.uint64(attempt * int(_C3) % 2 ** 64)  # Python ints: no numpy scalar overflow warning
        return mix64(mix64(query_hash ^ self.seed) + np.atleast_1d(np.asarray(rep, dtype=np.uint64)) * _C1 + salt)

    def rows(self, base: np.ndarray, rep: np.ndarray, width: int, attempt: int = 0) -> np.ndarray:
        """(rows x width) uniforms in [0, 1); row r belongs to query ``base[r]``, repetition ``rep[r]``."""
        col = np.arange(1, width + 1, dtype=np.uint64) * _C2
        return _unit(mix64(self._hashes(base, rep, attempt)[:, None] + col[None, :]))

    def at(self, base: np.ndarray, rep: np.ndarray, col: np.ndarray, attempt: int = 0) -> np.ndarray:
        """Elementwise: ``rows(base, rep, width, attempt)[i, col[i]]`` for each i, without the matrix
        (the bootstrap of judgment holes draws one number per hole and sample)."""
        column_hash = (np.asarray(col, dtype=np.uint64) + np.uint64(1)) * _C2
        return _unit(mix64(self._hashes(base, rep, attempt) + column_hash))


def as_keys(rng, qids=None) -> Keys:
    """Keys from a Keys, a seed, or a numpy Generator (which then only draws the seed)."""
    if isinstance(rng, Keys):
        return rng
    if isinstance(rng, np.random.Generator):
        return Keys(int(rng.integers(0, 2 ** 63)), qids)
    return Keys(int(rng), qids)
