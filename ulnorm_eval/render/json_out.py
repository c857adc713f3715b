"""The ``-f json`` document (with its JSON Schema) and ``-f jsonl`` lines."""
from __future__ import annotations

import os
from dataclasses import asdict

from .values import json_value, mean_stderr, metric_label, zscores

__all__ = ["JSON_SCHEMA", "sha256_file", "json_document", "format_json", "format_jsonl"]


_NUM_OR_NULL = {"type": ["number", "null"]}
_VALUES = {"type": "object", "additionalProperties": _NUM_OR_NULL}

JSON_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "ulnorm-eval -f json",
    "description": "One document per call. Measure keys are the canonical names (or trec_eval's with "
                   "--names trec); null marks an undefined value left out of the mean.",
    "type": "object",
    "required": ["meta", "runs"],
    "additionalProperties": False,
    "properties": {
        "meta": {
            "type": "object",
            "required": ["tool", "version", "options", "inputs", "measures", "queries"],
            "additionalProperties": False,
            "properties": {
                "tool": {"const": "ulnorm-eval"},
                "version": {"type": "string"},
                "options": {"type": "object", "description": "every option that changes a number, plus "
                            "the output's names and precision"},
                "inputs": {
                    "type": "object", "required": ["qrels", "runs"], "additionalProperties": False,
                    "properties": {
                        "qrels": {"$ref": "#/$defs/file"},
                        "runs": {"type": "array", "items": {"$ref": "#/$defs/file"}},
                    },
                },
                "measures": {"type": "array", "items": {"type": "string"},
                             "description": "output columns in order"},
                "queries": {
                    "type": "array", "description": "per run, in run order",
                    "items": {
                        "type": "object",
                        "required": ["run", "evaluated", "no_ranking", "not_in_qrels", "undefined", "left_out"],
                        "additionalProperties": False,
                        "properties": {
                            "run": {"type": "string"},
                            "evaluated": {"type": "integer", "minimum": 0,
                                          "description": "queries in the query set (the rows)"},
                            "no_ranking": {"type": "array", "items": {"type": "string"},
                                           "description": "query-set queries the run ranked nothing for (scored 0)"},
                            "not_in_qrels": {"type": "array", "items": {"type": "string"},
                                             "description": "run queries without judgements (ignored)"},
                            "undefined": {"type": "object", "additionalProperties": {"type": "integer"},
                                          "description": "measure -> queries where the variant is undefined"},
                            "left_out": {"type": "object",
                                         "additionalProperties": {"type": "array", "items": {"type": "string"}},
                                         "description": "measure -> queries left out of its mean "
                                                        "(--undefined skip)"},
                        },
                    },
                },
            },
        },
        "runs": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["name", "summary", "stderr", "queries"],
                "additionalProperties": False,
                "properties": {
                    "name": {"type": "string"},
                    "summary": {**_VALUES, "description": "measure -> the 'all' row: the mean over queries (the "
                                                         "family's rule: a sum for counts, trec_eval's geometric "
                                                         "mean for GMAP); for UL1, UL2, MM, EB, EM and UEW under "
                                                         "--norm-all means (options.norm_all) the formula applied to "
                                                         "the means of the value, E, IUB and WLB"},
                    "stderr": {**_VALUES, "description": "measure -> Monte Carlo standard error of the mean, "
                                                        "only for Monte Carlo values"},
                    "interval": {"type": "object",
                                 "additionalProperties": {"type": "array", "minItems": 2, "maxItems": 2,
                                                          "items": {"type": ["number", "null"]}},
                                 "description": "measure -> [lo, hi]: the 95% percentile bootstrap interval over "
                                                "the queries (1,000 resamples seeded by options.seed) of the "
                                                "summary of UL1, UL2, MM, EB, EM and UEW under --norm-all means; "
                                                "one that contains the variant's random value (0; EB: 1) means "
                                                "the run cannot be told from a random ranking on these queries. "
                                                "Present when some measure has one"},
                    "queries": {
                        "type": "array",
                        "items": {
                            "type": "object", "required": ["query", "values"], "additionalProperties": False,
                            "properties": {
                                "query": {"type": "string"},
                                "values": _VALUES,
                                "stderr": {**_VALUES, "description": "Monte Carlo standard errors"},
                            },
                        },
                    },
                },
            },
        },
    },
    "$defs": {
        "file": {
            "type": "object", "required": ["path", "sha256"], "additionalProperties": False,
            "properties": {
                "path": {"type": "string"},
                "name": {"type": "string", "description": "the run's name as printed"},
                "sha256": {"type": ["string", "null"], "pattern": "^[0-9a-f]{64}$",
                           "description": "of the file's bytes as stored (compressed if it is); "
                                          "null for standard input"},
            },
        },
    },
}


def sha256_file(path) -> str | None:
    """Hex SHA-256 of a file's bytes as stored; None for '-' or anything that is not a readable file."""
    if not isinstance(path, (str, os.PathLike)) or str(path) == "-" or not os.path.isfile(path):
        return None
    import hashlib

    from ..inputs.errors import InputError
    from .files import changed_since_start

    h = hashlib.sha256()
    with open(path, "rb") as fh:
        before = os.fstat(fh.fileno())
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
        after = os.fstat(fh.fileno())
    # the checksum is of the bytes the numbers were computed from only if the file is the one the
    # command started with (a run replaced mid-evaluation gave old numbers with the new file's SHA-256)
    if changed_since_start(path, before) or changed_since_start(path, after):
        raise InputError(path, None, "changed while it was being evaluated (its size, time or inode differ from "
                                     "when the command started): the numbers and its SHA-256 would be of "
                                     "different bytes; evaluate it again")
    return h.hexdigest()


def json_document(result, names: str = "canonical", precision: int | None = None) -> dict:
    """The ``-f json`` document as Python objects (see JSON_SCHEMA)."""
    import numpy as np

    from .. import __version__

    labels = {m: metric_label(m, names, zscores(result)) for m in result.metrics}
    paths = list(result.run_paths) or [rr.name for rr in result.runs]
    meta = {
        "tool": "ulnorm-eval",
        "version": __version__,
        "options": {**{k: v for k, v in asdict(result.options).items() if k != "holes_pool"}, "names": names,
                    "precision": precision},
        "inputs": {
            "qrels": {"path": str(result.qrels_path), "sha256": sha256_file(result.qrels_path)},
            "runs": [{"path": str(p), "name": rr.name, "sha256": sha256_file(p)}
                     for p, rr in zip(paths, result.runs)],
        },
        "measures": list(labels.values()),
        "queries": [],
    }
    runs = []
    for rr in result.runs:
        left_out = {}
        for m, lab in labels.items():
            vals = rr.values[m]
            nan = np.isnan(vals) if vals.dtype.kind == "f" else np.zeros(len(vals), bool)  # text: relstring
            if nan.any():
                left_out[lab] = [q for q, x in zip(rr.qids, nan) if x]
        meta["queries"].append({
            "run": rr.name, "evaluated": len(rr.qids),
            "no_ranking": list(getattr(rr, "missing_qids", [])),
            "not_in_qrels": list(getattr(rr, "ignored_qids", [])),
            "undefined": {labels[m]: int(n) for m, n in rr.undefined.items() if n},
            "left_out": left_out,
        })
        queries = []
        for i, q in enumerate(rr.qids):
            row = {"query": q, "values": {lab: json_value(rr.values[m][i], precision) for m, lab in labels.items()}}
            se = {labels[m]: json_value(s[i], precision) for m, s in rr.stderr.items() if m in labels}
            if se:
                row["stderr"] = se
            queries.append(row)
        doc = {
            "name": rr.name,
            "summary": {lab: json_value(rr.mean[m], precision) for m, lab in labels.items()},
            "stderr": {labels[m]: json_value(mean_stderr(rr.values[m], s), precision)
                       for m, s in rr.stderr.items() if m in labels},
        }
        interval = {labels[m]: [json_value(x, precision) for x in ci]
                    for m, ci in getattr(rr, "interval", {}).items() if m in labels}
        if interval:
            doc["interval"] = interval
        doc["queries"] = queries
        runs.append(doc)
    return {"meta": meta, "runs": runs}


def format_json(result, names: str = "canonical", precision: int | None = None, **_) -> str:
    """One JSON document: ``meta`` (version, options, inputs with sha256, query lists) and per-run
    summaries with every query's values; schema in :data:`JSON_SCHEMA`."""
    import json  # here: json and hashlib cost 4 ms of start-up, and most commands print text

    return json.dumps(json_document(result, names, precision), indent=1, allow_nan=False) + "\n"


def format_jsonl(result, names: str = "canonical", precision: int | None = None, **_) -> str:
    """One JSON object a line: ``{"run", "query", "measure", "value"}`` (plus ``"stderr"`` for Monte Carlo
    values), per run, query (``all`` last) and measure."""
    import json

    lines = []
    for rr in result.runs:
        rows = [(q, i) for i, q in enumerate(rr.qids)] + [("all", None)]
        for q, i in rows:
            for m in result.metrics:
                v = rr.mean[m] if i is None else rr.values[m][i]
                obj = {"run": rr.name, "query": q, "measure": metric_label(m, names, zscores(result)), "value": json_value(v, precision)}
                if m in rr.stderr:
                    se = mean_stderr(rr.values[m], rr.stderr[m]) if i is None else rr.stderr[m][i]
                    obj["stderr"] = json_value(se, precision)
                lines.append(json.dumps(obj, allow_nan=False))
    return "\n".join(lines) + ("\n" if lines else "")
