"""The benchmark's headline numbers as one README sentence (run.py --update-docs writes them to
docs/performance-summary.json and the sentence into README.md; tests/docs/test_cli_docs.py checks that
the README still says what the JSON holds)."""
from __future__ import annotations

import re

BEGIN, END = "<!-- BEGIN benchmark -->", "<!-- END benchmark -->"
# measured by benchmarks/like_for_like.py (its --update-docs updates these alone): ratios of the same measures
LFL_KEYS = ("lfl_date", "lfl_cpu", "lfl_load", "lfl_all_trec_wall", "lfl_all_trec_cpu", "lfl_defaults_wall", "lfl_defaults_cpu",
            "lfl_fresh_cpu", "lfl_library")
# the README's 7M-line figures (dated, with the machine and load): written by run.py's full run or by
# like_for_like.py's large section (either's --update-docs), whichever ran last
LARGE_KEYS = ("date", "machine", "load", "variants", "numeric_time", "numeric_rss", "string_time")
KEYS = ("date", "machine", "load", "variants", "numeric_time", "numeric_rss", "string_time",
        "research_date", "research_load", "robust_same", "compare", "dlhard_s", "trec_eval_s", "floor_s") + LFL_KEYS
# measured by the research-size section (run.py --only research --update-docs updates these alone)
RESEARCH_KEYS = ("research_date", "research_load", "robust_same", "compare", "dlhard_s", "trec_eval_s", "floor_s")


def readme_sentence(s: dict) -> str:
    """What the README says of speed, from the numbers of the benchmarks: each comparison names the
    measures both sides computed (the same measures on the same files, or a stated superset)."""
    return (f"measured on {s['date']} ({s['machine']}, load {s['load']}): a 7M-line run with nDCG@10, AP and RBP "
            f"and their {s['variants']} takes {s['numeric_time']:.2f}× the time of pytrec_eval computing "
            f"nDCG@10 and AP alone, and {s['numeric_rss']:.2f}× its memory ({s['string_time']:.2f}× the time "
            f"with string document ids); on {s['lfl_date']} ({s['lfl_cpu']}, load {s['lfl_load']}), with the same measures on "
            f"both sides, trec_eval's whole set (`--names trec -m all_trec`) on the 17 TREC 2003 Robust runs "
            f"takes {s['lfl_all_trec_wall']:.2f}× the time ({s['lfl_all_trec_cpu']:.2f}× the CPU time) of trec_eval "
            f"looped over the files, the default measures and variants {s['lfl_defaults_wall']:.2f}× "
            f"({s['lfl_defaults_cpu']:.2f}×) trec_eval's defaults, one 50-query DL-HARD run in a fresh process "
            f"{s['lfl_fresh_cpu']:.2f}× pytrec_eval's CPU time, and `ulnorm_eval.evaluate` on it "
            f"{s['lfl_library']:.2f}× `RelevanceEvaluator.evaluate`'s; `compare` on the 17 runs takes "
            f"{s['compare']:.2f}× `eval`'s time.")


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
