"""Style features of answer texts: length and markdown density, for the style-controlled ranking.

Per answer (the definitions of Chatbot Arena's style control, FastChat ``count_markdown_elements``):

* ``length``  — characters (Unicode code points, ``len(text)``) of the whole answer;
* from the answer with fenced code blocks removed:
  ``headers`` — lines that start with 1–6 ``#`` followed by a space (or tab): ``# Title``, not ``#tag``;
  ``lists``   — lines that start, after spaces or tabs, with ``-``, ``*``, ``+`` or a number followed by
  ``.`` or ``)``, then a space (or tab): ``- item``, ``  2) item``, not ``1.5 million`` or ``**bold**``;
  ``bold``    — ``**…**`` spans plus ``__…__`` spans, each on one line with at least one character that is
  not the delimiter's (``**a**``, not ``****``); the two kinds are counted separately and added, so
  ``**outer __inner__ outer**`` is two spans (as FastChat counts them).

A fenced code block starts at a line whose first non-blank characters are three backticks (or three
tildes) and runs to the next line that starts the same way, or to the end of the answer when it is
never closed (CommonMark: an unclosed fence runs to the end of the document). Code is not markdown
styling: ``# comment`` lines in a Python block are not headers.

Lines end at ``\\n``; a CRLF line end leaves a ``\\r`` at the end of the line's text, which changes
nothing above. A missing answer (None/NaN) has missing features (``<NA>``), never zeros: a vote whose
answer is unknown cannot be style-controlled, and the caller decides what to do with it.

Everything runs vectorised over the column, chunk by chunk of answers, never one Python call per
answer: the answers' UTF-8 bytes are scanned once with numpy for newlines, the lines are classified from
their first few bytes (headers, list items, fences), and bold spans are counted by Arrow's compiled regex
kernel (RE2) with the fenced blocks blanked out. The definitions above are ASCII patterns; UTF-8
continuation bytes never equal an ASCII byte, so counting on bytes gives the same answer as counting on
characters. A large column is counted by two threads (the kernels release the GIL).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from core.errors import EvalBoardError

STYLE_FEATURES = ("length", "headers", "lists", "bold")
# Per-side columns a vote file may carry (any subset) or ingest computes from the texts.
SIDE_COLUMNS = {"length": ("len_a", "len_b"), "headers": ("headers_a", "headers_b"),
                "lists": ("lists_a", "lists_b"), "bold": ("bold_a", "bold_b")}

NEWLINE, HASH, BLANK_BYTE = (ord(c) for c in "\n# ")
BOLD_PATTERNS = (r"\*\*[^*\n]+\*\*", r"__[^_\n]+__")  # counted separately and added (module docstring)
BLANK = np.zeros(256, bool)
BLANK[[ord(" "), ord("\t")]] = True
DIGIT = np.zeros(256, bool)
DIGIT[ord("0"):ord("9") + 1] = True
BULLET = np.zeros(256, bool)
BULLET[[ord("-"), ord("*"), ord("+")]] = True
NUMBER_END = np.zeros(256, bool)
NUMBER_END[[ord("."), ord(")")]] = True
FENCE = np.zeros(256, bool)
FENCE[[ord("`"), ord("~")]] = True
MAX_HEADER_LEVEL = 6


class StyleFeatureError(EvalBoardError, ValueError):
    """Answer texts that cannot be read as text (the message names the rows)."""


ROWS_PER_CHUNK = 4_096  # answers per kernel call: ~8 MB of 2 kB answers, so temporary arrays stay in reused memory
SINGLE_STEPS = 8  # byte-by-byte rounds of _advance before it looks at windows
WORKERS = 2  # threads counting chunks at once (at most the machine's cores)
PARALLEL_MIN_BYTES = 64 << 20  # below this much text one thread does it all: a small file pays nothing


def answer_features(texts) -> pd.DataFrame:
    """Features of each answer: a frame with integer columns ``length, headers, lists, bold``.

    ``texts``: a pandas Series, a pyarrow array or a sequence of str/None. The frame keeps a Series'
    index; a missing answer gives ``<NA>`` in every column (nullable ``Int64``)."""
    index = texts.index if isinstance(texts, pd.Series) else None
    counts, missing = _column_counts([_as_text_column(texts)], ["texts"])
    return pd.DataFrame({n: pd.arrays.IntegerArray(counts[n][0], missing[0]) for n in STYLE_FEATURES},
                        index=index)


def pair_features(answer_a, answer_b) -> pd.DataFrame:
    """Per-vote features of both sides: columns ``len_a, len_b, headers_a, headers_b, lists_a, lists_b,
    bold_a, bold_b`` (:data:`SIDE_COLUMNS`), one row per vote, in the order of the inputs."""
    index = answer_a.index if isinstance(answer_a, pd.Series) else None
    a, b = _as_text_column(answer_a), _as_text_column(answer_b)
    if len(a) != len(b):
        raise StyleFeatureError(f"`answer_a` has {len(a):,} answers and `answer_b` {len(b):,}: one pair per vote "
                                "is needed")
    counts, missing = _column_counts([a, b], ["answer_a", "answer_b"])
    columns = {}
    for feature, (col_a, col_b) in SIDE_COLUMNS.items():
        columns[col_a] = pd.arrays.IntegerArray(counts[feature][0], missing[0])
        columns[col_b] = pd.arrays.IntegerArray(counts[feature][1], missing[1])
    return pd.DataFrame(columns, index=index)


def _column_counts(columns: list, names: list[str]) -> tuple[dict[str, list[np.ndarray]], list[np.ndarray]]:
    """Counts of every feature for equally long text columns, chunk by chunk of rows.

    Chunks are independent, and the kernels spend their time in numpy and Arrow calls that release the
    GIL, so a column of more than :data:`PARALLEL_MIN_BYTES` is counted by :data:`WORKERS` threads: they
    share the texts in memory (nothing is copied or pickled, as worker processes would need) and a small
    file pays nothing."""
    n = len(columns[0])
    counts = {f: [np.zeros(n, dtype=np.int64) for _ in columns] for f in STYLE_FEATURES}
    missing = [np.zeros(n, dtype=bool) for _ in columns]
    jobs = [(c, start, min(n, start + ROWS_PER_CHUNK)) for c in range(len(columns))
            for start in range(0, n, ROWS_PER_CHUNK)]

    def run(job: tuple[int, int, int]) -> None:
        c, start, stop = job
        part = _arrow_slice(columns[c], start, stop, names[c])
        null = part.is_null().to_numpy(zero_copy_only=False)
        missing[c][start:stop] = null
        for f, values in _count(part).items():
            counts[f][c][start:stop] = np.where(null, 0, values)

    workers = min(WORKERS, os.cpu_count() or 1, len(jobs))
    if workers > 1 and sum(_text_bytes(column) for column in columns) >= PARALLEL_MIN_BYTES:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            list(pool.map(run, jobs))  # list(): a worker's exception is raised here
    else:
        for job in jobs:
            run(job)
    return counts, missing


def _text_bytes(column) -> int:
    """Bytes of text in a column (an estimate for Python objects: what decides whether to use threads)."""
    if isinstance(column, pa.Array):
        return column.nbytes
    return sum(len(v) for v in column[:1000] if isinstance(v, str)) * max(1, len(column) // 1000)


def _count(texts: pa.Array) -> dict[str, np.ndarray]:
    """length, headers, lists and bold of every text of a large_string array (nulls count as empty)."""
    n = len(texts)
    length = pc.utf8_length(texts).fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
    offsets = np.frombuffer(texts.buffers()[1], dtype=np.int64)[texts.offset:texts.offset + n + 1]
    base, total = int(offsets[0]), int(offsets[-1] - offsets[0])
    zeros = np.zeros(n, dtype=np.int64)
    if total == 0:
        return {"length": length, "headers": zeros, "lists": zeros.copy(), "bold": zeros.copy()}
    data = np.frombuffer(texts.buffers()[2], dtype=np.uint8)[base:base + total]
    lines = _Lines(data, offsets - base)
    code = _code_lines(data, lines)
    headers = _header_lines(data, lines) & ~code
    lists = _list_lines(data, lines) & ~code
    bold = _bold_spans(data, offsets - base, lines, code)
    return {"length": length,
            "headers": np.bincount(lines.text[headers], minlength=n),
            "lists": np.bincount(lines.text[lists], minlength=n),
            "bold": bold}


class _Lines:
    """Start and end (exclusive, at the newline or the end of the text) of every non-empty-text line,
    the text it belongs to, the position of its first byte that is not a space or tab, and the bytes at
    the start and at that position. One pass over the bytes finds the newlines; everything else looks at
    a few bytes per line."""

    def __init__(self, data: np.ndarray, offsets: np.ndarray):
        self.n_texts = n = len(offsets) - 1
        after_newline = np.flatnonzero(data == NEWLINE) + 1
        if after_newline.size and after_newline[-1] == len(data):
            after_newline = after_newline[:-1]
        # A line also starts at the first byte of every non-empty text that does not follow a newline
        # (the texts lie end to end: the byte before is the last of the previous text).
        text_start = offsets[:-1][offsets[:-1] < offsets[1:]]
        before = data[np.maximum(text_start - 1, 0)]
        extra = text_start[(text_start == 0) | (before != NEWLINE)]
        self.start = np.insert(after_newline, np.searchsorted(after_newline, extra), extra)
        per_text = np.searchsorted(self.start, offsets[1:]) - np.searchsorted(self.start, offsets[:-1])
        self.text = np.repeat(np.arange(n), per_text)
        # A line runs to the next line's start, less the newline before it if there is one (there is
        # none where the next line is the next text's first and this text has no final newline).
        following = np.append(self.start[1:], len(data))
        self.end = following - (data[following - 1] == NEWLINE)
        self.first = _advance(data, self.start, self.end, BLANK)
        self.head, self.lead = data[self.start], _byte(data, self.first)  # first byte; first non-blank one


def _code_lines(data: np.ndarray, lines: _Lines) -> np.ndarray:
    """Lines inside fenced code blocks, fence lines included (an unclosed block runs to the text's end)."""
    candidates = np.flatnonzero(FENCE[lines.lead])
    p, end = lines.first[candidates], lines.end[candidates]
    b0, b1, b2 = (_byte(data, p + k) for k in range(3))
    index = candidates[(p + 3 <= end) & (b0 == b1) & (b1 == b2)]
    b0 = _byte(data, lines.first[index])
    code = np.zeros(len(lines.start), dtype=bool)
    if not index.size:
        return code
    kind, text = b0, lines.text[index]
    first_of_text = np.r_[True, text[1:] != text[:-1]]
    group = np.cumsum(first_of_text) - 1
    mixed = np.zeros(group[-1] + 1, dtype=bool)
    np.logical_or.at(mixed, group[1:], (kind[1:] != kind[:-1]) & ~first_of_text[1:])
    single = ~mixed[group]
    # One fence kind in a text: fence lines alternate opening, closing, opening, …
    rank = np.arange(len(index)) - np.flatnonzero(first_of_text)[group]
    opens = index[single & (rank % 2 == 0)]
    closing = np.r_[index[1:], -1]
    same_text_next = np.r_[text[1:] == text[:-1], False]
    close = np.where(same_text_next, closing, -1)[single & (rank % 2 == 0)]
    mixed_open, mixed_close = _mixed_fence_pairs(index[~single], kind[~single], text[~single])
    opens, close = np.r_[opens, mixed_open], np.r_[close, mixed_close]
    last_line_of_text = np.searchsorted(lines.text, lines.text[opens], side="right") - 1
    close = np.where(close < 0, last_line_of_text, close)
    change = np.zeros(len(code) + 1, dtype=np.int64)  # +1 where a block starts, −1 after it ends
    np.add.at(change, opens, 1)
    np.add.at(change, close + 1, -1)
    return np.cumsum(change[:-1]) > 0


def _mixed_fence_pairs(index: np.ndarray, kind: np.ndarray, text: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Opening and closing fence lines of the (rare) texts with both ``` and ~~~ fences: a block closes
    only at a fence of its own kind, so the lines are walked in order (−1: never closed)."""
    pairs, open_at, open_kind, open_text = [], -1, 0, -1
    for i, k, t in zip(index.tolist(), kind.tolist(), text.tolist()):
        if open_at >= 0 and t != open_text:
            pairs.append((open_at, -1))
            open_at = -1
        if open_at < 0:
            open_at, open_kind, open_text = i, k, t
        elif k == open_kind:
            pairs.append((open_at, i))
            open_at = -1
    if open_at >= 0:
        pairs.append((open_at, -1))
    both = np.array(pairs, dtype=np.int64).reshape(-1, 2)
    return both[:, 0], both[:, 1]


def _header_lines(data: np.ndarray, lines: _Lines) -> np.ndarray:
    """1–6 ``#`` at the very start of the line, then a space or tab."""
    found = np.zeros(len(lines.start), dtype=bool)
    candidates = np.flatnonzero(lines.head == HASH)
    start, end = lines.start[candidates], lines.end[candidates]
    hashes = _advance(data, start, np.minimum(end, start + MAX_HEADER_LEVEL + 1), np.arange(256) == HASH) - start
    after = start + hashes
    found[candidates] = (hashes <= MAX_HEADER_LEVEL) & (after < end) & BLANK[_byte(data, after)]
    return found


def _list_lines(data: np.ndarray, lines: _Lines) -> np.ndarray:
    """After spaces/tabs: ``-``, ``*`` or ``+``, or digits then ``.`` or ``)``; then a space or tab."""
    found = np.zeros(len(lines.start), dtype=bool)
    lead = lines.lead
    candidates = np.flatnonzero(BULLET[lead] | DIGIT[lead])
    p, end = lines.first[candidates], lines.end[candidates]
    bullet = (p + 1 < end) & BULLET[_byte(data, p)] & BLANK[_byte(data, p + 1)]
    q = _advance(data, p, end, DIGIT)
    number = (q > p) & (q + 1 < end) & NUMBER_END[_byte(data, q)] & BLANK[_byte(data, q + 1)]
    found[candidates] = bullet | number
    return found


def _bold_spans(data: np.ndarray, offsets: np.ndarray, lines: _Lines, code: np.ndarray) -> np.ndarray:
    """Per text, the non-overlapping leftmost matches of :data:`BOLD_PATTERNS` (``**…**`` and ``__…__`` spans)
    outside code, counted by Arrow's RE2 kernel over each text (compiled code, no Python call per text).

    Code is taken out by overwriting every fenced block — from the start of its opening fence line to the
    end of its last line — with spaces in a copy of the bytes: a span cannot cross a line end, and the
    newlines around a block stay, so what is counted is exactly the spans of the remaining lines. A chunk
    without code is counted in place."""
    if code.any():
        data = data.copy()
        first_line = np.flatnonzero(code & ~np.r_[False, code[:-1]])
        last_line = np.flatnonzero(code & ~np.r_[code[1:], False])
        for start, end in zip(lines.start[first_line].tolist(), lines.end[last_line].tolist()):
            data[start:end] = BLANK_BYTE
    texts = pa.LargeStringArray.from_buffers(len(offsets) - 1, pa.py_buffer(np.ascontiguousarray(offsets)),
                                             pa.py_buffer(data))
    return sum(pc.count_substring_regex(texts, pattern).to_numpy(zero_copy_only=False).astype(np.int64)
               for pattern in BOLD_PATTERNS)


def _byte(data: np.ndarray, at: np.ndarray) -> np.ndarray:
    """data[at]; a position past the end reads the last byte (every caller also checks the line end)."""
    return data[np.minimum(at, len(data) - 1)]


def _advance(data: np.ndarray, pos: np.ndarray, end: np.ndarray, table: np.ndarray) -> np.ndarray:
    """For each position, the first position at or after it whose byte is not in ``table`` (a 256-entry
    mask), or ``end`` if that comes first. The first rounds step one byte at a time over the positions still
    moving (most stop after a byte or two); what is left is looked at in windows that double in width, so a
    long run of indentation costs a few rounds, not one per byte."""
    pos = pos.copy()
    active = np.flatnonzero((pos < end) & table[_byte(data, pos)])
    for _ in range(SINGLE_STEPS):
        if not active.size:
            return pos
        moved = pos[active] + 1
        pos[active] = moved
        active = active[(moved < end[active]) & table[_byte(data, moved)]]
    width = 16
    while active.size:
        window = pos[active, None] + np.arange(width)
        hit = table[_byte(data, window)] & (window < end[active, None])
        run = np.cumprod(hit, axis=1).sum(axis=1)
        pos[active] += run
        active = active[run == width]
        width = min(2 * width, 4096)
    return pos


def _as_text_column(texts):
    """A pyarrow array (sliced per chunk without a copy) or an object ndarray of Python values."""
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    if isinstance(texts, pa.Array):
        return texts
    if isinstance(texts, pd.Series) and isinstance(texts.dtype, pd.ArrowDtype):
        return pa.array(texts)
    series = texts if isinstance(texts, pd.Series) else pd.Series(list(texts), dtype=object)
    return series.to_numpy(dtype=object, na_value=None)


def _arrow_slice(column, start: int, stop: int, name: str) -> pa.Array:
    if not isinstance(column, pa.Array):
        return _as_arrow_text(column[start:stop], name, start)
    part = column.slice(start, stop - start)
    if pa.types.is_large_string(part.type):
        return part
    if pa.types.is_string(part.type) or pa.types.is_string_view(part.type):
        return part.cast(pa.large_string())
    if pa.types.is_null(part.type):
        return pa.nulls(len(part), pa.large_string())
    raise StyleFeatureError(f"`{name}` must hold text, not {part.type}")


def _as_arrow_text(values: np.ndarray, name: str, offset: int) -> pa.Array:
    try:
        return pa.array(values, type=pa.large_string(), from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeError):
        return _as_arrow_text_slowly(values, name, offset)


def _as_arrow_text_slowly(values: np.ndarray, name: str, offset: int) -> pa.Array:
    """The rare file whose answers are not all str: numbers become their text; anything else, or text
    that is not valid Unicode, is an error naming the rows (1-based positions)."""
    cleaned, bad = [], []
    for i, v in enumerate(values):
        if v is None or (isinstance(v, float) and np.isnan(v)):
            cleaned.append(None)
        elif isinstance(v, str):
            try:
                v.encode("utf-8")
                cleaned.append(v)
            except UnicodeEncodeError:
                bad.append(offset + i + 1)
                cleaned.append(None)
        elif isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool):
            cleaned.append(str(v))
        else:
            bad.append(offset + i + 1)
            cleaned.append(None)
    if bad:
        shown = ", ".join(map(str, bad[:20])) + (f" … ({len(bad):,} rows)" if len(bad) > 20 else "")
        raise StyleFeatureError(f"`{name}`: the answers in rows {shown} are not readable text (not a string, or "
                                "not valid Unicode)")
    return pa.array(cleaned, type=pa.large_string())
