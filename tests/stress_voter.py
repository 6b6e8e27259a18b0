"""One annotator voting as fast as it can, for the concurrency test (tests/test_store_concurrency.py).

Run as ``python -m tests.stress_voter DB TOKEN SECONDS SEED OUT GO``: once imported it creates
``OUT.ready`` and waits for the file GO, so that all voters start together. Like the Vote page, every request
opens its own connection. A share of the votes is submitted twice (a double click: the second request
on another connection must store nothing). Writes a JSON report to OUT: the items whose vote was stored,
the double submits and every error met.
"""

from __future__ import annotations

import json
import random
import sys
import time
import traceback
from contextlib import closing
from pathlib import Path

from core.campaign import CHOICES, record_vote, serve_next
from core.store.connection import connect

DOUBLE_SUBMIT_RATE = 0.2


def vote_for(db: str, token: str, seconds: float, seed: int) -> dict:
    rng = random.Random(seed)
    stored, doubles, errors = [], [], []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with closing(connect(db)) as conn:
                item = serve_next(conn, token)
            if item is None:
                break
            outcomes = {d: CHOICES[rng.choice(list(CHOICES))] for d in item.dimensions}
            with closing(connect(db)) as conn:
                first = record_vote(conn, token, item.assignment_id, outcomes)
            if not first:
                errors.append(f"item {item.assignment_id}: first submit reported as already stored")
            stored.append(item.assignment_id)
            if rng.random() < DOUBLE_SUBMIT_RATE:
                with closing(connect(db)) as conn:
                    again = record_vote(conn, token, item.assignment_id, outcomes)
                doubles.append([item.assignment_id, again])
        except Exception:  # noqa: BLE001 - every error is reported to the test, which fails on any
            errors.append(traceback.format_exc(limit=3))
            if len(errors) > 20:
                break
    return {"stored": stored, "doubles": doubles, "errors": errors}


if __name__ == "__main__":
    db, token, seconds, seed, out, go = sys.argv[1:7]
    Path(out + ".ready").touch()
    while not Path(go).exists():
        time.sleep(0.01)
    report = vote_for(db, token, float(seconds), int(seed))
    with open(out, "w") as fh:
        json.dump(report, fh)
