"""The known truth behind the demo Arena votes: strengths, planted biases, design of the sampling.

The demo data exists so that every page and estimator has something realistic to show *and* so
that tests can check that the bias diagnostics (docs/methods.md §4), the corrections (§5, §6) and the
annotator filters (§7) find what was planted. The truth is therefore a first-class object
(:class:`ArenaTruth`), drawn from its own random stream, and every planted effect is large enough
to be detected at 20,000 votes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from core.validation import check_integer

# Readable, deterministic model names; sorted order deliberately differs from strength order.
MODEL_NAMES = (
    "atlas-70b", "borealis-8b", "cirrus-mini", "dune-13b", "ember-34b", "fjord-7b",
    "glacier-405b", "halo-3b", "ion-22b", "juniper-1.5b", "kestrel-12b", "lumen-9b",
    "meridian-27b", "nimbus-4b", "onyx-32b", "polaris-14b", "quartz-2b", "ridge-72b",
    "sable-6b", "tundra-11b",
)
# The model with the planted exposure bias: shown LEFT ~75% of the time and ~75% of its
# appearances fall in the first half (two weeks) of the period (docs/methods.md §4 c, d).
BIASED_MODEL = MODEL_NAMES[2]
N_ANNOTATORS = 60
# Fixed (seed-independent) so that tests and docs can name them; they vote uniformly at random
# over model_a / model_b / tie and answer in ~1.5 s (docs/methods.md §7 flags both).
RANDOM_CLICKERS = ("ann-007", "ann-019", "ann-026", "ann-041", "ann-058")
GAMES = ("chat", "search", "code_assist")
DIMENSIONS = ("helpfulness", "accuracy", "style")
CATEGORIES = ("math", "reasoning", "code", "writing", "safety")
GOLDEN_QUERIES = tuple(f"gold-{i:02d}" for i in range(1, 21))
PERIOD_DAYS = 28

LEFT_LOGIT = 0.25  # position bias: logit bonus of the left answer
# Logit bonus per unit of f = (len_a - len_b)/(len_a + len_b + 1) (docs/methods.md §4 e). Typical |f| is
# ~0.25, so 1.0 gives ~0.25 logit: clearly detectable at 20k votes, yet smaller than true skill.
LENGTH_COEF = 1.0
TIE_NU = 0.5  # Davidson tie parameter: ~20 % non-decisive votes at typical strength gaps
BOTHBAD_SHARE = 0.3  # share of ties that are "tie (bothbad)" for an average pair (~5 % of votes)
GOLDEN_SHARE = 0.03
CAREFUL_GOLDEN_ACCURACY = 0.90
BIASED_LEFT_SHARE = 0.75
BIASED_EARLY_SHARE = 0.75


@dataclass(frozen=True)
class ArenaTruth:
    """The generating truth behind :func:`arena_demo` (same ``n_models`` and ``seed``).

    Attributes
    ----------
    models : tuple of str
        Model names, in generator order (``models[2]`` is the biased model).
    strengths : dict
        Base strength per model on the Elo scale (centred near 1000, ~300 points best to worst).
    offsets : dict
        ``(game_id, dimension) -> {model: Elo offset}``; the strength in a stratum is base + offset.
    verbosity : dict
        Median answer length (tokens) per model.
    biased_model, biased_left_share, biased_early_share
        The model with planted side and time exposure bias, and its target shares.
    left_logit, length_coef
        Position bias (logit bonus of the left answer) and length-bias coefficient on
        f = (len_a - len_b) / (len_a + len_b + 1).
    tie_nu, bothbad_share, golden_share, careful_golden_accuracy
        Davidson tie parameter, share of ties that are both-bad, share of golden votes, and the
        probability that a careful annotator answers a golden item correctly.
    random_clickers, annotators
        Ids of the random fast clickers and of all annotators.
    seed : int
        The seed the truth was drawn with.
    """

    models: tuple[str, ...]
    strengths: dict[str, float]
    offsets: dict[tuple[str, str], dict[str, float]] = field(repr=False)
    verbosity: dict[str, float] = field(repr=False)
    biased_model: str
    biased_left_share: float
    biased_early_share: float
    left_logit: float
    length_coef: float
    tie_nu: float
    bothbad_share: float
    golden_share: float
    careful_golden_accuracy: float
    random_clickers: tuple[str, ...]
    annotators: tuple[str, ...] = field(repr=False)
    seed: int
    # Design of the sampling (not part of the "answer"): pair weights (M x M, symmetric) and
    # annotator vote shares and median response times.
    pair_weights: np.ndarray = field(repr=False, compare=False)
    annotator_shares: np.ndarray = field(repr=False, compare=False)
    annotator_median_s: np.ndarray = field(repr=False, compare=False)

    def stratum_strengths(self, game_id: str, dimension: str) -> dict[str, float]:
        """Elo-scale strength of every model in one (game_id, dimension) stratum."""
        off = self.offsets[(game_id, dimension)]
        return {m: self.strengths[m] + off[m] for m in self.models}


def model_names(n_models: int) -> tuple[str, ...]:
    """The first ``n_models`` demo names, then ``model-021``, ``model-022``, … beyond the list."""
    named = MODEL_NAMES[:n_models]
    return named + tuple(f"model-{i:03d}" for i in range(len(named) + 1, n_models + 1))


def arena_demo_truth(n_models: int = 12, seed: int = 0) -> ArenaTruth:
    """Draw the truth used by :func:`arena_demo` for ``n_models`` models and ``seed``.

    Parameters
    ----------
    n_models : int
        Number of models, at least 3 (the biased model is the third name).
    seed : int
        Non-negative seed; the truth uses its own stream, independent of ``n_votes``.

    Returns
    -------
    ArenaTruth
    """
    m = check_integer(n_models, "n_models", 3)
    seed = check_integer(seed, "seed", 0)
    rng = np.random.default_rng([seed, 0])
    models = model_names(m)
    # Evenly spread 300 Elo points plus jitter, then shuffled so names do not reveal strength.
    base = 1000.0 + np.linspace(150.0, -150.0, m) + rng.normal(0.0, 8.0, m)
    base = base[rng.permutation(m)]
    # Per-stratum deviations (sd 20 Elo, centred): adjacent models are ~300/(M-1) apart, so some
    # ranks swap between dimensions, as they do on real leaderboards.
    off = rng.normal(0.0, 20.0, (len(GAMES), len(DIMENSIONS), m))
    off -= off.mean(axis=2, keepdims=True)
    # Log-normal verbosity; a few models are markedly verbose (x1.8).
    verbose = np.exp(rng.normal(np.log(250.0), 0.3, m)) * np.where(rng.random(m) < 0.25, 1.8, 1.0)
    # Non-uniform pairing: strong models meet each other more often, plus pair-level noise. The
    # coefficient keeps the rarest pair at roughly 1/10 of the average, so the graph stays dense.
    z = (base - base.mean()) / base.std()
    logw = 0.5 * (z[:, None] + z[None, :]) + np.triu(rng.normal(0.0, 0.45, (m, m)), 1)
    logw = np.triu(logw, 1) + np.triu(logw, 1).T
    pair_w = np.exp(logw)
    np.fill_diagonal(pair_w, 0.0)
    # Heavy-tailed annotator activity; clickers get a typical share so that each answers enough
    # golden items (>= 3 at 20k votes) to be evaluable.
    annotators = tuple(f"ann-{i:03d}" for i in range(1, N_ANNOTATORS + 1))
    share = np.exp(rng.normal(0.0, 1.1, N_ANNOTATORS))
    clicker = np.isin(annotators, RANDOM_CLICKERS)
    share[clicker] = 1.3 * np.median(share)
    share /= share.sum()
    median_s = 25.0 * np.exp(rng.normal(0.0, 0.3, N_ANNOTATORS))
    return ArenaTruth(
        models=models,
        strengths={name: float(r) for name, r in zip(models, base)},
        offsets={
            (g, d): {name: float(o) for name, o in zip(models, off[gi, di])}
            for gi, g in enumerate(GAMES) for di, d in enumerate(DIMENSIONS)
        },
        verbosity={name: float(v) for name, v in zip(models, verbose)},
        biased_model=models[2],
        biased_left_share=BIASED_LEFT_SHARE,
        biased_early_share=BIASED_EARLY_SHARE,
        left_logit=LEFT_LOGIT,
        length_coef=LENGTH_COEF,
        tie_nu=TIE_NU,
        bothbad_share=BOTHBAD_SHARE,
        golden_share=GOLDEN_SHARE,
        careful_golden_accuracy=CAREFUL_GOLDEN_ACCURACY,
        random_clickers=RANDOM_CLICKERS,
        annotators=annotators,
        seed=seed,
        pair_weights=pair_w,
        annotator_shares=share,
        annotator_median_s=median_s,
    )
