"""Helpers of the Bias page: the cached diagnostics and the small views it repeats (no page flow here)."""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from core.bias.diagnose import PRACTICAL_SHARE, BiasReport, Unavailable, diagnose, length_points, points
from core.stats.significance import p_text
from core.charts.bias import model_share_chart
from core.filters import Filters
from core.ranking.cells import battle_matrix, compress_votes
from core.ranking import analysed_votes, without_absent_models
from core.report import votes_data as vd
from pages._filters import DIMENSION_HOW
from pages._request import prepared_request



@st.cache_data(show_spinner=False, max_entries=8)
def compute_bias(db_path: str, dataset_id: int, sha256: str, filters: Filters, alpha: float,
                 policy: str = "exclude") -> dict:
    """Diagnostics, length points, battle counts and raw-vs-corrected win rates of the request's votes
    (one dimension, the annotator ``policy`` applied: core.ranking.request, as ``evalboard bias`` reads them)."""
    prepared = prepared_request(db_path, dataset_id, sha256, filters, policy)
    votes = prepared.votes
    report = diagnose(votes, alpha=alpha)
    out: dict = {"report": report, "length": length_points(votes), "n_rows": len(votes),
                 "request": prepared.lines(DIMENSION_HOW)}
    if report.n_votes == 0:
        return out
    corrections = report.corrections
    rows = corrections.rows if corrections is not None and not isinstance(corrections, Unavailable) else ()
    order = [r.model for r in rows]
    used = without_absent_models(analysed_votes(votes)[0])[0]
    cells = compress_votes(used)
    out["battles"] = vd.ordered_frame(battle_matrix(cells), list(cells.models), order)
    if rows:  # the corrections hold the raw and stratified win rates against the field already
        out["raw"] = pd.Series({r.model: r.raw_win_rate for r in rows}, name="raw")
        out["stratified"] = pd.Series({r.model: r.stratified_win_rate for r in rows}, name="stratified")
        out["diff"] = vd.head_to_head_diff(used, order)
    return out


def verdict(test, what: str = "") -> bool:
    """A diagnostic's verdict (when it has one), or why it could not run; True when it ran."""
    if isinstance(test, Unavailable):
        st.info(f"{what} not available: {test.reason}." if what else f"Not available: {test.reason}.")
        return False
    if hasattr(test, "verdict"):
        st.markdown(test.verdict)
    return True


def model_shares(test, alpha: float, share_label: str, what: str, key: str) -> bool:
    """A per-model exposure test: its verdict and the share chart (or why it is not available)."""
    if not verdict(test, what):
        return False
    st.plotly_chart(model_share_chart(test.per_model, test.p0, alpha, share_label,
                                      f"Share of each model's appearances {share_label}"), key=key)
    return True


def tile(title: str, value: str, detail: str, flagged: str | None, help_text: str) -> None:
    """One of the four at-a-glance tiles: headline number, p-value line, verdict badge (``flagged``:
    "practical", "small" (detected, under the practical threshold), "none" or None = not available)."""
    with st.container(border=True):
        st.markdown(f"**{title}**", help=help_text)
        st.markdown(f"### {value}")
        st.caption(detail)
        if flagged is None:
            st.badge("not available", color="gray")
        elif flagged == "practical":
            st.badge("bias detected", icon=":material/warning:", color="red")
        elif flagged == "small":
            st.badge(f"detectable but small (< {PRACTICAL_SHARE * 100:.0f} points)", icon=":material/info:",
                     color="orange")
        else:
            st.badge("no evidence of bias", icon=":material/check:", color="green")


def level(test) -> str:
    """The tile's verdict from a test's detected / practical flags."""
    return "practical" if test.practical else "small" if test.detected else "none"


def tiles(report: BiasReport) -> list[dict]:
    """The 2×2 panel (position × time) as four tiles: statistic, p, verdict."""
    a = report.alpha
    out = []
    pos = report.position
    if isinstance(pos, Unavailable) or pos.test.n == 0:
        out.append(_missing("Left answer chosen", pos))
    else:
        out.append({"title": "Left answer chosen", "value": f"{pos.test.share:.1%}",
                    "detail": f"{pos.test.k:,} of {pos.test.n:,} decisive votes · {points(pos.effect)} · "
                              f"{p_text(pos.test.p_value)}",
                    "flagged": level(pos), "help_text": pos.verdict})
    order = report.order
    if isinstance(order, Unavailable):
        out.append(_missing("Order (fatigue)", order))
    else:
        d = order.decisive
        early, late = d.x1 / d.n1 if d.n1 else math.nan, d.x2 / d.n2 if d.n2 else math.nan
        by_file = order.ordered_by == "file order"
        out.append({"title": "Order (fatigue)" + (" — by file order" if by_file else ""),
                    "value": f"{early:.0%} → {late:.0%}",
                    "detail": (f"decisive votes early → late in a session · {p_text(d.p_value)}"
                               + (" · no timestamps: sessions follow the rows of the file" if by_file else "")),
                    "flagged": level(order), "help_text": order.verdict})
    for title, test in (("Model shown on the left", report.model_position),
                        ("Model shown early", report.time_exposure)):
        if isinstance(test, Unavailable) or not math.isfinite(test.chi2):
            out.append(_missing(title, test))
            continue
        n_flagged = sum(r.p_holm < a for r in test.per_model)
        out.append({"title": title, "value": f"χ² = {test.chi2:,.1f}",
                    "detail": f"{test.df} df · {p_text(test.p_value)} · {n_flagged} of {len(test.per_model)} "
                              f"models flagged (Holm)",
                    "flagged": level(test), "help_text": test.verdict})
    return out


def _missing(title: str, test) -> dict:
    reason = test.reason if isinstance(test, Unavailable) else getattr(test, "verdict", "not enough data")
    return {"title": title, "value": "–", "detail": reason, "flagged": None, "help_text": reason}


def corrections_table(report: BiasReport) -> pd.DataFrame | None:
    c = report.corrections
    if c is None or isinstance(c, Unavailable):
        return None
    return pd.DataFrame([{"Model": r.model, "Votes": r.n_votes, "Raw win rate": r.raw_win_rate,
                          "Stratified win rate": r.stratified_win_rate, "Rank (raw)": r.rank_raw,
                          "Rank (stratified)": r.rank_stratified, "Elo (BT)": r.elo, "Elo (IPW)": r.ipw_elo,
                          "Rank (BT)": r.rank_bt, "Rank (IPW)": r.rank_ipw, "Rank changed": r.rank_changed}
                         for r in c.rows])


CORRECTION_FORMATS = {"Votes": st.column_config.NumberColumn(format="localized"),
                      "Raw win rate": st.column_config.NumberColumn(format="%.3f"),
                      "Stratified win rate": st.column_config.NumberColumn(format="%.3f"),
                      "Elo (BT)": st.column_config.NumberColumn(format="%.1f"),
                      "Elo (IPW)": st.column_config.NumberColumn(format="%.1f")}
