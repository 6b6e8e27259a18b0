"""The named choices and defaults of settings, in one module that imports nothing heavy.

The analyses validate their settings against these values and the command line offers them as
``choices`` and defaults; keeping them here (standard library and :mod:`core.schema` only) lets
``evalboard --help`` list every option without loading numpy, pandas or scipy.
"""

from __future__ import annotations

from core.schema import KINDS

# What ``kind=`` accepts when reading a file: the stored kinds plus the two EvalRun shapes that are
# read differently (a wide score table; lm-evaluation-harness results).
READ_KINDS = (*KINDS, "eval_runs_wide", "lm_eval")

# What a score-table cell without a score means (core.io.missing): skip = not scored, zero = scored 0.
MISSING_RULES = ("skip", "zero")
DEFAULT_MISSING = "skip"

# Pairwise rankings (core.ranking): scheme, tie model and interval method.
SCHEMES = ("bt", "winrate", "stratified", "ipw", "adjusted")
TIE_MODELS = ("half", "davidson")
CI_METHODS = ("bootstrap", "sandwich", "none")

# What a ranking does with the votes of unqualified annotators (core.annotators, METHODS §7).
POLICIES = ("keep", "exclude", "downweight")

# How a score-table leaderboard orders its models (core.leaderboard).
RANK_BY = ("mean", "win_rate")

# Voting campaigns (core.campaign): share of golden items when golden items are given, and items per
# annotator.
DEFAULT_GOLDEN_RATE = 0.1
DEFAULT_TARGET = 100
DEFAULT_OVERLAP = 0.1  # share of a campaign's real items judged by several annotators
DEFAULT_OVERLAP_K = 2  # annotators per overlap item
