"""Rendering results as JSON, markdown and CSV, with user text made safe for each target.

Model names and other input text are data: a name may hold ``|``, ``<script>`` or start with ``=``.
Markdown escapes what would break a table or format text, HTML what a browser would run, and CSV
neutralises spreadsheet formulas (OWASP "CSV injection": a leading = + - @ tab or CR).

No NaN or infinity leaves through these writers: :func:`dumps`, :func:`csv_table`,
:func:`markdown_table` and :func:`number` raise :class:`NonFiniteOutputError` on one. A number the
data cannot give is written as ``None`` (JSON null, an empty CSV cell, "–" in markdown) by the code
that knows why, next to the reason; anything else is a bug that a test will catch here.
"""

from __future__ import annotations

import csv
import html
import io
import json
import math
import re
from collections.abc import Iterable, Sequence
from typing import Any

# What changes meaning inside a table cell: emphasis, code, links, HTML, the cell separator, math.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>|~$])")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
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


def csv_text(value: Any) -> Any:
    """A CSV cell that a spreadsheet shows as text, never runs as a formula."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
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


def csv_table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    for r, row in enumerate(rows):
        writer.writerow([csv_text(_csv_number(c, f"CSV row {r + 1}, column {h!r}"))
                         for c, h in zip(row, [*header, *[""] * len(row)])])
    return out.getvalue()


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
