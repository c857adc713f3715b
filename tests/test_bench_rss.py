"""benchmarks/run.py's wrapper reports the peak RSS of a command of several processes (-j workers)
as their sum held at once, not only the largest single process's (getrusage's ru_maxrss)."""
from __future__ import annotations

import sys
from pathlib import Path


ROOT = Path(__file__).resolve().parents[1]

# a parent and its child each hold 60 MB (touched) for 0.6 s, at the same time
TWO = ("import subprocess, sys, time\n"
       "held = bytearray(60 << 20)\n"
       "child = subprocess.Popen([sys.executable, '-c', 'import time; held = bytearray(60 << 20); time.sleep(0.6)'])\n"
       "time.sleep(0.6)\n"
       "child.wait()\n")


def test_peak_rss_of_two_processes_is_their_sum(monkeypatch, tmp_path):
    """On Linux the wrapper sums the process tree from /proc; elsewhere only getrusage's largest
    single process is known, which must still hold one 60 MB buffer."""
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    import run

    stats = run.Stats([sys.executable, "-c", TWO], tmp_path / "out")
    run.measure(stats)
    assert stats.error is None
    if sys.platform.startswith("linux"):
        assert stats.rss[0] > 120  # MiB: both 60 MB buffers (one process alone holds ~70)
    else:
        assert stats.rss[0] > 60
