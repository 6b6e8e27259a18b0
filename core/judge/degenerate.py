"""Length-controlled fits that cannot give a meaningful number (docs/methods.md §12, "Degenerate fits").

Two ways a model's GLM logit P = a·tanh(Δ) + b·γ + c stops measuring anything:

* its length gap to the baseline is so one-sided that tanh(Δ) sits at +1 (or −1) on nearly every prompt: the
  length column is then the intercept column, a and c cannot be told apart, and LC = mean σ(b·γ + c) is
  whatever share of their sum the solver happened to put in c (anywhere from about 0 to 100, with a refitting
  interval of about [0, 100]);
* its preferences are (nearly) separated by length or difficulty, so the likelihood has no finite maximum and a
  coefficient runs off towards ±∞ (stopped at :data:`RUNAWAY_COEFFICIENT`); σ of it is 0 or 1.

Such a model gets no length-controlled win rate and a note naming it and the reason, never a number.
"""

from __future__ import annotations

import numpy as np

SATURATION_LEVEL = 0.99  # |tanh Δ| above this: Δ beyond 2.65 sd, where tanh no longer tells gaps apart
SATURATION_SHARE = 0.95  # the share of a model's prompts at one saturated end that makes a ≈ c
# No real length or difficulty effect needs a coefficient this large (a alone would move the logit by 30 over
# the tanh range; gpt4_gamed, the most extreme AlpacaEval 2.0 model, has |a| = 18 in the unpenalised fit):
# beyond it the fit is following a separation, not an effect.
RUNAWAY_COEFFICIENT = 30.0


def saturated_share(tanh_gap: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """(M,) the larger of the shares of a model's (weighted) prompts with tanh Δ > 0.99 and with tanh Δ < −0.99."""
    n = np.maximum(weights.sum(axis=1), 1e-300)
    high = (weights * (tanh_gap > SATURATION_LEVEL)).sum(axis=1) / n
    low = (weights * (tanh_gap < -SATURATION_LEVEL)).sum(axis=1) / n
    return np.maximum(high, low)


def degenerate_fits(models: tuple[str, ...], tanh_gap: np.ndarray, no_spread: np.ndarray, weights: np.ndarray,
                    coef: np.ndarray) -> dict[str, str]:
    """model -> why its length-controlled win rate is unavailable, for the models whose fit is degenerate."""
    share = saturated_share(tanh_gap, weights)
    largest = np.abs(coef).max(axis=1)
    reasons: dict[str, str] = {}
    for i, model in enumerate(models):
        if not no_spread[i] and share[i] >= SATURATION_SHARE:
            reasons[model] = (f"its length gap to the baseline is so one-sided that |tanh Δ| > {SATURATION_LEVEL} "
                              f"on {share[i]:.0%} of its prompts, so the length term cannot be told apart from the "
                              "intercept and any LC from 0 to 100 fits as well")
        elif not np.isfinite(largest[i]) or largest[i] > RUNAWAY_COEFFICIENT:
            a, b, c = coef[i]
            reasons[model] = (f"its GLM has no finite optimum (coefficients a = {a:.3g}, b = {b:.3g}, c = {c:.3g}, "
                              f"past ±{RUNAWAY_COEFFICIENT:g}): its preferences are (nearly) separated by answer "
                              "length or prompt difficulty")
    return reasons
