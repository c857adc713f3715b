"""The command line: a thin click layer over the library API (nothing here computes a number)."""
from __future__ import annotations

import click

from ..core.variants import DEFAULT_VARIANTS, variant_names
from .support import CONTEXT, fail, output_view, outputs_checked, progress_bar, refusals, write_output, write_outputs_then
from ..render.format_names import RESULT_FORMATS
from .trec import stops_as_trec_eval, trec_settings
from .types import ALPHA, FiniteFloat

from .options import (Brief, HolesCommand, allow_disjoint_option, bounds_options, choice,
                      ci_option, fail_below_option, groups_option, holes_list_option, holes_options, make_options,
                      measure_option, names_option, no_progress_option, norm_option, notes_option, ordering_options,
                      output_options, parallel_options, per_query_option, record, run_queries_option, seed_option,
                      summary_md_option)

EPILOG = """\b
Examples:
  ulnorm-eval qrels.txt run.gz                       nDCG@10, AP, RBP with E and EM
  ulnorm-eval -q -m nDCG@10 -m AP@100 qrels run      per-query rows
  ulnorm-eval -m 'UL2(nDCG@10)' -m 'DB(RBP(p=0.9))' qrels run1 run2
  ulnorm-eval --trec -q -c qrels run                 trec_eval -q -c qrels run, byte for byte
  ulnorm-eval --trec -m all_trec qrels run           trec_eval -m all_trec qrels run
  ulnorm-eval --norm e,iub,ul2,mm,uew -m AP qrels run
  ulnorm-eval -q --sort 'UL2(AP)' --head 5 qrels run
                                                     the 5 queries with the lowest UL2(AP)
  ulnorm-eval -f json -o eval.json qrels run1 run2   everything, with input checksums
  ulnorm-eval -f tsv qrels run > per-query.tsv       a row per (run, query), a column per measure
  ulnorm-eval --fail-below 'UL2(nDCG@10)=0.30' qrels run
                                                     CI gate: exit 1 if the mean is below 0.30
  ulnorm-eval --baseline main.run --max-drop 0.01 --alpha 0.05 qrels new.run
                                                     CI gate: exit 1 on a significant drop > 0.01
  ulnorm-eval --fail-below 'AP=0.2' --summary-md "$GITHUB_STEP_SUMMARY" qrels run
                                                     the gate as Markdown in a GitHub job summary
  ulnorm-eval measures                               every measure and variant

Exit codes: 0 ok, 1 a --fail-below/--baseline gate failed, 2 usage or input error.
"""


# The other subcommands' modules are imported when their command is asked for (the default command,
# eval, and --help of one command import none of them): name -> (module in ulnorm_eval.cli, attribute)
LAZY_COMMANDS = {"nrg": ("nrg", "nrg_cmd"), "compare": ("compare", "compare_cmd"), "swaps": ("compare", "swaps_cmd"),
                 "queries": ("compare", "queries_cmd"), "stability": ("stability", "stability_cmd"),
                 "summ": ("summ", "summ_cmd"), "repro": ("repro", "repro_cmd")}


class DefaultGroup(click.Group):
    """A group whose default command is ``eval``: ``ulnorm-eval QRELS RUN`` needs no verb."""

    def list_commands(self, ctx):
        return sorted(set(self.commands) | set(LAZY_COMMANDS))

    def get_command(self, ctx, name):
        if name in LAZY_COMMANDS and name not in self.commands:
            import importlib

            module, attr = LAZY_COMMANDS[name]
            self.add_command(getattr(importlib.import_module(f"{__package__}.{module}"), attr), name)
        return super().get_command(ctx, name)

    def all_commands(self) -> dict:
        """Every subcommand by name, the lazy ones imported (docs, tests)."""
        for name in LAZY_COMMANDS:
            self.get_command(None, name)
        return dict(self.commands)

    def parse_args(self, ctx, args):
        commands = self.list_commands(ctx)
        if args[:1] == ["help"]:  # `help` and `help COMMAND`: --help of the program or of the command
            args = [*args[1:2], "--help"]
        if args and args[0] not in commands and args[0] not in ("--help", "-h", "--version"):
            not_a_command(args[0], commands)
            args = ["eval", *args]
        elif not args:
            args = ["eval", "--help"]
        return super().parse_args(ctx, args)

    def main(self, *args, **kwargs):  # exit codes, signals, no traceback: cli/guard.py
        from .guard import guarded_main
        return guarded_main(super().main, *args, **kwargs)

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except BrokenPipeError as exc:  # click would exit 1 on it: guard.py exits 141
            from .guard import PipeClosed
            raise PipeClosed() from exc
        except EOFError as exc:  # click would report an interruption (exit 130): an input error
            from .guard import InputEnded
            raise InputEnded(str(exc) or "EOF") from exc


def not_a_command(word: str, commands) -> None:
    """The first argument is eval's QRELS unless it is a word of letters (a file name has a dot, a slash, a
    digit or a colon) that names no existing path and is close to a command's name (difflib, ratio >= 0.6:
    `evaluate`, `mesures`): then it is a mistyped command, refused (exit 2)."""
    import difflib
    import os
    import re

    close = difflib.get_close_matches(word, [*commands, "help"], n=1, cutoff=0.6)
    if close and re.fullmatch(r"[A-Za-z][A-Za-z_-]*", word) and not os.path.lexists(word):
        fail(f"{word}: no such command (did you mean {close[0]}?); commands are {', '.join(commands)}, help (and no "
             f"file {word} for the default command, eval QRELS RUN...)")


@click.group(cls=DefaultGroup, context_settings=CONTEXT, epilog=EPILOG)
@click.version_option(package_name="ulnorm-eval")
def main():
    """ulnorm-eval QRELS RUN...: trec_eval-compatible evaluation with exact random-ranking bounds
    and UL/UE normalisations.  The default command is `eval`; `ulnorm-eval help COMMAND` (or COMMAND
    --help) shows a command's options."""


def retired_norm_hint(paths) -> None:
    """``-n ul2`` was --norm's short form; -n is now trec_eval's --nosummary, so ``ul2`` is read as the
    qrels file.  An input that is no file and reads as a --norm value is refused with the fix (exit 2)."""
    import os

    from ..core.registry import is_variant_list

    for path in paths:
        if path != "-" and not os.path.exists(path) and is_variant_list(path):
            fail(f"{path}: no such file; did you mean --norm {path}? (-n is now trec_eval's --nosummary, no longer "
                 "--norm's short form)")


# trec_eval's -R, -T and -D: their defaults are what ulnorm-eval does; anything else is refused with the reason
TREC_FORMATS = {
    "rel_format": ("-R", ("qrels",), "only trec_eval's default 'qrels' is read; preference and judgement-group files "
                   "(prefs, qrels_prefs, qrels_jg) feed trec_eval's prefs_* and *_avgjg measures, which ulnorm-eval "
                   "does not compute"),
    "results_format": ("-T", ("trec_results",), "trec_eval 10 reads only 'trec_results', as ulnorm-eval does"),
    "debug_level": ("-D", ("0", "+0", "-0"), "trec_eval's debug printout is not reproduced; only -D 0 (its default) "
                    "is accepted"),
}


@main.command("eval", cls=HolesCommand, context_settings=CONTEXT, epilog=EPILOG)
@click.argument("qrels", type=click.Path(dir_okay=False, allow_dash=False))
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--trec", "trec", is_flag=True, cls=Brief,
              brief="trec_eval 10 drop-in: its output byte for byte for its flags (docs/trec_eval.md).",
              help="trec_eval 10 drop-in: its lines byte for byte for the same flags (-q -c -l -M -N -J -n -m ...), "
                   "its default measures (-m official), names and query set; no variants (docs/trec_eval.md).")
@measure_option()
@norm_option(f"Variants added to every measure, comma-separated ({variant_names()}) or 'none'; an explicit LIST "
             f"covers every measure with bounds.  Default: {','.join(DEFAULT_VARIANTS).lower()} for the measures with "
             "a closed-form E; measures whose E is a Monte Carlo estimate (IPrec, 11pt_avg, G, ERR, ...: seconds to "
             "minutes a run) get variants only from an explicit --norm or by name, UL2(G) (a note on stderr says which).",
             f"Variants added to each measure: {variant_names()} or none.  Default {','.join(DEFAULT_VARIANTS).lower()}.")
@per_query_option
@click.option("-n", "--nosummary", is_flag=True, help="No 'all' rows (trec_eval's -n); trec format.")
@ordering_options
@click.option("-c", "complete", is_flag=True,
              help="Average over every qrels query, a query the run did not retrieve for scoring 0 "
                   "(trec_eval's -c; the default here: --run-queries-only is trec_eval without -c).  Also "
                   "trec_eval's -c rule for num_rel's 'all' row: every qrels line with grade > 0, whatever -l.")
@click.option("-J", "--judged-only", "judged_only", is_flag=True,
              help="trec_eval's -J: drop unjudged documents (not in the qrels, or judged with a negative grade) "
                   "from every ranking after -M, and from the pools of the random-ranking bounds.")
@click.option("-N", "--num-docs", "num_docs", type=click.IntRange(min=0), default=0, metavar="N",
              help="trec_eval's -N: documents in the collection (utility's 4th coefficient).  Default 0.")
@choice("--trec-version", "trec_version", "10 9",
        help="trec_eval 10's rules, or trec_eval 9's: recall fractions to counts as (long)(x R + 0.9) "
             "(iprec_at_recall, 11pt_avg), no per-query rows for queries the run did not retrieve for, and only "
             "9's measures (all_trec without unj, rbp, rbp_resid).")
@click.option("--trec-nan", "trec_nan", is_flag=True,
              help="Reproduce trec_eval's -nan values (iprec_at_recall and 11pt_avg with nothing ranked after -J, "
                   "Rndcg with relevant documents but no positive gain) and the placeholder document its -c leaks "
                   "into utility.P1,P2,P3,P4, relstring.N and rbp_resid.p=X, and the earlier query's ideal_dcg "
                   "it prints for a query judged only with negative grades; default 0 and '' (docs/trec_eval.md).  "
                   "Implied by --trec.")
@click.option("-R", "rel_format", metavar="FORMAT", hidden=False,
              help="trec_eval's -R: 'qrels', its default, is accepted; prefs, qrels_prefs and qrels_jg are refused.")
@click.option("-T", "results_format", metavar="FORMAT",
              help="trec_eval's -T: 'trec_results', its default and only format, is accepted.")
@click.option("-D", "debug_level", metavar="LEVEL",
              help="trec_eval's -D: 0, its default, is accepted; its debug printout is not reproduced.")
@click.option("-Z", "zscore_file", metavar="FILE", type=click.Path(dir_okay=False),
              help="trec_eval's -Z: print (value - mean) / sd per query and measure, the mean and sd read from FILE's "
                   "lines 'qid measure mean sd' (trec_eval's names); -1000000 where FILE lacks the pair.  "
                   "Plain measures only (--norm none).")
@run_queries_option
@bounds_options
@holes_options
@holes_list_option
@seed_option
@names_option
@output_options(RESULT_FORMATS, "trec",
                "  tsv, csv, json and jsonl always hold every query and the 'all' row.")
@groups_option
@click.option("--stream/--no-stream", default=None,
              help="--stream: evaluate runs block by block in bounded memory and refuse a run whose queries' "
                   "lines are not contiguous.  --no-stream: read runs whole.  Default: stream a regular file, "
                   "falling back to reading it whole when its queries are not contiguous.  Same numbers.")
@parallel_options
@click.option("--sort", "sort", metavar="METRIC",
              help="Per-query rows (implies -q) sorted by METRIC of the first run, ascending; "
                   "--sort=-METRIC for descending.  Table and trec formats.")
@click.option("--head", type=click.IntRange(min=1), metavar="N",
              help="Only the first N per-query groups (implies -q).  Table and trec formats.")
@no_progress_option
@notes_option
@fail_below_option
@click.option("--baseline", type=click.Path(dir_okay=False, allow_dash=True), metavar="RUN", cls=Brief,
              brief="CI gate: exit 1 when a run's mean drops below RUN's (--max-drop D, --alpha A).",
              help="CI gate: compare every run with this run (evaluated with the same options, printed only "
                   "if also given as a RUN) on every metric except the bounds E, IUB, WLB.")
@click.option("--max-drop", "max_drop", type=FiniteFloat(min=0), metavar="D",
              help="With --baseline: exit 1 when mean(run) < mean(baseline) - D (an absolute difference "
                   "of means).  Default 0: any drop.")
@click.option("--alpha", type=ALPHA, metavar="A",
              help="With --baseline: fail only if the drop is also significant, one-sided paired p < A "
                   "over the queries.  With --ci: the intervals' level is 1 - A.")
@ci_option
@allow_disjoint_option
@click.option("--test", "test", type=click.Choice(["t", "randomization", "bootstrap"]),
              help="With --baseline: paired t-test (default), paired randomization test "
                   "(10,000 sign flips, seeded by --seed; exact for <= 13 queries) or Sakai's paired "
                   "bootstrap (1,000 resamples, seeded by --seed); one-sided.")
@summary_md_option
def eval_cmd(**options):
    """Evaluate RUN files against QRELS (TREC qrels or LETOR rows; runs may be gzip/bz2/xz, '-' is stdin)."""
    from ..analysis.eval_request import plan_eval, run_eval
    from ..render.eval_report import eval_outputs, eval_verdict
    from ..render.formats import FORMATS

    check_eval_options(options)
    options, notes = trec_settings(options) if options["trec"] else (options, [])  # notes: after the setup notes
    view = output_view(options, FORMATS, "trec")
    request = eval_request(options, view)
    with refusals() as said:
        plan = plan_eval(request, notes)
        with stops_as_trec_eval(view):
            outcome = run_eval(request, plan, notes, progress_bar(not options["no_progress"]))
        outputs = eval_outputs(outcome, request, view, notes)
        said += plan.setup + notes
    # every output in one step; the verdict is printed (and exit 1 kept) even if an output fails
    write_outputs_then(outputs, eval_verdict(outcome, request, view, click.get_current_context().meta.get("notes") != "none"))


def check_eval_options(opts: dict) -> None:
    """Refuse (click's usage error) what contradicts itself before any input is read; -o/--plot never
    name an input."""
    outputs_checked()
    retired_norm_hint([opts["qrels"], *opts["runs"]])
    for key, (flag, accepted, reason) in TREC_FORMATS.items():
        if opts[key] is not None and opts[key].strip() not in accepted:
            raise click.UsageError(f"{flag} {opts[key]}: {reason}")
    if opts["baseline"] is None and (opts["max_drop"] is not None or opts["test"] is not None):
        raise click.UsageError("--max-drop and --test need --baseline RUN")
    if opts["alpha"] is not None and opts["baseline"] is None and not opts["ci"]:
        raise click.UsageError("--alpha needs --baseline RUN or --ci")
    if opts["complete"] and opts["run_queries_only"]:
        raise click.UsageError("-c (every qrels query) and --run-queries-only contradict each other")
    if opts.get("holes_list") and not opts["holes"]:
        raise click.UsageError("--holes-list N needs --holes: it names the holes whose grades move the bounds --holes prints")
    if opts["names"] == "trec" and not opts["trec"]:  # --trec keeps the first, as trec_eval (cli/trec.py)
        from ..core.registry import trec_repeats

        if repeated := trec_repeats(opts["measures"]):
            raise click.UsageError(repeated)


def eval_request(given: dict, view):
    """`eval`'s options (checked, --trec's applied) -> an analysis.eval_request.EvalRequest; the
    randomisation intervals are drawn only when ``view`` (a render.files.View) prints them."""
    from ..analysis.eval_request import EvalRequest
    from ..pipeline.blocks import Options
    from ..render.files import View

    options = make_options(given, zscore=given["zscore_file"], ci=1 - (given["alpha"] or 0.05) if given["ci"] else None,
                           random_intervals=view.fmt in ("table", "json") or bool(view.summary_md))
    handled = (Options, View, *TREC_FORMATS, "trec zscore_file no_progress")
    return record(EvalRequest, given, handled, options=options)


@main.command("measures", context_settings=CONTEXT)
@click.argument("pattern", required=False)
@click.option("--markdown", is_flag=True, help="Print the README's two Markdown tables instead.")
def measures_cmd(pattern, markdown):
    """List the measures and variants, grouped; with PATTERN, every name containing it (any case; a shell
    pattern with * ? [): parameters and defaults, formula, expectation under a random ranking, bounds
    (exact or Monte Carlo), trec_eval name and citation."""
    from ..render.registry_tables import measures_details, measures_markdown, measures_overview, variants_markdown

    if markdown:
        return write_output(measures_markdown() + "\n\n" + variants_markdown() + "\n", None)
    text = measures_overview() if pattern is None else measures_details(pattern)
    if text is None:
        fail(f"measures {pattern}: no measure or variant has a name containing it; `ulnorm-eval measures` lists them")
    write_output(text + "\n", None)  # in one step: a closed or full stdout is an error, not a silent exit 0


if __name__ == "__main__":  # pragma: no cover
    main()
