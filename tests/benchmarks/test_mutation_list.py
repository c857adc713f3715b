"""benchmarks/mutation.py stays runnable: every mutant still applies to the code (its old text occurs
exactly once), names test files that exist, and every mutant listed as equivalent is explained in
docs/testing.md.  (Running the mutants is the benchmark's job, not the suite's.)"""
from __future__ import annotations

import functools
import importlib.util
import sys

from conftest import ROOT


@functools.lru_cache(maxsize=None)
def _module():
    spec = importlib.util.spec_from_file_location("ulnorm_mutation", ROOT / "benchmarks" / "mutation.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["ulnorm_mutation"] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def test_every_mutant_applies_to_the_current_code():
    mu = _module()
    assert len({m.id for m in mu.MUTANTS}) == len(mu.MUTANTS)
    stale = {m.id: mu.check(m) for m in mu.MUTANTS if mu.check(m)}
    assert not stale, f"update benchmarks/mutation.py: {stale}"


def test_the_benchmark_covers_every_area():
    files = {m.file.split("/")[-1] for m in _module().MUTANTS}
    assert {"precision.py", "common.py", "expectations.py", "normalise.py", "stats.py", "gate.py", "ordering.py",
            "trec.py"} <= files


def test_equivalent_mutants_are_explained_in_the_docs():
    text = (ROOT / "docs" / "testing.md").read_text(encoding="utf-8")
    for m in _module().MUTANTS:
        if m.equivalent:
            assert f"`{m.id}`" in text, m.id
