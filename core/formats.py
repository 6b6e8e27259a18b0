"""Rendering results as JSON, markdown and CSV, with user text made safe for each target.

Model names and other input text are data: a name may hold ``|``, ``<script>`` or start with ``=``.
Markdown escapes what would break a table or format text, HTML what a browser would run, and CSV
neutralises spreadsheet formulas (OWASP "CSV injection": a leading = + - @ tab or CR).
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


def markdown_text(text: Any) -> str:
    """Text for a markdown table cell: specials backslash-escaped, line breaks as spaces."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", " ".join(str(text).splitlines()))


def html_text(text: Any) -> str:
    return html.escape(str(text), quote=True)


def csv_text(value: Any) -> Any:
    """A CSV cell that a spreadsheet shows as text, never runs as a formula."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def json_value(value: Any) -> Any:
    """NaN and infinities become null (JSON has neither); numpy scalars become Python numbers."""
    if isinstance(value, dict):
        return {str(k): json_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_value(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def dumps(obj: Any) -> str:
    return json.dumps(json_value(obj), indent=2, ensure_ascii=False, allow_nan=False)


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[Any]], align: str | None = None) -> str:
    """A GitHub-flavoured markdown table; cells are escaped, ``align`` is one of l/r per column."""
    align = align or "l" * len(header)
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---:" if a == "r" else "---" for a in align) + "|"]
    for row in rows:
        lines.append("| " + " | ".join(str(c) for c in row) + " |")
    return "\n".join(lines)


def csv_table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow([csv_text(c) for c in row])
    return out.getvalue()


def number(value: float, digits: int) -> str:
    return "–" if value is None or (isinstance(value, float) and not math.isfinite(value)) else f"{value:.{digits}f}"


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

