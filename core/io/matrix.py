"""Win-rate matrices: r[i, j] = share of comparisons of row model i against column model j that i won
(ties counted as half), optionally with a matrix of comparison counts (METHODS §2, "From a win-rate
matrix")."""

from __future__ import annotations

import numpy as np
import pandas as pd

from core.io.problems import InputError, Problem, ProblemList

SYMMETRY_TOLERANCE = 1e-9  # METHODS §2: r_ij + r_ji must equal 1 within this


def looks_like_matrix(frame: pd.DataFrame) -> bool:
    """A square table whose first column lists the same names as the other columns' headers."""
    if frame.shape[1] < 3 or frame.shape[0] != frame.shape[1] - 1:
        return False
    names = [str(v).strip() for v in frame.iloc[:, 0].tolist()]
    return sorted(names) == sorted(map(str, frame.columns[1:]))


def matrix_from_frames(rates: pd.DataFrame, source: str, counts: pd.DataFrame | None = None,
                       counts_source: str = "counts") -> tuple[pd.DataFrame, list[str]]:
    """Long form ``model_row, model_col, rate, n`` (n missing without counts) for every off-diagonal cell."""
    r = _square(rates, source)
    notes = []
    problems = ProblemList(source)
    vals = r.to_numpy(copy=True)  # pandas 3 (copy-on-write) hands out read-only views
    np.fill_diagonal(vals, np.nan)
    outside = (vals < 0) | (vals > 1)
    problems.add(tuple(r.columns[outside.any(axis=0)]), "win rates must lie in [0, 1]", outside.any(axis=1),
                 r.index.to_numpy())
    problems.raise_if_any()
    both = ~np.isnan(vals) & ~np.isnan(vals.T)
    err = np.abs(vals + vals.T - 1.0)
    asym = both & (err > SYMMETRY_TOLERANCE)
    if asym.any():
        notes.append(f"{int(asym.sum()) // 2} pairs have r_ij + r_ji != 1; they are symmetrised as "
                     "(r_ij + 1 - r_ji) / 2 when fitted")
    n = None
    if counts is not None:
        n = _square(counts, counts_source)
        if sorted(n.index) != sorted(r.index):
            raise InputError(counts_source, [Problem((), "the count matrix names other models than the win-rate "
                                                         "matrix")])
        n = n.loc[r.index, r.index]
        cp = ProblemList(counts_source)
        nv = n.to_numpy().copy()
        np.fill_diagonal(nv, 0)
        negative = nv < 0
        asymmetric = np.abs(np.nan_to_num(nv) - np.nan_to_num(nv.T)) > 1e-9
        cp.add(tuple(n.columns[negative.any(axis=0)]), "comparison counts must be non-negative",
               negative.any(axis=1), n.index.to_numpy())
        cp.add(tuple(n.columns[asymmetric.any(axis=0)]), "the count matrix must be symmetric (n_ij = n_ji)",
               asymmetric.any(axis=1), n.index.to_numpy())
        cp.raise_if_any()
    else:
        notes.append("no count matrix: each observed pair counts as one comparison (a different estimator)")
    rows = []
    names = list(r.index)
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            if i != j and not np.isnan(vals[i, j]):
                rows.append((a, b, float(vals[i, j]), float(n.iat[i, j]) if n is not None else np.nan))
    out = pd.DataFrame(rows, columns=["model_row", "model_col", "rate", "n"])
    return out, notes


def _square(frame: pd.DataFrame, source: str) -> pd.DataFrame:
    if not looks_like_matrix(frame):
        raise InputError(source, [Problem((), "a matrix needs model names in the first column and the same "
                                              "names as column headers")])
    problems = ProblemList(source)
    index = [str(v).strip() for v in frame.iloc[:, 0]]
    body = frame.iloc[:, 1:].apply(lambda s: pd.to_numeric(s, errors="coerce"))
    bad = body.isna().to_numpy() & frame.iloc[:, 1:].notna().to_numpy()
    np.fill_diagonal(bad, False)
    problems.add(tuple(map(str, frame.columns[1:])), "cells must be numbers (or empty for no comparison)",
                 bad.any(axis=1), index)
    problems.raise_if_any()
    body.index = index
    body.columns = [str(c) for c in body.columns]
    return body.loc[index, index].astype("float64")
