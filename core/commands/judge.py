"""`evalboard judge`: AlpacaEval's win rates (and the length-controlled win rate) of judged preferences
against a baseline, as JSON, markdown or CSV."""

from __future__ import annotations

import argparse
from pathlib import Path

from core.commands.source import read_input, write_output
from core.io import InputError, Problem, load, parse_pairs
from core.judge.analysis import JudgeSettings, judge
from core.judge.length_fields import read_difficulty_table
from core.judge.render import judge_csv, judge_json, judge_markdown

EXIT_OK = 0
RENDERERS = {"json": judge_json, "markdown": judge_markdown, "csv": judge_csv}


def cmd_judge(args: argparse.Namespace) -> int:
    difficulty = read_difficulty_table(args.difficulty) if args.difficulty else None
    settings = JudgeSettings(args.baseline, args.bootstrap, args.alpha, args.seed, difficulty, args.lc_bootstrap,
                             args.refit_difficulty, args.lc_fit)
    if Path(args.votes).is_file():  # a file: its reading notes (scale, judge failures left out) go to the output
        loaded = load(args.votes, kind=args.kind, columns=parse_pairs(args.map, "--map"))
        kind, frame, notes = loaded.kind, loaded.frame, loaded.notes
    else:
        (kind, frame), notes = read_input(args), ()
    if kind != "preferences":
        raise InputError(args.votes, [Problem((), f"holds {kind.replace('_', ' ')}, not judged preferences "
                                                  "(model, baseline, query_id, preference)")])
    write_output(RENDERERS[args.format](judge(frame, settings, input_notes=notes)), args.output)
    return EXIT_OK
