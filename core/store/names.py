"""Finding a stored dataset by the name a person types, and saying which names exist when none fits.

A dataset is found by its id, its exact name, or, for the votes of a voting campaign, by the campaign:
a campaign ``NAME`` publishes its votes as the dataset ``campaign NAME`` (source ``campaign:NAME``),
and ``NAME``, ``campaign NAME`` and the names earlier versions gave each publish
(``campaign NAME (N votes)``) all lead to it. An exact dataset name always wins over a campaign's.

When nothing fits, :class:`DatasetNotFound` lists the stored names, close matches first, so that a
typo or a stale name in a script is fixed from the message alone.
"""

from __future__ import annotations

import difflib
import re
import sqlite3

from core.errors import EvalBoardError

CAMPAIGN_SOURCE_PREFIX = "campaign:"
CAMPAIGN_DATASET_PREFIX = "campaign "
# Earlier versions named each publish by its size (and a clash got " (2)"): those names keep working.
_COUNTED_SNAPSHOT = re.compile(r"^campaign (?P<campaign>.+?) \(\d[\d,]* votes?\)(?: \(\d+\))?$")
MAX_LISTED = 10  # names a "not found" message lists; the rest are counted
CLOSE_CUTOFF = 0.5  # difflib ratio from which a name counts as a close match


def campaign_source(campaign: str) -> str:
    """The ``source`` of the dataset that holds a campaign's published votes."""
    return CAMPAIGN_SOURCE_PREFIX + campaign


def campaign_dataset_name(campaign: str) -> str:
    """The one stable name of a campaign's published votes."""
    return CAMPAIGN_DATASET_PREFIX + campaign


def campaigns_named(name: str) -> list[str]:
    """The campaign names ``name`` may stand for, most specific first."""
    name = name.strip()
    out = []
    counted = _COUNTED_SNAPSHOT.match(name)
    if counted:
        out.append(counted["campaign"])
    if name.startswith(CAMPAIGN_DATASET_PREFIX):
        out.append(name[len(CAMPAIGN_DATASET_PREFIX):].strip())
    out.append(name)
    return list(dict.fromkeys(n for n in out if n))


def campaign_dataset_row(conn: sqlite3.Connection, name: str) -> tuple | None:
    """The ``datasets`` row of the campaign ``name`` stands for (the oldest, should there be two)."""
    for campaign in campaigns_named(name):
        row = conn.execute("SELECT * FROM datasets WHERE source = ? ORDER BY id LIMIT 1",
                           [campaign_source(campaign)]).fetchone()
        if row is not None:
            return row
    return None


class DatasetNotFound(EvalBoardError, KeyError):
    """No dataset has this name or id. ``hint`` says which names exist (close matches first)."""

    def __init__(self, wanted, hint: str = ""):
        super().__init__(wanted)
        self.hint = hint

    def __str__(self) -> str:
        text = f"no dataset named or numbered {self.args[0]!r}"
        return f"{text}; {self.hint}" if self.hint else text


def not_found(conn: sqlite3.Connection, wanted) -> DatasetNotFound:
    return DatasetNotFound(wanted, names_hint(conn, str(wanted)))


def names_hint(conn: sqlite3.Connection, wanted: str) -> str:
    """What to type instead of ``wanted``: the stored dataset names, close matches first, at most
    :data:`MAX_LISTED`; a campaign that has not published yet is named as such."""
    datasets = [r[0] for r in conn.execute("SELECT name FROM datasets ORDER BY id")]
    published = {r[0][len(CAMPAIGN_SOURCE_PREFIX):] for r in conn.execute(
        "SELECT source FROM datasets WHERE source LIKE ?", [CAMPAIGN_SOURCE_PREFIX + "%"])}
    campaigns = [r[0] for r in conn.execute("SELECT name FROM campaign_campaigns ORDER BY id")]
    unpublished = [c for c in campaigns if c not in published]
    for campaign in campaigns_named(wanted):
        if campaign in unpublished:
            return (f"campaign {campaign!r} has no published votes yet: publish them with "
                    f"`evalboard campaign publish {campaign}` (or 'Publish votes as a dataset' on the Data page)")
    if not datasets:
        return "no dataset is stored yet: add one with `evalboard ingest FILE` (or on the Data page)"
    close = _close_matches(wanted, datasets + sorted(published))
    # A campaign name stands for its dataset: suggest the dataset's stable name.
    close = list(dict.fromkeys(campaign_dataset_name(c) if c in published and c not in datasets else c
                               for c in close))
    ordered = close + [d for d in datasets if d not in close]
    listed = ", ".join(repr(n) for n in ordered[:MAX_LISTED])
    more = len(ordered) - MAX_LISTED
    text = f"did you mean {close[0]!r}? " if close else ""
    text += f"stored datasets: {listed}"
    if more > 0:
        text += f" … and {more:,} more (`evalboard datasets` lists them all)"
    if campaigns:  # a campaign's name stands for its votes
        shown = [repr(c) + ("" if c in published else " (not published yet)") for c in campaigns[:MAX_LISTED]]
        text += "; campaigns: " + ", ".join(shown) + (" …" if len(campaigns) > MAX_LISTED else "")
    return text


def _close_matches(wanted: str, names: list[str]) -> list[str]:
    """Names like ``wanted``, best first; case does not count (``Arena`` finds ``arena``)."""
    by_folded: dict[str, str] = {}
    for name in names:
        by_folded.setdefault(name.casefold(), name)
    folded = wanted.strip().casefold()
    hits = difflib.get_close_matches(folded, list(by_folded), n=MAX_LISTED, cutoff=CLOSE_CUTOFF)
    # A name that contains what was typed (``demo`` in ``campaign demo``) is close whatever its length.
    hits += [f for f in by_folded if folded and folded in f and f not in hits]
    return [by_folded[h] for h in hits]
