"""`evalboard drift`: each model's rating per period with intervals, and which models changed over time."""

from __future__ import annotations

import argparse

from core.commands.source import read_input, write_output
from core.decisions.drift import DriftError, drift
from core.decisions.drift_render import to_csv, to_json, to_markdown
from core.ranking.request import prepare_votes

EXIT_OK = 0


def cmd_drift(args: argparse.Namespace) -> int:
    kind, frame = read_input(args)
    if kind != "votes":
        raise DriftError(f"{args.votes}: drift cuts the votes into periods, so it needs individual votes with their "
                         f"times, not a {kind.replace('_', ' ')} dataset")
    prepared = prepare_votes(frame, args.policy, dimension=args.dimension, alpha=args.alpha, qualify=args.qualify)
    result = drift(prepared, args.period, alpha=args.alpha, min_votes=args.min_votes)
    render = {"json": to_json, "markdown": to_markdown, "csv": to_csv}[args.format]
    write_output(render(result), args.output)
    return EXIT_OK
