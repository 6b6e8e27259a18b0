"""``evalboard campaign``: create a voting campaign, manage its tokens, follow it, publish its votes."""

from __future__ import annotations

import argparse
import json
import sys
from contextlib import closing

from core.schema import DEFAULT_GOLDEN_RATE, DEFAULT_OVERLAP, DEFAULT_OVERLAP_K, DEFAULT_TARGET
from core.formats import terminal_text as shown

# Only light modules at import: `evalboard --help` builds this parser, so each action imports the
# campaign store (pandas …) when it runs.

RULES = ("urls", "citations", "emoji", "whitespace")


def add_commands(sub: argparse._SubParsersAction) -> dict:
    parser = sub.add_parser("campaign", help="blind A/B voting campaigns: create, tokens, status, publish",
                            description="Create a blind A/B voting campaign from an answers file, hand out "
                                        "annotator tokens, follow progress and publish the votes as a dataset.")
    actions = parser.add_subparsers(dest="campaign_action", required=True, metavar="ACTION")
    create = actions.add_parser("create", help="create a campaign and print its annotator tokens (once)")
    create.add_argument("name", metavar="NAME")
    source = create.add_mutually_exclusive_group(required=True)
    source.add_argument("--answers", metavar="FILE",
                        help="CSV/JSONL: query_id, prompt, model, answer (optional category, game_id)")
    source.add_argument("--from-run", metavar="RUN", help="the answers of a collection run (evalboard collect run)")
    create.add_argument("--golden", metavar="FILE", help="CSV/JSONL: question, correct_answer, wrong_answer "
                                                         "(optional category)")
    create.add_argument("--dimensions", default="overall", help="comma-separated (default overall)")
    create.add_argument("--golden-rate", type=float, metavar="R",
                        help=f"share of golden items (default {DEFAULT_GOLDEN_RATE:g} with --golden, else 0)")
    who = create.add_mutually_exclusive_group()
    who.add_argument("--tokens", type=int, default=0, metavar="N", help="issue N tokens")
    who.add_argument("--annotators", metavar="A,B,C", help="issue one token per named annotator")
    create.add_argument("--target", type=int, default=DEFAULT_TARGET,
                        help=f"items per annotator (default {DEFAULT_TARGET})")
    create.add_argument("--overlap", type=float, default=DEFAULT_OVERLAP, metavar="SHARE",
                        help=f"share of real items judged by several annotators, for agreement (default "
                             f"{DEFAULT_OVERLAP:g}; 0 for none)")
    create.add_argument("--overlap-k", type=int, default=DEFAULT_OVERLAP_K, metavar="K",
                        help=f"annotators per overlap item (default {DEFAULT_OVERLAP_K})")
    create.add_argument("--no-clean", action="append", default=[], choices=RULES,
                        help="show this kind of text as written (repeatable)")
    create.add_argument("--seed", type=int, help="seed of the scheduler's random draws (default: random)")
    create.add_argument("--active-sampling", action="store_true",
                        help="prefer the pairs whose order is most uncertain under the current Bradley–Terry fit "
                             "(pair counts may then differ by a few)")
    tokens = actions.add_parser("tokens", help="list, add or revoke annotator tokens")
    tokens.add_argument("name", metavar="NAME")
    tokens.add_argument("--add", type=int, default=0, metavar="N", help="issue N more tokens")
    tokens.add_argument("--annotators", metavar="A,B,C", help="issue one more token per named annotator")
    tokens.add_argument("--revoke", metavar="TOKEN", help="revoke a token (the token, or its annotator name)")
    status = actions.add_parser("status", help="progress per annotator (without NAME: list the campaigns)")
    status.add_argument("name", nargs="?", metavar="NAME")
    status.add_argument("--format", choices=("text", "json"), default="text")
    pub = actions.add_parser("publish", help="store the votes as the votes dataset 'campaign NAME' (replaced by each publish)")
    pub.add_argument("name", metavar="NAME")
    for action in (create, tokens, status, pub):
        action.add_argument("--db", help="SQLite file (default: $EVALBOARD_DB or data/evalboard.db)")
    return {"campaign": cmd_campaign}


def cmd_campaign(args: argparse.Namespace) -> int:
    from core.campaign.publish import publish
    from core.campaign.store import get_campaign
    from core.store.connection import connect
    from core.store import default_db_path

    db = args.db or default_db_path()
    if args.campaign_action == "publish":
        from core.store import Store

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
    from core.campaign.golden import golden_supply
    from core.campaign.inputs import read_answers, read_golden
    from core.campaign.store import CampaignError, create_campaign, issue_tokens
    from core.llm.cleaning import CleaningRules

    if args.from_run is not None:
        from core.collect.export import run_answers_for_campaign

        answers = run_answers_for_campaign(args.db or _default_db(), args.from_run)
    else:
        answers = read_answers(args.answers)
    golden = read_golden(args.golden) if args.golden else None
    rate = args.golden_rate if args.golden_rate is not None else (DEFAULT_GOLDEN_RATE if golden is not None else 0.0)
    if args.tokens < 0:
        raise CampaignError(f"--tokens must be positive, not {args.tokens}")
    cleaning = CleaningRules(**{rule: rule not in args.no_clean for rule in RULES})
    campaign = create_campaign(conn, args.name, answers, golden, dimensions=_names(args.dimensions),
                               golden_rate=rate, target=args.target, cleaning=cleaning, seed=args.seed,
                               active_sampling=args.active_sampling, overlap=args.overlap, overlap_k=args.overlap_k)
    n_models = answers["model"].nunique()
    print(f"campaign '{shown(campaign.name)}': {answers['query_id'].nunique():,} queries, {n_models} models, "
          f"{0 if golden is None else len(golden):,} golden items (rate {campaign.golden_rate:g}), "
          f"dimensions {shown(', '.join(campaign.dimensions))}, target {campaign.target:,} items per annotator, "
          f"{_overlap_setting(campaign)}")
    supply = golden_supply(0 if golden is None else len(golden), campaign.golden_rate, campaign.target)
    if supply.planned:
        print(supply.summary())
    for warning in supply.warnings():
        print(f"warning: {warning}", file=sys.stderr)
    _print_tokens(issue_tokens(conn, campaign, args.tokens, _names(args.annotators)))
    return 0


def _default_db():
    from core.store import default_db_path

    return default_db_path()


def _tokens(conn, args: argparse.Namespace) -> int:
    from core.campaign.store import get_campaign, issue_tokens, progress, revoke_token

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
    from core.campaign.store import get_campaign, list_campaigns, overlap_count, progress

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
    # An item is judged on every dimension (a judgement each); a golden item counts once (its first dimension).
    table["judgements"] = (table["done"] - table["golden_done"]) * len(campaign.dimensions) + table["golden_done"]
    items, judgements = int(table["done"].sum()), int(table["judgements"].sum())
    if args.format == "json":
        print(json.dumps({"campaign": campaign.name, "target": campaign.target, "dimensions": campaign.dimensions,
                          "golden_rate": campaign.golden_rate, "active_sampling": campaign.active_sampling,
                          "overlap": campaign.overlap, "overlap_k": campaign.overlap_k,
                          "items": items, "judgements": judgements,
                          "real_items_judged": overlap.items, "real_items_judged_2plus": overlap.items_2plus,
                          "annotators": json.loads(table.to_json(orient="records"))}))
        return 0
    print(f"campaign '{shown(campaign.name)}': {items:,} items judged ({judgements:,} judgements over "
          f"{len(campaign.dimensions)} dimension{'s' if len(campaign.dimensions) != 1 else ''}, a golden item once) "
          f"by {len(table)} annotators (target {campaign.target:,} items each)")
    share = "" if overlap.share is None else f" ({overlap.share:.1%})"
    print(f"  real items judged: {overlap.items:,}; by 2+ annotators: {overlap.items_2plus:,}{share} "
          f"[{_overlap_setting(campaign)}]")
    for row in table.itertuples(index=False):
        state = "revoked" if row.revoked else f"{row.done:,} / {row.target:,} items"
        print(f"  {shown(row.annotator)}\t{state}\tgolden {row.golden_done:,}\t{row.judgements:,} judgements")
    return 0
