"""The output formats each command offers, by name: the choices of its -f.  They are kept apart from
the formatter tables they name (render.formats.FORMATS, render.frames.FRAME_FORMATS), which import the
renderers, so that `--help` stays instant; tests/cli/test_consistency.py fails when a list and its table
differ, or when a command's -f offers anything else."""
from __future__ import annotations

__all__ = ["RESULT_FORMATS", "FRAME_FORMATS", "DATA_FRAME_FORMATS"]

# eval, nrg, summ: an evaluation's rows (render.formats.FORMATS, in its order)
RESULT_FORMATS = ("table", "trec", "tsv", "csv", "json", "jsonl")
# compare: DataFrames (render.frames.FRAME_FORMATS), the last two the systems x metrics table for a paper
FRAME_FORMATS = ("table", "tsv", "csv", "json", "latex", "markdown")
# queries, swaps, stability: DataFrames or rows without a paper table
DATA_FRAME_FORMATS = FRAME_FORMATS[:4]
