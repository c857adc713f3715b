"""The ``-f json`` document (with its JSON Schema) and ``-f jsonl`` lines."""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict

from .. import __version__
from ..inputs.errors import InputError
from .files import changed_since_start
from .gate_md import caption_notes
from .values import json_cell, metric_label, zscores

__all__ = ["JSON_SCHEMA", "sha256_file", "json_document", "format_json", "format_jsonl"]


_NUM_OR_NULL = {"type": ["number", "null"]}
_VALUES = {"type": "object", "additionalProperties": _NUM_OR_NULL}
_SPANS = {"type": "object", "additionalProperties": {"type": "array", "minItems": 2, "maxItems": 2, "items": _NUM_OR_NULL}}

def _closed(required: str, **properties) -> dict:
    """A JSON object holding only ``properties``, those named in ``required`` (space-separated) always."""
    return {"type": "object", "required": required.split(), "additionalProperties": False, "properties": properties}


JSON_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "ulnorm-eval -f json",
    "description": "One document per call. Measure keys are the canonical names (or trec_eval's with "
                   "--names trec); null marks an undefined value left out of the mean.",
    **_closed(
        "meta runs",
        meta=_closed(
            "tool version options inputs measures queries",
            tool={"const": "ulnorm-eval"},
            version={"type": "string"},
            options={"type": "object", "description": "every option that changes a number, plus the output's names "
                     "and precision"},
            inputs=_closed("qrels runs", qrels={"$ref": "#/$defs/file"},
                           runs={"type": "array", "items": {"$ref": "#/$defs/file"}}),
            measures={"type": "array", "items": {"type": "string"}, "description": "output columns in order"},
            random={"type": "string", "description": "what a random ranking is (the pool, in words, as the "
                                                     "table's caption says); present with random-ranking bounds"},
            all_row={"type": "string", "description": "what the summary of the normalisations is (mean EM over "
                                                      "N queries, ...), as the table's caption says"},
            queries={"type": "array", "description": "per run, in run order", "items": _closed(
                "run evaluated no_ranking not_in_qrels undefined left_out",
                run={"type": "string"},
                evaluated={"type": "integer", "minimum": 0, "description": "queries in the query set (the rows)"},
                no_ranking={"type": "array", "items": {"type": "string"},
                            "description": "query-set queries the run ranked nothing for (scored 0)"},
                not_in_qrels={"type": "array", "items": {"type": "string"},
                              "description": "run queries without judgements (ignored)"},
                undefined={"type": "object", "additionalProperties": {"type": "integer"},
                           "description": "measure -> queries where the variant is undefined"},
                left_out={"type": "object", "additionalProperties": {"type": "array", "items": {"type": "string"}},
                          "description": "measure -> queries left out of its mean (--undefined skip)"},
            )},
        ),
        runs={"type": "array", "items": _closed(
            "name summary stderr queries",
            name={"type": "string"},
            summary={**_VALUES, "description": "measure -> the 'all' row: the mean over queries (the family's rule: a "
                                               "sum for counts, trec_eval's geometric mean for GMAP); for every "
                                               "variant the mean of its per-query values"},
            stderr={**_VALUES, "description": "measure -> Monte Carlo standard error of the mean, only for Monte "
                                              "Carlo values"},
            interval={**_SPANS, "description": "normalisation -> [lo, hi]: the 95% randomisation interval of its "
                                               "summary minus a random ordering's (999 random orderings of each "
                                               "query's pool, seeded by options.seed; a pool the same for every run); "
                                               "one that contains 0 means the run cannot be told from a random "
                                               "ordering of the pool on these queries. Present when some measure "
                                               "has one"},
            ci={**_SPANS, "description": "with --ci (options.ci, the level): measure -> [lo, hi], the percentile "
                                         "bootstrap interval over the queries (1,000 resamples seeded by options.seed) "
                                         "of every summary that is a mean (plain measures and normalisations): the "
                                         "topics' sampling error"},
            queries={"type": "array", "items": _closed(
                "query values", query={"type": "string"}, values=_VALUES,
                stderr={**_VALUES, "description": "Monte Carlo standard errors"})},
        )},
    ),
    "$defs": {"file": _closed(
        "path sha256",
        path={"type": "string"},
        name={"type": "string", "description": "the run's name as printed"},
        sha256={"type": ["string", "null"], "pattern": "^[0-9a-f]{64}$",
                "description": "of the file's bytes as stored (compressed if it is); null for standard input"},
    )},
}


def sha256_file(path) -> str | None:
    """Hex SHA-256 of a file's bytes as stored; None for '-' or anything that is not a readable file."""
    if not isinstance(path, (str, os.PathLike)) or str(path) == "-" or not os.path.isfile(path):
        return None
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        before = os.fstat(handle.fileno())
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
        after = os.fstat(handle.fileno())
    # the checksum is of the bytes the numbers were computed from only if the file is the one the
    # command started with (a run replaced mid-evaluation gave old numbers with the new file's SHA-256)
    if changed_since_start(path, before) or changed_since_start(path, after):
        raise InputError(path, None, "changed while it was being evaluated (its size, time or inode differ from "
                                     "when the command started): the numbers and its SHA-256 would be of "
                                     "different bytes; evaluate it again")
    return digest.hexdigest()


def json_document(result, names: str = "canonical", precision: int | None = None) -> dict:
    """The ``-f json`` document as Python objects (see JSON_SCHEMA)."""
    labels = {metric: metric_label(metric, names, zscores(result)) for metric in result.metrics}
    paths = list(result.run_paths) or [run.name for run in result.runs]
    meta = {
        "tool": "ulnorm-eval",
        "version": __version__,
        "options": {**{key: value for key, value in asdict(result.options).items() if key not in ("holes_pool", "holes_ceiling", "holes_list", "holes_listed", "random_intervals")}, "names": names,
                    "precision": precision},
        "inputs": {
            "qrels": {"path": str(result.qrels_path), "sha256": sha256_file(result.qrels_path)},
            "runs": [{"path": str(path), "name": run.name, "sha256": sha256_file(path)}
                     for path, run in zip(paths, result.runs)],
        },
        "measures": list(labels.values()),
        "queries": [_query_lists(run, labels) for run in result.runs],
    }
    meta.update(caption_notes(result))
    runs = [_run_document(run, labels, precision) for run in result.runs]
    return {"meta": meta, "runs": runs}


def _query_lists(run, labels: dict) -> dict:
    """A run's entry of ``meta.queries``: the queries evaluated, without a ranking, not in the qrels,
    the undefined counts and the queries each measure left out (NaN)."""
    import numpy as np

    left_out = {}
    for metric, lab in labels.items():
        vals = run.values[metric]
        nan = np.isnan(vals) if vals.dtype.kind == "f" else np.zeros(len(vals), bool)  # text: relstring
        if nan.any():
            left_out[lab] = [qid for qid, left in zip(run.qids, nan) if left]
    return {
        "run": run.name, "evaluated": len(run.qids),
        "no_ranking": list(getattr(run, "missing_qids", [])),
        "not_in_qrels": list(getattr(run, "ignored_qids", [])),
        "undefined": {labels[metric]: int(count) for metric, count in run.undefined.items() if count},
        "left_out": left_out,
    }


def _run_document(run, labels: dict, precision) -> dict:
    """A run's entry of ``runs``: its summary (and standard errors, intervals), then every query's values."""
    queries = []
    for index, qid in enumerate(run.qids):
        row = {"query": qid, "values": {lab: json_cell(run.values[metric][index], precision) for metric, lab in labels.items()}}
        std_errors = {labels[metric]: json_cell(stderr_values[index], precision) for metric, stderr_values in run.stderr.items() if metric in labels}
        if std_errors:
            row["stderr"] = std_errors
        queries.append(row)
    doc = {
        "name": run.name,
        "summary": {lab: json_cell(run.mean[metric], precision) for metric, lab in labels.items()},
        "stderr": {labels[metric]: json_cell(std_error, precision)
                   for metric, std_error in run.mean_stderr.items() if metric in labels},
    }
    for key in ("interval", "ci"):
        spans = {labels[metric]: [json_cell(end, precision) for end in span]
                 for metric, span in getattr(run, key, {}).items() if metric in labels}
        if spans:
            doc[key] = spans
    doc["queries"] = queries
    return doc


def format_json(result, names: str = "canonical", precision: int | None = None, **_) -> str:
    """One JSON document: ``meta`` (version, options, inputs with sha256, query lists) and per-run
    summaries with every query's values; schema in :data:`JSON_SCHEMA`."""
    return json.dumps(json_document(result, names, precision), indent=1, allow_nan=False) + "\n"


def format_jsonl(result, names: str = "canonical", precision: int | None = None, **_) -> str:
    """One JSON object a line: ``{"run", "query", "measure", "value"}`` (plus ``"stderr"`` for Monte Carlo
    values), per run, query (``all`` last) and measure."""
    lines = []
    for run in result.runs:
        rows = [(qid, index) for index, qid in enumerate(run.qids)] + [("all", None)]
        mean_stderr = run.mean_stderr
        for qid, index in rows:
            for metric in result.metrics:
                value = run.mean[metric] if index is None else run.values[metric][index]
                obj = {"run": run.name, "query": qid, "measure": metric_label(metric, names, zscores(result)),
                       "value": json_cell(value, precision)}
                if metric in run.stderr:
                    std_error = mean_stderr[metric] if index is None else run.stderr[metric][index]
                    obj["stderr"] = json_cell(std_error, precision)
                lines.append(json.dumps(obj, allow_nan=False))
    return "\n".join(lines) + ("\n" if lines else "")
