"""`evalboard plan`: how many more votes would tell each adjacent pair of the ranking apart (docs/methods.md §14)."""

from __future__ import annotations

import argparse

from core.commands.source import read_input, write_output
from core.decisions.plan import PlanError, check_power, parse_pairs, plan
from core.decisions.plan_render import to_csv, to_json, to_markdown
from core.ranking.request import prepare_votes
from core.validation import check_alpha

EXIT_OK = 0


def cmd_plan(args: argparse.Namespace) -> int:
    pairs = parse_pairs(args.pair)
    alpha = check_alpha(args.alpha, error=PlanError)
    power = check_power(args.power, alpha)  # checked before the votes are read: a bad setting fails at once
    kind, frame = read_input(args)
    if kind != "votes":
        raise PlanError(f"{args.votes}: plan simulates and refits individual votes with their policy and dimension, "
                        f"so it needs a votes file or dataset, not a {kind.replace('_', ' ')} dataset")
    prepared = prepare_votes(frame, args.policy, dimension=args.dimension, qualify=args.qualify)
    result = plan(prepared, pairs, alpha, power, args.simulate, args.seed)
    render = {"json": to_json, "markdown": to_markdown, "csv": to_csv}[args.format]
    write_output(render(result), args.output)
    return EXIT_OK
