"""What every page shares: the store, the active dataset, cached loads."""

from __future__ import annotations

import importlib
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pandas as pd
import streamlit as st

from core.store import Dataset, Store, default_db_path

ACTIVE = "active_dataset"  # session key: id of the dataset the analysis pages work on
PENDING = "pending_active_dataset"  # set before a rerun; applied before the selector is drawn
ROUTER = Path(__file__).resolve().parents[1] / "app.py"  # st.navigation over pages/ and the sidebar
_routing = threading.local()  # depth of routed() in this script thread: > 0 while app.py runs a page
_MARKDOWN = re.compile(r"([\\`*_\[\]$~:<])")  # what can format inline text: emphasis, links, math, emoji, code


def plain(text) -> str:
    """User text (dataset names, file columns and values) for a markdown element: shown as typed."""
    return _MARKDOWN.sub(r"\\\1", str(text))


def open_store() -> Store:
    """A connection for this script run (SQLite connections must not cross Streamlit's threads)."""
    return Store(default_db_path())


def list_datasets() -> list[Dataset]:
    with open_store() as store:
        return store.datasets()


@st.cache_data(show_spinner="Loading dataset…", max_entries=8)
def load_dataset(db_path: str, dataset_id: int, sha256: str, columns: tuple[str, ...] | None = None,
                 limit: int | None = None) -> pd.DataFrame:
    """Cached by id *and* content hash: SQLite may give a deleted dataset's id to a new one."""
    with Store(db_path) as store:
        return store.load(dataset_id, list(columns) if columns else None, limit=limit)


@contextmanager
def routed() -> Iterator[None]:
    """app.py runs the chosen page inside this block, so the page knows the router has drawn around it."""
    _routing.depth = getattr(_routing, "depth", 0) + 1
    try:
        yield
    finally:
        _routing.depth -= 1


def through_router() -> None:
    """Call first in every page. Streamlit runs a file of pages/ by itself, without app.py (no sidebar, no
    page config), when it is a fresh server's first request (its older pages-folder mode, which the first
    ``st.navigation`` call ends). Such a run executes app.py here, which draws the sidebar and this page
    through ``st.navigation``, then stops the bare run. Nothing is rerun, so the run's click is not lost."""
    if getattr(_routing, "depth", 0):
        return
    # As Streamlit runs a page: a fresh namespace named __main__ (runpy would swap sys.modules["__main__"],
    # which other sessions' threads share).
    exec(compile(ROUTER.read_text(encoding="utf-8"), str(ROUTER), "exec"),  # noqa: S102 - our own router
         {"__name__": "__main__", "__file__": str(ROUTER)})
    st.stop()


def dataset_picker() -> Dataset | None:
    """The sidebar selector of the active dataset; returns it (None when the store is empty)."""
    datasets = list_datasets()
    if not datasets:
        st.info("No datasets yet: add one on the Data page.")
        return None
    by_id = {d.id: d for d in datasets}
    pending = st.session_state.pop(PENDING, None)
    if pending in by_id:
        st.session_state[ACTIVE] = pending
    if st.session_state.get(ACTIVE) not in by_id:
        st.session_state[ACTIVE] = datasets[0].id
    chosen = st.selectbox("Active dataset", options=list(by_id), key=ACTIVE,
                          format_func=lambda i: f"{by_id[i].name} · {by_id[i].kind.replace('_', ' ')} · "
                                                f"{by_id[i].rows:,} rows")
    if chosen in by_id and by_id[chosen].kind == "preferences":
        st.caption("Judged preferences against a baseline: their win rates are on the Judge page.")
    return by_id.get(chosen)


def select_after_rerun(dataset_id: int) -> None:
    """Make a dataset active on the next run (a drawn widget's value cannot change in this one)."""
    st.session_state[PENDING] = dataset_id


def active_dataset(kind: str | None = None) -> Dataset | None:
    datasets = {d.id: d for d in list_datasets()}
    current = datasets.get(st.session_state.get(ACTIVE))
    if current is None or (kind and current.kind != kind):
        return None
    return current


def votes_dataset_or_stop(needs: str) -> Dataset:
    """The active votes dataset; without one, says what the page ``needs`` and how to get it, and stops."""
    dataset = active_dataset("votes")
    if dataset is None:
        st.info(f"{needs}: pick one as the active dataset in the sidebar, or load one on the Data page (upload a "
                "file or load the sample datasets).")
        st.stop()
    return dataset


_ANALYSIS_MODULES = ("scipy.stats", "core.ranking.inputs", "core.bias.diagnose", "core.annotators.quality",
                     "core.annotators.agreement", "core.leaderboard.aggregate", "core.charts.votes", "core.charts.bias",
                     "core.report.build")
_warming: list[threading.Thread] = []


def warm_up() -> None:
    """Import the analysis modules in a background thread, once per server process: the first visit to
    an analysis page then does not pay for loading scipy and friends (about a second)."""
    if _warming:
        return

    def load() -> None:
        for name in _ANALYSIS_MODULES:
            try:
                importlib.import_module(name)
            except Exception:  # noqa: BLE001 - the page importing it will report the problem
                pass

    thread = threading.Thread(target=load, name="evalboard-warm-up", daemon=True)
    _warming.append(thread)
    thread.start()
