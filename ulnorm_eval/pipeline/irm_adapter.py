"""Measures computed through ir_measures (ERR, Bpref, infAP, ...), with our ordering imposed: the run
is handed over with positive, strictly decreasing scores (num_ret - rank + 1), so ir_measures cannot
reorder it; ``-l`` sets the measure's ``rel`` (a measure without one is refused,
:func:`honour_rel_level`).  IUB/WLB score the sorted pool, E is a seeded Monte Carlo mean with its
standard error.  In the pipeline because ir_measures reads pandas; the core gets it as the
``foreign`` provider of :func:`ulnorm_eval.core.expectations.variant_values`.
"""
from __future__ import annotations

import numpy as np

from ..core.kernels import Judgements, Ranking
from ..core.registry import UnknownMeasure

__all__ = ["foreign_values", "foreign_scorer", "foreign_bounds", "honour_rel_level", "decreasing_scores"]


def decreasing_scores(ranking: Ranking) -> np.ndarray:
    """num_ret - rank + 1 per ranked document: positive, strictly decreasing within a query."""
    return (ranking.length[ranking.row] - ranking.pos).astype(np.float64)


def honour_rel_level(measure, rel_level: float):
    """The ir_measures measure with ``rel`` set to ``-l`` (unless given); refuses, as
    UnknownMeasure, a measure that reads relevance but has no ``rel`` parameter when -l is not 1."""
    if "rel" in measure.params or float(rel_level) == 1:
        return measure
    if "rel" in getattr(measure, "SUPPORTED_PARAMS", {}):
        lvl = int(rel_level) if float(rel_level).is_integer() else rel_level
        return measure(rel=lvl)
    raise UnknownMeasure(f"{measure}: ir_measures' {measure.NAME} has no rel parameter, so it cannot honour "
                         f"-l {rel_level:g}; use -l 1 or a native measure (ulnorm-eval measures)")


def _calc(measure, qrels_df, run_df, nrows: int, row_of: dict) -> np.ndarray:
    import ir_measures

    out = np.zeros(nrows)
    try:
        for result in ir_measures.iter_calc([measure], qrels_df, run_df):
            out[row_of[result.query_id]] = result.value
    except (ValueError, TypeError, KeyError, ImportError, AssertionError) as exc:  # e.g. no provider installed
        lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
        raise UnknownMeasure(f"{measure}: ir_measures cannot compute it: {' '.join(lines)}") from None
    return out


def foreign_values(run, judgements: Judgements, metric, qrels, options) -> np.ndarray:
    """Per-query values of an ir_measures measure for a ranked run (0 for queries it did not retrieve)."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc

    qset = pa.array(judgements.qids, pa.string())
    keep = pc.is_in(qrels.qid, value_set=qset)
    qdf = pd.DataFrame({"query_id": pc.filter(qrels.qid, keep).to_pylist(),
                        "doc_id": pc.filter(qrels.docid, keep).to_pylist(),
                        "relevance": qrels.grade[keep.to_numpy(zero_copy_only=False)].astype(int)})
    ranking = run.ranking
    rdf = pd.DataFrame({"query_id": np.asarray(judgements.qids, dtype=object)[ranking.row],
                        "doc_id": run.docid.to_pylist(), "score": decreasing_scores(ranking)})
    measure = honour_rel_level(metric.foreign, options.rel_level)
    return _calc(measure, qdf, rdf, judgements.nq, {qid: index for index, qid in enumerate(judgements.qids)})


def foreign_scorer(judgements: Judgements, metric, options):
    """A scorer of synthetic rankings (grades only): a pool document is judged with its grade, an
    unjudged one left out of the synthetic qrels.  Only the pool is known here: under ``--pool run``
    measures that count the judged documents the run did not retrieve (Bpref's R) see a smaller R."""
    import pandas as pd

    measure = honour_rel_level(metric.foreign, options.rel_level)

    def score(ranking: Ranking) -> np.ndarray:
        # numeric ids: some ir_measures providers (gdeval for ERR) accept nothing else
        ids = ranking.row.astype(str).astype(object)
        docs = np.arange(len(ranking.row)).astype(str).astype(object)
        judged = np.ones(len(ranking.row), bool) if ranking.judged is None else ranking.judged
        qdf = pd.DataFrame({"query_id": ids[judged], "doc_id": docs[judged],
                            "relevance": np.rint(ranking.grade[judged]).astype(int)})
        rdf = pd.DataFrame({"query_id": ids, "doc_id": docs, "score": decreasing_scores(ranking)})
        return _calc(measure, qdf, rdf, ranking.nrows, {str(index): index for index in range(ranking.nrows)})

    return score


def foreign_bounds(pool, judgements: Judgements, metric, options, rng) -> dict:
    from ..core.permutations import permutation_values

    scorer = foreign_scorer(judgements, metric, options)
    pool = pool.whole()
    vals = permutation_values(pool, judgements, metric, options.rel_level, options.permutations, rng, scorer)
    return {"IUB": scorer(pool.ordered(pool.grade, True)), "WLB": scorer(pool.ordered(pool.grade, False)),
            "E": vals.mean(axis=0), "se": vals.std(axis=0, ddof=1) / np.sqrt(len(vals))}
