"""The command line: a thin click layer over the library API (nothing here computes a number)."""
from __future__ import annotations

import sys

import click

EPILOG = """\b
Examples:
  ulnorm-eval qrels.txt run.gz                       nDCG@10, AP, RBP with E, IUB, UL1, UL2
  ulnorm-eval -q -m nDCG@10 -m AP@100 qrels run      per-query rows
  ulnorm-eval -m 'UL2(nDCG@10)' -m 'DB(RBP(p=0.9))' qrels run1 run2
  ulnorm-eval -n none --names trec -m map -m P.5,10 qrels run   trec_eval drop-in
  ulnorm-eval -n e,iub,ul2,mm,uew -m AP qrels run
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
@click.option("-l", "--rel-level", type=float, default=1, show_default=True,
              help="Lowest grade counted relevant for binary measures (AP, P, RR, R, Rprec, SP).")
@click.option("-M", "--depth", type=click.IntRange(min=1), help="Keep only the top N documents per query.")
@click.option("-c", "complete", is_flag=True, hidden=True, help="Accepted for trec_eval compatibility (the default).")
@click.option("--run-queries-only", is_flag=True,
              help="Average only over queries the run retrieved for (trec_eval without -c).")
@click.option("--ties", type=click.Choice(["score", "rank", "file"]), default="score", show_default=True,
              help="Order: score desc then docid desc (trec_eval); the rank column; or file order.")
@click.option("--score-precision", type=click.Choice(["float64", "float32"]), default="float64",
              show_default=True, help="float32 reproduces trec_eval <= 9.0.8, pytrec_eval and ir_measures.")
@click.option("--pool", type=click.Choice(["qrels", "run", "union"]), default="qrels", show_default=True,
              help="Documents a random ranker permutes: judged ones, the run's, or both.")
@click.option("--expectation", type=click.Choice(["exact", "paper"]), default="exact", show_default=True,
              help="'paper' uses the seeds' formulas verbatim (E[SP@k] = k(P/n)^2) to reproduce their tables.")
@click.option("--undefined", type=click.Choice(["zero", "skip"]), default="zero", show_default=True,
              help="A query whose variant is undefined (e.g. I = E) scores 0, or is left out of the mean.")
@click.option("--permutations", type=click.IntRange(min=10), default=1000, show_default=True,
              help="Monte Carlo permutations (DB, and E/IUB of measures without a closed form).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the Monte Carlo permutations.")
@click.option("--names", type=click.Choice(["canonical", "trec"]), default="canonical", show_default=True,
              help="Measure names in the output: canonical (nDCG@10, UL2(AP)) or trec_eval's (ndcg_cut_10, ul2_map).")
@click.option("-f", "--format", "fmt", type=click.Choice(["table", "trec", "tsv", "csv", "json", "jsonl"]),
              help="Output format. Default: table on a terminal, trec when piped.")
@click.option("--precision", type=click.IntRange(min=0, max=17),
              help="Decimals (default 4 for trec and table; full precision for tsv, csv, json).")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write to FILE (atomically) instead of stdout.")
@click.option("--groups", type=click.Path(dir_okay=False), help="LETOR group-size file (default QRELS.query).")
def eval_cmd(qrels, runs, measures, norm, per_query, rel_level, depth, complete, run_queries_only, ties,
             score_precision, pool, expectation, undefined, permutations, seed, names, fmt, precision, output,
             groups):
    """Evaluate RUN files against QRELS (TREC qrels or LETOR rows; runs may be gzip/bz2/xz, '-' is stdin)."""
    from .io import InputError
    from .registry import UnknownMeasure

    warnings = []
    try:
        from . import api
        from .output import FORMATS, write_atomic

        opts = api.Options(rel_level=rel_level, depth=depth, ties=ties, score_precision=score_precision,
                           run_queries_only=run_queries_only, pool=pool, expectation=expectation,
                           undefined=undefined, permutations=permutations, seed=seed)
        metrics = api.resolve_metrics(_split_names(measures) or None, _split_variants(norm))
        q = api.load_qrels(qrels, groups=groups)
        if q.skipped:
            warnings.append(f"{qrels}: skipped {q.skipped} comment or blank lines")
        if sum(r == "-" for r in runs) > 1:
            raise click.UsageError("standard input ('-') can be given once")
        results = []
        for path in runs:
            run = api.load_run(path, q)
            results.append(api.evaluate_run(q, run, metrics, opts, warnings.append))
        result = api.Result(metrics, results, opts, qrels, list(runs))
        if fmt is None:
            fmt = "table" if (sys.stdout.isatty() and not output) else "trec"
        formatter = FORMATS.get(fmt)
        if formatter is None:
            raise click.UsageError(f"format {fmt!r} is not available yet")
        text = formatter(result, per_query=per_query, names=names, precision=precision)
    except (InputError, UnknownMeasure) as exc:
        _flush(warnings)
        _fail(str(exc))
    _flush(warnings)
    if output:
        write_atomic(output, text)
    else:
        sys.stdout.write(text)


def _flush(warnings) -> None:
    for w in dict.fromkeys(warnings):
        click.echo(f"ulnorm-eval: {w}", err=True)


@main.command("measures", context_settings=CONTEXT)
def measures_cmd():
    """List every measure and variant with parameters, formula and citation."""
    from .registry import FAMILIES, VARIANTS

    click.echo("Measures (ir_measures syntax; any other ir_measures name is computed through ir_measures):")
    for f in FAMILIES.values():
        params = ", ".join(f"{p.name}={p.default!r}" for p in f.params)
        cut = {"optional": "[@k]", "required": "@k", "none": ""}[f.cutoff]
        click.echo(f"\n  {f.name}{'(' + params + ')' if params else ''}{cut}")
        click.echo(f"    {f.formula}")
        click.echo(f"    E: {f.expectation}")
        click.echo(f"    cite: {f.cite}" + (f"; trec_eval: {f.trec}" if f.trec else ""))
    click.echo("\nVariants (wrap a measure: UL2(nDCG@10); or add to all with -n ul2):")
    for v in VARIANTS.values():
        alias = f" (alias {', '.join(v.aliases)})" if v.aliases else ""
        click.echo(f"  {v.name}{alias}: {v.formula}  [{v.cite}; range {v.rng}]")


from .cli_nrg import nrg_cmd  # noqa: E402
main.add_command(nrg_cmd)

if __name__ == "__main__":  # pragma: no cover
    main()
