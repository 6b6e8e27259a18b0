"""Validation errors that tell the user exactly which rows and columns are wrong.

One :class:`InputError` carries every problem found in a file, so a user fixes the file once instead
of once per rule. Rows are numbered from 1 after the header (the first record is row 1); at most
:data:`MAX_ROWS_SHOWN` rows are listed per problem, together with the total count.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from core.errors import EvalBoardError

MAX_ROWS_SHOWN = 20


@dataclass(frozen=True)
class Problem:
    """One broken rule: which columns, what is wrong, and where."""

    columns: tuple[str, ...]
    message: str
    rows: tuple[int, ...] = ()  # 1-based record numbers, the first MAX_ROWS_SHOWN only
    n_rows: int = 0  # how many rows break the rule in all
    values: tuple[str, ...] = ()  # the offending values, aligned with ``rows``
    # Inputs whose records are not numbered rows (lm-evaluation-harness tasks) name each record instead.
    labels: tuple[str, ...] = ()  # aligned with ``rows``
    unit: str = "row"

    def describe(self) -> str:
        cols = ", ".join(f"'{c}'" for c in self.columns)
        text = f"{self.message}" + (f" [column {cols}]" if len(self.columns) == 1 else
                                     f" [columns {cols}]" if self.columns else "")
        if self.n_rows:
            shown = []
            for i, row in enumerate(self.rows):
                value = f" ({self.values[i]})" if i < len(self.values) else ""
                shown.append(f"{self.labels[i] if i < len(self.labels) else row}{value}")
            more = f"; first {len(self.rows)} shown" if self.n_rows > len(self.rows) else ""
            plural = self.unit if self.n_rows == 1 else f"{self.unit}s"
            text += f"\n    {self.n_rows} {plural}{more}: " + ", ".join(shown)
        return text


class InputError(EvalBoardError, ValueError):
    """A file (or upload) that cannot be used as it is. Nothing was stored."""

    def __init__(self, source: str, problems: list[Problem], hint: str | None = None):
        self.source = source
        self.problems = list(problems)
        self.hint = hint
        super().__init__(self._render())

    def cli_message(self) -> str:
        return str(self)  # it opens with the file's name: no "evalboard:" before it

    def _render(self) -> str:
        head = f"{self.source}: rejected, nothing was stored"
        if len(self.problems) == 1 and not self.problems[0].n_rows:
            head += f": {self.problems[0].describe()}"
            body = []
        else:
            numbered = any(p.n_rows and not p.labels for p in self.problems)
            head += f" ({len(self.problems)} problem{'s' if len(self.problems) != 1 else ''}" + \
                ("; rows are numbered from 1 after the header)" if numbered else ")")
            body = [f"  - {p.describe()}" for p in self.problems]
        tail = [f"  hint: {self.hint}"] if self.hint else []
        return "\n".join([head, *body, *tail])


@dataclass
class ProblemList:
    """Collects problems while a loader checks its rules, then raises them all at once."""

    source: str
    problems: list[Problem] = field(default_factory=list)

    def add(self, columns, message: str, mask=None, values=None) -> None:
        """Record a problem; ``mask`` marks offending rows (boolean array over the records)."""
        columns = (columns,) if isinstance(columns, str) else tuple(columns)
        if mask is None:
            self.problems.append(Problem(columns, message))
            return
        idx = np.flatnonzero(np.asarray(mask, dtype=bool))
        if idx.size == 0:
            return
        first = idx[:MAX_ROWS_SHOWN]
        shown = ()
        if values is not None:
            vals = np.asarray(values, dtype=object)[first]
            shown = tuple(_show(v) for v in vals)
        self.problems.append(Problem(columns, message, tuple(int(i) + 1 for i in first), int(idx.size), shown))

    def raise_if_any(self, hint: str | None = None) -> None:
        if self.problems:
            raise InputError(self.source, self.problems, hint)


def _show(value) -> str:
    """A short, unambiguous rendering of an offending cell."""
    if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value)):
        return "empty"
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 40 else text[:37] + "...'"
