"""The 'all' row: a family's summary rule over its per-query values (``Family.summary``)."""
from __future__ import annotations

import numpy as np

__all__ = ["summarise", "GMEAN_FLOOR"]

GMEAN_FLOOR = 1e-5  # trec_eval's MIN_GEO_MEAN: gm_map and friends floor each value before the log


def summarise(values: np.ndarray, order: np.ndarray | None = None, rule: str = "mean") -> float:
    """The summary of the defined values, added one at a time in trec_eval's query order (qid byte
    order): 'mean', 'sum', or 'gmean' = exp(mean(log(max(v, 1e-5)))).

    trec_eval sums sequentially and divides; numpy's pairwise sum can land on the other side of a
    4-decimal rounding boundary (Robust 2003 SABIR03BASE: P_1000 = 3.325/100 prints 0.0332).
    """
    if order is not None:
        values = values[order]
    values = values[~np.isnan(values)]
    if not len(values):
        return 0.0 if rule == "sum" else float("nan")
    total = float(np.cumsum(np.log(np.maximum(values, GMEAN_FLOOR)) if rule == "gmean" else values)[-1])
    return total if rule == "sum" else float(np.exp(total / len(values))) if rule == "gmean" else total / len(values)
