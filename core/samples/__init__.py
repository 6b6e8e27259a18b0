"""Deterministic, seeded demo data with a known truth (docs/design.md "Layout": ``samples``).

- :func:`arena_demo` / :func:`arena_demo_truth`: Arena votes with planted position, exposure,
  length and pairing biases and a few random fast clickers, and the truth they were drawn from.
- :func:`evalruns_demo`: a 3-model x 12-task EvalRuns table.
- :func:`bt_votes`: votes drawn exactly from a BT model with ties (benchmarks, accuracy checks).
- :func:`write_samples`, :func:`write_arena_csv`: the committed CSVs and big chunked files;
  ``python -m core.samples`` runs them from the shell.
"""

from core.samples.arena import arena_chunks, arena_demo
from core.samples.bt import bt_votes
from core.samples.evalruns import EVAL_MODELS, EVAL_TASKS, evalruns_demo
from core.samples.files import SAMPLES_DIR, write_arena_csv, write_samples
from core.samples.truth import (
    BIASED_MODEL,
    CATEGORIES,
    DIMENSIONS,
    GAMES,
    GOLDEN_QUERIES,
    MODEL_NAMES,
    RANDOM_CLICKERS,
    ArenaTruth,
    arena_demo_truth,
    model_names,
)

__all__ = [
    "BIASED_MODEL",
    "CATEGORIES",
    "DIMENSIONS",
    "EVAL_MODELS",
    "EVAL_TASKS",
    "GAMES",
    "GOLDEN_QUERIES",
    "MODEL_NAMES",
    "RANDOM_CLICKERS",
    "SAMPLES_DIR",
    "ArenaTruth",
    "arena_chunks",
    "arena_demo",
    "arena_demo_truth",
    "bt_votes",
    "evalruns_demo",
    "model_names",
    "write_arena_csv",
    "write_samples",
]
