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
    if rule == "sum":
        return float(np.cumsum(values)[-1]) if len(values) else 0.0
    if rule == "gmean":
        return float(np.exp(np.cumsum(np.log(np.maximum(values, GMEAN_FLOOR)))[-1] / len(values))) if len(values) else float("nan")
    return float(np.cumsum(values)[-1] / len(values)) if len(values) else float("nan")
