"""Rendering results as JSON, markdown, CSV and terminal text, with user text made safe for each target.

Model names and other input text are data: a name may hold ``|``, ``<script>`` or start with ``=``.
Markdown escapes what would break a table or format text, HTML what a browser would run, the terminal
what would move the cursor or change colours, and CSV neutralises spreadsheet formulas (OWASP "CSV
injection": a text cell starting with = + - @ tab or CR gets a leading apostrophe).

:func:`csv_frame` is the one CSV writer of the project: every CSV file or download goes through it
(a test fails when a module writes CSV another way), so no export can forget the formula rule.

No NaN or infinity leaves through these writers: :func:`dumps`, :func:`csv_table`, :func:`csv_frame`,
:func:`markdown_table` and :func:`number` raise :class:`NonFiniteOutputError` on one. A number the
data cannot give is written as ``None`` (JSON null, an empty CSV cell, "–" in markdown) by the code
that knows why, next to the reason; anything else is a bug that a test will catch here.
"""

from __future__ import annotations

import csv
import html
import json
import math
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pandas is imported where a table is written: `evalboard --help` stays fast
    import pandas as pd

# What changes meaning inside a table cell: emphasis, code, links, HTML, the cell separator, math.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>|~$])")
# A text cell a spreadsheet would run: a formula start, after any apostrophes. Apostrophes count so that
# neutralising stays reversible: "'=x" (already quoted text) is written "''=x", and csv_restore undoes one.
_FORMULA = re.compile(r"'*[=+\-@\t\r]")
_NEUTRALISED = re.compile(r"'+[=+\-@\t\r]")
_FORMULA_FIRST = ("'", "=", "+", "-", "@", "\t", "\r")
# A formatted NaN or infinity as Python, numpy or pandas print it ("nan", "+nan", "-inf", "inf%" …).
_NON_FINITE_TEXT = re.compile(r"(?<![A-Za-z])[+-]?(nan|inf|infinity)(?![A-Za-z])", re.IGNORECASE)


class NonFiniteOutputError(ValueError):
    """A NaN or infinity was about to be written; the message says where."""


class MarkdownText(str):
    """Input text escaped for markdown (a model called "nan" is a name, not a number)."""


def _refuse(value: Any, where: str) -> None:
    raise NonFiniteOutputError(f"refusing to write {value!r} at {where}: a number the data cannot give must be "
                               "absent with its reason, never NaN or infinity")


def markdown_text(text: Any) -> str:
    """Text for a markdown table cell: specials backslash-escaped, line breaks as spaces."""
    return MarkdownText(_MARKDOWN_SPECIAL.sub(r"\\\1", " ".join(str(text).splitlines())))


def html_text(text: Any) -> str:
    return html.escape(str(text), quote=True)


def terminal_text(text: Any) -> str:
    """User text for a terminal line: control, format and line-separator characters (escape sequences,
    bidirectional overrides, U+2028 …) shown as escapes, so a label cannot recolour or rewrite the screen."""
    text = str(text)
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c == " " else _escape(c) for c in text)


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def csv_text(value: Any) -> Any:
    """A CSV cell that a spreadsheet shows as text, never runs as a formula. Numbers stay numbers
    (``-0.5`` as a float is written as it is); only text is neutralised, ``"-0.5"`` as text included."""
    if isinstance(value, str) and _FORMULA.match(value):
        return "'" + value
    return value


def csv_restore(value: Any) -> Any:
    """The text :func:`csv_text` was given (``csv_restore(csv_text(x)) == x`` for every x): for readers
    of the files EvalBoard itself writes, so that a round trip through CSV keeps text exact."""
    if isinstance(value, str) and _NEUTRALISED.match(value):
        return value[1:]
    return value


def json_value(value: Any, where: str = "$") -> Any:
    """Plain JSON values (numpy scalars become Python numbers); NaN and infinities are refused."""
    if isinstance(value, dict):
        return {str(k): json_value(v, f"{where}.{k}") for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_value(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        _refuse(value, where)
    return value


def undefined_as_null(value: Any) -> Any:
    """NaN and infinities as None, for reports whose contract says "null = the statistic could not be
    computed" and whose every block carries the reason next to it (a verdict, a status, a count of 0).
    Everything else goes to :func:`dumps` as it is, and a NaN there is refused."""
    if isinstance(value, dict):
        return {k: undefined_as_null(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [undefined_as_null(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    return None if isinstance(value, float) and not math.isfinite(value) else value


def jsonl_text(frame: pd.DataFrame) -> str:
    """One JSON object per row (JSON Lines): text exactly as it is, a missing cell (NaN) as null."""
    return "".join(json.dumps(json_value(undefined_as_null(record)), ensure_ascii=False) + "\n"
                   for record in frame.to_dict("records"))


def dumps(obj: Any) -> str:
    return json.dumps(json_value(obj), indent=2, ensure_ascii=False, allow_nan=False)


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[Any]], align: str | None = None) -> str:
    """A GitHub-flavoured markdown table; cells are escaped, ``align`` is one of l/r per column."""
    align = align or "l" * len(header)
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---:" if a == "r" else "---" for a in align) + "|"]
    for r, row in enumerate(rows):
        lines.append("| " + " | ".join(_markdown_cell(c, f"row {r + 1}, column {h!r}")
                                       for c, h in zip(row, [*header, *[""] * len(row)])) + " |")
    return "\n".join(lines)


def _markdown_cell(cell: Any, where: str) -> str:
    if cell is None:
        return "–"
    if hasattr(cell, "item") and not isinstance(cell, (str, bytes)):
        cell = cell.item()
    if isinstance(cell, float) and not math.isfinite(cell):
        _refuse(cell, f"markdown table {where}")
    if isinstance(cell, str) and not isinstance(cell, MarkdownText) and _NON_FINITE_TEXT.search(cell):
        _refuse(cell, f"markdown table {where}")
    return str(cell)


def csv_restored(frame: pd.DataFrame, source_format: str) -> pd.DataFrame:
    """A table read from CSV/TSV with :func:`csv_restore` applied to its text cells: how the readers of
    the files EvalBoard writes for itself (answers, eval sets) get their text back exactly."""
    import pandas as pd

    if source_format not in ("csv", "tsv"):
        return frame
    out = frame.copy(deep=False)
    for position in range(out.shape[1]):
        column = out.iloc[:, position]
        if column.dtype == object or pd.api.types.is_string_dtype(column.dtype):
            quoted = column.map(lambda v: isinstance(v, str) and v.startswith("'")).to_numpy(dtype=bool)
            if quoted.any():
                out.isetitem(position, column.astype(object).map(csv_restore).astype(column.dtype))
    return out


def csv_table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """CSV text of rows of cells (each column keeps its cells' own types); see :func:`csv_frame`. A cell
    that is NaN or infinite is refused (an absent value is None, written as an empty cell)."""
    import pandas as pd

    checked = [[_csv_number(c, f"CSV row {r + 1}, column {h!r}") for c, h in zip(row, [*header, *[""] * len(row)])]
               for r, row in enumerate(rows)]
    return csv_frame(pd.DataFrame(checked, columns=list(header), dtype=object))


def csv_frame(frame: pd.DataFrame, *, header: bool = True) -> str:
    """The one CSV writer: ``frame`` without its index, ``\\n`` line ends, text cells (and column names)
    neutralised by :func:`csv_text`, numbers as they are, a missing value (None, NaN) as an empty cell.
    An infinite number has no CSV spelling that reads back as what it was: it is refused, naming the column."""
    out = frame.copy(deep=False)
    out.columns = [csv_text(str(c)) for c in frame.columns]
    bare_cr = any("\r" in c for c in out.columns)
    for position in range(out.shape[1]):
        column, has_cr = _safe_column(out.iloc[:, position], str(frame.columns[position]))
        out.isetitem(position, column)
        bare_cr = bare_cr or has_cr
    # Python's csv module quotes a cell holding "\n" but not one holding a lone "\r", which readers take
    # for a line end: such a file gets every text cell quoted.
    quoting = csv.QUOTE_NONNUMERIC if bare_cr else csv.QUOTE_MINIMAL
    return out.to_csv(index=False, header=header, lineterminator="\n", quoting=quoting)


def _safe_column(column: pd.Series, name: str) -> tuple[pd.Series, bool]:
    """The column with its text neutralised, and whether some text holds a carriage return."""
    import numpy as np
    import pandas as pd

    if column.dtype.kind in "fc":
        _refuse_infinite(column[np.isinf(column.to_numpy())], name)
        return column, False
    if column.dtype.kind in "biumM":
        return column, False
    if pd.api.types.is_string_dtype(column.dtype) and column.dtype != object:  # text or missing only
        # Vectorised: a cheap prefilter on the first character, the exact rule only on those few.
        maybe = column.str.startswith(_FORMULA_FIRST, na=False).to_numpy(dtype=bool)
        hostile = np.zeros(len(column), dtype=bool)
        if maybe.any():
            hostile[maybe] = column[maybe].str.match(_FORMULA.pattern).to_numpy(dtype=bool)
        has_cr = bool(column.str.contains("\r", regex=False, na=False).any())
    else:  # object (or categorical) cells hold any Python value: one pass over them
        column = column.astype(object)
        values = column.to_numpy()
        if pd.api.types.infer_dtype(values, skipna=True) != "string":  # some cells are not text
            infinite = np.fromiter((isinstance(v, float) and math.isinf(v) for v in values), bool, len(values))
            _refuse_infinite(column[infinite], name)
        hostile = np.fromiter((isinstance(v, str) and v[:1] in _FORMULA_FIRST and _FORMULA.match(v) is not None
                               for v in values), bool, len(values))
        has_cr = any(isinstance(v, str) and "\r" in v for v in values)
    if hostile.any():
        column = column.astype(object)  # a copy: the caller's frame is left as it was
        column[hostile] = "'" + column[hostile].astype(str)
    return column, has_cr


def _refuse_infinite(cells: pd.Series, name: str) -> None:
    if len(cells):
        rows = ", ".join(str(i) for i in list(cells.index[:5]))
        raise NonFiniteOutputError(f"CSV column {name!r} holds an infinite number (rows {rows}); a CSV cell cannot say "
                         "that: this is a bug in the step that computed it")


def _csv_number(cell: Any, where: str) -> Any:
    if hasattr(cell, "item") and not isinstance(cell, (str, bytes)):
        cell = cell.item()
    if isinstance(cell, float) and not math.isfinite(cell):
        _refuse(cell, where)
    return cell


def number(value: float | None, digits: int, sign: bool = False) -> str:
    """``value`` to ``digits`` decimals ("–" for None, an absent value); NaN and infinities are refused."""
    if value is None:
        return "–"
    if not math.isfinite(value):
        _refuse(value, "a formatted number")
    return f"{value:+.{digits}f}" if sign else f"{value:.{digits}f}"


P_FLOOR = 1e-16  # double precision cannot tell a p-value below this from 0: it reads "< 1e-16", never "0"


def p_value(p: Any) -> str:
    """A p-value as a table cell: "0.031", "2.3e-05" below 0.001, "< 1e-16" at the floor, "–" if undefined."""
    try:
        p = float(p)
    except (TypeError, ValueError):
        return "–"
    if not math.isfinite(p):
        return "–"
    if p < P_FLOOR:
        return "< 1e-16"
    return f"{p:.1e}" if p < 0.001 else f"{p:.3f}"


def p_text(p: Any) -> str:
    """A p-value in a sentence: "p = 0.031", "p = 2.3e-05", "p < 1e-16" or "p undefined"; the one
    wording of p-values in every text, table and figure the product shows."""
    cell = p_value(p)
    if cell == "–":
        return "p undefined"
    return f"p {cell}" if cell.startswith("<") else f"p = {cell}"

