"""Seeded demo Arena votes (columns of :data:`core.schema.VOTE_COLUMNS`) drawn from an :class:`ArenaTruth`.

Everything is vectorised: a chunk of votes is a handful of numpy draws, and labels are turned into
strings once at the end with Arrow ``take`` (the backend of pandas' ``str`` dtype), which is what
keeps 1,000,000 votes x 50 models within a couple of seconds.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from core.errors import SettingError
from core.samples.truth import (
    CATEGORIES,
    DIMENSIONS,
    GAMES,
    GOLDEN_QUERIES,
    N_ANNOTATORS,
    PERIOD_DAYS,
    ArenaTruth,
    arena_demo_truth,
)
from core.schema import OUTCOME_CODE, OUTCOMES, VOTE_COLUMNS
from core.validation import check_integer

_ELO_TO_LOGIT = np.log(10.0) / 400.0
# Winner codes index OUTCOMES, so labels are a single take at the end.
_A, _B, _TIE, _BOTHBAD = (OUTCOME_CODE[o] for o in ("model_a", "model_b", "tie", "tie (bothbad)"))


def _pair_probabilities(truth: ArenaTruth) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Upper-triangle pairs and their sampling probabilities in the early and late half.

    The biased model's pairs are up-weighted early and down-weighted late so that its share of
    votes is 3x higher early (-> 75 % of its appearances early) while its overall share stays close
    to the unbiased design.
    """
    m = len(truth.models)
    first, second = np.triu_indices(m, 1)
    w = truth.pair_weights[first, second]
    biased = truth.models.index(truth.biased_model)
    involved = (first == biased) | (second == biased)
    w_b, w_o = w[involved].sum(), w[~involved].sum()
    s0 = w_b / (w_b + w_o)
    ratio = truth.biased_early_share / (1.0 - truth.biased_early_share)
    # With very few models s0 is large and 1.5*s0 may exceed 1: cap, accepting a weaker effect.
    s_early = min(s0 * 2.0 * ratio / (ratio + 1.0), (1.0 + s0) / 2.0)
    s_late = s_early / ratio

    def probs(s: float) -> np.ndarray:
        factor = s * w_o / (w_b * (1.0 - s))
        p = np.where(involved, w * factor, w)
        return p / p.sum()

    return first, second, probs(s_early), probs(s_late)


def _as_str(labels: list[str] | tuple[str, ...], codes: np.ndarray) -> pd.api.extensions.ExtensionArray:
    """``labels[codes]`` as a pandas ``str`` array; Arrow's take is ~5x faster than object arrays."""
    return pd.array(pa.array(list(labels), type=pa.string()).take(pa.array(codes)), dtype="str")


def _timestamps(seconds: np.ndarray, start: np.datetime64) -> pd.api.extensions.ExtensionArray:
    """ISO-8601 UTC strings; day and time-of-day are looked up and joined (strftime is ~20x slower)."""
    absolute = start.astype("int64") + seconds
    day0 = int(start.astype("int64")) // 86400
    day = absolute // 86400 - day0
    n_days = int(day.max(initial=0)) + 1
    day_labels = np.datetime_as_string(
        np.datetime64(day0, "D") + np.arange(n_days), unit="D"
    )
    days = pa.array(list(day_labels), type=pa.string()).take(pa.array(day))
    times = _time_of_day_labels().take(pa.array(absolute % 86400))
    return pd.array(pc.binary_join_element_wise(days, times, ""), dtype="str")


@functools.cache
def _time_of_day_labels() -> pa.Array:
    """``"T00:00:00Z"`` … ``"T23:59:59Z"``, built once per process (~0.1 s)."""
    tod = range(86400)
    return pa.array([f"T{t // 3600:02d}:{t // 60 % 60:02d}:{t % 60:02d}Z" for t in tod], type=pa.string())


def _parse_start(start: str) -> np.datetime64:
    try:
        ts = pd.Timestamp(start)
    except (ValueError, TypeError) as exc:
        raise SettingError(f"`start` must be an ISO-8601 date or datetime, got {start!r}.") from exc
    if ts.tzinfo is not None:
        ts = ts.tz_convert("UTC").tz_localize(None)
    return np.datetime64(ts.floor("s").to_datetime64(), "s")


def _query_table(n_votes: int, seed: int) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Query ids (pool of ~n_votes/10, at least 50) then the golden ids, with category and game."""
    n_q = max(50, n_votes // 10)
    rng = np.random.default_rng([seed, 1])
    width = max(4, len(str(n_q - 1)))
    ids = [f"q{i:0{width}d}" for i in range(n_q)] + list(GOLDEN_QUERIES)
    category = np.concatenate([rng.integers(0, len(CATEGORIES), n_q),
                               np.arange(len(GOLDEN_QUERIES)) % len(CATEGORIES)])
    game = np.concatenate([rng.choice(len(GAMES), n_q, p=[0.5, 0.3, 0.2]),
                           np.arange(len(GOLDEN_QUERIES)) % len(GAMES)])
    return ids, category, game


def _arena_chunk(
    truth: ArenaTruth,
    queries: tuple[list[str], np.ndarray, np.ndarray],
    n: int,
    window: tuple[int, int],
    first_id: int,
    id_width: int,
    start: np.datetime64,
    rng: np.random.Generator,
) -> pd.DataFrame:
    """``n`` votes with timestamps in ``window`` (seconds from start), rows in timestamp order.

    Every draw is made for all ``n`` rows (masks select afterwards), so the stream consumed does not
    depend on the data and a chunk is reproducible from its seed alone.
    """
    models = truth.models
    half = PERIOD_DAYS * 86400 // 2
    # Times are drawn and sorted first; all other attributes are iid given time, so generating
    # them in that order already yields rows in timestamp order.
    seconds = np.sort(rng.integers(window[0], window[1], n))
    early = seconds < half

    first, second, p_early, p_late = _pair_probabilities(truth)
    pair = np.where(early, rng.choice(len(first), n, p=p_early), rng.choice(len(first), n, p=p_late))
    i, j = first[pair], second[pair]
    biased, biased_left = truth.models.index(truth.biased_model), truth.biased_left_share
    p_i_left = np.where(i == biased, biased_left, np.where(j == biased, 1.0 - biased_left, 0.5))
    i_left = rng.random(n) < p_i_left
    a, b = np.where(i_left, i, j), np.where(i_left, j, i)

    q_ids, q_cat, q_game = queries
    n_q = len(q_ids) - len(GOLDEN_QUERIES)
    golden = rng.random(n) < truth.golden_share
    query = np.where(golden, n_q + rng.integers(0, len(GOLDEN_QUERIES), n), rng.integers(0, n_q, n))
    game, dim = q_game[query], rng.integers(0, len(DIMENSIONS), n)

    verb = np.array([truth.verbosity[x] for x in models])
    len_a = np.maximum(1, np.rint(verb[a] * np.exp(rng.normal(0.0, 0.45, n)))).astype(np.int64)
    len_b = np.maximum(1, np.rint(verb[b] * np.exp(rng.normal(0.0, 0.45, n)))).astype(np.int64)

    # Careful annotators: Davidson's BT with ties, P(a) : P(tie) : P(b) = e^(d/2) : nu : e^(-d/2).
    base = np.array([truth.strengths[x] for x in models])
    elo = base + np.array([[[truth.offsets[(g, d)][x] for x in models] for d in DIMENSIONS] for g in GAMES])
    f_len = (len_a - len_b) / (len_a + len_b + 1.0)
    d = (elo[game, dim, a] - elo[game, dim, b]) * _ELO_TO_LOGIT + truth.left_logit + truth.length_coef * f_len
    e = np.exp(d / 2.0)
    denom = e + 1.0 / e + truth.tie_nu
    u = rng.random(n)
    winner = np.where(u < e / denom, _A, np.where(u < (e + truth.tie_nu) / denom, _TIE, _B))
    # Weak pairs are judged "both bad" more often (logit shift of 1 per 100 Elo below average).
    mean_pair = (base[a] + base[b]) / 2.0 - base.mean()
    logit_bb = np.log(truth.bothbad_share / (1.0 - truth.bothbad_share)) - mean_pair / 100.0
    bothbad = rng.random(n) < 1.0 / (1.0 + np.exp(-logit_bb))
    winner = np.where((winner == _TIE) & bothbad, _BOTHBAD, winner)

    # Golden items: careful annotators are right 90 %, otherwise the wrong side (70 %) or a tie.
    answer = np.where(rng.random(n) < 0.5, _A, _B)
    ug = rng.random(n)
    acc = truth.careful_golden_accuracy
    wrong = np.where(answer == _A, _B, _A)
    golden_vote = np.where(ug < acc, answer, np.where(ug < acc + 0.7 * (1.0 - acc), wrong, _TIE))
    winner = np.where(golden, golden_vote, winner)

    annotator = rng.choice(N_ANNOTATORS, n, p=truth.annotator_shares)
    clicker = np.isin(np.asarray(truth.annotators), truth.random_clickers)[annotator]
    winner = np.where(clicker, np.array([_A, _B, _TIE])[rng.integers(0, 3, n)], winner)
    careful_s = truth.annotator_median_s[annotator] * np.exp(rng.normal(0.0, 0.6, n))
    clicker_s = 1.5 * np.exp(rng.normal(0.0, 0.35, n))
    response = np.maximum(0.2, np.round(np.where(clicker, clicker_s, careful_s), 2))

    golden_answer = _as_str(OUTCOMES, answer)
    golden_answer[~golden] = np.nan
    columns = {
        "vote_id": _as_str_ids(first_id, n, id_width),
        "query_id": _as_str(q_ids, query),
        "game_id": _as_str(GAMES, game),
        "dimension": _as_str(DIMENSIONS, dim),
        "category": _as_str(CATEGORIES, q_cat[query]),
        "model_a": _as_str(models, a),
        "model_b": _as_str(models, b),
        "winner": _as_str(OUTCOMES, winner),
        "annotator_id": _as_str(truth.annotators, annotator),
        "timestamp": _timestamps(seconds, start),
        "response_time_s": response,
        "len_a": len_a,
        "len_b": len_b,
        "is_golden": golden,
        "golden_answer": golden_answer,
        "weight": np.ones(n),
    }
    return pd.DataFrame(columns, columns=list(VOTE_COLUMNS))


def _as_str_ids(first_id: int, n: int, width: int) -> pd.api.extensions.ExtensionArray:
    numbers = pc.cast(pa.array(np.arange(first_id, first_id + n, dtype=np.int64)), pa.string())
    return pd.array(pc.binary_join_element_wise("v", pc.utf8_lpad(numbers, width, "0"), ""), dtype="str")


def vote_id_width(n_votes: int) -> int:
    """Digits in a vote id: at least 7 ("v0000001"), more when ``n_votes`` needs them."""
    return max(7, len(str(n_votes)))


def arena_chunks(
    n_votes: int, n_models: int = 12, seed: int = 0, start: str = "2026-10-01", chunk_size: int = 1_000_000
) -> Iterator[pd.DataFrame]:
    """Yield the votes of :func:`arena_demo` as DataFrames of at most ``chunk_size`` rows.

    Chunk ``k`` covers the k-th slice of the four-week period and uses its own stream
    ``default_rng([seed, 2, k])``, so memory stays bounded and the output is deterministic for a
    given ``chunk_size``; with ``chunk_size >= n_votes`` it equals :func:`arena_demo` exactly.
    """
    # Validate eagerly (a generator body would only fail at the first next()).
    n_votes = check_integer(n_votes, "n_votes", 0)
    chunk_size = check_integer(chunk_size, "chunk_size", 1)
    truth = arena_demo_truth(n_models, seed)
    return _chunks(truth, n_votes, _parse_start(start), chunk_size)


def _chunks(truth: ArenaTruth, n_votes: int, t0: np.datetime64, chunk_size: int) -> Iterator[pd.DataFrame]:
    queries = _query_table(n_votes, truth.seed)
    n_chunks = max(1, -(-n_votes // chunk_size))
    period = PERIOD_DAYS * 86400
    width = vote_id_width(n_votes)
    for k in range(n_chunks):
        lo, hi = k * n_votes // n_chunks, (k + 1) * n_votes // n_chunks
        t_lo = k * period // n_chunks
        # Windows are disjoint and increasing, so the concatenated file stays in timestamp order.
        t_hi = max((k + 1) * period // n_chunks, t_lo + 1)
        rng = np.random.default_rng([truth.seed, 2, k])
        yield _arena_chunk(truth, queries, hi - lo, (t_lo, t_hi), lo + 1, width, t0, rng)


def arena_demo(
    n_votes: int = 20_000, n_models: int = 12, seed: int = 0, start: str = "2026-10-01"
) -> pd.DataFrame:
    """Deterministic demo votes with the columns of :data:`core.schema.VOTE_COLUMNS`.

    Parameters
    ----------
    n_votes : int
        Number of votes (rows), >= 0.
    n_models : int
        Number of models, >= 3.
    seed : int
        Non-negative seed; the same seed gives an identical frame.
    start : str
        First day (UTC) of the four-week voting period.

    Returns
    -------
    pandas.DataFrame
        One row per vote, in timestamp order. Planted effects (see :func:`arena_demo_truth`):
        left-position bias, the side and early-period exposure of :data:`BIASED_MODEL`, a length
        bias, non-uniform pairing, and :data:`RANDOM_CLICKERS` who vote at random in ~1.5 s.
    """
    n_votes = check_integer(n_votes, "n_votes", 0)
    return next(arena_chunks(n_votes, n_models, seed, start, chunk_size=max(1, n_votes)))
