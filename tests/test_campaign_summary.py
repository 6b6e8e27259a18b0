"""The campaign manager's sentence (core.campaign.summary), which the Data page shows as it is."""

from __future__ import annotations

import pandas as pd

from core.campaign.store import Campaign, OverlapCount
from core.campaign.summary import progress_sentence
from core.llm.cleaning import CleaningRules


def campaign(**changes) -> Campaign:
    settings = dict(id=1, name="ab", dimensions=("overall", "style"), golden_rate=0.2, target=1500, seed=0,
                    cleaning=CleaningRules())
    return Campaign(**{**settings, **changes})


PROGRESS = pd.DataFrame({"annotator": ["a1", "a2"], "done": [700, 650]})
OVERLAP = OverlapCount(items=1200, items_2plus=300, items_k=300, overlap=0.25, overlap_k=2)


def test_without_overlap_or_sampling():
    assert progress_sentence(campaign(), PROGRESS, OVERLAP) == (
        "Dimensions: overall, style · golden rate 20% · 1,350 items judged · target 1,500 per annotator · "
        "no overlap")


def test_with_overlap_and_active_sampling():
    sentence = progress_sentence(campaign(overlap=0.25, overlap_k=3, active_sampling=True), PROGRESS, OVERLAP)
    assert sentence == ("Dimensions: overall, style · golden rate 20% · active sampling · 1,350 items judged · "
                        "target 1,500 per annotator · overlap 25% by 3 annotators: 300 of 1,200 real items "
                        "judged by 2+")


def test_nothing_judged_yet():
    empty = pd.DataFrame({"annotator": pd.Series([], dtype=str), "done": pd.Series([], dtype=int)})
    assert "· 0 items judged ·" in progress_sentence(campaign(), empty, OVERLAP)
