"""Runs at fsspec URLs (``s3://``, ``gs://``, ``https://``, ...): the bytes, decompressed like a local file.

fsspec (and the protocol's package, e.g. s3fs) is optional and imported only when a URL is read, so
that the workers of a cluster can read runs where they are stored (docs/performance.md).
"""
from __future__ import annotations

import bz2
import gzip
import lzma

from .trec import InputError

__all__ = ["is_url", "read_url"]

_DECOMPRESS = ((b"\x1f\x8b", gzip.decompress), (b"BZh", bz2.decompress), (b"\xfd7zXZ\x00", lzma.decompress))


def is_url(path) -> bool:
    """``PROTOCOL://...``: read through fsspec rather than opened as a local file."""
    return isinstance(path, str) and "://" in path


def read_url(path: str) -> bytes:
    """The content at ``path``, decompressed when gzip, bzip2 or xz (recognised by magic bytes)."""
    try:
        import fsspec
    except ImportError:
        raise InputError(path, None, "reading a URL needs fsspec (pip install fsspec)") from None
    try:
        with fsspec.open(path, "rb") as fh:
            data = fh.read()
    except (OSError, ValueError, ImportError) as exc:
        raise InputError(path, None, f"cannot read: {exc}") from None
    for magic, decompress in _DECOMPRESS:
        if data.startswith(magic):
            try:
                return decompress(data)
            except (OSError, EOFError, lzma.LZMAError) as exc:
                raise InputError(path, None, f"cannot read: {exc}") from None
    return data
