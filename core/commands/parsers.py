"""The command-line options of the human-evaluation workflow (``evalboard collect``, ``campaign``, ``evalset``)
and of ``evalboard judge``.

Only the standard library and :mod:`core.schema` are imported here: ``evalboard --help`` builds these
parsers, and must not wait for pandas, openai or the store (tests/test_cli_imports.py). Each command's
handler lives in its own module (:mod:`core.commands.collect`, :mod:`~core.commands.campaign`,
:mod:`~core.commands.evalset`), which imports what it needs at its top; the handler given to the CLI
imports that module when the command runs.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable

from core.schema import (
    DEFAULT_GOLDEN_RATE,
    DEFAULT_JUDGE_REPLICATES,
    DEFAULT_LC_REPLICATES,
    DEFAULT_OVERLAP,
    DEFAULT_OVERLAP_K,
    DEFAULT_TARGET,
)

CLEANING_RULES = ("urls", "citations", "emoji", "whitespace")  # what --no-clean can keep (core.llm.cleaning)
DEFAULT_GRACE_S = 10.0  # as core.collect.stop.DEFAULT_GRACE_S (not imported: --help stays light; a test checks)


def add_commands(sub: argparse._SubParsersAction) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add ``collect``, ``campaign``, ``evalset`` and ``judge`` to the CLI's subparsers; {name: handler(args) -> exit
    status}."""
    return {**_add_collect(sub), **_add_campaign(sub), **_add_evalset(sub), **_add_judge(sub)}


def deferred(module: str, function: str) -> Callable[[argparse.Namespace], int]:
    """The handler ``module.function``, imported when the command runs (so that building the parser does not)."""
    def handler(args: argparse.Namespace) -> int:
        return getattr(importlib.import_module(module), function)(args)

    return handler


def _add_judge(sub: argparse._SubParsersAction) -> dict:
    parser = sub.add_parser("judge", help="win rates of judged preferences against a baseline (AlpacaEval)",
                            description="AlpacaEval's win rate, standard error, wins, draws, discrete and "
                                        "length-controlled win rates of every model of FILE (judged preferences "
                                        "against a baseline: a file or a stored dataset), with bootstrap intervals "
                                        "over prompts and per-category win rates.")
    parser.add_argument("votes", metavar="FILE|DATASET")
    parser.add_argument("--baseline", metavar="NAME", help="the baseline (default: the file's only one)")
    parser.add_argument("--format", choices=("json", "markdown", "csv"), default="json")
    parser.add_argument("--bootstrap", type=int, default=DEFAULT_JUDGE_REPLICATES, metavar="N",
                        help=f"replicates of the win rate's prompt bootstrap (default {DEFAULT_JUDGE_REPLICATES}; "
                             "0: no interval)")
    parser.add_argument("--lc-bootstrap", type=int, default=DEFAULT_LC_REPLICATES, metavar="N",
                        help="replicates of the length-controlled interval, each refitting every model's GLM "
                             f"(default {DEFAULT_LC_REPLICATES}; 0: no interval)")
    parser.add_argument("--hold-difficulty", dest="refit_difficulty", action="store_false",
                        help="the length-controlled interval's replicates keep the full fit's prompt difficulty "
                             "instead of refitting it (faster; the interval then ignores γ's own uncertainty)")
    parser.add_argument("--lc-fit", choices=("alpaca", "glm"), default="alpaca",
                        help="how each model's length-controlled GLM is fitted: alpaca (default) as AlpacaEval does, "
                             "L1 penalty with C chosen by 5-fold cross-validation over prompts; glm by plain "
                             "maximum likelihood (docs/methods.md §12)")
    parser.add_argument("--alpha", type=float, default=0.05, help="intervals at level 1 - alpha (default 0.05)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--difficulty", metavar="FILE", help="a published prompt-difficulty table (query_id or "
                        "instruction_id, difficulty) for length control, instead of the joint fit over the file")
    parser.add_argument("--kind", choices=("preferences",), default="preferences",
                        help="what the file holds (only preferences)")
    parser.add_argument("-o", "--output", metavar="OUT", help="write here instead of standard output")
    parser.add_argument("--db", help="SQLite file for a stored dataset (default: $EVALBOARD_DB or data/evalboard.db)")
    parser.add_argument("--map", action="append", default=[], metavar="COLUMN=SOURCE",
                        help="read COLUMN (model, baseline, query_id, preference, preference_raw, winner, category, "
                             "len_model, len_baseline, judge) from the file's SOURCE column (repeatable)")
    parser.set_defaults(outcome=[], missing="skip")
    return {"judge": deferred("core.commands.judge", "cmd_judge")}


def _add_collect(sub: argparse._SubParsersAction) -> dict:
    collect_parser = sub.add_parser("collect", help="collect every model's answer to every eval-set query",
                                    description="Ask every model of a models file every query of an eval set, "
                                                "concurrently within each provider's limit; resumable.")
    actions = collect_parser.add_subparsers(dest="collect_action", required=True, metavar="ACTION")
    run = actions.add_parser("run", help="start or resume a collection run")
    run.add_argument("--models", required=True, metavar="TOML", help="the models file")
    run.add_argument("--queries", required=True, metavar="FILE",
                     help="eval set: CSV/JSONL with query_id, prompt (optional category, priority)")
    run.add_argument("--run", required=True, metavar="NAME", help="run name; the same name again resumes")
    run.add_argument("--limit", type=int, metavar="N", help="ask only the first N queries")
    run.add_argument("--grace", type=float, default=DEFAULT_GRACE_S, metavar="SECONDS",
                     help="on Ctrl-C, wait this long for the requests in flight (their answers are stored); "
                          f"a second Ctrl-C stops at once (default {DEFAULT_GRACE_S:g})")
    run.add_argument("--job", type=int, help=argparse.SUPPRESS)  # a background job's process takes up its row
    run.add_argument("--no-clean", action="append", default=[], choices=CLEANING_RULES,
                     help="keep this kind of text in the cleaned answers (repeatable)")
    status = actions.add_parser("status", help="answers, failures, latency and tokens of a run")
    status.add_argument("--run", metavar="NAME", help="the run (default: list the runs)")
    status.add_argument("--format", choices=("text", "json"), default="text")
    export = actions.add_parser("export", help="write the answers file of a run (for a voting campaign)")
    export.add_argument("--run", required=True, metavar="NAME")
    export.add_argument("--output", required=True, metavar="FILE", help="answers.csv or answers.jsonl")
    export.add_argument("--game-id", metavar="ID", help="add a game_id column with this value")
    export.add_argument("--raw", action="store_true", help="add answer_raw, the text before cleaning")
    for action in (run, status, export):
        action.add_argument("--db", help="SQLite file (default: $EVALBOARD_DB or data/evalboard.db)")
    return {"collect": deferred("core.commands.collect", "cmd_collect")}


def _add_campaign(sub: argparse._SubParsersAction) -> dict:
    parser = sub.add_parser("campaign", help="blind A/B voting campaigns: create, tokens, status, publish",
                            description="Create a blind A/B voting campaign from an answers file, hand out "
                                        "annotator tokens, follow progress and publish the votes as a dataset.")
    actions = parser.add_subparsers(dest="campaign_action", required=True, metavar="ACTION")
    create = actions.add_parser("create", help="create a campaign and print its annotator tokens (once)")
    create.add_argument("name", metavar="NAME")
    source = create.add_mutually_exclusive_group(required=True)
    source.add_argument("--answers", metavar="FILE",
                        help="CSV/JSONL: query_id, prompt, model, answer (optional category, game_id)")
    source.add_argument("--from-run", metavar="RUN", help="the answers of a collection run (evalboard collect run)")
    create.add_argument("--golden", metavar="FILE", help="CSV/JSONL: question, correct_answer, wrong_answer "
                                                         "(optional category)")
    create.add_argument("--dimensions", default="overall", help="comma-separated (default overall)")
    create.add_argument("--golden-rate", type=float, metavar="R",
                        help=f"share of golden items (default {DEFAULT_GOLDEN_RATE:g} with --golden, else 0)")
    who = create.add_mutually_exclusive_group()
    who.add_argument("--tokens", type=int, default=0, metavar="N", help="issue N tokens")
    who.add_argument("--annotators", metavar="A,B,C", help="issue one token per named annotator")
    create.add_argument("--target", type=int, default=DEFAULT_TARGET,
                        help=f"items per annotator (default {DEFAULT_TARGET})")
    create.add_argument("--overlap", type=float, default=DEFAULT_OVERLAP, metavar="SHARE",
                        help=f"share of real items judged by several annotators, for agreement (default "
                             f"{DEFAULT_OVERLAP:g}; 0 for none)")
    create.add_argument("--overlap-k", type=int, default=DEFAULT_OVERLAP_K, metavar="K",
                        help=f"annotators per overlap item (default {DEFAULT_OVERLAP_K})")
    create.add_argument("--no-clean", action="append", default=[], choices=CLEANING_RULES,
                        help="show this kind of text as written (repeatable)")
    create.add_argument("--seed", type=int, help="seed of the scheduler's random draws (default: random)")
    create.add_argument("--active-sampling", action="store_true",
                        help="prefer the pairs whose order is most uncertain under the current Bradley–Terry fit "
                             "(pair counts may then differ by a few)")
    create.add_argument("--rank-target", metavar="top3|top:N|adjacent",
                        help="serve toward a ranking goal instead of evenly: top:N separates ranks 1 to N from each "
                             "other and from rank N + 1, adjacent every rank from the next (95%% intervals of the "
                             "Bradley–Terry gap excluding 0); once every pair has a vote, each serve takes the pair "
                             "whose vote brings the hardest target pair closest to that; balanced again once reached")
    tokens = actions.add_parser("tokens", help="list, add or revoke annotator tokens")
    tokens.add_argument("name", metavar="NAME")
    tokens.add_argument("--add", type=int, default=0, metavar="N", help="issue N more tokens")
    tokens.add_argument("--annotators", metavar="A,B,C", help="issue one more token per named annotator")
    tokens.add_argument("--revoke", metavar="TOKEN", help="revoke a token (the token, or its annotator name)")
    status = actions.add_parser("status", help="progress per annotator (without NAME: list the campaigns)")
    status.add_argument("name", nargs="?", metavar="NAME")
    status.add_argument("--format", choices=("text", "json"), default="text")
    pub = actions.add_parser("publish", help="store the votes as the votes dataset 'campaign NAME' "
                                             "(replaced by each publish)")
    pub.add_argument("name", metavar="NAME")
    for action in (create, tokens, status, pub):
        action.add_argument("--db", help="SQLite file (default: $EVALBOARD_DB or data/evalboard.db)")
    return {"campaign": deferred("core.commands.campaign", "cmd_campaign")}


def _add_evalset(sub: argparse._SubParsersAction) -> dict:
    parser = sub.add_parser("evalset", help="build a deduplicated, category-balanced eval set from a query pool",
                            description="Eval sets: build one from a pool of queries, list or show stored ones.")
    actions = parser.add_subparsers(dest="evalset_command", required=True, metavar="ACTION")
    b = actions.add_parser("build", help="build an eval set from POOL (CSV/JSONL/TXT)",
                           description="Exact and semantic dedup, pre-filter, categories, scoring, Hamilton "
                                       "allocation with slice quotas, similarity check; writes the eval set, "
                                       "its audit (JSON and markdown) and stores it.")
    b.add_argument("pool", metavar="POOL", help="CSV/TSV/JSON/JSONL with a query, prompt or text column; or TXT, "
                                                "one query per line")
    b.add_argument("--size", type=int, required=True, help="number of queries to select")
    b.add_argument("--map", action="append", default=[], metavar="COLUMN=SOURCE[,COLUMN=SOURCE]",
                   help="read the pool's COLUMN (prompt, query_id or category) from the file's SOURCE column "
                        "(repeatable or comma-separated), e.g. --map prompt=instruction,category=dataset")
    b.add_argument("--output", default="evalset.csv", help="eval-set file: .csv or .jsonl (default evalset.csv); "
                                                           "the audit goes beside it")
    b.add_argument("--categories", help="comma-separated categories to use instead of discovering them")
    b.add_argument("--exclude", help="comma-separated categories to exclude")
    b.add_argument("--seed", type=int, default=0)
    b.add_argument("--domain", default="", help="what the eval set is about (for the relevance judgment)")
    b.add_argument("--slice", action="append", default=[], metavar="NAME=SHARE[:MIN]",
                   help="slice quota override, e.g. procedural=0.4:5 or trap_unreleased=0.1:1 (repeatable)")
    b.add_argument("--reserves", "--buffer", dest="buffer", type=int, default=2,
                   help="reserve queries kept beside the set, to replace a query dropped later (default 2); "
                        "the set itself has exactly --size queries")
    b.add_argument("--rank-by", choices=("length-neutral", "score"), default="length-neutral",
                   help="order of queries inside a category: the score's percentile among queries of similar "
                        "length (default; the score alone favours long queries), or the score itself")
    b.add_argument("--db", help="SQLite file (default: $EVALBOARD_DB or data/evalboard.db)")
    b.add_argument("--name", help="stored name (default: the output file name without extension)")
    b.add_argument("--replace", action="store_true", help="replace a stored eval set of the same name")
    m = b.add_argument_group("model endpoint (optional; none: offline)")
    m.add_argument("--base-url", help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1")
    m.add_argument("--model", help="chat model for relevance, rewrite, review, categories and scoring")
    m.add_argument("--api-key-env", help="NAME of the environment variable holding the API key")
    m.add_argument("--concurrency", type=int, default=4, help="requests in flight at most (default 4)")
    m.add_argument("--embed-model", help="embeddings model at the same endpoint (default: offline TF-IDF)")
    show = actions.add_parser("show", help="print a stored eval set")
    show.add_argument("name", metavar="NAME")
    show.add_argument("--db")
    show.add_argument("--format", choices=("table", "csv", "jsonl", "audit"), default="table")
    show.add_argument("--reserves", action="store_true", help="print the set's reserves instead of its queries")
    listing = actions.add_parser("list", help="list stored eval sets")
    listing.add_argument("--db")
    return {"evalset": deferred("core.commands.evalset", "run")}
