"""-j auto leaves out the cores other work keeps busy now (parallel.others_busy): on a 2-core machine
at a load of 7-9 the two workers only competed with that work and cost more CPU (docs/performance.md)."""
from __future__ import annotations

import os

import pytest

from ulnorm_eval.pipeline import parallel


@pytest.mark.parametrize("line,cores,machine,busy", [
    ("0.00 0.01 0.05 1/120 999", 2, 2, 0.0),     # quiet: only this process runs
    ("3.10 2.50 1.20 1/120 999", 2, 2, 0.0),     # a benchmark loop's own load, nothing else running now
    ("0.20 0.30 0.40 4/120 999", 2, 2, 0.2),     # processes passing by on a quiet machine
    ("7.50 6.00 5.00 3/200 999", 2, 2, 2.0),     # busy: two other threads running, and for a while
    ("1.00 1.00 1.00 2/200 999", 2, 2, 1.0),     # one other job
    ("30.0 30.0 30.0 41/900 999", 2, 64, 30 * 2 / 64),  # 2 of 64 cores: the machine's load, our share
    ("garbage", 2, 2, 0.0), ("", 2, 2, 0.0),
])
def test_others_busy_reads_the_smaller_of_now_and_the_last_minute(monkeypatch, line, cores, machine, busy):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cores)), raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: machine)
    assert parallel.others_busy(line) == pytest.approx(busy, abs=1e-12)


@pytest.mark.parametrize("cores,busy,tasks,workers", [
    (2, 0.0, 17, 2), (2, 0.4, 17, 2), (2, 0.6, 17, 1), (2, 1.0, 17, 1), (2, 2.0, 17, 1), (2, 7.5, 17, 1),
    (8, 3.0, 17, 5), (8, 3.0, 3, 3), (8, 0.0, 3, 3), (8, 7.6, 17, 1), (1, 0.0, 17, 1),
])
def test_auto_leaves_the_busy_cores_out(monkeypatch, cores, busy, tasks, workers):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cores)), raising=False)
    monkeypatch.setattr(parallel, "others_busy", lambda: busy)
    assert parallel.resolve_jobs(parallel.AUTO, tasks) == workers
    assert parallel.resolve_jobs(2, tasks) == min(2, tasks)  # an explicit N is the user's choice, load or not


def test_the_busy_cores_are_read_only_when_workers_could_start(monkeypatch):
    """One run or one core never reads /proc/loadavg (nor asks about fork)."""
    asked = []
    monkeypatch.setattr(parallel, "others_busy", lambda: asked.append(1) or 0.0)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    assert parallel.resolve_jobs(parallel.AUTO, 1) == 1 and asked == []
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)
    assert parallel.resolve_jobs(parallel.AUTO, 17) == 1 and asked == []
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    assert parallel.resolve_jobs(parallel.AUTO, 17) == 2 and asked == [1]

