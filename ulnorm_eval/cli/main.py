"""The command line: a thin click layer over the library API (nothing here computes a number)."""
from __future__ import annotations

import sys

import click

from ..core.variants import BOOTSTRAP_VARIANTS, DEFAULT_VARIANTS, variant_names
from .common import (CONTEXT, base_name, fail, flush, output_format, split_names, split_variants, table_layout,
                     write_output, write_outputs_then)
from .types import FiniteFloat, GateThreshold, NonEmpty

from .options import (HolesCommand, bounds_options, check_parallel, groups_option, holes_options, make_options, ordering_options,
                      output_options, parallel_options, scheduler_timeout, run_queries_option, seed_option)

EPILOG = """\b
Examples:
  ulnorm-eval qrels.txt run.gz                       nDCG@10, AP, RBP with E, IUB, UL1, UL2
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
                 "summ": ("summ", "summ_cmd")}


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
        if args and args[0] not in self.list_commands(ctx) and args[0] not in ("--help", "-h", "--version"):
            args = ["eval", *args]
        elif not args:
            args = ["eval", "--help"]
        return super().parse_args(ctx, args)

    def main(self, *args, **kw):  # exit codes, signals, no traceback: cli/guard.py
        from .guard import guarded_main
        return guarded_main(super().main, *args, **kw)

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except BrokenPipeError as exc:  # click would exit 1 on it: guard.py exits 141
            from .guard import PipeClosed
            raise PipeClosed() from exc
        except EOFError as exc:  # click would report an interruption (exit 130): an input error
            from .guard import InputEnded
            raise InputEnded(str(exc) or "EOF") from exc


@click.group(cls=DefaultGroup, context_settings=CONTEXT, epilog=EPILOG)
@click.version_option(package_name="ulnorm-eval")
def main():
    """ulnorm-eval QRELS RUN...: trec_eval-compatible evaluation with exact random-ranking bounds
    and UL/UE normalisations.  The default command is `eval`; see `ulnorm-eval eval --help`."""


def retired_norm_hint(paths) -> None:
    """``-n ul2`` was --norm's short form; -n is now trec_eval's --nosummary, so ``ul2`` is read as the
    qrels file.  An input that is no file and reads as a --norm value is refused with the fix (exit 2)."""
    import os

    from ..core.registry import is_variant_list

    for p in paths:
        if p != "-" and not os.path.exists(p) and is_variant_list(p):
            fail(f"{p}: no such file; did you mean --norm {p}? (-n is now trec_eval's --nosummary, no longer "
                 "--norm's short form)")


def check_trec_formats(rel_format, results_format, debug_level, zscore_file) -> None:
    """trec_eval's -R, -T, -D and -Z: their defaults are what ulnorm-eval does; anything else is refused
    with the reason (exit 2)."""
    if rel_format not in (None, "qrels"):
        raise click.UsageError(f"-R {rel_format}: only trec_eval's default 'qrels' is read; preference and "
                               "judgement-group files (prefs, qrels_prefs, qrels_jg) feed trec_eval's prefs_* and *_avgjg "
                               "measures, which ulnorm-eval does not compute")
    if results_format not in (None, "trec_results"):
        raise click.UsageError(f"-T {results_format}: trec_eval 10 reads only 'trec_results', as ulnorm-eval does")
    if debug_level is not None and debug_level.strip() not in ("0", "+0", "-0"):
        raise click.UsageError(f"-D {debug_level}: trec_eval's debug printout is not reproduced; only -D 0 "
                               "(its default) is accepted")


@main.command("eval", cls=HolesCommand, context_settings=CONTEXT, epilog=EPILOG)
@click.argument("qrels", type=click.Path(dir_okay=False, allow_dash=False))
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--trec", "trec", is_flag=True,
              help="trec_eval 10 drop-in: its lines byte for byte for the same flags (-q -c -l -M -N -J -n -m ...), "
                   "its default measures (-m official), names and query set; no variants (docs/trec_eval.md).")
@click.option("-m", "--measure", "measures", multiple=True, metavar="NAME", type=NonEmpty(),
              help="Measure, repeatable: ir_measures syntax (nDCG@10, AP@100, RBP(p=0.9), UL2(AP)) or "
                   "trec_eval names (ndcg_cut.10,20, map, P.5,10). Default: nDCG@10 AP RBP(p=0.8).")
@click.option("--norm", "norm", metavar="LIST", type=NonEmpty(names=True),
              help=f"Variants added to every measure, comma-separated ({variant_names()}) "
                   f"or 'none'; an explicit LIST covers every measure with bounds.  Default: "
                   f"{','.join(DEFAULT_VARIANTS).lower()} for the measures with a closed-form E; measures whose E is "
                   "a Monte Carlo estimate (IPrec, 11pt_avg, G, ERR, ...: seconds to minutes a "
                   "run) get variants only from an explicit --norm or by name, UL2(G) (a note on stderr says "
                   "which).  (No short form: -n is trec_eval's --nosummary.)")
@click.option("-q", "--per-query", is_flag=True, help="Print per-query values before the mean ('all').")
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
@click.option("--trec-version", "trec_version", type=click.Choice(["10", "9"]), default="10", show_default=True,
              help="trec_eval 10's rules, or trec_eval 9's: recall fractions to counts as (long)(x R + 0.9) "
                   "(iprec_at_recall, 11pt_avg), no per-query rows for queries the run did not retrieve for, and only "
                   "9's measures (all_trec without unj, rbp, rbp_resid).")
@click.option("--trec-nan", "trec_nan", is_flag=True,
              help="Reproduce trec_eval's -nan values (iprec_at_recall and 11pt_avg with nothing ranked after -J, "
                   "Rndcg with relevant documents but no positive gain) and the placeholder document its -c leaks "
                   "into utility.P1,P2,P3,P4, relstring.N and rbp_resid.p=X; default 0 and '' (docs/trec_eval.md).  "
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
@seed_option
@click.option("--names", type=click.Choice(["canonical", "trec"]), default="canonical", show_default=True,
              help="Measure names in the output: canonical (nDCG@10, UL2(AP)) or trec_eval's (ndcg_cut_10, ul2_map).")
@output_options(["table", "trec", "tsv", "csv", "json", "jsonl"], "trec",
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
@click.option("--no-progress", is_flag=True, help="No progress bar on stderr (shown on a terminal for inputs "
                                                  "over 4 MB, and with the time left once Monte Carlo bounds have "
                                                  "run for a second).")
@click.option("--fail-below", "fail_below", multiple=True, metavar="METRIC=VALUE", type=GateThreshold(),
              help="CI gate, repeatable: exit 1 when a run's mean of METRIC is below VALUE, "
                   "e.g. 'UL2(nDCG@10)=0.30'.  The metric is evaluated even if not in -m.")
@click.option("--baseline", type=click.Path(dir_okay=False, allow_dash=True), metavar="RUN",
              help="CI gate: compare every run with this run (evaluated with the same options, printed only "
                   "if also given as a RUN) on every metric except the bounds E, IUB, WLB.")
@click.option("--max-drop", "max_drop", type=FiniteFloat(min=0), metavar="D",
              help="With --baseline: exit 1 when mean(run) < mean(baseline) - D (an absolute difference "
                   "of means).  Default 0: any drop.")
@click.option("--alpha", type=FiniteFloat(0, 1, min_open=True, max_open=True), metavar="A",
              help="With --baseline: fail only if the drop is also significant, one-sided paired p < A "
                   "over the queries.")
@click.option("--allow-disjoint", is_flag=True,
              help="Evaluate a run that shares no query with QRELS (it scores 0); refused by default, "
                   "as it is almost always the wrong qrels.")
@click.option("--test", "test", type=click.Choice(["t", "randomization", "bootstrap"]),
              help="With --baseline: paired t-test (default), paired randomization test "
                   "(10,000 sign flips, seeded by --seed; exact for <= 13 queries) or Sakai's paired "
                   "bootstrap (1,000 resamples, seeded by --seed); one-sided.")
@click.option("--summary-md", "summary_md", type=click.Path(dir_okay=False), metavar="FILE",
              help="Append a Markdown summary of the gate to FILE (created if absent): every check with its "
                   "mean, threshold, margin and verdict, then the means.  For $GITHUB_STEP_SUMMARY.")
def eval_cmd(qrels, runs, trec, measures, norm, per_query, nosummary, rel_level, depth, complete, judged_only, num_docs,
             trec_version, trec_nan, rel_format, results_format, debug_level, zscore_file, run_queries_only, ties,
             score_precision, pool, expectation, undefined, permutations, holes, holes_samples, holes_prior, seed, names, fmt, precision, output,
             groups, stream, jobs, scheduler, sort, head, no_progress, fail_below, baseline, max_drop, alpha, test, allow_disjoint, summary_md):
    """Evaluate RUN files against QRELS (TREC qrels or LETOR rows; runs may be gzip/bz2/xz, '-' is stdin)."""
    from ..render.files import check_outputs
    check_outputs(click.get_current_context().params)  # -o/--plot never an input; before reading
    from ..inputs.trec import InputError
    from ..core.registry import UnknownMeasure
    from ..pipeline.parallel import ParallelError

    check_parallel(jobs, scheduler)
    retired_norm_hint([qrels, *runs])
    check_trec_formats(rel_format, results_format, debug_level, zscore_file)
    if baseline is None and (max_drop is not None or alpha is not None or test is not None):
        raise click.UsageError("--max-drop, --alpha and --test need --baseline RUN")
    if complete and run_queries_only:
        raise click.UsageError("-c (every qrels query) and --run-queries-only contradict each other")
    if sum(r == "-" for r in (*runs, baseline)) > 1:
        raise click.UsageError("standard input ('-') can be given once")
    warnings, strict_queries = [], False
    if trec:  # trec_eval's defaults (cli/trec.py)
        from .trec import trec_settings
        t = trec_settings(measures=measures, norm=norm, names=names, fmt=fmt, precision=precision, complete=complete,
                          run_queries_only=run_queries_only, holes=holes, holes_samples=holes_samples)
        measures, norm, names, fmt, precision = t["measures"], t["norm"], t["names"], t["fmt"], t["precision"]
        strict_queries, warnings, trec_nan = t["strict_queries"], t["notes"], t["trec_nan"]
    try:
        from ..pipeline import evaluate as api
        from ..pipeline import parallel
        from ..analysis import gate
        from ..render.formats import FORMATS, query_order
        from ..render.progress import progress

        opts = make_options(rel_level=rel_level, depth=depth, ties=ties, score_precision=score_precision,
                            run_queries_only=run_queries_only, pool=pool, expectation=expectation,
                            undefined=undefined, permutations=permutations, seed=seed,
                            judged_only=judged_only, num_docs=num_docs, trec_version=trec_version,
                            complete=complete, holes=holes[0] if holes else "closed", trec_nan=trec_nan, zscore=zscore_file,
                            holes_samples=holes_samples or 1000, holes_prior=holes_prior)
        if names == "trec" and not trec:  # --trec keeps the first, as trec_eval (cli/trec.py)
            from ..core.registry import trec_repeats
            repeated = trec_repeats(split_names(measures))
            if repeated:
                raise click.UsageError(repeated)
        variants, defaults = split_variants(norm), None
        if holes:  # LB and UB join the variants (the default ones, or those listed); BS.. with --holes-samples
            more = ["LB", "UB"] + (list(BOOTSTRAP_VARIANTS) if holes_samples else [])
            if variants is None:
                defaults = [*DEFAULT_VARIANTS, *more]
            else:
                variants = [*variants, *more]
            note = api.holes_note(split_names(measures) or None)
            if note:
                warnings.append(note)
        setup = []  # said only once the evaluation succeeded (an error stays one line)
        metrics = api.resolve_metrics(split_names(measures) or None, variants, warn=setup.append,
                                      default_variants=defaults, trec_version=trec_version)
        if zscore_file is not None and any(m.variant for m in metrics):
            raise click.UsageError("-Z converts trec_eval's measures, not the variants: add --norm none")
        try:
            thresholds = [gate.parse_threshold(t) for t in fail_below]
        except UnknownMeasure:
            raise
        except ValueError as exc:
            fail(str(exc))
        descending = bool(sort) and sort.startswith("-")
        sort_metric = _parse_metric(sort[1:] if descending else sort) if sort else None
        rec = sort_metric.measure.record if sort_metric is not None else None
        if rec is not None and rec.value == "text":
            fail(f"--sort {sort}: {sort_metric} is text (trec_eval's {sort_metric.measure.trec_name()}), not a "
                 "number to sort by; sort by a numeric measure")
        # measures named only by a gate or --sort are evaluated (and printed) too
        for m in [t.metric for t in thresholds] + ([sort_metric] if sort_metric else []):
            if m not in metrics:
                metrics.append(m)
        if holes:  # the gate's own metrics get their hole bounds too
            metrics += [m for m in gate.hole_metrics([t.metric for t in thresholds]) if m not in metrics]

        fmt = output_format(fmt, output, FORMATS, "trec")
        # per-query table rows mark undefined queries (docs/output.md): E, IUB, WLB and the plain
        # value of those measures are evaluated too (the variants compute them anyway), not shown
        hidden = []
        if fmt == "table" and (per_query or sort or head) and undefined == "zero":
            from ..render.table import bound_metrics
            hidden = bound_metrics(metrics)
        # the table prints the unjudged share of each cutoff after [LB, UB]: Unjudged@k evaluated, not shown
        shares = []
        if fmt == "table" and holes:
            from ..render.table import unjudged_metrics
            shares = [m for m in unjudged_metrics(metrics) if m not in hidden]
        inputs = [qrels, *runs] + ([baseline] if baseline and baseline not in runs else [])
        from ..core.expectations import monte_carlo_units
        loaded = []  # the qrels, once read: the Monte Carlo bar's total counts its queries

        def mc_total():  # units: query x metric x run (the last run's may be fewer: --run-queries-only)
            return monte_carlo_units(metrics) * len(set(loaded[0].qid.to_pylist())) * (len(inputs) - 1)

        mc = mc_total if monte_carlo_units(metrics) and jobs == 1 and not scheduler else 0
        with progress(inputs, not no_progress and sys.stderr.isatty(), mc) as step:
            step(f"reading {base_name(qrels)}", qrels)
            q = api.load_qrels(qrels, groups=groups)
            loaded.append(q)
            if q.skipped:
                warnings.append(f"{qrels}: skipped {q.skipped} comment or blank lines")
            results = []
            extra = [baseline] if baseline and baseline not in runs else []
            # hole bounds over several runs range over their shared holes (docs/holes.md, "Worlds")
            opts = api.with_runs_holes(opts, q, [*runs, *extra], metrics)
            with parallel.executor(q, jobs, scheduler, scheduler_timeout()) as ex:  # -j 1: evaluate_path, one run after the other
                done = parallel.evaluate_paths(ex, [*runs, *extra], metrics + hidden + shares, opts,
                                               stream=stream)
                for i, path in enumerate(runs):
                    step(f"evaluating {base_name(path)} ({i + 1}/{len(runs)})", path)
                    results.append(next(done))
                    warnings.extend(results[-1].notes)
                base = None
                if baseline in runs:
                    base = results[runs.index(baseline)]
                elif baseline:
                    step(f"evaluating baseline {base_name(baseline)}", baseline)
                    base = next(done)
                    warnings.extend(base.notes)
        from ..inputs import checks as input_checks  # unique run names, no disjoint run, no inf (docs/errors.md)
        try:
            for rr, path in zip(results + ([base] if base is not None and base not in results else []),
                                list(runs) + [baseline]):
                input_checks.require_overlap(rr, path, qrels, allow_disjoint)
        except InputError as exc:  # alone: the notes of an evaluation against the wrong qrels mislead
            fail(str(exc))
        if strict_queries:
            from .trec import missing_query_error
            error = missing_query_error(results, runs)
            if error:
                fail(error)
        input_checks.rename_runs(results)
        masks = {}
        if hidden:
            from ..render.table import undefined_masks
            masks = undefined_masks(api.Result(metrics + hidden, results, opts, qrels, list(runs)))
        result = api.Result(metrics, results, opts, qrels, list(runs))
        input_checks.require_finite(result)

        order = query_order(result, sort_metric, descending, head) if (sort or head) else None
        kw = {"per_query": per_query or order is not None, "names": names, "precision": precision,
              "query_order": order, "summary": not nosummary}
        if fmt == "table":
            kw.update(table_layout(output))
        if masks:
            kw["undefined_masks"] = masks
        text = FORMATS[fmt](result, **kw)
        if fmt == "trec":
            from ..render.text import shared_tags_note
            warnings.extend(shared_tags_note(results))

        checks = gate.check_thresholds(result, thresholds)
        if base is not None:
            checks += gate.check_baseline(result, base, max_drop or 0.0, alpha, test or "t", seed)
        if holes and checks:
            gate.check_holes(result, checks, base, max_drop or 0.0, holes[1] or "warn")
    except (InputError, UnknownMeasure, ParallelError) as exc:
        flush(warnings)
        fail(str(exc))
    flush(setup + warnings)
    from ..render.outputs import Output

    outputs = [Output(output, text)]
    if summary_md:
        from ..render.gate_md import gate_markdown

        outputs.append(Output(summary_md, gate_markdown(result, checks, names, base.name if base is not None else None,
                                                        (max_drop or 0.0) if base is not None else None, alpha),
                              append=True))
    verdict = None
    if checks:
        drop = (max_drop or 0.0) if base is not None else None
        verdict = (gate.verdict(checks, names, drop, alpha), any(c.failed for c in checks))
    # every output in one step; the verdict is printed (and exit 1 kept) even if an output fails
    write_outputs_then(outputs, verdict)


def _parse_metric(name: str):
    from ..core.registry import UnknownMeasure, parse

    try:
        return parse(name)
    except UnknownMeasure as exc:
        fail(str(exc))


@main.command("measures", context_settings=CONTEXT)
@click.option("--markdown", is_flag=True, help="Print the README's two Markdown tables instead.")
def measures_cmd(markdown):
    """List every measure and variant with parameters and defaults, formula, expectation under a random
    ranking, citation, and whether its bounds are exact or Monte Carlo."""
    from ..core.registry import FAMILIES, VARIANTS
    from ..render.registry_tables import BOUNDS_TEXT, bounds_kind, holes_text, measures_markdown, syntax, variants_markdown

    out = []  # written in one step: a closed or full stdout is an error, not a silent exit 0
    if markdown:
        out.append(measures_markdown() + "\n\n" + variants_markdown())
        return write_output("\n".join(out) + "\n", None)
    out.append("Measures (ir_measures syntax; any other ir_measures name is computed through ir_measures,\n"
               "with Monte Carlo E; DB as for the measures below):")
    for f in FAMILIES.values():
        out.append(f"\n  {syntax(f)}")
        for p in f.params:
            out.append(f"    {p.name} (default {p.default!r}): {p.doc}")
        out.append(f"    formula: {f.formula}")
        out.append(f"    E: {f.expectation_formula}")
        out.append(f"    bounds: {BOUNDS_TEXT[f.bounds]}"
                   + ("; Monte Carlo E for parameters outside the closed form (see E)" if f.exact_for else ""))
        out.append(f"    holes: {holes_text(f)}")
        if f.summary != "mean":
            out.append(f"    summary ('all' row): {f.summary}")
        if f.binary:
            out.append("    relevance: at -l/--rel-level (or rel=)")
        trec = ", ".join(t.base for t in f.trec)
        out.append(f"    cite: {f.cite}" + (f"; trec_eval: {trec}" if trec else ""))
    out.append("\nVariants (wrap a measure: UL2(nDCG@10); or add to all with --norm ul2):")
    for v in VARIANTS.values():
        alias = f" (alias {', '.join(v.aliases)})" if v.aliases else ""
        out.append(f"\n  {v.name}{alias}: {v.formula}")
        out.append(f"    range {v.rng}; {bounds_kind(v.name)}; cite: {v.cite}")
    write_output("\n".join(out) + "\n", None)


if __name__ == "__main__":  # pragma: no cover
    main()
