"""`ulnorm-eval stability` (Kanoulas & Aslam 2009): options -> StabilityRequest -> stability_for_request ->
render.stability_report."""
from __future__ import annotations

import click

from ..render.format_names import DATA_FRAME_FORMATS
from .support import CONTEXT, fail, flush, outputs_checked, plot_possible, safe, table_list
from .options import SEED, choice

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


class _OneLineErrors(click.Command):
    """Usage errors as one line `ulnorm-eval: reason` with exit code 2 (no usage banner)."""

    def parse_args(self, ctx, args):
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as exc:
            click.echo(f"ulnorm-eval: stability: {safe(exc.format_message())}", err=True)
            ctx.exit(2)


def _listed(text: str, flag: str, noun: str, read) -> list:
    """``flag``'s comma-separated values, each through ``read`` (ValueError naming a bad one), once each."""
    out = [read(part) for part in (piece.strip() for piece in text.split(",")) if part]
    if not out:
        raise ValueError(f"{flag}: no {noun} given")
    return list(dict.fromkeys(out))


def _cutoff(part: str) -> int:
    if not part.isdigit() or int(part) < 1:
        raise ValueError(f"-k: cutoff {part!r} is not a positive integer")
    return int(part)


def _target(part: str) -> float:
    try:
        piece = float(part)
    except ValueError:
        raise ValueError(f"--phi: {part!r} is not a number") from None
    if not 0 < piece < 1:
        raise ValueError(f"--phi: {part} must lie strictly between 0 and 1")
    return piece


@click.command("stability", cls=_OneLineErrors, context_settings=CONTEXT, epilog=EPILOG)
@click.argument("qrels", type=click.Path(dir_okay=False))
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("-k", "--cutoff", "cutoff", default="100", show_default=True, metavar="K[,K...]",
              help="Cutoff rank(s) of nDCG@k; the paper's Tables 1 and 3 use 100, Table 2 3,10,20,100,200.")
@click.option("-m", "--measure", "measures", multiple=True, metavar="NAME",
              help="nDCG (default), DCG, or a variant of them: UL1, UL2 (alias UE1, UE2), EM, EB, MM, UEW, "
                   "e.g. 'UL2(nDCG)'. Repeatable.")
@click.option("--phi", "phi_target", default="0.95", show_default=True, metavar="P[,P...]",
              help="Target Φ of the 'topics' columns, one column per P (Table 1's caption says 0.95, its text 0.9).")
@click.option("--at-topics", type=int, metavar="N",
              help="Topics Φ and Eρ² are projected to (default: the topics evaluated).")
@click.option("--topics", metavar="LIST", help="Evaluate only these qrels topics: ids and ranges, e.g. 601-650.")
@choice("--gain", "linear exponential", help="Gains of the discount rows (the paper: linear).")
@choice("--discount", "log zipf linear", help="Discount of the gain rows (the paper: log).")
@click.option("--unconstrained", type=click.Choice(["none", "gains", "discount", "both"]), default="none",
              is_flag=False, flag_value="both", show_default=True,
              help="Also optimise without monotonicity: --unconstrained=gains (Table 2's first column), "
                   "=discount (Figure 3; slow for large k) or =both (the bare flag).")
@click.option("--restarts", type=int, default=3, show_default=True,
              help="Seeded random starts of every optimiser, besides the named functions.")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed of the random starts.")
@choice("--ties", "score rank file",
        help="Run order: score desc then docid desc (trec_eval); the rank column; or file order.")
@click.option("-f", "--format", "fmt", type=click.Choice(DATA_FRAME_FORMATS),
              help="Output format. Default: table on a terminal, tsv when piped.")
@click.option("--precision", type=int, help="Decimals (default 4 for table; full precision otherwise).")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write to FILE (atomically) instead of stdout.")
@click.option("--plot", type=click.Path(dir_okay=False), metavar="FILE.png",
              help="Draw discount curves (Figure 2 style) and Φ against topics (Figure 4 style), and the ASL "
                   "curves (Figure 9) with --table asl; needs matplotlib.")
@click.option("--table", "tables", default="functions", show_default=True, metavar="LIST",
              help="Tables to print, comma-separated: functions (Φ, topics needed, the optima), tau (Kendall's τ "
                   "between the system rankings under every two functions, Table 4), asl (Sakai's bootstrap ASL of "
                   "every pair of runs under four functions, Figure 9), paired (topics needed by every function "
                   "over the log discount's, and by every variant over the first measure's, with paired "
                   "--topic-bootstrap intervals), or all.")
@click.option("--reps", type=int, default=1000, show_default=True,
              help="Bootstrap resamples of the ASL table (Sakai 2006; the paper: 1000).")
@click.option("--topic-bootstrap", type=int, default=0, show_default=True, metavar="N",
              help="Resample the topics N times (seeded by --seed, the same for every function): adds the 2.5 "
                   "and 97.5 percentiles of each 'topics Φ>=P' column; --table paired compares functions and "
                   "measures on these resamples.")
@click.option("--holdout", type=int, default=0, show_default=True, metavar="N",
              help="N seeded random half splits of the topics: fit every function on one half, and report Φ "
                   "(at --at-topics) on that half and on the other, the held-out one: mean and 2.5/97.5 "
                   "percentiles over the splits.")
@click.option("--no-progress", is_flag=True,
              help="No progress bar on stderr (the SLSQP starts of the optima, with the time left; shown on a "
                   "terminal, or with ULNORM_EVAL_PROGRESS=always).")
def stability_cmd(**options):
    """Stability-optimal gains and discounts of nDCG@k (Kanoulas & Aslam 2009): Φ, Eρ² and topics needed
    for the named functions and for the SLSQP optima, which are printed as pasteable measures."""
    from ..render.files import write_all

    outputs_checked()
    notes = []
    try:
        request = stability_request(options)
        from ..analysis.stability import stability_for_request
        from ..render.stability_report import stability_outputs

        outcome = stability_for_request(request, notes)
    except ValueError as exc:
        fail(str(exc))  # alone, as cli.support.refusals says an error
    flush(notes)
    write_all(stability_outputs(outcome, request, options))


def stability_request(opts: dict):
    """`stability`'s options -> analysis.stability.StabilityRequest; ValueError for a value out of range
    (checked before any input is read)."""
    from .options import MAX_DRAWS, MAX_TRIALS

    cutoffs = _listed(opts["cutoff"], "-k", "cutoff", _cutoff)
    targets = _listed(opts["phi_target"], "--phi", "target", _target)
    limits = [(opts["at_topics"] is not None and opts["at_topics"] < 1, "--at-topics must be at least 1"),
              (opts["restarts"] < 0, "--restarts must be at least 0"),
              (opts["precision"] is not None and not 0 <= opts["precision"] <= 17, "--precision must lie in 0..17"),
              (len(opts["runs"]) < 2, "stability needs at least two runs (systems)")]
    _refuse_first(limits)
    chosen = table_list(opts["tables"], TABLES)
    _refuse_first([(opts["reps"] < 10, "--reps must be at least 10"),
                   (opts["reps"] > MAX_DRAWS, f"--reps must be at most {MAX_DRAWS:,} (memory grows with it)"),
                   (opts["topic_bootstrap"] < 0, "--topic-bootstrap must be at least 0"),
                   (opts["topic_bootstrap"] > MAX_TRIALS,
                    f"--topic-bootstrap must be at most {MAX_TRIALS:,} (time and memory grow with it)")])
    if "paired" in chosen and not opts["topic_bootstrap"]:
        if "paired" in opts["tables"].lower():
            raise ValueError("--table paired needs --topic-bootstrap N (the paired resamples)")
        chosen.remove("paired")  # 'all' without resamples: the tables that need none
    _refuse_first([(opts["holdout"] < 0, "--holdout must be at least 0"),
                   (opts["holdout"] > MAX_TRIALS, f"--holdout must be at most {MAX_TRIALS:,} (time grows with it)"),
                   (opts["restarts"] > 1000, "--restarts must be at most 1,000 (time grows with it)")])
    plot_possible(opts["plot"], ValueError)
    from ..analysis import stability as st

    specs = list(dict.fromkeys(st.parse_measure(text) for text in (opts["measures"] or ("nDCG",))))
    keys = ("gain", "discount", "unconstrained", "restarts", "seed", "at_topics", "topic_bootstrap", "holdout")
    from ..render import progress  # the command line's bar (shown on a terminal)

    return st.StabilityRequest(qrels=opts["qrels"], runs=tuple(opts["runs"]), specs=specs, cutoffs=cutoffs, phi_targets=targets,
                               topics=opts["topics"], ties=opts["ties"],
                               tables=tuple(chosen), reps=opts["reps"], study={key: opts[key] for key in keys},
                               progress=None if opts["no_progress"] else progress)


def _refuse_first(limits) -> None:
    """ValueError with the message of the first (broken, message) pair that is broken."""
    for broken, message in limits:
        if broken:
            raise ValueError(message)


TABLES = ("functions", "tau", "asl", "paired")
