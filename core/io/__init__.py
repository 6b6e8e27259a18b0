"""Loading and validating inputs: votes, counts tables, EvalRuns and win-rate matrices.

``load(source)`` reads a file (path, bytes or uploaded file), decides what it holds from its
columns (or takes ``kind``), maps aliases and an optional user column/outcome mapping onto the
canonical columns of :mod:`core.schema`, validates every rule, and returns a :class:`Loaded` table.
Any broken rule raises one :class:`InputError` naming the file, rows and columns.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from core.io.matrix import looks_like_broken_matrix, looks_like_matrix, matrix_from_frames
from core.io.problems import InputError, Problem
from core.io.read import RawFile, open_source, read_json_document, read_table
from core.io.runs import is_lm_eval_document, wide_key_column, runs_from_frame, runs_from_lm_eval, \
    runs_from_wide
from core.io.votes import ARENA_ALIASES, MAPPING_HINT, counts_from_frame, votes_from_frame
from core.choices import READ_KINDS
from core.schema import RUN_COLUMN_ALIASES, VOTE_COLUMN_ALIASES

__all__ = ["READ_KINDS", "InputError", "Loaded", "Problem", "detect_kind", "load", "load_lm_eval", "open_source",
           "parse_pairs"]


@dataclass(frozen=True)
class Loaded:
    """A validated input, ready to store or analyse."""

    kind: str  # one of core.schema.KINDS
    frame: pd.DataFrame = field(repr=False)
    source: str
    sha256: str
    notes: tuple[str, ...] = ()
    options: Mapping[str, Any] = field(default_factory=dict)  # how it was read (mapping, metric …)

    @property
    def rows(self) -> int:
        return len(self.frame)


def detect_kind(frame: pd.DataFrame, columns: Mapping[str, str] | None = None) -> str | None:
    """Decide from the column names what a table holds; None when nothing fits."""
    names = set(map(str, frame.columns)) | set((columns or {}).keys())
    mapped = names | {dst for src, dst in {**VOTE_COLUMN_ALIASES, **ARENA_ALIASES}.items() if src in names}
    # Two of model_a/model_b/winner already say "pairwise"; the third is then reported as missing.
    pairwise = len({"model_a", "model_b", "winner"} & mapped) >= 2
    if pairwise and ({"count", "n"} & names):
        return "counts"
    if pairwise:
        return "votes"
    run_names = names | {dst for src, dst in RUN_COLUMN_ALIASES.items() if src in names}
    if {"model_id", "task_id"} <= run_names:  # a long table (without score it is reported as missing)
        return "eval_runs"
    if looks_like_matrix(frame) or looks_like_broken_matrix(frame):
        return "winrate_matrix"
    if wide_key_column(frame, columns) and frame.shape[1] >= 2:
        return "eval_runs_wide"
    return None


def load(source: Any, kind: str | None = None, *, columns: Mapping[str, str] | None = None,
         outcomes: Mapping[str, str] | None = None, metric: str | None = None, counts: Any = None,
         name: str | None = None, format: str | None = None) -> Loaded:
    """Read, detect, map and validate one input.

    Parameters
    ----------
    source : path, bytes or file-like (a Streamlit upload works as it is)
    kind : votes | counts | eval_runs | eval_runs_wide | lm_eval | winrate_matrix; detected when None
    columns : canonical column -> the file's column, for files whose names differ
    outcomes : the file's winner value -> model_a | model_b | tie | tie (bothbad)
    metric : lm-evaluation-harness metric to read (default ``acc``); metric name for wide tables
    counts : for a win-rate matrix, the matching matrix of comparison counts
    """
    if kind is not None and kind not in READ_KINDS:
        raise ValueError(f"kind must be one of {', '.join(READ_KINDS)}, not {kind!r}")
    raw = open_source(source, name=name, format=format)
    options = {k: v for k, v in {"kind": kind, "columns": dict(columns or {}), "outcomes": dict(outcomes or {}),
                                 "metric": metric}.items() if v}
    if raw.format == "json" and kind in (None, "lm_eval"):
        doc = read_json_document(raw)
        if is_lm_eval_document(doc):
            frame, notes = runs_from_lm_eval([(raw.name, doc)], metric or "acc")
            return Loaded("eval_runs", frame, raw.name, _fingerprint([raw], options), tuple(notes), options)
        if kind == "lm_eval":
            raise InputError(raw.name, [Problem((), "not an lm-evaluation-harness results file")])
    table = read_table(raw)
    kind = kind or detect_kind(table, columns)
    if kind is None:
        raise InputError(raw.name, [Problem(tuple(map(str, table.columns)),
                                            "cannot tell what this file holds from its columns")],
                         "votes need model_a, model_b, winner (or left, right, winner); EvalRuns need model_id, "
                         "task_id, score, or one row per task with a column per model; " + MAPPING_HINT)
    count_matrix = None
    if kind == "votes":
        frame, notes = votes_from_frame(table, raw.name, columns, outcomes)
    elif kind == "counts":
        frame, notes = counts_from_frame(table, raw.name, columns, outcomes)
    elif kind == "eval_runs":
        frame, notes = runs_from_frame(table, raw.name, columns)
    elif kind == "eval_runs_wide":
        frame, notes = runs_from_wide(table, raw.name, columns, metric or "score")
        kind = "eval_runs"
    elif kind == "winrate_matrix":
        count_matrix = open_source(counts) if counts is not None else None
        frame, notes = matrix_from_frames(table, raw.name, read_table(count_matrix) if count_matrix else None,
                                          count_matrix.name if count_matrix else "counts")
    else:  # lm_eval on a non-JSON file
        raise InputError(raw.name, [Problem((), "lm-evaluation-harness results are JSON files")])
    files = [raw] + ([count_matrix] if count_matrix else [])
    return Loaded(kind, frame, raw.name, _fingerprint(files, options), tuple(notes), options)


def load_lm_eval(sources: Iterable[Any], metric: str = "acc") -> Loaded:
    """Several lm-evaluation-harness results files (one per model) as one EvalRun.

    ``sources`` are paths (folders are searched for ``*.json``), bytes or uploaded files.
    """
    sources = list(sources)
    expanded: list[Any] = []
    for src in sources:
        if isinstance(src, (str, Path)) and Path(src).is_dir():
            expanded += sorted(Path(src).rglob("*.json"))
        else:
            expanded.append(src)
    if not expanded:
        raise InputError(", ".join(map(str, sources)) or "lm-eval", [Problem((), "no JSON files found")])
    raws = [open_source(f) for f in expanded]
    docs = [(r.name, read_json_document(r)) for r in raws]
    frame, notes = runs_from_lm_eval(docs, metric)
    options = {"kind": "lm_eval", "metric": metric}
    names = [r.name for r in raws]
    common = _common(names)
    label = names[0] if len(names) == 1 else f"{len(names)} lm-eval files" + (f" under {common}" if common else "")
    return Loaded("eval_runs", frame, label, _fingerprint(raws, options), tuple(notes), options)


def _common(names: list[str]) -> str:
    try:
        return os.path.commonpath(names)
    except ValueError:  # mixed absolute and relative names
        return ""


def _fingerprint(raws: list[RawFile], options: Mapping[str, Any]) -> str:
    """sha256 of the bytes (several files: of their hashes in order) plus how they were read."""
    if len(raws) == 1 and not options:
        return raws[0].sha256
    digest = hashlib.sha256()
    for r in raws:
        digest.update(r.sha256.encode())
    if options:
        digest.update(json.dumps(options, sort_keys=True).encode())
    return digest.hexdigest()


def parse_pairs(items: Iterable[str], what: str) -> dict[str, str]:
    """``["model_a=sys1", …]`` -> ``{"model_a": "sys1"}`` for the CLI's --map/--outcome options."""
    out = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"{what} must look like NAME=VALUE, not {item!r}")
        out[key.strip()] = value.strip()
    return out

