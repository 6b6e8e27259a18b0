"""Table layout of the store's data tables: column types, DDL and the labelled view of votes
(run by :mod:`core.store.schema` with every other table)."""

from __future__ import annotations

from core.schema import STYLE_COUNT_COLUMNS, VOTE_COLUMNS, VOTE_LABEL_COLUMNS

# Every column the votes table keeps, in file order: the vote columns, then the per-side style counts
# (headers, list items, bold spans of each answer; core.io.style_features) for scheme style.
STORED_VOTE_COLUMNS = (*VOTE_COLUMNS, *STYLE_COUNT_COLUMNS)

# Label columns share one dictionary per field; both model columns use the field "model".
LABEL_FIELD = {"model_a": "model", "model_b": "model", **{c: c for c in VOTE_LABEL_COLUMNS}}
# The owner's names of annotators (a published campaign): label rows under the annotator_id codes.
ANNOTATOR_LABEL_FIELD = "annotator_label"
OUTCOME_COLUMNS = ("winner", "golden_answer")
VOTE_SQL_TYPES = {c: int for c in (*LABEL_FIELD, *OUTCOME_COLUMNS, "is_golden")} | {
    "vote_id": str, "timestamp": float, "response_time_s": float, "len_a": float, "len_b": float, "weight": float,
    **{c: float for c in STYLE_COUNT_COLUMNS}}
VOTE_SQL_TYPES = {c: VOTE_SQL_TYPES[c] for c in STORED_VOTE_COLUMNS}  # file order
RUN_SQL_TYPES = {"model_id": str, "task_id": str, "metric_name": str, "score": float, "category": str,
                 "weight": float, "stderr": float}
COUNT_SQL_TYPES = {"model_a": str, "model_b": str, "winner": str, "count": float, "game_id": str,
                   "dimension": str, "period": str, "annotator_status": str}
MATRIX_SQL_TYPES = {"model_row": str, "model_col": str, "rate": float, "n": float}
# Judged preferences against a baseline (core.io.preferences): P(model's answer beats the baseline's) per prompt.
# A new table, made by every file's CREATE … IF NOT EXISTS: it needs no schema version of its own.
PREFERENCE_SQL_TYPES = {"model": str, "baseline": str, "query_id": str, "preference": float, "category": str,
                        "len_model": float, "len_baseline": float, "judge": str}
TABLE_OF_KIND = {"votes": "votes", "eval_runs": "eval_runs", "counts": "counts", "winrate_matrix": "matrices",
                 "preferences": "preferences"}
TYPES_OF_TABLE = {"votes": VOTE_SQL_TYPES, "eval_runs": RUN_SQL_TYPES, "counts": COUNT_SQL_TYPES,
                  "matrices": MATRIX_SQL_TYPES, "preferences": PREFERENCE_SQL_TYPES}
_SQL_TYPE = {int: "INTEGER", float: "REAL", str: "TEXT"}


def data_table_sql(table: str) -> str:
    """Rows clustered by (dataset_id, row): loading or deleting a dataset is one range of the B-tree,
    and there is no second index to maintain while a million rows go in."""
    cols = ", ".join(f"[{c}] {_SQL_TYPE[t]}" for c, t in TYPES_OF_TABLE[table].items())
    return (f"CREATE TABLE IF NOT EXISTS [{table}] (dataset_id INTEGER NOT NULL, row INTEGER NOT NULL, {cols}, "
            f"PRIMARY KEY (dataset_id, row)) WITHOUT ROWID")


def labeled_view_sql() -> str:
    """``votes_labeled``: the votes with names instead of codes, for people querying the file with SQL."""
    parts = ["v.dataset_id", "v.row", "v.vote_id"]
    for col in STORED_VOTE_COLUMNS:
        if col in LABEL_FIELD:
            parts.append(f"(SELECT label FROM labels l WHERE l.dataset_id = v.dataset_id AND l.field = "
                         f"'{LABEL_FIELD[col]}' AND l.code = v.{col}) AS {col}")
        elif col in OUTCOME_COLUMNS:
            parts.append(f"(SELECT label FROM outcomes o WHERE o.code = v.{col}) AS {col}")
        elif col == "timestamp":
            parts.append("strftime('%Y-%m-%dT%H:%M:%fZ', v.timestamp, 'unixepoch') AS timestamp")
        elif col != "vote_id":
            parts.append(f"v.{col}")
    return "SELECT " + ", ".join(parts) + " FROM votes v"

