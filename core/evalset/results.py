"""What a build hands out: the eval-set table, the automatic checks, manual rejection with replacement,
and the files (CSV/JSONL eval set, audit JSON and markdown).

The eval-set file is the answer collector's queries file as it is (``query_id, prompt`` plus
``category``); ``subcategory, raw_query_original, reason``, the scores and tags follow. In the CSV the
label columns (category, subcategory, reason) are protected against spreadsheet formulas; the query id and
texts are written verbatim so that the collector sends exactly the selected text.

The reserves (``reason`` ``reserve``) are a table of the same columns, written to a file of their own
(``<stem>.reserves.csv``) so that the eval-set file holds exactly the size asked for.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from core.evalset.audit import CHECK_WORDING, LENGTHS, StageRecord
from core.evalset.scoring import SCORE_COLUMNS, TAG_COLUMNS, length_summary
from core.evalset.state import Build
from core.formats import csv_frame, undefined_as_null

EVAL_SET_COLUMNS = ("query_id", "prompt", "category", "subcategory", "raw_query_original", "reason",
                    *SCORE_COLUMNS, "score", *TAG_COLUMNS)
# written to the files and shown, not stored: how the query was ranked
RANKING_COLUMNS = ("length_chars", "score_length_neutral")
_INVALID = ("duplicate", "exact_duplicate", "excluded", "classification_failed", "rejected", "irrelevant",
            "too_short", "unreadable")


def eval_set(state: Build) -> pd.DataFrame:
    """The selected queries, best first inside each category, with why each was chosen."""
    return _table(state, reserves=False)


def reserves(state: Build) -> pd.DataFrame:
    """The reserve queries (not in the set; ready to replace a query dropped later), best first."""
    return _table(state, reserves=True)


def _table(state: Build, reserves: bool) -> pd.DataFrame:
    if state.selector is None:
        return pd.DataFrame(columns=[*EVAL_SET_COLUMNS, *RANKING_COLUMNS])
    frame = state.selector.frame
    chosen = state.selector.selection.reserves if reserves else state.selector.selection.chosen
    rows = list(chosen)
    out = frame.iloc[rows].reset_index(drop=True).rename(columns={"query": "prompt"})
    out["reason"] = [chosen[r] for r in rows]
    out = out[[*EVAL_SET_COLUMNS, *(c for c in RANKING_COLUMNS if c in out)]]
    if reserves:
        return out  # in the order they were drawn: best first
    # best first (by the ranking score) inside each category, categories by size: easy to read and review
    sizes = out["category"].map(out["category"].value_counts())
    rank_by = state.selector.settings.rank_by
    order = np.lexsort((out["query_id"].astype(str).to_numpy(), -out[rank_by].to_numpy(float),
                        out["category"].astype(str).to_numpy(), -sizes.to_numpy()))
    return out.iloc[order].reset_index(drop=True)


def check_sentence(results: dict) -> tuple[bool, str]:
    """(all passed, one sentence): "Automatic checks passed: no duplicate selected, …" or "Automatic
    checks failed: duplicates selected: q1, q2; …" (``results``: rule → "passed" or offending ids)."""
    failed = {k: v for k, v in results.items() if v and v != "passed"}
    if not failed:
        return True, "Automatic checks passed: " + ", ".join(CHECK_WORDING.get(k, (k.replace("_", " "),))[0]
                                                              for k in results) + "."
    return False, "Automatic checks failed: " + "; ".join(
        f"{CHECK_WORDING.get(k, (None, k.replace('_', ' ')))[1]}: {', '.join(map(str, v[:20]))}"
        + (f" and {len(v) - 20:,} more" if len(v) > 20 else "") for k, v in failed.items()) + "."


def checks(state: Build) -> dict:
    """Rules the final set must satisfy; every value is a list of offending ids (empty: passed)."""
    sel = eval_set(state)
    selected = sel["query_id"].astype(str)
    status = state.pool.set_index(state.pool["query_id"].astype(str))["status"]
    excluded_categories = set(state.pool.loc[state.pool["status"] == "excluded", "category"])
    failed = set(state.pool.loc[state.pool["classification_failed"].fillna(False).astype(bool), "query_id"].astype(str))
    return {
        "duplicate_selected": [q for q in selected if status.get(q) in ("duplicate", "exact_duplicate")],
        "excluded_category_selected": sel.loc[sel["category"].isin(excluded_categories), "query_id"].tolist(),
        "classification_failed_selected": [q for q in selected if q in failed],
        "invalid_status_selected": [q for q in selected if status.get(q) in _INVALID],
    }


def record_selection(state: Build) -> None:
    sel = state.selector.selection
    table = eval_set(state)
    reasons = table["reason"].astype(str).str.split(":").str[0].value_counts().to_dict()
    state.audit.selection = {
        "size_asked": state.settings.size, "size": len(table),
        "reserves": reserves(state)["query_id"].astype(str).tolist(),
        "ranking": "length-neutral score" if state.settings.length_neutral else "score",
        LENGTHS: length_distribution(state),
        "allocation": {str(k): v for k, v in sel.allocation.items()},
        "reasons": reasons, "slices": sel.slice_report, "similar_pairs_replaced": sel.replacements,
        "rejected_in_review": sel.rejected,
    }
    found = checks(state)
    state.audit.checks = {k: (v or "passed") for k, v in found.items()}
    n = int(state.active().sum())
    notes = [f"Hamilton allocation over {len(sel.allocation)} categories (ties: larger category, then name)"]
    short = [s["slice"] for s in sel.slice_report if not s["met"]]
    if short:
        notes.append(f"slice quotas not met (too few tagged candidates): {', '.join(short)}")
    if len(table) < state.settings.size:
        notes.append(f"only {len(table):,} eligible queries for {state.settings.size:,} places")
    state.audit.add(StageRecord("selection", n, len(table), "allocation", notes=notes))


def length_distribution(state: Build) -> dict[str, dict[str, int]]:
    """Prompt lengths (characters) of the eligible queries, the chosen ones and the reserves: n, min, the
    10/25/50/75/90 % quantiles, max (:func:`core.evalset.scoring.length_summary`)."""
    if state.selector is None:
        return {}
    texts = state.selector.frame["query"].astype(str)
    return {"eligible": length_summary(texts.str.len()),
            "chosen": length_summary(eval_set(state)["prompt"].astype(str).str.len()),
            "reserves": length_summary(reserves(state)["prompt"].astype(str).str.len())}


def reject(state: Build, query_ids: list[str]) -> list[str]:
    """Manual review: take these selected queries out (status ``rejected``) and draw replacements.
    Returns the ids that were not in the set."""
    unknown = state.selector.reject([str(q).strip() for q in query_ids if str(q).strip()])
    done = set(state.selector.selection.rejected)
    state.pool.loc[state.pool["query_id"].astype(str).isin(done), "status"] = "rejected"
    record_selection(state)
    return unknown


def drops(state: Build) -> pd.DataFrame:
    """Every query that left, with its reason (and its canonical query for duplicates)."""
    f = state.pool
    gone = f[f["status"] != "candidate"]
    return gone[["query_id", "raw_query_original", "status", "duplicate_of", "category"]].reset_index(drop=True)


def to_csv(table: pd.DataFrame) -> str:
    """The table as CSV, every text cell safe to open in a spreadsheet (JSONL keeps the text exact)."""
    return csv_frame(table)


def to_jsonl(table: pd.DataFrame) -> str:
    # a missing cell of the table (e.g. no duplicate_of) is null
    return "".join(json.dumps(undefined_as_null(rec), ensure_ascii=False, allow_nan=False) + "\n"
                   for rec in table.to_dict("records"))


def write_outputs(state: Build, output: str | Path) -> list[Path]:
    """The eval set (CSV, or JSONL when the name ends in .jsonl) and its reserves (``<stem>.reserves.csv``
    or ``.jsonl``), the audit (``<stem>.audit.json`` and ``<stem>.audit.md``) beside it, plus the dropped
    queries (``<stem>.drops.csv``)."""
    path = Path(output)
    path.parent.mkdir(parents=True, exist_ok=True)
    jsonl = path.suffix.lower() == ".jsonl"
    stem = path.with_suffix("")
    files = [path, Path(f"{stem}.reserves{path.suffix}"), Path(f"{stem}.audit.json"), Path(f"{stem}.audit.md"),
             Path(f"{stem}.drops.csv")]
    for file, table in zip(files[:2], (eval_set(state), reserves(state))):
        file.write_text(to_jsonl(table) if jsonl else to_csv(table), encoding="utf-8")
    files[2].write_text(state.audit.to_json() + "\n", encoding="utf-8")
    files[3].write_text(state.audit.to_markdown(), encoding="utf-8")
    files[4].write_text(to_csv(drops(state)), encoding="utf-8")
    return files
