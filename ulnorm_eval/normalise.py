"""Normalisations of a measure's value A by its bounds, as pure array functions.

A = the run's value, I = IUB (ideal ranking of the pool), E = expectation under a uniformly random
permutation of the pool, W = WLB (worst ranking).  Each function returns (values, undefined mask);
undefined entries are left as NaN for the caller's ``--undefined`` rule.  A bound pair is "equal"
within a relative tolerance of 1e-12, so float noise in E never makes a query look informative.
"""
from __future__ import annotations

import numpy as np

__all__ = ["ul1", "ul2", "mm", "eb", "em", "uew", "NORMALISERS"]

_TOL = 1e-12


def _eq(x, y):
    return np.abs(x - y) <= _TOL * np.maximum(1.0, np.maximum(np.abs(x), np.abs(y)))


def _div(num, den, undefined):
    out = np.full(np.shape(num), np.nan)
    ok = ~undefined
    out[ok] = num[ok] / den[ok]
    return out, undefined


def ul1(A, I, E, W=None):
    """UL1 = UE1 = (A/I) * (A/(A+E)) (seed 000 eq. 5; seed 003 eq. 5.1); undefined when I = 0 or A+E = 0."""
    und = _eq(I, 0) | _eq(A + E, 0)
    out = np.full(np.shape(A), np.nan)
    ok = ~und
    out[ok] = (A[ok] / I[ok]) * (A[ok] / (A[ok] + E[ok]))
    return out, und


def ul2(A, I, E, W=None):
    """UL2 = UE2 = (A-E)/(I-E) if A >= E else (A-E)/E (seed 000 eq. 6; seed 003 eq. 5.2).

    Undefined when I = E (every ranking of the pool scores alike).
    """
    und = _eq(I, E)
    up = A >= E
    den = np.where(up, I - E, E)
    return _div(A - E, den, und | (~up & _eq(E, 0)))


def mm(A, I, E, W):
    """MM = (A-W)/(I-W), min-max with the worst ranking (seed 004 eq. 3.1); undefined when I = W."""
    return _div(A - W, I - W, _eq(I, W))


def eb(A, I, E, W=None):
    """EB = A/E, expectation-based (seed 004 eq. 3.6); undefined when E = 0."""
    return _div(A, E, _eq(E, 0))


def em(A, I, E, W=None):
    """EM = (A-E)/(I-E), expectation-max (seed 004 eq. 3.11); undefined when I = E."""
    return _div(A - E, I - E, _eq(I, E))


def uew(A, I, E, W):
    """UEW = (A-E)/(I-E) if A >= E else (A-E)/(E-W): -1 at the worst ranking, 0 at random, 1 at the ideal.

    Beyond the seeds: UL2's lower branch divides by E, so its -1 is reached only when A = 0; dividing
    by E - W makes the worst ranking of the pool exactly -1.  Undefined when I = E (then also E = W).
    """
    up = A >= E
    den = np.where(up, I - E, E - W)
    return _div(A - E, den, _eq(I, E) | (~up & _eq(E, W)))


NORMALISERS = {"UL1": ul1, "UL2": ul2, "MM": mm, "EB": eb, "EM": em, "UEW": uew}
