"""``--trec``: ulnorm-eval as a drop-in for trec_eval 10 (``ulnorm-eval --trec [trec_eval's flags] QRELS RUN``).

The flag fixes what differs from trec_eval's defaults (docs/trec_eval.md): measure names and layout
(``--names trec``), no variants (``--norm none``), trec_eval's default measure set (``-m official``)
when no ``-m`` is given, the trec format, trec_eval's query set (without ``-c`` the queries of the
run; trec_eval 10 stops when a qrels query has no results, and so does ``--trec``), and trec_eval's
rule for a measure given twice (the first parameters win), and trec_eval's -nan values and -c placeholder
(``--trec-nan``).  Only click is imported.
"""
from __future__ import annotations

import click

from .support import split_names

DEFAULT_MEASURES = ("official",)  # trec_eval 10 without -m (its usage line: "'-m official' is default")


def trec_measure_names(measures) -> tuple[list, list]:
    """trec_eval's reading of repeated ``-m``: the first parameters given for a measure win, a later
    ``-m`` of the same measure with other parameters is ignored, and a bare ``-m P`` only asks for a
    measure that another ``-m P.5`` already parameterises (``-m P -m P.5`` prints P_5 alone).  Returns
    the names kept and one note per name dropped (trec_eval drops them without a word)."""
    from ..core.registry import TREC_NAMES

    names = split_names(measures) or list(DEFAULT_MEASURES)
    first: dict = {}
    for n in names:
        base, dot, arg = n.strip().partition(".")
        if dot and base in TREC_NAMES:
            first.setdefault(base, arg)
    kept, notes = [], []
    for n in names:
        base, dot, arg = n.strip().partition(".")
        if base not in TREC_NAMES or base not in first:
            kept.append(n)
        elif not dot:
            continue  # the parameterised -m of the same measure says which values
        elif arg == first[base]:
            if n not in kept:
                kept.append(n)
        else:
            notes.append(f"-m {n.strip()} ignored: {base} is already given as -m {base}.{first[base]} "
                         "(trec_eval keeps the first)")
    return kept, notes


def trec_settings(options: dict) -> dict:
    """The eval options ``--trec`` sets, from the ones given (eval's option dict: measures, norm,
    names, fmt, precision, complete, run_queries_only, holes, holes_samples, ties); refuses what would
    change trec_eval's lines."""
    norm, fmt, names, precision = options["norm"], options["fmt"], options["names"], options["precision"]
    if norm is not None and norm.strip().lower() not in ("none", "plain"):
        raise click.UsageError(f"--trec prints trec_eval's lines, which have no variants: leave out --norm {norm}")
    if fmt not in (None, "trec"):
        raise click.UsageError(f"--trec prints trec_eval's lines (-f trec): leave out -f {fmt}")
    if names == "canonical" and click.get_current_context().get_parameter_source("names").name == "COMMANDLINE":
        raise click.UsageError("--trec prints trec_eval's measure names: leave out --names canonical")
    if options["holes"] or options["holes_samples"]:
        raise click.UsageError("--trec prints trec_eval's lines: leave out --holes and --holes-samples")
    ties = options.get("ties", "score")
    if ties != "score":  # no trec_eval orders by the rank column or the file (--score-precision: trec_eval 9's)
        raise click.UsageError(f"--trec orders runs as trec_eval does (score, then docid descending): leave out "
                               f"--ties {ties}")
    kept, notes = trec_measure_names(options["measures"])
    return {"measures": tuple(kept), "norm": "none", "names": "trec", "fmt": "trec", "trec_nan": True,
            "precision": 4 if precision is None else precision,
            # without -c trec_eval 10 evaluates the run's queries and stops when a qrels query has
            # none: every qrels query is evaluated here and one with no results is refused after
            "strict_queries": not options["complete"] and not options["run_queries_only"], "notes": notes}
