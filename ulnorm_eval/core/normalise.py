"""Normalisations of a measure's value A by its bounds I = IUB, E (a random permutation's) and W = WLB,
as array functions returning (values, undefined mask), undefined NaN: where I = E within a relative
1e-12 (every ranking of the pool scores alike).  When W <= A <= I: UL1 and MM in [0, 1], UL2 and UEW
in [-1, 1], EM in [-inf, 1].
"""
from __future__ import annotations

import numpy as np

__all__ = ["ul1", "ul2", "mm", "eb", "em", "uew", "undefined_mask"]

_TOL = 1e-12


def _eq(left, right):
    return np.abs(left - right) <= _TOL * np.maximum(1.0, np.maximum(np.abs(left), np.abs(right)))


def _arrays(*values):
    return np.broadcast_arrays(*(np.asarray(value, dtype=np.float64) for value in values))


def undefined_mask(I, E, W=None):
    """True where every ranking of the pool scores alike: I = E (or I = W)."""
    I, E = _arrays(I, E)
    und = _eq(I, E)
    if W is not None:
        und = und | _eq(I, np.asarray(W, dtype=np.float64))
    return und


def _div(num, den, undefined):
    out = np.full(np.shape(num), np.nan)
    defined = ~undefined
    out[defined] = num[defined] / den[defined]
    return out, undefined


def ul1(A, I, E, W=None):
    """UL1 = UE1 = (A/I) * (A/(A+E)) (Karmaker & Feng 2022 eq. 5; Feng 2023 eq. 5.1): in [0, 1], the
    ideal ranking scoring I/(I+E)."""
    A, I, E = _arrays(A, I, E)
    und = undefined_mask(I, E, W) | _eq(I, 0) | _eq(A + E, 0)
    out = np.full(A.shape, np.nan)
    defined = ~und
    out[defined] = (A[defined] / I[defined]) * (A[defined] / (A[defined] + E[defined]))
    return out, und


def ul2(A, I, E, W=None):
    """UL2 = UE2 = (A-E)/(I-E) if A >= E else (A-E)/E (Karmaker & Feng 2022 eq. 6; Feng 2023 eq. 5.2):
    1 at the ideal ranking, 0 at the random expectation, -1 only at A = 0."""
    A, I, E = _arrays(A, I, E)
    above = A >= E
    den = np.where(above, I - E, E)
    return _div(A - E, den, undefined_mask(I, E, W) | (~above & _eq(E, 0)))


def mm(A, I, E, W):
    """MM = (A-W)/(I-W), min-max with the worst ranking (Westerborg 2022 eq. 3.1)."""
    A, I, E, W = _arrays(A, I, E, W)
    return _div(A - W, I - W, undefined_mask(I, E, W))


def eb(A, I, E, W=None):
    """EB = A/E, expectation-based (Westerborg 2022 eq. 3.6; Gienapp et al.'s RnDCG idea, eq. 3.5)."""
    A, I, E = _arrays(A, I, E)
    return _div(A, E, undefined_mask(I, E, W) | _eq(E, 0))


def em(A, I, E, W=None):
    """EM = (A-E)/(I-E), expectation-max (Westerborg 2022 eq. 3.11): UL2's upper branch for every A."""
    A, I, E = _arrays(A, I, E)
    return _div(A - E, I - E, undefined_mask(I, E, W))


def uew(A, I, E, W):
    """UEW = (A-E)/(I-E) if A >= E else (A-E)/(E-W): -1 at the worst ranking, 0 at random, 1 at the ideal
    (beyond the papers cited: UL2's lower branch reaches -1 only at A = 0)."""
    A, I, E, W = _arrays(A, I, E, W)
    above = A >= E
    den = np.where(above, I - E, E - W)
    return _div(A - E, den, undefined_mask(I, E, W) | (~above & _eq(E, W)))

