"""`evalboard robustness`: the fewest votes found whose removal changes the top model (or one pair's order)."""

from __future__ import annotations

import argparse

from core.commands.source import read_input, write_output
from core.decisions.render import to_csv, to_json, to_markdown
from core.decisions.robustness import RobustnessError, parse_pair, robustness
from core.ranking.request import prepare_votes

EXIT_OK = 0


def cmd_robustness(args: argparse.Namespace) -> int:
    pair = parse_pair(args.pair)
    kind, frame = read_input(args)
    if kind != "votes":
        raise RobustnessError(f"{args.votes}: robustness lists the votes to drop, so it needs individual votes, "
                              f"not a {kind.replace('_', ' ')} dataset")
    result = robustness(prepare_votes(frame, args.policy, dimension=args.dimension, qualify=args.qualify), pair)
    render = {"json": to_json, "markdown": to_markdown, "csv": to_csv}[args.format]
    write_output(render(result), args.output)
    return EXIT_OK
