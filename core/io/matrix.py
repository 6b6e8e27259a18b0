"""Win-rate matrices: r[i, j] = share of comparisons of row model i against column model j that i won
(ties counted as half), optionally with a matrix of comparison counts (docs/methods.md §2, "From a win-rate
matrix")."""

from __future__ import annotations

import numpy as np
import pandas as pd

from core.io.problems import MAX_ROWS_SHOWN, InputError, Problem, ProblemList
from core.io.votes import MAX_COUNT

SYMMETRY_TOLERANCE = 1e-9  # docs/methods.md §2: r_ij + r_ji must equal 1 within this, else symmetrised
# Two shares of the same comparisons cannot add to more than 1. Rounding and rates taken from different
# samples put a pair a little over (they are symmetrised); a pair over by more than this is not a win-rate
# matrix (the two sides' own win rates of a different set? percentages?). Sums below 1 are what leaving
# ties out gives; symmetrising counts those ties half to each side.
EXCESS_TOLERANCE = 0.1
DIAGONAL_VALUES = (0.0, 0.5)  # what tables put on a model against itself (or leave it empty)


def looks_like_matrix(frame: pd.DataFrame) -> bool:
    """A square table whose first column lists the same names as the other columns' headers."""
    if frame.shape[1] < 3 or frame.shape[0] != frame.shape[1] - 1:
        return False
    names = [str(v).strip() for v in frame.iloc[:, 0].tolist()]
    return sorted(names) == sorted(map(str, frame.columns[1:]))


def looks_like_broken_matrix(frame: pd.DataFrame) -> bool:
    """Rows and columns named by mostly the same models, yet not square: a win-rate matrix gone wrong
    (a score table names tasks on one side and models on the other)."""
    if frame.shape[1] < 3 or frame.shape[0] < 2:
        return False
    rows = {str(v).strip() for v in frame.iloc[:, 0].tolist()}
    shared = rows & set(map(str, frame.columns[1:]))
    return len(shared) >= 2 and len(shared) * 2 >= len(rows)


def matrix_from_frames(rates: pd.DataFrame, source: str, counts: pd.DataFrame | None = None,
                       counts_source: str = "counts") -> tuple[pd.DataFrame, list[str]]:
    """Long form ``model_row, model_col, rate, n`` (n missing without counts) for every off-diagonal cell."""
    r = _square(rates, source)
    notes = []
    problems = ProblemList(source)
    names, columns = r.index.to_numpy(), np.array(r.columns, dtype=object)
    vals = r.to_numpy(copy=True)  # pandas 3 (copy-on-write) hands out read-only views
    diagonal = np.diag(vals).copy()
    odd_diagonal = ~np.isnan(diagonal) & ~np.isin(diagonal, DIAGONAL_VALUES)
    _add_cells(problems, np.diag(odd_diagonal), names, columns, "the diagonal (a model against itself) must be "
               "empty, 0.5 or 0")
    np.fill_diagonal(vals, np.nan)
    outside = (vals < 0) | (vals > 1)
    _add_cells(problems, outside, names, columns, "win rates must lie in [0, 1]")
    if np.isnan(vals).all():
        problems.add((), "every cell is empty: the matrix holds no comparisons")
    both = ~np.isnan(vals) & ~np.isnan(vals.T) & ~outside & ~outside.T
    inside = np.where(outside, np.nan, vals)  # refused above; inf or 1e308 would overflow the sum
    total = np.where(both, inside + inside.T, 1.0)
    over = total > 1 + EXCESS_TOLERANCE
    if over.any():
        _add_cells(problems, over, names, columns, f"r_ij + r_ji must be 1 (ties count half to each side); these "
                   f"pairs add up to more than {1 + EXCESS_TOLERANCE:g}, as much as {total[over].max():.3g}")
    problems.raise_if_any()
    asym = both & (np.abs(total - 1.0) > SYMMETRY_TOLERANCE)
    if asym.any():
        i, j = np.argwhere(np.triu(asym))[0]
        notes.append(f"{int(asym.sum()) // 2} pairs have r_ij + r_ji != 1 (e.g. {names[i]} vs {names[j]}: "
                     f"{total[i, j]:.3g}); they are symmetrised as (r_ij + 1 - r_ji) / 2 when fitted")
    n = None
    if counts is not None:
        n = _counts(counts, counts_source, list(r.index))
    else:
        notes.append("no count matrix: each observed pair counts as one comparison (a different estimator)")
    rows = []
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            if i != j and not np.isnan(vals[i, j]):
                rows.append((a, b, float(vals[i, j]), float(n.iat[i, j]) if n is not None else np.nan))
    out = pd.DataFrame(rows, columns=["model_row", "model_col", "rate", "n"])
    return out, notes


def _counts(counts: pd.DataFrame, source: str, models: list[str]) -> pd.DataFrame:
    """The count matrix, checked in its own row order, then in the order of the win-rate matrix."""
    n = _square(counts, source)
    if sorted(n.index) != sorted(models):
        raise InputError(source, [Problem((), "the count matrix names other models than the win-rate matrix")])
    problems = ProblemList(source)
    names, columns = n.index.to_numpy(), np.array(n.columns, dtype=object)
    nv = n.to_numpy(copy=True)
    np.fill_diagonal(nv, 0)
    infinite = np.isinf(nv)
    _add_cells(problems, infinite, names, columns, "comparison counts must be finite numbers")
    _add_cells(problems, nv < 0, names, columns, "comparison counts must be non-negative")
    _add_cells(problems, ~infinite & (nv > MAX_COUNT), names, columns,
               f"comparison counts above {MAX_COUNT:g} are not counts of votes")
    filled = np.nan_to_num(nv, posinf=0.0, neginf=0.0)
    _add_cells(problems, np.abs(filled - filled.T) > 1e-9, names, columns,
               "the count matrix must be symmetric (n_ij = n_ji)")
    if not problems.problems and not (filled > 0).any():
        problems.add((), "every count is 0 or empty: the count matrix holds no comparisons")
    problems.raise_if_any()
    return n.loc[models, models]


def _add_cells(problems: ProblemList, cells: np.ndarray, names, columns, message: str) -> None:
    """A rule broken in some cells: the columns and rows holding them (the row's model name shown)."""
    if cells.any():
        problems.add(tuple(columns[cells.any(axis=0)]), message, cells.any(axis=1), names)


def _square(frame: pd.DataFrame, source: str) -> pd.DataFrame:
    if not looks_like_matrix(frame):
        raise InputError(source, [_shape_problem(frame)])
    problems = ProblemList(source)
    index = [str(v).strip() for v in frame.iloc[:, 0]]
    body = frame.iloc[:, 1:].apply(lambda s: pd.to_numeric(s, errors="coerce"))
    bad = body.isna().to_numpy() & frame.iloc[:, 1:].notna().to_numpy()
    np.fill_diagonal(bad, False)
    problems.add(tuple(np.array(frame.columns[1:], dtype=str)[bad.any(axis=0)]),
                 "cells must be numbers (or empty for no comparison)", bad.any(axis=1), index)
    problems.raise_if_any()
    body.index = index
    body.columns = [str(c) for c in body.columns]
    return body.loc[index, index].astype("float64")


def _shape_problem(frame: pd.DataFrame) -> Problem:
    """What keeps a table from being a square matrix: the names missing on either side, or its size."""
    rows = [str(v).strip() for v in frame.iloc[:, 0].tolist()] if frame.shape[1] else []
    headers = list(map(str, frame.columns[1:]))
    header_set, row_set = set(headers), set(rows)
    only_rows = [(i, name) for i, name in enumerate(rows) if name not in header_set]
    only_columns = [c for c in headers if c not in row_set]
    if frame.shape[1] < 3:
        return Problem((), "a win-rate matrix needs model names in the first column and at least two model columns")
    text = (f"not a square win-rate matrix: {len(rows)} rows of models and {len(headers)} model columns; the "
            "first column must list the same names as the column headers")
    if only_columns:
        text += "; only as a column: " + ", ".join(map(repr, only_columns[:MAX_ROWS_SHOWN]))
    if only_rows:
        text += "; only as a row: " + ", ".join(repr(name) for _, name in only_rows[:MAX_ROWS_SHOWN])
    return Problem(tuple(only_columns), text, tuple(i + 1 for i, _ in only_rows[:MAX_ROWS_SHOWN]), len(only_rows),
                   tuple(repr(name) for _, name in only_rows[:MAX_ROWS_SHOWN]))
