"""Option bundles shared by the commands, so a flag means the same thing, with the same help, everywhere,
and the records built from their values (:func:`record`).  Only click is imported: `--help` stays instant."""
from __future__ import annotations

import click

MAX_DRAWS = 1_000_000  # Monte Carlo draws: their values are held per query (8 bytes each)
MAX_TRIALS = 100_000  # split halves, topic or document resamples, seeds: each holds a vector per system or query

from ..core.variants import DEFAULT_MEASURES, DEFAULT_WORLD
from .types import FiniteFloat, GateThreshold, Jobs, NonEmpty, RelLevel


def choice(*names, default=None, **kw):
    """``click.option(*names[:-1])`` taking one of the words of ``names[-1]``, by default the first."""
    *decls, words = names
    return click.option(*decls, type=click.Choice(words.split()), default=default or words.split()[0],
                        show_default=True, **kw)


class Brief(click.Option):
    """An option with ``brief``: its help in a command's short --help (BriefCommand); None: only in --help-all."""

    def __init__(self, *decls, brief=None, **kwargs):
        super().__init__(*decls, **kwargs)
        self.brief = brief


def bundle(*options):
    """A decorator applying ``options`` in the order given (top to bottom in --help)."""

    def deco(command):
        for option in reversed(options):
            command = option(command)
        return command

    return deco


def record(cls, given: dict, handled=(), **fields):
    """The dataclass ``cls`` (a request, Options, a View) from the options named as its fields, then ``fields``.
    ``handled``, given for a command's request: the records (their fields) and names (a string) of what takes
    the other options; an option none takes is refused (TypeError), so an option never reaching the library
    fails every run of its command."""
    import dataclasses

    def names(kind) -> set:
        return set(kind.split()) if isinstance(kind, str) else {field.name for field in dataclasses.fields(kind)}

    lost = sorted(set(given) - names(cls).union(*map(names, handled))) if handled else ()
    if lost:
        raise TypeError(f"{cls.__name__}: no record takes the options {', '.join(lost)}")
    return cls(**{**{key: value for key, value in given.items() if key in names(cls)}, **fields})


def make_options(given: dict, **fields):
    """pipeline.blocks.Options from a command's options (--holes: its world; --holes-samples: 1000 unless
    given), then ``fields``."""
    from ..pipeline.blocks import Options

    holes = given.get("holes")
    return record(Options, {**given, "holes": holes[0] if holes else DEFAULT_WORLD,
                            "holes_samples": given.get("holes_samples") or 1000}, **fields)


def split_names(values) -> list:
    """-m values, each possibly several whitespace-separated names; whitespace inside parentheses,
    brackets or braces belongs to the name (``RBP(p=0.5, rel=1)``)."""
    out = []
    for value in values:
        depth, cur = 0, []
        for char in value:
            depth += (char in "([{") - (char in ")]}")
            if char.isspace() and depth <= 0:
                if cur:
                    out.append("".join(cur))
                cur = []
                continue
            cur.append(char)
        if cur:
            out.append("".join(cur))
    return out


def split_variants(value: str | None):
    """--norm LIST: None (the default variants), () for 'none'/'plain', else the names."""
    if value is None:
        return None
    parts = tuple(part.strip() for part in value.split(",") if part.strip())
    return () if len(parts) == 1 and parts[0].lower() in ("none", "plain") else parts


MEASURE_HELP = ("Measure, repeatable: ir_measures syntax (nDCG@10, AP@100, RBP(p=0.9), UL2(AP)) or trec_eval "
                f"names (ndcg_cut.10,20, map, P.5,10); any case. Default: {' '.join(DEFAULT_MEASURES)}.")


def measure_option(help=MEASURE_HELP):
    """-m/--measure, repeatable: the names given (several in one value: split_names)."""
    return click.option("-m", "--measure", "measures", multiple=True, metavar="NAME", type=NonEmpty(), help=help,
                        callback=lambda ctx, param, value: tuple(split_names(value)), cls=Brief,
                        brief="Measure, repeatable: nDCG@10, AP@100, RBP(p=0.9), UL2(AP), or trec_eval's map, P.5,10; "
                              f"any case.  Default {' '.join(DEFAULT_MEASURES)}.  Every name: ulnorm-eval measures.")


def norm_option(help, brief=None):
    """--norm LIST as ``variants``: None (the default variants), () for 'none', else the names."""
    return click.option("--norm", "variants", metavar="LIST", type=NonEmpty(names=True), help=help, cls=Brief,
                        brief=brief, callback=lambda ctx, param, value: split_variants(value))


def plot_option(help="Also draw the pictures to FILE (png, svg or pdf; needs matplotlib: the 'plot' extra)."):
    return click.option("--plot", type=click.Path(dir_okay=False), metavar="FILE.png", help=help, cls=Brief,
                        brief="Also draw the pictures to FILE (png, svg or pdf; the 'plot' extra).")


per_query_option = click.option("-q", "--per-query", is_flag=True, help="Per-query (summ: per-document) rows before "
                                "the mean ('all').", cls=Brief, brief="Per-query rows before the mean ('all').")
names_option = choice("--names", "canonical trec", help="Measure names in the output: canonical (nDCG@10, "
                      "UL2(AP), NRG(nDCG@10)) or trec_eval's (ndcg_cut_10, ul2_map, nrg_ndcg_cut_10).")
ties_option = choice("--ties", "score rank file",
                     help="Order: score desc then docid desc (trec_eval); the rank column; or file order.")
undefined_option = choice("--undefined", "zero skip", help="A query (summ: a document) whose variant is undefined "
                          "(e.g. I = E) scores 0, or is left out of the mean.")
no_progress_option = click.option(
    "--no-progress", is_flag=True,
    help="No progress bars on stderr (reading large inputs, Monte Carlo bounds, tests and optimisers, with the time "
         "left; shown on a terminal, or with ULNORM_EVAL_PROGRESS=always whatever stderr is).")
fail_below_option = click.option(
    "--fail-below", "thresholds", multiple=True, metavar="METRIC=VALUE", type=GateThreshold(), cls=Brief,
    brief="CI gate: exit 1 when a run's mean of METRIC is below VALUE, e.g. 'UL2(nDCG@10)=0.30'.",
    help="CI gate, repeatable: exit 1 when a run's (summ: a system's) mean of METRIC is below VALUE, e.g. "
         "'UL2(nDCG@10)=0.30'.  The metric is evaluated even if not in -m.")
summary_md_option = click.option(
    "--summary-md", "summary_md", type=click.Path(dir_okay=False), metavar="FILE",
    help="Append a Markdown summary of the gate to FILE (created if absent): every check with its value, "
         "threshold, margin and verdict, then the numbers.  For $GITHUB_STEP_SUMMARY.")

# How a run is read and ordered: every number depends on these.
ordering_options = bundle(
    click.option("-l", "--rel-level", type=RelLevel(), default=1, show_default=True, cls=Brief,
                 brief="Lowest grade counted relevant (default 1).",
                 help="Lowest grade counted relevant by measures that read relevance at a level (marked "
                      "'relevance: at -l' in `ulnorm-eval measures`) and by UC; >= 0 (0: every judged "
                      "document of grade 0 or more; unjudged ones never)."),
    click.option("-M", "--depth", type=click.IntRange(min=1), help="Keep only the top N documents per query."),
    ties_option,
    choice("--score-precision", "float64 float32",
           help="float32 reproduces trec_eval <= 9.0.8, pytrec_eval and ir_measures."),
)

run_queries_option = click.option(
    "--run-queries-only", is_flag=True, help="Average only over queries the run retrieved for (trec_eval without -c).")

def _pool(ctx, param, value):
    """--pool: run, qrels, union, qrels+N or the path of a candidate file (the library's check: pipeline.blocks.Options)."""
    from ..pipeline.blocks import Options

    try:
        Options(pool=value)
    except ValueError as exc:
        raise click.BadParameter(str(exc), ctx, param) from None
    return value


# The random-ranking bounds and the variants built on them.
bounds_options = bundle(
    click.option("--pool", metavar="RUN|QRELS|UNION|QRELS+N|FILE", callback=_pool, default="qrels+1000", show_default=True, cls=Brief,
                 brief="What a random ranking shuffles: the judged documents and N unjudged (default qrels+1000), "
                       "the judged ones, the run's, both (union), or a candidate FILE's top --pool-depth.",
                 help="Documents a random ranker permutes: the judged ones and N unjudged ones (qrels+N: the same "
                      "for every run, whatever it retrieved; on LETOR data the candidates), the judged ones alone, "
                      "the run's own ranked documents (is its order better than a shuffle of them?), the judged and "
                      "the run's, or each query's top --pool-depth documents of a candidate FILE (a run: the "
                      "re-ranking setting) (docs/bounds.md, \"Which pool\")."),
    click.option("--pool-depth", type=click.IntRange(min=1), default=100, show_default=True,
                 help="--pool FILE: the candidates of a query are the file's top N documents for it."),
    choice("--expectation", "exact paper",
           help="'paper' uses the papers' formulas verbatim (E[SP@k] = k(P/n)^2; nDCG and DCG with "
                "2^R - 1 gains unless gains= is given) to reproduce their tables."),
    undefined_option,
    click.option("--permutations", type=click.IntRange(min=10, max=MAX_DRAWS), default=1000, show_default=True,
                 help="Monte Carlo permutations (DB, and E/IUB of measures without a closed form); at most "
                      "1,000,000 (memory grows with them)."),
)

# eval --ci: an interval on every plain 'all' row (pipeline.blocks.plain_intervals)
ci_option = click.option(
    "--ci", is_flag=True,
    help="A (1 - A) confidence interval over the topics on every 'all' row that is a mean (plain measures and "
         "normalisations; A: --alpha, default 0.05: 95%): the percentile bootstrap of the queries (1,000 resamples, "
         "seeded by --seed; Efron & Tibshirani 1993), the topics' sampling error, not the comparison with a random "
         "ordering (the table's 'vs random' interval); a column in -f table, two fields per metric in tsv and csv, "
         "'ci' in json.")

# Judgment holes: LB/UB of every measure over the grades of the unjudged retrieved documents.
class HolesSpec(click.ParamType):
    """--holes: comma-separated, at most one of closed/open and one of warn/fail."""

    name = "[open=est|closed|open|open=N|open=P%][,warn|fail]"

    def convert(self, value, param, ctx):
        if isinstance(value, tuple):
            return value
        from ..core.holes import World

        parts = [part.strip() for part in str(value).split(",") if part.strip()]
        acts = [part for part in parts if part in ("warn", "fail")]
        worlds = [part for part in parts if part not in ("warn", "fail")]
        if len(worlds) > 1 or len(acts) > 1 or not parts:
            self.fail(f"{value!r}: give open=est, closed, open, open=N or open=P%, and/or warn or fail, e.g. --holes "
                      "open=10,fail", param, ctx)
        try:
            return (str(World.parse(worlds[0])) if worlds else DEFAULT_WORLD, acts[0] if acts else None)
        except ValueError as exc:
            self.fail(str(exc).removeprefix("--holes "), param, ctx)


def _holes_takes(text: str) -> bool:
    """Whether --holes takes ``text`` as its value: a --holes value (open=est, closed, open, open=N, open=P%,
    warn, fail, comma-separated), or a misspelt one (letters and commas only, no such file: its error names
    the grammar, not a missing qrels file)."""
    import os
    import re

    try:
        return HolesSpec().convert(text, None, None) is not None
    except click.BadParameter:
        return re.fullmatch(r"[A-Za-z,]+|[A-Za-z,]*open=[^/]*", text) is not None and not os.path.exists(text)


def _help_all(ctx, param, value) -> None:
    if value and not ctx.resilient_parsing:
        ctx.meta["help_all"] = True
        click.echo(ctx.get_help(), color=ctx.color)
        ctx.exit()


class BriefCommand(click.Command):
    """A command whose --help fits a screen: the options a first-time user needs, each with its short help
    (Brief), and a line on --help-all, which shows every option with its whole help (docs/cli.md holds
    --help-all)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.params.append(click.Option(["--help-all"], is_flag=True, expose_value=False, is_eager=True,
                                        callback=_help_all, help="Every option, with its whole help."))

    @property
    def brief(self) -> dict:
        """Parameter name -> its short help, for the options --help shows."""
        return {param.name: param.brief for param in self.params if getattr(param, "brief", None)}

    def format_options(self, ctx, formatter):
        if ctx.meta.get("help_all"):
            return super().format_options(ctx, formatter)
        brief = self.brief
        records = [(param.name, param.get_help_record(ctx)) for param in self.get_params(ctx)
                   if isinstance(param, click.Option)]
        shown = [(record[0], brief.get(name, record[1])) for name, record in records
                 if record and (name in brief or record[0].endswith(("--help", "--help-all")))]
        with formatter.section("Options"):
            formatter.write_dl(shown)
        formatter.write_paragraph()
        formatter.write_text(f"{sum(record is not None for _, record in records) - len(shown)} more options: "
                             f"{ctx.command_path} --help-all")


class HolesCommand(BriefCommand):
    """A command whose --holes takes a value only when the next argument is one: ``--holes QRELS RUN``
    reads QRELS as the qrels (click would take it as --holes' value), ``--holes open QRELS RUN`` as before."""

    def parse_args(self, ctx, args):
        out = list(args)
        for index, arg in enumerate(out):
            if arg == "--":  # positional arguments only from here
                break
            if arg == "--holes" and (index + 1 == len(out) or not _holes_takes(out[index + 1])):
                out[index] = f"--holes={DEFAULT_WORLD}"
        return super().parse_args(ctx, out)


holes_option = click.option(
    "--holes", type=HolesSpec(), is_flag=False, flag_value=DEFAULT_WORLD, default=None,
    help="Add LB(M) and UB(M) to every measure that has them: its smallest and largest value over every grade "
         "(0 to the qrels' largest) of the unjudged documents the runs of the command retrieved, one grade per "
         "document shared by the runs (docs/holes.md), and of documents no run retrieved as the world allows: "
         "'open=est' (--holes alone, the default): at most an estimated ceiling per query (the 95% upper limit "
         "of a yield curve fitted to the runs' judged documents); 'closed': none (the pooling assumption); "
         "'open': any number (LB of AP, R@k, Rprec, nDCG without a cutoff falls to 0); 'open=N': at most N "
         "unjudged documents per query, retrieved or not; 'open=P%': at most P% of the query's judged relevant "
         "documents.  With a gate (--fail-below, --baseline): a decision the holes could flip is "
         "reported ('warn', the default) or, with 'fail' (e.g. --holes fail, --holes open,fail), a passing "
         "one fails.")

holes_options = bundle(
    holes_option,
    click.option("--holes-samples", type=click.IntRange(min=1, max=MAX_DRAWS), default=None, metavar="N",
                 help="Bootstrap samples of the unjudged documents' grades (default 1000; seeded by --seed) for "
                      "BS(M), the mean estimate, and BSLO(M)/BSHI(M), the 2.5th/97.5th percentiles of the samples (Froebe "
                      "et al. 2023; a spread, not a 95% confidence interval: measured coverage in docs/holes.md).  With --holes, these join LB and UB of every measure but AP, GMAP and "
                      "Rprec (their spread never held half the later values there; -m 'BS(AP)' names one)."),
    choice("--holes-prior", "run pool mix", default="pool",
           help="Where BS draws a hole's grade from: the grades of the query's judgments ('pool', the default: "
                "the least error of the three on docs/holes.md's leave-one-run-out benchmark), of the run's judged documents within "
                "the cutoff ('run'), or the mean of the two ('mix')."),
)

holes_list_option = click.option(
    "--holes-list", "holes_list", type=click.IntRange(min=0, max=1_000_000), default=0, metavar="N",
    help="With --holes: name on stderr the N unjudged documents whose grades move the most bounds (judge "
         "these next): the sum over runs and measures of 1/rank within each measure's cutoff (docs/holes.md).")

allow_disjoint_option = click.option(
    "--allow-disjoint", is_flag=True,
    help="Evaluate a run that shares no query with QRELS (it scores 0); refused by default, as it is "
         "almost always the wrong qrels.")

# every command's --seed: the 64-bit range of the draws' keys (pipeline/blocks.py MAX_SEED), so that no seed
# wraps onto another and a negative one is refused by name before anything is read
SEED = click.IntRange(0, 2 ** 64 - 1)

seed_option = click.option("--seed", type=SEED, default=0, show_default=True,
                           help="Seed of every random procedure (Monte Carlo draws, resamples, tests, random starts).")

groups_option = click.option("--groups", type=click.Path(dir_okay=False),
                             help="LETOR group-size file (default QRELS.query).")


# Where the work runs: the output is the same either way (byte for byte).
parallel_options = bundle(
    click.option("-j", "--jobs", type=Jobs(), default="auto", show_default=True, metavar="N|auto",
                 help="Evaluate the runs (for eval also the query blocks of uncompressed runs) in N local worker "
                      "processes.  auto (or 0), the default: eval with two or more runs uses one worker per usable "
                      "core (the CPU affinity's) that other work is not keeping busy (Linux: the smaller of the "
                      "threads running now and the 1-minute load average), at most one per run; one run, one "
                      "free core, and compare, queries and "
                      "nrg (which read every run in this process) run here, as with -j 1.  Same output as -j 1, "
                      "Monte Carlo values included."),
    click.option("--scheduler", metavar="ADDRESS",
                 help="Run the same tasks on an existing Dask cluster (e.g. tcp://host:8786; needs the 'dask' "
                      "extra).  The workers get the runs' bytes as read here, never a path (a worker elsewhere "
                      "would read another file)."),
    click.option("--scheduler-timeout", type=FiniteFloat(min=0, min_open=True), default=10.0, show_default=True,
                 metavar="SECONDS",
                 help="Give up on --scheduler when no Dask scheduler has answered, or none of its workers joined, "
                      "within SECONDS."),
)


notes_option = choice(
    "--notes", "short all none", expose_value=False, cls=Brief, brief="Notes on stderr: short (each once), all, or none.",
    callback=lambda ctx, param, value: ctx.meta.__setitem__("notes", value),
    help="Notes on stderr: short, each once, a note that several runs share said once, naming them compactly (-q is "
         "trec_eval's per-query flag, so quiet is --notes none); all, every run's whole note; none, no notes (errors, "
         "the gate's verdict and --holes-list's documents are still printed).")


def output_options(formats, piped: str, note: str = ""):
    """-f/--format (``formats``; ``piped`` is the default when stdout is not a terminal), --precision, -o."""
    return bundle(
        click.option("-f", "--format", "fmt", type=click.Choice(list(formats)), cls=Brief,
                     brief=f"Default: table on a terminal, else {piped} (a pipe, a file)"
                           + ("; latex, markdown: a table for a paper." if "latex" in formats else "."),
                     help=f"Output format. Default: from -o FILE's extension (.json, .jsonl, .tsv, .csv, .txt), "
                          f"else table on a terminal, {piped} when piped.{note}"),
        click.option("--precision", type=click.IntRange(min=0, max=17),
                     help="Print numbers with N fixed decimals in every command (default: 4 in trec and table, full in tsv, csv, json)."),
        click.option("-o", "--output", type=click.Path(dir_okay=False), cls=Brief,
                     brief="Write to FILE; its extension picks the format (.tsv, .json, .md, ...).",
                     help="Write to FILE (atomically) instead of stdout."),
    )
