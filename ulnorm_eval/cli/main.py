"""The command line: a thin click layer over the library API (nothing here computes a number)."""
from __future__ import annotations

import sys

import click

from .options import (bounds_options, groups_option, make_options, ordering_options, output_options,
                          run_queries_option, seed_option)

EPILOG = """\b
Examples:
  ulnorm-eval qrels.txt run.gz                       nDCG@10, AP, RBP with E, IUB, UL1, UL2
  ulnorm-eval -q -m nDCG@10 -m AP@100 qrels run      per-query rows
  ulnorm-eval -m 'UL2(nDCG@10)' -m 'DB(RBP(p=0.9))' qrels run1 run2
  ulnorm-eval -n none --names trec -m map -m P.5,10 qrels run   trec_eval drop-in
  ulnorm-eval -n e,iub,ul2,mm,uew -m AP qrels run
  ulnorm-eval -q --sort 'UL2(AP)' --head 5 qrels run
                                                     the 5 queries with the lowest UL2(AP)
  ulnorm-eval -f json -o eval.json qrels run1 run2   everything, with input checksums
  ulnorm-eval -f tsv qrels run > per-query.tsv       a row per (run, query), a column per measure
  ulnorm-eval --fail-below 'UL2(nDCG@10)=0.30' qrels run
                                                     CI gate: exit 1 if the mean is below 0.30
  ulnorm-eval --baseline main.run --max-drop 0.01 --alpha 0.05 qrels new.run
                                                     CI gate: exit 1 on a significant drop > 0.01
  ulnorm-eval measures                               every measure and variant

Exit codes: 0 ok, 1 a --fail-below/--baseline gate failed, 2 usage or input error.
"""


class DefaultGroup(click.Group):
    """A group whose default command is ``eval``: ``ulnorm-eval QRELS RUN`` needs no verb."""

    def parse_args(self, ctx, args):
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h", "--version"):
            args = ["eval", *args]
        elif not args:
            args = ["eval", "--help"]
        return super().parse_args(ctx, args)


CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


@click.group(cls=DefaultGroup, context_settings=CONTEXT, epilog=EPILOG)
@click.version_option(package_name="ulnorm-eval")
def main():
    """ulnorm-eval QRELS RUN...: trec_eval-compatible evaluation with exact random-ranking bounds
    and UL/UE normalisations.  The default command is `eval`; see `ulnorm-eval eval --help`."""


def _split_names(values) -> list:
    out = []
    for v in values:
        out.extend(x for x in v.split() if x)
    return out


def _split_variants(value: str | None):
    if value is None:
        return None
    parts = [x.strip() for x in value.split(",") if x.strip()]
    if parts in (["none"], ["plain"]):
        return []
    return parts


def _fail(msg: str, code: int = 2):
    click.echo(f"ulnorm-eval: {msg}", err=True)
    sys.exit(code)


@main.command("eval", context_settings=CONTEXT, epilog=EPILOG)
@click.argument("qrels", type=click.Path(dir_okay=False, allow_dash=False))
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False, allow_dash=True))
@click.option("-m", "--measure", "measures", multiple=True, metavar="NAME",
              help="Measure, repeatable: ir_measures syntax (nDCG@10, AP@100, RBP(p=0.9), UL2(AP)) or "
                   "trec_eval names (ndcg_cut.10,20, map, P.5,10). Default: nDCG@10 AP RBP(p=0.8).")
@click.option("-n", "--norm", "norm", metavar="LIST",
              help="Variants added to every measure, comma-separated (e, iub, wlb, ul1, ul2, mm, eb, em, db, uew) "
                   "or 'none'. Default: e,iub,ul1,ul2.")
@click.option("-q", "--per-query", is_flag=True, help="Print per-query values before the mean ('all').")
@ordering_options
@click.option("-c", "complete", is_flag=True, hidden=True, help="Accepted for trec_eval compatibility (the default).")
@run_queries_option
@bounds_options
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
@click.option("--sort", "sort", metavar="METRIC",
              help="Per-query rows (implies -q) sorted by METRIC of the first run, ascending; "
                   "--sort=-METRIC for descending.  Table and trec formats.")
@click.option("--head", type=click.IntRange(min=1), metavar="N",
              help="Only the first N per-query groups (implies -q).  Table and trec formats.")
@click.option("--no-progress", is_flag=True, help="No progress bar on stderr (shown on a terminal for inputs "
                                                  "over 4 MB).")
@click.option("--fail-below", "fail_below", multiple=True, metavar="METRIC=VALUE",
              help="CI gate, repeatable: exit 1 when a run's mean of METRIC is below VALUE, "
                   "e.g. 'UL2(nDCG@10)=0.30'.  The metric is evaluated even if not in -m.")
@click.option("--baseline", type=click.Path(dir_okay=False, allow_dash=True), metavar="RUN",
              help="CI gate: compare every run with this run (evaluated with the same options, printed only "
                   "if also given as a RUN) on every metric except the bounds E, IUB, WLB.")
@click.option("--max-drop", "max_drop", type=click.FloatRange(min=0), metavar="D",
              help="With --baseline: exit 1 when mean(run) < mean(baseline) - D (an absolute difference "
                   "of means).  Default 0: any drop.")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), metavar="A",
              help="With --baseline: fail only if the drop is also significant, one-sided paired p < A "
                   "over the queries.")
@click.option("--test", "test", type=click.Choice(["t", "randomization"]),
              help="With --baseline: paired t-test (default) or paired randomization test "
                   "(10,000 sign flips, seeded by --seed; exact for <= 13 queries).")
def eval_cmd(qrels, runs, measures, norm, per_query, rel_level, depth, complete, run_queries_only, ties,
             score_precision, pool, expectation, undefined, permutations, seed, names, fmt, precision, output,
             groups, stream, sort, head, no_progress, fail_below, baseline, max_drop, alpha, test):
    """Evaluate RUN files against QRELS (TREC qrels or LETOR rows; runs may be gzip/bz2/xz, '-' is stdin)."""
    from ..inputs.trec import InputError
    from ..core.registry import UnknownMeasure

    if baseline is None and (max_drop is not None or alpha is not None or test is not None):
        raise click.UsageError("--max-drop, --alpha and --test need --baseline RUN")
    if sum(r == "-" for r in (*runs, baseline)) > 1:
        raise click.UsageError("standard input ('-') can be given once")
    warnings = []
    try:
        from ..pipeline import evaluate as api
        from ..analysis import gate
        from ..render.formats import FORMATS, progress, query_order, write_atomic

        opts = make_options(rel_level=rel_level, depth=depth, ties=ties, score_precision=score_precision,
                            run_queries_only=run_queries_only, pool=pool, expectation=expectation,
                            undefined=undefined, permutations=permutations, seed=seed)
        metrics = api.resolve_metrics(_split_names(measures) or None, _split_variants(norm))
        try:
            thresholds = [gate.parse_threshold(t) for t in fail_below]
        except UnknownMeasure:
            raise
        except ValueError as exc:
            _fail(str(exc))
        descending = bool(sort) and sort.startswith("-")
        sort_metric = _parse_metric(sort[1:] if descending else sort) if sort else None
        # measures named only by a gate or --sort are evaluated (and printed) too
        for m in [t.metric for t in thresholds] + ([sort_metric] if sort_metric else []):
            if m not in metrics:
                metrics.append(m)

        inputs = [qrels, *runs] + ([baseline] if baseline and baseline not in runs else [])
        with progress(inputs, not no_progress and sys.stderr.isatty()) as step:
            step(f"reading {_base(qrels)}", qrels)
            q = api.load_qrels(qrels, groups=groups)
            if q.skipped:
                warnings.append(f"{qrels}: skipped {q.skipped} comment or blank lines")
            results = []
            for i, path in enumerate(runs):
                step(f"evaluating {_base(path)} ({i + 1}/{len(runs)})", path)
                results.append(api.evaluate_path(q, path, metrics, opts, warnings.append, stream))
            base = None
            if baseline in runs:
                base = results[runs.index(baseline)]
            elif baseline:
                step(f"evaluating baseline {_base(baseline)}", baseline)
                base = api.evaluate_path(q, baseline, metrics, opts, warnings.append, stream)
        result = api.Result(metrics, results, opts, qrels, list(runs))

        if fmt is None:
            fmt = "table" if (sys.stdout.isatty() and not output) else "trec"
        order = query_order(result, sort_metric, descending, head) if (sort or head) else None
        kw = {"per_query": per_query or order is not None, "names": names, "precision": precision,
              "query_order": order}
        if fmt == "table" and sys.stdout.isatty() and not output:
            import shutil
            kw.update(color=True, width=shutil.get_terminal_size().columns)
        text = FORMATS[fmt](result, **kw)

        checks = gate.check_thresholds(result, thresholds)
        if base is not None:
            checks += gate.check_baseline(result, base, max_drop or 0.0, alpha, test or "t", seed)
    except (InputError, UnknownMeasure) as exc:
        _flush(warnings)
        _fail(str(exc))
    _flush(warnings)
    if output:
        write_atomic(output, text)
    else:
        sys.stdout.write(text)
    if checks:
        drop = (max_drop or 0.0) if base is not None else None
        for line in gate.verdict(checks, names, drop, alpha):
            click.echo(f"ulnorm-eval: {line}", err=True)
        if any(c.failed for c in checks):
            sys.exit(1)


def _base(path: str) -> str:
    import os

    return os.path.basename(path) or path


def _parse_metric(name: str):
    from ..core.registry import UnknownMeasure, parse

    try:
        return parse(name)
    except UnknownMeasure as exc:
        _fail(str(exc))


def _flush(warnings) -> None:
    for w in dict.fromkeys(warnings):
        click.echo(f"ulnorm-eval: {w}", err=True)


@main.command("measures", context_settings=CONTEXT)
@click.option("--markdown", is_flag=True, help="Print the README's two Markdown tables instead.")
def measures_cmd(markdown):
    """List every measure and variant with parameters and defaults, formula, expectation under a random
    ranking, citation, and whether its bounds are exact or Monte Carlo."""
    from ..render.formats import bounds_kind, measures_markdown, syntax, variants_markdown
    from ..core.registry import FAMILIES, VARIANTS

    if markdown:
        click.echo(measures_markdown() + "\n\n" + variants_markdown())
        return
    click.echo("Measures (ir_measures syntax; any other ir_measures name is computed through ir_measures,\n"
               "with Monte Carlo E and DB):")
    for f in FAMILIES.values():
        click.echo(f"\n  {syntax(f)}")
        for p in f.params:
            click.echo(f"    {p.name} (default {p.default!r}): {p.doc}")
        click.echo(f"    formula: {f.formula}")
        click.echo(f"    E: {f.expectation}")
        click.echo("    bounds: exact (E, IUB, WLB in closed form); DB by Monte Carlo")
        click.echo(f"    cite: {f.cite}" + (f"; trec_eval: {f.trec}" if f.trec else ""))
    click.echo("\nVariants (wrap a measure: UL2(nDCG@10); or add to all with -n ul2):")
    for v in VARIANTS.values():
        alias = f" (alias {', '.join(v.aliases)})" if v.aliases else ""
        click.echo(f"\n  {v.name}{alias}: {v.formula}")
        click.echo(f"    range {v.rng}; {bounds_kind(v.name)}; cite: {v.cite}")


from .nrg import nrg_cmd  # noqa: E402
main.add_command(nrg_cmd)
from .compare import compare_cmd, queries_cmd  # noqa: E402
main.add_command(compare_cmd)
main.add_command(queries_cmd)
from .summ import summ_cmd  # noqa: E402
main.add_command(summ_cmd)

if __name__ == "__main__":  # pragma: no cover
    main()
