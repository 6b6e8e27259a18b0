"""What the Bias page draws, computed once from a request's votes: the diagnostics, the four at-a-glance
tiles, the length points, battle counts, raw-versus-corrected win rates and the corrections table.

Every verdict here is read from the :mod:`core.bias.diagnose` results (``detected`` / ``practical``);
nothing re-derives it from p-values.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

import core.report.votes_data as vd
from core.bias.diagnose import BiasReport, Unavailable, diagnose, length_points, points
from core.bias.render import length_matters
from core.formats import p_text
from core.ranking.cells import battle_matrix, compress_votes

# The Bias page's length tab, when length matters: where the ranking with length held equal is.
STYLE_POINTER = ("Length matters in these votes. Rank with scheme Style-controlled BT on the Rankings page to see "
                 "the ranking with length held equal (and with markdown held equal too, when the votes carry the "
                 "answers' texts or counts).")


@dataclass(frozen=True)
class Tile:
    """One at-a-glance tile: headline value, detail line and verdict level (``flagged``: "practical",
    "small" (detected, under the practical threshold), "none", or None when the test could not run)."""
    title: str
    value: str
    detail: str
    flagged: str | None
    help_text: str


@dataclass(frozen=True)
class BiasView:
    report: BiasReport
    tiles: tuple[Tile, ...]
    length: tuple[np.ndarray, np.ndarray, np.ndarray] | None = field(repr=False)  # length_points()
    battles: pd.DataFrame | None = field(default=None, repr=False)  # votes per pair, models in corrections order
    raw: pd.Series | None = field(default=None, repr=False)  # win rate against the field
    stratified: pd.Series | None = field(default=None, repr=False)
    diff: pd.DataFrame | None = field(default=None, repr=False)  # stratified − raw head-to-head win rate
    corrections: pd.DataFrame | None = field(default=None, repr=False)  # corrections_table()
    moved: int = 0  # models whose rank changes under a correction
    style_pointer: str | None = None  # STYLE_POINTER when the length test finds that length matters


def bias_view(votes: pd.DataFrame, alpha: float = 0.05) -> BiasView:
    """The Bias page's content for a request's prepared votes (core.ranking.request), as ``evalboard bias``
    reads them."""
    report = diagnose(votes, alpha=alpha)
    length = length_points(votes)
    pointer = STYLE_POINTER if length_matters(report) else None
    if report.n_votes == 0:
        return BiasView(report, tiles(report), length, style_pointer=pointer)
    rows = () if isinstance(report.corrections, (Unavailable, type(None))) else report.corrections.rows
    order = [r.model for r in rows]
    used = vd.analysed(votes)
    cells = compress_votes(used)
    battles = vd.ordered_frame(battle_matrix(cells), list(cells.models), order)
    table = corrections_table(report)
    moved = 0 if table is None else int(table["Rank changed"].sum())
    if not rows:
        return BiasView(report, tiles(report), length, battles, corrections=table, moved=moved,
                        style_pointer=pointer)
    # The corrections hold the raw and stratified win rates against the field already.
    raw = pd.Series({r.model: r.raw_win_rate for r in rows}, name="raw")
    stratified = pd.Series({r.model: r.stratified_win_rate for r in rows}, name="stratified")
    return BiasView(report, tiles(report), length, battles, raw, stratified, vd.head_to_head_diff(used, order),
                    table, moved, pointer)


def level(test) -> str:
    """The tile's verdict from a test's detected / practical flags."""
    return "practical" if test.practical else "small" if test.detected else "none"


def tiles(report: BiasReport) -> tuple[Tile, ...]:
    """The 2×2 panel (position × time) as four tiles: statistic, p, verdict."""
    out = []
    pos = report.position
    if isinstance(pos, Unavailable) or pos.test.n == 0:
        out.append(_missing("Left answer chosen", pos))
    else:
        out.append(Tile("Left answer chosen", f"{pos.test.share:.1%}",
                        f"{pos.test.k:,} of {pos.test.n:,} decisive votes · {points(pos.effect)} · "
                        f"{p_text(pos.test.p_value)}", level(pos), pos.verdict))
    order = report.order
    if isinstance(order, Unavailable):
        out.append(_missing("Order (fatigue)", order))
    else:
        d = order.decisive
        early, late = d.x1 / d.n1 if d.n1 else math.nan, d.x2 / d.n2 if d.n2 else math.nan
        by_file = order.ordered_by == "file order"
        out.append(Tile("Order (fatigue)" + (" — by file order" if by_file else ""), f"{early:.0%} → {late:.0%}",
                        f"decisive votes early → late in a session · {p_text(d.p_value)}"
                        + (" · no timestamps: sessions follow the rows of the file" if by_file else ""),
                        level(order), order.verdict))
    for title, test in (("Model shown on the left", report.model_position),
                        ("Model shown early", report.time_exposure)):
        if isinstance(test, Unavailable) or not math.isfinite(test.chi2):
            out.append(_missing(title, test))
            continue
        n_flagged = sum(r.detected for r in test.per_model)
        out.append(Tile(title, f"χ² = {test.chi2:,.1f}",
                        f"{test.df} df · {p_text(test.p_value)} · {n_flagged} of {len(test.per_model)} "
                        f"models flagged (Holm)", level(test), test.verdict))
    return tuple(out)


def _missing(title: str, test) -> Tile:
    reason = test.reason if isinstance(test, Unavailable) else getattr(test, "verdict", "not enough data")
    return Tile(title, "–", reason, None, reason)


def corrections_table(report: BiasReport) -> pd.DataFrame | None:
    """Raw versus corrected win rates, Elo and ranks per model; None when the corrections could not run."""
    c = report.corrections
    if c is None or isinstance(c, Unavailable):
        return None
    return pd.DataFrame([{"Model": r.model, "Votes": r.n_votes, "Raw win rate": r.raw_win_rate,
                          "Stratified win rate": r.stratified_win_rate, "Rank (raw)": r.rank_raw,
                          "Rank (stratified)": r.rank_stratified, "Elo (BT)": r.elo, "Elo (IPW)": r.ipw_elo,
                          "Rank (BT)": r.rank_bt, "Rank (IPW)": r.rank_ipw, "Rank changed": r.rank_changed}
                         for r in c.rows])
