"""The speed-ups change no bit.

Kernels now read only the documents that can contribute (the relevant ones, those of nonzero gain)
and share what they derive from a ranking; Monte Carlo bounds of several measures share one set of
shuffles.  Each is checked here against the straightforward dense computation it replaced, on
random rankings with ties, unjudged documents, negative grades and empty rows, to the last bit.
Private names: the gain kernels' steps (``trec_gains._level_gain``, ``_idcg``,
``_ideal_prefix``), each compared with the dense computation it replaced.
"""
from __future__ import annotations

import ulnorm_eval
import numpy as np
import pytest

from ulnorm_eval.core import expectations, registry
from ulnorm_eval.core.kernels import Judgements, Level, Ranking, discount, relevant
from ulnorm_eval.core.measures import compute
from ulnorm_eval.core.permutations import Keys, permutation_values
from ulnorm_eval.core.pools import Pool


def _case(seed: int, nq: int = 7):
    """A random ranking of ``nq`` queries (some empty) and qrels judging most of its documents."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 40, nq)
    lengths[rng.integers(0, nq)] = 0
    row = np.repeat(np.arange(nq), lengths)
    grade = rng.choice([-1.0, 0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 12.0], size=len(row))
    judged = rng.random(len(row)) < 0.8
    grade = np.where(judged, grade, 0.0)
    jrow = np.concatenate([row[judged], rng.integers(0, nq, 30)])
    jgrade = np.concatenate([grade[judged], rng.choice([0.0, 1.0, 2.0], 30)])
    order = np.lexsort((-jgrade, jrow))
    J = Judgements([f"q{i}" for i in range(nq)], jrow[order], jgrade[order], float(jgrade.max()))
    return Ranking(row, grade, nq, np.arange(nq), judged), J


def _dense_sum_precision(rk, rel, k):
    relv = relevant(rk, rel)
    csum = np.concatenate(([0], np.cumsum(relv)))
    within = csum[1:] - csum[rk.starts[rk.row]]
    w = np.where(relv, within / (rk.pos + 1.0), 0.0)
    if k is not None:
        w = w * (rk.pos < k)
    return rk.rowsum(w)


@pytest.mark.parametrize("seed", range(12))
def test_sparse_kernels_equal_the_dense_ones_bit_for_bit(seed):
    rk, J = _case(seed)
    lv = Level(1)
    for k in (None, 1, 3, 10, 100):
        sp = _dense_sum_precision(rk, 1.0, k)
        name = "AP" if k is None else f"AP@{k}"
        R = J.n_relevant(1.0)
        want = np.divide(sp, R, out=np.zeros_like(sp), where=R > 0)
        assert np.array_equal(compute(rk, J, registry.parse(name).measure, lv), want)
        if k is None:
            continue
        cnt = rk.rowsum(relevant(rk, 1.0) & (rk.pos < k))
        assert np.array_equal(compute(rk, J, registry.parse(f"P@{k}").measure, lv), cnt / k)
        w = np.maximum(rk.grade, 0.0) * np.where(rk.judged, 1.0, 0.0) * discount(rk.pos) * (rk.pos < k)
        assert np.array_equal(compute(rk, J, registry.parse(f"DCG@{k}").measure, lv), rk.rowsum(w))
    R = J.n_relevant(1.0)
    cnt = rk.rowsum(relevant(rk, 1.0) & (rk.pos < R[rk.row]))
    assert np.array_equal(compute(rk, J, registry.parse("Rprec").measure, lv),
                          np.divide(cnt, R, out=np.zeros_like(cnt), where=R > 0))


def _with_gains(family: str, gains):
    """The measure ``family(gains={...})`` (the plain family when ``gains`` is None)."""
    given = "" if gains is None else "(gains={" + ",".join(f"{level:g}:{gain:g}" for level, gain in gains.items()) + "})"
    return registry.parse(family + given).measure


@pytest.mark.parametrize("seed", range(6))
def test_sparse_trec_kernels_equal_their_dense_forms(seed):
    """ndcg_rel, Rndcg and relstring against the whole-ranking forms they had (kept here)."""
    from ulnorm_eval.core.measures import trec_gains as tg
    from ulnorm_eval.core.measures.common import safe
    from ulnorm_eval.core.measures.common import codes

    rk, J = _case(seed)
    for gains in (None, {1: 3.0, 2: -1.0}):
        g = tg._level_gain(codes(rk), gains)
        dcg = rk.running(g * discount(rk.pos))
        pidcg, st, _, _ = tg._ideal_prefix(J, gains)
        npos = np.diff(st)
        q = rk.base[rk.row]
        n = npos[q]
        at = st[q] + np.minimum(rk.pos, np.maximum(n - 1, 0))
        ideal = np.where(n > 0, pidcg[np.minimum(at, max(len(pidcg) - 1, 0))] if len(pidcg) else 0.0, 0.0)
        hit = g > 0
        s = rk.rowsum(np.where(hit, safe(dcg, ideal), 0.0))
        full = tg._idcg(J, _with_gains("nDCG_rel", gains))[rk.base]
        final = rk.rowsum(g * discount(rk.pos))
        nrel = npos[rk.base].astype(np.float64)
        s = s + (nrel - rk.rowsum(hit)) * safe(final, full)
        want = np.where(s > 0, safe(s, nrel), 0.0)
        assert np.array_equal(tg.k_ndcg_rel(rk, J, _with_gains("nDCG_rel", gains), 1.0), want)
    # Rndcg: nDCG@b at each level boundary b, from the dense running DCG
    got = tg.k_Rndcg(rk, J, registry.parse("Rndcg").measure, 1.0)
    g = tg._level_gain(codes(rk), None)
    dcg = rk.running(g * discount(rk.pos))
    pidcg, st, irow, ig = tg._ideal_prefix(J, None)
    R = J.n_relevant(1.0)
    full = tg._idcg(J, registry.parse("Rndcg").measure)
    for r in range(rk.nrows):
        if R[r] == 0:
            assert got[r] == 0.0
            continue
        sel = irow == r
        gq, pq = ig[sel], pidcg[sel]
        bs = [i + 1 for i in range(len(gq)) if i + 1 == len(gq) or gq[i + 1] != gq[i]]
        L = rk.length[r]
        vals = []
        for b in bs:
            take = min(b, L)
            d = dcg[rk.starts[r] + take - 1] if take > 0 else 0.0
            vals.append(d / pq[b - 1] if pq[b - 1] > 0 else 0.0)
        if bs and L >= max(bs) + 2 and full[r] > 0:
            vals.append(rk.rowsum(g * discount(rk.pos))[r] / full[r])
        want = 0.0 if not vals else sum(vals) / len(vals)
        assert got[r] == pytest.approx(want, rel=1e-15, abs=0)
    # G: the whole-ranking form it had (running cost and gain over every rank)
    for gains in (None, {1: 3.0, 2: -1.0}, {1: 0.5}):
        g = tg._level_gain(codes(rk), gains)
        _, _, row, ig = tg._ideal_prefix(J, gains)
        keep = ig > 0
        n_pos = np.bincount(row[keep], minlength=J.nq)[: J.nq]
        q = rk.base[rk.row]
        st = np.searchsorted(row[keep], np.arange(J.nq + 1))
        igk = ig[keep]
        ideal_i = np.where(rk.pos < n_pos[q], igk[np.minimum(st[q] + rk.pos, max(len(igk) - 1, 0))], 0.0)
        cost = rk.running(np.maximum(ideal_i, 1.0))
        S = rk.running(g)
        with np.errstate(divide="ignore", invalid="ignore"):
            term = np.where(g != 0, g / np.log2(2.0 + cost - S), 0.0)
        total = np.bincount(row[keep], weights=igk, minlength=J.nq)[: J.nq][rk.base]
        want = safe(rk.rowsum(term), total)
        got = tg.k_G(rk, J, _with_gains("G", gains), 1.0)
        if gains is None:  # integer costs and gains: every sum exact, whatever its order
            assert np.array_equal(got, want)
        else:  # fractional gains: the cost is now summed from each query's first rank, as m_G.c does
            np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)
    # relstring: one character per document code, '>' above 9
    from ulnorm_eval.core.measures.trec import relstring
    text = relstring(rk, 25)
    c = codes(rk)
    for r in range(rk.nrows):
        cs = c[rk.starts[r]:rk.starts[r + 1]][:25]
        assert text[r] == "".join(">" if x > 9 else "-" if x == -1 else "." if x == -2 else str(int(x)) for x in cs)


def test_montecarlo_bounds_shared_shuffles_equal_one_measure_at_a_time():
    """Every measure gets, bit for bit, what it gets alone, whether drawn with others or not (the
    shuffles depend on seed, query and repetition only)."""
    rng = np.random.default_rng(4)
    nq = 5
    n = rng.integers(21, 40, nq)  # beyond the enumeration limit (Monte Carlo); ERR@5 draws its top 5 directly
    row = np.repeat(np.arange(nq), n)
    grade = rng.choice([-1.0, 0.0, 0.0, 1.0, 2.0], size=len(row))
    judged = rng.random(len(row)) < 0.9
    pool = Pool(row, grade, nq, judged)
    order = np.lexsort((-grade[judged], row[judged]))
    J = Judgements([f"q{i}" for i in range(nq)], row[judged][order], grade[judged][order], 2.0)
    names = ["iprec_at_recall.0.20", "iprec_at_recall.0.50", "11pt_avg", "ndcg_rel", "Rndcg", "G", "ERR@5", "ERR@20"]
    ms = [registry.parse(x).measure for x in names]
    lv = Level(1)
    together = expectations.montecarlo_bounds(pool, J, ms, lv, 60, Keys(3, J.qids))
    for m, b in zip(ms, together):
        alone = expectations.montecarlo_bounds(pool, J, [m], lv, 60, Keys(3, J.qids))[0]
        for key in ("E", "IUB", "WLB", "se"):
            assert np.array_equal(b[key], alone[key], equal_nan=True), (m, key)
        # and the one-measure Monte Carlo of permutations.py (each measure at its own depth) agrees
        mc = b["se"] > 0
        assert mc.any(), m  # the Monte Carlo path was taken
        vals = permutation_values(pool, J, m, lv, 60, Keys(3, J.qids))
        # (to rounding: numpy's mean of a column subset adds in another order than of the whole)
        np.testing.assert_allclose(b["E"][mc], vals.mean(axis=0)[mc], rtol=1e-13, atol=0, err_msg=str(m))


@pytest.mark.parametrize("p", [0.5, 0.8, 0.95, 0.99, 0.123456])
def test_power_at_is_np_power_bit_for_bit(p):
    from ulnorm_eval.core.kernels import power_at

    rng = np.random.default_rng(7)
    # ranks of a ranking: 0..length-1 per query, lengths of real runs and odd ones
    pos = np.concatenate([np.arange(n) for n in rng.integers(0, 1200, 60)])
    assert np.array_equal(power_at(p, pos), np.power(p, pos))
    for odd in (np.array([], dtype=np.int64), np.array([5000]), np.array([3, 0, 7]), np.arange(4.0)):
        got = power_at(p, odd)
        assert got.dtype == np.power(p, odd).dtype and np.array_equal(got, np.power(p, odd))


def test_bounds_served_from_the_cache_build_no_pool(tmp_path, monkeypatch):
    from ulnorm_eval.pipeline import evaluate as api

    q = tmp_path / "q"
    q.write_text("1 0 a 1\n1 0 b 0\n1 0 c 2\n2 0 a 1\n2 0 d 0\n")
    runs = []
    for i, order in enumerate(("a b c d", "c a b", "d b")):
        r = tmp_path / f"r{i}"
        r.write_text("".join(f"{qid} Q0 {d} {k} {10 - k} t\n" for qid in (1, 2) for k, d in enumerate(order.split())))
        runs.append(str(r))
    built = []
    real = expectations.make_pool
    monkeypatch.setattr(expectations, "make_pool", lambda *a: built.append(a) or real(*a))
    res = ulnorm_eval.evaluate(str(q), runs, pool="qrels")  # exact bounds on the qrels pool, the same for every run
    assert len(built) == 1
    monkeypatch.setattr(expectations, "make_pool", real)
    again = [ulnorm_eval.evaluate(str(q), [r], pool="qrels") for r in runs]  # each run alone builds its own pool
    for a, b in zip(res.runs, (x.runs[0] for x in again)):
        for m in res.metrics:
            assert np.array_equal(a.values[m], b.values[m], equal_nan=True)


@pytest.mark.parametrize("seed", range(4))
def test_counted_rowsum_is_bincount_bit_for_bit(seed):
    """Ranking.rowsum and Pool.rowsum count a boolean mask by spans (kernels.row_counts) instead of
    bincount's float additions: the same float64 values, on ragged rows with empty ones (first,
    inside, last), an empty ranking, and rows past nrows."""
    rng = np.random.default_rng(seed)
    for _ in range(300):
        nrows = int(rng.integers(0, 9))
        lengths = rng.integers(0, 25, nrows + 2) * (rng.random(nrows + 2) < 0.7)
        row = np.repeat(np.arange(nrows + 2), lengths)  # rows nrows, nrows + 1: past the end
        mask = rng.random(len(row)) < rng.random()
        want = np.bincount(row, weights=mask.astype(np.float64), minlength=nrows)[:nrows]
        rk = Ranking(row, np.zeros(len(row)), nrows, np.arange(nrows))
        got = rk.rowsum(mask)
        assert got.dtype == want.dtype and got.shape == want.shape and np.array_equal(got, want)
        inside = row < nrows
        pool = Pool(rng.permutation(row[inside]), np.zeros(int(inside.sum())), nrows)
        counted = pool.rowsum(mask[: int(inside.sum())])
        assert np.array_equal(counted, np.bincount(pool.row, weights=mask[: int(inside.sum())],
                                                   minlength=nrows)[:nrows])


def test_counted_rowsum_needs_sorted_rows():
    """A ranking whose rows are not sorted (against the class's invariant) is summed by bincount."""
    rk = Ranking(np.array([1, 0, 1, 0]), np.zeros(4), 2, np.arange(2))
    assert rk.rowsum(np.array([True, True, False, True])).tolist() == [2.0, 1.0]


@pytest.mark.parametrize("seed", range(4))
def test_pool_ordered_is_the_lexsort_of_its_keys(seed):
    """Pool.ordered sorts a few-valued key by one 16-bit radix sort of (query, key rank): the same
    permutation as np.lexsort((±key, row)), ties in pool order, with -0.0 and 0.0 equal keys; NaN keys
    and many distinct values take lexsort itself."""
    from ulnorm_eval.core.pools import _FEW_KEYS, _packed_classes

    rng = np.random.default_rng(seed)
    fast = 0
    for _ in range(400):
        nq = int(rng.integers(1, 12))
        row = np.repeat(np.arange(nq), rng.integers(0, 30, nq))
        if not len(row):
            continue
        values = rng.choice([0.0, -0.0, 1.0, 2.0, 0.5, 3.0, -1.0, np.inf, 7.25, *rng.random(20)],
                            int(rng.integers(1, _FEW_KEYS + 6)))
        key = rng.choice(values, len(row))
        if rng.random() < 0.05:
            key[rng.integers(0, len(row))] = np.nan
        grade = rng.choice([0.0, 1.0, 2.0, -1.0], len(row))
        judged = rng.random(len(row)) < 0.8
        pool = Pool(row, grade, nq, judged)
        for descending in (True, False):
            want = np.lexsort((-key if descending else key, row))
            packed = _packed_classes(row, nq, key, descending)
            got = None if packed is None else np.argsort(packed, kind="stable")
            if got is not None:
                fast += 1
                assert np.array_equal(got, want)
            ranked = pool.ordered(key.copy(), descending)
            assert np.array_equal(ranked.row, row[want]) and np.array_equal(ranked.grade, grade[want])
            assert np.array_equal(ranked.judged, judged[want])
            assert np.array_equal(ranked.starts, np.searchsorted(row[want], np.arange(nq + 1)))
    assert fast > 300  # the radix path is the one tested, not only the fallback


@pytest.mark.parametrize("seed", range(6))
def test_pool_shares_one_ordering_between_keys_of_the_same_classes(seed):
    """Keys that split a pool into the same classes in the same order (a grade and any increasing
    function of it: nDCG's gains 0, 1, 2 and RBP's 0, 0.5, 1) are served one ranking, which is each
    key's own lexsort; a decreasing function in the other direction too; a coarser key (binary) or
    the same classes moved between documents (the same packed sum) get their own, also lexsort's."""
    rng = np.random.default_rng(seed)
    for _ in range(60):
        nq = int(rng.integers(1, 9))
        row = np.repeat(np.arange(nq), rng.integers(0, 25, nq))
        if not len(row):
            continue
        grade = rng.choice([0.0, 1.0, 2.0, -1.0], len(row))
        judged = rng.random(len(row)) < 0.8
        pool = Pool(row, grade, nq, judged)
        base = rng.choice([0.0, 1.0, 2.0, 3.0], len(row))
        for descending in (True, False):
            first = pool.ordered(base, descending)
            want = np.lexsort((-base if descending else base, row))
            assert np.array_equal(first.grade, grade[want]) and np.array_equal(first.judged, judged[want])
            scaled = base / 3.0 + 0.25  # increasing: the same classes, other bits
            assert pool.ordered(scaled, descending) is first
            assert pool.ordered(-base, not descending) is first  # decreasing, other direction
            for other in (np.minimum(base, 1.0), rng.permutation(base), base[::-1].copy()):
                got = pool.ordered(other, descending)
                want = np.lexsort((-other if descending else other, row))
                assert np.array_equal(got.grade, grade[want]) and np.array_equal(got.judged, judged[want])
                same = np.array_equal(other, base) or np.array_equal(np.unique(other, return_inverse=True)[1],
                                                                     np.unique(base, return_inverse=True)[1])
                assert (got is first) == same
        # two documents of one query trading their classes: the packed numbers' sum is unchanged
        q = int(row[0])
        a, b = np.flatnonzero(row == q)[:2].tolist() + [None] * (2 - min(2, int((row == q).sum())))
        if b is not None and base[a] != base[b]:
            swapped = base.copy()
            swapped[a], swapped[b] = base[b], base[a]
            got = pool.ordered(swapped, True)
            assert got is not pool.ordered(base, True)
            want = np.lexsort((-swapped, row))
            assert np.array_equal(got.grade, grade[want]) and np.array_equal(got.judged, judged[want])


def test_pool_keeps_a_key_it_cannot_change_without_a_copy():
    """A read-only key owning its memory (pool_gains') is kept as it is to compare later keys; a
    writeable one is copied: changed in place after the call (two values swapped, the same sum), it
    is a new key, sorted again, not served the old ordering."""
    row = np.array([0, 0, 0, 1, 1])
    pool = Pool(row, np.array([0.0, 1.0, 2.0, 1.0, 0.0]), 2)
    fixed = np.array([0.0, 1.0, 2.0, 1.0, 0.0])
    fixed.flags.writeable = False
    pool.ordered(fixed, True)
    assert any(held is not None and np.shares_memory(held, fixed) for entries in pool._ordered.values()
               for held, _ in entries)
    key = np.array([0.0, 1.0, 3.0, 1.0, 0.0])
    first = pool.ordered(key, True)
    assert first.grade.tolist() == [2.0, 1.0, 0.0, 1.0, 0.0]
    key[0], key[2] = key[2], key[0]
    again = pool.ordered(key, True)
    assert again is not first and again.grade.tolist() == [0.0, 1.0, 2.0, 1.0, 0.0]


@pytest.mark.parametrize("seed", range(6))
def test_sparse_bpref_infap_bing_equal_their_dense_forms(seed):
    """bpref, infAP and binG add terms at the relevant documents only (counts above them by binary
    search): the whole-ranking forms they had (kept here) to the last bit, at levels 0, 1 and 2,
    with pooled-unjudged (negative grade) and unjudged documents; Bpref's values are shared with
    GMBpref, and a second Judgements object is not served the first one's."""
    from ulnorm_eval.core.measures import trec_gains as tg
    from ulnorm_eval.core.measures import trec_precision as tp
    from ulnorm_eval.core.measures.common import UNJUDGED, codes, nonrel_count, rel_total, safe
    from ulnorm_eval.core.measures.trec_precision import INFAP_EPSILON

    rk, J = _case(seed, nq=9)
    for level in (0.0, 1.0, 2.0):
        ctx = Level(level)
        code = codes(rk)
        rel = code >= level
        nonrel = (code >= 0) & (code < level)
        nonrel_above = rk.running(nonrel)
        R = rel_total(rk, J, ctx)[rk.row]
        n_nonrel = nonrel_count(J, level)[rk.base][rk.row]
        term = np.where(nonrel_above > 0, 1.0 - safe(np.minimum(nonrel_above, R), np.minimum(n_nonrel, R)), 1.0)
        bpref = safe(rk.rowsum(np.where(rel, term, 0.0)), rel_total(rk, J, ctx))
        fresh = Ranking(rk.row, rk.grade, rk.nrows, rk.base, rk.judged)
        bpref_measure = registry.parse("Bpref").measure
        assert np.array_equal(tp.k_bpref(fresh, J, bpref_measure, level), bpref)
        assert tp.k_bpref(fresh, J, bpref_measure, level) is tp.k_bpref(fresh, J, bpref_measure, level)  # GMBpref reads Bpref's
        other = Judgements(J.qids, J.row, np.where(J.grade > 0, J.grade + 1.0, J.grade), J.max_grade + 1.0)
        n_other = nonrel_count(other, level)[rk.base][rk.row]
        R_other = rel_total(rk, other, ctx)[rk.row]
        term = np.where(nonrel_above > 0, 1.0 - safe(np.minimum(nonrel_above, R_other), np.minimum(n_other, R_other)), 1.0)
        assert np.array_equal(tp.k_bpref(fresh, other, bpref_measure, level),
                              safe(rk.rowsum(np.where(rel, term, 0.0)), rel_total(rk, other, ctx)))

        rel_above = rk.running(rel) - rel
        unjudged_above = rk.running(code == UNJUDGED)
        above = rk.pos.astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            term = 1.0 / (above + 1.0) + (above / (above + 1.0)) * ((rel_above + nonrel_above + unjudged_above) / above) * \
                ((rel_above + INFAP_EPSILON) / (rel_above + nonrel_above + 2 * INFAP_EPSILON))
        term = np.where(rk.pos == 0, 1.0, term)
        infap = safe(rk.rowsum(np.where(rel, term, 0.0)), rel_total(rk, J, ctx))
        assert np.array_equal(tp.k_infAP(fresh, J, registry.parse("infAP").measure, level), infap)

        above_non = rk.pos - (rk.running(rel) - rel)
        bing = safe(rk.rowsum(np.where(rel, 1.0 / np.log2(2.0 + above_non), 0.0)), rel_total(rk, J, ctx))
        assert np.array_equal(tg.k_binG(fresh, J, registry.parse("binG").measure, level), bing)


@pytest.mark.parametrize("seed", range(6))
def test_sparse_rbp_equals_its_dense_form(seed):
    """rbp without a gain map adds its terms at the graded documents only: the whole-ranking form it
    had (kept here: every document's scaled gain times trec_eval's cur_p) to the last bit, with grades
    above 1 (scaled), fractional grades, negative grades and unjudged documents; with a gain map
    (dense, as before) the per-query level table now read from the Judgements' cache is the same."""
    from ulnorm_eval.core.kernels import repeated_powers
    from ulnorm_eval.core.measures import trec_gains as tg
    from ulnorm_eval.core.measures.common import codes

    rk, J = _case(seed, nq=9)
    rng = np.random.default_rng(seed)
    graded = Ranking(rk.row, np.where(rk.grade > 0, rk.grade * rng.choice([1.0, 0.5, 0.25], len(rk.grade)), rk.grade),
                     rk.nrows, rk.base, rk.judged)
    for ranking in (rk, graded):
        for name in ("RBP_trec(p=0.8)", "RBP_trec(p=0.95)", "RBP_trec(p=0.8,gains={1:3,2:-1})"):
            measure = registry.parse(name).measure
            p, gains = tg.rbp_settings(measure)
            code = codes(ranking)
            g = tg._level_gain(code, gains)
            lv_min, lv_max = tg._rbp_levels(J, gains)
            low, high = lv_min[ranking.base][ranking.row], lv_max[ranking.base][ranking.row]
            scale = (low < 0) | (high > 1)
            with np.errstate(divide="ignore", invalid="ignore"):
                scaled = np.where(scale, (g - low) / (high - low), g)
            known = (code >= 0) | np.isin(code, [float(level) for level in (gains or {})])
            weights = repeated_powers(p, int(ranking.pos.max()))[ranking.pos.astype(np.int64)]
            want = (1.0 - p) * ranking.rowsum(np.where(known, scaled, 0.0) * weights)
            fresh = Ranking(ranking.row, ranking.grade, ranking.nrows, ranking.base, ranking.judged)
            assert np.array_equal(tg.k_rbp(fresh, J, measure, 1.0), want)


@pytest.mark.parametrize("seed", range(4))
def test_unjudged_at_k_counts_the_unjudged_positions(seed):
    """Unjudged@k counts the memoised positions of the documents of code < 0 within the top k: the
    dense count over every rank it had (kept here), for cutoffs inside and past the rows, with -c's
    empty rows zeroed."""
    from ulnorm_eval.core.measures import trec_precision as tp
    from ulnorm_eval.core.measures.common import codes, present_mask

    rk, J = _case(seed, nq=9)
    ctx = Level(1.0, present=np.arange(rk.nrows) % 3 != 1)
    for k in (1, 3, 10, 1000):
        want = np.where(present_mask(rk, ctx), rk.rowsum((codes(rk) < 0) & (rk.pos < k)) / float(k), 0.0)
        assert np.array_equal(tp.k_unj(rk, J, registry.parse(f"Unjudged@{k}").measure, Level(1.0, present=ctx.present)), want)
        assert np.array_equal(want * k, [sum(1 for c in codes(rk)[rk.starts[r]:rk.starts[r + 1]][:k] if c < 0)
                                         if ctx.present[r] else 0 for r in range(rk.nrows)])


def _ragged_track(tmp_path, seed: int, numeric: bool = False):
    """A random qrels file and runs over it: ragged queries (some without judgements, some runs
    without some queries), graded and negative grades, string (or numeric) docids, tied scores."""
    rng = np.random.default_rng(seed)
    nq = int(rng.integers(3, 12))
    qids = [str(q) for q in rng.choice(np.arange(1, 400), nq, replace=False)]
    doc = (lambda i: str(int(i))) if numeric else (lambda i: f"DOC{int(i) % 7}-{int(i)}")
    lines = []
    for q in qids[:-1] if nq > 3 else qids:
        for d in rng.choice(300, int(rng.integers(1, 40)), replace=False):
            lines.append(f"{q} 0 {doc(d)} {int(rng.choice([0, 0, 1, 2, -1]))}\n")
    qrels = tmp_path / f"q{seed}.txt"
    qrels.write_text("".join(lines))
    runs = []
    for r in range(int(rng.integers(2, 5))):
        out = []
        for q in qids:
            if rng.random() < 0.2 and r:
                continue  # a run without this query (another query set)
            for rank, d in enumerate(rng.choice(300, int(rng.integers(1, 60)), replace=False)):
                out.append(f"{q} Q0 {doc(d)} {rank} {float(rng.integers(0, 8)) / 4} r{r}\n")
        path = tmp_path / f"r{seed}_{r}.run"
        path.write_text("".join(out))
        runs.append(str(path))
    return str(qrels), runs


def _same_result(got, want, metrics) -> None:
    assert got.name == want.name and got.qids == want.qids and got.notes == want.notes
    for m in metrics:
        g, w = np.asarray(got.values[m]), np.asarray(want.values[m])
        assert g.dtype == w.dtype and g.tobytes() == w.tobytes() if g.dtype != object else list(g) == list(w)
        assert repr(got.mean[m]) == repr(want.mean[m])
    assert {m: tuple(map(repr, v)) for m, v in got.interval.items()} == \
        {m: tuple(map(repr, v)) for m, v in want.interval.items()}


def _evaluated(qrels, path, metrics, options):
    """One run file through the orchestrator (the route of every command)."""
    from ulnorm_eval.pipeline.orchestrator import evaluate_runs

    (result,) = evaluate_runs(qrels, [path], metrics, options)
    return result


@pytest.mark.parametrize("seed", range(6))
def test_prepared_qrels_give_what_the_runs_build_themselves(tmp_path, seed):
    """blocks.prepare (what a local pool does before forking its workers) builds the join's tables,
    the judgements and their measure tables and the bootstrap counts for the full query set; each
    run evaluated after it gives, to the last bit, what it gives on qrels that built nothing
    (defaults with E, UL2 and their intervals; trec measures; numeric and string docids)."""
    from ulnorm_eval.pipeline.blocks import Options, prepare
    from ulnorm_eval.pipeline.evaluate import load_qrels, resolve_metrics

    qrels_path, runs = _ragged_track(tmp_path, seed, numeric=seed % 3 == 2)
    for measures, variants in ((None, None), (["all_trec"], []), (["nDCG@10", "AP"], ["E", "IUB", "WLB", "UL1"])):
        metrics = resolve_metrics(measures, variants)
        opts = Options()
        prepared = load_qrels(qrels_path)
        prepare(prepared, metrics, opts)
        for path in runs:
            _same_result(_evaluated(prepared, path, metrics, opts),
                         _evaluated(load_qrels(qrels_path), path, metrics, opts), metrics)


def test_after_prepare_a_run_builds_no_qrels_table(tmp_path, monkeypatch):
    """What a forked worker inherits from blocks.prepare it does not build again: a run that ranks
    every judged query builds neither the fingerprint table of the judged (query, docid) pairs nor
    the join index, nor draws the bootstrap counts."""
    from ulnorm_eval.core import intervals
    from ulnorm_eval.inputs import fingerprints
    from ulnorm_eval.pipeline import ordering
    from ulnorm_eval.pipeline.blocks import Options, prepare
    from ulnorm_eval.pipeline.evaluate import load_qrels, resolve_metrics

    qrels_path = tmp_path / "q.txt"
    qrels_path.write_text("".join(f"{q} 0 D-{q}-{d} {d % 3}\n" for q in (1, 2, 3) for d in range(9)))
    run = tmp_path / "r.run"
    run.write_text("".join(f"{q} Q0 D-{q}-{d} {d} {20 - d} t\n" for q in (1, 2, 3) for d in range(14)))
    metrics = resolve_metrics(None, None)
    qrels = load_qrels(str(qrels_path))
    prepare(qrels, metrics, Options())
    built = []
    for module, name in ((fingerprints, "pair_table"), (intervals, "_draw_counts"), (ordering, "qrels_rows")):
        real = getattr(module, name)
        monkeypatch.setattr(module, name, lambda *a, _real=real, _name=name, **k: built.append(_name) or _real(*a, **k))
    first = _evaluated(qrels, str(run), metrics, Options())
    assert built == []
    assert qrels.cache["pair_table"][1] is not None  # used from the first run on
    _same_result(first, _evaluated(load_qrels(str(qrels_path)), str(run), metrics, Options()), metrics)


@pytest.mark.parametrize("seed", range(4))
def test_pool_keeps_one_ordering_per_key_bits(seed):
    """Pool.ordered hands back the ordering it made for a key with the same bits (another array
    object too), and makes a new one for a key differing in one document or in its direction, also
    when the keys' sums agree; the pool of unsorted rows is the stably sorted one, of sorted rows
    the same rows, in copies."""
    rng = np.random.default_rng(seed)
    nq = 6
    row = np.repeat(np.arange(nq), rng.integers(1, 30, nq))
    grade = rng.choice([0.0, 1.0, 2.0], len(row))
    judged = rng.random(len(row)) < 0.8
    pool = Pool(row, grade, nq, judged)
    assert pool.row is not row and pool.grade is not grade and np.array_equal(pool.row, row)
    key = rng.choice([0.0, 1.0, 3.0], len(row))
    first = pool.ordered(key, True)
    assert pool.ordered(key.copy(), True) is first
    other = key.copy()
    i, j = np.flatnonzero(other == 0.0)[:1].tolist() + [None]  # move 1.0 between two documents: same sum
    nz = np.flatnonzero(other == 1.0)
    if i is not None and len(nz):
        other[i], other[nz[0]] = 1.0, 0.0
        got = pool.ordered(other, True)
        assert got is not first
        want = np.lexsort((-other, row))
        assert np.array_equal(got.grade, grade[want]) and np.array_equal(got.judged, judged[want])
    asc = pool.ordered(key, False)
    assert asc is not first and np.array_equal(asc.grade, grade[np.lexsort((key, row))])
    shuffled = rng.permutation(len(row))
    mixed = Pool(row[shuffled], grade[shuffled], nq, judged[shuffled])
    stable = np.argsort(row[shuffled], kind="stable")
    assert np.array_equal(mixed.row, row[shuffled][stable]) and np.array_equal(mixed.grade, grade[shuffled][stable])
    assert np.array_equal(mixed.judged, judged[shuffled][stable])


def test_segment_cumsum_sums_each_segment_alone():
    """Each segment's running sum has the bits of np.cumsum over that segment alone (empty segments,
    one-element segments and a long one among them)."""
    from ulnorm_eval.core.kernels import segment_cumsum

    rng = np.random.default_rng(3)
    values = rng.random(400) * 10.0 ** rng.integers(-8, 8, 400)
    starts = np.array([0, 0, 1, 1, 9, 250, 251, 400])
    want = np.concatenate([np.cumsum(values[a:b]) for a, b in zip(starts[:-1], starts[1:])])
    assert np.array_equal(segment_cumsum(values, starts), want)
    assert segment_cumsum(np.array([]), np.array([0])).size == 0


def test_a_querys_values_do_not_depend_on_the_queries_beside_it(tmp_path):
    """Every per-query value and bound of ndcg_rel, G and infAP under the shared default pool has the same bits for
    a query evaluated alone and beside other queries (a running sum over all queries less the sum before
    one changed the last bits of E(nDCG_rel) with the queries beside it, so with -j)."""
    import ulnorm_eval as ue

    rng = np.random.default_rng(5)
    qrels = [f"q{q} 0 d{q}_{d} {rng.choice([0, 1, 2, 2.5])}" for q in range(6) for d in range(rng.integers(3, 12))]
    (tmp_path / "qrels").write_text("\n".join(qrels) + "\n")
    lines = []
    for q in range(6):
        docs = [f"d{q}_{d}" for d in rng.permutation(14)]
        lines += [f"q{q} Q0 {doc} {r + 1} {100 - r} run" for r, doc in enumerate(docs)]
    (tmp_path / "all.run").write_text("\n".join(lines) + "\n")
    (tmp_path / "q4.run").write_text("\n".join(line for line in lines if line.startswith("q4 ")) + "\n")
    metrics = ["ndcg_rel", "G", "infAP", "nDCG", "Rndcg"]
    both = ue.evaluate(str(tmp_path / "qrels"), str(tmp_path / "all.run"), metrics, ["E", "IUB", "EM"]).wide()
    alone = ue.evaluate(str(tmp_path / "qrels"), str(tmp_path / "q4.run"), metrics, ["E", "IUB", "EM"],
                        run_queries_only=True).wide()
    cols = [c for c in alone.columns if c not in ("run", "query")]
    a = alone[alone["query"] == "q4"][cols].to_numpy(dtype=float)
    b = both[both["query"] == "q4"][cols].to_numpy(dtype=float)
    assert a.shape == b.shape == (1, len(cols)) and np.array_equal(a, b, equal_nan=True), (cols, a, b)
