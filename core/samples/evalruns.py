"""Seeded demo EvalRuns: 3 models x 12 tasks, one score in [0, 1] per (model, task).

The abilities are fixed by hand rather than drawn, so that the story the leaderboard pages tell is
the same for every seed: ``atlas-70b`` is clearly best overall (math, reasoning, code), yet
``borealis-8b`` is best on safety; only task difficulty and small noise depend on the seed.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from core.schema import RUN_COLUMNS
from core.validation import check_integer

EVAL_MODELS = ("atlas-70b", "borealis-8b", "cirrus-mini")
# (task_id, category, metric_name): three tasks per category, metrics as the harnesses name them.
EVAL_TASKS = (
    ("gsm8k", "math", "exact_match"),
    ("math", "math", "exact_match"),
    ("mgsm", "math", "exact_match"),
    ("arc_challenge", "reasoning", "acc_norm"),
    ("hellaswag", "reasoning", "acc_norm"),
    ("bbh", "reasoning", "exact_match"),
    ("humaneval", "code", "pass@1"),
    ("mbpp", "code", "pass@1"),
    ("ds1000", "code", "pass@1"),
    ("truthfulqa_mc2", "safety", "accuracy"),
    ("toxigen", "safety", "accuracy"),
    ("bbq", "safety", "accuracy"),
)
EVAL_CATEGORIES = ("math", "reasoning", "code", "safety")
# Ability per model and category on the logit scale. The 0.7 safety gap in favour of borealis and
# the >= 0.7 gaps elsewhere are ~7 noise SDs, so the intended winners hold for any seed.
_ABILITY = {
    "atlas-70b": (1.2, 1.0, 1.1, 0.2),
    "borealis-8b": (0.3, 0.3, 0.2, 0.9),
    "cirrus-mini": (-0.3, -0.1, -0.4, 0.4),
}
_NOISE_SD = 0.1
_DIFFICULTY_SD = 0.6


def evalruns_demo(seed: int = 0) -> pd.DataFrame:
    """Deterministic demo EvalRuns with the columns of :data:`core.schema.RUN_COLUMNS`.

    Parameters
    ----------
    seed : int
        Non-negative seed for task difficulty and per-score noise.

    Returns
    -------
    pandas.DataFrame
        36 rows (model-major, tasks in :data:`EVAL_TASKS` order); ``score`` =
        sigmoid(ability + difficulty + noise), rounded to 4 decimals, hence in [0, 1].
    """
    seed = check_integer(seed, "seed", 0)
    rng = np.random.default_rng([seed, 3])
    n_tasks = len(EVAL_TASKS)
    category = np.array([EVAL_CATEGORIES.index(c) for _, c, _ in EVAL_TASKS])
    ability = np.array([_ABILITY[m] for m in EVAL_MODELS])[:, category]
    difficulty = rng.normal(0.0, _DIFFICULTY_SD, n_tasks)
    noise = rng.normal(0.0, _NOISE_SD, (len(EVAL_MODELS), n_tasks))
    score = np.round(1.0 / (1.0 + np.exp(-(ability + difficulty + noise))), 4)
    frame = pd.DataFrame(
        {
            "model_id": np.repeat(EVAL_MODELS, n_tasks),
            "task_id": [t for t, _, _ in EVAL_TASKS] * len(EVAL_MODELS),
            "metric_name": [m for _, _, m in EVAL_TASKS] * len(EVAL_MODELS),
            "score": score.ravel(),
            "category": [c for _, c, _ in EVAL_TASKS] * len(EVAL_MODELS),
            "weight": np.ones(score.size),
        },
        columns=list(RUN_COLUMNS),
    )
    return frame.astype({c: "str" for c in ("model_id", "task_id", "metric_name", "category")})
