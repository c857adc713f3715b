"""Evaluation of summaries (docs/summarisation.md): ROUGE and BERTScore per (system, document) with E, I
and the UE variants, as the ranking evaluation's ``Result`` (a document is a query, a system a run).
The Monte Carlo standard error of E is ``SE(E(...))``; Algorithm 2's document score ``Hetero(BERTScore)``
(Feng 2023).
"""
from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field, replace

import numpy as np

from ..core import text_measures as tm
from ..core.records import VARIANTS as VARIANT_RECORDS
from ..core.text_families import SUMM_DEFAULT_VARIANTS, TEXT_FAMILIES, score_choices, summ_variants
from ..inputs.errors import InputError, RefusedAlone, env_limit
from .blocks import undefined_note
from .evaluate import Options, Result, RunResult

__all__ = ["TextMeasure", "TextMetric", "SummOptions", "parse_text_metric", "resolve_text_metrics",
           "evaluate_summaries", "BASES", "SummRequest", "SummOutcome", "summ_for_request"]

BASES = tuple(TEXT_FAMILIES)  # the measure records (core/text_families.py)
DEFAULT_MEASURES = tuple(name for name, f in TEXT_FAMILIES.items() if f.default)
DEFAULT_VARIANTS = SUMM_DEFAULT_VARIANTS
SCORE_COLUMNS = {"precision": 0, "recall": 1, "f": 2}  # of the (P, R, F) score triples


def _variant_names() -> dict:
    """Every name summ reads for a variant -> summ's name of it (core/text_families.summ_variants): its
    own, the record's (UL1 for UE1), and I for IUB (Feng 2023's letter)."""
    shown = summ_variants()
    return {s: s for s in shown} | {name: s for s, name in shown.items()} | ({"I": "IUB"} if "IUB" in shown else {})


class UnknownTextMeasure(ValueError):
    pass


@dataclass(frozen=True)
class TextMeasure:
    base: str
    score: str = "f"

    # what the ranking renderers read of a registry Measure: no family record, a plain mean
    record = None
    summary = "mean"

    def __str__(self):
        return self.base if self.score == "f" else f"{self.base}(score={self.score})"

    def trec_name(self):
        return str(self).lower().replace("(score=", "_").replace(")", "")


@dataclass(frozen=True)
class TextMetric:
    measure: TextMeasure
    variant: str | None = None

    def __str__(self):
        if self.variant == "SE":
            return f"SE(E({self.measure}))"
        return str(self.measure) if self.variant is None else f"{self.variant}({self.measure})"

    summary = "mean"  # every summarisation score and variant is averaged over documents

    def trec_name(self):
        t = self.measure.trec_name()
        return t if self.variant is None else f"{self.variant.lower()}_{t}"


def parse_text_metric(name: str) -> TextMetric:
    """A summarisation metric: a family of core/text_families.py, optionally ``(score=...)``, or a
    variant record the families take around one; ``SE(E(...))`` and ``Hetero(BERTScore)``."""
    s = name.strip()
    m = re.fullmatch(r"([A-Za-z0-9]+)\((.+)\)", s)
    variants = _variant_names()
    if m and m.group(1).upper() in (*variants, "SE", "HETERO"):
        return _wrapped(name, variants.get(m.group(1).upper(), m.group(1).upper()), m.group(2))
    bases = {b.lower(): b for b in TEXT_FAMILIES}
    m = re.fullmatch(rf"({'|'.join(re.escape(b) for b in TEXT_FAMILIES)})"
                     rf"(?:\(score=({score_choices()}|p|r|f1)\))?", s, re.I)
    if not m:
        raise UnknownTextMeasure(f"unknown summarisation measure {name!r} ({', '.join(TEXT_FAMILIES)}, "
                                 f"optionally (score={score_choices()}), wrapped by {', '.join(summ_variants())})")
    score = {"p": "precision", "r": "recall", "f1": "f", None: "f"}.get(m.group(2), m.group(2))
    return TextMetric(measure=TextMeasure(base=bases[m.group(1).lower()], score=score))


def _wrapped(name: str, v: str, inner_text: str) -> TextMetric:
    """Variant ``v`` (summ's name; SE, HETERO) around ``inner_text``."""
    inner = parse_text_metric(inner_text)
    if v == "HETERO":
        if inner.measure.base != "BERTScore" or inner.variant:
            raise UnknownTextMeasure(f"Hetero() takes BERTScore, not {inner_text}")
        return TextMetric(measure=TextMeasure(base="BERTScore"), variant="Hetero")
    if v == "SE":
        if inner.variant != "E":
            raise UnknownTextMeasure(f"SE() takes E(...), not {inner_text}")
        return TextMetric(measure=inner.measure, variant="SE")
    if inner.variant:
        raise UnknownTextMeasure(f"variants do not nest: {name}")
    return TextMetric(measure=inner.measure, variant=v)


def resolve_text_metrics(names=None, variants=None) -> list:
    names = list(names) if names else list(DEFAULT_MEASURES)
    variants = list(DEFAULT_VARIANTS) if variants is None else variants
    out = []
    for n in names:
        m = parse_text_metric(n)
        group = [m] if m.variant else [m] + [TextMetric(measure=m.measure, variant=_variant(v)) for v in variants]
        for x in group:
            if x not in out:
                out.append(x)
    return out


def _variant(v: str) -> str:
    u = v.strip().upper()
    names = _variant_names()
    if u not in names:
        raise UnknownTextMeasure(f"unknown variant {v!r} ({', '.join(s.lower() for s in summ_variants())})")
    return names[u]


@dataclass(kw_only=True)
class SummOptions:
    stem: bool = False
    combine: str = "max"
    length: str = "reference"  # E's summary length: each reference's (E per document, Feng 2023), or the candidate's
    upper: str = "one"  # I: the metric's maximum 1, or the extractive oracle (ROUGE-1)
    draws: int = 200
    seed: int = 0
    undefined: str = "zero"
    model: str | None = None
    layer: int | None = None
    k: int | None = None
    batch_size: int = 64


@dataclass(kw_only=True)
class _Cells:
    """Per (system, document) values of one base measure: A, E, E's SE (0 when E is exact, NaN when
    not computed), I."""

    A: np.ndarray
    E: np.ndarray
    SE: np.ndarray
    I: np.ndarray


def _rouge_cells(data, measures, opts: SummOptions, need_e: bool = True, advance=None):
    """A, E, SE, I of every ROUGE measure; ``need_e=False`` (no variant built on E asked for): E and
    its Monte Carlo draws are skipped (left NaN).  ``advance(1)`` is called after each document."""
    tok = tm.tokenizer(opts.stem)
    S, D = len(data.systems), len(data.doc_ids)
    cells = {m: _Cells(**{x: np.full((S, D), np.nan) for x in ("A", "E", "SE", "I")}) for m in measures}
    types = sorted({m.base for m in measures})
    for j in range(D):
        if advance is not None and j:
            advance(1)
        got = _document(data, j, tok, types, opts, need_e)
        if got is None:
            continue
        doc, have, A, uniq, inv, exact1, mc = got
        rows = np.zeros(len(uniq), dtype=np.int64) if opts.length == "reference" else np.arange(len(uniq))
        for m in measures:  # A; E and its SE; I (1, or ROUGE-1's extractive oracle of the candidate's length)
            k, cell = SCORE_COLUMNS[m.score], cells[m]
            cell.A[have, j] = A[m.base][k]
            if need_e and m.base == "ROUGE-1" and exact1:  # exact: SE 0 (a NaN would print as a missing value)
                cell.E[have, j] = np.array([tm.expected_rouge1(doc, int(L), opts.combine, opts.length)[k] for L in uniq])[inv]
                cell.SE[have, j] = 0.0
            elif need_e:  # Monte Carlo, by each reference's length (one row) or by each candidate length
                mean, se = mc[m.base]
                cell.E[have, j], cell.SE[have, j] = mean[rows, k][inv], se[rows, k][inv]
            oracle = opts.upper == "oracle" and m.base == "ROUGE-1"
            cell.I[have, j] = np.array([tm.oracle_rouge1(doc, int(L), opts.combine)[k] for L in uniq])[inv] if oracle else 1.0
    if advance is not None and D:
        advance(1)
    return cells


def _document(data, j: int, tok, types: list, opts: SummOptions, need_e: bool):
    """Document ``j`` encoded, the systems that summarised it, their ROUGE scores, the distinct candidate
    lengths and each candidate's among them, whether ROUGE-1's E is exact (one reference, or not
    ``--combine max``) and the Monte Carlo E of the others; None when no system summarised it."""
    doc = tm.encode_document(tok.tokenize(data.sources[j]), [tok.tokenize(r) for r in data.references[j]])
    have = [s for s in range(len(data.systems)) if data.summaries[s][j] is not None]
    if not have:
        return None
    _check_tokens(data, j, doc, need_e)
    cands = [tm.encode(doc.vocab, tok.tokenize(data.summaries[s][j])) for s in have]
    lens = np.array([len(c) for c in cands])
    uniq, inv = np.unique(lens, return_inverse=True)
    exact1 = opts.combine != "max" or len(doc.refs) == 1
    mc_types = tuple(t for t in types if t != "ROUGE-1" or not exact1) if need_e else ()
    if "ROUGE-L" in types:
        _check_lcs(data, j, have, lens, doc, opts, "ROUGE-L" in mc_types)
    A = tm.rouge_scores(doc, cands, opts.combine, types)
    mc = tm.expected_mc(doc, uniq, opts.combine, opts.draws, opts.seed + j, opts.length, mc_types) if mc_types else {}
    return doc, have, A, uniq, inv, exact1, mc


def _check_tokens(data, j: int, doc, need_e: bool) -> None:
    """Refuse a reference (or, when E is asked for, a source) in which ROUGE's tokeniser (a-z and 0-9
    after lowercasing) finds no word: every summary would score 0 against it, E would be 0."""
    why = "rouge-score's tokeniser keeps only the letters a-z and the digits 0-9"
    for n, r in enumerate(doc.refs, 1):
        if not len(r):
            raise InputError(data.path, None, f"document {data.doc_ids[j]!r}: reference {n} has no word ROUGE "
                                              f"counts ({why})")
    if need_e and not len(doc.source):
        raise InputError(data.path, None, f"document {data.doc_ids[j]!r}: the source has no word ROUGE counts, so "
                                          f"E (drawn from its words) is undefined ({why})")


def _check_lcs(data, j: int, have: list, lens, doc, opts: SummOptions, draws: bool = True) -> None:
    """Refuse a document whose ROUGE-L (its summaries', or E's Monte Carlo draws') would fill more than
    ``tm.MAX_LCS_CELLS`` LCS cells: time and memory grow with summary x reference tokens."""
    longest = int(lens.max(initial=0))
    ref_w = int(max((len(r) for r in doc.refs), default=0))
    mc_w = ref_w if opts.length == "reference" else longest
    plain = tm.lcs_cells(longest, len(have), doc.refs)
    mc = tm.lcs_cells(mc_w, opts.draws, doc.refs) if draws else 0
    limit = env_limit("ULNORM_EVAL_MAX_LCS_CELLS", tm.MAX_LCS_CELLS)  # a bad value: refused with its name
    if max(plain, mc) <= limit:
        return
    s = have[int(np.argmax(lens))]
    what = (f"E's {opts.draws} Monte Carlo draws (--draws) of {mc_w:,} tokens" if mc > plain
            else f"{len(have)} summaries of up to {longest:,} tokens")
    raise InputError(data.path, None,
                     f"document {data.doc_ids[j]!r}: ROUGE-L of {what} against {len(doc.refs)} reference(s) of up "
                     f"to {ref_w:,} tokens needs {max(plain, mc):.3g} LCS cells, more than the limit of {limit:.3g} "
                     f"(ULNORM_EVAL_MAX_LCS_CELLS; time and memory grow with it); longest summary: system "
                     f"{data.systems[s]!r}, {longest:,} tokens (a whole document given by mistake?); raise the "
                     "limit to compute it anyway")


def _variant_values(c: _Cells, variant: str):
    """(values, undefined mask) of a variant (summ's name) from the cells: a bound is E or I, a ratio
    the record's normaliser of (A, I, E) (core/variants.py; no worst bound W for summaries)."""
    fine = np.zeros(c.A.shape, bool)
    if variant in (None, "SE"):
        return (c.A if variant is None else c.SE), fine
    record = VARIANT_RECORDS[summ_variants()[variant]]
    if record.kind == "bound":
        return {"E": c.E, "IUB": c.I}[record.bound], fine
    return record.normalise(c.A, c.I, c.E, None)


def evaluate_summaries(data, metrics, opts: SummOptions, bert=None, advance=None):
    """A ranking-style ``Result``: a run per system, a query per document.  ``bert``: the BertScores of
    a BERTScore metric; ``advance(1)`` (a progress bar's) is called after each document."""
    metrics = list(metrics)
    cells = _text_cells(data, metrics, opts, bert, advance)
    expanded = []
    for m in metrics:
        expanded.append(m)
        if m.variant == "E" and (np.nan_to_num(cells[m.measure].SE) > 0).any():  # some E is a Monte Carlo estimate
            se = TextMetric(measure=m.measure, variant="SE")  # an E estimated by Monte Carlo reports its standard error next to it
            if se not in metrics and se not in expanded:
                expanded.append(se)
    runs = [_system_result(data, s, expanded, cells, opts, bert) for s in range(len(data.systems))]
    return Result(metrics=expanded, runs=runs, options=Options(undefined=opts.undefined, seed=opts.seed),
                  qrels_path=data.path, run_paths=[data.path] * len(runs))


def _text_cells(data, metrics: list, opts: SummOptions, bert, advance=None) -> dict:
    """measure -> its _Cells (A, E, I and the standard error of E, per system and document): ROUGE's
    computed here (``advance(1)`` after each document), BERTScore's taken from ``bert``."""
    rouge_measures = sorted({m.measure for m in metrics if m.measure.base.startswith("ROUGE")}, key=str)
    need_e = any(m.variant not in (None, "IUB") for m in metrics if m.measure.base.startswith("ROUGE"))
    cells = _rouge_cells(data, rouge_measures, opts, need_e, advance) if rouge_measures else {}
    if any(m.measure.base == "BERTScore" for m in metrics):
        if bert is None:
            raise ValueError("BERTScore needs the bert-score cells")
        for m in {m.measure for m in metrics if m.measure.base == "BERTScore"}:
            k = SCORE_COLUMNS[m.score]
            cells[m] = _Cells(A=bert.A[..., k], E=bert.E[..., k], SE=np.full(bert.A.shape[:2], np.nan),
                              I=np.ones(bert.A.shape[:2]))
    return cells


def _system_result(data, s: int, metrics: list, cells: dict, opts: SummOptions, bert):
    """The RunResult of system ``s``: a query per document it summarised."""
    name = data.systems[s]
    have = np.array([x is not None for x in data.summaries[s]])
    qids = [d for d, h in zip(data.doc_ids, have) if h]
    values, mean, undefined, stderr, masks = {}, {}, {}, {}, {}
    for m in metrics:
        if m.variant == "Hetero":
            v = np.asarray(bert.hetero, dtype=np.float64)[have]
            und = np.zeros(len(v), bool)
        else:
            vals, und = _variant_values(cells[m.measure], m.variant)
            v, und = np.asarray(vals[s])[have].astype(np.float64), np.asarray(und[s])[have]
        if und.any():
            undefined[m], masks[m] = int(und.sum()), und
            v = np.where(und, 0.0 if opts.undefined == "zero" else np.nan, v)
        values[m] = v
        mean[m] = float(np.nanmean(v)) if np.isfinite(v).any() else float("nan")  # every variant's: the mean
        if m.variant == "E" and (np.nan_to_num(cells[m.measure].SE[s][have]) > 0).any():
            stderr[m] = cells[m.measure].SE[s][have]
    missing = [d for d, h in zip(data.doc_ids, have) if not h]
    note = undefined_note(name, undefined, Options(undefined=opts.undefined), unit="documents")
    return RunResult(name=name, qids=qids, values=values, mean=mean, stderr=stderr, undefined=undefined,
                     undefined_queries=masks, missing_qids=missing, notes=[note] if note else [])


@dataclass(frozen=True, kw_only=True)
class SummRequest:
    """What `ulnorm-eval summ` asks for (docs/summarisation.md): the data and systems, measures and
    variants (None: the defaults), --fail-below texts, the scoring options and the document selection."""

    data: str
    systems: tuple = ()
    measures: list | None = None
    variants: list | None = None
    thresholds: tuple = ()  # METRIC=VALUE texts
    options: SummOptions = field(default_factory=SummOptions)
    only_systems: str | None = None  # 'abstractive' or a comma-separated list
    max_docs: int | None = None
    subset: tuple | None = None  # (hetero|homo, N): Algorithm 2's documents
    order: str = "increasing"
    token_ties: str = "last"
    correlate: bool = False
    ratings: str | None = None
    mc_repeats: int = 0
    progress: object = None  # the command line's bars (render.progress: step_bar, work_bar); None: none
    abstractive: tuple = ()  # the systems --systems abstractive names


@dataclass(kw_only=True)
class SummOutcome:
    """What a summarisation request produced: the result, the data read (after selection), the gate's
    thresholds as (metric, value), and the Monte Carlo repeats (--correlate --mc-repeats)."""

    result: object
    data: object
    thresholds: list
    repeats: list


def _thresholds(texts) -> list:
    """--fail-below METRIC=VALUE texts -> (metric, value); refused alone, with the text."""
    out = []
    for t in texts:
        name, sep, val = t.rpartition("=")
        try:
            value = float(val) if "_" not in val else None  # Python reads 1_0 as 10
        except ValueError:
            value = None
        if value is None or not sep or not name.strip():
            raise RefusedAlone(f"--fail-below {t!r}: expected METRIC=VALUE, e.g. 'UE2(ROUGE-1)=0.15'")
        try:
            out.append((parse_text_metric(name), value))
        except ValueError as exc:
            raise RefusedAlone(f"--fail-below {t!r}: {exc}") from exc
    return out


def _select(request: SummRequest, d, notes: list):
    """The documents and systems asked for: the first --docs N, then --systems."""
    if request.max_docs is not None and request.max_docs < len(d.doc_ids):  # a quick look: the first N documents
        notes.append(f"{request.data}: --docs {request.max_docs}: the first {request.max_docs} of "
                     f"{len(d.doc_ids)} documents only")
        d = d.subset(range(request.max_docs))
    if request.only_systems:
        want = list(request.abstractive) if request.only_systems == "abstractive" else \
            list(dict.fromkeys(x.strip() for x in request.only_systems.split(",") if x.strip()))
        unknown = [x for x in want if x not in d.systems]
        if unknown:
            raise RefusedAlone(f"{request.data}: no system {unknown[0]} (systems: {', '.join(d.systems)})")
        d = d.only_systems(want)
    return d


def _bertscore(request: SummRequest, d, metrics):
    """(data, BERTScore cells or None): --subset's documents ranked by Algorithm 2 before any summary
    is scored, then BERTScore of every summary when a metric needs it."""
    if not (any(m.measure.base == "BERTScore" for m in metrics) or request.subset is not None):
        return d, None
    from ..core import bertscore as bs

    opts = request.options
    step = request.progress.step_bar if request.progress else False
    try:
        scorer = bs.make_scorer(opts.model, opts.layer, opts.batch_size)
    except (ImportError, ValueError, OSError) as exc:
        raise RefusedAlone(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from exc
    if request.subset is not None:  # ranked from the documents alone, before any summary is scored
        kind, n = request.subset
        if n > len(d.doc_ids):
            raise RefusedAlone(f"--subset {kind} {n}: only {len(d.doc_ids)} documents")
        het = bs.heterogeneity(d, scorer, None if opts.k == "candidate" else opts.k, step,
                               order=request.order, ties=request.token_ties)
        ranked = np.argsort(het, kind="stable")
        d = d.subset(sorted(ranked[:n] if kind == "hetero" else ranked[::-1][:n]))
    bert = None
    if any(m.measure.base == "BERTScore" for m in metrics):
        bert = bs.score_documents(d, scorer, opts.k, order=request.order, ties=request.token_ties,
                                  progress=step)
    return d, bert


def summ_for_request(request: SummRequest, notes: list) -> SummOutcome:
    """Read and select the data of ``request``, score every summary and :func:`evaluate_summaries`;
    ``notes`` hears the notes.  RefusedAlone for an error said alone, InputError or ValueError else."""
    from ..inputs.summaries import read_summaries

    thresholds = _thresholds(request.thresholds)
    metrics = resolve_text_metrics(request.measures, request.variants)
    metrics += [m for m, _ in thresholds if m not in metrics]
    d = _select(request, read_summaries(request.data, list(request.systems)), notes)
    missing = sum(x is None for row in d.summaries for x in row)
    if missing:
        notes.append(f"{request.data}: {missing} (system, document) pairs have no summary; left out of the means")
    opts = request.options
    if opts.upper == "oracle" and any(m.measure.base != "ROUGE-1" for m in metrics if m.variant):
        notes.append("--upper oracle is derived for ROUGE-1 only; ROUGE-2, ROUGE-L and BERTScore keep I = 1")
    d, bert = _bertscore(request, d, metrics)
    if request.correlate and not d.ratings:
        raise RefusedAlone(f"{request.data}: no human ratings to correlate with (SummEval's paired file has them)")
    if request.correlate and request.ratings not in d.ratings:
        raise RefusedAlone(f"{request.data}: no {request.ratings} ratings")
    rounds = 1 + (request.mc_repeats if request.correlate else 0)
    rouge = any(m.measure.base.startswith("ROUGE") for m in metrics)
    # one bar, with the time left, over the documents of every round (ROUGE and its Monte Carlo E)
    bar = request.progress.work_bar if request.progress else lambda *_: contextlib.nullcontext(lambda *a, **k: None)
    with bar(rouge, "ROUGE and its Monte Carlo E (documents)", len(d.doc_ids) * rounds) as advance:
        result = evaluate_summaries(d, metrics, opts, bert, advance)
        notes.extend(n for rr in result.runs for n in rr.notes)  # undefined variants: scored 0 or left out
        repeats = [evaluate_summaries(d, metrics, replace(opts, seed=opts.seed + r), bert, advance)
                   for r in range(1, rounds)]
    return SummOutcome(result=result, data=d, thresholds=thresholds, repeats=repeats)
