"""The toy qrels and run the hostile command-line tests share (two queries, a run of five lines and a
copy with other scores), and their check of a refusal: one ``ulnorm-eval: ...`` line, exit 2, no stdout."""
from __future__ import annotations

import pytest

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 1\nq2 0 d1 1\nq2 0 d4 1\n"
RUN = "q1 Q0 d1 1 3 r\nq1 Q0 d2 2 2 r\nq1 Q0 d3 3 1 r\nq2 Q0 d4 1 2 r\nq2 Q0 d9 2 1 r\n"


def write_toy(tmp_path) -> tuple:
    """q.txt, r.txt and r2.txt (r.txt with its first score 0.5) under ``tmp_path``: their paths."""
    (tmp_path / "q.txt").write_text(QRELS)
    (tmp_path / "r.txt").write_text(RUN)
    (tmp_path / "r2.txt").write_text(RUN.replace(" 3 r", " 0.5 r"))
    return str(tmp_path / "q.txt"), str(tmp_path / "r.txt"), str(tmp_path / "r2.txt")


@pytest.fixture
def files(tmp_path):
    return write_toy(tmp_path)


def one_line(res, *fragments) -> None:
    """``res`` (a click result or a finished process) refused in one line naming each of ``fragments``."""
    code, out, err = (res.returncode, res.stdout, res.stderr) if hasattr(res, "returncode") else (
        res.exit_code, res.stdout, res.stderr)
    assert (code, out) == (2, ""), (code, out, err)
    assert err.count("\n") == 1 and err.startswith("ulnorm-eval: "), err
    for fragment in fragments:
        assert fragment in err, err
