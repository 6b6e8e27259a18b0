"""Warm the next pages' caches: once a votes page has drawn, compute what Bias and Annotators will show
for the same dataset and filters in a background thread.

The cached functions hold a lock per key, so a page opened while its result is still being computed
waits for that computation instead of repeating it. Each (dataset, filters, settings) is prefetched once
per server process.
"""

from __future__ import annotations

import threading

import streamlit as st

from core.filters import Filters
from core.store import Dataset, default_db_path

_started: set[tuple] = set()
_lock = threading.Lock()


def prefetch_vote_pages(dataset: Dataset, filters: Filters) -> None:
    from pages._annotators_parts import compute_annotators
    from pages._bias_parts import compute_bias
    from pages._filters import active_policy, active_qualify

    db = str(default_db_path())
    jobs = [(compute_bias, st.session_state.get("bias_alpha", 0.05))]
    if "annotator_id" in dataset.columns:
        jobs.append((compute_annotators, st.session_state.get("annotators_alpha", 0.05)))
    policy, qualify = active_policy(), active_qualify()  # read here: the thread below has no session
    todo = []
    for compute, alpha in jobs:
        key = (compute.__name__, db, dataset.id, dataset.sha256, filters, float(alpha), policy, qualify)
        with _lock:
            if key in _started:
                continue
            _started.add(key)
        todo.append((compute, (db, dataset.id, dataset.sha256, filters, float(alpha), policy, qualify)))
    if todo:  # one thread, one job after the other: the least competition with the page being used
        threading.Thread(target=_quietly, args=(todo,), name="prefetch", daemon=True).start()


def _quietly(todo) -> None:
    for compute, args in todo:
        try:
            compute(*args)
        except Exception:  # noqa: BLE001 - the page itself will compute again and show the error
            pass
