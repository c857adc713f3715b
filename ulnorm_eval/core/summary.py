"""The 'all' row: a family's summary rule over its per-query values (``Family.summary``)."""
from __future__ import annotations

import numpy as np

__all__ = ["summarise", "GMEAN_FLOOR"]

GMEAN_FLOOR = 1e-5  # trec_eval's MIN_GEO_MEAN: gm_map and friends floor each value before the log


def summarise(values: np.ndarray, order: np.ndarray | None = None, rule: str = "mean") -> float:
    """The summary of the defined values added one at a time in trec_eval's query order, as trec_eval sums
    (numpy's pairwise sum may round the other way): 'mean', 'sum', or 'gmean' = exp(mean(log(max(v, 1e-5))))."""
    if order is not None:
        values = values[order]
    values = values[~np.isnan(values)]
    if not len(values):
        return 0.0 if rule == "sum" else float("nan")
    total = float(np.cumsum(np.log(np.maximum(values, GMEAN_FLOOR)) if rule == "gmean" else values)[-1])
    return total if rule == "sum" else float(np.exp(total / len(values))) if rule == "gmean" else total / len(values)
