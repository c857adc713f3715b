"""Shared fixtures: the real evaluation data beside the checkout, and small helpers."""
from __future__ import annotations

import gzip
from pathlib import Path

import os

import pytest
from hypothesis import settings

# CI runs the same examples every time (a red CI blocks a landing; exploring is for local runs).
settings.register_profile("ci", derandomize=True, deadline=None)
if os.environ.get("CI"):
    settings.load_profile("ci")

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared() -> Path:
    """``../shared/data`` (trec_eval's test files, DL-HARD, Robust 2003, LETOR); skip when absent."""
    if not SHARED.is_dir():
        pytest.skip(f"real evaluation data not found at {SHARED} (see the README's test section)")
    return SHARED


def read_trec_eval_output(path: Path) -> dict:
    """trec_eval ``-q`` output as ``{(measure, qid): value_text}`` (values kept as printed)."""
    opener = gzip.open if str(path).endswith(".gz") else open
    out = {}
    with opener(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 3:
                continue
            out[(parts[0].strip(), parts[1])] = parts[2]
    return out


@pytest.fixture
def write(tmp_path):
    """Write text (or bytes) to a file under tmp_path and return its path as a string."""

    def _write(name: str, content, compress: str | None = None) -> str:
        path = tmp_path / name
        data = content.encode("utf-8") if isinstance(content, str) else content
        if compress == "gz":
            data = gzip.compress(data)
        elif compress == "bz2":
            import bz2
            data = bz2.compress(data)
        elif compress == "xz":
            import lzma
            data = lzma.compress(data)
        path.write_bytes(data)
        return str(path)

    return _write
