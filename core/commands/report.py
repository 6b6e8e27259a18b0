"""`evalboard report`: the whole bundle of one input."""

from __future__ import annotations

import argparse

from core.commands.source import read_source
from core.report.build import build_report
from core.report.bundle import ReportSettings, terminal_progress

EXIT_OK = 0


def cmd_report(args: argparse.Namespace) -> int:
    settings = ReportSettings(args.bootstrap, args.seed, args.alpha, not args.no_png, args.policy, args.dimension,
                              args.baseline, args.qualify)
    kind, frame, source = read_source(args)
    result = build_report(kind, frame, args.out, settings, source, terminal_progress())
    print(f"wrote {len(result.files)} files to {result.out_dir}"
          + ("" if result.png else f" (no PNG: {result.png_note})"))
    return EXIT_OK
