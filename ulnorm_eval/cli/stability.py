"""`ulnorm-eval stability` (Kanoulas & Aslam 2009): options -> StabilityRequest -> stability_for_request ->
render.stability_report."""
from __future__ import annotations

import click

from ..render.format_names import DATA_FRAME_FORMATS
from .support import CONTEXT, output_format, outputs_checked, refusals, table_list
from .options import (MAX_DRAWS, MAX_TRIALS, choice, measure_option, no_progress_option, output_options, plot_option,
                      record, seed_option, ties_option)
from .types import CommaList, FiniteFloat

EPILOG = """\b
Examples:
  ulnorm-eval stability qrels runs/*                        nDCG@100: named and optimal functions
  ulnorm-eval stability --topics 601-650 -k 100 --phi 0.9 qrels runs/*
  ulnorm-eval stability -k 3,10,20,100,200 --unconstrained=gains -m nDCG -m 'UL2(nDCG)' qrels runs/*
  ulnorm-eval stability -f json -o stability.json --plot stability.png qrels runs/*

Rows: the discount functions (Zipfian, linear, log, optimal) with the --gain gains; the gain functions
(linear, exponential, optimal) with the --discount discount; the joint optimum of both.  Φ and Eρ²
are projected to --at-topics topics (default: the topics evaluated); 'topics Φ>=P' is the fewest
topics giving Φ >= P for each --phi target P.  See docs/stability.md.
Exit codes: 0 ok, 2 usage or input error.
"""


@click.command("stability", context_settings=CONTEXT, epilog=EPILOG)
@click.argument("qrels", type=click.Path(dir_okay=False))
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("-k", "--cutoff", "cutoffs", type=CommaList(click.IntRange(min=1)), default="100", show_default=True,
              metavar="K[,K...]",
              help="Cutoff rank(s) of nDCG@k; the paper's Tables 1 and 3 use 100, Table 2 3,10,20,100,200.")
@measure_option("nDCG (default), DCG, or a variant of them: UL1, UL2 (alias UE1, UE2), EM, EB, MM, UEW, "
                "e.g. 'UL2(nDCG)'. Repeatable.")
@click.option("--phi", "phi_targets", type=CommaList(FiniteFloat(0, 1, min_open=True, max_open=True)), default="0.95",
              show_default=True, metavar="P[,P...]",
              help="Target Φ of the 'topics' columns, one column per P (Table 1's caption says 0.95, its text 0.9).")
@click.option("--at-topics", type=click.IntRange(min=1), metavar="N",
              help="Topics Φ and Eρ² are projected to (default: the topics evaluated).")
@click.option("--topics", metavar="LIST", help="Evaluate only these qrels topics: ids and ranges, e.g. 601-650.")
@choice("--gain", "linear exponential", help="Gains of the discount rows (the paper: linear).")
@choice("--discount", "log zipf linear", help="Discount of the gain rows (the paper: log).")
@click.option("--unconstrained", type=click.Choice(["none", "gains", "discount", "both"]), default="none",
              is_flag=False, flag_value="both", show_default=True,
              help="Also optimise without monotonicity: --unconstrained=gains (Table 2's first column), "
                   "=discount (Figure 3; slow for large k) or =both (the bare flag).")
@click.option("--restarts", type=click.IntRange(0, 1000), default=3, show_default=True,
              help="Seeded random starts of every optimiser, besides the named functions; at most 1,000.")
@seed_option
@ties_option
@output_options(DATA_FRAME_FORMATS, "tsv")
@plot_option("Draw discount curves (Figure 2 style) and Φ against topics (Figure 4 style), and the ASL "
             "curves (Figure 9) with --table asl; needs matplotlib.")
@click.option("--table", "tables", default="functions", show_default=True, metavar="LIST",
              help="Tables to print, comma-separated: functions (Φ, topics needed, the optima), tau (Kendall's τ "
                   "between the system rankings under every two functions, Table 4), asl (Sakai's bootstrap ASL of "
                   "every pair of runs under four functions, Figure 9), paired (topics needed by every function "
                   "over the log discount's, and by every variant over the first measure's, with paired "
                   "--topic-bootstrap intervals), or all.")
@click.option("--reps", type=click.IntRange(10, MAX_DRAWS), default=1000, show_default=True,
              help="Bootstrap resamples of the ASL table (Sakai 2006; the paper: 1000); at most 1,000,000.")
@click.option("--topic-bootstrap", type=click.IntRange(0, MAX_TRIALS), default=0, show_default=True, metavar="N",
              help="Resample the topics N times (seeded by --seed, the same for every function): adds the 2.5 "
                   "and 97.5 percentiles of each 'topics Φ>=P' column; --table paired compares functions and "
                   "measures on these resamples; at most 100,000.")
@click.option("--holdout", type=click.IntRange(0, MAX_TRIALS), default=0, show_default=True, metavar="N",
              help="N seeded random half splits of the topics: fit every function on one half, and report Φ "
                   "(at --at-topics) on that half and on the other, the held-out one: mean and 2.5/97.5 "
                   "percentiles over the splits; at most 100,000.")
@no_progress_option
def stability_cmd(**options):
    """Stability-optimal gains and discounts of nDCG@k (Kanoulas & Aslam 2009): Φ, Eρ² and topics needed
    for the named functions and for the SLSQP optima, which are printed as pasteable measures."""
    from ..analysis.stability import stability_for_request
    from ..render.files import write_all
    from ..render.stability_report import stability_outputs

    outputs_checked()
    with refusals(ValueError) as notes:
        request = stability_request(options)
        outcome = stability_for_request(request, notes)
    options["fmt"] = output_format(options["fmt"], options["output"], DATA_FRAME_FORMATS, "tsv")
    write_all(stability_outputs(outcome, request, options))


def stability_request(opts: dict):
    """`stability`'s options -> analysis.stability.StabilityRequest, refusing (click's usage error) what
    contradicts itself before any input is read."""
    if len(opts["runs"]) < 2:
        raise click.UsageError("stability needs at least two runs (systems)")
    chosen = table_list(opts["tables"], TABLES)
    if "paired" in chosen and not opts["topic_bootstrap"]:
        if "paired" in opts["tables"].lower():
            raise click.UsageError("--table paired needs --topic-bootstrap N (the paired resamples)")
        chosen.remove("paired")  # 'all' without resamples: the tables that need none
    from ..analysis import stability as st
    from ..render import progress  # the command line's bar (shown on a terminal)
    from ..render.files import View

    specs = list(dict.fromkeys(st.parse_measure(text) for text in (opts["measures"] or ("nDCG",))))
    keys = "gain discount unconstrained restarts seed at_topics topic_bootstrap holdout"
    return record(st.StabilityRequest, opts, (View, keys, "measures no_progress"), runs=tuple(opts["runs"]), specs=specs,
                  tables=tuple(chosen), study={key: opts[key] for key in keys.split()}, progress=None if opts["no_progress"] else progress)


TABLES = ("functions", "tau", "asl", "paired")
