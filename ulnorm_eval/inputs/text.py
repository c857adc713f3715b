"""Opening inputs and checking that their bytes are text we can read without guessing: every reader goes
through :func:`open_input` (decompression by magic bytes) and :func:`check_text`.  Refused with
``FILE[:LINE]: reason``, exit 2 (docs/errors.md): a lone carriage return (CRLF is accepted), a NUL
byte, UTF-16/32, archives and compression inside compression (named, with the command that converts
them), and inputs past :data:`MAX_LINE_BYTES`, :data:`MAX_INPUT_BYTES` or :data:`MAX_RATIO` (limits
set through the environment, bounding what a decompression bomb or ``/dev/zero`` costs).
"""
from __future__ import annotations

import errno
import io
import lzma
import re
import sys
import zlib

from .errors import InputError, env_limit

__all__ = ["open_input", "read_bytes", "read_text", "check_text", "check_chunk", "MAX_LINE_BYTES", "MAX_INPUT_BYTES",
           "READ_ERRORS", "refuse_url", "LineScan", "COMPRESSED_MAGIC"]


# The limits and why (docs/errors.md, "Input limits"): one line; one input after decompression;
# decompressed bytes per compressed byte, checked past RATIO_FLOOR.
MAX_LINE_BYTES = env_limit("ULNORM_EVAL_MAX_LINE", 1 << 20)
MAX_INPUT_BYTES = env_limit("ULNORM_EVAL_MAX_INPUT", 64 << 30)
MAX_RATIO = env_limit("ULNORM_EVAL_MAX_RATIO", 100)
RATIO_FLOOR = 64 << 20

# Errors a decompressor raises on corrupt or truncated data (zlib.error is not an OSError)
READ_ERRORS = (OSError, EOFError, lzma.LZMAError, zlib.error)

# magic bytes, name, (module, file class): the module is imported when a file starts with its magic
# (most inputs are plain text: a command reading them imports neither gzip nor bz2)
_COMPRESSED = ((b"\x1f\x8b", "gzip", ("gzip", "GzipFile")), (b"BZh", "bzip2", ("bz2", "BZ2File")),
               (b"\xfd7zXZ\x00", "xz", ("lzma", "LZMAFile")))
COMPRESSED_MAGIC = tuple(magic for magic, _, _ in _COMPRESSED)
_UNSUPPORTED = (
    (b"\x28\xb5\x2f\xfd", "zstd-compressed; decompress it first (zstd -d FILE)"),
    (b"PK\x03\x04", "a zip archive; extract it first (unzip FILE)"),
    (b"PK\x05\x06", "an empty zip archive"),
    (b"7z\xbc\xaf\x27\x1c", "a 7z archive; extract it first (7z x FILE)"),
    (b"\x04\x22\x4d\x18", "lz4-compressed; decompress it first (lz4 -d FILE)"),
    *((bom, f"{kind} text ({order} byte-order mark); convert it to UTF-8 (iconv -f {kind} -t UTF-8 FILE)")
      for bom, kind, order in ((b"\xff\xfe\x00\x00", "UTF-32", "little-endian"), (b"\x00\x00\xfe\xff", "UTF-32", "big-endian"),
                               (b"\xff\xfe", "UTF-16", "little-endian"), (b"\xfe\xff", "UTF-16", "big-endian"))),
)


def _refuse_format(path: str, head: bytes, inside: str | None = None) -> None:
    for magic, what in _UNSUPPORTED:
        if head.startswith(magic):
            raise InputError(path, None, f"{inside} containing {what.split(';')[0]}" if inside else f"is {what}")
    if inside:
        for magic, name, _ in _COMPRESSED:
            if head.startswith(magic):
                raise InputError(path, None, f"is {name} inside {inside}: decompress the outer layer first")
    if head[257:262] == b"ustar":
        raise InputError(path, None, "is a tar archive; extract it first (tar xf FILE)")


# ``SCHEME://`` at the start of a path: a URL (RFC 3986 scheme), never opened.  ``./a://b`` is a
# local path (it does not start with a scheme).
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")


def refuse_url(path) -> None:
    """Refuse a URL given as a path: a path never opens a network connection (docs/errors.md);
    ``file://`` is refused too, with the local path to give instead."""
    if not isinstance(path, str) or _URL.match(path) is None:
        return
    if path[:7].lower() == "file://":
        local = path[7:]
        local = local[local.index("/"):] if "/" in local else local
        raise InputError(path, None, f"is a file:// URL; give the local path ({local or '/'}) instead")
    raise InputError(path, None, "is a URL: ulnorm-eval reads local files and standard input (-) only, "
                                 "and never opens a network connection; download it first (curl -o FILE URL)")


def _os_reason(exc: OSError) -> str:
    reasons = {errno.ENOENT: "no such file", errno.EISDIR: "is a directory, not a file",
               errno.ELOOP: "symbolic link loop", errno.ENXIO: "no such device (a socket?)",
               errno.ENOTDIR: "a component of the path is a file, not a directory"}
    return reasons.get(exc.errno) or (exc.strerror or str(exc)).lower()  # 'permission denied', 'file name too long'


class _Counted(io.RawIOBase):
    """A binary stream's bytes, counted as they are read; ``check`` sees the count after each read."""

    def __init__(self, raw, check=None):
        self.raw, self.check, self.n = raw, check, 0

    def readable(self):
        return True

    def readinto(self, buffer):
        size = self.raw.readinto(buffer)
        self.n += size or 0
        if self.check is not None:
            self.check(self.n)
        return size

    def close(self):
        try:
            self.raw.close()
        finally:
            super().close()


def open_input(path: str):
    """A binary file object on the decompressed content; ``-`` is standard input.

    gzip, bzip2 and xz are recognised by their magic bytes, whatever the name (so ``zcat`` is never
    needed, even on standard input); other archive formats and UTF-16/32 text are named and refused.
    """
    refuse_url(path)
    try:
        # sys.stdin is None when fd 0 is closed (`<&-`); open() of a directory raises IsADirectoryError
        raw = getattr(sys.stdin, "buffer", None) if path == "-" else open(path, "rb")
    except OSError as exc:
        raise InputError(path, None, _os_reason(exc)) from None
    if raw is None or raw.closed:
        raise InputError("-", None, "standard input is closed")
    buf = raw if isinstance(raw, io.BufferedReader) else io.BufferedReader(raw)
    try:
        head = buf.peek(512)[:512]
    except OSError as exc:
        raise InputError(path, None, f"cannot read: {_os_reason(exc)}") from None
    for magic, name, (module, cls) in _COMPRESSED:
        if head.startswith(magic):
            import importlib

            counted = _Counted(buf)

            def ratio_guard(out: int) -> None:
                # a decompression bomb (a few MB of gzip making GBs of blank lines held whole by a
                # reader) fails within a second, not after minutes and gigabytes
                if out > RATIO_FLOOR and out > MAX_RATIO * max(counted.n, 1):
                    raise InputError(path, None, f"{name} data expanding more than {MAX_RATIO} times ({counted.n} "
                                                 f"bytes to over {out}; ULNORM_EVAL_MAX_RATIO): a decompression bomb?")

            cls = getattr(importlib.import_module(module), cls)
            handle = cls(fileobj=counted, mode="rb") if module == "gzip" else cls(counted, mode="rb")
            inner = io.BufferedReader(_Counted(handle, ratio_guard))
            try:
                _refuse_format(path, inner.peek(512)[:512], inside=name)
            except READ_ERRORS as exc:
                raise InputError(path, None, f"corrupt {name} data: {exc}") from None
            return inner
    _refuse_format(path, head)
    return buf


def read_bytes(path: str) -> bytes:
    """The file's bytes, decompressed when compressed (gzip, bzip2, xz); ``-`` is standard input.
    Each block is checked as it arrives: ``/dev/zero`` or a bomb of NULs fails on its first block."""
    handle = open_input(path)
    parts, total, lines = [], 0, 0
    scan = LineScan(path)
    try:
        while True:
            try:
                chunk = handle.read(8 << 20)
            except READ_ERRORS as exc:  # corrupt or truncated archives
                raise InputError(path, None, f"cannot read: {exc}") from None
            except MemoryError:
                raise InputError(path, None, "out of memory while reading") from None
            if not chunk:
                break
            if parts:  # the line number a block starts at (counted only when a block follows: most files are one)
                lines += parts[-1].count(b"\n")
            check_chunk(chunk, path, lines + 1)
            scan.feed(chunk, lines + 1)  # a line past the limit fails now, not once the whole input is held
            total += len(chunk)
            if total > MAX_INPUT_BYTES:
                raise InputError(path, None, f"larger than {MAX_INPUT_BYTES} bytes (ULNORM_EVAL_MAX_INPUT); "
                                             "a decompression bomb or an endless device?")
            parts.append(chunk)
    finally:
        if path != "-":
            handle.close()
    return b"".join(parts)


def read_text(path: str) -> str:
    """The file's text: :func:`read_bytes`, :func:`check_text`, then UTF-8 (an error names the line)."""
    data = read_bytes(path)
    check_text(data, path)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(path, data[:exc.start].count(b"\n") + 1, "not UTF-8 text") from None


class LineScan:
    """Refuse a line longer than MAX_LINE_BYTES across the blocks of one input, as they arrive
    (``carry``: the length of the line begun in earlier blocks), passing lines in windows of the limit."""

    def __init__(self, path: str):
        self.path, self.limit, self.carry = path, MAX_LINE_BYTES, 0

    def feed(self, data: bytes, first_line: int = 1) -> None:
        """Scan ``data`` (the next block; its first line is line ``first_line`` of the input)."""
        limit, size = self.limit, len(data)
        start = -self.carry  # where the current line began, relative to this block
        while True:
            end = data.find(b"\n", max(start, 0), min(size, start + limit + 1))
            if end < 0:
                if size - start > limit:
                    line = first_line + data.count(b"\n", 0, max(start, 0))
                    raise InputError(self.path, line, f"line longer than {limit} bytes (ULNORM_EVAL_MAX_LINE)")
                self.carry = size - start
                return
            # the lines up to the last newline within a window of the limit are all shorter than it
            nxt = data.rfind(b"\n", end, end + limit + 1)
            start = (nxt if nxt >= 0 else end) + 1


def _looks_utf16(data: bytes) -> bool:
    head = data[:4096]
    if len(head) < 4:
        return False
    even, odd = head[0::2], head[1::2]
    even_zeros, odd_zeros = even.count(0) / len(even), odd.count(0) / len(odd)
    return (even_zeros > 0.4 and odd_zeros < 0.1) or (odd_zeros > 0.4 and even_zeros < 0.1)  # ASCII as UTF-16: every other byte NUL


def check_chunk(data: bytes, path: str, first_line: int = 1) -> None:
    """Refuse NUL bytes (binary data, or UTF-16 text without a byte-order mark)."""
    nul_at = data.find(b"\x00")
    if nul_at < 0:
        return
    if _looks_utf16(data):
        raise InputError(path, None, "looks like UTF-16 text (NUL bytes between characters); convert it to "
                                     "UTF-8 (iconv -f UTF-16 -t UTF-8 FILE)")
    line = first_line + data.count(b"\n", 0, nul_at)
    raise InputError(path, line, "NUL byte: binary data, not a text file")


_LONE_CR = re.compile(rb"\r(?!\n)")


def check_text(data: bytes, path: str) -> None:
    """Refuse what would make lines be misread: NUL bytes, a byte-order mark inside, and a carriage
    return not followed by LF (a line end for some readers, not for others; CRLF is accepted)."""
    check_chunk(data, path)
    if len(data) > MAX_LINE_BYTES:  # a line longer than the limit
        LineScan(path).feed(data)
    # one at the very start is the file's own (the readers strip it); memchr finds its first byte
    bom = data.find(b"\xef\xbb\xbf", 1) if data.find(b"\xef", 1) >= 0 else -1
    if bom >= 0:
        line = 1 + data.count(b"\n", 0, bom)
        raise InputError(path, line, "byte-order mark (U+FEFF) inside the file (files joined with cat?): it "
                                     "would become an invisible part of an id; remove it "
                                     "(save each file without a byte-order mark before joining them)")
    if b"\r" in data and data.count(b"\r") != data.count(b"\r\n"):
        match = _LONE_CR.search(data)
        if match is not None:
            line = 1 + data.count(b"\n", 0, match.start())
            raise InputError(path, line, "stray carriage return (a CR not followed by LF; "
                                         "convert old Mac line ends (CR) to LF, e.g. with mac2unix)")
