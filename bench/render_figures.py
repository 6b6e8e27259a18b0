"""Render every figure of core/charts at several numbers of models, as PNGs to look at.

Synthetic inputs with realistic model names (``org/family-size-variant``, 20–40 characters), one
PNG per (figure, size) through core.charts.export (kaleido + a Chromium, one session), written to
``--out`` as ``<figure>_<k>.png``. This is a visual check, not a test: open the files.

    .venv/bin/python bench/render_figures.py --out /tmp/figures --models 12 60 150
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.bias.diagnose import ModelShare  # noqa: E402
from core.charts import critical_difference_figure  # noqa: E402
from core.charts.annotators import quality_scatter, response_time_histogram  # noqa: E402
from core.charts.bias import length_curve, model_share_chart  # noqa: E402
from core.charts.export import export_png, png_available  # noqa: E402
from core.charts.runs import category_heatmap, leaderboard_bars, pairwise_matrix  # noqa: E402
from core.charts.votes import (  # noqa: E402
    battle_heatmap,
    bias_panel,
    forest_plot,
    rank_vs_dimension,
    share_stacked,
    winrate_diff_heatmap,
    winrate_heatmap,
    winrate_scatter,
)
from core.stats.significance import Binomial, Logit  # noqa: E402

FAMILIES = ["meta-llama/Llama-3.1", "mistralai/Mixtral", "Qwen/Qwen2.5", "google/gemma-2", "EleutherAI/pythia",
            "microsoft/Phi-3.5", "allenai/OLMo-2", "deepseek-ai/DeepSeek-V2"]


def model_names(k: int) -> list[str]:
    return [f"{FAMILIES[i % len(FAMILIES)]}-{(i * 7) % 70 + 1}B-{'instruct' if i % 3 else 'base'}-v{i}"
            for i in range(k)]


def figures_for(k: int, rng: np.random.Generator) -> dict:
    names = model_names(k)
    skill = np.sort(rng.normal(0, 1, k))[::-1]
    rate = 1 / (1 + np.exp(-(skill[:, None] - skill[None, :])))
    np.fill_diagonal(rate, np.nan)
    rates = pd.DataFrame(rate, index=names, columns=names)
    counts = pd.DataFrame(rng.integers(5, 500, (k, k)).astype(float), index=names, columns=names)
    mean = 0.4 + 0.05 * skill
    bars = pd.DataFrame({"model_id": names, "mean_score": mean, "mean_ci_lo": mean - 0.03, "mean_ci_hi": mean + 0.03})
    categories = ["math", "physics", "law", "history", "code", "health"]
    cat_means = pd.DataFrame(np.clip(mean[:, None] + rng.normal(0, 0.05, (k, 6)), 0, 1), index=names,
                             columns=categories)
    pairs = pd.DataFrame([{"model_a": names[i], "model_b": names[j], "diff": mean[i] - mean[j],
                           "significant": abs(mean[i] - mean[j]) > 0.04} for i in range(k) for j in range(i + 1, k)])
    mean_ranks = dict(zip(names, np.linspace(1.5, k - 0.5, k) + rng.normal(0, 0.3, k)))
    dims = ["helpfulness", "harmlessness", "honesty"]
    strength = pd.DataFrame(skill[:, None] + rng.normal(0, 0.2, (k, 3)), index=names, columns=dims)
    ranks = strength.rank(ascending=False)
    raw = pd.Series(rng.uniform(0.2, 0.8, k), index=names)
    gaps = pd.DataFrame([{"game_id": g, "model": m, "dimension": d, "gap": abs(rng.normal(0, 0.1))}
                         for g in ("chat", "code") for m in names for d in dims])
    elo = 1500 + 100 * skill
    forest = pd.DataFrame({"model": names, "rating": elo, "ci_low": elo - 30, "ci_high": elo + 30})
    shares = pd.Series(rng.uniform(0.35, 0.65, k), index=names)
    per_model = tuple(ModelShare(m, Binomial(60, 100, 0.5, s, 1e-20 if s > 0.6 else 0.3, s - 0.1, s + 0.1),
                                 0.0 if s > 0.6 else 0.5, bool(s > 0.6)) for m, s in zip(names, shares))
    lengths = rng.integers(50, 2000, (2, 4000))
    chosen = rng.random(4000) < 0.5 + 0.1 * np.sign(lengths[0] - lengths[1])
    quality = pd.DataFrame({"annotator_id": [f"annotator-{i}" for i in range(k)], "n_votes": rng.integers(10, 900, k),
                            "n_golden": rng.integers(0, 30, k), "golden_accuracy": rng.uniform(0.3, 1.0, k),
                            "fast_rate": rng.uniform(0, 0.5, k), "status": rng.choice(["qualified", "unqualified",
                                                                                       "not_evaluable"], k)})
    return {
        "leaderboard_bars": leaderboard_bars(bars),
        "category_heatmap": category_heatmap(cat_means),
        "pairwise_matrix": pairwise_matrix(pairs, names),
        "critical_difference": critical_difference_figure(mean_ranks, 3.1),
        "winrate_heatmap": winrate_heatmap(rates, counts),
        "battle_heatmap": battle_heatmap(counts),
        "rank_vs_dimension": rank_vs_dimension(strength, ranks),
        "winrate_scatter": winrate_scatter(raw, raw + rng.normal(0, 0.03, k)),
        "winrate_diff_heatmap": winrate_diff_heatmap(rates - 0.5),
        "share_stacked": share_stacked(gaps, "Elo gap"),
        "forest_plot": forest_plot(forest),
        "bias_panel": bias_panel(0.56, (0.54, 0.58), shares, shares[::-1], 0.61, (0.58, 0.64)),
        "model_share_chart": model_share_chart(per_model, 0.5, "on the left", "Per-model positions"),
        "length_curve": length_curve(lengths[0], lengths[1], chosen,
                                     Logit((0.0, 0.4), (0.05, 0.1), (0.5, 1e-5), 4000)),
        "quality_scatter": quality_scatter(quality, 0.3, 0.6),
        "response_time_histogram": response_time_histogram(rng.lognormal(2, 1, 5000), 3.0),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="/tmp/evalboard_figures")
    parser.add_argument("--models", type=int, nargs="+", default=[12, 60, 150])
    parser.add_argument("--only", nargs="*", help="figure names to render (default: all)")
    args = parser.parse_args()
    if not png_available():
        print("PNG export needs kaleido and a Chromium: nothing rendered")
        return
    rng = np.random.default_rng(0)
    todo = {}
    for k in args.models:
        for name, fig in figures_for(k, rng).items():
            if not args.only or name in args.only:
                todo[f"{name}_{k}"] = fig
    for path in export_png(todo, args.out):
        print(path)


if __name__ == "__main__":
    main()
