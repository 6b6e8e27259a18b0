"""A campaign's votes as a votes dataset in the Store, so every analysis page can use them.

``publish`` writes the current votes as a new snapshot, named ``campaign <name> (<n> votes)`` (through :func:`core.io.load`, the same
validation as any uploaded file) and deletes the previous snapshot of the same campaign in the same
write transaction: an error at any step leaves the previous snapshot in place, never zero or two, and
two publishes at once (two analysts pressing refresh) cannot delete each other's snapshot. Voters keep
voting meanwhile: the votes are read from a snapshot of the database, and the write waits its turn
(core.store.connection). Snapshots are recognised by their source, ``campaign:<name>``.
"""

from __future__ import annotations

from pathlib import Path

from core.campaign.store import CampaignError, connect, get_campaign
from core.campaign.votes import vote_records
from core.formats import jsonl_text
from core.io import load
from core.store import Dataset, Store
from core.store.connection import write_transaction

SOURCE_PREFIX = "campaign:"


def snapshot_source(campaign_name: str) -> str:
    return SOURCE_PREFIX + campaign_name


def campaign_of_dataset(dataset: Dataset) -> str | None:
    """The campaign a dataset is a snapshot of, or None."""
    return dataset.source[len(SOURCE_PREFIX):] if dataset.source.startswith(SOURCE_PREFIX) else None


def publish(db_path: str | Path, campaign: str) -> Dataset:
    """Store the campaign's votes as a votes dataset (replacing the campaign's previous snapshot)."""
    conn = connect(db_path)
    try:
        info = get_campaign(conn, campaign)
        frame = vote_records(conn, info)
    finally:
        conn.close()
    if frame.empty:
        raise CampaignError(f"campaign {info.name!r} has no votes yet: nothing to publish")
    if frame["category"].isna().all():
        frame = frame.drop(columns="category")
    source = snapshot_source(info.name)
    # JSON Lines, not CSV: the votes' text (model names, query ids) must reach the store exactly.
    loaded = load(jsonl_text(frame).encode(), kind="votes", name=source, format="jsonl")
    with Store(db_path) as store, write_transaction(store.db.conn):
        previous = [d for d in store.datasets() if d.source == source]
        # The count in the name tells snapshots apart at a glance (votes only grow, and the same votes
        # again are recognised by the store and not stored twice).
        plural = "s" if len(frame) != 1 else ""
        result = store.ingest(loaded, name=f"campaign {info.name} ({len(frame):,} vote{plural})")
        for old in previous:
            if old.id != result.dataset.id:
                store.delete(old.id)
    return result.dataset
