"""trec_eval conventions that the conformance files leave untested, on a hand-checked case.

q1: d1, d3 relevant, d2 not; the run's rank column says d1 d2 d3 but its scores (1, 3, 2) say d2 d3 d1,
and trec_eval orders by score: AP = (1/2 + 2/3)/2 = 7/12, RR = 1/2.  (By the rank column AP would be
(1 + 2/3)/2 = 5/6.)  q2: e2 relevant but not retrieved: AP = 0, so gm_map floors it at 1e-5:
gm_map = sqrt(7/12 * 1e-5) = 0.0024 (0.0008 with a floor of 1e-6).  -M 2 keeps d2 d3 of q1:
AP = (1/2)/2 = 1/4.

The expected lines are trec_eval 10.0's (-O2 build) output for the same files:
    trec_eval -q -m map -m gm_map -m num_ret -m P.1,2,3 -m recip_rank qrels run
    trec_eval -q -M 2 -m map -m num_ret -m P.3 qrels run
"""
from __future__ import annotations

import math

import pytest
from click.testing import CliRunner

from conftest import cli as conftest_cli
from ulnorm_eval.cli.main import main

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 1\nq2 0 e1 0\nq2 0 e2 1\n"
RUN = "q1 Q0 d1 1 1.0 r\nq1 Q0 d2 2 3.0 r\nq1 Q0 d3 3 2.0 r\nq2 Q0 e1 1 1.0 r\n"

TREC_EVAL = """num_ret               \tq1\t3
map                   \tq1\t0.5833
recip_rank            \tq1\t0.5000
P_1                   \tq1\t0.0000
P_2                   \tq1\t0.5000
P_3                   \tq1\t0.6667
num_ret               \tq2\t1
map                   \tq2\t0.0000
recip_rank            \tq2\t0.0000
P_1                   \tq2\t0.0000
P_2                   \tq2\t0.0000
P_3                   \tq2\t0.0000
num_ret               \tall\t4
map                   \tall\t0.2917
gm_map                \tall\t0.0024
recip_rank            \tall\t0.2500
P_1                   \tall\t0.0000
P_2                   \tall\t0.2500
P_3                   \tall\t0.3333
"""

TREC_EVAL_M2 = """num_ret               \tq1\t2
map                   \tq1\t0.2500
P_3                   \tq1\t0.3333
num_ret               \tq2\t1
map                   \tq2\t0.0000
P_3                   \tq2\t0.0000
num_ret               \tall\t3
map                   \tall\t0.1250
P_3                   \tall\t0.1667
"""


def _lines(text):
    return sorted(text.splitlines())  # trec_eval's measure order within a query differs from ours


def cli(*args):
    return conftest_cli("--norm", "none", "--names", "trec", "-f", "trec", "-q", *args).stdout


def test_score_orders_not_the_rank_column_and_gm_map_floors_zero(write):
    q, r = write("qrels", QRELS), write("run", RUN)
    out = cli("-m", "map", "-m", "gm_map", "-m", "num_ret", "-m", "P.1,2,3", "-m", "recip_rank", q, r)
    assert _lines(out) == _lines(TREC_EVAL)
    assert f"{math.sqrt(7 / 12 * 1e-5):.4f}" == "0.0024"  # the hand value of the gm_map line
    # the full-precision values behind the printed ones
    tsv = CliRunner().invoke(main, ["--norm", "none", "-q", "-f", "tsv", "--precision", "17", "-m", "AP", "-m", "RR",
                                    q, r]).stdout.splitlines()
    got = [(x.split("\t")[1], *map(float, x.split("\t")[2:])) for x in tsv[1:]]
    assert got == [("q1", pytest.approx(7 / 12, rel=1e-15), 0.5), ("q2", 0.0, 0.0),
                   ("all", pytest.approx(7 / 24, rel=1e-15), 0.25)]


def test_max_depth_keeps_the_top_m_by_score(write):
    q, r = write("qrels", QRELS), write("run", RUN)
    assert _lines(cli("-M", "2", "-m", "map", "-m", "num_ret", "-m", "P.3", q, r)) == _lines(TREC_EVAL_M2)
