"""The benchmark's headline numbers as one README sentence (run.py --update-docs writes them to
docs/performance-summary.json and the sentence into README.md; tests/test_cli_docs.py checks that
the README still says what the JSON holds)."""
from __future__ import annotations

import re

BEGIN, END = "<!-- BEGIN benchmark -->", "<!-- END benchmark -->"
KEYS = ("date", "machine", "load", "numeric_time", "numeric_rss", "string_time", "robust", "compare",
        "dlhard_s", "trec_eval_s", "floor_s")


def readme_sentence(s: dict) -> str:
    """What the README says of speed, from the numbers of one benchmark run."""
    return (f"measured on {s['date']} ({s['machine']}, load {s['load']}): a 7M-line run takes "
            f"{s['numeric_time']:.2f}× pytrec_eval's time and {s['numeric_rss']:.2f}× its memory "
            f"({s['string_time']:.2f}× the time with string document ids); the 17 TREC 2003 Robust runs "
            f"{s['robust']:.2f}× trec_eval's time, `compare` on them {s['compare']:.2f}× `eval`'s; one "
            f"50,000-line run {s['dlhard_s']:.2f} s (trec_eval {s['trec_eval_s']:.2f} s; starting Python "
            f"and importing numpy alone takes {s['floor_s']:.2f} s).")


def replace_block(text: str, begin: str, end: str, new: str) -> str:
    """``text`` with what lies between the markers ``begin`` and ``end`` replaced by ``new``."""
    pattern = re.compile(re.escape(begin) + ".*?" + re.escape(end), re.S)
    if not pattern.search(text):
        raise ValueError(f"markers {begin} ... {end} not found")
    return pattern.sub(lambda _: begin + new + end, text, count=1)


def block(text: str, begin: str = BEGIN, end: str = END) -> str:
    """What lies between the markers."""
    m = re.search(re.escape(begin) + "(.*?)" + re.escape(end), text, re.S)
    if m is None:
        raise ValueError(f"markers {begin} ... {end} not found")
    return m.group(1)
