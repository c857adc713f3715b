"""Reading TREC qrels, TREC runs and LETOR files into typed columns: Arrow's CSV reader first, with the
delimiter of the first line; on any irregularity a careful line-by-line parser that succeeds with the
same result or names the file, line and reason.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .arrow import offsets, scalar, string_array, to_numpy
from .errors import InputError
from .text import check_text, read_bytes  # noqa: F401 - re-exported

__all__ = [
    "InputError", "Qrels", "Run", "read_qrels", "read_run", "file_run_name",
]


@dataclass(kw_only=True)
class _Rows:
    """Parallel columns, one row per (query, document); ``qid`` and ``docid`` are pyarrow string
    arrays (compact for millions of rows)."""

    qid: object
    docid: object
    path: str
    skipped: int = 0  # comment and blank lines passed over on purpose
    line: np.ndarray | None = None  # 1-based source line of each row, for error messages (None: row + 1)
    # derived arrays (pipeline.ordering); not an init field, so that a copy made with
    # dataclasses.replace (whose arrays may differ) starts with an empty cache instead of sharing it
    cache: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.qid)


@dataclass(kw_only=True)
class Qrels(_Rows):
    """Judgements: a float64 ``grade`` per (query, document)."""

    grade: np.ndarray
    path: str = "<qrels>"
    truncated: int = 0  # grades read with C's atol (--trec) whose value that changed: 1.5 -> 1, 1e1 -> 1
    letor: bool = False  # documents are LETOR row positions; runs are score files


@dataclass(kw_only=True)
class Run(_Rows):
    """A ranked result list: a float64 ``score`` per retrieved (query, document)."""

    score: np.ndarray
    rank: object  # the rank column: Arrow text as read, or integers (only ``ties="rank"`` reads it)
    name: str = "<run>"
    path: str = "<run>"
    tag: str | None = None
    meta: dict = field(default_factory=dict)


# --------------------------------------------------------------------------- tokenising

def _fast_columns(data: bytes, ncols: int, floats: tuple = (), halves: bool = False):
    """Arrow's CSV reader on a clean single-delimiter file (``data`` has passed :func:`check_text`),
    columns ``floats`` parsed to float64; None when the file is not clean (the careful parser then
    reads it, naming the line of any error)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pacsv

    head = data[:4096].lstrip(b"\xef\xbb\xbf")
    first = head.split(b"\n", 1)[0].rstrip(b"\r")
    if not first or first.startswith(b"#"):
        return None
    delim = "\t" if b"\t" in first else " "
    # whitespace that split() separates on but Arrow would keep inside a field (a lone CR was refused)
    other = b" " if delim == "\t" else b"\t"
    if other in data or b"\x0b" in data or b"\x0c" in data:
        return None
    names = [f"c{i}" for i in range(ncols)]
    # 4 MB blocks, parsed in parallel; with ``halves`` (a caller waiting) at least two (docs/performance.md)
    block = min(1 << 22, max(1 << 18, (len(data) + 1) // 2)) if halves else 1 << 22
    ropts = pacsv.ReadOptions(column_names=names, block_size=block)
    # a quote character is data in TREC files; ASCII is valid UTF-8 (Arrow's check left to other files)
    popts = pacsv.ParseOptions(delimiter=delim, quote_char=False, double_quote=False,
                               escape_char=False, newlines_in_values=False, ignore_empty_lines=False)
    copts = pacsv.ConvertOptions(
        column_types={n: (pa.float64() if i in floats else pa.string()) for i, n in enumerate(names)},
        strings_can_be_null=False, quoted_strings_can_be_null=False, check_utf8=not data.isascii())
    try:
        table = pacsv.read_csv(pa.py_buffer(data), read_options=ropts, parse_options=popts,
                               convert_options=copts)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, UnicodeDecodeError):
        return None
    # one array per column (combine_chunks copies even a single chunk)
    cols = [col.chunk(0) if col.num_chunks == 1 else col.combine_chunks() for col in table.columns]
    del table
    for i, c in enumerate(cols):
        # an empty field (equal adjacent offsets): a doubled delimiter
        if i not in floats and len(c) and (np.diff(offsets(c)) == 0).any():
            return None
        # a null (empty field, 'nan'...) or infinite number: the careful parser quotes it as written
        if i in floats and len(c) and (c.null_count or not pc.all(pc.is_finite(c)).as_py()):
            return None
    # a comment line: a first field starting with '#' (no field is empty here)
    if len(cols[0]) and (_first_bytes(cols[0]) == ord("#")).any():
        return None
    return cols


def _first_bytes(col) -> np.ndarray:
    """Each string's first byte (uint8) of a string array with no null and no empty string."""
    off = offsets(col)
    data = np.frombuffer(col.buffers()[2], np.uint8) if len(col) else np.zeros(0, np.uint8)
    return data[off[:-1]]


def _slow_columns(data: bytes, ncols: int, path: str, what: str, extra_ok: bool = False):
    """Line-by-line tokenising with exact error positions.

    Whitespace of any kind separates fields; a line whose first non-blank character is ``#`` is a
    comment; blank lines are skipped (both counted).  With ``extra_ok``, fields after the first
    ``ncols`` are ignored (trec_eval reserves them in run lines: its results.trunc test has them).
    Returns (columns as lists, line numbers, skipped count, count of lines with extra fields).
    """
    data = data.removeprefix(BOM)
    cols = [[] for _ in range(ncols)]
    lines = []
    skipped = extra = 0
    last = data.count(b"\n") + 1  # counted once: per blank line it made a file of blank lines quadratic
    for lineno, raw in enumerate(data.split(b"\n"), 1):
        parts = raw.split()
        if not parts or parts[0].startswith(b"#"):
            skipped += bool(parts) or lineno != last  # not the empty remainder after the final newline
            continue
        if len(parts) < ncols or (len(parts) > ncols and not extra_ok):
            raise InputError(path, lineno, f"expected {ncols} fields ({what}), found {len(parts)}"
                                           + _swap_hint(parts, ncols))
        extra += len(parts) > ncols
        for c, p in zip(cols, parts):
            c.append(p)
        lines.append(lineno)
    try:
        arrays = [string_array([p.decode("utf-8") for p in c]) for c in cols]
    except UnicodeDecodeError:
        for i, fields in enumerate(zip(*cols)):  # the first line with a field that is not UTF-8
            try:
                b" ".join(fields).decode("utf-8")  # (an ASCII space completes no multi-byte character)
            except UnicodeDecodeError:
                raise InputError(path, lines[i], "not valid UTF-8") from None
    return arrays, np.asarray(lines, dtype=np.int64), skipped, extra


def _swap_hint(parts: list, ncols: int) -> str:
    """A hint when a run was given as QRELS or the other way round (the commonest first mistake)."""
    if ncols == 4 and len(parts) == 6 and parts[1].upper() == b"Q0":
        return "; this looks like a run file: QRELS comes first (ulnorm-eval QRELS RUN...)"
    if ncols == 6 and len(parts) == 4 and parts[1] == b"0" and parts[3].lstrip(b"-").isdigit():
        return "; this looks like a qrels file: QRELS comes first (ulnorm-eval QRELS RUN...)"
    return ""


def columns(data: bytes, ncols: int, path: str, what: str, empty: str, extra_ok: bool = False, floats: tuple = (),
            halves: bool = False):
    """(the ``ncols`` columns of a whitespace-separated file, their line numbers or None when each
    row is its line, lines skipped, lines with extra fields): :func:`_fast_columns`, else
    :func:`_slow_columns`.  Refused: an id 'all' in the first column, a file without rows (``empty``
    says what it lacks)."""
    check_text(data, path)
    cols = _fast_columns(data, ncols, floats, halves)
    if cols is None:
        cols, lines, skipped, extra = _slow_columns(data, ncols, path, what, extra_ok)
    else:
        lines, skipped, extra = None, 0, 0
    if not len(cols[0]):
        raise InputError(path, 1, f"empty file: {empty}")
    _refuse_reserved(cols[0], path, lines)
    return cols, lines, skipped, extra


RESERVED = "all"  # a query id that would print as the summary row


def _refuse_reserved(qid, path: str, lines) -> None:
    """Refuse a query named ``all``, which would print as the summary row; Arrow looks for it only when
    an id has its length and first byte."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if ((np.diff(offsets(qid)) == len(RESERVED)) & (_first_bytes(qid) == ord(RESERVED[0]))).any():
        i = pc.index(qid, scalar(RESERVED, pa.string())).as_py()
        if i >= 0:
            refuse_reserved_id(RESERVED, path, line_of(lines, i))


def refuse_reserved_id(qid: str, path: str, line, what: str = "query", row: int | None = None) -> None:
    """The one refusal of an id that would print as the summary row ('all'): every reader's (TREC,
    LETOR, DataFrames and dicts (``row``: the frame's row), summ's documents)."""
    if qid == RESERVED:
        where = f"row {row}: " if row is not None else ""
        raise InputError(path, line, f"{where}{what} id {qid!r} is reserved for the summary row (rename the {what})")


def to_float(col, path: str, lines, name: str) -> np.ndarray:
    """Parse a string column to float64, naming the first bad line (a float64 column is only checked)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        values = to_numpy(pc.cast(col, pa.float64()))
    except pa.ArrowInvalid:
        # the first field Arrow refuses, by bisection: exactly Arrow's notion of a number (not float()'s '1_0')
        lo, hi = 0, len(col)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            try:
                pc.cast(col.slice(lo, mid - lo), pa.float64())
                lo = mid
            except pa.ArrowInvalid:
                hi = mid
        raise InputError(path, line_of(lines, lo), f"{name} {col[lo].as_py()!r} is not a number") from None
    bad = ~np.isfinite(values)
    if not bad.any():
        return values
    i = int(np.argmax(bad))
    raise InputError(path, line_of(lines, i), f"{name} {col[i].as_py()!r} is not a finite number")


# Grades beyond 2^53 are no longer exact integers in float64, and sums and squares of grades near
# 1e308 (gains, ideal rankings, bounds) overflow to inf: refused when read (docs/errors.md).
EXACT = 1 << 53


def check_grades(grade: np.ndarray, path: str, lines) -> None:
    """Refuse a grade whose magnitude exceeds :data:`EXACT`, naming its line."""
    bad = np.abs(grade) > EXACT
    if bad.any():
        i = int(np.argmax(bad))
        raise InputError(path, line_of(lines, i), f"grade {grade[i]:g} is too large (|grade| <= 2^53; "
                                                "see docs/errors.md)")


def atol(text: str) -> int:
    """C's ``atol``: the integer spelled by the leading sign and digits of ``text`` (0 if none)."""
    import re

    found = re.match(r"\s*([+-]?[0-9]+)", text)
    return int(found.group(1)) if found else 0


def _atol_grades(grade: np.ndarray, text) -> tuple:
    """(the grades, each :func:`atol` of its text; how many changed).  Only a fraction or an exponent
    can make the two differ, so only those texts are read again."""
    import pyarrow.compute as pc

    rows = np.flatnonzero((grade != np.trunc(grade)) | to_numpy(pc.match_substring_regex(text, "[eE]")))
    new = np.array([atol(text[int(i)].as_py()) for i in rows], dtype=np.float64)
    changed = int(np.count_nonzero(new != grade[rows]))
    if changed:
        grade = grade.copy()
        grade[rows] = new
    return grade, changed


def line_of(lines, i: int) -> int:
    return int(lines[i]) if lines is not None else i + 1


def numeric_ids(docid) -> np.ndarray | None:
    """The docids as int64 when every one is a plain integer in [0, 2^40) (MS MARCO and TREC DL
    passages), else None.  '007' and '7' give the same number: equal numbers only hint at equal ids."""
    import pyarrow as pa
    import pyarrow.compute as pc

    # string ids ('D2573', 'FBIS3-10082') fail the cast only after a full pass: three looks first
    n = len(docid)
    if not n or not all(0 < len(s := docid[i].as_py()) < 19 and s.isascii() and s.isdigit()
                        for i in {0, n // 2, n - 1}):
        return None
    try:
        d = to_numpy(pc.cast(docid, pa.int64()))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    return d if d.min() >= 0 and d.max() < 1 << 40 else None


def _distinct_pairs(qcode, dcode) -> bool:
    """True when no (query code, document code) pair repeats: the pairs packed into int64 keys, sorted
    by timsort when nearly sorted already (codes by first appearance), else by numpy's quicksort
    (numeric ids; docs/performance.md)."""
    q = to_numpy(qcode).astype(np.int64)
    d = to_numpy(dcode).astype(np.int64)
    span = int(d.max()) + 1
    if len(q) and int(q.max()) >= (1 << 62) // span:  # the packed key would overflow
        return not len(_repeats(q, d))
    key = q * span + d
    descents = int(np.count_nonzero(key[1:] < key[:-1]))
    if descents:
        key = np.sort(key, kind="stable" if descents < len(key) // 64 else None)
    return not (key[1:] == key[:-1]).any()


def _repeats(q: np.ndarray, d: np.ndarray) -> np.ndarray:
    """The rows whose (``q``, ``d``) pair an earlier row has (a stable sort keeps copies in file order)."""
    order = np.lexsort((d, q))
    q, d = q[order], d[order]
    return order[1:][(q[1:] == q[:-1]) & (d[1:] == d[:-1])]


def check_duplicates(qid, docid, path: str, lines, what: str, qcode=None, dcode=None, keep: dict | None = None) -> None:
    """Refuse a (query, document) pair that appears twice: which copy counts would be arbitrary.  One sort
    of packed integer keys (query codes ``qcode``, document codes or numeric docids ``dcode``); the
    docids are encoded only when a repeat is possible ('007' and '7' are one number), to name the first
    in file order.  ``keep`` receives the encodings made here (``qid_encoding``, ``docid_encoding``:
    the array and its encoding)."""
    import pyarrow.compute as pc

    if len(docid) < 2:
        return
    if qcode is None:
        enc = pc.dictionary_encode(qid)
        qcode = enc.indices
        if keep is not None:
            keep["qid_encoding"] = (qid, enc)
    dcode = numeric_ids(docid) if dcode is None else dcode
    if dcode is not None and _distinct_pairs(qcode, dcode):
        return
    enc = pc.dictionary_encode(docid)
    if keep is not None:
        keep["docid_encoding"] = (docid, enc)
    if _distinct_pairs(qcode, enc.indices):  # equal numbers, different ids
        return
    i = int(_repeats(to_numpy(qcode).astype(np.int64), to_numpy(enc.indices).astype(np.int64)).min())
    raise InputError(path, line_of(lines, i),
                     f"duplicate document {docid[i].as_py()!r} for query {qid[i].as_py()!r} in {what}")


# --------------------------------------------------------------------------- public readers

def read_qrels(path: str, data: bytes | None = None, trec_eval: bool = False) -> Qrels:
    """Read TREC qrels ``qid iter docid grade`` (grades may be floats; negatives are judged, gain 0).

    ``trec_eval`` (``--trec-nan``, implied by ``--trec``): a grade is what trec_eval's C ``atol`` reads
    of it (get_qrels.c), the integer its leading digits spell: 1.5 -> 1, -0.5 -> 0, 1e1 -> 1 (the field
    must still be a number); a byte order mark is refused (:data:`BOM_KEPT`)."""
    data = read_bytes(path) if data is None else data
    if trec_eval and data.startswith(BOM):
        raise InputError(path, 1, BOM_KEPT)
    cols, lines, skipped, _ = columns(data, 4, path, "qid iter docid grade", "no judgements")
    grade = to_float(cols[3], path, lines, "grade")
    grade, truncated = _atol_grades(grade, cols[3]) if trec_eval else (grade, 0)
    check_grades(grade, path, lines)
    qrels = Qrels(qid=cols[0], docid=cols[2], grade=grade, path=str(path), skipped=skipped, line=lines,
                  truncated=truncated)
    # the encodings made by the check serve the groups and the join (pipeline.ordering)
    check_duplicates(cols[0], cols[2], path, lines, "the qrels", keep=qrels.cache)
    return qrels


BOM = b"\xef\xbb\xbf"
# trec_eval 10 reads a file's UTF-8 byte order mark as part of its first query id (get_qrels.c,
# get_trec_results.c): that line becomes a query of its own, in no other file.  Not reproduced.
BOM_KEPT = ("starts with a UTF-8 byte order mark, which trec_eval 10 reads as part of the first line's query id "
            "(that line becomes a query of its own, matching no other file's); --trec and --trec-nan do not "
            "reproduce it: remove the mark")


def read_run(path: str, name: str | None = None, data: bytes | None = None, halves: bool = False) -> Run:
    """Read a TREC run ``qid Q0 docid rank score tag``; the rank column is kept as text, not trusted
    (only ``--ties rank`` converts it: pipeline.ordering.rank_values).  Repeated documents are refused
    by pipeline.ordering.rank_run, on the codes it makes for the join.

    ``halves``: parse even a small input as two blocks, one per thread (for a caller that waits).
    """
    data = read_bytes(path) if data is None else data
    cols, lines, skipped, extra = columns(data, 6, path, "qid Q0 docid rank score tag", "no ranked documents",
                                          extra_ok=True, floats=(4,), halves=halves)
    tag = cols[5][0].as_py()
    return Run(qid=cols[0], docid=cols[2], score=to_float(cols[4], path, lines, "score"), rank=cols[3],
               name=name or file_run_name(path, tag), path=str(path), skipped=skipped, line=lines, tag=tag,
               meta={"extra_fields": extra, "last_tag": cols[5][-1].as_py(),  # trec_eval's runid prints the last
                     "bom": data.startswith(BOM)})


def file_run_name(path: str, tag: str | None = None) -> str:
    """A run's name: its file name without a compression suffix; standard input's, its ``tag``."""
    import os

    if path == "-":
        return tag or "stdin"
    base = os.path.basename(str(path))
    for ext in (".gz", ".bz2", ".xz", ".lzma"):
        if base.lower().endswith(ext):
            base = base[: -len(ext)]
    return base
