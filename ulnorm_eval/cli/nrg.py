"""``ulnorm-eval nrg``: a thin click layer over :func:`ulnorm_eval.nrg.evaluate_nrg` (Normalized Residual Gain (SIGIR-AP 2024))."""
from __future__ import annotations


import click

from .support import CONTEXT, output_view, outputs_checked, refusals, write_output
from ..render.format_names import RESULT_FORMATS
from .options import (allow_disjoint_option, make_options, measure_option, names_option,
                      ordering_options, output_options, parallel_options, per_query_option, record, run_queries_option)

EPILOG = """\b
Examples:
  ulnorm-eval nrg qrels new.run --prior a.run --prior b.run      new.run against a and b
  ulnorm-eval nrg --leave-one-out qrels runs/*.run               each run against all the others
  ulnorm-eval nrg --chronological qrels bm25 ance splade         each run against those before it
  ulnorm-eval nrg --group-by '^[a-z]+' qrels runs/*              against the best run of every other group
  ulnorm-eval nrg --unique -m P@10 --leave-one-out qrels runs/*  unique relevant contributions at depth 10
  ulnorm-eval nrg -m 'nDCG(dcg="exp-log2")@10' -m 'RBP(p=0.9)' ...

NRG is defined for nDCG, DCG, P, RBP and RR (Normalized Residual Gain (SIGIR-AP 2024) eq. 1; RR through App. A's C/W/L model); each is printed beside NRG(measure).
Exit codes: 0 ok, 2 usage or input error.
"""

@click.command("nrg", context_settings=CONTEXT, epilog=EPILOG)
@click.argument("qrels", type=click.Path(dir_okay=False))
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--prior", "priors", multiple=True, metavar="RUN", type=click.Path(dir_okay=False),
              help="A prior run (repeatable): in every run's prior set, not scored itself.")
@click.option("--leave-one-out", is_flag=True, help="Each RUN against all the other RUNs (Normalized Residual Gain (SIGIR-AP 2024) Fig. 1b).")
@click.option("--chronological", is_flag=True, help="Each RUN against the RUNs listed before it (Fig. 1a).")
@click.option("--group-by", metavar="REGEX",
              help="Group runs by REGEX over their names (first capture group, else the match); each RUN "
                   "against the best run of every other group (Normalized Residual Gain (SIGIR-AP 2024) §4).")
@click.option("--best-by", metavar="MEASURE", help="Measure that picks a group's best run (default: the first -m).")
@click.option("--unique", is_flag=True,
              help="Unique relevant contributions UC(P@K) instead of NRG: relevant documents in the top K "
                   "that no prior run has in its top K (Normalized Residual Gain (SIGIR-AP 2024) App. B). Default measure P@10.")
@measure_option("Measure (repeatable): nDCG[@k], DCG[@k], P@k, RBP(p=..)[@k], RR[@k], or NRG(...)/UC(P@k). "
                "Default: nDCG@10.")
@per_query_option
@ordering_options
@run_queries_option
@names_option
@parallel_options
@output_options(RESULT_FORMATS, "trec")
@allow_disjoint_option
def nrg_cmd(**options):
    """Normalized Residual Gain: score RUNs with a measure and its NRG against prior runs (SIGIR-AP 2024).

    A document's gain is reduced by every prior run that ranks it within the measure's cutoff,
    by the measure's own browsing model: G(d) prod_j (1 - seen(rank of d in run j)).  Without prior
    runs NRG would equal the measure: they are required (--prior or a protocol).
    """
    from ..analysis.nrg import NRGError, NRGUsageError, nrg_for_request
    from ..render.formats import FORMATS

    request = nrg_request(options)
    with refusals(NRGError, usage=NRGUsageError) as notes:
        res = nrg_for_request(request, notes)
        view = output_view(options, FORMATS, "trec")
        text = FORMATS[view.fmt](res, per_query=view.per_query, names=view.names, precision=view.precision, **view.layout)
        if view.fmt == "trec":  # the runid lines are the runs' tags, as eval's (trec_eval's runid)
            from ..render.rows import shared_tags_note

            notes.extend(shared_tags_note(res.runs))
    write_output(text, options["output"])


PROTOCOL_FLAGS = {"leave_one_out": ("--leave-one-out", "leave-one-out"),
                  "chronological": ("--chronological", "chronological"), "group_by": ("--group-by", "group")}


def nrg_request(opts: dict):
    """`nrg`'s options -> analysis.nrg.NRGRequest, refusing (click's usage error) what contradicts
    itself before any input is read; -o never names an input."""
    from ..analysis.nrg import NRGRequest
    from ..pipeline.blocks import Options
    from ..render.files import View

    outputs_checked()
    chosen = [(flag, protocol) for key, (flag, protocol) in PROTOCOL_FLAGS.items() if opts[key] not in (None, False)]
    if len(chosen) > 1:
        raise click.UsageError(f"{' and '.join(flag for flag, _ in chosen)} exclude each other")
    if opts["best_by"] and opts["group_by"] is None:
        raise click.UsageError("--best-by needs --group-by")
    return record(NRGRequest, opts, (Options, View, *PROTOCOL_FLAGS), measures=list(opts["measures"]) or None,
                  protocol=chosen[0][1] if chosen else "fixed", options=make_options(opts))
