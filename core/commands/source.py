"""Where a command's input comes from: a file, or a stored dataset of that name; and where its output goes."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from core.io import InputError, Problem, load, load_lm_eval, parse_pairs
from core.io.missing import apply_missing_rule
from core.schema import DEFAULT_MISSING


def read_source(args: argparse.Namespace) -> tuple[str, Any, dict[str, Any]]:
    """(kind, frame, source) of a file, or of a stored dataset when no such file exists; ``source`` says where
    the input came from (its origin, sha256, rows and the missing-score rule), as a report records it."""
    path = Path(args.votes)
    missing = getattr(args, "missing", DEFAULT_MISSING)
    if path.is_dir() or args.kind == "lm_eval":
        loaded = load_lm_eval([path], metric=getattr(args, "metric", None) or "acc", missing=missing)
    elif path.exists():
        loaded = load(path, kind=args.kind, columns=parse_pairs(args.map, "--map"),
                      outcomes=parse_pairs(args.outcome, "--outcome", empty_key=True), missing=missing)
    else:
        return _stored(args, missing)
    return loaded.kind, loaded.frame, {"source": str(loaded.source), "sha256": loaded.sha256,
                                       "rows": int(loaded.rows), "missing": missing}


def _stored(args: argparse.Namespace, missing: str) -> tuple[str, Any, dict[str, Any]]:
    # The store (sqlite_utils) loads only for a stored dataset: ranking a file needs none of it.
    from core.store import DatasetNotFound, Store

    with Store(args.db) as store:
        try:
            info = store.dataset(args.votes)
        except DatasetNotFound as exc:
            raise InputError(args.votes, [Problem((), "no such file, and no stored dataset of that name")],
                             exc.hint or None) from None
        frame = store.load(info.id)
    if info.kind == "eval_runs" and missing != DEFAULT_MISSING:
        frame, _ = apply_missing_rule(frame, missing)  # cells left out at ingest now count 0
    return info.kind, frame, {"source": f"dataset {info.name} (id {info.id})", "sha256": info.sha256,
                              "rows": len(frame), "missing": missing}


def read_input(args: argparse.Namespace) -> tuple[str, Any]:
    """(kind, frame) of a file, or of a stored dataset when no such file exists."""
    kind, frame, _ = read_source(args)
    return kind, frame


def write_output(text: str, output: str | None) -> None:
    if output:
        Path(output).write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
    else:
        print(text)
