"""``evalboard evalset``: build an eval set from a query pool, list and show stored sets.

    evalboard evalset build POOL --size N [--output evalset.csv] [--map prompt=COLUMN,category=COLUMN]
                             [--categories a,b,c] [--exclude X,Y]
                             [--seed S] [--db PATH] [--name NAME] [--replace] [--domain TEXT]
                             [--slice NAME=SHARE[:MIN]] [--reserves 2] [--rank-by length-neutral|score]
                             [--base-url URL --model NAME [--api-key-env VAR] [--concurrency 4]
                              [--embed-model NAME]]
    evalboard evalset list [--db PATH]
    evalboard evalset show NAME [--db PATH] [--format table|csv|jsonl|audit] [--reserves]

Without ``--base-url``/``--model`` every stage runs offline (the audit says which rule replaced which
model call). Exit status 0, 2 for invalid input or options, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from core.errors import SettingError
from core.evalset.audit import LENGTHS, length_table
from core.evalset.pipeline import build
from core.evalset.pool import read_pool
from core.evalset.progress import throttled
from core.evalset.results import checks, eval_set, reserves, to_csv, to_jsonl, write_outputs
from core.evalset.settings import BuildSettings, ModelConfig, parse_slices
from core.evalset.store import EvalSetNotFound, list_sets, load, load_reserves, save
from core.formats import terminal_text
from core.io import parse_pairs

EXIT_OK, EXIT_INVALID = 0, 2


def run(args: argparse.Namespace) -> int:
    return {"build": cmd_build, "show": cmd_show, "list": cmd_list}[args.evalset_command](args)


def _names(text: str | None) -> tuple[str, ...]:
    return tuple(p.strip() for p in (text or "").split(",") if p.strip())


def pool_mapping(items: list[str]) -> dict[str, str]:
    """``--map prompt=instruction,category=dataset`` (also repeated) -> {"prompt": "instruction", …}."""
    pieces = [piece for item in items for piece in item.split(",")]
    mapping = parse_pairs(pieces, "--map")
    if len(mapping) < len(pieces):
        raise SettingError("--map names the same column twice")
    return mapping


def model_config(args: argparse.Namespace) -> ModelConfig | None:
    if not args.base_url and not args.model:
        if args.embed_model:
            raise SettingError("--embed-model needs --base-url and --model")
        return None
    if not (args.base_url and args.model):
        raise SettingError("a model endpoint needs both --base-url and --model")
    config = ModelConfig(args.base_url, args.model, args.api_key_env, args.concurrency, args.embed_model)
    if not config.endpoint().key_is_set():
        raise SettingError(f"the environment variable {args.api_key_env} (--api-key-env) is not set")
    return config


PROGRESS_EVERY_S = 2.0


def print_progress(event) -> None:
    """A build's progress on stderr (standard output carries the result): each stage as it starts, then
    its model calls with the time left (throttled to one line per PROGRESS_EVERY_S and stage)."""
    print(f"    {event.text()}" if event.total else f"  {event.text()}…", file=sys.stderr, flush=True)


def cmd_build(args: argparse.Namespace) -> int:
    if args.size < 1:
        raise SettingError("--size must be a positive integer")
    if args.buffer < 0:
        raise SettingError("--reserves must be a non-negative integer")
    settings = BuildSettings(size=args.size, categories=_names(args.categories), exclude=_names(args.exclude),
                             seed=args.seed, domain=args.domain, model=model_config(args),
                             slices=parse_slices(args.slice), buffer=args.buffer,
                             length_neutral=args.rank_by == "length-neutral")
    pool = read_pool(args.pool, columns=pool_mapping(args.map))
    state = build(pool, settings, progress=throttled(print_progress, every_s=PROGRESS_EVERY_S))
    table = eval_set(state)
    name = args.name or Path(args.output).stem
    spare = reserves(state)
    # before files: a name clash writes nothing
    set_id = save(table, state.audit, name, args.db, replace=args.replace, reserves=spare)
    files = write_outputs(state, args.output)
    print(f"selected {len(table):,} of {len(pool):,} queries, and {len(spare):,} reserves; "
          f"wrote {', '.join(str(f) for f in files)}")
    if len(spare):
        print(f"  reserves (best first): {terminal_text(', '.join(spare['query_id'].astype(str)))}")
    lengths = state.audit.selection.get(LENGTHS)
    if lengths:
        ranking = "length-neutral score" if settings.length_neutral else "score (--rank-by score)"
        print(f"  prompt length (characters), selection ranked by the {ranking}:")
        for line in length_table(lengths):
            print(f"    {line}")
    print(f"stored as eval set '{terminal_text(name)}' (id {set_id})")
    if len(table) < args.size:
        print(f"  note: only {len(table):,} eligible queries for {args.size:,} places (see the audit)")
    if len(spare) < args.buffer:
        print(f"  note: only {len(spare):,} reserves for the {args.buffer:,} asked (too few eligible queries)")
    excluded = set(state.pool.loc[state.pool["status"] == "excluded", "category"])
    ignored = [c for c in state.suggested_exclusions if c not in excluded]
    if ignored:
        print(f"  the model suggests excluding: {terminal_text(', '.join(ignored))} (pass them to --exclude to do so)")
    failed = {k: v for k, v in checks(state).items() if v}
    for rule, ids in failed.items():
        print(f"  check failed: {rule}: {terminal_text(', '.join(map(str, ids[:20])))}")
    return EXIT_OK if not failed else 1


def cmd_show(args: argparse.Namespace) -> int:
    try:
        info, table = load(args.name, args.db)
        if args.reserves:
            table = load_reserves(args.name, args.db)
    except EvalSetNotFound as exc:
        print(f"evalboard: {exc}; list them with: evalboard evalset list", file=sys.stderr)
        return EXIT_INVALID
    if args.format == "csv":
        print(to_csv(table), end="")
    elif args.format == "jsonl":
        print(to_jsonl(table), end="")
    elif args.format == "audit":
        print(json.dumps(info.audit, indent=2, ensure_ascii=False))
    else:
        what = f"reserves of eval set '{terminal_text(info.name)}' ({len(table):,}" if args.reserves else \
            f"eval set '{terminal_text(info.name)}' (id {info.id}, {info.size:,} queries"
        print(f"{what}, created {info.created_at} UTC)")
        for rec in table.itertuples():
            text = terminal_text(" ".join(str(rec.prompt).split()))
            print(f"  {terminal_text(rec.query_id):<12} {terminal_text(rec.category)[:24]:<24} "
                  f"{terminal_text(rec.reason)[:28]:<28} {text[:80] + ('…' if len(text) > 80 else '')}")
    return EXIT_OK


def cmd_list(args: argparse.Namespace) -> int:
    sets = list_sets(args.db)
    if not sets:
        print("no eval sets stored; build one with: evalboard evalset build POOL --size N")
        return EXIT_OK
    print(f"{'id':>4}  {'size':>6}  {'created (UTC)':<25} name")
    for s in sets:
        print(f"{s.id:>4}  {s.size:>6,}  {s.created_at:<25} {terminal_text(s.name)}")
    return EXIT_OK
