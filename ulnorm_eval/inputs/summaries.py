"""Reading summarisation data (docs/summarisation.md): SummEval's paired JSONL, and a plain layout.

SummEval (Fabbri et al. 2021), ``model_annotations.aligned.paired.jsonl(.gz)``: a line per (article,
system) with ``id``, ``text`` (the source), ``references``, ``model_id``, ``decoded`` (the summary),
``expert_annotations`` and ``turker_annotations`` (coherence, consistency, fluency, relevance, 1-5).
Plain layout: a documents file, JSONL ``{"id", "source", "references"}`` or TSV ``id, source,
reference...``, then a file per system of ``id, summary`` (JSONL or TSV), named by its file.  Any file
may be compressed; errors raise :class:`InputError` (``FILE:LINE: reason``).
"""
from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field, replace

from .text import read_text
from .trec import InputError, refuse_reserved_id

__all__ = ["SummData", "DIMENSIONS", "read_summeval", "read_plain", "read_summaries"]

DIMENSIONS = ("coherence", "consistency", "fluency", "relevance")
SCALE = (1, 5)  # SummEval's ratings: a 1-5 Likert scale in every dimension (Fabbri et al. 2021)


@dataclass(kw_only=True)
class SummData:
    """Documents (sources and references) and systems' summaries, in first-appearance order:
    ``summaries[s][d]`` is system ``s``'s summary of document ``d`` (``None`` if it has none);
    ``ratings[kind][dim]`` (kind ``expert`` or ``crowd``) a list per system of lists per document of
    the mean rating (``None`` when unrated), empty for the plain layout."""

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
        return replace(self, doc_ids=_pick(self.doc_ids, docs), sources=_pick(self.sources, docs),
                       references=_pick(self.references, docs), summaries=[_pick(row, docs) for row in self.summaries],
                       ratings={key: {dim: [_pick(row, docs) for row in rows] for dim, rows in dims.items()}
                                for key, dims in self.ratings.items()})

    def only_systems(self, names) -> "SummData":
        """The data of the systems ``names`` (in that order)."""
        idx = [self.systems.index(name) for name in names]
        return replace(self, systems=_pick(self.systems, idx), summaries=_pick(self.summaries, idx),
                       ratings={key: {dim: _pick(rows, idx) for dim, rows in dims.items()} for key, dims in self.ratings.items()})


def _pick(values: list, indices: list) -> list:
    return [values[index] for index in indices]


def _lines(path: str):
    return read_text(path).removeprefix("\ufeff").split("\n")


def _json_rows(path: str, lines):
    for line_no, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(path, line_no, f"not JSON: {exc.msg}") from None
        if not isinstance(obj, dict):
            raise InputError(path, line_no, "expected a JSON object")
        yield line_no, obj


def _str(path, line_no, obj, key):
    value = obj.get(key)
    if not isinstance(value, str):
        raise InputError(path, line_no, f"'{key}' missing or not a string")
    return value


def _document(path, line_no, obj, source_key: str) -> tuple:
    """(id, source, references) of a document's record.  An empty source is refused (E is drawn from
    its words), as is an empty or blank reference (it would score every summary 0 and make E 0)."""
    did = _str(path, line_no, obj, "id")
    refuse_reserved_id(did, path, line_no, "document")
    source = _str(path, line_no, obj, source_key)
    if not source.strip():
        raise InputError(path, line_no, "the source document is empty (E is drawn from its words)")
    refs = obj.get("references", obj.get("reference"))
    refs = [refs] if isinstance(refs, str) else refs
    if not isinstance(refs, list) or not refs or not all(isinstance(ref, str) for ref in refs):
        raise InputError(path, line_no, "'references' missing or not a non-empty list of strings")
    for position, ref in enumerate(refs, 1):
        if not ref.strip():
            raise InputError(path, line_no, f"reference {position} is empty")
    return did, source, list(refs)


def _ratings(path, line_no, value):
    if value is None:
        return None
    if isinstance(value, str):  # some copies store the crowd ratings as a Python literal
        import ast

        try:
            value = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            value = ()  # refused below
    if not isinstance(value, list) or not all(isinstance(annotation, dict) for annotation in value):
        raise InputError(path, line_no, "annotations not a list of ratings")
    out = {}
    low, high = SCALE
    for dim in DIMENSIONS:
        vals = [annotation[dim] for annotation in value if dim in annotation]
        for rating in vals:
            if not isinstance(rating, (int, float)) or isinstance(rating, bool):
                raise InputError(path, line_no, f"non-numeric {dim} rating {rating!r}")
            if not math.isfinite(rating):
                raise InputError(path, line_no, f"{dim} rating {rating!r} is not a finite number")
            if not low <= rating <= high:
                raise InputError(path, line_no, f"{dim} rating {rating!r} is outside SummEval's {low}-{high} scale")
        out[dim] = (sum(vals) / len(vals)) if vals else None
    return out, len(value)


def natural_key(name: str) -> tuple:
    """Sort key of natural order: digit runs compare as numbers (M2 < M10)."""
    import re

    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", name) if part)


def read_summeval(path: str, lines: list) -> SummData:
    """SummEval's paired JSONL (its ``lines``): documents in first-appearance order, systems in natural
    order of their names (M0, M1, ..., M9, M10, ...: the file lists them M11, M13, M1, ...).  Ratings
    must be finite and on SummEval's 1-5 scale (:data:`SCALE`)."""
    docs, systems, summ, rat = {}, {}, {}, {}
    raters = {"expert": 0, "crowd": 0}
    for line_no, obj in _json_rows(path, lines):
        did, text, refs = _document(path, line_no, obj, "text")
        sys_, decoded = _str(path, line_no, obj, "model_id"), _str(path, line_no, obj, "decoded")
        if did in docs:
            if docs[did] != (text, refs):
                raise InputError(path, line_no, f"document {did}: source or references differ from an earlier line")
        else:
            docs[did] = (text, refs)
        systems.setdefault(sys_, None)
        if (sys_, did) in summ:
            raise InputError(path, line_no, f"duplicate summary of {did} by {sys_}")
        summ[(sys_, did)] = decoded
        for kind, key in (("expert", "expert_annotations"), ("crowd", "turker_annotations")):
            ratings_ = _ratings(path, line_no, obj.get(key))
            if ratings_ is not None:
                rat[(kind, sys_, did)] = ratings_[0]
                raters[kind] = max(raters[kind], ratings_[1])
    if not docs:
        raise InputError(path, None, "no summaries")
    sys_ids = sorted(systems, key=natural_key)
    ratings = {kind: {dim: [[(rat.get((kind, system, doc)) or {}).get(dim) for doc in docs] for system in sys_ids]
                      for dim in DIMENSIONS} for kind in ("expert", "crowd") if any(entry[0] == kind for entry in rat)}
    return _data(path, docs, sys_ids, [[summ.get((system, doc)) for doc in docs] for system in sys_ids],
                 ratings=ratings, raters=raters)


def _data(path: str, docs: dict, systems: list, summaries: list, **extra) -> SummData:
    """SummData of the documents ``docs`` (id -> (source, references)), in their order."""
    return SummData(path=path, doc_ids=list(docs), sources=[source for source, _ in docs.values()],
                    references=[refs for _, refs in docs.values()], systems=systems, summaries=summaries, **extra)


def _records(path: str, lines, keys: tuple, expected: str):
    """(line number, record) of each line of a JSONL file, or of a TSV file's columns named ``keys``
    (``references`` takes the remaining columns as a list)."""
    if _first(lines).lstrip().startswith("{"):
        yield from _json_rows(path, lines)
        return
    rest = keys[-1] == "references"
    for line_no, line in enumerate(lines, 1):
        line = line.rstrip("\r")
        if not line.strip():
            continue
        cols = line.split("\t")
        if len(cols) < len(keys) or (len(cols) > len(keys) and not rest):
            raise InputError(path, line_no, f"expected {expected}, got {len(cols)} tab-separated columns")
        if rest:
            cols = [*cols[:len(keys) - 1], cols[len(keys) - 1:]]
        yield line_no, dict(zip(keys, cols))


def system_name(path: str) -> str:
    name = os.path.basename(path)
    for ext in (".gz", ".bz2", ".xz", ".jsonl", ".json", ".tsv", ".txt"):  # in this order, each once
        if name.endswith(ext):
            name = name[: -len(ext)]
    return name or path


def read_plain(docs_path: str, system_paths, lines: list) -> SummData:
    """The plain layout: a documents file (its ``lines``) and one ``id, summary`` file per system.  Every
    file is read once, so one of them may be standard input."""
    docs = {}
    for line_no, obj in _records(docs_path, lines, ("id", "source", "references"),
                                 "id, source and at least one reference"):
        did, source, refs = _document(docs_path, line_no, obj, "source")
        if did in docs:
            raise InputError(docs_path, line_no, f"duplicate document id {did}")
        docs[did] = (source, refs)
    if not docs:
        raise InputError(docs_path, None, "no documents")
    systems, rows = [], []
    for system_path in system_paths:
        name = system_name(system_path)
        if name in systems:
            raise InputError(system_path, None, f"two system files named {name}")
        got = {}
        for line_no, record in _records(system_path, _lines(system_path), ("id", "summary"), "id<TAB>summary"):
            did, text = _str(system_path, line_no, record, "id"), _str(system_path, line_no, record, "summary")
            if did not in docs:
                raise InputError(system_path, line_no, f"unknown document id {did}")
            if did in got:
                raise InputError(system_path, line_no, f"duplicate summary of {did}")
            got[did] = text
        if not got:  # every mean would be NaN, printed as a result with exit 0
            raise InputError(system_path, None, "no summaries")
        systems.append(name)
        rows.append([got.get(doc) for doc in docs])
    return _data(docs_path, docs, systems, rows)


def _first(lines) -> str:
    return next((line for line in lines if line.strip()), "")


def read_summaries(data_path: str, system_paths=()) -> SummData:
    """SummEval's paired file (no system files; its first line a JSON object with ``decoded`` and
    ``model_id``) or the plain layout (documents file + system files)."""
    lines = _lines(data_path)  # once: it may be standard input
    try:
        first = json.loads(_first(lines) or "null")
    except json.JSONDecodeError:
        first = None
    if isinstance(first, dict) and "decoded" in first and "model_id" in first:
        if system_paths:
            raise InputError(system_paths[0], None, "system files are not used with SummEval's paired file "
                                                    "(it holds the summaries)")
        return read_summeval(data_path, lines)
    if not system_paths:
        raise InputError(data_path, None, "not SummEval's paired JSONL; the plain layout needs one "
                                          "'id, summary' file per system after the documents file")
    return read_plain(data_path, system_paths, lines)
