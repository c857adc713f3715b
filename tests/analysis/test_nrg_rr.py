"""NRG(RR@K): reciprocal rank in the browsing-model form of Normalized Residual Gain (SIGIR-AP 2024),
through its App. A correspondence with C/W/L (G = r_i, seen(i) = V(i), N = V+).

Oracles: hand-worked cases on the paper's Table 1 items, a per-document reference written here
(the searcher's scan as a loop), and the plain RR of the main evaluation (empty prior set).
"""
from __future__ import annotations

import ulnorm_eval
import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from ulnorm_eval.analysis.nrg import evaluate_nrg, seen_until_gain
from ulnorm_eval.cli.main import main
from ulnorm_eval.core.registry import Metric, parse
from ulnorm_eval.inputs.in_memory import qrels_from_object, run_from_object
from ulnorm_eval.pipeline import evaluate as api

TEN = "ABCDEFGHIJ"
REL = "AEFJ"  # the paper's Table 1: relevant at ranks 1, 5, 6 and 10 of R1


def _qrels(rows):
    q, d, g = zip(*rows)
    return qrels_from_object(pd.DataFrame({"query_id": q, "doc_id": d, "relevance": g}))


def _run(name, ranked: dict):
    q, d, s = [], [], []
    for qid, docs in ranked.items():
        for i, doc in enumerate(docs):
            q.append(qid), d.append(doc), s.append(float(len(docs) - i))
    return run_from_object(pd.DataFrame({"query_id": q, "doc_id": d, "score": s}), name)


def _nrg(qrels, target, priors, measure="RR@10"):
    res = evaluate_nrg(qrels, [target], priors, [measure])
    rr = res.runs[0]
    return dict(zip(rr.qids, rr.values[parse(f"NRG({measure})")]))


def test_table1_items_by_hand():
    Q = _qrels([("q", d, 4 if d in REL else 0) for d in TEN])
    R1, R2, R3 = (_run(n, {"q": list(o)}) for n, o in (("R1", "ABCDEFGHIJ"), ("R2", "EDCBAFGHIJ"),
                                                      ("R3", "JIHGFEDCBA")))
    R4 = _run("R4", {"q": list("AEFJBCDGHI")})
    # every run of Table 1 finds a relevant item at rank 1 that the other two stop before: NRG = RR = 1
    for t, ps in ((R1, [R2, R3]), (R2, [R1, R3]), (R3, [R1, R2])):
        assert _nrg(Q, t, ps)["q"] == 1.0
    # R1's searcher stopped at A (rank 1): R4's A gives nothing, its E at rank 2 is new: 1/2
    assert _nrg(Q, R4, [R1])["q"] == 0.5
    # R2's searcher stopped at E (rank 1) having seen nothing else: A and E used up, F at rank 3
    assert _nrg(Q, R4, [R1, R2])["q"] == pytest.approx(1 / 3, abs=0)
    # R3's searcher saw only J: J does not matter to R4 before F
    assert _nrg(Q, R4, [R1, R2, R3])["q"] == pytest.approx(1 / 3, abs=0)
    # a prior that finds nothing relevant in its top 10 was scanned to the end: everything it showed is seen
    Z = _run("Z", {"q": list("BCDGHI")})
    assert _nrg(Q, R4, [Z])["q"] == 1.0
    # the cutoff: a prior whose first relevant item is beyond its top 2 showed only non-relevant items
    assert _nrg(Q, R4, [R3], "RR@2")["q"] == 1.0
    assert _nrg(Q, _run("R5", {"q": list("JAE")}), [R3], "RR@2")["q"] == 0.5  # J used up, A at rank 2


def test_seen_until_gain_by_hand():
    row = np.array([0, 0, 0, 0, 1, 1, 1])
    pos = np.array([0, 1, 2, 3, 0, 1, 2])
    g = np.array([0, 0.0, 1, 1, 0.5, 0.5, 1])
    within = np.array([True, True, True, False, True, True, True])
    np.testing.assert_array_equal(seen_until_gain(row, pos, g, within), [1, 1, 1, 0, 1, 0.5, 0.25])
    perm = np.array([6, 2, 4, 0, 5, 3, 1])  # input order does not matter
    np.testing.assert_array_equal(seen_until_gain(row[perm], pos[perm], g[perm], within[perm]),
                                  np.array([1, 1, 1, 0, 1, 0.5, 0.25])[perm])


def _ref_rr(target, priors, judged, k, rel):
    """The searcher's scans as loops: each prior scanned until its first relevant item (within k);
    then the target until its first relevant item not seen in any prior."""
    out = {}
    for qid in judged:
        def relevant(d):
            return judged[qid].get(d, 0) >= rel
        seen = set()
        for pr in priors:
            for d in pr.get(qid, [])[:k]:
                seen.add(d)
                if relevant(d):
                    break
        out[qid] = 0.0
        for i, d in enumerate(target.get(qid, [])[:k], 1):
            if relevant(d) and d not in seen:
                out[qid] = 1.0 / i
                break
    return out


@pytest.mark.parametrize("k,rel", [(10, 1), (3, 2), (1000, 1)])
def test_matches_the_searchers_scan_on_random_runs(k, rel):
    rng = np.random.default_rng(11 + k)
    docs = [f"d{i}" for i in range(30)]
    qrows = [(f"q{q}", d, int(rng.integers(0, 4))) for q in range(8) for d in rng.choice(docs, 14, replace=False)]
    judged = {}
    for q, d, g in qrows:
        judged.setdefault(q, {})[d] = g
    ranked = [{f"q{q}": list(rng.choice(docs, int(rng.integers(2, 25)), replace=False)) for q in range(8)}
              for _ in range(4)]
    runs = [_run(f"r{i}", r) for i, r in enumerate(ranked)]
    measure = f"RR(rel={rel})@{k}"
    res = evaluate_nrg(_qrels(qrows), runs, protocol="chronological", measures=[measure])
    for i, rr in enumerate(res.runs):
        want = _ref_rr(ranked[i], ranked[:i], judged, k, rel)
        got = dict(zip(rr.qids, rr.values[parse(f"NRG({measure})")]))
        assert got == want, rr.name


def test_empty_prior_is_the_plain_rr_bit_for_bit(shared):
    d = shared / "dlhard-passage"
    names = ["RR@10", "RR", "RR(rel=2)@10"]
    path = str(d / "runs" / "bm25_t5_zs.run.gz")
    res = evaluate_nrg(str(d / "qrels.txt"), [path], measures=names)
    main_ = ulnorm_eval.evaluate(str(d / "qrels.txt"), [path], names, variants=[])
    rr = res.runs[0]
    for n in names:
        m = parse(n)
        np.testing.assert_array_equal(rr.values[Metric(m.measure, "NRG")], main_.runs[0].values[m])
    assert 0 < rr.mean[parse("RR@10")] < 1


DLHARD_ORDER = ["bm25", "bm25_rm3", "bm25_bert_zs", "bm25_rm3_bert_zs", "bm25_t5_zs", "bm25_rm3_t5_zs"]
# docs/nrg.md, Figure 1's protocol on DL-HARD (-l 2, RR@10): run -> (RR@10, chronological NRG, leave-one-out NRG)
DLHARD_DOCS = {"bm25": (0.499, 0.499, 0.158), "bm25_rm3": (0.401, 0.211, 0.200),
               "bm25_bert_zs": (0.550, 0.387, 0.126), "bm25_rm3_bert_zs": (0.550, 0.166, 0.137),
               "bm25_t5_zs": (0.585, 0.218, 0.150), "bm25_rm3_t5_zs": (0.572, 0.145, 0.145)}


DLHARD_TAGS = {"bm25": "PYSERINI", "bm25_rm3": "PYSERINI", "bm25_bert_zs": "BERT-P", "bm25_rm3_bert_zs": "T5-P",
               "bm25_t5_zs": "T5-P", "bm25_rm3_t5_zs": "T5-P"}  # each file's tag (its 6th column)


def test_cli_figure1_protocol_on_dlhard_as_documented(shared):
    d = shared / "dlhard-passage"
    paths = [str(d / "runs" / f"{n}.run.gz") for n in DLHARD_ORDER]
    got = {}
    for col, protocol in ((1, "--chronological"), (2, "--leave-one-out")):
        r = CliRunner().invoke(main, ["nrg", "-l", "2", "-m", "RR@10", protocol, "-f", "trec", "--precision", "10",
                                      str(d / "qrels.txt"), *paths])
        assert r.exit_code == 0, r.output
        run, blocks = None, iter(DLHARD_ORDER)  # the blocks follow the RUN arguments; runid is the tag
        for line in r.stdout.splitlines():
            name, _, value = line.split("\t")
            if name.strip() == "runid":
                run = next(blocks)
                assert value == DLHARD_TAGS[run]
            elif name.strip() == "RR@10":
                got.setdefault(run, [None] * 3)[0] = float(value)
            elif name.strip() == "NRG(RR@10)":
                got[run][col] = float(value)
    assert set(got) == set(DLHARD_DOCS)
    for run, want in DLHARD_DOCS.items():  # the docs print 3 decimals
        assert got[run] == pytest.approx(want, abs=5e-4 + 1e-12), run
