"""Keyword arguments collected into records: a function taking many settings takes ``**kw`` and
hands them to the dataclasses they belong to, so its signature stays short and every setting keeps
its name, its default and its one place of definition (the record's field)."""
from __future__ import annotations

import dataclasses

__all__ = ["split_keywords"]


def split_keywords(kw: dict, *records: type, where: str) -> tuple:
    """One instance of each dataclass in ``records`` built from the keywords of ``kw`` that name its
    fields (a keyword naming fields of two records goes to both); a keyword naming no field raises
    the TypeError Python raises for an unexpected keyword argument of ``where``."""
    fields = [{f.name for f in dataclasses.fields(r) if f.init} for r in records]
    unknown = [k for k in kw if not any(k in names for names in fields)]
    if unknown:
        raise TypeError(f"{where}() got an unexpected keyword argument {unknown[0]!r}")
    return tuple(r(**{k: v for k, v in kw.items() if k in names}) for r, names in zip(records, fields))
