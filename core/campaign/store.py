"""Campaign tables in the Store's SQLite file, and creating campaigns and annotator tokens.

All tables are named ``campaign_*`` (defined with every other table in :mod:`core.store.schema`).
Connections come from :func:`core.store.connection.connect` and every write is one short
:func:`~core.store.connection.write_transaction` (``BEGIN IMMEDIATE``, retried while busy) on a WAL
database, so several annotators (each Streamlit session has its own connection) and a publish can write
at the same time: writers queue instead of failing, and a committed vote survives a crash.

Tokens are random secrets shown to the owner once; only their SHA-256 is stored. The ``annotator_id``
written into published votes is derived from that hash, so the token itself never leaves this table.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import pandas as pd

from core.campaign.golden import golden_supply
from core.campaign.inputs import pair_items
from core.errors import EvalBoardError
from core.llm.cleaning import CleaningRules, clean_answer
from core.schema import DEFAULT_DIMENSION, DEFAULT_GOLDEN_RATE, DEFAULT_OVERLAP, DEFAULT_OVERLAP_K, DEFAULT_TARGET
from core.store.transactions import write_transaction


class CampaignError(EvalBoardError, ValueError):
    """A campaign request that cannot be carried out (unknown name, bad setting …); nothing was changed."""


class TokenError(EvalBoardError, PermissionError):
    """The token is unknown or revoked: it cannot vote."""

    def __str__(self) -> str:
        return "this token is not valid (unknown or revoked)"


@dataclass(frozen=True)
class Campaign:
    id: int
    name: str
    dimensions: tuple[str, ...]
    golden_rate: float
    target: int  # items each annotator is asked to judge
    seed: int
    cleaning: CleaningRules
    active_sampling: bool = False  # prefer uncertain pairs (see core.campaign.scheduler)
    overlap: float = 0.0  # share of real items judged by overlap_k annotators (see core.campaign.scheduler)
    overlap_k: int = 2
    rank_target: str | None = None  # "top:N" or "adjacent": serve toward separating those ranks (core.campaign.target)


@dataclass(frozen=True)
class IssuedToken:
    """A new token, shown once: the owner hands ``token`` to the annotator called ``label``."""

    token: str
    annotator_id: str
    label: str


def token_hash(token: str) -> str:
    return hashlib.sha256(token.strip().encode()).hexdigest()


def create_campaign(conn: sqlite3.Connection, name: str, answers: pd.DataFrame, golden: pd.DataFrame | None = None,
                    dimensions: Sequence[str] = (DEFAULT_DIMENSION,), golden_rate: float = DEFAULT_GOLDEN_RATE,
                    target: int = DEFAULT_TARGET, cleaning: CleaningRules = CleaningRules(),
                    seed: int | None = None, active_sampling: bool = False, overlap: float = DEFAULT_OVERLAP,
                    overlap_k: int = DEFAULT_OVERLAP_K, rank_target: str | None = None) -> Campaign:
    """Store a campaign from validated answers (and golden items) in one transaction.

    Refused (CampaignError, nothing stored) when a setting is out of range or the golden pool cannot give
    each annotator the minimum of :mod:`core.campaign.golden`.
    """
    name = _check_settings(name, dimensions, golden_rate, target, overlap, overlap_k)
    rank_target = parse_rank_target(rank_target)
    if rank_target and active_sampling:
        raise CampaignError("choose active sampling or a rank target, not both: a rank target already serves the "
                            "pairs whose votes help it most")
    dimensions = tuple(d.strip() for d in dimensions)
    if golden_rate > 0 and (golden is None or golden.empty):
        raise CampaignError(f"golden_rate is {golden_rate:g} but there are no golden items: add a golden file "
                            "or set the golden rate to 0")
    supply = golden_supply(0 if golden is None else len(golden), golden_rate, target)
    if supply.refused:
        raise CampaignError(supply.refusal())
    seed = secrets.randbits(31) if seed is None else int(seed)
    with write_transaction(conn):
        if conn.execute("SELECT 1 FROM campaign_campaigns WHERE name = ?", [name]).fetchone():
            raise CampaignError(f"a campaign named {name!r} already exists")
        campaign_id = conn.execute(
            "INSERT INTO campaign_campaigns (name, created_at, dimensions, golden_rate, target, seed, cleaning, "
            "active_sampling, overlap, overlap_k, rank_target) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [name, time.time(), json.dumps(dimensions), float(golden_rate), int(target), seed,
             json.dumps(asdict(cleaning)), int(bool(active_sampling)), float(overlap), int(overlap_k),
             rank_target]).lastrowid
        queries = answers.drop_duplicates("query_id")
        conn.executemany("INSERT INTO campaign_queries VALUES (?, ?, ?, ?, ?)",
                         [(campaign_id, q, p, c, g) for q, p, c, g in
                          queries[["query_id", "prompt", "category", "game_id"]].itertuples(index=False)])
        conn.executemany("INSERT INTO campaign_answers VALUES (?, ?, ?, ?, ?)",
                         [(campaign_id, q, m, a, clean_answer(a, cleaning)) for q, m, a in
                          answers[["query_id", "model", "answer"]].itertuples(index=False)])
        for model in sorted(set(answers["model"])):
            conn.execute("INSERT INTO campaign_model_sides (campaign_id, model) VALUES (?, ?)", [campaign_id, model])
        items = pair_items(answers)
        pair_ids = {}
        for (lo, hi), n in sorted(items.groupby(["model_lo", "model_hi"]).size().items()):
            pair_ids[lo, hi] = conn.execute("INSERT INTO campaign_pairs (campaign_id, model_lo, model_hi, items) "
                                            "VALUES (?, ?, ?, ?)", [campaign_id, lo, hi, int(n)]).lastrowid
        conn.executemany("INSERT INTO campaign_pair_queries (pair_id, query_id) VALUES (?, ?)",
                         [(pair_ids[lo, hi], q) for q, lo, hi in items.itertuples(index=False)])
        if golden is not None:
            conn.executemany(
                "INSERT INTO campaign_golden (campaign_id, question, correct_raw, correct_clean, wrong_raw, "
                "wrong_clean, category) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(campaign_id, q, c, clean_answer(c, cleaning), w, clean_answer(w, cleaning), cat)
                 for q, c, w, cat in golden[["question", "correct_answer", "wrong_answer", "category"]]
                 .itertuples(index=False)])
    return get_campaign(conn, name)


def _check_settings(name: str, dimensions: Sequence[str], golden_rate: float, target: int, overlap: float,
                    overlap_k: int) -> str:
    name = (name or "").strip()
    if not name:
        raise CampaignError("the campaign needs a name")
    dims = [d.strip() for d in dimensions]
    if not dims or any(not d for d in dims):
        raise CampaignError("dimensions must be a non-empty list of names, e.g. overall,helpfulness")
    if len(set(dims)) != len(dims):
        raise CampaignError(f"dimensions are listed twice: {', '.join(dims)}")
    if not 0 <= golden_rate < 1:
        raise CampaignError(f"golden_rate must lie in [0, 1), not {golden_rate!r}")
    if int(target) < 1:
        raise CampaignError(f"target must be a positive number of items, not {target!r}")
    if not 0 <= overlap <= 1:  # also refuses NaN
        raise CampaignError(f"overlap must lie in [0, 1] (the share of items judged by several annotators), "
                            f"not {overlap!r}")
    if int(overlap_k) != overlap_k or overlap_k < 2:
        raise CampaignError(f"overlap_k must be a whole number of annotators of at least 2, not {overlap_k!r}")
    return name


def parse_rank_target(text: str | None) -> str | None:
    """The stored form of a rank target: ``top:N`` (ranks 1 to N separated from each other and from rank N + 1;
    written ``top3``, ``top:3`` or ``top 3``), ``adjacent`` (every rank from the next) or None (no target)."""
    value = re.sub(r"\s+", "", str(text or "")).lower()
    if value in ("", "none"):
        return None
    if value == "adjacent":
        return value
    match = re.fullmatch(r"top:?(\d+)", value)
    if match is None or int(match.group(1)) < 1:
        raise CampaignError(f"rank target must be top:N (N ≥ 1, e.g. top3 or top:3), adjacent or none, not {text!r}")
    return f"top:{int(match.group(1))}"


def get_campaign(conn: sqlite3.Connection, name: str | int) -> Campaign:
    key = "id" if isinstance(name, int) else "name"
    row = conn.execute(f"SELECT id, name, dimensions, golden_rate, target, seed, cleaning, active_sampling, overlap, "
                       f"overlap_k, rank_target FROM campaign_campaigns WHERE {key} = ?", [name]).fetchone()
    if row is None:
        known = [r[0] for r in conn.execute("SELECT name FROM campaign_campaigns ORDER BY id")]
        raise CampaignError(f"no campaign named {name!r}" + (f" (campaigns: {', '.join(known)})" if known else ""))
    id_, name, dims, rate, target, seed, cleaning, active, overlap, overlap_k, rank_target = row
    return Campaign(id_, name, tuple(json.loads(dims)), rate, target, seed, CleaningRules(**json.loads(cleaning)),
                    bool(active), float(overlap), int(overlap_k), rank_target or None)


def list_campaigns(conn: sqlite3.Connection) -> list[Campaign]:
    return [get_campaign(conn, int(r[0])) for r in conn.execute("SELECT id FROM campaign_campaigns ORDER BY id")]


def issue_tokens(conn: sqlite3.Connection, campaign: Campaign, count: int = 0,
                 labels: Sequence[str] = ()) -> list[IssuedToken]:
    """New tokens: one per label, or ``count`` unlabelled ones (labelled annotator-1, -2 … in order)."""
    labels = [str(label).strip() for label in labels if str(label).strip()]
    if count < 0:
        raise CampaignError(f"the number of tokens must be positive, not {count}")
    with write_transaction(conn):
        taken = {r[0] for r in conn.execute("SELECT label FROM campaign_tokens WHERE campaign_id = ?",
                                            [campaign.id])}
        if not labels:
            n, labels = len(taken), []
            while len(labels) < count:
                n += 1
                if f"annotator-{n}" not in taken:
                    labels.append(f"annotator-{n}")
        clash = sorted(set(labels) & taken) + sorted({x for x in labels if labels.count(x) > 1})
        if clash:
            raise CampaignError(f"annotator names already used: {', '.join(clash)}")
        issued = []
        for label in labels:
            token = secrets.token_urlsafe(16)
            digest = token_hash(token)
            annotator_id = "annotator-" + hashlib.sha256(f"{campaign.id}:{digest}".encode()).hexdigest()[:10]
            conn.execute("INSERT INTO campaign_tokens (token_hash, campaign_id, annotator_id, label, created_at) "
                         "VALUES (?, ?, ?, ?, ?)", [digest, campaign.id, annotator_id, label, time.time()])
            issued.append(IssuedToken(token, annotator_id, label))
    return issued


def revoke_token(conn: sqlite3.Connection, campaign: Campaign, token_or_label: str) -> str:
    """Revoke a token given as the token itself or its annotator label; returns the label."""
    value = token_or_label.strip()
    with write_transaction(conn):
        row = conn.execute("SELECT token_hash, label FROM campaign_tokens WHERE campaign_id = ? AND "
                           "(token_hash = ? OR label = ? OR annotator_id = ?)",
                           [campaign.id, token_hash(value), value, value]).fetchone()
        if row is None:
            raise CampaignError(f"no token or annotator {value!r} in campaign {campaign.name!r}")
        conn.execute("UPDATE campaign_tokens SET revoked = 1 WHERE token_hash = ?", [row[0]])
    return row[1]


def campaign_for_token(conn: sqlite3.Connection, token: str) -> tuple[Campaign, str]:
    """The campaign a valid token belongs to, and the token's hash; TokenError when unknown or revoked."""
    digest = token_hash(token or "")
    row = conn.execute("SELECT campaign_id, revoked FROM campaign_tokens WHERE token_hash = ?", [digest]).fetchone()
    if row is None or row[1]:
        raise TokenError()
    return get_campaign(conn, int(row[0])), digest


def progress(conn: sqlite3.Connection, campaign: Campaign) -> pd.DataFrame:
    """One row per annotator: label, annotator_id, revoked, items done (of the target), golden done."""
    rows = conn.execute("SELECT label, annotator_id, revoked, done, golden_done FROM campaign_tokens "
                        "WHERE campaign_id = ? ORDER BY created_at, label", [campaign.id]).fetchall()
    frame = pd.DataFrame(rows, columns=["annotator", "annotator_id", "revoked", "done", "golden_done"])
    frame["revoked"] = frame["revoked"].astype(bool)
    frame["target"] = campaign.target
    return frame


@dataclass(frozen=True)
class OverlapCount:
    """Real items judged so far (golden items apart), and how many of them by 2+ and by overlap_k+ annotators."""

    items: int
    items_2plus: int
    items_k: int
    overlap: float  # the campaign's setting
    overlap_k: int

    @property
    def share(self) -> float | None:
        return self.items_2plus / self.items if self.items else None


def overlap_count(conn: sqlite3.Connection, campaign: Campaign) -> OverlapCount:
    """Items judged (voted on) once, by 2+ and by ``overlap_k``+ annotators, from the votes stored so far."""
    items, two, k = conn.execute(
        "SELECT count(*), coalesce(sum(n >= 2), 0), coalesce(sum(n >= ?), 0) FROM (SELECT count(*) AS n FROM "
        "campaign_assignments WHERE campaign_id = ? AND voted = 1 AND pair_id IS NOT NULL GROUP BY pair_id, query_id)",
        [campaign.overlap_k, campaign.id]).fetchone()
    return OverlapCount(int(items), int(two), int(k), campaign.overlap, campaign.overlap_k)
