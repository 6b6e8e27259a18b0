"""Seeded demo judged preferences: 8 models × 120 prompts against one baseline, AlpacaEval-style.

The judge prefers longer answers, so raw win rates reward verbosity; the abilities and verbosities are fixed by
hand so that the story the Judge page tells is the same for every seed: ``verbose-7b`` out-wins the stronger
``echo-baseline`` only because it writes twice as long (its length-controlled rate falls below its raw rate),
``terse-pro`` is strong but short (its LC rate rises), ``echo-baseline`` answers like the baseline (both rates
near 50). The length effect is moderate, so no LC moves far enough for AlpacaEval's warning.

Model of a preference (the truth, docs/methods.md §12's GLM read forwards):
``logit P = ability − difficulty_x + LENGTH_WEIGHT · tanh((len_model − len_baseline) / LENGTH_SCALE) + noise``,
rounded to 4 decimals as a soft judge's probability.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from core.formats import csv_frame
from core.validation import check_integer

BASELINE = "gpt-base"
JUDGE = "demo-judge"
CATEGORIES = ("coding", "writing", "reasoning", "chat")
# name -> (ability on the logit scale, answer length relative to the baseline's)
JUDGE_MODELS = {
    "terse-pro": (1.0, 0.6),
    "atlas-70b": (0.8, 1.1),
    "verbose-7b": (-0.2, 2.0),
    "borealis-8b": (0.3, 1.0),
    "echo-baseline": (0.0, 1.0),
    "cirrus-mini": (-0.6, 0.8),
    "padded-3b": (-0.8, 1.8),
    "nimbus-1b": (-1.4, 0.7),
}
LENGTH_WEIGHT = 0.6
LENGTH_SCALE = 800.0  # characters
JUDGE_SAMPLE = "judge_demo.csv"


def judge_demo(n_prompts: int = 120, seed: int = 0) -> pd.DataFrame:
    """One row per (model, prompt): model, baseline, query_id, category, preference, len_model, len_baseline,
    judge; models in :data:`JUDGE_MODELS` order, prompts in order."""
    check_integer(n_prompts, "n_prompts", 2)
    check_integer(seed, "seed", 0)
    rng = np.random.default_rng(seed)
    difficulty = rng.normal(0.0, 0.8, n_prompts)
    len_baseline = np.round(rng.lognormal(np.log(1400.0), 0.35, n_prompts))
    frames = []
    for name, (ability, verbosity) in JUDGE_MODELS.items():
        len_model = np.round(len_baseline * verbosity * rng.lognormal(0.0, 0.2, n_prompts))
        logit = (ability - difficulty + LENGTH_WEIGHT * np.tanh((len_model - len_baseline) / LENGTH_SCALE)
                 + rng.normal(0.0, 0.7, n_prompts))
        frames.append(pd.DataFrame({
            "model": name, "baseline": BASELINE, "query_id": [f"q{i:03d}" for i in range(n_prompts)],
            "category": [CATEGORIES[i % len(CATEGORIES)] for i in range(n_prompts)],
            "preference": np.round(1.0 / (1.0 + np.exp(-logit)), 4), "len_model": len_model.astype(np.int64),
            "len_baseline": len_baseline.astype(np.int64), "judge": JUDGE}))
    return pd.concat(frames, ignore_index=True)


def write_judge_sample(directory: str | Path) -> Path:
    """Write ``judge_demo.csv`` (seed 0) into ``directory``; byte-identical on rerun."""
    path = Path(directory) / JUDGE_SAMPLE
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8", newline="") as handle:
        handle.write(csv_frame(judge_demo(seed=0), header=True))
    tmp.replace(path)  # an interrupted run never leaves a truncated sample behind
    return path
