"""``ulnorm-eval repro``: a thin click layer over :func:`ulnorm_eval.analysis.repro.repro_for_request`."""
from __future__ import annotations

import click

from ..render.format_names import DATA_FRAME_FORMATS
from .options import make_options, measure_option, ordering_options, output_options, record, summary_md_option
from .support import CONTEXT, output_view, outputs_checked, refusals, write_outputs_then
from .types import FiniteFloat

EPILOG = """\b
Examples:
  ulnorm-eval repro qrels original.run reproduced.run                  RMSE, KTU, RBO
  ulnorm-eval repro --baseline-pair bm25.orig bm25.repr qrels rm3.orig rm3.repr
                                                                       and ER, DeltaRI of rm3 over bm25
  ulnorm-eval repro --max-rmse 0.01 --min-ktu 0.9 --summary-md "$GITHUB_STEP_SUMMARY" qrels orig repr
                                                                       CI gate: exit 1 when not reproduced

QRELS comes first, as in every command.  Exit codes: 0 ok, 1 the --max-rmse/--min-ktu gate failed,
2 usage or input error.
"""


@click.command("repro", context_settings=CONTEXT, epilog=EPILOG)
@click.argument("qrels", type=click.Path(dir_okay=False))
@click.argument("original", type=click.Path(dir_okay=False))
@click.argument("reproduced", type=click.Path(dir_okay=False))
@click.option("--baseline-pair", nargs=2, metavar="B_ORIG B_REPR", type=click.Path(dir_okay=False),
              help="The baseline's original and reproduced runs: adds their RMSE, KTU and RBO, and the effect ratio "
                   "and DeltaRI of ORIGINAL over B_ORIG against REPRODUCED over B_REPR.")
@measure_option()
@click.option("--rank-depth", type=click.IntRange(min=1, max=100_000), default=1000, show_default=True,
              help="Documents of each topic's rankings that KTU and RBO compare (repro_eval's 1000).")
@click.option("--rbo-p", type=FiniteFloat(0, 1, min_open=True, max_open=True), default=0.95, show_default=True,
              help="RBO's persistence p (repro_eval's 0.95).")
@click.option("--max-rmse", type=FiniteFloat(min=0), metavar="X",
              help="CI gate: exit 1 when a pair's RMSE of a measure is above X.")
@click.option("--min-ktu", type=FiniteFloat(-1, 1), metavar="Y", help="CI gate: exit 1 when a pair's KTU is below Y.")
@summary_md_option
@ordering_options
@output_options(DATA_FRAME_FORMATS, "tsv")
def repro_cmd(**options):
    """How far REPRODUCED reproduces ORIGINAL (Breuer et al. 2020, as repro_eval computes it): per measure
    the RMSE over the topics, per pair of runs Kendall's tau Union and RBO of the topics' rankings, and
    with --baseline-pair the effect ratio (ER) and delta relative improvement (DeltaRI)."""
    from ..analysis.repro import ReproRequest, repro_for_request
    from ..pipeline.blocks import Options
    from ..render.files import View
    from ..render.repro_report import repro_outputs, repro_verdict

    outputs_checked()
    view = output_view(options, DATA_FRAME_FORMATS, "tsv")
    request = record(ReproRequest, options, (Options, View, "baseline_pair rank_depth"), baseline=options["baseline_pair"],
                     measures=options["measures"] or None, options=make_options(options), depth=options["rank_depth"])
    with refusals(ValueError) as notes:
        rep = repro_for_request(request, notes)
        outputs = repro_outputs(rep, view)
    write_outputs_then(outputs, repro_verdict(rep))
