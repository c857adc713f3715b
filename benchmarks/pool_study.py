"""Which pool makes "UL2 < 0" mean "worse than random"?  The pool study of docs/bounds.md.

    python benchmarks/pool_study.py                 # every collection, markdown on stdout (~5 min on 2 cores)
    python benchmarks/pool_study.py --only dlhard   # one of: robust03, dlhard, letor, generated
    python benchmarks/pool_study.py --shuffles 9    # seeded shuffles per run (default 5)

For every collection and every pool it evaluates, with nDCG@10 and AP:

* the runs as submitted (Robust 2003: the track's 17 runs, ranked by their published MAP;
  DL-HARD: its 6 baseline runs; LETOR: a least-squares model trained on rank.train, scoring
  rank.test; generated: fully judged queries ranked by grade + Gaussian noise of known size);
* each run's reversal (its ranking read bottom-up: the same documents, the order turned over);
* seeded shuffles of each run (the same documents in a uniformly random order).

Pools: ``qrels`` (the random ranker shuffles the judged documents), ``union`` (judged plus the run's
unjudged ones, which gain nothing), ``run`` (the run's own documents), and ``rate``: judged plus the
run's unjudged documents counted at the rate of relevance of the judged ones (each unjudged document
gets a grade drawn from the query's judged grades, seeded; E and I are computed on that pool and the
run's value A on the real qrels: E and I of DCG@10 and SP on that pool, divided by the real qrels'
IDCG@10 and R, are those of nDCG@10 and AP with the real normalisers).

For each it prints the mean over runs of two aggregates of UL2 and how many runs each calls worse
than random (< 0):

* ``per-query mean``: the mean over queries of UL2 (Karmaker & Feng 2022 average their per-query
  values; undefined queries scored 0, the default);
* ``of the means``: UL2's formula applied to the means of A, E and I over the queries where UL2 is
  defined, (mean A - mean E) / (mean I - mean E) if mean A >= mean E, else (mean A - mean E) / mean E.

and, for the shuffles, the median over shuffles of each aggregate with how many are below 0, and the
mean of |mean A - mean E| (a random ranking's value equals E on average: that is what E claims).  Numbers are whatever they turn out to be; docs/bounds.md
quotes a run of this script.
"""
from __future__ import annotations

import argparse
import gzip
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pandas as pd  # noqa: E402

import ulnorm_eval as ue  # noqa: E402
from ulnorm_eval.core.normalise import ul2  # noqa: E402

DATA = ROOT / ".." / "shared" / "data"
MEASURES = {"nDCG@10": "DCG@10", "AP": "SP"}  # the measure, and its stand-in on the 'rate' pool
POOLS = ("qrels", "union", "run", "rate")


# --------------------------------------------------------------------------- inputs

def read_qrels(path) -> pd.DataFrame:
    q = pd.read_csv(path, sep=r"\s+", header=None, names=["qid", "iter", "docno", "label"],
                    dtype={"qid": str, "docno": str, "label": int}, usecols=[0, 1, 2, 3])
    return q[["qid", "docno", "label"]]


def read_run(path) -> pd.DataFrame:
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as f:
        r = pd.read_csv(f, sep=r"\s+", header=None, names=["qid", "Q0", "docno", "rank", "score", "tag"],
                        dtype={"qid": str, "docno": str}, usecols=[0, 1, 2, 3, 4, 5])
    return r[["qid", "docno", "score"]]


def trec_order(run: pd.DataFrame) -> pd.DataFrame:
    """trec_eval's order: score descending, ties by docno descending."""
    return run.sort_values(["qid", "score", "docno"], ascending=[True, False, False], kind="stable")


def reversal(run: pd.DataFrame) -> pd.DataFrame:
    """The same documents in the opposite order (unique scores: no tie decides anything)."""
    r = trec_order(run).copy()
    r["score"] = r.groupby("qid").cumcount().astype(float)  # rank 1 -> 0: last
    return r


def shuffle(run: pd.DataFrame, seed: int) -> pd.DataFrame:
    """The same documents in a uniformly random order (seeded)."""
    rng = np.random.default_rng(seed)
    r = run.copy()
    r["score"] = rng.permutation(len(r)).astype(float)
    return r


def rate_qrels(qrels: pd.DataFrame, runs: dict, seed: int) -> dict:
    """Per run: the qrels plus each retrieved unjudged document with a grade drawn from its query's
    judged grades (the judged pool's rate of relevance, grade by grade)."""
    rng = np.random.default_rng(seed)
    q = qrels.sort_values("qid", kind="stable").reset_index(drop=True)
    first = q.groupby("qid").indices
    start = {k: v[0] for k, v in first.items()}
    count = {k: len(v) for k, v in first.items()}
    grades = q.label.to_numpy()
    out = {}
    for name, run in runs.items():
        m = run.merge(q[["qid", "docno"]].assign(judged=True), on=["qid", "docno"], how="left")
        un = m[m.judged.isna() & m.qid.isin(start.keys())]
        st = un.qid.map(start).to_numpy(dtype=np.int64)
        cn = un.qid.map(count).to_numpy(dtype=np.int64)
        labels = grades[st + (rng.random(len(un)) * cn).astype(np.int64)]
        extra = pd.DataFrame({"qid": un.qid.to_numpy(), "docno": un.docno.to_numpy(), "label": labels})
        out[name] = pd.concat([qrels, extra], ignore_index=True)
    return out


# --------------------------------------------------------------------------- evaluation

def bounds(qrels, runs: dict, pool: str) -> dict:
    """{run: {measure: (A, E, I) per-query arrays}} on ``pool`` (the 'rate' pool: see the module)."""
    if pool != "rate":
        ev = ue.evaluate(qrels, runs, list(MEASURES), variants=["E", "IUB"], pool=pool)
        return {n: {m: tuple(np.asarray(ev.per_query[n][k]) for k in (m, f"E({m})", f"IUB({m})"))
                    for m in MEASURES} for n in runs}
    plain = ue.evaluate(qrels, runs, list(MEASURES), variants=[])
    # the real qrels' per-query scale of each measure: nDCG@10 = DCG@10 / IDCG@10, AP = SP / R
    scale = ue.evaluate(qrels, runs, ["DCG@10", "NumRel"], variants=["IUB"], pool="qrels")
    rq = rate_qrels(qrels, runs, 7)
    out = {}
    for n, run in runs.items():
        ev = ue.evaluate(rq[n], {n: run}, list(MEASURES.values()), variants=["E", "IUB"], pool="union")
        assert list(ev.queries[n]) == list(plain.queries[n]) == list(scale.queries[n])
        den = {"nDCG@10": np.asarray(scale.per_query[n]["IUB(DCG@10)"]),
               "AP": np.asarray(scale.per_query[n]["NumRel"], dtype=float)}
        out[n] = {}
        for m, s in MEASURES.items():
            with np.errstate(divide="ignore", invalid="ignore"):
                f = np.where(den[m] > 0, 1.0 / den[m], 0.0)
            out[n][m] = (np.asarray(plain.per_query[n][m]), f * np.asarray(ev.per_query[n][f"E({s})"]),
                         f * np.asarray(ev.per_query[n][f"IUB({s})"]))
    return out


def aggregates(A, E, I) -> tuple:
    """(mean of per-query UL2 with undefined queries scored 0, UL2 of the means over the defined
    queries, mean A - mean E over every query)."""
    v, und = ul2(A, I, E)
    per_query = float(np.where(und, 0.0, v).mean())
    d = ~und
    if d.any():
        of_means = float(ul2(A[d].mean(), I[d].mean(), E[d].mean())[0])
    else:
        of_means = float("nan")
    return per_query, of_means, float(A.mean() - E.mean())


def study(name: str, qrels, runs: dict, best: list, shuffles: int) -> list:
    """Markdown lines: one table per measure, a row per pool."""
    rev = {n: reversal(r) for n, r in runs.items()}
    shuf = [{n: shuffle(r, 1000 * s + i) for i, (n, r) in enumerate(runs.items())} for s in range(shuffles)]
    lines = [f"### {name}", "",
             f"{len(runs)} runs; best: {', '.join(best) if best else '(none)'}; {shuffles} seeded shuffles per run "
             f"({len(runs) * shuffles} in all).", ""]
    rows = {m: [] for m in MEASURES}
    N, S = len(runs), len(runs) * shuffles
    for pool in POOLS:
        got = bounds(qrels, runs, pool)
        got_rev = bounds(qrels, rev, pool)
        got_shuf = [bounds(qrels, s, pool) for s in shuf]
        for m in MEASURES:
            agg = np.array([aggregates(*got[n][m]) for n in runs])
            rv = np.array([aggregates(*got_rev[n][m]) for n in runs])
            sh = np.array([aggregates(*g[n][m]) for g in got_shuf for n in runs])
            bst = np.array([aggregates(*got[b][m]) for b in best]) if best else np.full((1, 3), np.nan)
            rows[m].append(
                f"| {pool} | {agg[:, 0].mean():+.3f} ({(agg[:, 0] < 0).sum()}/{N}) "
                f"| {agg[:, 1].mean():+.3f} ({(agg[:, 1] < 0).sum()}/{N}) "
                f"| {bst[:, 0].mean():+.3f} / {bst[:, 1].mean():+.3f} "
                f"| {rv[:, 0].mean():+.3f} ({(rv[:, 0] < 0).sum()}/{N}) "
                f"| {rv[:, 1].mean():+.3f} ({(rv[:, 1] < 0).sum()}/{N}) "
                f"| {np.median(sh[:, 0]):+.3f} ({(sh[:, 0] < 0).sum()}/{S}) "
                f"| {np.median(sh[:, 1]):+.3f} ({(sh[:, 1] < 0).sum()}/{S}) "
                f"| {np.mean(np.abs(sh[:, 2])):.4f} ({(np.abs(sh[:, 2]) > 0.01).sum()}/{S}) |")
        print(f"  {name}: pool {pool} done", file=sys.stderr)
    for m in MEASURES:
        lines += [f"UL2({m}).  Runs and reversals: the mean over runs (how many below 0); shuffles: the median "
                  "over shuffles (how many below 0); the last column: the mean over shuffles of |mean A − mean E| "
                  "(how many above 0.01).", "",
                  "| pool | runs, per-query mean | runs, of the means | best, per-query / of the means "
                  "| reversals, per-query mean | reversals, of the means | shuffles, per-query mean "
                  "| shuffles, of the means | shuffles, \\|A − E\\| |",
                  "|:-|-:|-:|-:|-:|-:|-:|-:|-:|", *rows[m], ""]
    return lines


# --------------------------------------------------------------------------- collections

def robust03(shuffles):
    d = DATA / "robust03"
    qrels = read_qrels(d / "qrels.txt")
    runs = {p.name[len("input."):-3]: read_run(p) for p in sorted((d / "runs").glob("input.*.gz"))}
    pub = pd.read_csv(d / "published_scores.tsv", sep="\t")
    mp = pub[pub.measure == "map"].sort_values("value", ascending=False)
    # published run names are cut to 10 characters (oce03noXbm): match by prefix
    best = []
    for r in mp.run:
        hit = [n for n in runs if n.startswith(str(r)) or str(r).startswith(n)]
        if hit and hit[0] not in best:
            best.append(hit[0])
        if len(best) == 3:
            break
    return study("Robust 2003 (100 topics, pools of depth 125, runs of depth 1000)", qrels, runs, best, shuffles)


def dlhard(shuffles):
    d = DATA / "dlhard-passage"
    qrels = read_qrels(d / "qrels.txt")
    runs = {p.name[:-len(".run.gz")]: read_run(p) for p in sorted((d / "runs").glob("*.run.gz"))}
    # no published ranking of these baselines beyond their nDCG@10: the two best by it
    ev = ue.evaluate(qrels, runs, ["nDCG@10"], variants=[])
    best = sorted(runs, key=lambda n: -ev.means[n]["nDCG@10"])[:2]
    return study("DL-HARD passage (50 topics, shallow judgments, runs of depth 1000)", qrels, runs, best, shuffles)


def _letor(path):
    from sklearn.datasets import load_svmlight_file

    X, y = load_svmlight_file(str(path), n_features=300)
    sizes = np.loadtxt(str(path) + ".query", dtype=int)
    qid = np.repeat(np.arange(len(sizes)), sizes).astype(str)
    return X, y.astype(int), qid


def letor(shuffles):
    d = DATA / "letor" / "lightgbm_lambdarank"
    Xtr, ytr, _ = _letor(d / "rank.train")
    Xte, yte, qte = _letor(d / "rank.test")
    w = np.linalg.lstsq(np.c_[Xtr.toarray(), np.ones(Xtr.shape[0])], ytr, rcond=None)[0]
    score = np.c_[Xte.toarray(), np.ones(Xte.shape[0])] @ w
    docno = np.array([f"d{i}" for i in range(len(yte))])
    qrels = pd.DataFrame({"qid": qte, "docno": docno, "label": yte})
    runs = {"lstsq": pd.DataFrame({"qid": qte, "docno": docno, "score": score}),
            "feature1": pd.DataFrame({"qid": qte, "docno": docno, "score": Xte[:, 0].toarray().ravel()})}
    return study("LETOR (LightGBM's lambdarank example, 50 test queries, every candidate judged)", qrels, runs,
                 ["lstsq"], shuffles)


def generated(shuffles):
    rng = np.random.default_rng(2026)
    nq, n = 200, 100
    rows = []
    for q in range(nq):
        rate = rng.uniform(0.02, 0.6)  # queries from hard to easy
        g = np.where(rng.random(n) < rate, rng.integers(1, 4, n), 0)
        rows += [(str(q), f"q{q}d{i}", int(g[i])) for i in range(n)]
    qrels = pd.DataFrame(rows, columns=["qid", "docno", "label"])
    runs = {}
    for sigma in (0.5, 1.0, 2.0, 4.0):
        noisy = qrels.label.to_numpy() + rng.normal(0, sigma, len(qrels))
        runs[f"noise{sigma:g}"] = pd.DataFrame({"qid": qrels.qid, "docno": qrels.docno, "score": noisy})
    # the same quality, cut to the top 20: the run retrieves a fifth of the (fully judged) candidates
    top = runs["noise1"].sort_values(["qid", "score"], ascending=[True, False]).groupby("qid").head(20)
    runs["noise1_top20"] = top.reset_index(drop=True)
    return study(f"Generated, fully judged ({nq} queries x {n} candidates, grades 0-3; score = grade + "
                 "N(0, sigma); noise1_top20 keeps its top 20)", qrels, runs, ["noise0.5"], shuffles)


COLLECTIONS = {"robust03": robust03, "dlhard": dlhard, "letor": letor, "generated": generated}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", choices=list(COLLECTIONS), action="append")
    ap.add_argument("--shuffles", type=int, default=5)
    a = ap.parse_args(argv)
    out = []
    for name in a.only or COLLECTIONS:
        out += COLLECTIONS[name](a.shuffles)
    print("\n".join(out))


if __name__ == "__main__":
    main()
