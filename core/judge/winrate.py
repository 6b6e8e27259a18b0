"""AlpacaEval's win rates of each model against the baseline, exactly as its ``get_winrate``
(src/alpaca_eval/metrics/winrate.py and metrics/helpers.py in tatsu-lab/alpaca_eval) computes them,
with p = P(model beats baseline) in [0, 1] per prompt (core.io.preferences reads every scale onto it):

- ``win_rate`` = 100 × mean p; ``standard_error`` = 100 × sample sd of p (ddof 1) / √n (pandas' ``sem``;
  undefined for one prompt);
- ``n_wins`` = #{p > 0.5}, ``n_wins_base`` = #{p < 0.5}, ``n_draws`` = #{p = 0.5} (exactly: a weighted
  judge rarely says 0.5), ``n_total`` = prompts with a judgement (judge failures are left out at load);
- ``discrete_win_rate`` = 100 × (n_wins + n_draws / 2) / n_total (every p rounded to win, loss or draw);
- ``avg_length`` = int(mean character length of the model's answers), as AlpacaEval's leaderboard.

The interval of the win rate resamples prompts: each replicate draws the prompts with replacement once and
every model is scored on that same draw (paired), over the prompts it has; percentile bounds.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from core.stats.resampling import percentile_interval

RATE_COLUMNS = ("win_rate", "standard_error", "n_wins", "n_wins_base", "n_draws", "n_total", "discrete_win_rate",
                "avg_length")


def head_to_head(prefs: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """AlpacaEval's fields per group of ``by`` (e.g. ``["model"]``), the groups sorted by name."""
    p = prefs["preference"].to_numpy(dtype=np.float64)
    frame = prefs[by].assign(p=p, win=p > 0.5, loss=p < 0.5, draw=p == 0.5)
    grouped = frame.groupby(by, sort=True, observed=True)
    out = pd.DataFrame({"win_rate": grouped["p"].mean() * 100.0,
                        "standard_error": grouped["p"].sem(ddof=1) * 100.0,
                        "n_wins": grouped["win"].sum().astype(np.int64),
                        "n_wins_base": grouped["loss"].sum().astype(np.int64),
                        "n_draws": grouped["draw"].sum().astype(np.int64),
                        "n_total": grouped["p"].size().astype(np.int64)})
    out["discrete_win_rate"] = (out["n_wins"] + out["n_draws"] / 2.0) / out["n_total"] * 100.0
    if "len_model" in prefs:
        lengths = prefs[by].assign(length=prefs["len_model"].to_numpy(dtype=np.float64))
        mean = lengths.groupby(by, sort=True, observed=True)["length"].mean()  # NaN lengths skipped
        out["avg_length"] = np.floor(mean.reindex(out.index))  # int() of a non-negative mean
    else:
        out["avg_length"] = np.nan
    return out


def bootstrap_win_rates(prefs: pd.DataFrame, models: list[str], replicates: int, seed: int, alpha: float
                        ) -> pd.DataFrame:
    """Percentile interval of each model's win rate (index ``models``; ``win_rate_ci_low``, ``win_rate_ci_high``).

    One multinomial draw of prompt multiplicities per replicate is shared by every model (the paired
    bootstrap over prompts); a model is scored on the prompts of the draw it has a judgement for.
    """
    q_codes, queries = pd.factorize(prefs["query_id"].astype(str))
    m_codes = pd.Categorical(prefs["model"].astype(str), categories=models).codes
    p = prefs["preference"].to_numpy(dtype=np.float64)
    sums = np.zeros((len(queries), len(models)))
    seen = np.zeros((len(queries), len(models)))
    np.add.at(sums, (q_codes, m_codes), p)
    np.add.at(seen, (q_codes, m_codes), 1.0)
    rng = np.random.default_rng(seed)
    weights = rng.multinomial(len(queries), np.full(len(queries), 1.0 / len(queries)), size=replicates)
    weights = weights.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        samples = 100.0 * (weights @ sums) / (weights @ seen)  # NaN: a replicate without the model's prompts
    low, high = percentile_interval(samples, alpha)
    return pd.DataFrame({"win_rate_ci_low": low, "win_rate_ci_high": high}, index=pd.Index(models, name="model"))
