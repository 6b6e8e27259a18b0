"""`evalboard rank`: a ranking of pairwise votes, counts or a win-rate matrix."""

from __future__ import annotations

import argparse

from core.commands.source import read_input, write_output
from core.errors import SettingError
from core.io import parse_pairs
from core.ranking import RankSettings
from core.ranking.inputs import parse_by, rank_input
from core.ranking.render import to_csv, to_json, to_markdown

EXIT_OK = 0


def cmd_rank(args: argparse.Namespace) -> int:
    anchor = None
    if args.anchor:
        name, rating = next(iter(parse_pairs([args.anchor], "--anchor").items()))
        try:
            anchor = (name, float(rating))
        except ValueError:
            raise SettingError(f"--anchor needs a number after '=', not {rating!r}") from None
    ci = args.ci or ("sandwich" if args.scheme in ("style", "crowd") else "bootstrap")
    features = None if args.features is None else tuple(f.strip() for f in args.features.split(","))
    settings = RankSettings(args.scheme, args.ties, ci, args.bootstrap, args.alpha, args.seed, anchor, features)
    by = parse_by(args.by)
    kind, frame = read_input(args)
    result = rank_input(kind, frame, settings, by, args.policy, dimension=args.dimension, qualify=args.qualify)
    render = {"json": to_json, "markdown": to_markdown, "csv": to_csv}[args.format]
    write_output(render(result, by), args.output)
    return EXIT_OK
