"""A campaign's settings and progress in one sentence (the Data page's campaign manager shows it)."""

from __future__ import annotations

import pandas as pd

from core.campaign.store import Campaign, OverlapCount


def progress_sentence(campaign: Campaign, progress: pd.DataFrame, overlap: OverlapCount) -> str:
    """Dimensions, golden rate, sampling, items judged (``progress``: one row per annotator with ``done``),
    target and the overlap reached so far, e.g. ``Dimensions: overall · golden rate 20% · 12 items judged ·
    target 40 per annotator · no overlap``."""
    done = int(progress["done"].sum())
    sampling = " · active sampling" if campaign.active_sampling else ""
    shared = (f"overlap {campaign.overlap:.0%} by {campaign.overlap_k} annotators: {overlap.items_2plus:,} of "
              f"{overlap.items:,} real items judged by 2+" if campaign.overlap > 0 else "no overlap")
    return (f"Dimensions: {', '.join(campaign.dimensions)} · golden rate {campaign.golden_rate:.0%}{sampling} · "
            f"{done:,} items judged · target {campaign.target:,} per annotator · {shared}")
