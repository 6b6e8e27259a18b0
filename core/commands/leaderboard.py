"""`evalboard leaderboard`: the leaderboard of a score table."""

from __future__ import annotations

import argparse

from core.commands.source import read_input, write_output
from core.io import InputError, Problem
from core.leaderboard.aggregate import LeaderboardSettings, aggregate
from core.leaderboard.render import full_markdown as leaderboard_markdown
from core.leaderboard.render import to_json as leaderboard_json

EXIT_OK = 0


def cmd_leaderboard(args: argparse.Namespace) -> int:
    settings = LeaderboardSettings(args.rank_by, args.bootstrap, args.alpha, args.seed, args.stratified, args.metric)
    kind, frame = read_input(args)
    if kind != "eval_runs":
        raise InputError(args.votes, [Problem((), f"holds {kind.replace('_', ' ')}, not a score table: "
                                                  "rank pairwise data with `evalboard rank`")])
    result = aggregate(frame, settings)
    write_output(leaderboard_json(result, args.missing) if args.format == "json" else
                 leaderboard_markdown(result, args.missing), args.output)
    return EXIT_OK
