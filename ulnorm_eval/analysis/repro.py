"""How far a reproduced run reproduces the original (Breuer et al. 2020, SIGIR §3), as their `repro_eval`
computes it (docs/gate.md):

* RMSE = sqrt(mean over topics of (original - reproduced)^2) (§3.2, eq. 2);
* KTU: Kendall's tau-b between the two top-``depth`` lists written as positions in their docid-sorted
  union, paired rank by rank (§3.1; the longer list cut to the shorter), averaged over the topics;
* RBO = sum_{d<=depth} p^(d-1) |O_d n R_d| / d over sum_{d<=depth} p^(d-1) (Webber, Moffat & Zobel
  2010, the finite form of Clarke et al. 2020; p = 0.95, depth 1000 as repro_eval);
* with a baseline pair: ER = mean_t(adv_rep - base_rep) / mean_t(adv_orig - base_orig) (eq. 4) and
  DeltaRI = RI_orig - RI_rep, RI = (mean(adv) - mean(base)) / mean(base) (eq. 5).

Runs are ordered by trec_eval's rule (repro_eval's for a file sorted by score); per-topic values over
the qrels' topics (a missing topic scores 0), KTU and RBO over those both runs ranked documents for.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["ReproRequest", "Reproduction", "rmse", "effect_ratio", "delta_ri", "ktu", "rbo", "repro_for_request"]


@dataclass(frozen=True, kw_only=True)
class ReproRequest:
    """What `ulnorm-eval repro` asks for: the qrels, the original and reproduced run (the advanced pair),
    optionally the baseline pair (original, reproduced), the measures (None: eval's defaults), the
    evaluation options, KTU/RBO's ``depth`` and ``rbo_p``, and the gate's thresholds."""

    qrels: str
    original: str
    reproduced: str
    baseline: tuple | None = None
    measures: tuple | None = None
    options: object = None  # pipeline.blocks.Options (None: the defaults)
    depth: int = 1000
    rbo_p: float = 0.95
    max_rmse: float | None = None
    min_ktu: float | None = None


@dataclass(kw_only=True)
class Reproduction:
    """``tables``: 'measures' (a row per measure) and 'rankings' (a row per pair); ``checks``: the gate's
    checks, each a dict (check, pair, measure, value, threshold, failed); ``meta``; ``notes``."""

    tables: dict
    checks: list
    meta: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return any(check["failed"] for check in self.checks)


def rmse(original, reproduced) -> float:
    """Root mean square error over the topics, Breuer et al. 2020 eq. 2."""
    diff = np.asarray(original, np.float64) - np.asarray(reproduced, np.float64)
    return float(np.sqrt(np.mean(diff ** 2)))


def effect_ratio(advanced, baseline, advanced_rep, baseline_rep) -> float:
    """ER = mean(advanced_rep - baseline_rep) / mean(advanced - baseline), per-topic arrays (eq. 4)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.mean(np.subtract(advanced_rep, baseline_rep)) / np.mean(np.subtract(advanced, baseline)))


def delta_ri(advanced, baseline, advanced_rep, baseline_rep) -> float:
    """DeltaRI = RI - RI_rep, RI = (mean(advanced) - mean(baseline)) / mean(baseline) (eq. 5)."""
    def relative(adv, base):
        with np.errstate(divide="ignore", invalid="ignore"):
            return (np.mean(adv) - np.mean(base)) / np.mean(base)

    return float(relative(advanced, baseline) - relative(advanced_rep, baseline_rep))


def ktu(original, reproduced) -> float:
    """Kendall's tau Union of one topic's two ranked docid lists (module docstring; scipy.stats.kendalltau)."""
    from scipy import stats

    length = min(len(original), len(reproduced))
    original, reproduced = np.asarray(original[:length], dtype=object), np.asarray(reproduced[:length], dtype=object)
    union = np.unique(np.concatenate([original, reproduced]))
    if length < 2:
        return float("nan")
    return float(stats.kendalltau(np.searchsorted(union, original), np.searchsorted(union, reproduced)).statistic)


def rbo(original, reproduced, p: float = 0.95, depth: int = 1000) -> float:
    """Rank-biased overlap of one topic's two docid lists at ``depth`` (module docstring).  A document in
    both lists joins the overlap at depth max(its two ranks); the overlap at every depth is their count."""
    original, reproduced = np.asarray(original[:depth], dtype=object), np.asarray(reproduced[:depth], dtype=object)
    _, at_original, at_reproduced = np.intersect1d(original, reproduced, return_indices=True)
    overlap = np.cumsum(np.bincount(np.maximum(at_original, at_reproduced), minlength=depth))[:depth]
    weights = p ** np.arange(depth)
    return float(np.sum(weights * overlap / np.arange(1, depth + 1)) / np.sum(weights))


def _rankings(run, depth: int) -> dict:
    """qid -> the top ``depth`` docids of an evaluated run (its ranking kept) in the evaluation's order,
    for the topics it ranked."""
    docids, starts = run.ranked.docid.to_numpy(zero_copy_only=False), run.ranked.ranking.starts
    return {qid: docids[starts[row]:min(starts[row + 1], starts[row] + depth)]
            for row, qid in enumerate(run.qids) if starts[row + 1] > starts[row]}


def _ranking_row(pair: str, names: tuple, rankings: tuple, request: ReproRequest, notes: list) -> dict:
    """The 'rankings' table's row of one pair: mean KTU and RBO over the topics both runs ranked."""
    first, second = rankings
    topics = [qid for qid in first if qid in second]
    if len(topics) < len(set(first) | set(second)):
        notes.append(f"{pair} pair: KTU and RBO over the {len(topics)} topics both runs ranked documents for "
                     f"({len(set(first) | set(second)) - len(topics)} ranked by one run only)")
    uneven = sum(len(first[qid]) != len(second[qid]) for qid in topics)
    if uneven:
        notes.append(f"{pair} pair: {uneven} topics rank fewer documents in one run than in the other (up to "
                     f"{request.depth}): KTU pairs their first ranks only, as many as the shorter list has")
    taus = np.array([ktu(first[qid], second[qid]) for qid in topics])
    overlaps = [rbo(first[qid], second[qid], request.rbo_p, request.depth) for qid in topics]
    return {"pair": pair, "original": names[0], "reproduced": names[1], "topics": len(topics),
            "ktu": float(np.nanmean(taus)) if np.isfinite(taus).any() else float("nan"),
            "rbo": float(np.mean(overlaps)) if overlaps else float("nan")}


def _measure_rows(result, metrics: list, with_baseline: bool) -> list:
    """The 'measures' table: per measure the means, RMSE, and with a baseline pair ER and DeltaRI, over
    the topics every run was evaluated on."""
    topics = sorted(set.intersection(*(set(rr.qids) for rr in result.runs)))
    where = [{qid: index for index, qid in enumerate(rr.qids)} for rr in result.runs]
    rows = []
    for m in metrics:
        values = [np.asarray(rr.values[m], np.float64)[[at[q] for q in topics]] for rr, at in zip(result.runs, where)]
        row = {"measure": str(m), "original": float(np.mean(values[0])), "reproduced": float(np.mean(values[1])),
               "rmse": rmse(values[0], values[1])}
        if with_baseline:
            row.update({"baseline_original": float(np.mean(values[2])), "baseline_reproduced": float(np.mean(values[3])),
                        "baseline_rmse": rmse(values[2], values[3]), "er": effect_ratio(values[0], values[2], values[1], values[3]),
                        "delta_ri": delta_ri(values[0], values[2], values[1], values[3])})
        rows.append(row)
    return rows


def _checks(measures: list, rankings: list, request: ReproRequest) -> list:
    """The gate: every pair's RMSE of every measure against --max-rmse, its KTU against --min-ktu."""
    out = []
    if request.max_rmse is not None:
        for row in measures:
            for pair, column in (("advanced", "rmse"), ("baseline", "baseline_rmse")):
                if column in row:
                    out.append({"check": "rmse", "pair": pair, "measure": row["measure"], "value": row[column],
                                "threshold": request.max_rmse, "failed": not row[column] <= request.max_rmse})
    if request.min_ktu is not None:
        out += [{"check": "ktu", "pair": row["pair"], "measure": "", "value": row["ktu"], "threshold": request.min_ktu,
                 "failed": not row["ktu"] >= request.min_ktu} for row in rankings]
    return out


def repro_for_request(request: ReproRequest, notes: list) -> Reproduction:
    """Read the qrels and the runs, evaluate them alike, and compare each reproduced run with its original."""
    from ..pipeline import evaluate as api
    from ..pipeline.orchestrator import evaluate_runs
    from .columns import Table

    options = request.options or api.Options()
    qrels = api.load_qrels(request.qrels)
    paths = (request.original, request.reproduced, *(request.baseline or ()))
    runs = [api.load_run(path, qrels) for path in paths]
    measures = list(request.measures) if request.measures else None
    metrics = api.resolve_metrics(measures, [], numeric_only=True)  # a text measure (runid, relstring) has no RMSE
    done = evaluate_runs(qrels, runs, metrics, options, warn=notes.append, ranked=True)  # one ranking each
    result = api.Result(metrics=metrics, runs=list(done), options=done.options, qrels_path=qrels.path, run_paths=list(paths))
    rankings = [_rankings(run, request.depth) for run in result.runs]
    names = [rr.name for rr in result.runs]
    pairs = [("advanced", 0)] + ([("baseline", 2)] if request.baseline else [])
    ranking_rows = [_ranking_row(pair, tuple(names[at:at + 2]), tuple(rankings[at:at + 2]), request, notes)
                    for pair, at in pairs]
    measure_rows = _measure_rows(result, result.metrics, bool(request.baseline))
    tables = {"measures": Table.from_rows(measure_rows, list(measure_rows[0]), {"measure": "str"}),
              "rankings": Table.from_rows(ranking_rows, list(ranking_rows[0]), {"pair": "str", "original": "str",
                                                                                 "reproduced": "str", "topics": "int"})}
    meta = {"qrels": str(request.qrels), "runs": list(paths), "depth": request.depth, "rbo_p": request.rbo_p,
            "max_rmse": request.max_rmse, "min_ktu": request.min_ktu}
    return Reproduction(tables=tables, checks=_checks(measure_rows, ranking_rows, request), meta=meta, notes=notes)
