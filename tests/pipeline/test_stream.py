"""--stream evaluates block by block and must give exactly the in-memory numbers."""
from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from ulnorm_eval.pipeline import evaluate as api

from ulnorm_eval.inputs import trec as io

from ulnorm_eval.pipeline import stream
from ulnorm_eval.pipeline.orchestrator import evaluate_runs
from ulnorm_eval.cli.main import main

EXACT = ["nDCG@10", "nDCG", "AP", "AP@100", "P@10", "RR", "R@100", "Rprec", "RBP(p=0.8)", "SP@10"]
VARIANTS = ["E", "IUB", "WLB", "UL1", "UL2", "MM", "EB", "EM", "UEW"]


def _streamed(qrels, run_path, metrics, options, block_bytes):
    """The run file in query blocks of about ``block_bytes`` (--stream)."""
    (result,) = evaluate_runs(qrels, [run_path], metrics, options, stream=True, block_bytes=block_bytes)
    return result


def _whole(qrels, run_path, metrics, options):
    """The run file read whole (--no-stream)."""
    (result,) = evaluate_runs(qrels, [run_path], metrics, options, stream=False)
    return result


def _both(qrels_path, run_path, block_bytes, **kw):
    q = api.load_qrels(qrels_path)
    metrics = api.resolve_metrics(EXACT, VARIANTS)
    opts = api.Options(**kw)
    return metrics, _streamed(q, run_path, metrics, opts, block_bytes), _whole(q, run_path, metrics, opts)


def _assert_identical(metrics, a, b):
    assert a.qids == b.qids
    for m in metrics:
        assert np.array_equal(a.values[m], b.values[m], equal_nan=True), m
        assert a.mean[m] == b.mean[m] or (np.isnan(a.mean[m]) and np.isnan(b.mean[m])), m
    assert a.undefined == b.undefined
    assert (a.missing, a.ignored, a.missing_qids, a.ignored_qids) == (b.missing, b.ignored, b.missing_qids,
                                                                      b.ignored_qids)


@pytest.mark.parametrize("run", ["bm25.run.gz", "bm25_bert_zs.run.gz"])
def test_dlhard_identical_small_blocks(shared, run):
    d = shared / "dlhard-passage"
    _assert_identical(*_both(str(d / "qrels.txt"), str(d / "runs" / run), 200_000, rel_level=2, depth=1000,
                             score_precision="float32"))


@pytest.mark.parametrize("run", ["input.NLPR03vb10.gz", "input.humR03dc.gz", "input.uwmtCR0.gz"])
def test_robust03_identical(shared, run):
    d = shared / "robust03"
    _assert_identical(*_both(str(d / "qrels.txt"), str(d / "runs" / run), 300_000))


def test_trec_eval_test_run_identical(shared):
    d = shared / "trec_eval_test"
    for kw in ({}, {"run_queries_only": True}, {"pool": "union"}, {"undefined": "skip"}):
        _assert_identical(*_both(str(d / "qrels.test"), str(d / "results.test"), 4096, **kw))


def test_generated_with_comments_missing_and_extra_queries(tmp_path):
    rng = np.random.default_rng(7)
    qrels, run = [], ["# a comment at the top"]
    for q in range(1, 40):
        docs = rng.choice(500, size=60, replace=False)
        for d in docs[:15]:
            qrels.append(f"{q} 0 d{d} {rng.integers(0, 3)}")
        if q % 7 == 0:
            continue  # missing from the run
        scores = rng.integers(0, 20, size=50)  # heavy ties
        for r, (d, s) in enumerate(zip(docs[5:55], scores)):
            run.append(f"{q} Q0 d{d} {r + 1} {s} tag")
        run.append("")
    run += [f"999 Q0 x{i} {i} 1.0 tag" for i in range(5)]  # not in the qrels
    (tmp_path / "q").write_text("\n".join(qrels) + "\n")
    (tmp_path / "r").write_text("\n".join(run) + "\n")
    for bs in (64, 1000, 1 << 20):
        metrics, a, b = _both(str(tmp_path / "q"), str(tmp_path / "r"), bs)
        _assert_identical(metrics, a, b)
        assert a.missing == 5 and a.ignored == 1


def test_blocks_hold_whole_queries(tmp_path):
    lines = [f"{q} Q0 d{i} {i} {100 - i} t" for q in (1, 2, 3) for i in range(30)]
    p = tmp_path / "r"
    p.write_text("\n".join(lines) + "\n")
    got = [b.decode().split() for b, _ in stream.query_blocks(str(p), block_bytes=100)]
    # every block's queries are disjoint from the others' and the lines are all there, in order
    qs = [sorted(set(tok[0::6])) for tok in got]
    assert sum(len(x) for x in qs) == 3
    assert sum(len(t) for t in got) == 6 * 90


def test_non_contiguous_query_is_refused_with_its_line(tmp_path):
    q = tmp_path / "q"
    q.write_text("1 0 a 1\n2 0 b 1\n")
    r = tmp_path / "r"
    body = [f"1 Q0 a{i} {i} {50 - i} t" for i in range(20)] + [f"2 Q0 b{i} {i} 1 t" for i in range(20)]
    body += ["1 Q0 late 99 0.5 t"]
    r.write_text("\n".join(body) + "\n")
    res = CliRunner().invoke(main, ["--stream", "--norm", "none", str(q), str(r)])
    assert res.exit_code == 2
    assert f"{r}:41: query '1' appears again after other queries" in res.output
    # without --stream the same file is fine
    assert CliRunner().invoke(main, ["--norm", "none", str(q), str(r)]).exit_code == 0


def test_errors_in_later_blocks_name_the_file_line(tmp_path):
    q = tmp_path / "q"
    q.write_text("1 0 a 1\n")
    r = tmp_path / "r"
    body = [f"{1 + i // 10} Q0 d{i} {i} 1.5 t" for i in range(100)]
    body[73] = "8 Q0 d73 74 notanumber t"
    r.write_text("\n".join(body) + "\n")
    with pytest.raises(io.InputError) as e:
        _streamed(io.read_qrels(str(q)), str(r), api.resolve_metrics(["AP"], []), api.Options(), 300)
    assert (e.value.line, e.value.reason) == (74, "score 'notanumber' is not a number")


def test_cli_stream_matches_in_memory_text(shared):
    d = shared / "dlhard-passage"
    args = ["-q", "-f", "trec", str(d / "qrels.txt"), str(d / "runs" / "bm25_rm3.run.gz")]
    a = CliRunner().invoke(main, args)
    b = CliRunner().invoke(main, ["--stream", *args])
    assert a.exit_code == b.exit_code == 0
    assert a.output == b.output


def test_monte_carlo_db_identical_streamed_or_not(shared):
    """DB's Monte Carlo draws are keyed by (seed, query id, repetition): streaming, the block size
    and the other queries evaluated alongside change nothing."""
    d = shared / "robust03"
    q = api.load_qrels(str(d / "qrels.txt"))
    metrics = api.resolve_metrics(["AP", "nDCG@10"], ["DB"])
    opts = api.Options(permutations=200, seed=5)
    run = str(d / "runs" / "input.humR03dc.gz")
    a = _streamed(q, run, metrics, opts, 20_000)
    b = _whole(q, run, metrics, opts)
    for m in metrics:
        assert np.array_equal(a.values[m], b.values[m], equal_nan=True), m
    db = api.resolve_metrics(["AP"], ["DB"])[1]
    assert np.all(a.stderr[db] >= 0) and np.any(a.stderr[db] > 0)  # some queries are Monte Carlo
    # another seed moves the estimates
    c = _whole(q, run, metrics, api.Options(permutations=200, seed=6))
    assert not np.array_equal(c.values[db], b.values[db])


def test_placed_monte_carlo_identical_streamed_or_not(shared):
    """The measures whose Monte Carlo draws only the documents they read (G, iprec_at_recall,
    11pt_avg: permutations.placed) give the same E, DB and standard errors streamed in small blocks
    as in memory, on the qrels pool and on the run's own pool."""
    d = shared / "robust03"
    q = api.load_qrels(str(d / "qrels.txt"))
    metrics = api.resolve_metrics(["G", "IPrec@0.5", "Avg11pt"], ["E", "DB"])
    run = str(d / "runs" / "input.humR03dc.gz")
    for pool in ("qrels", "run"):
        opts = api.Options(permutations=100, seed=3, pool=pool)
        a = _streamed(q, run, metrics, opts, 20_000)
        b = _whole(q, run, metrics, opts)
        for m in metrics:
            assert np.array_equal(a.values[m], b.values[m], equal_nan=True), (pool, m)
            if m in b.stderr:
                assert np.array_equal(a.stderr[m], b.stderr[m], equal_nan=True), (pool, m)
        e = api.resolve_metrics(["G"], ["E"])[1]
        assert np.any(b.stderr[e] > 0)  # Monte Carlo, not enumerated


def _real_runs():
    from conftest import SHARED

    out = []
    for folder, qrels, args in (("robust03", "qrels.txt", []),
                                ("dlhard-passage", "qrels.txt", ["-l", "2", "-M", "1000", "--score-precision", "float32"])):
        runs = sorted((SHARED / folder / "runs").glob("*.gz")) if SHARED.is_dir() else []
        out += [pytest.param(str(SHARED / folder / qrels), str(r), args, id=r.name)
                for r in runs if not r.name.endswith(".eval.gz")]
    return out or [pytest.param(None, None, None, id="no-shared-data")]


@pytest.mark.parametrize("qrels, run, args", _real_runs())
def test_every_real_run_streams_to_the_same_tsv(shared, qrels, run, args):
    base = ["-f", "tsv", "-m", "nDCG@10", "-m", "AP", "-m", "P@10", "--norm", "e,iub,ul1,ul2,uew", *args, qrels, run]
    a = CliRunner().invoke(main, ["--stream", *base])
    b = CliRunner().invoke(main, ["--no-stream", *base])
    assert a.exit_code == b.exit_code == 0, a.output + b.output
    assert a.stdout == b.stdout and a.stdout.count("\n") > 50


def test_bom_crlf_and_no_final_newline_stream_alike(tmp_path):
    q = tmp_path / "q"
    q.write_text("1 0 a 1\n1 0 b 2\n2 0 c 1\n")
    r = tmp_path / "r"
    lines = [f"1 Q0 {d} {i} {9 - i} t" for i, d in enumerate("abxyz")] + [f"2 Q0 {d} {i} 1 t" for i, d in enumerate("cde")]
    r.write_bytes(b"\xef\xbb\xbf" + "\r\n".join(lines).encode())
    metrics = api.resolve_metrics(["AP", "nDCG@10"], ["E", "UL2"])
    for bs in (16, 64, 1 << 20):  # blocks far smaller than a query: the BOM line must not split query 1
        a = _streamed(io.read_qrels(str(q)), str(r), metrics, api.Options(), bs)
        b = _whole(io.read_qrels(str(q)), str(r), metrics, api.Options())
        _assert_identical(metrics, a, b)
        # query 2's three documents tie at score 1: docid descending puts its relevant c third
        assert a.values[metrics[0]].tolist() == [(1 / 1 + 2 / 2) / 2, 1 / 3]


@pytest.mark.parametrize("compress", ["gzip", "bz2", "lzma"])
def test_compression_is_recognised_by_content_on_files_and_stdin(tmp_path, compress):
    import importlib

    q = tmp_path / "q"
    q.write_text("1 0 a 1\n1 0 b 0\n")
    text = "1 Q0 b 1 2.0 t\n1 Q0 a 2 1.0 t\n"
    packed = importlib.import_module(compress).compress(text.encode())
    r = tmp_path / "run.txt"  # no compression suffix
    r.write_bytes(packed)
    for args, stdin in (([str(q), str(r)], None), ([str(q), "-"], packed)):
        for mode in ("--stream", "--no-stream"):
            res = CliRunner().invoke(main, [mode, "--norm", "none", "-m", "RR", *args], input=stdin)
            assert res.exit_code == 0, res.output
            assert res.stdout == "RR\tall\t0.5000\n"


def test_read_ahead_keeps_order_errors_and_bound():
    """The streamed reader's read-ahead thread: items in order, a producer's exception raised at
    its place, never more than one item produced ahead of the caller's current one, and an early
    stop closes the source."""
    import threading

    from ulnorm_eval.pipeline.stream import read_ahead

    produced, closed = [], threading.Event()

    def source(n, fail_at=None):
        try:
            for i in range(n):
                if i == fail_at:
                    raise ValueError(f"bad {i}")
                produced.append(i)
                yield i
        finally:
            closed.set()

    got = []
    for x in read_ahead(source(6)):
        got.append(x)
        # the caller holds x; the thread may have produced x + 1 at most
        assert len(produced) <= x + 2
    assert got == list(range(6)) and closed.is_set()

    produced.clear(), closed.clear()
    got = []
    with pytest.raises(ValueError, match="bad 3"):
        for x in read_ahead(source(6, fail_at=3)):
            got.append(x)
    assert got == [0, 1, 2]

    produced.clear(), closed.clear()
    it = read_ahead(source(1000))
    assert next(it) == 0
    it.close()  # the caller stops early: the thread stops and the source is closed
    assert closed.wait(5) and len(produced) <= 2


@pytest.mark.parametrize("data", [
    b"1 Q0 a 1 2.0 t\n1 Q0 b 2 1.0 t\n",            # Arrow's parser: the rows are the lines
    b"1 Q0 a 1 2.0 t\n1 Q0 b 2 1.0 t",              # no final newline
    b"1 Q0 a 1 2.0 t\r\n1 Q0 b 2 1.0 t\r\n",        # CRLF
    b"\xef\xbb\xbf1 Q0 a 1 2.0 t\n1 Q0 b 2 1.0 t\n",  # BOM
    b"1\tQ0\ta\t1\t2.0\tt\n",                        # tabs
    b"# c\n1 Q0 a 1 2.0 t\n\n1 Q0 b 2 1.0 t\n",      # comment and blank line: the careful parser
    b"1 Q0 a 1 2.0 t\n\n\n",                         # blank lines at the end
    b"1  Q0 a 1 2.0 t\n1 Q0 b 2 1.0 t",             # a doubled delimiter
    b"# only a comment\n",                           # no data line at all
])
def test_parse_block_counts_every_newline(data):
    # the next block's line numbers start after this count: it must be the block's newlines
    run, lines = stream.parse_block("r", data)
    assert lines == data.count(b"\n")
    assert (run is None) == (data == b"# only a comment\n")


def test_parse_block_in_halves_gives_the_same_run():
    # the block a caller waits for is parsed by two threads (Arrow blocks of half its size)
    rng = np.random.default_rng(3)
    lines = [f"{q} Q0 D{rng.integers(1 << 40)} {k} {rng.normal():.17g} tag" for q in range(1, 21) for k in range(1000)]
    data = ("\n".join(lines) + "\n").encode()
    assert len(data) > 1 << 19  # at least two 256 KB blocks
    whole, n1 = stream.parse_block("r", data)
    split, n2 = stream.parse_block("r", data, halves=True)
    assert n1 == n2 == len(lines) and split.line is None
    for col in ("qid", "docid", "rank"):
        assert getattr(split, col).equals(getattr(whole, col))
    assert np.array_equal(split.score, whole.score)
