"""The answers file: collected answers in the format a voting campaign reads.

Columns ``query_id, prompt, model, answer, category`` (+ ``game_id`` when one is given, + ``answer_raw``,
the text before cleaning, on request); one row per answered (query, model), in query order. ``answer`` is
the cleaned text. An answer that cleaning left empty cannot be compared and is left out (and counted).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from core.campaign.inputs import read_answers
from core.campaign.store import CampaignError
from core.collect.jobs import active_job
from core.collect.store import CollectStore, RunNotFound
from core.errors import SettingError
from core.formats import csv_frame

FORMATS = ("csv", "jsonl")
COLUMNS = ("query_id", "prompt", "model", "answer", "category")


@dataclass(frozen=True)
class AnswersFile:
    frame: pd.DataFrame
    left_out_empty: int  # answers that cleaning left empty


def answers_table(store: CollectStore, name: str, *, game_id: str | None = None,
                  include_raw: bool = False) -> AnswersFile:
    answers = store.answers(store.run_id(name))
    empty = answers["answer"].fillna("").str.strip() == ""
    frame = answers.loc[~empty, list(COLUMNS) + (["answer_raw"] if include_raw else [])].reset_index(drop=True)
    if game_id is not None:
        frame.insert(5, "game_id", game_id)
    return AnswersFile(frame, int(empty.sum()))


def format_for(path: str | Path) -> str:
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix in ("jsonl", "ndjson"):
        return "jsonl"
    if suffix == "csv":
        return "csv"
    raise SettingError(f"--output must end in .csv or .jsonl, not {Path(path).name!r}")


def to_bytes(frame: pd.DataFrame, fmt: str) -> bytes:
    if fmt == "csv":
        return csv_frame(frame).encode("utf-8")  # formula-like text neutralised; JSONL keeps text exact
    if fmt == "jsonl":
        return frame.to_json(orient="records", lines=True, force_ascii=False).encode("utf-8")
    raise SettingError(f"format must be one of {', '.join(FORMATS)}, not {fmt!r}")


def write_answers(store: CollectStore, name: str, output: str | Path, *, game_id: str | None = None,
                  include_raw: bool = False) -> AnswersFile:
    fmt = format_for(output)
    answers = answers_table(store, name, game_id=game_id, include_raw=include_raw)
    Path(output).write_bytes(to_bytes(answers.frame, fmt))
    return answers


def campaign_answers(store: CollectStore, name: str, *, game_id: str | None = None) -> pd.DataFrame:
    """The run's answers as a voting campaign's validated answers table (no file in between)."""
    answers = answers_table(store, name, game_id=game_id)
    return read_answers(to_bytes(answers.frame, "csv"), name=f"run {name!r}.csv")


def run_answers_for_campaign(db: str | Path, name: str, *, game_id: str | None = None) -> pd.DataFrame:
    """The stored answers of run ``name`` as a campaign's answers table, for ``create_campaign`` (no file in
    between). Refused while a process still collects the run: its answers are still arriving."""
    with CollectStore(db) as store:
        busy = active_job(store.con, name)
        if busy is not None:
            raise CampaignError(f"run {name!r} is being collected now (process {busy.pid}); wait for it to end, "
                                "or stop it, then create the campaign")
        try:
            return campaign_answers(store, name, game_id=game_id)
        except RunNotFound:
            known = ", ".join(repr(r["name"]) for r in store.runs()) or "none yet"
            raise CampaignError(f"no collection run named {name!r} (runs: {known})") from None
