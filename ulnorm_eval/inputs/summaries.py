"""Reading summarisation data: SummEval's paired JSONL natively, and a plain layout like runs.

SummEval (Fabbri et al. 2021), ``model_annotations.aligned.paired.jsonl(.gz)``: one line per
(article, system) with ``id``, ``text`` (the source), ``references`` (list of str), ``model_id``,
``decoded`` (the summary), ``expert_annotations`` and ``turker_annotations`` (lists of dicts of
coherence, consistency, fluency, relevance, 1-5).

Plain layout: a documents file, JSONL (``{"id", "source", "references": [...]}``; ``reference`` as
one string is accepted) or TSV (``id<TAB>source<TAB>reference...``, one or more references), plus
one file per system of ``id, summary`` (JSONL ``{"id", "summary"}`` or TSV ``id<TAB>summary``),
the system named by its file (the base name without .gz/.bz2/.xz, .jsonl/.tsv/.txt).

Any file may be gzip/bzip2/xz compressed (recognised by its magic bytes).  Errors raise
:class:`InputError` (``FILE:LINE: reason``).
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

from .trec import InputError, read_bytes, refuse_reserved_id

__all__ = ["SummData", "DIMENSIONS", "read_summeval", "read_plain", "read_summaries", "is_summeval"]

DIMENSIONS = ("coherence", "consistency", "fluency", "relevance")
SCALE = (1, 5)  # SummEval's ratings: a 1-5 Likert scale in every dimension (Fabbri et al. 2021)


@dataclass
class SummData:
    """Documents (sources and references) and systems' summaries, in first-appearance order.

    ``summaries[s][d]`` is system ``s``'s summary of document ``d`` (``None`` if the system has none).
    ``ratings[kind][dim]`` (kind ``expert`` or ``crowd``) is a list per system of lists per document
    of the mean rating (``None`` when unrated); empty for the plain layout.
    """

    path: str
    doc_ids: list
    sources: list
    references: list
    systems: list
    summaries: list
    ratings: dict = field(default_factory=dict)
    raters: dict = field(default_factory=dict)

    def subset(self, docs) -> "SummData":
        """The data restricted to the document indices ``docs`` (in that order)."""
        docs = list(docs)
        ratings = {k: {d: [[row[i] for i in docs] for row in v] for d, v in dims.items()}
                   for k, dims in self.ratings.items()}
        return SummData(self.path, [self.doc_ids[i] for i in docs], [self.sources[i] for i in docs],
                        [self.references[i] for i in docs], list(self.systems),
                        [[row[i] for i in docs] for row in self.summaries], ratings, dict(self.raters))

    def only_systems(self, names) -> "SummData":
        idx = [self.systems.index(n) for n in names]
        ratings = {k: {d: [v[i] for i in idx] for d, v in dims.items()} for k, dims in self.ratings.items()}
        return SummData(self.path, list(self.doc_ids), list(self.sources), list(self.references),
                        [self.systems[i] for i in idx], [self.summaries[i] for i in idx], ratings,
                        dict(self.raters))


def _lines(path: str):
    from .text import check_text

    data = read_bytes(path)
    check_text(data, path)  # a lone CR (old Mac line ends: one long line) is refused as by every reader
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise InputError(path, line, "not UTF-8 text") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return text.split("\n")


def _json_rows(path: str, lines=None):
    for i, line in enumerate(_lines(path) if lines is None else lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(path, i, f"not JSON: {exc.msg}") from None
        if not isinstance(obj, dict):
            raise InputError(path, i, "expected a JSON object")
        yield i, obj


def _is_jsonl(lines) -> bool:
    for line in lines:
        if line.strip():
            return line.lstrip().startswith("{")
    return False


def is_summeval(path: str, lines=None) -> bool:
    """True when the first non-blank line is a JSON object with SummEval's ``decoded`` and ``model_id``.
    ``lines``: the file's lines when already read (standard input can be read once)."""
    for line in _lines(path) if lines is None else lines:
        if line.strip():
            try:
                obj = json.loads(line)
            except json.JSONDecodeError:
                return False
            return isinstance(obj, dict) and "decoded" in obj and "model_id" in obj
    return False


def _str(path, i, obj, key):
    v = obj.get(key)
    if not isinstance(v, str):
        raise InputError(path, i, f"'{key}' missing or not a string")
    return v


def _refs(path, i, obj, key="references"):
    v = obj.get(key)
    if v is None and isinstance(obj.get("reference"), str):
        v = obj["reference"]
    if isinstance(v, str):
        v = [v]
    if not isinstance(v, list) or not v or not all(isinstance(x, str) for x in v):
        raise InputError(path, i, f"'{key}' missing or not a non-empty list of strings")
    return _non_empty_refs(path, i, v)


def _non_empty_refs(path, i, refs) -> list:
    """A reference that is empty (or blank) would score every summary 0 and make E 0: refused."""
    for n, r in enumerate(refs, 1):
        if not r.strip():
            raise InputError(path, i, f"reference {n} is empty")
    return list(refs)


def _source(path, i, text):
    if not text.strip():
        raise InputError(path, i, "the source document is empty (E is drawn from its words)")
    return text


def _doc_id(path, i, did):
    refuse_reserved_id(did, path, i, "document")
    return did


def _ratings(path, i, value):
    if value is None:
        return None
    if isinstance(value, str):  # some copies store the crowd ratings as a Python literal
        import ast

        try:
            value = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            raise InputError(path, i, "annotations not a list of ratings") from None
    if not isinstance(value, list) or not all(isinstance(a, dict) for a in value):
        raise InputError(path, i, "annotations not a list of ratings")
    import math

    out = {}
    lo, hi = SCALE
    for dim in DIMENSIONS:
        vals = [a[dim] for a in value if dim in a]
        for x in vals:
            if not isinstance(x, (int, float)) or isinstance(x, bool):
                raise InputError(path, i, f"non-numeric {dim} rating {x!r}")
            if not math.isfinite(x):
                raise InputError(path, i, f"{dim} rating {x!r} is not a finite number")
            if not lo <= x <= hi:
                raise InputError(path, i, f"{dim} rating {x!r} is outside SummEval's {lo}-{hi} scale")
        out[dim] = (sum(vals) / len(vals)) if vals else None
    return out, len(value)


def natural_key(name: str) -> tuple:
    """Sort key of natural order: digit runs compare as numbers (M2 < M10)."""
    import re

    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"(\d+)", name) if p)


def read_summeval(path: str, lines=None) -> SummData:
    """SummEval's paired JSONL: documents in first-appearance order, systems in natural order of their
    names (M0, M1, M2, ..., M9, M10, ...: the file lists them M11, M13, M1, ...).  Ratings must be
    finite and on SummEval's 1-5 scale (:data:`SCALE`)."""
    docs, systems, summ, rat = {}, {}, {}, {}
    raters = {"expert": 0, "crowd": 0}
    for i, obj in _json_rows(path, lines):
        did, sys_ = _doc_id(path, i, _str(path, i, obj, "id")), _str(path, i, obj, "model_id")
        text, decoded = _source(path, i, _str(path, i, obj, "text")), _str(path, i, obj, "decoded")
        refs = _refs(path, i, obj)
        if did in docs:
            if docs[did] != (text, refs):
                raise InputError(path, i, f"document {did}: source or references differ from an earlier line")
        else:
            docs[did] = (text, refs)
        systems.setdefault(sys_, None)
        if (sys_, did) in summ:
            raise InputError(path, i, f"duplicate summary of {did} by {sys_}")
        summ[(sys_, did)] = decoded
        for kind, key in (("expert", "expert_annotations"), ("crowd", "turker_annotations")):
            r = _ratings(path, i, obj.get(key))
            if r is not None:
                rat[(kind, sys_, did)] = r[0]
                raters[kind] = max(raters[kind], r[1])
    if not docs:
        raise InputError(path, None, "no summaries")
    doc_ids, sys_ids = list(docs), sorted(systems, key=natural_key)
    ratings = {}
    for kind in ("expert", "crowd"):
        if any(k[0] == kind for k in rat):
            ratings[kind] = {dim: [[(rat.get((kind, s, d)) or {}).get(dim) for d in doc_ids] for s in sys_ids]
                             for dim in DIMENSIONS}
    return SummData(path, doc_ids, [docs[d][0] for d in doc_ids], [docs[d][1] for d in doc_ids], sys_ids,
                    [[summ.get((s, d)) for d in doc_ids] for s in sys_ids], ratings, raters)


def _tsv_rows(path: str, lines=None):
    for i, line in enumerate(_lines(path) if lines is None else lines, 1):
        line = line.rstrip("\r")
        if not line.strip():
            continue
        yield i, line.split("\t")


def system_name(path: str) -> str:
    name = os.path.basename(path)
    for ext in (".gz", ".bz2", ".xz"):
        if name.endswith(ext):
            name = name[: -len(ext)]
    for ext in (".jsonl", ".json", ".tsv", ".txt"):
        if name.endswith(ext):
            name = name[: -len(ext)]
    return name or path


def read_plain(docs_path: str, system_paths, lines=None) -> SummData:
    """The plain layout: a documents file and one ``id, summary`` file per system.  Every file is read
    once (``lines``: the documents file's, when already read), so one of them may be standard input."""
    docs = {}
    lines = _lines(docs_path) if lines is None else lines
    if _is_jsonl(lines):
        for i, obj in _json_rows(docs_path, lines):
            did = _doc_id(docs_path, i, _str(docs_path, i, obj, "id"))
            if did in docs:
                raise InputError(docs_path, i, f"duplicate document id {did}")
            docs[did] = (_source(docs_path, i, _str(docs_path, i, obj, "source")), _refs(docs_path, i, obj))
    else:
        for i, cols in _tsv_rows(docs_path, lines):
            if len(cols) < 3:
                raise InputError(docs_path, i, f"expected id, source and at least one reference, got {len(cols)} "
                                               "tab-separated columns")
            if cols[0] in docs:
                raise InputError(docs_path, i, f"duplicate document id {cols[0]}")
            docs[_doc_id(docs_path, i, cols[0])] = (_source(docs_path, i, cols[1]),
                                                     _non_empty_refs(docs_path, i, cols[2:]))
    if not docs:
        raise InputError(docs_path, None, "no documents")
    doc_ids = list(docs)
    systems, rows = [], []
    for sp in system_paths:
        name = system_name(sp)
        if name in systems:
            raise InputError(sp, None, f"two system files named {name}")
        got = {}
        sl = _lines(sp)
        rows_iter = (((i, (_str(sp, i, o, "id"), _str(sp, i, o, "summary"))) for i, o in _json_rows(sp, sl))
                     if _is_jsonl(sl) else ((i, _pair(sp, i, c)) for i, c in _tsv_rows(sp, sl)))
        for i, (did, text) in rows_iter:
            if did not in docs:
                raise InputError(sp, i, f"unknown document id {did}")
            if did in got:
                raise InputError(sp, i, f"duplicate summary of {did}")
            got[did] = text
        if not got:  # every mean would be NaN, printed as a result with exit 0
            raise InputError(sp, None, "no summaries")
        systems.append(name)
        rows.append([got.get(d) for d in doc_ids])
    return SummData(docs_path, doc_ids, [docs[d][0] for d in doc_ids], [docs[d][1] for d in doc_ids],
                    systems, rows)


def _pair(path, i, cols):
    if len(cols) != 2:
        raise InputError(path, i, f"expected id<TAB>summary, got {len(cols)} tab-separated columns")
    return cols[0], cols[1]


def read_summaries(data_path: str, system_paths=()) -> SummData:
    """SummEval's paired file (no system files) or the plain layout (documents file + system files)."""
    lines = _lines(data_path)  # once: it may be standard input
    if is_summeval(data_path, lines):
        if system_paths:
            raise InputError(system_paths[0], None, "system files are not used with SummEval's paired file "
                                                    "(it holds the summaries)")
        return read_summeval(data_path, lines)
    if not system_paths:
        raise InputError(data_path, None, "not SummEval's paired JSONL; the plain layout needs one "
                                          "'id, summary' file per system after the documents file")
    return read_plain(data_path, system_paths, lines)
