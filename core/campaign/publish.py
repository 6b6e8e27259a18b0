"""A campaign's votes as a votes dataset in the Store, so every analysis page can use them.

``publish`` writes the current votes (through :func:`core.io.load`, the same validation as any uploaded
file) as the content of one dataset per campaign, named ``campaign <name>``: the first publish creates
it, every later one replaces its rows and keeps its id and name, so a script or a bookmarked page that
ranked it yesterday ranks today's votes. The replacement is one write transaction: an error at any step
leaves the previous votes in place, a reader sees the old votes or the new ones (never none, see
:meth:`core.store.Store.load`), and two publishes at once (two analysts pressing refresh) queue. Voters
keep voting meanwhile: the votes are read from a snapshot of the database, and the write waits its turn
(core.store.connection).

The dataset is recognised by its source, ``campaign:<name>``; the store finds it by ``<name>``,
``campaign <name>`` and the names earlier versions gave each publish, ``campaign <name> (<n> votes)``
(core.store.names). Such an earlier snapshot becomes the campaign's dataset at the next publish.

The annotators' names (the labels given when their tokens were issued) go with the votes as the
dataset's annotator labels: every analysis of the store shows them, the votes keep the hashed ids.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from core.campaign.store import Campaign, CampaignError, get_campaign
from core.campaign.votes import vote_records
from core.formats import jsonl_text
from core.io import load
from core.store import Dataset, Store
from core.store.connection import connect
from core.store.names import CAMPAIGN_SOURCE_PREFIX as SOURCE_PREFIX
from core.store.names import campaign_dataset_name, campaign_source
from core.store.transactions import write_transaction


def campaign_of_dataset(dataset: Dataset) -> str | None:
    """The campaign whose votes a dataset holds, or None."""
    return dataset.source[len(SOURCE_PREFIX):] if dataset.source.startswith(SOURCE_PREFIX) else None


def annotator_labels(conn: sqlite3.Connection, campaign: Campaign) -> dict[str, str]:
    """``{annotator_id: label}`` of the campaign's tokens (labels are unique within a campaign)."""
    return dict(conn.execute("SELECT annotator_id, label FROM campaign_tokens WHERE campaign_id = ? AND "
                             "label IS NOT NULL", [campaign.id]).fetchall())


def publish(db_path: str | Path, campaign: str) -> Dataset:
    """Store the campaign's votes as the content of its dataset ``campaign <name>`` (made on first use)."""
    conn = connect(db_path)
    try:
        info = get_campaign(conn, campaign)
        frame = vote_records(conn, info)
        labels = annotator_labels(conn, info)
    finally:
        conn.close()
    if frame.empty:
        raise CampaignError(f"campaign {info.name!r} has no votes yet: nothing to publish")
    if frame["category"].isna().all():
        frame = frame.drop(columns="category")
    source = campaign_source(info.name)
    # JSON Lines, not CSV: the votes' text (model names, query ids) must reach the store exactly.
    loaded = load(jsonl_text(frame).encode(), kind="votes", name=source, format="jsonl")
    with Store(db_path) as store, write_transaction(store.db.conn):
        # Inside the transaction: a publish that ran meanwhile has made or replaced the dataset already.
        previous = [d for d in store.datasets() if d.source == source]  # oldest first; more than one only
        kept = previous[0] if previous else None                         # in stores of earlier versions
        result = store.ingest(loaded, name=campaign_dataset_name(info.name), replace=kept.id if kept else None,
                              annotator_labels=labels, deduplicate=False)
        for old in previous[1:]:
            store.delete(old.id)
    return result.dataset
