"""`evalboard bias` and `evalboard annotators`: diagnostics of individual votes."""

from __future__ import annotations

import argparse

from core.annotators import render as annotator_render
from core.annotators.report import build_prepared
from core.bias import render as bias_report
from core.bias.diagnose import diagnose
from core.commands.source import read_input, write_output
from core.io import InputError, Problem
from core.ranking.request import prepare_votes

EXIT_OK = 0


def _votes_input(args: argparse.Namespace):
    """The request's votes, prepared once (dimension, annotator policy: core.ranking.request)."""
    kind, frame = read_input(args)
    if kind != "votes":
        raise InputError(args.votes, [Problem((), f"holds {kind.replace('_', ' ')}; these diagnostics need "
                                                  "individual votes")])
    return prepare_votes(frame, args.policy, dimension=args.dimension, alpha=args.alpha, qualify=args.qualify)



def cmd_bias(args: argparse.Namespace) -> int:
    prepared = _votes_input(args)
    report = diagnose(prepared.votes, alpha=args.alpha)
    write_output(bias_report.to_json(report, prepared) if args.format == "json" else
                 bias_report.to_markdown(report, prepared), args.output)
    return EXIT_OK



def cmd_annotators(args: argparse.Namespace) -> int:
    report = build_prepared(_votes_input(args), alpha=args.alpha)
    write_output(annotator_render.to_json(report) if args.format == "json" else
                 annotator_render.to_markdown(report), args.output)
    return EXIT_OK
