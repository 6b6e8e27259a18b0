"""Reading raw tables from files and uploads, before any meaning is given to the columns.

Everything tabular is read as text (CSV cells stay strings, so ``0123`` keeps its leading zero and
``NA`` stays a name); the loaders in :mod:`core.io.votes` and :mod:`core.io.runs` parse numbers and
timestamps column by column so that every unparseable cell can be reported by row.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv

from core.io.problems import MAX_ROWS_SHOWN, InputError, Problem

FORMATS = ("csv", "tsv", "json", "jsonl", "parquet")


@dataclass(frozen=True)
class RawFile:
    """The bytes of one input and where they came from."""

    name: str
    data: bytes = field(repr=False)
    format: str

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


def open_source(source: Any, name: str | None = None, format: str | None = None) -> RawFile:
    """Accept a path, raw bytes, or an uploaded file object (anything with ``.getvalue()``/``.read()``)."""
    if isinstance(source, RawFile):
        return source
    if isinstance(source, (str, Path)):
        path = Path(source)
        if not path.is_file():
            raise InputError(str(path), [Problem((), "no such file")])
        data, name = path.read_bytes(), name or str(path)
    elif isinstance(source, (bytes, bytearray)):
        data, name = bytes(source), name or "upload"
    elif hasattr(source, "getvalue"):
        data, name = bytes(source.getvalue()), name or getattr(source, "name", "upload")
    elif hasattr(source, "read"):
        data, name = source.read(), name or getattr(source, "name", "upload")
        data = data.encode() if isinstance(data, str) else bytes(data)
    else:
        raise TypeError(f"cannot read input of type {type(source).__name__}")
    lower = name.lower()
    if lower.endswith(".gz"):
        data, lower = _gunzip(name, data), lower[:-3]
    fmt = format or _format_from_name(lower, data)
    if fmt not in FORMATS:
        raise InputError(name, [Problem((), f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")])
    return RawFile(name, data, fmt)


def _gunzip(name: str, data: bytes) -> bytes:
    try:
        return gzip.decompress(data)
    except (OSError, EOFError) as exc:
        raise InputError(name, [Problem((), f"not a readable gzip file ({exc})")]) from None


def _format_from_name(lower: str, data: bytes) -> str:
    for ext in FORMATS:
        if lower.endswith("." + ext):
            return ext
    if lower.endswith(".ndjson"):
        return "jsonl"
    if lower.endswith(".pq"):
        return "parquet"
    head = data[:64].lstrip()
    if data[:4] == b"PAR1":
        return "parquet"
    if head.startswith(b"["):
        return "json"
    if head.startswith(b"{"):
        # One object per line is JSONL; a single (possibly multi-line) object is JSON.
        first = data.lstrip().split(b"\n", 1)[0].strip()
        try:
            json.loads(first)
            return "jsonl"
        except ValueError:
            return "json"
    return "csv"


def check_text(raw: RawFile) -> str | None:
    """Reject empty and non-UTF-8 inputs with the position of the first bad byte."""
    if not raw.data or raw.data.isspace():  # isspace stops at the first other byte; strip() would copy
        raise InputError(raw.name, [Problem((), "the file is empty")])
    if raw.format == "parquet":
        return None
    try:
        return raw.data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.data.count(b"\n", 0, exc.start) + 1
        raise InputError(raw.name, [Problem((), f"the file is not UTF-8 text: byte {exc.start} (line {line}) "
                                             f"is {raw.data[exc.start:exc.start + 1]!r}; "
                                             "re-save it as UTF-8")]) from None


def read_table(raw: RawFile) -> pd.DataFrame:
    """Parse the bytes into a DataFrame (CSV cells as strings, JSON values as they are)."""
    text = check_text(raw)
    if raw.format in ("csv", "tsv"):
        frame = _read_csv(raw)
    elif raw.format == "parquet":
        try:
            frame = pd.read_parquet(io.BytesIO(raw.data))
        except Exception as exc:  # pyarrow raises several unrelated types for a broken file
            raise InputError(raw.name, [Problem((), f"not a readable Parquet file ({exc})")]) from None
    else:
        frame = records_frame(raw.name, read_json_records(raw, text))
    if frame.shape[0] == 0:
        raise InputError(raw.name, [Problem((), "the file has a header but no data rows")])
    frame.columns = [str(c).strip() for c in frame.columns]
    dupes = sorted(c for c, n in Counter(frame.columns).items() if n > 1)  # one pass: wide files have 10,000+ columns
    if dupes:
        raise InputError(raw.name, [Problem(tuple(dupes), "the same column name appears more than once")])
    return frame


# A row is parsed within one block of Arrow's reader (1 MiB by default): longer rows are read again with a
# block that holds them, up to this size. A longer line is no table row (a missing newline, a binary blob).
MAX_LINE_BYTES = 64 * 2**20
_LINE_END = re.compile(rb"\r\n|\r|\n")


def _read_csv(raw: RawFile) -> pd.DataFrame:
    data = raw.data[3:] if raw.data.startswith(b"\xef\xbb\xbf") else raw.data
    # a lone header line without a newline: Arrow cannot tell it has no rows
    if b"\n" not in data and b"\r" not in data:
        data += b"\n"
    line_end = _LINE_END.search(data)  # Arrow ends lines at any of the three; search, not split: no copy
    header = (data[:line_end.start()] if line_end else data).decode("utf-8")
    delimiter = "\t" if raw.format == "tsv" or ("\t" in header and "," not in header) else ","
    try:
        columns = next(csv.reader([header], delimiter=delimiter), [])
    except csv.Error as exc:  # a NUL byte, a stray quote …
        raise InputError(raw.name, [Problem((), f"the header (line 1) is not readable as {raw.format.upper()}: "
                                                f"{exc}")]) from None
    if len(columns) > MANY_COLUMNS and len(data) <= MAX_LINE_BYTES:
        return _read_many_columns(raw, data, delimiter, len(columns))
    block = pacsv.ReadOptions().block_size
    longest = None
    while True:
        try:
            return _to_frame(_arrow_csv(data, delimiter, columns, pacsv.ReadOptions(block_size=block)))
        except pa.ArrowInvalid as exc:
            if "straddling" in str(exc) and longest is None:  # a row longer than the block
                number, longest = _longest_line(data)
                if longest > MAX_LINE_BYTES:
                    raise InputError(raw.name, [Problem((), f"line {number} is too long: {longest:,} bytes, more than "
                                                            f"the {MAX_LINE_BYTES:,} a row may hold (a missing line "
                                                            "break?)")]) from None
                block = max(block, 2 * longest + 1)
                continue
            if "Expected" in str(exc) and "columns, got" in str(exc):
                raise InputError(raw.name, [_ragged_rows(data, delimiter, columns)]) from None
            raise InputError(raw.name, [Problem((), f"not a readable {raw.format.upper()} table: {exc}")]) from None


# Arrow types and converts column by column (about 0.1 ms each): a table wider than this is read by the csv
# module into one block of text cells (object dtype) instead, so that 10,000 columns read in a fraction of a
# second. Arrow's further conversions take the same road (a Parquet file may be as wide).
MANY_COLUMNS = 256


def _read_many_columns(raw: RawFile, data: bytes, delimiter: str, width: int) -> pd.DataFrame:
    """Cells as text, the empty cell as missing (as Arrow reads them); rows of another width are listed."""
    reader = csv.reader(io.StringIO(data.decode("utf-8"), newline=""), delimiter=delimiter)
    try:
        header = next(reader)
        rows = [row for row in reader if row]  # Arrow skips empty lines too
    except csv.Error as exc:
        raise InputError(raw.name, [Problem((), f"not a readable {raw.format.upper()} table: {exc}")]) from None
    ragged = [(number, len(row)) for number, row in enumerate(rows, start=1) if len(row) != width]
    if ragged:
        raise InputError(raw.name, [_ragged_problem(ragged, width)])
    cells = np.array(rows, dtype=object).reshape(len(rows), width)
    cells[cells == ""] = None
    return pd.DataFrame(cells, columns=header, dtype=object)


def _to_frame(table: pa.Table) -> pd.DataFrame:
    if table.num_columns <= MANY_COLUMNS:
        return table.to_pandas()
    chunks = [chunk for column in table.columns for chunk in column.chunks]
    flat = pa.chunked_array(chunks, type=pa.large_string()).to_numpy(zero_copy_only=False)
    cells = flat.reshape(table.num_columns, table.num_rows).T
    return pd.DataFrame(cells, columns=table.column_names, dtype=object)


def _arrow_csv(data: bytes, delimiter: str, columns: list[str], read_options, invalid_row_handler=None) -> pa.Table:
    return pacsv.read_csv(
        io.BytesIO(data), read_options=read_options,
        parse_options=pacsv.ParseOptions(delimiter=delimiter, newlines_in_values=True,
                                         invalid_row_handler=invalid_row_handler),
        convert_options=pacsv.ConvertOptions(
            # large_string: the type pandas keeps its text in, so to_pandas copies nothing
            column_types={c: pa.large_string() for c in columns}, strings_can_be_null=True,
            # only an empty cell is missing: Arrow's default list ("NA", "null", "N/A" ...) would turn
            # a model named NA into a missing value
            null_values=[""], quoted_strings_can_be_null=True),
    )


def _longest_line(data: bytes) -> tuple[int, int]:
    """(1-based number, length in bytes) of the longest line, in one vectorised pass."""
    ends = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == ord("\n"))
    bounds = np.concatenate(([-1], ends, [len(data)]))
    lengths = np.diff(bounds) - 1
    index = int(np.argmax(lengths))
    return index + 1, int(lengths[index])


def _ragged_rows(data: bytes, delimiter: str, columns: list[str]) -> Problem:
    """Every row with more or fewer cells than the header, read again in one thread (Arrow numbers rows then)."""
    bad: list[tuple[int, int]] = []

    def collect(row) -> str:
        bad.append((int(row.number or 0), int(row.actual_columns)))
        return "skip"

    _arrow_csv(data, delimiter, columns, pacsv.ReadOptions(use_threads=False, block_size=max(len(data), 1 << 20)),
               collect)
    return _ragged_problem([(n - 1, k) for n, k in bad], len(columns))  # Arrow counts the header as row 1


def _ragged_problem(rows: list[tuple[int, int]], width: int) -> Problem:
    """(row number after the header, cells) of each row whose width differs from the header's."""
    shown = rows[:MAX_ROWS_SHOWN]
    return Problem((), f"rows with another number of cells than the header's {width} (a stray delimiter or "
                       "an unquoted comma?)", tuple(n for n, _ in shown), len(rows),
                   tuple(f"{k} cells" for _, k in shown))


def records_frame(source: str, records: list[dict]) -> pd.DataFrame:
    """One column per key; a key whose every value is an object becomes one column per nested key
    (``conv_metadata.sum_assistant_a_tokens``). A key that holds an object in some records only keeps the
    objects as cells, so that the column's check names those rows instead of finding the column missing."""
    frame = pd.DataFrame(records) if records else pd.DataFrame()
    parts, nested = [], False
    for column in frame.columns:
        values = frame[column]
        present = values.dropna() if values.dtype == object else ()
        if len(present) and isinstance(present.iat[0], dict) and all(isinstance(v, dict) for v in present):
            try:
                inner = pd.json_normalize([v if isinstance(v, dict) else {} for v in values])
            except RecursionError:
                raise InputError(source, [Problem((str(column),), "the objects nest too deeply to be read as "
                                                                  "columns")]) from None
            inner.columns = [f"{column}.{c}" for c in inner.columns]
            parts.append(inner)
            nested = True
        else:
            parts.append(values.to_frame())
    return pd.concat(parts, axis=1) if nested else frame


def read_json_records(raw: RawFile, text: str) -> list[dict]:
    """JSON (a list of records, or ``{"data": [...]}``-style) or JSONL (one record per line)."""
    if raw.format == "jsonl":
        records = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            record = _parse_json(raw, line, number)
            if not isinstance(record, dict):
                raise InputError(raw.name, [Problem((), f"line {number} is not a JSON object")])
            records.append(record)
        return records
    value = _parse_json(raw, text)
    if isinstance(value, dict):
        lists = [v for v in value.values() if isinstance(v, list)]
        if len(lists) == 1:
            value = lists[0]
        else:
            raise InputError(raw.name, [Problem((), "expected a JSON list of records (one object per row)")])
    if not isinstance(value, list) or not all(isinstance(r, dict) for r in value):
        raise InputError(raw.name, [Problem((), "expected a JSON list of records (one object per row)")])
    return value


def read_json_document(raw: RawFile) -> Any:
    """A whole JSON document (for lm-evaluation-harness results files)."""
    return _parse_json(raw, check_text(raw))


def _parse_json(raw: RawFile, text: str, line: int | None = None) -> Any:
    """json.loads with its two failures as InputErrors: invalid JSON, and nesting deeper than Python's stack
    (a RecursionError, which is not a ValueError)."""
    where = f"line {line} is not valid JSON" if line else "not valid JSON"
    try:
        return json.loads(text)
    except ValueError as exc:
        detail = exc.msg if line else str(exc)
        raise InputError(raw.name, [Problem((), f"{where} ({detail})" if line else f"{where}: {detail}")]) from None
    except RecursionError:
        raise InputError(raw.name, [Problem((), f"{where}: it nests lists or objects too deeply to be a table "
                                                "of records")]) from None
