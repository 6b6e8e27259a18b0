"""The ``evalboard`` command line: rank, leaderboard, ingest files into the store, manage datasets.

Exit status: 0 success, 2 an error the user can fix (:class:`core.errors.EvalBoardError`: the message names
the file, rows and columns, or the setting), 130 interrupted (Ctrl-C), 1 a fault of the software.

Building the parser imports only the standard library, :mod:`core.errors` and :mod:`core.schema`: each
command imports what it uses when it runs, so ``--help`` answers at once and a command loads no other
command's libraries (tests/test_cli_imports.py keeps it so).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path

INTERRUPTED = "evalboard: interrupted (Ctrl-C); an ingest under way stored nothing"


def _one_line_on_ctrl_c(kind, value, traceback) -> None:
    """Ctrl-C outside main() (while the modules below load): one line and status 130, not a traceback."""
    if issubclass(kind, KeyboardInterrupt):
        print(INTERRUPTED, file=sys.stderr)
        os._exit(130)
    sys.__excepthook__(kind, value, traceback)


if __name__ == "__main__" or sys.argv and Path(sys.argv[0]).name == "evalboard":
    sys.excepthook = _one_line_on_ctrl_c  # only as the command: the dashboard keeps its own handling

from core.errors import EvalBoardError, SettingError
from core.schema import CI_METHODS, DEFAULT_MISSING, MISSING_RULES, POLICIES, RANK_BY, READ_KINDS, SCHEMES, \
    TIE_MODELS

EXIT_OK, EXIT_ERROR, EXIT_INVALID = 0, 1, 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it
OUTCOME_HELP = ("the file's winner VALUE means OUTCOME: model_a, model_b, tie, 'tie (bothbad)' or drop (leave the "
                "rows out); repeatable, e.g. --outcome a-is-better=model_a; an empty VALUE means empty cells "
                "(--outcome =drop); '<X' and '>X' are thresholds for numbers (--outcome '>1.5=model_b')")
MISSING_HELP = ("score-table cells without a score (empty, NA or absent): skip = not scored, each model is averaged "
                "over its scored tasks (the default); zero = scored 0")


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
    ingest.add_argument("--outcome", action="append", default=[], metavar="VALUE=OUTCOME", help=OUTCOME_HELP)
    ingest.add_argument("--missing", choices=MISSING_RULES, default=DEFAULT_MISSING, help=MISSING_HELP)
    ingest.add_argument("--metric", help="lm-evaluation-harness metric to read (default acc); metric name "
                        "for a wide score table")
    ingest.add_argument("--counts", metavar="FILE", help="count matrix for a win-rate matrix")

    rank = sub.add_parser("rank", help="rank models from pairwise votes (Bradley–Terry, win rates …)",
                          description="Rank the models of VOTES: a votes, counts or win-rate matrix file, or the "
                                      "name of a stored dataset.")
    rank.add_argument("votes", metavar="VOTES")
    rank.add_argument("--scheme", choices=SCHEMES, default="bt",
                      help="bt: Bradley–Terry (Elo scale); winrate: win rate vs the field; stratified: win rate "
                           "balanced over side × period; ipw: BT with inverse-propensity weights; adjusted: BT "
                           "with left-position and length effects")
    rank.add_argument("--ties", choices=TIE_MODELS, default="half", help="ties as half wins, or Davidson's model")
    _request_options(rank)
    rank.add_argument("--ci", choices=CI_METHODS, default="bootstrap")
    rank.add_argument("--bootstrap", type=int, default=1000, metavar="B", help="replicates (default 1000)")
    rank.add_argument("--alpha", type=float, default=0.05)
    rank.add_argument("--seed", type=int, default=0)
    rank.add_argument("--by", help="rank per group: game_id, dimension or game_id,dimension")
    rank.add_argument("--anchor", metavar="MODEL=RATING", help="show MODEL at RATING (e.g. gpt-4=1200)")
    rank.add_argument("--format", choices=("json", "markdown", "csv"), default="json")
    rank.add_argument("--output", metavar="FILE", help="write here instead of standard output")
    _input_options(rank)

    board = sub.add_parser("leaderboard", help="leaderboard from a score table (EvalRuns)",
                           description="Aggregate RUNS (a score table file, a folder of lm-evaluation-harness "
                                       "results, or a stored dataset) into a leaderboard with bootstrap CIs.")
    board.add_argument("votes", metavar="RUNS")
    board.add_argument("--rank-by", choices=RANK_BY, default="mean")
    board.add_argument("--bootstrap", type=int, default=500, metavar="B", help="replicates (default 500)")
    board.add_argument("--alpha", type=float, default=0.05)
    board.add_argument("--seed", type=int, default=0)
    board.add_argument("--stratified", action="store_true", help="resample tasks within each category")
    board.add_argument("--metric", help="the metric to rank when a task reports several (lm-eval: default acc)")
    board.add_argument("--format", choices=("json", "markdown"), default="json")
    board.add_argument("--output", metavar="FILE")
    _input_options(board)

    for name, text in (("bias", "bias diagnostics of blind A/B votes (position, order, exposure, length, pairing) "
                                "and corrected rankings"),
                       ("annotators", "annotator quality (golden accuracy, fast answers) and agreement")):
        diagnostics = sub.add_parser(name, help=text)
        diagnostics.add_argument("votes", metavar="VOTES")
        diagnostics.add_argument("--alpha", type=float, default=0.05)
        diagnostics.add_argument("--format", choices=("json", "markdown"), default="json")
        diagnostics.add_argument("--output", metavar="FILE")
        _request_options(diagnostics)
        _input_options(diagnostics)

    report = sub.add_parser("report", help="the whole bundle: JSON, markdown, CSV and PNG figures",
                            description="Write the report bundle of INPUT (votes or a score table, a file or a "
                                        "stored dataset) into DIR.")
    report.add_argument("votes", metavar="INPUT")
    report.add_argument("--out", required=True, metavar="DIR", help="folder for the bundle (created)")
    report.add_argument("--bootstrap", type=int, default=1000, metavar="B", help="replicates (default 1000)")
    report.add_argument("--seed", type=int, default=0)
    report.add_argument("--alpha", type=float, default=0.05)
    report.add_argument("--no-png", action="store_true", help="skip the PNG figures")
    _request_options(report)
    _input_options(report)

    listing = sub.add_parser("datasets", help="list stored datasets")
    listing.add_argument("--db")
    delete = sub.add_parser("delete", help="delete a stored dataset")
    delete.add_argument("dataset", help="name or id")
    delete.add_argument("--db")
    samples = sub.add_parser("samples", help="store the sample datasets (arena_demo, evalruns_demo)")
    samples.add_argument("--db")
    for module in WORKFLOW_COMMANDS:
        COMMANDS.update(importlib.import_module(module).add_commands(sub))
    return parser


POLICY_HELP = ("what every analysis does with the judgements of unqualified annotators (golden accuracy, fast "
               "answers): keep, exclude (the default) or downweight (count half); --annotators is the same option")
DIMENSION_HELP = ("the dimension to analyse when the votes judge several (default: the first, in the order the "
                  "data shows them); one at a time, so an item judged on two dimensions counts once")


def _request_options(parser: argparse.ArgumentParser) -> None:
    """The options that prepare a request's votes for every analysis (core.ranking.request): the same everywhere."""
    parser.add_argument("--policy", "--annotators", dest="policy", choices=POLICIES, default="exclude",
                        help=POLICY_HELP)
    parser.add_argument("--dimension", metavar="NAME", help=DIMENSION_HELP)


def _input_options(parser: argparse.ArgumentParser) -> None:
    """How to read an input file (as for ingest), or where the stored datasets are."""
    parser.add_argument("--db", help="SQLite file for a stored dataset (default: $EVALBOARD_DB or data/evalboard.db)")
    parser.add_argument("--kind", choices=READ_KINDS, help="what the file holds (default: detected)")
    parser.add_argument("--map", action="append", default=[], metavar="COLUMN=SOURCE")
    parser.add_argument("--outcome", action="append", default=[], metavar="VALUE=OUTCOME", help=OUTCOME_HELP)
    parser.add_argument("--missing", choices=MISSING_RULES, default=DEFAULT_MISSING, help=MISSING_HELP)


def read_input(args: argparse.Namespace) -> tuple[str, object]:
    """(kind, frame) of a file, or of a stored dataset when no such file exists."""
    from core.io import InputError, Problem, load, load_lm_eval, parse_pairs

    path = Path(args.votes)
    if path.is_dir() or args.kind == "lm_eval":
        loaded = load_lm_eval([path], metric=getattr(args, "metric", None) or "acc", missing=args.missing)
        return loaded.kind, loaded.frame
    if path.exists():
        loaded = load(path, kind=args.kind, columns=parse_pairs(args.map, "--map"),
                      outcomes=parse_pairs(args.outcome, "--outcome", empty_key=True), missing=args.missing)
        return loaded.kind, loaded.frame
    from core.store import DatasetNotFound, Store

    with Store(args.db) as store:
        try:
            info = store.dataset(args.votes)
        except DatasetNotFound as exc:
            raise InputError(args.votes, [Problem((), "no such file, and no stored dataset of that name")],
                             exc.hint or None) from None
        frame = store.load(info.id)
    if info.kind == "eval_runs" and args.missing != DEFAULT_MISSING:
        from core.io.missing import apply_missing_rule

        frame, _ = apply_missing_rule(frame, args.missing)  # cells left out at ingest now count 0
    return info.kind, frame


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        return COMMANDS[args.command](args)
    except KeyboardInterrupt:  # Ctrl-C: a store transaction under way has been rolled back on the way out
        print(INTERRUPTED, file=sys.stderr)
        return EXIT_INTERRUPTED
    except EvalBoardError as exc:  # the user's to fix (a file, a setting, a name): the message, no traceback
        print(exc.cli_message(), file=sys.stderr)
        return EXIT_INVALID
    except Exception as exc:  # noqa: BLE001 - a fault of the software: named by its type, still not traced back
        print(f"evalboard: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_ERROR


def cmd_ingest(args: argparse.Namespace) -> int:
    from core.io import load, load_lm_eval, parse_pairs
    from core.store import Store

    paths = [Path(f) for f in args.files]
    lm_eval = args.kind == "lm_eval" or len(paths) > 1 or any(p.is_dir() for p in paths)
    if lm_eval:
        loaded = load_lm_eval(paths, metric=args.metric or "acc", missing=args.missing)
    else:
        loaded = load(paths[0], kind=args.kind, columns=parse_pairs(args.map, "--map"),
                      outcomes=parse_pairs(args.outcome, "--outcome", empty_key=True), metric=args.metric,
                      counts=args.counts, missing=args.missing)
    with Store(args.db) as store:
        result = store.ingest(loaded, name=args.name)
    print(result.summary())
    for note in loaded.notes:
        print(f"  note: {note}")
    return EXIT_OK


def cmd_rank(args: argparse.Namespace) -> int:
    from core.io import parse_pairs
    from core.ranking.render import to_csv, to_json, to_markdown
    from core.ranking.inputs import parse_by, rank_input
    from core.ranking import RankSettings

    anchor = None
    if args.anchor:
        name, rating = next(iter(parse_pairs([args.anchor], "--anchor").items()))
        try:
            anchor = (name, float(rating))
        except ValueError:
            raise SettingError(f"--anchor needs a number after '=', not {rating!r}") from None
    settings = RankSettings(args.scheme, args.ties, args.ci, args.bootstrap, args.alpha, args.seed, anchor)
    by = parse_by(args.by)
    kind, frame = read_input(args)
    result = rank_input(kind, frame, settings, by, args.policy, dimension=args.dimension)
    render = {"json": to_json, "markdown": to_markdown, "csv": to_csv}[args.format]
    write_output(render(result, by), args.output)
    return EXIT_OK


def cmd_leaderboard(args: argparse.Namespace) -> int:
    from core.io import InputError, Problem
    from core.leaderboard.aggregate import LeaderboardSettings, aggregate
    from core.leaderboard.render import full_markdown as leaderboard_markdown
    from core.leaderboard.render import to_json as leaderboard_json

    settings = LeaderboardSettings(args.rank_by, args.bootstrap, args.alpha, args.seed, args.stratified, args.metric)
    kind, frame = read_input(args)
    if kind != "eval_runs":
        raise InputError(args.votes, [Problem((), f"holds {kind.replace('_', ' ')}, not a score table: "
                                                  "rank pairwise data with `evalboard rank`")])
    result = aggregate(frame, settings)
    write_output(leaderboard_json(result, args.missing) if args.format == "json" else
                 leaderboard_markdown(result, args.missing), args.output)
    return EXIT_OK


def _votes_input(args: argparse.Namespace):
    """The request's votes, prepared once (dimension, annotator policy: core.ranking.request)."""
    from core.io import InputError, Problem
    from core.ranking.request import prepare_votes

    kind, frame = read_input(args)
    if kind != "votes":
        raise InputError(args.votes, [Problem((), f"holds {kind.replace('_', ' ')}; these diagnostics need "
                                                  "individual votes")])
    return prepare_votes(frame, args.policy, dimension=args.dimension, alpha=args.alpha)


def cmd_bias(args: argparse.Namespace) -> int:
    from core.bias import render as bias_report
    from core.bias.diagnose import diagnose

    prepared = _votes_input(args)
    report = diagnose(prepared.votes, alpha=args.alpha)
    write_output(bias_report.to_json(report, prepared) if args.format == "json" else
                 bias_report.to_markdown(report, prepared), args.output)
    return EXIT_OK


def cmd_annotators(args: argparse.Namespace) -> int:
    from core.annotators import render as annotator_render
    from core.annotators.report import build_prepared

    report = build_prepared(_votes_input(args), alpha=args.alpha)
    write_output(annotator_render.to_json(report) if args.format == "json" else
                 annotator_render.to_markdown(report), args.output)
    return EXIT_OK


def cmd_report(args: argparse.Namespace) -> int:
    from core.report.build import build_report, read_report_input
    from core.report.bundle import ReportSettings, terminal_progress

    settings = ReportSettings(args.bootstrap, args.seed, args.alpha, not args.no_png, args.policy, args.dimension)
    kind, frame, source = read_report_input(args)
    result = build_report(kind, frame, args.out, settings, source, terminal_progress())
    print(f"wrote {len(result.files)} files to {result.out_dir}"
          + ("" if result.png else f" (no PNG: {result.png_note})"))
    return EXIT_OK


def write_output(text: str, output: str | None) -> None:
    if output:
        Path(output).write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
    else:
        print(text)


def cmd_datasets(args: argparse.Namespace) -> int:
    from core.store import Store

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
    from core.store import Store

    with Store(args.db) as store:
        info = store.delete(args.dataset)
    print(f"deleted dataset '{info.name}' (id {info.id}, {info.rows:,} rows)")
    return EXIT_OK


def cmd_samples(args: argparse.Namespace) -> int:
    from core.samples.demo import ensure_samples
    from core.store import Store

    with Store(args.db) as store:
        for result in ensure_samples(store):
            print(result.summary())
    return EXIT_OK


# The human-evaluation workflow's commands (core.commands): each module's ``add_commands(subparsers)``
# adds its subcommands and returns {name: handler(args) -> exit status}.
WORKFLOW_COMMANDS: tuple[str, ...] = ("core.commands.parsers",)

COMMANDS = {"rank": cmd_rank, "leaderboard": cmd_leaderboard, "bias": cmd_bias, "annotators": cmd_annotators,
            "report": cmd_report,
            "ingest": cmd_ingest, "datasets": cmd_datasets, "delete": cmd_delete, "samples": cmd_samples}

if __name__ == "__main__":
    sys.exit(main())
