"""``--trec``: ulnorm-eval as a drop-in for trec_eval 10 (``ulnorm-eval --trec [trec_eval's flags] QRELS
RUN``): trec_eval's names, layout, default measures, query set, reading of grades and -l, rule for a
measure given twice, and its -nan values (docs/trec_eval.md).  Only click is imported.
"""
from __future__ import annotations

import contextlib

import click

DEFAULT_MEASURES = ("official",)  # trec_eval 10 without -m (its usage line: "'-m official' is default")


def trec_measure_names(measures) -> tuple[list, list]:
    """trec_eval's reading of repeated ``-m``: the first parameters given for a measure win, a later
    ``-m`` of the same measure with other parameters is ignored, and a bare ``-m P`` only asks for a
    measure that another ``-m P.5`` already parameterises (``-m P -m P.5`` prints P_5 alone).  Returns
    the names kept and one note per name dropped (trec_eval drops them without a word)."""
    from ..core.registry import TREC_NAMES

    names = list(measures) or list(DEFAULT_MEASURES)
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


def refuse_variants(names: list) -> None:
    """A variant named by -m (``UL2(AP)``, ``ul2_map``) is refused as ``--norm`` is: trec_eval has none."""
    from ..core.registry import UnknownMeasure, parse

    for name in names:
        try:
            variant = parse(name).variant
        except (UnknownMeasure, ValueError):
            continue  # trec_eval's own names with parameters (P.5,10) are read later, and errors said there
        if variant:
            raise click.UsageError(f"--trec prints trec_eval's lines, which have no variants: leave out -m {name}")


SHARED_GAINS = ("dcg", "ideal_dcg", "ndcg")  # one static parameter table in trec_eval 10's m_ndcg.c


def refuse_gains(names: list) -> None:
    """Gain maps trec_eval 10 reads otherwise than as grades: one with a level below 0 (a code), and
    different ones for dcg, ideal_dcg and ndcg, which read one parameter table (m_ndcg.c), so a gain map
    given to one applies to the others (``-m dcg.1=3 -m ndcg`` prints ``ndcg_1=3``) under names that
    need not say so."""
    from ..core.registry import NICKNAME_MEASURES, TREC_NAMES

    given = {}
    for name in names:
        base, _, arg = name.strip().partition(".")
        if base in TREC_NAMES and TREC_NAMES[base][1].arg == "map" and any(
                pair.startswith("-") for pair in arg.split(",")):
            raise click.UsageError(f"-m {name.strip()}: a level below 0 is not a grade to trec_eval 10 but its code for a "
                                   "document not in the qrels (-1) or judged below 0 (-2), which then gains that value, "
                                   "as does the placeholder -c ranks for a query without results; --trec does not "
                                   "reproduce it")
        for member in (base,) if base in SHARED_GAINS else [m for m in NICKNAME_MEASURES.get(base, ()) if m in SHARED_GAINS]:
            given.setdefault(member, arg)
    if len(set(given.values())) > 1:
        shown = ", ".join(f"-m {m}{'.' + a if a else ''}" for m, a in given.items())
        raise click.UsageError(f"{shown}: trec_eval 10's dcg, ideal_dcg and ndcg share one table of gains "
                               "(m_ndcg.c), so each would take the others' gains; --trec does not reproduce that: "
                               "give them the same gains, or evaluate them in separate calls")


def trec_settings(options: dict) -> tuple[dict, list]:
    """eval's options with those ``--trec`` sets, and its notes (said on success); click's usage error for
    what would change trec_eval's lines."""
    variants, fmt, ties, precision = options["variants"], options["fmt"], options["ties"], options["precision"]
    named = click.get_current_context().get_parameter_source("names").name == "COMMANDLINE"
    for given, why in ((variants and f"--norm {','.join(variants)}", "prints trec_eval's lines, which have no variants"),
                       (fmt not in (None, "trec") and f"-f {fmt}", "prints trec_eval's lines (-f trec)"),
                       (named and options["names"] == "canonical" and "--names canonical", "prints trec_eval's measure names"),
                       ((options["holes"] or options["holes_samples"]) and "--holes and --holes-samples",
                        "prints trec_eval's lines"),  # --ties: no trec_eval orders by rank or file (9 by float32 scores)
                       (ties != "score" and f"--ties {ties}", "orders runs as trec_eval does (score, then docid descending)")):
        if given:
            raise click.UsageError(f"--trec {why}: leave out {given}")
    kept, notes = trec_measure_names(options["measures"])
    refuse_variants(kept)
    refuse_gains(kept)
    level, text = options["rel_level"], click.get_current_context().meta.get("rel_level_text")
    if text is not None:
        from ..inputs.trec import atol

        if atol(text) != level:
            notes.append(f"-l {text} read as -l {atol(text)}, as trec_eval reads it (C's atol: the leading digits)")
        level = atol(text)
    return {**options, "measures": tuple(kept), "variants": (), "names": "trec", "fmt": "trec", "trec_nan": True,
            "rel_level": level, "precision": 4 if precision is None else precision,
            # without -c trec_eval 10 evaluates the run's queries and exits 4 at a qrels query with
            # none: every qrels query is evaluated here, then cut there (stops_as_trec_eval)
            "strict_queries": not options["complete"] and not options["run_queries_only"]}, notes


@contextlib.contextmanager
def stops_as_trec_eval(view):
    """trec_eval 10 without -c exits (4) at the first qrels query a run has no results for, after the -q
    lines of the queries before it (qid byte order); ``--trec`` writes those bytes (``view``: eval's
    render.files.View) and the reason, and exits 4 too."""
    from ..analysis.eval_request import StoppedAtQuery

    try:
        yield
    except StoppedAtQuery as stop:
        from ..render.rows import format_trec
        from .support import fail, write_output

        write_output(format_trec(stop.result, view.per_query, "trec", view.precision, until=stop.qid), view.output)
        fail(str(stop), 4)
