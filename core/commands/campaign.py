"""``evalboard campaign``: create a voting campaign, manage its tokens, follow it, publish its votes."""

from __future__ import annotations

import argparse
import json
import sys
from contextlib import closing

from core.campaign.golden import golden_supply
from core.campaign.inputs import read_answers, read_golden
from core.campaign.publish import publish
from core.campaign.store import (
    CampaignError,
    create_campaign,
    get_campaign,
    issue_tokens,
    list_campaigns,
    overlap_count,
    progress,
    revoke_token,
)
from core.campaign.target import target_label, target_state
from core.collect.export import run_answers_for_campaign
from core.commands.parsers import CLEANING_RULES
from core.formats import terminal_text as shown
from core.llm.cleaning import CleaningRules
from core.schema import DEFAULT_GOLDEN_RATE
from core.store.connection import connect, default_db_path
from core.store.database import Store


def cmd_campaign(args: argparse.Namespace) -> int:
    db = args.db or default_db_path()
    if args.campaign_action == "publish":
        dataset = publish(db, args.name)
        with closing(connect(db)) as conn:
            first = get_campaign(conn, args.name).dimensions[0]
        with Store(db) as store:
            dimension = store.load(dataset.id, columns=["dimension"])["dimension"]
        # Every judged item (a golden one too) has exactly one judgement on the campaign's first dimension.
        items = int((dimension.astype(str) == first).sum())
        print(f"campaign '{shown(args.name)}': {dataset.rows:,} judgements ({items:,} judged items) stored as "
              f"dataset '{shown(dataset.name)}' (id {dataset.id})")
        return 0
    with closing(connect(db)) as conn:
        if args.campaign_action == "create":
            return _create(conn, args)
        if args.campaign_action == "tokens":
            return _tokens(conn, args)
        return _status(conn, args)


def _names(text: str | None) -> list[str]:
    return [n.strip() for n in (text or "").split(",") if n.strip()]


def _create(conn, args: argparse.Namespace) -> int:
    if args.from_run is not None:
        answers = run_answers_for_campaign(args.db or _default_db(), args.from_run)
    else:
        answers = read_answers(args.answers)
    golden = read_golden(args.golden) if args.golden else None
    rate = args.golden_rate if args.golden_rate is not None else (DEFAULT_GOLDEN_RATE if golden is not None else 0.0)
    if args.tokens < 0:
        raise CampaignError(f"--tokens must be positive, not {args.tokens}")
    cleaning = CleaningRules(**{rule: rule not in args.no_clean for rule in CLEANING_RULES})
    campaign = create_campaign(conn, args.name, answers, golden, dimensions=_names(args.dimensions),
                               golden_rate=rate, target=args.target, cleaning=cleaning, seed=args.seed,
                               active_sampling=args.active_sampling, overlap=args.overlap, overlap_k=args.overlap_k,
                               rank_target=args.rank_target)
    n_models = answers["model"].nunique()
    print(f"campaign '{shown(campaign.name)}': {answers['query_id'].nunique():,} queries, {n_models} models, "
          f"{0 if golden is None else len(golden):,} golden items (rate {campaign.golden_rate:g}), "
          f"dimensions {shown(', '.join(campaign.dimensions))}, target {campaign.target:,} items per annotator, "
          f"{_overlap_setting(campaign)}")
    if campaign.rank_target:
        print(f"rank target {campaign.rank_target}: {target_label(campaign.rank_target)} (balanced serving until "
              f"every pair has a vote and again once it is reached)")
    supply = golden_supply(0 if golden is None else len(golden), campaign.golden_rate, campaign.target)
    if supply.planned:
        print(supply.summary())
    for warning in supply.warnings():
        print(f"warning: {warning}", file=sys.stderr)
    _print_tokens(issue_tokens(conn, campaign, args.tokens, _names(args.annotators)))
    return 0


def _default_db():
    return default_db_path()


def _tokens(conn, args: argparse.Namespace) -> int:
    campaign = get_campaign(conn, args.name)
    if args.revoke:
        label = revoke_token(conn, campaign, args.revoke)
        print(f"revoked the token of {shown(label)}")
    if args.add or args.annotators:
        _print_tokens(issue_tokens(conn, campaign, args.add, _names(args.annotators)))
    if not (args.revoke or args.add or args.annotators):
        for row in progress(conn, campaign).itertuples(index=False):
            print(f"{shown(row.annotator)}\t{row.annotator_id}\t{'revoked' if row.revoked else 'active'}")
    return 0


def _print_tokens(issued) -> None:
    if not issued:
        return
    print("tokens (shown once; give each annotator theirs):")
    for token in issued:
        print(f"{shown(token.label)}\t{token.token}")


def _overlap_setting(campaign) -> str:
    if campaign.overlap <= 0:
        return "no overlap (each item judged once)"
    return f"overlap {campaign.overlap:.0%} of items judged by {campaign.overlap_k} annotators"


def _status(conn, args: argparse.Namespace) -> int:
    if not args.name:
        campaigns = list_campaigns(conn)
        if args.format == "json":
            print(json.dumps([c.name for c in campaigns]))
        for campaign in campaigns if args.format == "text" else ():
            print(shown(campaign.name))
        return 0
    campaign = get_campaign(conn, args.name)
    table = progress(conn, campaign)
    overlap = overlap_count(conn, campaign)
    state = target_state(conn, campaign)
    # An item is judged on every dimension (a judgement each); a golden item counts once (its first dimension).
    table["judgements"] = (table["done"] - table["golden_done"]) * len(campaign.dimensions) + table["golden_done"]
    items, judgements = int(table["done"].sum()), int(table["judgements"].sum())
    if args.format == "json":
        print(json.dumps({"campaign": campaign.name, "target": campaign.target, "dimensions": campaign.dimensions,
                          "golden_rate": campaign.golden_rate, "active_sampling": campaign.active_sampling,
                          "overlap": campaign.overlap, "overlap_k": campaign.overlap_k,
                          "items": items, "judgements": judgements,
                          "real_items_judged": overlap.items, "real_items_judged_2plus": overlap.items_2plus,
                          "rank_target": None if state is None else state.to_dict(),
                          "annotators": json.loads(table.to_json(orient="records"))}))
        return 0
    print(f"campaign '{shown(campaign.name)}': {items:,} items judged ({judgements:,} judgements over "
          f"{len(campaign.dimensions)} dimension{'s' if len(campaign.dimensions) != 1 else ''}, a golden item once) "
          f"by {len(table)} annotators (target {campaign.target:,} items each)")
    share = "" if overlap.share is None else f" ({overlap.share:.1%})"
    print(f"  real items judged: {overlap.items:,}; by 2+ annotators: {overlap.items_2plus:,}{share} "
          f"[{_overlap_setting(campaign)}]")
    if state is not None:
        _print_target(state)
    for row in table.itertuples(index=False):
        state = "revoked" if row.revoked else f"{row.done:,} / {row.target:,} items"
        print(f"  {shown(row.annotator)}\t{state}\tgolden {row.golden_done:,}\t{row.judgements:,} judgements")
    return 0


def _print_target(state) -> None:
    if state.reached_at is not None:
        verdict = f"REACHED at {state.reached_at:,} votes (served balanced since)"
    elif state.reached:
        verdict = "REACHED (served balanced from the scheduler's next refit, within a few votes)"
    elif state.warming_up:
        verdict = "not reached; warming up (served balanced until every pair has a vote)"
    else:
        verdict = "not reached (serving the pairs that help it most)"
    print(f"  rank target {state.target} ({state.label}), {1 - state.alpha:.0%} intervals: {verdict}")
    for pair in state.pairs:
        mark = "separated" if pair.separated else "not separated"
        print(f"    rank {pair.rank} {shown(pair.higher)} vs {shown(pair.lower)}: gap {pair.gap:+.1f} Elo "
              f"[{pair.ci_low:+.1f}, {pair.ci_high:+.1f}], {pair.votes:,} direct votes, {mark}")
