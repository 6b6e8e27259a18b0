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

from core.commands.parsers import deferred
from core.errors import EvalBoardError
from core.schema import (
    CI_METHODS,
    DEFAULT_MISSING,
    DEFAULT_STYLE_FEATURES,
    MISSING_RULES,
    POLICIES,
    RANK_BY,
    READ_KINDS,
    SCHEMES,
    STYLE_FEATURE_CHOICES,
    TIE_MODELS,
)

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
                           "with left-position and length effects; style: BT net of answer length and markdown "
                           "(Chatbot Arena's style control); crowd: BT with every annotator's reliability (Crowd-BT)")
    rank.add_argument("--ties", choices=TIE_MODELS, default="half", help="ties as half wins, or Davidson's model")
    _request_options(rank)
    rank.add_argument("--features", metavar="LIST", help="scheme style: what to control for, among "
                      f"{','.join(STYLE_FEATURE_CHOICES)} (default {','.join(DEFAULT_STYLE_FEATURES)})")
    rank.add_argument("--ci", choices=CI_METHODS,
                      help="intervals (default bootstrap; sandwich for schemes style and crowd)")
    rank.add_argument("--bootstrap", type=int, default=1000, metavar="B", help="replicates (default 1000)")
    rank.add_argument("--alpha", type=float, default=0.05)
    rank.add_argument("--seed", type=int, default=0)
    rank.add_argument("--by", help="rank per group: game_id, dimension or game_id,dimension")
    rank.add_argument("--anchor", metavar="MODEL=RATING", help="show MODEL at RATING (e.g. gpt-4=1200)")
    rank.add_argument("--format", choices=("json", "markdown", "csv"), default="json")
    rank.add_argument("--output", metavar="FILE", help="write here instead of standard output")
    _input_options(rank)

    robust = sub.add_parser("robustness", help="the fewest votes whose removal changes the top model (or a pair's "
                            "order), who cast them, checked by refitting",
                            description="Search the votes of VOTES (a votes file or a stored dataset) for the fewest "
                                        "whose removal changes the top of the Bradley–Terry ranking `rank` fits "
                                        "(ties half, weights, the same policy and dimension); an exact refit confirms "
                                        "the change. The count is an upper bound found by the search "
                                        "(docs/methods.md §13).")
    robust.add_argument("votes", metavar="VOTES")
    robust.add_argument("--pair", metavar="A,B", help="reverse the order of models A and B instead of the top")
    _request_options(robust)
    robust.add_argument("--format", choices=("json", "markdown", "csv"), default="json",
                        help="json (default), markdown for people, or csv: the votes to drop")
    robust.add_argument("--output", metavar="FILE", help="write here instead of standard output")
    _input_options(robust)

    planning = sub.add_parser("plan", help="how many more votes would tell each adjacent pair of the ranking apart",
                              description="For every adjacent pair of the Bradley–Terry ranking of VOTES (a votes "
                                          "file or a stored dataset; the fit `rank` makes) and any --pair: the extra "
                                          "votes a two-sided Wald test needs to reach --power at --alpha, on the pair "
                                          "itself or spread by the campaign scheduler, and the smallest detectable "
                                          "Elo gap (docs/methods.md §14).")
    planning.add_argument("votes", metavar="VOTES")
    planning.add_argument("--pair", action="append", metavar="A,B", help="plan this pair too (repeatable)")
    planning.add_argument("--alpha", type=float, default=0.05, help="level of the test (default 0.05)")
    planning.add_argument("--power", type=float, default=0.8, help="power wanted (default 0.8)")
    planning.add_argument("--simulate", type=int, default=0, metavar="N",
                          help="check each direct plan with N data sets drawn from the fit (default 0: no check)")
    planning.add_argument("--seed", type=int, default=0)
    _request_options(planning)
    planning.add_argument("--format", choices=("json", "markdown", "csv"), default="json")
    planning.add_argument("--output", metavar="FILE", help="write here instead of standard output")
    _input_options(planning)

    drifting = sub.add_parser("drift", help="ratings per period with intervals, and which models changed over time",
                              description="Fit the Bradley–Terry ranking `rank` fits to each period of VOTES (a votes "
                                          "file or a stored dataset), anchored so periods compare, and test every "
                                          "model for a change over the periods, Holm-adjusted (docs/methods.md §15).")
    drifting.add_argument("votes", metavar="VOTES")
    drifting.add_argument("--period", default="week", help="day, week (ISO, the default), month, or N-votes (e.g. "
                          "5000-votes: blocks of N votes in time order, file order without timestamps)")
    drifting.add_argument("--alpha", type=float, default=0.05, help="level of the tests and intervals (default 0.05)")
    drifting.add_argument("--min-votes", type=int, default=20, metavar="K", help="a model needs K votes in a period "
                          "to be rated there (default 20)")
    _request_options(drifting)
    drifting.add_argument("--format", choices=("json", "markdown", "csv"), default="json",
                          help="json (default), markdown for people, or csv: one row per model and period")
    drifting.add_argument("--output", metavar="FILE", help="write here instead of standard output")
    _input_options(drifting)

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
                       ("annotators", "annotator quality (golden accuracy, fast answers, the sequential screen) and "
                                      "agreement")):
        diagnostics = sub.add_parser(name, help=text)
        diagnostics.add_argument("votes", metavar="VOTES")
        diagnostics.add_argument("--alpha", type=float, default=0.05)
        diagnostics.add_argument("--format", choices=("json", "markdown"), default="json")
        diagnostics.add_argument("--output", metavar="FILE")
        _request_options(diagnostics)
        _input_options(diagnostics)

    report = sub.add_parser("report", help="the whole bundle: JSON, markdown, CSV and PNG figures",
                            description="Write the report bundle of INPUT (votes, a score table or judged "
                                        "preferences; a file or a stored dataset) into DIR.")
    report.add_argument("votes", metavar="INPUT")
    report.add_argument("--out", required=True, metavar="DIR", help="folder for the bundle (created)")
    report.add_argument("--bootstrap", type=int, default=1000, metavar="B", help="replicates (default 1000)")
    report.add_argument("--seed", type=int, default=0)
    report.add_argument("--alpha", type=float, default=0.05)
    report.add_argument("--no-png", action="store_true", help="skip the PNG figures")
    report.add_argument("--baseline", metavar="NAME", help="judged preferences: the baseline (default: the only one)")
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
QUALIFY_HELP = ("which rules make an annotator unqualified: golden (golden accuracy), fast (fast answers), screen "
                "(the sequential screen of their votes against the fitted model, docs/methods.md §17); default "
                "golden,fast")
DIMENSION_HELP = ("the dimension to analyse when the votes judge several (default: the first, in the order the "
                  "data shows them); one at a time, so an item judged on two dimensions counts once")


def _request_options(parser: argparse.ArgumentParser) -> None:
    """The options that prepare a request's votes for every analysis (core.ranking.request): the same everywhere."""
    parser.add_argument("--policy", "--annotators", dest="policy", choices=POLICIES, default="exclude",
                        help=POLICY_HELP)
    parser.add_argument("--qualify", metavar="RULES", default="golden,fast", help=QUALIFY_HELP)
    parser.add_argument("--dimension", metavar="NAME", help=DIMENSION_HELP)


def _input_options(parser: argparse.ArgumentParser) -> None:
    """How to read an input file (as for ingest), or where the stored datasets are."""
    parser.add_argument("--db", help="SQLite file for a stored dataset (default: $EVALBOARD_DB or data/evalboard.db)")
    parser.add_argument("--kind", choices=READ_KINDS, help="what the file holds (default: detected)")
    parser.add_argument("--map", action="append", default=[], metavar="COLUMN=SOURCE")
    parser.add_argument("--outcome", action="append", default=[], metavar="VALUE=OUTCOME", help=OUTCOME_HELP)
    parser.add_argument("--missing", choices=MISSING_RULES, default=DEFAULT_MISSING, help=MISSING_HELP)


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


# The human-evaluation workflow's commands (core.commands): each module's ``add_commands(subparsers)``
# adds its subcommands and returns {name: handler(args) -> exit status}.
WORKFLOW_COMMANDS: tuple[str, ...] = ("core.commands.parsers",)

# Each handler's module is imported when its command runs, so that building the parser loads no command.
COMMANDS = {name: deferred(f"core.commands.{module}", f"cmd_{name}") for name, module in (
    ("rank", "rank"), ("leaderboard", "leaderboard"), ("bias", "diagnostics"), ("annotators", "diagnostics"),
    ("report", "report"), ("ingest", "datasets"), ("datasets", "datasets"), ("delete", "datasets"),
    ("samples", "datasets"), ("robustness", "robustness"), ("plan", "plan"), ("drift", "drift"))}

if __name__ == "__main__":
    sys.exit(main())
