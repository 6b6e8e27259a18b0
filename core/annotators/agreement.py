"""Inter-annotator agreement on overlapping items (docs/methods.md §7).

Item key = (query_id, unordered model pair). A vote shown the other way round (model_a sorted after
model_b) is the same item with its left/right labels swapped, so every label is stated for the
canonical orientation: ``left`` = the first model in sorted order won, ``right`` = the second won,
``tie`` = tie or both bad. Categories are {left, right, tie}.

- Cohen κ (two raters, items rated by both): (p_o − p_e)/(1 − p_e), p_e = Σ_k p_1k p_2k.
- Fleiss κ (a fixed number m of raters per item; = statsmodels ``fleiss_kappa``).
- Krippendorff α, nominal (any raters, missing allowed): coincidence matrix
  o_kl = Σ_u Σ_{ordered pairs in u} 1/(m_u − 1) over units with m_u ≥ 2, α = 1 − D_o/D_e,
  D_o = Σ_{k≠l} o_kl, D_e = (n² − Σ n_k²)/(n − 1).
- Agreement of each annotator with the majority of the other raters of the same item.

What is compared: only real overlap. Golden items (``is_golden``) are left out — they measure accuracy
against a known answer, which the quality table reports — and so are items judged by one annotator. With
several dimensions, each (item, dimension) is one judgement unit: a "style" verdict is never compared with
an "overall" one, and item counts count an item once whatever its dimensions.

Not enough overlap, no number: below :data:`MIN_OVERLAP_ITEMS` overlapping items the coefficients are
NaN and ``reason`` says why (and the same minimum applies to the items a pair of annotators shares).

Undefined values (no shared item, a single category in use …) are NaN, never an exception (§0).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

CATEGORIES = ("left", "right", "tie")
# Below ten shared items a coefficient says next to nothing: with docs/methods.md §7's example (p_o = 0.7,
# p_e = 0.38) the standard error of Cohen's κ is sqrt(p_o (1 − p_o) / n) / (1 − p_e) ≈ 0.23 at n = 10, a 95%
# interval of ±0.45 that spans "slight" to "almost perfect" agreement; with fewer items it is wider still.
MIN_OVERLAP_ITEMS = 10
# Canonical vote outcome (core.schema.OUTCOMES) -> label for the orientation in which it was shown.
_SHOWN_LABEL = {"model_a": "left", "model_b": "right", "tie": "tie", "tie (bothbad)": "tie"}
_SWAP = {"left": "right", "right": "left", "tie": "tie"}
ITEM_COLUMNS = ("query_id", "dimension", "model_1", "model_2", "annotator_id", "label", "swapped", "is_golden")


# ---------------------------------------------------------------- coefficients on plain label data

def _is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and np.isnan(value)) or value is pd.NA


def _key(value: Any) -> Any:
    """A label as a comparable key: numbers by value (1 == 1.0 == numpy 1), everything else as text."""
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_)):
        return float(value)
    return str(value)


def _sorted_keys(keys) -> list[Any]:
    return sorted(set(keys), key=lambda k: (isinstance(k, str), k))


def cohen_parts(rater_1: Sequence[Any], rater_2: Sequence[Any]) -> dict[str, float]:
    """Cohen κ with its parts: ``n`` items rated by both (missing = None/NaN), ``p_o``, ``p_e``, ``kappa``."""
    if len(rater_1) != len(rater_2):
        raise ValueError(f"the two raters need one label per item each ({len(rater_1)} vs {len(rater_2)})")
    pairs = [(a, b) for a, b in zip(rater_1, rater_2) if not _is_missing(a) and not _is_missing(b)]
    n = len(pairs)
    if n == 0:
        return {"n": 0, "p_o": np.nan, "p_e": np.nan, "kappa": np.nan}
    first = np.array([_key(a) for a, _ in pairs], dtype=object)
    second = np.array([_key(b) for _, b in pairs], dtype=object)
    p_o = float(np.mean(first == second))
    cats = _sorted_keys(set(first) | set(second))
    p_e = float(sum(np.mean(first == c) * np.mean(second == c) for c in cats))
    kappa = (p_o - p_e) / (1.0 - p_e) if p_e < 1.0 else np.nan
    return {"n": n, "p_o": p_o, "p_e": p_e, "kappa": float(kappa)}


def cohen_kappa(rater_1: Sequence[Any], rater_2: Sequence[Any]) -> float:
    """Cohen κ of two raters over the items both rated; NaN when undefined (no item, p_e = 1)."""
    return cohen_parts(rater_1, rater_2)["kappa"]


def fleiss_kappa(table) -> float:
    """Fleiss κ from an items × categories count table with the same number m ≥ 2 of ratings per item
    (statsmodels' ``fleiss_kappa(table, method="fleiss")``); NaN when undefined or m is not fixed."""
    counts = np.asarray(table, dtype=float)
    if counts.ndim != 2 or counts.shape[0] == 0:
        return np.nan
    m = counts.sum(axis=1)
    if not np.allclose(m, m[0]) or m[0] < 2:
        return np.nan
    m = m[0]
    p_j = counts.sum(axis=0) / counts.sum()
    p_i = ((counts**2).sum(axis=1) - m) / (m * (m - 1))
    p_bar, p_e = p_i.mean(), float((p_j**2).sum())
    return float((p_bar - p_e) / (1 - p_e)) if p_e < 1 else np.nan


def fleiss_kappa_labels(items: Sequence[Sequence[Any]]) -> float:
    """Fleiss κ from one list of m labels per item."""
    return fleiss_kappa(label_counts(items))


def label_counts(units: Sequence[Sequence[Any]], categories: Sequence[Any] | None = None) -> np.ndarray:
    """Units × categories count table from one list of labels per unit (missing labels skipped)."""
    units = [[_key(v) for v in unit if not _is_missing(v)] for unit in units]
    cats = [_key(c) for c in categories] if categories is not None else _sorted_keys(v for u in units for v in u)
    index = {c: j for j, c in enumerate(cats)}
    out = np.zeros((len(units), len(cats)))
    for i, unit in enumerate(units):
        for v in unit:
            out[i, index[v]] += 1
    return out


def krippendorff_alpha_counts(table) -> float:
    """Nominal Krippendorff α from a units × categories count table (any number of raters per unit)."""
    counts = np.asarray(table, dtype=float)
    if counts.ndim != 2 or counts.size == 0:
        return np.nan
    m = counts.sum(axis=1)
    pairable = counts[m >= 2]
    if len(pairable) == 0:
        return np.nan
    m_u = pairable.sum(axis=1)
    disagree = float(((m_u**2 - (pairable**2).sum(axis=1)) / (m_u - 1)).sum())  # D_o = Σ_{k≠l} o_kl
    n_k = pairable.sum(axis=0)  # marginals of the coincidence matrix
    n = n_k.sum()
    expected = (n**2 - (n_k**2).sum()) / (n - 1)
    return float(1.0 - disagree / expected) if expected > 0 else np.nan


def krippendorff_alpha(reliability_data) -> float:
    """Nominal Krippendorff α from a raters × units matrix; missing = None/NaN (as the ``krippendorff``
    package's ``reliability_data``)."""
    rows = [list(r) for r in reliability_data]
    if not rows:
        return np.nan
    n_units = len(rows[0])
    if any(len(r) != n_units for r in rows):
        raise ValueError("every rater needs one entry per unit (use None for missing)")
    return krippendorff_alpha_counts(label_counts([[r[u] for r in rows] for u in range(n_units)]))


# ---------------------------------------------------------------- items from votes

def items_from_votes(votes: pd.DataFrame) -> pd.DataFrame:
    """One row per (item, dimension, annotator): columns :data:`ITEM_COLUMNS`.

    model_1 < model_2 (sorted names); ``label`` is left/right/tie for that canonical order, so a vote
    shown swapped (model_a = model_2) has its left/right flipped. Votes without query_id or annotator
    are left out; an annotator who rated the same item on the same dimension twice keeps the first vote.
    ``dimension`` is "" without a dimension column; ``is_golden`` is False without an is_golden column.
    """
    needed = {"query_id", "annotator_id", "model_a", "model_b", "winner"}
    if not needed <= set(votes.columns) or len(votes) == 0:
        return pd.DataFrame(columns=list(ITEM_COLUMNS))
    frame = votes[votes["query_id"].notna() & votes["annotator_id"].notna() & votes["winner"].notna()]
    a = frame["model_a"].astype(str).to_numpy()
    b = frame["model_b"].astype(str).to_numpy()
    swapped = a > b
    shown = frame["winner"].astype(str).map(_SHOWN_LABEL)
    if shown.isna().any():
        bad = sorted(set(frame["winner"].astype(str)[shown.isna()]))
        raise ValueError(f"unknown outcomes {bad}; expected one of {list(_SHOWN_LABEL)}")
    shown = shown.to_numpy(dtype=object)
    label = np.where(swapped, pd.Series(shown).map(_SWAP).to_numpy(dtype=object), shown)
    out = pd.DataFrame({
        "query_id": frame["query_id"].astype(str).to_numpy(),
        "dimension": _dimensions(frame),
        "model_1": np.where(swapped, b, a),
        "model_2": np.where(swapped, a, b),
        "annotator_id": frame["annotator_id"].astype(str).to_numpy(),
        "label": label.astype(str),
        "swapped": swapped,
        "is_golden": golden_mask(frame),
    })
    return out.drop_duplicates(["query_id", "dimension", "model_1", "model_2", "is_golden", "annotator_id"],
                               keep="first").reset_index(drop=True)


def golden_mask(votes: pd.DataFrame) -> np.ndarray:
    """True for golden-item votes (a missing is_golden is False)."""
    if "is_golden" not in votes.columns:
        return np.zeros(len(votes), bool)
    flags = votes["is_golden"]
    if flags.dtype == bool:
        return flags.to_numpy()
    return flags.astype(object).where(flags.notna(), False).astype(bool).to_numpy()


def _dimensions(votes: pd.DataFrame) -> np.ndarray:
    if "dimension" not in votes.columns:
        return np.full(len(votes), "", dtype=object)
    return votes["dimension"].astype(object).where(votes["dimension"].notna(), "").astype(str).to_numpy(dtype=object)


def _with_item_index(items: pd.DataFrame) -> pd.DataFrame:
    """``item`` numbers the judgement units (query, model pair, dimension); ``base`` the items (query, pair)."""
    base = items["query_id"] + "\x1f" + items["model_1"] + "\x1f" + items["model_2"]
    if "is_golden" in items.columns:  # a golden item is never the same item as a real one
        base = base + np.where(items["is_golden"].to_numpy(bool), "\x1fgolden", "")
    dimension = items["dimension"] if "dimension" in items.columns else ""
    return items.assign(item=pd.factorize(base + "\x1f" + dimension)[0], base=pd.factorize(base)[0])


def item_counts(items: pd.DataFrame, categories: Sequence[str] = CATEGORIES) -> np.ndarray:
    """Items × categories count table (rows in order of first appearance)."""
    if len(items) == 0:
        return np.zeros((0, len(categories)))
    indexed = _with_item_index(items)
    code = pd.Categorical(indexed["label"], categories=list(categories)).codes
    table = np.zeros((indexed["item"].max() + 1, len(categories)))
    np.add.at(table, (indexed["item"].to_numpy(), code), 1)
    return table


def pairwise_cohen(items: pd.DataFrame, min_items: int = 1) -> pd.DataFrame:
    """Cohen κ for every annotator pair sharing at least ``min_items`` items (annotator_1 < annotator_2).

    Counted for all pairs at once: per pair, the units both rated, the agreements and each rater's label
    counts give p_o, p_e = Σ_k p_1k p_2k and κ exactly as :func:`cohen_kappa` does for one pair.
    ``n_items`` counts the shared items once whatever their dimensions."""
    columns = ["annotator_1", "annotator_2", "n_items", "kappa"]
    if len(items) == 0:
        return pd.DataFrame(columns=columns)
    indexed = _with_item_index(items)[["item", "base", "annotator_id", "label"]]
    indexed = indexed.assign(label=pd.Categorical(indexed["label"], categories=list(CATEGORIES)).codes)
    shared = indexed.merge(indexed.drop(columns="base"), on="item", suffixes=("_1", "_2"))
    shared = shared[shared["annotator_id_1"] < shared["annotator_id_2"]]
    if len(shared) == 0:
        return pd.DataFrame(columns=columns)
    shared_items = shared.groupby(["annotator_id_1", "annotator_id_2"], sort=True)["base"].nunique()
    l1, l2 = shared["label_1"].to_numpy(), shared["label_2"].to_numpy()
    parts = pd.DataFrame({"annotator_1": shared["annotator_id_1"].to_numpy(),
                          "annotator_2": shared["annotator_id_2"].to_numpy(), "n": 1, "agree": l1 == l2,
                          **{f"first_{k}": l1 == k for k in range(len(CATEGORIES))},
                          **{f"second_{k}": l2 == k for k in range(len(CATEGORIES))}})
    sums = parts.groupby(["annotator_1", "annotator_2"], sort=True).sum()
    n_shared = shared_items.to_numpy()
    sums, n_shared = sums[n_shared >= min_items], n_shared[n_shared >= min_items]
    n = sums["n"].to_numpy(dtype=float)
    p_o = sums["agree"].to_numpy(dtype=float) / n
    p_e = np.zeros(len(sums))
    for k in range(len(CATEGORIES)):  # the categories in sorted order, as cohen_parts sums them
        p_e = p_e + (sums[f"first_{k}"].to_numpy() / n) * (sums[f"second_{k}"].to_numpy() / n)
    with np.errstate(invalid="ignore", divide="ignore"):
        kappa = np.where(p_e < 1.0, (p_o - p_e) / (1.0 - p_e), np.nan)
    out = sums.reset_index()[["annotator_1", "annotator_2"]]
    return out.assign(n_items=n_shared.astype(int), kappa=kappa.astype(float))


def majority_agreement(items: pd.DataFrame) -> pd.DataFrame:
    """Per annotator: share of their labels equal to the strict majority label of the other raters of the
    item (items where the others have no strict majority are not counted)."""
    columns = ["annotator_id", "n_items", "agreement"]
    if len(items) == 0:
        return pd.DataFrame(columns=columns)
    indexed = _with_item_index(items)
    code = pd.Categorical(indexed["label"], categories=list(CATEGORIES)).codes
    table = item_counts(items)
    item = indexed["item"].to_numpy()
    others = table[item].copy()
    others[np.arange(len(item)), code] -= 1  # the other raters' counts for this rating
    top = others.max(axis=1)
    strict = (top > 0) & ((others == top[:, None]).sum(axis=1) == 1)
    agree = others.argmax(axis=1) == code
    frame = pd.DataFrame({"annotator_id": indexed["annotator_id"], "used": strict, "agree": strict & agree})
    grouped = frame.groupby("annotator_id", sort=True)[["used", "agree"]].sum()
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(grouped["used"] > 0, grouped["agree"] / grouped["used"].clip(lower=1), np.nan)
    return pd.DataFrame({"annotator_id": grouped.index.astype(str), "n_items": grouped["used"].astype(int).to_numpy(),
                         "agreement": rate})


def agreement_summary(items: pd.DataFrame, min_pair_items: int = 1,
                      min_items: int = MIN_OVERLAP_ITEMS) -> dict[str, Any]:
    """The agreement block of the annotator report, on the real overlap of ``items``.

    Golden items are set apart (``n_golden_items`` counts those judged by two or more annotators).
    ``n_items`` counts the items (query + model pair) judged by two or more annotators on the same
    dimension, ``n_units`` the (item, dimension) units the coefficients compare. With fewer than
    ``min_items`` such items every coefficient is NaN and ``reason`` says "not enough overlap"; a pair of
    annotators sharing fewer than ``min_items`` items has no Cohen κ either. Fleiss κ needs a fixed number
    of raters per unit: it is computed on the units with the modal rater count (``fleiss_raters_per_item``,
    ``fleiss_n_items`` say which).
    """
    golden = items["is_golden"].to_numpy(bool) if "is_golden" in items.columns else np.zeros(len(items), bool)
    n_golden = _overlap_items(items[golden])
    items = items[~golden]
    table = item_counts(items)
    m = table.sum(axis=1)
    multi = table[m >= 2]
    n_items = _overlap_items(items)
    enough = n_items >= min_items
    if len(multi):
        values, freq = np.unique(multi.sum(axis=1).astype(int), return_counts=True)
        modal = int(values[np.argmax(freq)])  # ties -> the smaller count
        fixed = multi[multi.sum(axis=1) == modal]
        fleiss = fleiss_kappa(fixed) if enough else np.nan
    else:
        modal, fixed, fleiss = None, multi, np.nan
    alpha = krippendorff_alpha_counts(table) if enough else np.nan
    pairs = pairwise_cohen(items, min_pair_items)
    pairs["kappa"] = pairs["kappa"].where(pairs["n_items"] >= min_items, np.nan)
    majority = majority_agreement(items)
    if not enough:
        majority["agreement"] = np.nan
    if not enough:
        reason = (f"not enough overlap: {n_items} item{'s' if n_items != 1 else ''} judged by two or more "
                  f"annotators, at least {min_items} needed")
    elif not np.isfinite(alpha):
        reason = "not computable: every judgement of the overlapping items is in one category"
    else:
        reason = None
    indexed = _with_item_index(items) if len(items) else None
    return {
        "n_items": n_items,
        "n_units": int(len(multi)),
        "n_items_total": int(indexed["base"].nunique()) if indexed is not None else 0,
        "n_ratings": int(m.sum()),
        "n_golden_items": n_golden,
        "min_overlap_items": int(min_items),
        "reason": reason,
        "krippendorff_alpha": alpha,
        "fleiss_kappa": fleiss,
        "fleiss_raters_per_item": modal,
        "fleiss_n_items": int(len(fixed)),
        "cohen_kappa": pairs.to_dict("records"),
        "majority_agreement": majority.to_dict("records"),
        "categories": list(CATEGORIES),
    }


def _overlap_items(items: pd.DataFrame) -> int:
    """Items (query + pair) with a unit judged by two or more annotators."""
    if len(items) == 0:
        return 0
    indexed = _with_item_index(items)
    raters = indexed.groupby("item")["annotator_id"].nunique()
    return int(indexed.loc[indexed["item"].isin(raters.index[raters >= 2]), "base"].nunique())


def agreement_from_votes(votes: pd.DataFrame, min_pair_items: int = 1,
                         min_items: int = MIN_OVERLAP_ITEMS) -> dict[str, Any]:
    """``agreement_summary(items_from_votes(votes))``, fast on large vote sets.

    Agreement is measured on units rated by two or more annotators, usually a small share of the votes.
    Those votes are found first with integer codes (no strings per row); the item table is built from
    them only, and the totals over every item (``n_items_total``, ``n_ratings``) come from the codes.
    """
    needed = {"query_id", "annotator_id", "model_a", "model_b", "winner"}
    if not needed <= set(votes.columns) or len(votes) == 0:
        return agreement_summary(items_from_votes(votes), min_pair_items, min_items)
    query, _ = _label_codes(votes["query_id"])
    annotator, annotator_names = _label_codes(votes["annotator_id"])
    # Missing dimensions are one more code, as "" is one more label in items_from_votes.
    dimension = (_label_codes(votes["dimension"])[0] + 1 if "dimension" in votes.columns
                 else np.zeros(len(votes), np.int64))
    a, a_names = _label_codes(votes["model_a"])
    b, b_names = _label_codes(votes["model_b"])
    names = sorted(set(map(str, a_names)) | set(map(str, b_names)))
    rank = {name: i for i, name in enumerate(names)}
    a_rank = np.array([rank[str(n)] for n in a_names], np.int64)[np.maximum(a, 0)]
    b_rank = np.array([rank[str(n)] for n in b_names], np.int64)[np.maximum(b, 0)]
    ok = (query >= 0) & (annotator >= 0) & (a >= 0) & (b >= 0) & votes["winner"].notna().to_numpy()
    k = len(names)
    golden = golden_mask(votes)
    base_key = (query.astype(np.int64) * k + np.minimum(a_rank, b_rank)) * k + np.maximum(a_rank, b_rank)
    base = pd.factorize(base_key[ok] * 2 + golden[ok])[0]  # hash-based: a million keys in a few hundredths of a second
    item = pd.factorize(base.astype(np.int64) * (int(dimension.max()) + 1) + dimension[ok])[0]
    span = int(annotator.max()) + 1
    rated = pd.unique(item * span + annotator[ok])  # distinct (unit, annotator)
    raters = np.bincount(rated // span, minlength=int(item.max()) + 1 if len(item) else 0)
    keep = np.zeros(len(votes), bool)
    keep[np.flatnonzero(ok)[raters[item] >= 2]] = True
    summary = agreement_summary(items_from_votes(votes[keep]), min_pair_items, min_items)
    plain = ~golden[ok]  # the totals count what agreement could use: golden items apart
    summary["n_items_total"] = int(np.count_nonzero(np.bincount(base[plain], minlength=1)))
    summary["n_ratings"] = int(len(pd.unique((item * span + annotator[ok])[plain])))
    # Annotators without a multiply-rated item are still listed, with no agreement, as the full path does.
    listed = {row["annotator_id"] for row in summary["majority_agreement"]}
    everyone = {str(annotator_names[c]) for c in np.flatnonzero(np.bincount(annotator[ok][plain], minlength=1))}
    missing = [{"annotator_id": a, "n_items": 0, "agreement": np.nan} for a in everyone - listed]
    if missing:
        rows = summary["majority_agreement"] + missing
        summary["majority_agreement"] = sorted(rows, key=lambda row: row["annotator_id"])
    return summary


def _label_codes(series: pd.Series) -> tuple[np.ndarray, list]:
    """Integer codes (−1 = missing) and the labels they index."""
    if isinstance(series.dtype, pd.CategoricalDtype):
        return series.cat.codes.to_numpy().astype(np.int64), list(series.cat.categories)
    codes, uniques = pd.factorize(series)
    return codes.astype(np.int64), list(uniques)
