"""splitmix64's finaliser (Steele, Lea & Flood 2014), the package's one 64-bit mixer: the seeded draws
(core/draws.py) and the docid fingerprints (inputs/fingerprints.py).  numpy only: below every layer."""
from __future__ import annotations

import numpy as np

__all__ = ["GOLDEN", "mix64"]

GOLDEN = np.uint64(0x9E3779B97F4A7C15)  # 2^64 / the golden ratio: splitmix64's increment
_S30, _S27, _S31 = np.uint64(30), np.uint64(27), np.uint64(31)
_M1, _M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)


def mix64(state: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser on uint64 arrays (wrapping arithmetic): every input bit moves every output
    bit.  A new array (``state`` is left alone), worked on in place: the same values, fewer temporaries."""
    state = state ^ (state >> _S30)
    state *= _M1
    state ^= state >> _S27
    state *= _M2
    state ^= state >> _S31
    return state
