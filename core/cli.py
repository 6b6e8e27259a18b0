"""The ``evalboard`` command line: ingest files into the store and manage stored datasets.

Exit status: 0 success, 2 invalid input (the message names the file, rows and columns), 1 other.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from core.io import READ_KINDS, InputError, load, load_lm_eval, parse_pairs
from core.store import DatasetNotFound, Store

EXIT_OK, EXIT_ERROR, EXIT_INVALID = 0, 1, 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="evalboard", description="Rankings you can defend, from LLM "
                                     "evaluation scores and blind A/B votes.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    ingest = sub.add_parser("ingest", help="validate a file and store it as a dataset",
                            description="Validate FILE (votes, counts, EvalRuns, a win-rate matrix, or "
                                        "lm-evaluation-harness results: a JSON file or a folder of them) and "
                                        "store it in one transaction.")
    ingest.add_argument("files", nargs="+", metavar="FILE", help="the input; several files or a folder only "
                        "for lm-evaluation-harness results")
    ingest.add_argument("--name", help="dataset name (default: the file name)")
    ingest.add_argument("--db", help="SQLite file (default: $EVALBOARD_DB or data/evalboard.db)")
    ingest.add_argument("--kind", choices=READ_KINDS, help="what the file holds (default: detected)")
    ingest.add_argument("--map", action="append", default=[], metavar="COLUMN=SOURCE",
                        help="read EvalBoard's COLUMN from the file's SOURCE column (repeatable), "
                             "e.g. --map winner=preference")
    ingest.add_argument("--outcome", action="append", default=[], metavar="VALUE=OUTCOME",
                        help="the file's winner VALUE means OUTCOME: model_a, model_b, tie or "
                             "'tie (bothbad)' (repeatable), e.g. --outcome a-is-better=model_a")
    ingest.add_argument("--metric", help="lm-evaluation-harness metric to read (default acc); metric name "
                        "for a wide score table")
    ingest.add_argument("--counts", metavar="FILE", help="count matrix for a win-rate matrix")

    listing = sub.add_parser("datasets", help="list stored datasets")
    listing.add_argument("--db")
    delete = sub.add_parser("delete", help="delete a stored dataset")
    delete.add_argument("dataset", help="name or id")
    delete.add_argument("--db")
    samples = sub.add_parser("samples", help="store the sample datasets (arena_demo, evalruns_demo)")
    samples.add_argument("--db")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except InputError as exc:
        print(str(exc), file=sys.stderr)
        return EXIT_INVALID
    except DatasetNotFound as exc:
        print(f"evalboard: {exc}", file=sys.stderr)
        return EXIT_INVALID
    except ValueError as exc:  # a malformed option value (e.g. --map without '=')
        print(f"evalboard: {exc}", file=sys.stderr)
        return EXIT_INVALID
    except Exception as exc:  # noqa: BLE001 - the CLI reports, it does not trace back at users
        print(f"evalboard: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_ERROR


def cmd_ingest(args: argparse.Namespace) -> int:
    paths = [Path(f) for f in args.files]
    lm_eval = args.kind == "lm_eval" or len(paths) > 1 or any(p.is_dir() for p in paths)
    if lm_eval:
        loaded = load_lm_eval(paths, metric=args.metric or "acc")
    else:
        loaded = load(paths[0], kind=args.kind, columns=parse_pairs(args.map, "--map"),
                      outcomes=parse_pairs(args.outcome, "--outcome"), metric=args.metric, counts=args.counts)
    with Store(args.db) as store:
        result = store.ingest(loaded, name=args.name)
    print(result.summary())
    for note in loaded.notes:
        print(f"  note: {note}")
    return EXIT_OK


def cmd_datasets(args: argparse.Namespace) -> int:
    with Store(args.db) as store:
        rows = store.datasets()
    if not rows:
        print("no datasets stored; add one with: evalboard ingest FILE")
        return EXIT_OK
    print(f"{'id':>4}  {'kind':<14} {'rows':>10}  {'created (UTC)':<25} name")
    for d in rows:
        print(f"{d.id:>4}  {d.kind:<14} {d.rows:>10,}  {d.created_at:<25} {d.name}")
    return EXIT_OK


def cmd_delete(args: argparse.Namespace) -> int:
    with Store(args.db) as store:
        info = store.delete(args.dataset)
    print(f"deleted dataset '{info.name}' (id {info.id}, {info.rows:,} rows)")
    return EXIT_OK


def cmd_samples(args: argparse.Namespace) -> int:
    from core.demo import ensure_samples

    with Store(args.db) as store:
        for result in ensure_samples(store):
            print(result.summary())
    return EXIT_OK


COMMANDS = {"ingest": cmd_ingest, "datasets": cmd_datasets, "delete": cmd_delete, "samples": cmd_samples}

if __name__ == "__main__":
    sys.exit(main())
