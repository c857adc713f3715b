"""`ulnorm-eval compare`, `queries` and `swaps`: thin click commands over analysis.compare and
analysis.query_types (only click at module level: `--help` stays instant)."""
from __future__ import annotations


import click

from ..core.variants import BOUND_VARIANTS, DEFAULT_VARIANTS, variant_names
from .support import CONTEXT, fail, output_format, output_view, outputs_checked, refusals, table_list, write_output
from ..render.format_names import DATA_FRAME_FORMATS, FRAME_FORMATS
from .types import ALPHA, FINITE, FiniteFloat

from .options import (MAX_DRAWS, MAX_TRIALS, Brief, HolesCommand, allow_disjoint_option, bounds_options, bundle,
                      choice, groups_option, holes_option, holes_options, make_options, measure_option,
                      no_progress_option, norm_option, notes_option, ordering_options, output_options, parallel_options,
                      plot_option, record, seed_option)

TABLES = ("pairs", "systems", "summary")
COMPARED = ",".join(name for name in DEFAULT_VARIANTS if name not in BOUND_VARIANTS).lower()  # analysis.compare's


def _table_help() -> str:
    """--table's help: every column's line (render/legends.py, the one definition)."""
    from ..render.legends import COLUMNS, SYSTEMS_CELL

    pairs = "; ".join(f"{column}: {description}" for column, description in COLUMNS["pairs"].items() if column != "metric")
    summary = "; ".join(f"{column}: {description}" for column, description in COLUMNS["summary"].items() if column not in ("metric", "measure", "variant"))
    return (f"pairs, a row per metric and pair of runs: {pairs}.  systems: a row per run, a column per metric, "
            f"{SYSTEMS_CELL}.  summary, a row per metric: {summary}.")


COMPARE_EPILOG = """\b
Examples:
  ulnorm-eval compare qrels run1 run2 run3                 nDCG@10, AP, RBP against EM
  ulnorm-eval compare -m nDCG@10 -m AP --test bootstrap qrels runs/*
  ulnorm-eval compare --subset uninformative --subset-size 50 qrels runs/*
  ulnorm-eval compare -f tsv --table pairs --correction bh qrels runs/* > pairs.tsv
  ulnorm-eval compare --plot compare.png qrels runs/*
  ulnorm-eval compare -f latex -m nDCG@10 --norm ul2 qrels runs/* > table.tex    a table for a paper
  ulnorm-eval compare -f markdown --baseline runs/bm25 qrels runs/*          marks against a baseline
"""

QUERIES_EPILOG = """\b
Examples:
  ulnorm-eval queries qrels runs/*                         pool, relevant, E, IUB, WLB, the runs' mean
                                                           and the query type, per query and measure
  ulnorm-eval queries -m nDCG@10 -m AP qrels runs/*        for these measures
  ulnorm-eval queries --ideal-gap 0.4 --plot queries.png qrels runs/*
"""


def _eval_options(command, formats=DATA_FRAME_FORMATS, note=""):
    """The evaluation options that change a number (as in `eval`), and the output options."""
    return bundle(
        measure_option(), ordering_options, bounds_options, groups_option, parallel_options,
        output_options(list(formats), "tsv", note), plot_option(), allow_disjoint_option, notes_option,
    )(command)


@click.command("compare", cls=HolesCommand, context_settings=CONTEXT, epilog=COMPARE_EPILOG)
@click.argument("qrels", type=click.Path(dir_okay=False))
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False))
@norm_option(f"Variants compared with each measure, comma-separated ({variant_names(('ratio', 'distribution'))}).  "
             f"Default: {COMPARED} (eval's, E left out) for the measures with a closed-form E; measures whose E is a Monte "
             "Carlo estimate (IPrec, 11pt_avg, G, ...) get variants only from an explicit --norm or by name.",
             f"Variants compared with each measure (ul1, ul2, mm, ...) or none.  Default {COMPARED}.")
@choice("--test", "t wilcoxon randomization bootstrap tukey", cls=Brief, brief="Paired test: t (default), wilcoxon, "
        "randomization, bootstrap or tukey (Tukey HSD, adjusted for every pair).",
        help="Paired test: Student's t, Wilcoxon's signed-rank, Fisher's randomization, Sakai's bootstrap, or the "
             "randomised Tukey HSD over all runs at once, whose p-values are adjusted for every pair (--correction "
             "does not apply; docs/comparing.md).")
@click.option("--reps", type=click.IntRange(min=10, max=MAX_DRAWS),
              help="Sign flips (randomization, default 10000), resamples (bootstrap, default 1000) or permutations "
                   "(tukey, default 10000; every one when they fit); at most 1,000,000 (memory grows with them).")
@choice("--correction", "none bonferroni holm bh", default="holm", cls=Brief,
        brief="Multiple-comparison correction over each metric's pairs (default holm).",
        help="Multiple-comparison correction over the pairs of each metric.")
@click.option("--alpha", type=ALPHA, default=0.05, cls=Brief, brief="Significance level (default 0.05).",
              show_default=True, help="Significance level of the corrected p-values.")
@choice("--subset", "all uninformative ideal",
        help="Query set (Karmaker & Feng 2022 §4.4): runs' mean closest to E, or farthest above it.")
@click.option("--subset-size", type=click.IntRange(min=1), help="Queries in the subset (default: half).")
@click.option("--swap-trials", type=click.IntRange(min=1, max=MAX_TRIALS), default=1000, show_default=True,
              help="Random split halves for the swap rate; at most 100,000 (memory grows with them).")
@click.option("--phi-target", type=FiniteFloat(0, 1, min_open=True, max_open=True), default=0.95,
              show_default=True, help="Φ the 'topics needed' column aims at (Kanoulas & Aslam 2009).")
@click.option("--swap-between", nargs=2, metavar="SET SET",
              help="Also the swap rate between the runs' rankings on two query sets (Karmaker & Feng 2022 "
                   "Tables 11, 21): each SET is all, uninformative, ideal (--subset-size queries) or a file "
                   "of query ids, one per line.")
@click.option("--table", "tables", default="pairs,systems,summary", show_default=True, metavar="LIST", cls=Brief,
              brief="Tables, comma-separated: pairs, systems, summary (the default: all three), or all.",
              help="Tables to print, comma-separated, in that order: pairs, systems, summary, or all.  "
                   + _table_help() + "  tsv and csv print each table with its header, several separated by a blank "
                   "line (awk -v RS= 'NR == 2' takes the second).  -f table prints these lines under each table.")
@click.option("--baseline", metavar="RUN", cls=Brief, brief="Test every run against RUN only (one of RUNS).",
              help="Test every run against RUN only (one of RUNS, by path or run name): the pairs table holds "
                   "the pairs (run, RUN), oriented run - RUN, corrected over them (and is printed in every "
                   "format); -f latex/markdown mark significance against RUN instead of between every pair.")
@no_progress_option
@holes_options
@seed_option
@lambda f: _eval_options(f, FRAME_FORMATS,
                         "  latex and markdown: the systems x metrics table for a paper (best per column "
                         "in bold, significance as superscripts; --table is ignored).")
def compare_cmd(**options):
    """Compare RUNS on QRELS under every measure and variant: ranks, Kendall's tau, paired tests,
    discriminative power, conflicts, PAD, the split-half swap rate and stability (Φ).

    The papers' significance setting (Karmaker & Feng 2022: Student's t-test, α = 0.05, no correction)
    is --correction none; every table names the test and correction it used."""
    from ..analysis.compare import compare_for_request
    from ..render.compare_report import compare_outputs
    from ..render.files import write_all

    view = compare_view(options)
    request = compare_request(options, view)
    with refusals(ValueError) as notes:
        outputs = compare_outputs(compare_for_request(request, notes), request, view)
    write_all(outputs)


def compare_view(opts: dict):
    """`compare`'s output options -> a render.files.View, after the checks that need no
    input (click's usage errors); -o/--plot never name an input."""
    from ..analysis.compare import SUBSET_SETS
    from ..render.frames import FRAME_FORMATS

    outputs_checked(query_sets=[query_set for query_set in opts["swap_between"] or () if query_set not in SUBSET_SETS])
    if len(opts["runs"]) < 2:
        raise click.UsageError("compare needs at least two runs")
    if opts["holes"] and opts["holes"][1] is not None:
        raise click.UsageError(f"--holes {opts['holes'][1]}: compare has no gate to fail or warn; its pairs table says "
                               "which pairs the holes could reverse (holes_overlap).  Give only the world: "
                               "closed, open, open=N or open=P%")
    # -o table.tex: a paper table, as -f latex
    return output_view(opts, FRAME_FORMATS, "tsv", tables=tuple(table_list(opts["tables"], TABLES)))


def compare_request(given: dict, view):
    """`compare`'s options -> analysis.compare.CompareRequest, refusing what names a run or a size
    wrongly before any run is read (an evaluation of minutes must not end in a usage error)."""
    from ..analysis.compare import CompareRequest
    from ..pipeline.blocks import Options
    from ..render.files import View

    if given["baseline"] is not None and "-" not in given["runs"]:  # the names are the files' (a run on stdin names itself)
        from ..analysis.compare import baseline_run_name
        from ..inputs.checks import unique_names
        from ..inputs.trec import file_run_name

        try:  # one of the RUN paths or a run name
            baseline_run_name(given["baseline"], given["runs"], unique_names([file_run_name(path) for path in given["runs"]]))
        except ValueError as exc:
            fail(str(exc))
    if given["subset_size"] is not None and given["subset"] == "all" and not given["swap_between"]:
        raise click.UsageError(f"--subset-size {given['subset_size']}: needs --subset uninformative or ideal (or "
                               "--swap-between); --subset all takes every query")
    from ..render import progress  # the command line's bars (shown on a terminal)

    keys = "test reps seed correction alpha subset subset_size swap_trials phi_target"
    return record(CompareRequest, given, (Options, View, keys, "no_progress"), runs=tuple(given["runs"]),
                  measures=given["measures"] or None, options=make_options(given), holes=bool(given["holes"]),
                  holes_bootstrap=bool(given["holes"] and given["holes_samples"]),
                  pairs="pairs" in view.tables or view.paper or given["plot"] is not None or given["baseline"] is not None,
                  compare={key: given[key] for key in keys.split()}, progress=None if given["no_progress"] else progress)


@click.command("queries", cls=HolesCommand, context_settings=CONTEXT, epilog=QUERIES_EPILOG)
@click.argument("qrels", type=click.Path(dir_okay=False))
@click.argument("runs", nargs=-1, type=click.Path(dir_okay=False))  # at least one: checked with a clear message
@click.option("--informative-gap", type=FINITE, default=0.2, show_default=True, cls=Brief,
              brief="(A - E)/IUB at or above this: informative (default 0.2).",
              help="(A - E)/IUB at or above this: informative.")
@click.option("--ideal-gap", type=FINITE, default=0.5, show_default=True, cls=Brief,
              brief="(A - E)/IUB at or above this: ideal (default 0.5).",
              help="(A - E)/IUB at or above this: ideal.")
@click.option("--hard-below", type=FINITE, default=0.1, show_default=True,
              help="Otherwise, A/IUB and E/IUB both at or below this: hard.")
@click.option("--easy-above", type=FINITE, default=0.5, show_default=True,
              help="Otherwise, A/IUB and E/IUB both at or above this: easy.")
@holes_option
@seed_option
@_eval_options
def queries_cmd(**given):
    """Per query of QRELS: pool size, relevant documents, E, IUB and WLB of each measure, the RUNS'
    mean score and the query type of Karmaker & Feng 2022 §3.3 (ideal, informative, uninformative,
    hard, easy; thresholds on scores divided by IUB: docs/comparing.md, "Query types")."""
    from ..analysis.query_types import queries_for_request, query_points
    from ..render.plots import plot_queries

    outputs_checked()
    if not given["runs"]:
        raise click.UsageError("queries needs at least one RUN: the mean, gap and query type come from "
                               "the runs' scores")
    with refusals(ValueError) as notes:
        request = queries_request(given)
        table = queries_for_request(request, notes)
    meta = {"qrels": str(given["qrels"]), "run_files": list(given["runs"]), "thresholds": vars(request.thresholds),
            "pool": given["pool"]}
    picture = plot_queries(query_points(table), given["plot"], request.thresholds) if given["plot"] else None
    _emit({"queries": table}, given["fmt"], given["precision"], given["output"], meta, picture)


def queries_request(given: dict):
    """`queries`' options -> analysis.query_types.QueriesRequest (ValueError: thresholds out of order)."""
    from ..analysis.query_types import QueriesRequest, Thresholds
    from ..pipeline.blocks import Options
    from ..render.files import View

    thresholds = record(Thresholds, given)
    return record(QueriesRequest, given, (Options, View, Thresholds), runs=tuple(given["runs"]), measures=given["measures"] or None,
                  options=make_options(given), thresholds=thresholds, holes=bool(given["holes"]))


SWAPS_EPILOG = """\b
Examples:
  ulnorm-eval compare -f tsv --table systems -m nDCG@10 qrels-a runs-a/* > a.tsv
  ulnorm-eval compare -f tsv --table systems -m nDCG@10 qrels-b runs-b/* > b.tsv
  ulnorm-eval swaps a.tsv b.tsv          the share of run pairs the two datasets order oppositely
"""


@click.command("swaps", context_settings=CONTEXT, epilog=SWAPS_EPILOG)
@click.argument("systems_a", type=click.Path(dir_okay=False))
@click.argument("systems_b", type=click.Path(dir_okay=False))
@bundle(output_options(DATA_FRAME_FORMATS, "tsv"))
def swaps_cmd(systems_a, systems_b, fmt, precision, output):
    """Swap rate between two experiments on the same runs (two datasets, two query sets): per metric,
    the share of run pairs that SYSTEMS_A and SYSTEMS_B order oppositely (Karmaker & Feng 2022
    Tables 10, 20).  Each file is a systems table written by `compare --table systems` (tsv, csv or
    json); runs are matched by name, metrics in only one file are counted and skipped."""
    from ..analysis.compare import swap_between_tables
    from ..inputs.tables import read_systems

    outputs_checked()
    with refusals(ValueError) as notes:
        systems_first, systems_second = read_systems(systems_a), read_systems(systems_b)
        table = swap_between_tables(systems_first, systems_second)
        only = len(set(systems_first) ^ set(systems_second))
        notes += [f"{only} metrics in only one of the two tables are skipped"] if only else []
    _emit({"swaps": table}, fmt, precision, output, {"systems_a": systems_a, "systems_b": systems_b})


# --------------------------------------------------------------------------- rendering

def _emit(frames: dict, fmt, precision, output, meta, picture=None) -> None:
    """queries' and swaps' table in the format asked for, or the one -o's extension implies among
    their -f choices (DATA_FRAME_FORMATS: no paper table, so -o x.md is tsv, with a note)."""
    from ..render.frames import render

    fmt = output_format(fmt, output, DATA_FRAME_FORMATS, "tsv")
    write_output(render(frames, fmt, precision, meta), output, picture)
