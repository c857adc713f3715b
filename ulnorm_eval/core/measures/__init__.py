"""The native measure families, one module per family group, each registering its records (a new
family: its kernel, expectation and record in its group's module; docs/architecture.md)."""
from __future__ import annotations

import numpy as np

from ..kernels import Judgements, Ranking
from ..records import FAMILIES
from . import cumulative, precision, rbp, trec  # noqa: F401  (registers the families; trec imports its kernel modules)
from .common import judged_only

__all__ = ["FAMILIES", "compute"]


def compute(ranking: Ranking, judgements: Judgements, measure, rel_level: float = 1) -> np.ndarray:
    """Per-row values of a native measure: its family's kernel (after trec_eval's -J when the
    measure's own ``judged_only`` asks for it, as pytrec_eval's per-measure flag)."""
    if measure.get("judged_only"):
        ranking = judged_only(ranking)
    return FAMILIES[measure.family].kernel(ranking, judgements, measure, rel_level)
