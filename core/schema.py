"""The canonical data contracts shared by loading, storage and analysis.

Every input shape (Arena records, ``left,right,winner`` files, wide score tables …) is mapped onto
these columns by :mod:`core.io`; :mod:`core.store` persists exactly these columns; estimators read
them back. Keeping the names and the outcome codes in one place means the three never drift apart.
"""

from __future__ import annotations

# Votes: one row per blind A/B comparison. model_a is always the LEFT answer, model_b the RIGHT one.
VOTE_REQUIRED = ("model_a", "model_b", "winner")
VOTE_COLUMNS = (
    "vote_id",
    "query_id",
    "game_id",
    "dimension",
    "category",
    "model_a",
    "model_b",
    "winner",
    "annotator_id",
    "timestamp",
    "response_time_s",
    "len_a",
    "len_b",
    "is_golden",
    "golden_answer",
    "weight",
)
# Per-side style counts (docs/methods.md §11) a votes frame carries besides len_a/len_b when the file gives
# them or its answer texts: kept at load for scheme ``style`` and stored with the votes (store schema v4).
STYLE_COUNT_COLUMNS = ("headers_a", "headers_b", "lists_a", "lists_b", "bold_a", "bold_b")
# What ``evalboard rank --scheme style --features`` accepts, and its default.
STYLE_FEATURE_CHOICES = ("length", "headers", "lists", "bold", "position")
DEFAULT_STYLE_FEATURES = ("length", "headers", "lists", "bold")
# Free-text label columns (stored dictionary-encoded; loaded back as categoricals).
VOTE_LABEL_COLUMNS = ("query_id", "game_id", "dimension", "category", "annotator_id")
DEFAULT_GAME_ID = "all"
DEFAULT_DIMENSION = "overall"

# Outcomes, in code order. The code is what the store keeps; the label is what users read.
OUTCOMES = ("model_a", "model_b", "tie", "tie (bothbad)")
OUTCOME_CODE = {label: code for code, label in enumerate(OUTCOMES)}
# Score of the LEFT model per outcome (docs/methods.md §0): ties and both-bad count as half a win.
LEFT_SCORE = {"model_a": 1.0, "model_b": 0.0, "tie": 0.5, "tie (bothbad)": 0.5}

# Case-insensitive spellings accepted for each outcome (docs/design.md "Inputs"). Anything else is an error.
OUTCOME_ALIASES = {
    "model_a": "model_a", "a": "model_a", "left": "model_a", "1": "model_a",
    "model_b": "model_b", "b": "model_b", "right": "model_b", "2": "model_b",
    "tie": "tie", "draw": "tie",
    "tie (bothbad)": "tie (bothbad)", "both_bad": "tie (bothbad)", "bothbad": "tie (bothbad)",
}

# Column aliases mapped onto canonical vote columns when the canonical name is absent.
VOTE_COLUMN_ALIASES = {
    "judge": "annotator_id", "worker": "annotator_id", "evaluator": "annotator_id",
    "user_id": "annotator_id", "annotator": "annotator_id",
    "tstamp": "timestamp", "time": "timestamp",
    "question_id": "query_id", "prompt_id": "query_id",
    "duration": "response_time_s", "duration_s": "response_time_s",
    "left": "model_a", "right": "model_b",
}

# Counts tables: the GROUP BY form in which data of any size enters.
COUNT_REQUIRED = ("model_a", "model_b", "winner", "count")
COUNT_STRATA = ("game_id", "dimension", "period", "annotator_status")

# EvalRuns: one score in [0, 1] per (model, task, metric).
RUN_REQUIRED = ("model_id", "task_id", "score")
RUN_COLUMNS = ("model_id", "task_id", "metric_name", "score", "category", "weight")
RUN_COLUMN_ALIASES = {"model": "model_id", "task": "task_id", "metric": "metric_name", "value": "score",
                      "dataset": "category"}
DEFAULT_METRIC = "score"

# Judged preferences: one row per (model, prompt) of a model's answer against one baseline's answer
# (AlpacaEval, Arena-Hard, MT-bench pairwise); ``preference`` = P(the model's answer beats the baseline's)
# in [0, 1], 0.5 a draw (core.io.preferences reads the other scales onto it).
PREFERENCE_REQUIRED = ("model", "baseline", "query_id", "preference")
PREFERENCE_COLUMNS = ("model", "baseline", "query_id", "preference", "category", "len_model", "len_baseline", "judge")

KINDS = ("votes", "counts", "eval_runs", "winrate_matrix", "preferences")
# evalboard judge: replicates of the win rate's interval (one matrix product each) and of the length-controlled
# one (each refits every model's GLM, about 0.05-0.2 s for 57 models x 805 prompts on 2 cores).
DEFAULT_JUDGE_REPLICATES = 1000
DEFAULT_LC_REPLICATES = 100


# The named choices and defaults of settings (no heavy imports: `evalboard --help` lists every option
# without loading numpy, pandas or scipy).
# What ``kind=`` accepts when reading a file: the stored kinds plus the two EvalRun shapes that are
# read differently (a wide score table; lm-evaluation-harness results).
READ_KINDS = (*KINDS, "eval_runs_wide", "lm_eval")

# What a score-table cell without a score means (core.io.missing): skip = not scored, zero = scored 0.
MISSING_RULES = ("skip", "zero")
DEFAULT_MISSING = "skip"

# Pairwise rankings (core.ranking): scheme, tie model and interval method.
SCHEMES = ("bt", "winrate", "stratified", "ipw", "adjusted", "style", "crowd")
TIE_MODELS = ("half", "davidson")
CI_METHODS = ("bootstrap", "sandwich", "none")

# What a ranking does with the votes of unqualified annotators (core.annotators.quality, docs/methods.md §7).
POLICIES = ("keep", "exclude", "downweight")

# How a score-table leaderboard orders its models (core.leaderboard.aggregate).
RANK_BY = ("mean", "win_rate")

# Voting campaigns (core.campaign): share of golden items when golden items are given, and items per
# annotator.
DEFAULT_GOLDEN_RATE = 0.1
DEFAULT_TARGET = 100
DEFAULT_OVERLAP = 0.1  # share of a campaign's real items judged by several annotators
DEFAULT_OVERLAP_K = 2  # annotators per overlap item
