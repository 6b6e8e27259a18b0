"""`evalboard ingest`, `datasets`, `delete` and `samples`: the store's datasets."""

from __future__ import annotations

import argparse
from pathlib import Path

from core.io import load, load_lm_eval, parse_pairs
from core.samples.demo import ensure_samples
from core.store import Store

EXIT_OK = 0


def cmd_ingest(args: argparse.Namespace) -> int:
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
    with Store(args.db) as store:
        for result in ensure_samples(store):
            print(result.summary())
    return EXIT_OK
