"""Qrels from ir_datasets (the optional ``irds`` extra): ``irds:DATASET_ID`` in place of a qrels path.

Only data already on this machine is read: ir_datasets has no offline switch, so its remote download
sources are disabled while the qrels are read, and qrels not in its local cache are refused in one
line instead of downloaded (fetch them with ``ir_datasets export DATASET_ID qrels``).
"""
from __future__ import annotations

import contextlib
import logging

from .in_memory import from_columns
from .trec import InputError, Qrels

__all__ = ["PREFIX", "is_irds", "read_irds_qrels"]

PREFIX = "irds:"


def is_irds(source) -> bool:
    """True for ``'irds:DATASET_ID'``."""
    return isinstance(source, str) and source.startswith(PREFIX)


class _NotLocal(Exception):
    pass


@contextlib.contextmanager
def _local_only(util):
    """Every ir_datasets download source except LocalDownload raises instead of reaching the network."""

    def refuse(self):
        raise _NotLocal(getattr(self, "url", None) or type(self).__name__)

    seen, stack = [], [util.download.BaseDownload]
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        if cls is not util.download.LocalDownload and "stream" in vars(cls):
            seen.append((cls, vars(cls)["stream"]))
    for cls, _ in seen:
        cls.stream = refuse
    # ir_datasets logs its download attempts ("[WARNING] Download failed: ..."); the refusal is one line
    level = logging.root.manager.disable
    logging.disable(logging.WARNING)
    try:
        yield
    finally:
        logging.disable(level)
        for cls, orig in seen:
            cls.stream = orig


def _not_local(ds_id: str) -> str:
    return (f"the qrels of {ds_id!r} are not available locally and ulnorm-eval does not download; "
            f"fetch them with: ir_datasets export {ds_id} qrels")


def read_irds_qrels(source: str) -> Qrels:
    """The qrels of ``irds:DATASET_ID`` as :class:`Qrels` (InputError when unavailable here)."""
    ds_id = source[len(PREFIX):]
    try:
        import ir_datasets
    except ImportError:
        from ..extras import missing_message

        raise InputError(source, None, missing_message("irds")) from None
    try:
        dataset = ir_datasets.load(ds_id)
    except KeyError:
        raise InputError(source, None, f"ir_datasets has no dataset {ds_id!r}") from None
    if not dataset.has_qrels():
        raise InputError(source, None, f"dataset {ds_id!r} has no qrels")
    qid, docid, grade = [], [], []
    try:
        with _local_only(ir_datasets.util):
            for qids in dataset.qrels_iter():
                qid.append(str(qids.query_id))
                docid.append(str(qids.doc_id))
                grade.append(qids.relevance)
    except _NotLocal:
        raise InputError(source, None, _not_local(ds_id)) from None
    except RuntimeError as exc:  # ir_datasets: every mirror failed, or a malformed line
        tried = exc.args[1] if len(exc.args) > 1 and isinstance(exc.args[1], list) else []
        if any(isinstance(error, _NotLocal) for _, error in tried):
            raise InputError(source, None, _not_local(ds_id)) from None
        raise InputError(source, None, f"cannot read the qrels of {ds_id!r} locally: {exc.args[0]}") from None
    except FileNotFoundError as exc:
        raise InputError(source, None, f"the qrels of {ds_id!r} are not available locally ({exc})") from None
    if not qid:
        raise InputError(source, None, f"dataset {ds_id!r} has empty qrels")
    return from_columns("qrels", qid, docid, grade, name=source)
