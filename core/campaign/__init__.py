"""Blind A/B voting campaigns: answers to compare, annotator tokens, scheduling, votes, publishing.

A campaign is made from an answers file (one answer per query and model), the dimensions to judge,
optional golden items (a question with a correct and a wrong answer), a golden rate and an overlap (the
share of items judged by several annotators, for agreement). Annotators vote
with a token; :func:`serve_next` picks what they see (balanced, counterbalanced, never repeated) and
:func:`record_vote` stores their verdict in one transaction. :func:`publish` turns the votes into a
votes dataset that every analysis page reads.
"""

from core.campaign import throttle
from core.campaign.golden import MIN_GOLDEN, GoldenSupply, golden_supply
from core.campaign.inputs import GOLDEN_CORRECT, GOLDEN_WRONG, read_answers, read_golden
from core.campaign.publish import campaign_of_dataset, publish
from core.campaign.scheduler import ServedItem, serve_next
from core.campaign.screen_time import IDLE_AFTER_S, record_screen_event
from core.campaign.store import (
                                 Campaign,
                                 CampaignError,
                                 IssuedToken,
                                 OverlapCount,
                                 TokenError,
                                 campaign_for_token,
                                 create_campaign,
                                 get_campaign,
                                 issue_tokens,
                                 list_campaigns,
                                 overlap_count,
                                 progress,
                                 revoke_token,
)
from core.campaign.votes import CHOICES, record_vote, vote_records

__all__ = ["CHOICES", "GOLDEN_CORRECT", "GOLDEN_WRONG", "IDLE_AFTER_S", "MIN_GOLDEN", "Campaign", "CampaignError",
           "GoldenSupply", "IssuedToken", "OverlapCount", "ServedItem", "TokenError", "campaign_for_token",
           "campaign_of_dataset", "create_campaign", "get_campaign", "golden_supply", "issue_tokens",
           "list_campaigns", "overlap_count", "progress", "publish", "read_answers", "read_golden",
           "record_screen_event", "record_vote", "revoke_token", "serve_next", "throttle", "vote_records"]
