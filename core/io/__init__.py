"""Loading and validating inputs: votes, counts tables, EvalRuns, win-rate matrices and judged preferences.

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

import numpy as np
import pandas as pd

from core.errors import SettingError
from core.io.guess import Proposal, propose_mapping
from core.io.matrix import looks_like_broken_matrix, looks_like_matrix, matrix_from_frames
from core.io.missing import DEFAULT_MISSING, MISSING_RULES, check_missing_rule
from core.io.preferences import looks_like_preferences, preferences_from_frame
from core.io.problems import InputError, Problem, ProblemList
from core.io.read import open_source, read_json_document, read_table
from core.io.runs import is_lm_eval_document, runs_from_frame, runs_from_lm_eval, runs_from_wide, wide_key_column
from core.io.votes import ARENA_ALIASES, MAPPING_HINT, counts_from_frame, votes_from_frame
from core.schema import READ_KINDS, RUN_COLUMN_ALIASES, VOTE_COLUMN_ALIASES

__all__ = ["DEFAULT_MISSING", "MISSING_RULES", "READ_KINDS", "InputError", "Loaded", "Problem", "Proposal",
           "content_fingerprint", "detect_kind", "detection", "load", "load_lm_eval", "open_source", "parse_pairs",
           "propose_mapping"]


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
    if looks_like_preferences(names):  # a model, a baseline and a judgement (AlpacaEval's files among them)
        return "preferences"
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
         name: str | None = None, format: str | None = None, missing: str = DEFAULT_MISSING) -> Loaded:
    """Read, detect, map and validate one input.

    Parameters
    ----------
    source : path, bytes or file-like (a Streamlit upload works as it is)
    kind : votes | counts | eval_runs | eval_runs_wide | lm_eval | winrate_matrix | preferences; detected when None
    columns : canonical column -> the file's column, for files whose names differ
    outcomes : the file's winner value -> model_a | model_b | tie | tie (bothbad)
    metric : lm-evaluation-harness metric to read (default ``acc``); metric name for wide tables
    counts : for a win-rate matrix, the matching matrix of comparison counts
    missing : skip | zero, what a score table's cells without a score mean (:mod:`core.io.missing`)

    The fingerprint (``sha256``) is of the validated content, not of the bytes or the file name, so
    the same data stored once is recognised however it arrives.
    """
    check_missing_rule(missing)
    if kind is not None and kind not in READ_KINDS:
        raise SettingError(f"kind must be one of {', '.join(READ_KINDS)}, not {kind!r}")
    raw = open_source(source, name=name, format=format)
    options = {k: v for k, v in {"kind": kind, "columns": dict(columns or {}), "outcomes": dict(outcomes or {}),
                                 "metric": metric}.items() if v}
    if raw.format == "json" and kind in (None, "lm_eval"):
        doc = read_json_document(raw)
        if is_lm_eval_document(doc):
            frame, notes = runs_from_lm_eval([(raw.name, doc)], metric or "acc", missing)
            return Loaded("eval_runs", frame, raw.name, content_fingerprint("eval_runs", frame), tuple(notes),
                          options)
        if kind == "lm_eval":
            raise InputError(raw.name, [Problem((), "not an lm-evaluation-harness results file")])
    table = read_table(raw)
    detected = kind is None
    kind = kind or detect_kind(table, columns)
    if detected:
        _refuse_unsure_guess(table, kind, columns, raw.name)
    count_matrix = None
    if kind == "votes":
        frame, notes = votes_from_frame(table, raw.name, columns, outcomes)
    elif kind == "counts":
        frame, notes = counts_from_frame(table, raw.name, columns, outcomes)
    elif kind == "eval_runs":
        frame, notes = runs_from_frame(table, raw.name, columns, missing)
    elif kind == "eval_runs_wide":
        frame, notes = runs_from_wide(table, raw.name, columns, metric or "score", missing)
        kind = "eval_runs"
    elif kind == "preferences":
        if outcomes:
            raise SettingError("--outcome maps the winner values of votes and counts; a preferences file's "
                               "winner labels are model, baseline and tie")
        frame, notes = preferences_from_frame(table, raw.name, columns)
    elif kind == "winrate_matrix":
        count_matrix = open_source(counts) if counts is not None else None
        frame, notes = matrix_from_frames(table, raw.name, read_table(count_matrix) if count_matrix else None,
                                          count_matrix.name if count_matrix else "counts")
    else:  # lm_eval on a non-JSON file
        raise InputError(raw.name, [Problem((), "lm-evaluation-harness results are JSON files")])
    if kind == "eval_runs":
        options = {**options, "missing": missing}
    return Loaded(kind, frame, raw.name, content_fingerprint(kind, frame), tuple(notes), options)


def _refuse_unsure_guess(table: pd.DataFrame, kind: str | None, columns: Mapping[str, str] | None,
                         source: str) -> None:
    """No kind fits, or the wide-table guess is contradicted by a repeating key: say what was guessed
    and why, and propose the mapping that would read the file (when one is found)."""
    proposal = propose_mapping(table)
    suggestion = (f"this reading fits ({proposal.reason}): {proposal.options()}; on the Data page the mapping "
                  "form starts from it") if proposal else None
    if kind is None:
        raise InputError(source, [Problem(tuple(map(str, table.columns)),
                                          "cannot tell what this file holds from its columns")],
                         suggestion or "votes need model_a, model_b, winner (or left, right, winner); EvalRuns need "
                         "model_id, task_id, score, or one row per task with a column per model; " + MAPPING_HINT)
    if kind != "eval_runs_wide":
        return
    key = wide_key_column(table, columns)
    if key is None or key[0] not in table.columns:
        return
    repeated = table[key[0]].duplicated(keep=False).to_numpy()  # rows sharing their key with another row
    if not repeated.any():
        return
    why = ("it has no task column (task_id, task, question_id …)" if key[1] == "model" else
           f"'{key[0]}' looks like a task column")
    problems = ProblemList(source)
    problems.add(key[0], f"detection guessed a wide score table (one row per {key[1]}, keyed by '{key[0]}') because "
                         f"{why}; but '{key[0]}' repeats on {int(repeated.sum()):,} rows, so the rows are not one per "
                         f"{key[1]}", repeated, table[key[0]])
    raise InputError(source, problems.problems, suggestion or MAPPING_HINT)


def detection(table: pd.DataFrame) -> tuple[str | None, Proposal | None]:
    """(the kind detection would read a raw table as, None when unsure) and the mapping proposed then."""
    kind = detect_kind(table)
    try:
        _refuse_unsure_guess(table, kind, None, "file")
    except InputError:
        return None, propose_mapping(table)
    if kind == "votes":  # two of model_a/model_b/winner say "votes"; without the third the form must ask
        names = set(map(str, table.columns))
        mapped = names | {dst for src, dst in {**VOTE_COLUMN_ALIASES, **ARENA_ALIASES}.items() if src in names}
        if not {"model_a", "model_b", "winner"} <= mapped:
            return None, propose_mapping(table)
    return kind, None


def content_fingerprint(kind: str, frame: pd.DataFrame) -> str:
    """sha256 of the validated content: the same data gives the same fingerprint whichever files,
    paths, names or mapping it came from. A score table's, counts table's or preferences table's rows are a set
    (their order does not count); the order of votes does (file order is the order of last resort for drift)."""
    hashes = pd.util.hash_pandas_object(frame, index=False).to_numpy()
    if kind in ("eval_runs", "counts", "preferences"):
        hashes = np.sort(hashes)
    digest = hashlib.sha256(kind.encode())
    digest.update(json.dumps([[str(c), str(frame[c].dtype)] for c in frame.columns]).encode())
    digest.update(hashes.tobytes())
    return digest.hexdigest()


def load_lm_eval(sources: Iterable[Any], metric: str = "acc", missing: str = DEFAULT_MISSING) -> Loaded:
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
    frame, notes = runs_from_lm_eval(docs, metric, check_missing_rule(missing))
    options = {"kind": "lm_eval", "metric": metric, "missing": missing}
    names = [r.name for r in raws]
    common = _common(names)
    label = names[0] if len(names) == 1 else f"{len(names)} lm-eval files" + (f" under {common}" if common else "")
    return Loaded("eval_runs", frame, label, content_fingerprint("eval_runs", frame), tuple(notes), options)


def _common(names: list[str]) -> str:
    try:
        return os.path.commonpath(names)
    except ValueError:  # mixed absolute and relative names
        return ""


def parse_pairs(items: Iterable[str], what: str, empty_key: bool = False) -> dict[str, str]:
    """``["model_a=sys1", …]`` -> ``{"model_a": "sys1"}`` for the CLI's --map/--outcome options.

    With ``empty_key`` (--outcome) ``=drop`` is allowed: the empty key stands for empty cells.
    """
    out = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        if not sep or (not key.strip() and not empty_key):
            raise SettingError(f"{what} must look like NAME=VALUE, not {item!r}")
        out[key.strip()] = value.strip()
    return out

