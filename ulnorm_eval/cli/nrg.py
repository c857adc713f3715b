"""``ulnorm-eval nrg``: a thin click layer over :func:`ulnorm_eval.nrg.evaluate_nrg` (Normalized Residual Gain (SIGIR-AP 2024))."""
from __future__ import annotations


import click

from .common import CONTEXT, fail, flush, output_format, write_output
from ..render.format_names import RESULT_FORMATS
from .types import NonEmpty

from .options import (allow_disjoint_option, check_parallel, make_options, ordering_options, output_options,
                      parallel_options, scheduler_timeout, run_queries_option)

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
@click.option("-m", "--measure", "measures", multiple=True, metavar="NAME", type=NonEmpty(),
              help="Measure (repeatable): nDCG[@k], DCG[@k], P@k, RBP(p=..)[@k], RR[@k], or NRG(...)/UC(P@k). "
                   "Default: nDCG@10.")
@click.option("-q", "--per-query", is_flag=True, help="Print per-query values before the mean ('all').")
@ordering_options
@run_queries_option
@click.option("--names", type=click.Choice(["canonical", "trec"]), default="canonical", show_default=True,
              help="Measure names: canonical (nDCG@10, NRG(nDCG@10)) or trec_eval's (ndcg_cut_10, nrg_ndcg_cut_10).")
@parallel_options
@output_options(RESULT_FORMATS, "trec")
@allow_disjoint_option
def nrg_cmd(qrels, runs, priors, leave_one_out, chronological, group_by, best_by, unique, measures, per_query,
            rel_level, depth, run_queries_only, ties, score_precision, names, jobs, scheduler, fmt, precision, output,
            allow_disjoint):
    """Normalized Residual Gain: score RUNs with a measure and its NRG against prior runs (SIGIR-AP 2024).

    A document's gain is reduced by every prior run that ranks it within the measure's cutoff,
    by the measure's own browsing model: G(d) prod_j (1 - seen(rank of d in run j)).  Without prior
    runs NRG would equal the measure: they are required (--prior or a protocol).
    """
    from ..render.files import check_outputs
    check_outputs(click.get_current_context().params)  # -o/--plot never an input; before reading
    from ..inputs.trec import InputError
    from ..core.registry import UnknownMeasure

    chosen = [n for n, on in (("--leave-one-out", leave_one_out), ("--chronological", chronological),
                              ("--group-by", group_by is not None)) if on]
    if len(chosen) > 1:
        raise click.UsageError(f"{' and '.join(chosen)} exclude each other")
    if best_by and group_by is None:
        raise click.UsageError("--best-by needs --group-by")
    if sum(r == "-" for r in (*runs, *priors)) > 1:
        raise click.UsageError("standard input ('-') can be given once")
    check_parallel(jobs, scheduler)
    protocol = {"--leave-one-out": "leave-one-out", "--chronological": "chronological",
                "--group-by": "group"}.get(chosen[0] if chosen else None, "fixed")

    warnings = []
    try:
        from ..pipeline import evaluate as api
        from ..analysis.nrg import NRGError, evaluate_nrg
        from ..render.formats import FORMATS
        from ..pipeline.parallel import ParallelError, executor

        opts = make_options(rel_level=rel_level, depth=depth, ties=ties, score_precision=score_precision,
                            run_queries_only=run_queries_only)
        names_ = [x for v in measures for x in v.split() if x] or None
        q = api.load_qrels(qrels)
        if q.skipped:
            warnings.append(f"{qrels}: skipped {q.skipped} comment or blank lines")
        from ..inputs.checks import require_finite
        from .runs import load_runs, require_finite_gains

        require_finite_gains(q, [n for n in (names_ or []) if not n.upper().startswith(("NRG(", "UC("))] or None,
                             qrels, rel_level)

        every = load_runs(q, [*runs, *priors], qrels, allow_disjoint)  # unique names across runs and priors
        # after the inputs are read (a bad file is named first): without prior runs NRG is the measure
        if protocol == "fixed" and not priors:
            from ..analysis.nrg import NO_PRIOR
            raise click.UsageError(NO_PRIOR)
        if protocol in ("leave-one-out", "group") and len(runs) < 2 and not priors:
            raise click.UsageError(f"{chosen[0]} needs at least two RUNs (one run has no other to be scored against)")
        with executor(q, jobs, scheduler, scheduler_timeout()) as ex:
            res = evaluate_nrg(q, every[:len(runs)], every[len(runs):], names_, protocol=protocol, group_by=group_by,
                               best_by=best_by, unique=unique, options=opts, warn=warnings.append, executor=ex)
        require_finite(res)
        fmt = output_format(fmt, output, FORMATS, "trec")
        from .common import table_layout
        text = FORMATS[fmt](res, per_query=per_query, names=names, precision=precision,
                            **(table_layout(output) if fmt == "table" else {}))
    except (InputError, UnknownMeasure, NRGError, ParallelError) as exc:
        flush(warnings)
        fail(str(exc))
    flush(warnings)
    write_output(text, output)
