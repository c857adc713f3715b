"""The benchmark's headline numbers as one README sentence (run.py --update-docs writes them to
docs/performance-summary.json and the sentence into README.md; tests/test_cli_docs.py checks that
the README still says what the JSON holds)."""
from __future__ import annotations

import re

BEGIN, END = "<!-- BEGIN benchmark -->", "<!-- END benchmark -->"
KEYS = ("date", "machine", "load", "numeric_time", "numeric_rss", "string_time",
        "research_date", "research_load", "robust_same", "compare", "dlhard_s", "trec_eval_s", "floor_s")
# measured by the research-size section (run.py --only research --update-docs updates these alone)
RESEARCH_KEYS = ("research_date", "research_load", "robust_same", "compare", "dlhard_s", "trec_eval_s", "floor_s")


def readme_sentence(s: dict) -> str:
    """What the README says of speed, from the numbers of the benchmark: each comparison names the
    measures both sides computed (the same measures on the same files, or a stated superset)."""
    return (f"measured on {s['date']} ({s['machine']}, load {s['load']}): a 7M-line run with nDCG@10, AP and RBP "
            f"and their E, IUB, UL1 and UL2 takes {s['numeric_time']:.2f}× the time of pytrec_eval computing "
            f"nDCG@10 and AP alone, and {s['numeric_rss']:.2f}× its memory ({s['string_time']:.2f}× the time "
            f"with string document ids); on {s['research_date']} (load {s['research_load']}), with trec_eval's "
            f"default measures on both sides and no variants, the 17 TREC 2003 Robust runs take "
            f"{s['robust_same']:.2f}× trec_eval's time and one 50,000-line DL-HARD run {s['dlhard_s']:.2f} s "
            f"(trec_eval {s['trec_eval_s']:.2f} s; starting Python and importing numpy alone takes "
            f"{s['floor_s']:.2f} s); `compare` on the 17 runs takes {s['compare']:.2f}× `eval`'s time.")


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
