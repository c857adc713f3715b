"""The benchmarks start a Dask LocalCluster without leaving its nannies' environment behind.

Dask's nannies write MALLOC_TRIM_THRESHOLD_=65536, OMP/MKL/OPENBLAS_NUM_THREADS=1 and PYTHONHASHSEED
into the starting process's os.environ; every command like_for_like.py measured after its Dask
section inherited them (7M run lines: 6.0 s of CPU instead of 2.9 s, glibc trimming its heap)."""
from __future__ import annotations

import os

from conftest import ROOT


def test_a_local_cluster_leaves_the_environment_as_it_was(monkeypatch):
    import distributed  # noqa: F401 - the test extra installs it: a missing install must fail, not skip
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    for name in ("MALLOC_TRIM_THRESHOLD_", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "PYTHONHASHSEED"):
        monkeypatch.delenv(name, raising=False)
    import run

    before = dict(os.environ)
    cluster = run.start_local_cluster(n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1",
                                      dashboard_address=None, silence_logs=50)
    try:
        assert dict(os.environ) == before
        from dask.distributed import Client

        with Client(cluster) as client:  # the cluster works: its worker runs a task
            assert client.submit(sum, [1, 2, 3]).result(timeout=60) == 6
    finally:
        cluster.close()
    assert dict(os.environ) == before


def test_like_for_like_starts_its_cluster_through_it(monkeypatch):
    """like_for_like's and parallel.py's clusters go through run.start_local_cluster (not LocalCluster directly)."""
    for script in ("like_for_like.py", "parallel.py"):
        text = (ROOT / "benchmarks" / script).read_text(encoding="utf-8")
        assert "start_local_cluster(" in text and "LocalCluster(" not in text.replace("start_local_cluster(", ""), script
